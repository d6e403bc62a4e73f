"""Functions that lift other functions over arrays: ``vectorize`` (NumPy's
generalized ufuncs, on ``vmap``), ``piecewise`` (on ``lax.switch``),
``apply_along_axis`` and ``apply_over_axes``.

None of them loops in Python over array elements: ``vectorize`` maps once per
broadcast dimension, and a dimension that every argument has as size 1 is
restored with ``expand_dims`` rather than mapped, as JAX does.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from minijax import lax
from minijax.config import numpy_rank_promotion
from minijax.numpy import util
from minijax.numpy.creation import array, asarray, zeros_like
from minijax.numpy.reductions import argmax
from minijax.numpy.shape_ops import concatenate, expand_dims, squeeze
from minijax.numpy.sorting import cumsum
from minijax.numpy.util import ArrayLike, canonicalize_axis
from minijax.vectorization import vmap

__all__ = [
    # issue 21 (sciother)
    "apply_along_axis",
    "apply_over_axes",
    "piecewise",
    "vectorize",
]

CoreDims = tuple[str, ...]

# NumPy's grammar for gufunc signatures: "(m,n),(n)->(m)".
_NAME = r"\w+"
_ARG = rf"\((?:{_NAME}(?:,{_NAME})*)?\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = rf"^{_ARGS}->{_ARGS}$"


def _parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = signature.split("->")
    return [tuple(re.findall(_NAME, a)) for a in re.findall(_ARG, ins)], [
        tuple(re.findall(_NAME, a)) for a in re.findall(_ARG, outs)
    ]


def _record_core_sizes(
    sizes: dict[str, int], shape: tuple[int, ...], core: CoreDims, context: str, *, is_input: bool
) -> None:
    """Check ``shape``'s trailing core dimensions against the sizes seen so far, recording new ones."""
    if is_input and len(shape) < len(core):
        raise ValueError(
            f"input with shape {shape!r} does not have enough dimensions for all core dimensions {core!r} {context}"
        )
    if not is_input and len(shape) != len(core):
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core!r} {context}")
    core_shape = shape[len(shape) - len(core) :]
    for name, size in zip(core, core_shape):
        seen = sizes.setdefault(name, size)
        if seen != size:
            raise ValueError(f"inconsistent size for core dimension {name!r}: {size!r} vs {seen!r} {context}")


def _bind_excluded(
    func: Callable[..., Any], excluded: Collection[int | str], args: Sequence[Any], kwargs: dict[str, Any]
) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """``func`` with the excluded arguments fixed, and the arguments left to vectorize."""
    if not excluded:
        return func, list(args), kwargs
    fixed_positional = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int)) if i < len(args)]
    fixed_keywords = {k: v for k, v in kwargs.items() if k in excluded}
    free_args = [a for i, a in enumerate(args) if i not in excluded]
    free_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}

    def bound(*rest: Any, **more: Any) -> Any:
        full = list(rest)
        for i, value in fixed_positional:
            full.insert(i, value)
        return func(*full, **more, **fixed_keywords)

    return bound, free_args, free_kwargs


def _checking_outputs(
    func: Callable[..., Any], sizes: dict[str, int], out_core: list[CoreDims], context: str
) -> Callable[..., Any]:
    def checked(*args: Any) -> Any:
        out = func(*args)
        outs = out if isinstance(out, tuple) else [out]
        if len(out_core) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, got: {out!r}\n{context}")
        if len(outs) != len(out_core):
            raise TypeError(
                f"wrong number of output arguments: expected {len(out_core)!r}, got {len(outs)!r} {context}"
            )
        seen = dict(sizes)
        for o, core in zip(outs, out_core):
            _record_core_sizes(seen, tuple(np.shape(o)), core, context, is_input=False)
        return out

    return checked


