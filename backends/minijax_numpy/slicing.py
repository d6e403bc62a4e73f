"""NumPy implementations: slicing primitives (spec/primitives/slicing.md).

slice, pad, dynamic_slice and dynamic_update_slice.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax_numpy.table import impl

Array = np.ndarray[Any, Any]


@impl("slice")
def _slice(
    x: Array, *, start_indices: tuple[int, ...], limit_indices: tuple[int, ...], strides: tuple[int, ...] | None
) -> Array:
    steps = strides or (1,) * x.ndim
    return x[tuple(slice(s, lim, st) for s, lim, st in zip(start_indices, limit_indices, steps))]


def _clamped_starts(indices: tuple[Array, ...], operand: tuple[int, ...], window: tuple[int, ...]) -> list[int]:
    # Starts are clamped so that the whole window lies inside the operand
    # (the Semantics of dynamic_slice / dynamic_update_slice): never out of bounds.
    return [min(max(int(i), 0), n - w) for i, n, w in zip(indices, operand, window)]


@impl("dynamic_slice")
def _dynamic_slice(x: Array, *indices: Array, slice_sizes: tuple[int, ...]) -> Array:
    starts = _clamped_starts(indices, x.shape, slice_sizes)
    return x[tuple(slice(s, s + w) for s, w in zip(starts, slice_sizes))]


@impl("dynamic_update_slice")
def _dynamic_update_slice(x: Array, update: Array, *indices: Array) -> Array:
    starts = _clamped_starts(indices, x.shape, update.shape)
    out = x.copy()
    out[tuple(slice(s, s + w) for s, w in zip(starts, update.shape))] = update
    return out


@impl("pad")
def _pad(x: Array, padding_value: Array, *, padding_config: tuple[tuple[int, int, int], ...]) -> Array:
    # Operand element i of an axis lands at lo + i * (interior + 1); negative
    # lo/hi crop, so positions outside the result are dropped.
    shape = [lo + hi + n + max(n - 1, 0) * interior for n, (lo, hi, interior) in zip(x.shape, padding_config)]
    out = np.full(shape, padding_value, dtype=x.dtype)
    sources, targets = [], []
    for n, size, (lo, _, interior) in zip(x.shape, shape, padding_config):
        positions = lo + np.arange(n) * (interior + 1)
        keep = (positions >= 0) & (positions < size)
        sources.append(np.flatnonzero(keep))
        targets.append(positions[keep])
    out[np.ix_(*targets)] = x[np.ix_(*sources)]
    return out
