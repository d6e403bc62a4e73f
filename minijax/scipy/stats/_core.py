"""``jax.scipy.stats``' summary functions: ``mode``, ``rankdata`` and ``sem``."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.array import Array
from minijax.numpy.util import canonicalize_axis, check_arraylike, promote_args_inexact
from minijax.stages import jit
from minijax.typing import ArrayLike
from minijax.vectorization import vmap

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_NAN_POLICIES = ("propagate", "omit", "raise")


class ModeResult(NamedTuple):
    mode: Array
    count: Array  # type: ignore[assignment]  # scipy's field name; it shadows tuple.count, as in JAX


def _check_nan_policy(name: str, nan_policy: str) -> None:
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of {{'propagate', 'omit', 'raise'}}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        # Whether x holds a nan is a value, unknown while tracing: the check would need a host round trip.
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
            f"Please check if nans exist in `x` outside of the `{name}` function."
        )


def outside_unit_interval(q: ArrayLike) -> Array:
    """Where ``q`` is no probability (below 0, above 1, or nan): where a quantile function gives nan."""
    out: Array = jnp.isnan(q) | (q < 0) | (q > 1)
    return out


def _mode_of_column(x: Any) -> tuple[Any, Any]:
    if x.size == 0:
        float_dtype = dtypes.default_float_dtype()
        return jnp.array(np.nan, dtype=float_dtype), jnp.array(0, dtype=float_dtype)
    # unique sorts, so argmax's first maximum is the smallest of the most frequent values, as in scipy.
    vals, counts = jnp.unique(x, return_counts=True, size=x.size)
    return vals[jnp.argmax(counts)], counts.max()


@jit(static_argnames=["axis", "nan_policy", "keepdims"])  # type: ignore[untyped-decorator]
def mode(a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    """The most frequent value along ``axis`` (all elements for ``None``) and how often it occurs."""
    check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy("mode", nan_policy)
    if axis is not None:
        axis = canonicalize_axis(axis, x.ndim)
    shape = x.shape
    if axis is None:
        out_shape: tuple[int, ...] = tuple(1 for _ in shape) if keepdims else ()
        x = x.ravel()
        axis = 0
    elif keepdims:
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(shape))
    else:
        out_shape = tuple(s for i, s in enumerate(shape) if i != axis)
    x = jnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    vals, counts = vmap(_mode_of_column, in_axes=1)(x)
    return ModeResult(vals.reshape(out_shape), counts.reshape(out_shape))


def _ranks(a: Array, method: str) -> Array:
    """The ranks of a 1-D array's elements (ties per ``method``), or all nan if one is nan."""
    out_dtype = dtypes.default_float_dtype()

    def ranks(a: Any) -> Any:
        arr, sorter = lax.sort_key_val(a, jnp.arange(a.size))
        # inv[i]: where element i landed in the sorted order.
        inv = jnp.empty_like(sorter).at[sorter].set(jnp.arange(sorter.size, dtype=sorter.dtype))
        if method == "ordinal":
            return (inv + 1).astype(out_dtype)
        starts = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
        dense = starts.cumsum()[inv]
        if method == "dense":
            return dense.astype(out_dtype)
        # count[j]: how many elements precede the j-th group of ties (count[-1] = size).
        count = jnp.nonzero(starts, size=arr.size + 1, fill_value=starts.size)[0].astype(out_dtype)
        if method == "max":
            return count[dense]
        if method == "min":
            return count[dense - 1] + 1
        return 0.5 * (count[dense] + count[dense - 1] + 1)

    ranked: Array = lax.cond(jnp.any(jnp.isnan(a)), lambda a: jnp.full_like(a, jnp.nan, out_dtype), ranks, a)
    return ranked


@jit(static_argnames=["method", "axis", "nan_policy"])  # type: ignore[untyped-decorator]
def rankdata(a: ArrayLike, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Array:
    """Ranks from 1, ties resolved by ``method`` (``average``, ``min``, ``max``, ``dense``, ``ordinal``).

    Without ``axis`` the flattened array is ranked; with it, each 1-D slice along it.
    """
    check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    arr = jnp.asarray(a)
    if axis is None:
        return _ranks(jnp.ravel(arr), method)
    axis = canonicalize_axis(axis, arr.ndim)
    moved = jnp.moveaxis(arr, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    ranked = vmap(lambda row: _ranks(row, method))(rows)
    out: Array = jnp.moveaxis(ranked.reshape(moved.shape), -1, axis)
    return out


@jit(static_argnames=["axis", "nan_policy", "keepdims"])  # type: ignore[untyped-decorator]
def sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Array:
    """The standard error of the mean: ``std(a, ddof=ddof) / sqrt(n)`` along ``axis``.

    ``nan_policy='omit'`` leaves nans out of both the deviation and ``n``.
    """
    (b,) = promote_args_inexact("sem", a)
    b = jnp.asarray(b)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
        # nanstd: the deviation of the non-nan elements only.
        spread: Array = jnp.std(b, axis, ddof=ddof, keepdims=keepdims, where=~jnp.isnan(b))
        return spread / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
