"""NumPy implementations of gather and the scatter family (spec/primitives/indexing.md).

Both are computed with NumPy's integer-array indexing: for every operand axis
an index array is built (the window's start, read from the index vectors,
plus the position inside the window), broadcast to the output's (gather) or
the updates' (scatter) shape. Starts are clamped or checked as the ``mode``
says; a scatter drops whole windows that do not fit unless the mode is CLIP.
Colliding scatter updates combine with ``ufunc.at`` (every one counts);
for a plain scatter the last update written wins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax.primitives.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    default_fill_value,
    gather_shape,
)
from minijax_numpy.table import HIGHER_ORDER, IMPLS, JaxprCompiler, impl

Array = np.ndarray[Any, Any]


def _as_int64(indices: Array) -> Array:
    """The indices as int64; uint64 values beyond int64's range saturate (they are out of bounds anyway)."""
    if indices.dtype == np.uint64:
        indices = np.minimum(indices, np.uint64(2**62))
    return indices.astype(np.int64)


def _placed(values: Array, positions: list[int], rank: int) -> Array:
    """``values`` reshaped to ``rank`` axes, its own axes at ``positions`` and size 1 elsewhere."""
    shape = [1] * rank
    for axis, p in enumerate(positions):
        shape[p] = values.shape[axis]
    return values.reshape(shape)


def _starts(
    indices: Array,
    operand_shape: tuple[int, ...],
    window: list[int],
    index_map: tuple[int, ...],
    operand_batching: tuple[int, ...],
    index_batching: tuple[int, ...],
    clamp: bool,
) -> tuple[list[Array], Array]:
    """Per operand axis, the window starts (arrays over the indices' batch shape); and where every
    start read from the indices lets its window fit (before any clamping)."""
    batch_shape = indices.shape[:-1]
    idx = _as_int64(indices)
    starts = [np.zeros(batch_shape, np.int64) for _ in operand_shape]
    fits = np.ones(batch_shape, bool)
    for k, d in enumerate(index_map):
        start = idx[..., k]
        upper = operand_shape[d] - window[d]
        fits &= (start >= 0) & (start <= upper)
        starts[d] = np.clip(start, 0, max(upper, 0)) if clamp else start
    for d, j in zip(operand_batching, index_batching):
        # A batching axis pairs operand element b with index batch element b.
        starts[d] = np.broadcast_to(_placed(np.arange(batch_shape[j]), [j], len(batch_shape)), batch_shape)
    return starts, fits


# ---------------------------------------------------------------------------
# gather


@impl("gather")
def _gather(
    operand: Array, indices: Array, *, dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
    unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode, fill_value: Any,
) -> Array:  # fmt: skip
    dn = dimension_numbers
    out_shape = gather_shape(indices.shape, dn, slice_sizes)
    if 0 in out_shape:
        return np.zeros(out_shape, operand.dtype)
    rank = len(out_shape)
    batch_positions = [i for i in range(rank) if i not in dn.offset_dims]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window_axes = [d for d in range(operand.ndim) if d not in dropped]
    # Gathers always clamp; FILL_OR_DROP then replaces the windows that did not fit.
    starts, fits = _starts(indices, operand.shape, list(slice_sizes), dn.start_index_map,
                           dn.operand_batching_dims, dn.start_indices_batching_dims, clamp=True)
    where = []
    for d in range(operand.ndim):
        position = _placed(starts[d], batch_positions, rank)
        if d in window_axes:
            offset_axis = dn.offset_dims[window_axes.index(d)]
            position = position + _placed(np.arange(slice_sizes[d]), [offset_axis], rank)
        where.append(position)
    out = np.broadcast_to(operand[tuple(where)], out_shape)
    if mode is GatherScatterMode.FILL_OR_DROP:
        fill = default_fill_value(operand.dtype) if fill_value is None else fill_value
        out = np.where(_placed(fits, batch_positions, rank), out, np.asarray(fill).astype(operand.dtype))
    return np.asarray(out)


# ---------------------------------------------------------------------------
# The scatter family


