"""The segment reductions of ``jax.ops``: a fill with the identity, then one scatter.

``mode`` defaults to ``FILL_OR_DROP`` (ids outside ``[0, num_segments)``
contribute nothing) and negative ids are not wrapped, as in JAX. With
``bucket_size`` the rows are first reduced into ``ceil(n / bucket_size)``
partial results (a 2-D scatter indexed by bucket and segment) which are then
reduced along the bucket axis: shorter chains of additions or products.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax import core, lax
from minijax.numpy import creation, reductions, ufuncs
from minijax.numpy.indexing import scatter_update
from minijax.numpy.util import check_arraylike
from minijax.primitives.indexing import GatherScatterMode
from minijax.sharding import auto_axes
from minijax.sharding_rules import out_sharding_param

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(op: Callable[..., Any], dtype: np.dtype[Any]) -> Any:
    """The value every segment starts from: the reduction's neutral element in ``dtype``."""
    if op is lax.scatter_add:
        return 0
    if op is lax.scatter_mul:
        return 1
    is_min = op is lax.scatter_min
    if dtype == np.bool_:
        return is_min
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return int(info.max if is_min else info.min)
    return float("inf") if is_min else -float("inf")


def _segment_update(name: str, data: Any, segment_ids: Any, scatter_op: Callable[..., Any],
                    num_segments: int | None, indices_are_sorted: bool, unique_indices: bool,
                    bucket_size: int | None, reducer: Callable[..., Any], mode: Any) -> Any:
    check_arraylike(name, data, segment_ids)
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else mode
    data = creation.asarray(data)
    segment_ids = creation.asarray(segment_ids)
    dtype = data.dtype
    if num_segments is None:
        # Needs concrete ids: under jit the output's size would depend on data.
        ids = core.concrete_or_error(
            segment_ids, f"{name}() `num_segments` argument: pass a static num_segments to use it under jit."
        )
        num_segments = int(np.max(np.asarray(ids))) + 1
    num_segments = int(core.concrete_or_error(num_segments, f"{name}() `num_segments` argument."))
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    identity = _identity(scatter_op, dtype)
    if bucket_size is None:
        out = creation.full((num_segments, *data.shape[1:]), identity, dtype=dtype)
        return scatter_update(out, segment_ids, data, scatter_op, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode, normalize_indices=False)
    num_buckets = -(-int(np.prod(segment_ids.shape)) // bucket_size)
    out = creation.full((num_buckets, num_segments, *data.shape[1:]), identity, dtype=dtype)
    bucket = ufuncs.floor_divide(creation.arange(segment_ids.shape[0]), bucket_size)
    out = scatter_update(out, (bucket, segment_ids[None, :]), data, scatter_op,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
                         normalize_indices=False)  # fmt: skip
    return reducer(out, axis=0).astype(dtype)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The sum of ``data``'s rows within each segment: ``out[s] = sum(data[segment_ids == s])``."""
    return _laid_out(out_sharding, "segment_sum", data, segment_ids, lambda d, i: _segment_update(
        "segment_sum", d, i, lax.scatter_add, num_segments, indices_are_sorted, unique_indices, bucket_size,
        reductions.sum, mode))


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                 unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None,
                 out_sharding: Any = None) -> Any:
    """The product of ``data``'s rows within each segment (1 for an empty segment)."""
    return _laid_out(out_sharding, "segment_prod", data, segment_ids, lambda d, i: _segment_update(
        "segment_prod", d, i, lax.scatter_mul, num_segments, indices_are_sorted, unique_indices, bucket_size,
        reductions.prod, mode))


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The maximum of ``data``'s rows within each segment (the dtype's lowest value for an empty one)."""
    return _laid_out(out_sharding, "segment_max", data, segment_ids, lambda d, i: _segment_update(
        "segment_max", d, i, lax.scatter_max, num_segments, indices_are_sorted, unique_indices, bucket_size,
        reductions.max, mode))


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The minimum of ``data``'s rows within each segment (the dtype's highest value for an empty one)."""
    return _laid_out(out_sharding, "segment_min", data, segment_ids, lambda d, i: _segment_update(
        "segment_min", d, i, lax.scatter_min, num_segments, indices_are_sorted, unique_indices, bucket_size,
        reductions.min, mode))


def _laid_out(out_sharding: Any, name: str, data: Any, segment_ids: Any, f: Any) -> Any:
    """``f(data, segment_ids)``; with ``out_sharding=``, computed with the mesh axes Auto and laid
    out so (jax.sharding.auto_axes), as JAX's segment reductions do."""
    if out_sharding is None:
        return f(data, segment_ids)
    out_sharding_param(out_sharding, name)  # (its TypeError for what is no sharding)
    return auto_axes(f, out_sharding=out_sharding)(data, segment_ids)