def vectorize(
    pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(), signature: str | None = None
) -> Callable[..., Any]:
    """``pyfunc`` broadcast over leading dimensions, as a generalized ufunc of ``signature``, by ``vmap``."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(f"jax.numpy.vectorize can only exclude integer or string arguments, but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, free, kw = _bind_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            in_core, out_core = _parse_signature(signature)
        else:
            in_core, out_core = [()] * len(free), None
        none_at = {i for i, a in enumerate(free) if a is None}
        if none_at:
            if any(in_core[i] != () for i in none_at if i < len(in_core)):
                raise ValueError(f"Cannot pass None at locations {none_at} with signature={signature!r}")
            func, free, _ = _bind_excluded(func, none_at, free, {})
            in_core = [c for i, c in enumerate(in_core) if i not in none_at]
        if kw:
            func = functools.partial(func, **kw)
        arrays = [asarray(a) for a in free]
        if len(arrays) != len(in_core):
            raise TypeError(
                f"wrong number of positional arguments: expected {len(in_core)!r}, got {len(arrays)!r} {context}"
            )
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, core in zip(arrays, in_core):
            _record_core_sizes(sizes, tuple(a.shape), core, context, is_input=True)
            loop_shapes.append(tuple(a.shape[: a.ndim - len(core)]))
        broadcast = lax.broadcast_shapes(*loop_shapes) if loop_shapes else ()
        if out_core is not None:
            func = _checking_outputs(func, sizes, out_core, context)
        mode = numpy_rank_promotion.value
        if mode != "allow":
            ranks = {a.ndim - len(c) for a, c in zip(arrays, in_core) if a.ndim != 0}
            if len(ranks) > 1:
                msg = (
                    f"operands with shapes {[a.shape for a in arrays]} require rank promotion for jnp.vectorize "
                    f"function with signature {signature}. Set the jax_numpy_rank_promotion config option to "
                    "'allow' to disable this message; for more information, see "
                    "https://docs.jax.dev/en/latest/rank_promotion_warning.html."
                )
                if mode == "warn":
                    warnings.warn(msg, stacklevel=2)
                else:
                    raise ValueError(msg)
        # Size-1 loop dimensions are squeezed away and broadcast by vmap's in_axes=None.
        squeezed, reversed_shapes = [], []
        for a, core in zip(arrays, in_core):
            loop = tuple(a.shape[: a.ndim - len(core)])
            reversed_shapes.append(((1,) * (len(broadcast) - len(loop)) + loop)[::-1])
            squeezed.append(squeeze(a, axis=tuple(i for i, s in enumerate(loop) if s == 1)))
        mapped = func
        restore = []
        for back, column in enumerate(zip(*reversed_shapes)):
            in_axes = tuple(None if s == 1 else 0 for s in column)
            if all(ax is None for ax in in_axes):
                restore.append(len(broadcast) - 1 - back)
            else:
                mapped = vmap(mapped, in_axes)
        result = mapped(*squeezed)
        if not restore:
            return result
        if isinstance(result, tuple):
            return tuple(expand_dims(r, restore) for r in result)
        return expand_dims(result, restore)

    return wrapped


def piecewise(x: ArrayLike, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """The value of the first function whose condition holds, elementwise (``lax.switch`` per element)."""
    util.check_arraylike("piecewise", x)
    x_arr = asarray(x)
    nc, nf = len(condlist), len(funclist)
    # Branch 0 is the default: the extra last function, or 0 when there is none.
    if nf == nc + 1:
        branches = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        branches = [0, *funclist]
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")
    conds = asarray(condlist, dtype=bool)
    # 1 + the index of the first true condition, 0 when none holds.
    first_true = argmax(cumsum(concatenate([zeros_like(conds[:1]), conds], 0), 0), 0)
    dtype = x_arr.dtype

    def as_branch(fn: Any) -> Callable[[Any], Any]:
        if callable(fn):
            return lambda v: asarray(fn(v, *args, **kw)).astype(dtype)
        return lambda v: array(fn, dtype=dtype)

    return vectorize(lax.switch, excluded=(1,))(first_true, [as_branch(b) for b in branches], x_arr)


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: Any, **kwargs: Any) -> Any:
    """``func1d`` applied to every 1-D slice along ``axis``, by ``vmap`` over the other axes."""
    util.check_arraylike("apply_along_axis", arr)
    ndim = np.ndim(arr)
    axis = canonicalize_axis(axis, ndim)

    def func(a: Any) -> Any:
        return func1d(a, *args, **kwargs)

    # The trailing axes are mapped first, each result dimension put last, so the
    # output reads arr.shape[:axis] + func1d's shape + arr.shape[axis + 1:].
    for i in range(1, ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func: Callable[[Any, int], Any], a: ArrayLike, axes: Sequence[int]) -> Any:
    """``func(a, axis)`` for each axis in turn, a reduced axis kept with size 1."""
    util.check_arraylike("apply_over_axes", a)
    out = asarray(a)
    for axis in axes:
        b = func(out, axis)
        if b.ndim == out.ndim:
            out = b
        elif b.ndim == out.ndim - 1:
            out = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return out