def _scatter_targets(operand_shape: tuple[int, ...], indices: Array, updates: Array,
                     dn: ScatterDimensionNumbers, mode: GatherScatterMode) -> tuple[Array, Array]:
    """Where each update goes (its flat position in the operand) and the updates, flattened in
    row-major order; the updates of windows that do not fit are left out (unless CLIP moved them in)."""
    rank = updates.ndim
    scatter_positions = [i for i in range(rank) if i not in dn.update_window_dims]
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_axes = [d for d in range(len(operand_shape)) if d not in dropped]
    window = [1] * len(operand_shape)
    for d, u in zip(window_axes, dn.update_window_dims):
        window[d] = updates.shape[u]
    clip = mode is GatherScatterMode.CLIP
    starts, fits = _starts(indices, operand_shape, window, tuple(dn.scatter_dims_to_operand_dims),
                           tuple(dn.operand_batching_dims), tuple(dn.scatter_indices_batching_dims), clamp=clip)
    flat = np.zeros(updates.shape, np.int64)
    stride = 1
    for d in reversed(range(len(operand_shape))):  # row-major flat position, axis by axis
        position = _placed(starts[d], scatter_positions, rank)
        if d in window_axes:
            u = dn.update_window_dims[window_axes.index(d)]
            position = position + _placed(np.arange(window[d]), [u], rank)
        flat = flat + position * stride
        stride *= operand_shape[d]
    keep = np.ones(updates.shape, bool) if clip else np.broadcast_to(_placed(fits, scatter_positions, rank), updates.shape)
    return flat[keep], updates[keep]


def _scatter_with(combine: Callable[..., None] | None) -> Callable[..., Array]:
    """The implementation of a scatter whose updates combine with ``combine`` (a ``ufunc.at``);
    None replaces the operand's element."""

    def run(operand: Array, indices: Array, updates: Array, *, update_jaxpr: Any, update_consts: Any,
            dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
            mode: GatherScatterMode) -> Array:
        out = np.array(operand, copy=True, order="C")  # C order: reshape(-1) below is a view
        targets, values = _scatter_targets(operand.shape, indices, updates, dimension_numbers, mode)
        flat = out.reshape(-1)  # a view: out is a fresh contiguous copy
        if combine is None:
            flat[targets] = values
        else:
            combine(flat, targets, values)
        return out

    return run


IMPLS["scatter-add"] = _scatter_with(np.add.at)
IMPLS["scatter-sub"] = _scatter_with(np.subtract.at)
IMPLS["scatter-mul"] = _scatter_with(np.multiply.at)


def _extremum_at(ufunc: np.ufunc, negative_zero_wins: bool) -> Callable[..., None]:
    """``ufunc.at`` with XLA's signed zeros: min of +0.0 and -0.0 is -0.0, max is
    +0.0 (``np.minimum``/``np.maximum`` return either)."""

    def combine(flat: Array, targets: Array, values: Array) -> None:
        if flat.dtype.kind in "iub":
            ufunc.at(flat, targets, values)
            return
        winning = (flat == 0) & (np.signbit(flat) == negative_zero_wins)
        np.logical_or.at(winning, targets, (values == 0) & (np.signbit(values) == negative_zero_wins))
        ufunc.at(flat, targets, values)
        zero = np.asarray(-0.0 if negative_zero_wins else 0.0).astype(flat.dtype)
        flat[winning & (flat == 0)] = zero

    return combine


IMPLS["scatter-min"] = _scatter_with(_extremum_at(np.minimum, negative_zero_wins=True))
IMPLS["scatter-max"] = _scatter_with(_extremum_at(np.maximum, negative_zero_wins=False))
_replace = _scatter_with(None)


def _scatter(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., Any]:
    """scatter: a plain replacement, or (``scatter_apply``) its update jaxpr applied to each target in turn."""
    jaxpr = params["update_jaxpr"]
    if jaxpr is None:
        return lambda operand, indices, updates: _replace(operand, indices, updates, **params)
    combine = backend.compile_jaxpr(jaxpr, list(params["update_consts"]))

    def run(operand: Array, indices: Array, updates: Array) -> Array:
        out = np.array(operand, copy=True, order="C")  # C order: reshape(-1) below is a view
        targets, values = _scatter_targets(operand.shape, indices, updates, params["dimension_numbers"], params["mode"])
        # One application per update, in order, so that a target hit twice gets
        # the function applied twice (the reference's definition; a loop is fine here).
        flat = out.reshape(-1)
        for k in range(values.shape[0]):
            at = targets[k]
            flat[at] = combine(np.asarray(flat[at]), np.asarray(values[k]))[0]
        return out

    return run


HIGHER_ORDER["scatter"] = _scatter
