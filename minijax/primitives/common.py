"""Helpers the primitive families share to state their shape and dtype rules and read their static params."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import config, core, dtypes
from minijax.core import Primitive, ShapedArray, abstract_eval_rules
from minijax.mesh import NamedSharding

Shape = tuple[int, ...]

__all__ = [
    "accepts",
    "broadcasting_shape",
    "check_no_sharding",
    "index_param",
    "index_tuple_param",
    "int_tuple",
    "long_str",
    "nonnegative",
    "reduction_rule",
    "standard_primitive",
]


def accepts(dtype: np.dtype[Any], classes: Sequence[type]) -> bool:
    """Whether ``dtype`` belongs to one of the NumPy abstract dtype ``classes``."""
    return any(dtypes.issubdtype(dtype, c) for c in classes)


def broadcasting_shape(prim_name: str, *avals: ShapedArray) -> tuple[int, ...]:
    """The result shape of an n-ary elementwise primitive.

    Like JAX's lax: rank-0 operands broadcast against anything; the other
    operands must have the same rank, and each dimension must agree or be 1.
    """
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise TypeError(f"{prim_name}: arrays must have the same number of dimensions, got {set(ranks)}")
    result = []
    for dims in zip(*shapes):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TypeError(
                f"{prim_name} got incompatible shapes for broadcasting: "
                + ", ".join(str(tuple(s)) for s in shapes)
                + "."
            )
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def standard_primitive(name: str, rule: Callable[..., Any], multiple_results: bool = False) -> Primitive:
    """A new primitive with its abstract-eval rule registered."""
    prim = Primitive(name, multiple_results)
    abstract_eval_rules[prim] = rule
    return prim


def long_str(aval: ShapedArray) -> str:
    """``float32[2,3]``: an aval as JAX writes it in reduction errors."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


# ---------------------------------------------------------------------------
# Static params


def int_tuple(prim: str, what: str, values: Any) -> Shape:
    """A static sequence param as a tuple of Python ints, or TypeError naming it."""
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{prim} {what} must be a sequence of integers, got {values!r}.") from None
    try:
        return tuple(core.dim_index(v) for v in items)
    except TypeError:
        kinds = ", ".join(type(v).__name__ for v in items)
        raise TypeError(f"{prim} {what} must have every element be an integer type, got ({kinds}).") from None


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def index_param(prim: str, what: str, value: Any) -> int:
    """An integer param of a primitive (an axis, a dimension, a count) as a Python int,
    or TypeError naming it.

    Bools are refused, although Python counts them as ints: the lax functions turn what
    users pass into ints before they bind, so a bool here comes from a hand-built or
    parsed jaxpr (``cumsum[axis=True]``), and the backends would choke on it (NumPy
    refuses a bool axis, XLA lowers a wrong program) instead of saying what is wrong.
    """
    if _is_bool(value):
        raise TypeError(f"{prim} {what} must be an integer, got the bool {value!r}.")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{prim} {what} must be an integer, got {value!r}.") from None


def index_tuple_param(prim: str, what: str, values: Any) -> Shape:
    """A sequence param of a primitive as a tuple of Python ints, or TypeError naming it;
    ``int_tuple`` with bools refused too (see ``index_param``)."""
    items = int_tuple(prim, what, values)
    if any(_is_bool(v) for v in values):
        raise TypeError(f"{prim} {what} must be a sequence of integers, got bools in {tuple(values)!r}.")
    return items


def check_no_sharding(prim: str, sharding: Any) -> None:
    """A primitive's ``sharding``/``out_sharding`` param: None, or the NamedSharding its result's
    type carries (minijax.sharding_rules gives the result that type)."""
    if sharding is not None and not isinstance(sharding, NamedSharding):
        raise TypeError(f"{prim}: the sharding param must be None or a NamedSharding, got {sharding!r}.")


def nonnegative(prim: str, what: str, values: Shape) -> None:
    if any(v < 0 for v in values):
        raise TypeError(f"{prim} {what} must have every element be nonnegative, got {values}.")



# ---------------------------------------------------------------------------
# The monoid reductions (reduce_sum in structural.py, the others in
# reductions.py) share one shape rule; each accepts its own dtypes (C3).


def _numbers(name: str, x: ShapedArray) -> None:
    if not (dtypes.issubdtype(x.dtype, np.integer) or dtypes.issubdtype(x.dtype, np.inexact)):
        raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of number.")


def _any_dtype(name: str, x: ShapedArray) -> None:
    pass


def _bool_or_int(name: str, x: ShapedArray) -> None:
    if not (x.dtype == np.bool_ or dtypes.issubdtype(x.dtype, np.integer)):
        raise TypeError(f"{name}: logical reduction requires operand dtype bool or int, got {x.dtype.name}.")


# name -> the dtype check. Only reduce_sum carries an ``out_sharding`` param, as in JAX 0.10.2.
_REDUCTION_DTYPES: dict[str, Callable[[str, ShapedArray], None]] = {
    "reduce_sum": _numbers,
    "reduce_prod": _numbers,
    "reduce_max": _any_dtype,
    "reduce_min": _any_dtype,
    "reduce_and": _bool_or_int,
    "reduce_or": _bool_or_int,
    "reduce_xor": _bool_or_int,
}


def _check_half_precision_sum(x: ShapedArray, axes: tuple[int, ...]) -> None:
    """``jax_allow_f16_reductions=False`` refuses a float16/bfloat16 sum of more than one element per
    output (it would accumulate in 16 bits), as JAX does."""
    if x.dtype in (np.float16, dtypes.bfloat16) and any(x.shape[a] != 1 for a in axes):
        if not config.read("jax_allow_f16_reductions"):
            raise ValueError(
                f"reduce_sum on operand {x.str_short(short_dtypes=True)} is not allowed when "
                "jax_allow_f16_reductions=False."
            )


def reduction_rule(name: str) -> Callable[..., ShapedArray]:
    """The shape rule of the monoid reduction ``name`` (``reduce`` C1-C4 in spec/primitives/reductions.md)."""
    check_dtype = _REDUCTION_DTYPES[name]

    def rule(x: ShapedArray, *, axes: Any, out_sharding: Any = None) -> ShapedArray:
        check_no_sharding(name, out_sharding)
        axes = index_tuple_param(name, "axes", axes)
        if any(not 0 <= a < x.ndim for a in axes):  # reduce C1
            raise ValueError(f"{name}: reduction axes {axes} contains out-of-bounds indices for {long_str(x)}.")
        if len(set(axes)) != len(axes):  # reduce C2
            raise ValueError(f"{name}: duplicate value in 'axes' of reduction: {axes}")
        check_dtype(name, x)  # reduce C3
        if name == "reduce_sum":
            _check_half_precision_sum(x, axes)
        shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)  # reduce C4

    return rule
