"""``lax.gather``, the ``lax.scatter*`` family and their dimension numbers, as in ``jax.lax``.

These are the low-level operations NumPy-style indexing is built on
(``x[idx]`` gathers, ``x.at[idx].add(y)`` scatters); see
``spec/primitives/indexing.md`` for what the dimension numbers mean. The
wrappers parse ``mode`` (a string or a ``GatherScatterMode``), give a
FILL_OR_DROP gather its default fill value, and attach each scatter's update
jaxpr, then bind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax.core import get_aval
from minijax.lax.structural import concatenate, expand_dims, full
from minijax.primitives import indexing as _ix
from minijax.primitives.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather_p,
    scatter_add_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
    scatter_sub_p,
)

ArrayLike = Any
Array = Any
Mode = str | GatherScatterMode | None


def gather(operand: ArrayLike, start_indices: ArrayLike, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False, indices_are_sorted: bool = False,
           mode: Mode = None, fill_value: Any = None) -> Array:
    """Read one window of ``slice_sizes`` from ``operand`` per index vector (the last axis of ``start_indices``).

    ``mode`` (default ``'promise_in_bounds'``): ``'clip'`` clamps windows into
    bounds; ``'fill'``/``'drop'`` read ``fill_value`` (default NaN, the lowest
    signed or highest unsigned integer, or True) for a window that does not fit.
    """
    return _ix.gather(operand, start_indices, dimension_numbers, slice_sizes, unique_indices=unique_indices,
                      indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value)


def _scatter_op(op: str) -> Callable[..., Array]:
    def scatter_fn(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
                   dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                   unique_indices: bool = False, mode: Mode = None) -> Array:
        return _ix.scatter_op(op, operand, scatter_indices, updates, dimension_numbers,
                              indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)

    scatter_fn.__name__ = scatter_fn.__qualname__ = f"scatter_{op}"
    scatter_fn.__doc__ = (
        f"Combine ``updates`` into ``operand`` with {op} at the windows ``scatter_indices`` start "
        "(colliding updates all count). ``mode`` (default ``'fill'``/``'drop'``): windows that do not "
        "fit are dropped; ``'clip'`` clamps them into bounds."
    )
    return scatter_fn


scatter_add = _scatter_op("add")
scatter_sub = _scatter_op("sub")
scatter_mul = _scatter_op("mul")
scatter_min = _scatter_op("min")
scatter_max = _scatter_op("max")


def scatter(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
            dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Mode = None) -> Array:
    """Write ``updates`` into ``operand`` at the windows ``scatter_indices`` start.

    When two updates hit one element, which one is kept is unspecified.
    """
    return _ix.scatter(operand, scatter_indices, updates, dimension_numbers, indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices, mode=mode)


def scatter_apply(operand: Array, scatter_indices: Array, func: Callable[[Array], Array],
                  dimension_numbers: ScatterDimensionNumbers, *, update_shape: Sequence[int] = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False, mode: Mode = None) -> Array:
    """Replace the elements of ``operand`` at the windows ``scatter_indices`` start with ``func`` of them.

    An element hit twice gets ``func`` applied twice. As in JAX it is not
    differentiable (its jvp raises NotImplementedError).
    """
    dtype = get_aval(operand).dtype
    unused = full(update_shape, 0, dtype)
    jaxpr, consts = _ix.apply_jaxpr(func, dtype)
    return scatter_p.bind(
        operand, scatter_indices, unused, update_jaxpr=jaxpr, update_consts=consts,
        dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
        mode=GatherScatterMode.from_any(mode),
    )  # fmt: skip


def index_take(src: Array, idxs: Sequence[Array], axes: Sequence[int]) -> Array:
    """``src`` indexed along ``axes`` by the 1-d index arrays ``idxs`` (one per axis), wrapping
    indices modulo the axis sizes: one gather, the other axes kept whole."""
    indices = concatenate([expand_dims(i, (1,)) for i in idxs], 1)
    src_shape = get_aval(src).shape
    max_idx = expand_dims(np.array([src_shape[ax] for ax in axes]), tuple(range(get_aval(indices).ndim - 1)))
    indices = indices % max_idx
    slice_sizes = list(src_shape)
    for ax in axes:
        slice_sizes[ax] = 1
    offset_dims = tuple(range(1, len(src_shape) - get_aval(indices).shape[1] + 1))
    dnums = GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=tuple(axes), start_index_map=tuple(axes))
    return gather(src, indices, dimension_numbers=dnums, slice_sizes=tuple(slice_sizes))


__all__ = [
    "GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "gather", "gather_p",
    "index_take", "scatter", "scatter_add", "scatter_add_p", "scatter_apply", "scatter_max", "scatter_max_p",
    "scatter_min", "scatter_min_p", "scatter_mul", "scatter_mul_p", "scatter_p", "scatter_sub", "scatter_sub_p",
]  # fmt: skip
