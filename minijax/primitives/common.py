"""Helpers the primitive families share to state their shape and dtype rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import Primitive, ShapedArray, abstract_eval_rules

# Dtype classes a primitive accepts, used in rule checks and error messages.
BOOL = (np.bool_,)
SIGNED = (np.signedinteger,)
UNSIGNED = (np.unsignedinteger,)
INT = (np.integer,)
FLOAT = (np.floating,)
NUMERIC = (np.integer, np.floating)
INT_OR_BOOL = (np.integer, np.bool_)
ANY = (np.integer, np.floating, np.bool_)

_CLASS_NAMES = {
    np.bool_: "bool",
    np.signedinteger: "signed integer",
    np.unsignedinteger: "unsigned integer",
    np.integer: "integer",
    np.floating: "floating-point",
}


def accepts(dtype: np.dtype[Any], classes: Sequence[type]) -> bool:
    return any(dtypes.issubdtype(dtype, c) for c in classes)


def check_dtype(prim_name: str, aval: ShapedArray, classes: Sequence[type], what: str = "operand") -> None:
    if not accepts(aval.dtype, classes):
        allowed = ", ".join(_CLASS_NAMES.get(c, c.__name__) for c in classes)
        raise TypeError(f"{prim_name} does not accept dtype {aval.dtype.name} for its {what}. Accepted dtypes: {allowed}.")


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


def same_dtypes(prim_name: str, *avals: ShapedArray) -> np.dtype[Any]:
    dts = {a.dtype for a in avals}
    if len(dts) != 1:
        names = ", ".join(a.dtype.name for a in avals)
        raise TypeError(f"{prim_name} requires arguments to have the same dtypes, got {names}.")
    return avals[0].dtype


def naryop_abstract_eval(name: str, classes: Sequence[type]) -> Callable[..., ShapedArray]:
    def rule(*avals: ShapedArray, **params: Any) -> ShapedArray:
        for a in avals:
            check_dtype(name, a, classes)
        dtype = same_dtypes(name, *avals)
        shape = broadcasting_shape(name, *avals)
        return ShapedArray(shape, dtype, weak_type=all(a.weak_type for a in avals))

    return rule


def unop_abstract_eval(name: str, classes: Sequence[type], result_dtype: Any = None) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, **params: Any) -> ShapedArray:
        check_dtype(name, x, classes)
        dtype = x.dtype if result_dtype is None else result_dtype
        return ShapedArray(x.shape, dtype, weak_type=x.weak_type and result_dtype is None)

    return rule


def standard_primitive(name: str, rule: Callable[..., Any], multiple_results: bool = False) -> Primitive:
    prim = Primitive(name, multiple_results)
    abstract_eval_rules[prim] = rule
    return prim


def canonicalize_axis(axis: int, ndim: int, prim_name: str = "") -> int:
    if not -ndim <= axis < max(ndim, 1) and not (ndim == 0 and axis in (0, -1)):
        raise ValueError(f"{prim_name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0
