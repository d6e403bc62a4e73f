"""NumPy implementations: structural primitives (spec/primitives/structural.md)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from minijax_numpy.table import impl

Array = np.ndarray[Any, Any]


@impl("broadcast_in_dim")
def _broadcast_in_dim(x: Array, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...], sharding: Any) -> Array:
    # Operand dimensions may map to output dimensions in any order: put them
    # in output order first, then insert the new size-1 axes and broadcast.
    order = sorted(range(x.ndim), key=lambda i: broadcast_dimensions[i])
    expanded = [1] * len(shape)
    for i in order:
        expanded[broadcast_dimensions[i]] = x.shape[i]
    return np.broadcast_to(x.transpose(order).reshape(expanded), shape)


@impl("reshape")
def _reshape(x: Array, *, new_sizes: tuple[int, ...], dimensions: tuple[int, ...] | None, sharding: Any) -> Array:
    if dimensions is not None:
        x = x.transpose(dimensions)
    return x.reshape(new_sizes)


@impl("transpose")
def _transpose(x: Array, *, permutation: tuple[int, ...]) -> Array:
    return x.transpose(permutation)


@impl("squeeze")
def _squeeze(x: Array, *, dimensions: tuple[int, ...]) -> Array:
    return x.squeeze(tuple(dimensions))


@impl("rev")
def _rev(x: Array, *, dimensions: tuple[int, ...]) -> Array:
    return np.flip(x, tuple(dimensions)) if dimensions else x


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


@impl("concatenate")
def _concatenate(*xs: Array, dimension: int) -> Array:
    return np.concatenate(xs, axis=operator.index(dimension))  # a bool dimension (JAX keeps True) is an int


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


@impl("iota")
def _iota(*, dtype: Any, shape: tuple[int, ...], dimension: int, sharding: Any) -> Array:
    # Counting in int64 then converting rounds (floats) or wraps (small ints) as XLA does.
    counts = np.arange(shape[dimension], dtype=np.int64).astype(dtype)
    along = [1] * len(shape)
    along[dimension] = shape[dimension]
    return np.broadcast_to(counts.reshape(along), shape)


@impl("split")
def _split(x: Array, *, sizes: tuple[int, ...], axis: int) -> list[Array]:
    return np.split(x, np.cumsum(sizes[:-1], dtype=np.int64), axis=axis)


@impl("tile")
def _tile(x: Array, *, reps: tuple[int, ...]) -> Array:
    return np.tile(x, reps) if reps else x


@impl("stack")
def _stack(*xs: Array, axis: int) -> Array:
    return np.stack(xs, axis=axis)
