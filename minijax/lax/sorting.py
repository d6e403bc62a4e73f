"""``lax`` sorting and cumulative reductions, as in ``jax.lax``: sort, sort_key_val, top_k,
cumsum, cumprod, cummax, cummin, cumlogsumexp, and associative_scan.

The wrappers turn user arguments into the exact params of the primitives in
``minijax/primitives/sorting.py`` (normalizing negative axes where JAX does:
``sort`` and ``top_k``; the cumulative ones pass the axis through, and the
primitive rejects a negative one, as JAX's does) and bind.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, SupportsIndex

from minijax import tree_util
from minijax.core import get_aval
from minijax.lax.structural import Array, ArrayLike, _asarray, _canonical_axis
from minijax.primitives import sorting as _sorting
from minijax.primitives.sorting import cumlogsumexp_p, cummax_p, cummin_p, cumprod_p, cumsum_p, sort_p, top_k_p


def sort(operand: ArrayLike | Sequence[ArrayLike], dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort ``operand`` (an array, or a sequence of arrays sorted together) along ``dimension``.

    Floats: -0.0 and 0.0 are equal, NaNs go to the end. With several
    operands the first ``num_keys`` are the keys, compared lexicographically
    (the first most significant); the others follow the same permutation.
    Returns an array, or a tuple of arrays for a sequence.
    """
    if isinstance(operand, (list, tuple)):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(operand)}")
        dim = _canonical_axis(dimension, get_aval(operand[0]).ndim)
        return tuple(sort_p.bind(*operand, dimension=dim, is_stable=bool(is_stable), num_keys=operator.index(num_keys)))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dim = _canonical_axis(dimension, get_aval(operand).ndim)
    return sort_p.bind(operand, dimension=dim, is_stable=bool(is_stable), num_keys=1)[0]


def sort_key_val(keys: ArrayLike, values: ArrayLike, dimension: int = -1, is_stable: bool = True) -> tuple[Array, Array]:
    """Sort ``keys`` along ``dimension`` and apply the same permutation to ``values``."""
    dim = _canonical_axis(dimension, get_aval(keys).ndim)
    k, v = sort_p.bind(keys, values, dimension=dim, is_stable=bool(is_stable), num_keys=1)
    return k, v


def top_k(operand: ArrayLike, k: int, *, axis: int = -1) -> list[Array]:
    """The ``k`` largest entries along ``axis``, largest first, and their int32 indices.

    Orders by the IEEE total order (NaN above +inf, -NaN below -inf, 0.0 above
    -0.0); among equal entries the lower index comes first.
    """
    k = operator.index(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    dim = _canonical_axis(axis, get_aval(operand).ndim)
    result: list[Array] = top_k_p.bind(operand, k=k, axis=dim)  # a list, as JAX returns it
    return result


def _cumulative(prim: Any, operand: ArrayLike, axis: SupportsIndex, reverse: bool) -> Array:
    return prim.bind(operand, axis=int(operator.index(axis)), reverse=bool(reverse))


def cumsum(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative sum along ``axis`` (from the end when ``reverse``)."""
    return _cumulative(cumsum_p, operand, axis, reverse)


def cumprod(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative product along ``axis``."""
    return _cumulative(cumprod_p, operand, axis, reverse)


def cummax(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative maximum along ``axis`` (NaN from the first NaN on)."""
    return _cumulative(cummax_p, operand, axis, reverse)


def cummin(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative minimum along ``axis`` (NaN from the first NaN on)."""
    return _cumulative(cummin_p, operand, axis, reverse)


def cumlogsumexp(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative ``log(sum(exp(x)))`` along ``axis``, computed without overflow."""
    return _cumulative(cumlogsumexp_p, operand, axis, reverse)


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """The prefix combination of ``elems`` (a pytree of arrays) along ``axis`` by the associative ``fn``.

    ``fn(a, b)`` combines two pytrees shaped like ``elems`` (slices of it along
    ``axis``), elementwise. Result element k is ``fn(... fn(fn(e0, e1), e2) ..., ek)``;
    with ``reverse`` the scan runs from the end. Computed in log2(n) parallel
    steps (Blelloch's algorithm, as JAX's ``lax.associative_scan``).
    """
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    leaves, tree = tree_util.tree_flatten(elems)
    leaves = [_asarray(x) for x in leaves]
    if not leaves:
        return elems
    axis = _canonical_axis(axis, get_aval(leaves[0]).ndim)
    n = get_aval(leaves[0]).shape[axis]
    if any(get_aval(x).shape[axis] != n for x in leaves[1:]):
        shapes = [get_aval(x).shape for x in leaves]
        raise ValueError(f"Array inputs to associative_scan must have the same first dimension. (saw: {shapes})")

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        return list(tree_util.tree_leaves(out))

    return tree_util.tree_unflatten(tree, _sorting.associative_scan(combine, leaves, axis, reverse))


__all__ = [
    "associative_scan",
    "cumlogsumexp_p",
    "cummax_p",
    "cummin_p",
    "cumprod_p",
    "cumsum_p",
    "sort_p",
    "top_k_p",
    "cumlogsumexp",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "sort",
    "sort_key_val",
    "top_k",
]
