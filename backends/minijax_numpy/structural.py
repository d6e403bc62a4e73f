"""NumPy implementations: structural primitives (spec/primitives/structural.md).

reduce_sum is here, as in ``minijax/primitives/structural.py``; it accumulates
as the other arithmetic reductions do (``reductions.py``). The slicing
primitives are in ``slicing.py``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from minijax.config import x64_enabled
from minijax_numpy.reductions import arithmetic_reduction
from minijax_numpy.table import IMPLS, impl

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


@impl("concatenate")
def _concatenate(*xs: Array, dimension: int) -> Array:
    return np.concatenate(xs, axis=operator.index(dimension))  # a bool dimension (JAX keeps True) is an int


@impl("dim_as_value")
def _dim_as_value(*, dim: Any) -> Array:
    # jax.export's call binds every symbolic dimension before the program runs here
    return np.asarray(operator.index(dim), np.int64 if x64_enabled() else np.int32)


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


IMPLS["reduce_sum"] = arithmetic_reduction(np.add)
