"""Slicing primitives: slice, pad, dynamic_slice and dynamic_update_slice.

``slice`` takes a static window (start, limit, stride per axis) and ``pad``
puts an operand inside a frame of a padding value (negative padding crops):
each is the other's transpose. ``dynamic_slice`` and
``dynamic_update_slice`` read and write a window whose start indices are
operands, clamped so that the window stays in bounds; batched, each becomes
a gather / scatter (minijax/primitives/indexing.py). ``spec/primitives/slicing.md``
is the written specification; each check below cites its constraint label.

Weak types: the result keeps the operand's weak type; for pad and
dynamic_update_slice it is weak only when every array operand is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import ShapedArray, get_aval
from minijax.interpreters import ad, batching
from minijax.primitives import elementwise as ew, structural as sp
from minijax.primitives.common import int_tuple, standard_primitive
from minijax.primitives.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather_p,
    scatter_p,
)

Shape = tuple[int, ...]
BatchDim = batching.BatchDim


def _slice_rule(x: ShapedArray, *, start_indices: Any, limit_indices: Any, strides: Any) -> ShapedArray:
    starts = int_tuple("slice", "start_indices", start_indices)
    limits = int_tuple("slice", "limit_indices", limit_indices)
    steps = (1,) * x.ndim if strides is None else int_tuple("slice", "strides", strides)
    for what, values in (("start_indices", starts), ("limit_indices", limits), ("strides", steps)):
        if len(values) != x.ndim:  # slice C1
            raise TypeError(
                f"slice {what} must have length equal to the number of dimensions of the operand, "
                f"got {what} {values} for operand shape {x.shape}."
            )
    if any(s < 0 for s in starts):  # slice C2
        raise TypeError(f"slice start_indices must be greater than or equal to zero, got start_indices {starts}.")
    if any(lim > n for lim, n in zip(limits, x.shape)):  # slice C3
        raise TypeError(
            f"slice limit_indices must be less than or equal to operand shape, got limit_indices {limits} "
            f"for operand shape {x.shape}."
        )
    if any(s > lim for s, lim in zip(starts, limits)):  # slice C4
        raise TypeError(
            f"slice limit_indices must be greater than or equal to start_indices, got start_indices "
            f"{starts} and limit_indices {limits}."
        )
    if any(st <= 0 for st in steps):  # slice C5
        raise TypeError(f"slice strides must be positive, got {steps}.")
    shape = tuple((lim - s + st - 1) // st for s, lim, st in zip(starts, limits, steps))
    return ShapedArray(shape, x.dtype, x.weak_type)


slice_p = standard_primitive("slice", _slice_rule)


def _check_indices(prim: str, x: ShapedArray, indices: Sequence[ShapedArray]) -> None:
    """The start-index operands of dynamic_slice / dynamic_update_slice (their C1-C3)."""
    if len(indices) != x.ndim:  # C1
        raise ValueError(
            f"{prim}: length of slice indices must match number of operand dimensions "
            f"({len(indices)} vs {x.shape})"
        )
    if any(i.shape for i in indices):  # C2
        got = ", ".join(repr(i) for i in indices)
        raise TypeError(f"start_indices arguments to {prim} must be scalars, got indices ({got})")
    kinds = {i.dtype for i in indices}
    if len(kinds) > 1 or any(not dtypes.issubdtype(k, np.integer) for k in kinds):  # C3
        got = ", ".join(i.dtype.name for i in indices)
        raise TypeError(f"index arguments to {prim} must be integers of the same type, got: {got}")


def _dynamic_slice_rule(x: ShapedArray, *indices: ShapedArray, slice_sizes: Any) -> ShapedArray:
    _check_indices("dynamic_slice", x, indices)  # dynamic_slice C1, C2, C3
    sizes = int_tuple("dynamic_slice", "slice_sizes", slice_sizes)
    if len(sizes) != x.ndim:  # dynamic_slice C4
        raise TypeError(
            f"dynamic_slice slice_sizes must have the same length as the operand rank, got slice_sizes "
            f"{sizes} for operand shape {x.shape}."
        )
    if any(s < 0 for s in sizes):  # dynamic_slice C5
        raise TypeError(f"dynamic_slice slice_sizes must be greater than or equal to zero, got slice_sizes of {sizes}.")
    if any(s > n for s, n in zip(sizes, x.shape)):  # dynamic_slice C5
        raise TypeError(
            f"dynamic_slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
            f"{sizes} for operand shape {x.shape}."
        )
    return ShapedArray(sizes, x.dtype, x.weak_type)


dynamic_slice_p = standard_primitive("dynamic_slice", _dynamic_slice_rule)


def _dynamic_update_slice_rule(x: ShapedArray, update: ShapedArray, *indices: ShapedArray) -> ShapedArray:
    name = "dynamic_update_slice"
    _check_indices(name, x, indices)  # dynamic_update_slice C1, C2, C3
    if update.ndim != x.ndim:  # dynamic_update_slice C4
        raise TypeError(
            f"{name} update must have the same rank as operand, got update shape {update.shape} for "
            f"operand shape {x.shape}."
        )
    if any(u > n for u, n in zip(update.shape, x.shape)):  # dynamic_update_slice C5
        raise TypeError(
            f"{name} update shape must be smaller than operand shape, got update shape {update.shape} "
            f"for operand shape {x.shape}."
        )
    if update.dtype != x.dtype:  # dynamic_update_slice C6
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {x.dtype.name}, {update.dtype.name}."
        )
    weak = x.weak_type and update.weak_type and all(i.weak_type for i in indices)
    return ShapedArray(x.shape, x.dtype, weak)


dynamic_update_slice_p = standard_primitive("dynamic_update_slice", _dynamic_update_slice_rule)


def padding_triples(padding_config: Any) -> tuple[tuple[int, int, int], ...]:
    """``padding_config`` as a tuple of (low, high, interior) int triples, or ValueError."""
    triples = []
    for entry in padding_config:
        values = int_tuple("pad", "padding_config entries", entry)
        if len(values) != 3:
            raise ValueError(f"pad padding_config entries must be (low, high, interior) triples, got {tuple(entry)}")
        triples.append((values[0], values[1], values[2]))
    return tuple(triples)


def _pad_rule(x: ShapedArray, padding_value: ShapedArray, *, padding_config: Any) -> ShapedArray:
    config = padding_triples(padding_config)
    if padding_value.shape:  # pad C1
        raise ValueError(f"pad padding_value must be a scalar, got a value of shape {padding_value.shape}")
    if padding_value.dtype != x.dtype:  # pad C2
        raise TypeError(
            f"pad operand and padding_value must be same dtype: got {x.dtype.name} and {padding_value.dtype.name}."
        )
    if len(config) != x.ndim:  # pad C3
        raise ValueError(
            "length of padding_config must equal the number of axes of operand, got padding_config "
            f"{config} for operand shape {x.shape}"
        )
    if any(interior < 0 for _, _, interior in config):  # pad C4
        raise ValueError(f"interior padding in padding_config must be nonnegative, got padding_config {config}")
    shape = tuple(lo + hi + n + max(n - 1, 0) * interior for n, (lo, hi, interior) in zip(x.shape, config))
    if any(n < 0 for n in shape):  # pad C5
        raise ValueError(
            f"Dimension size after padding is not at least 0, got result shape {shape}, for padding_config "
            f"{config} and operand shape {x.shape}"
        )
    return ShapedArray(shape, x.dtype, x.weak_type and padding_value.weak_type)


pad_p = standard_primitive("pad", _pad_rule)


# ===========================================================================
# Bind helpers (``minijax.lax`` checks the user's arguments, then calls these)


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int], strides: Sequence[int] | None = None) -> Any:  # noqa: A001 (JAX's name)
    """``operand[start:limit:stride]`` along every axis; the params are kept as given, as JAX keeps them."""
    return slice_p.bind(
        operand,
        start_indices=tuple(start_indices),
        limit_indices=tuple(limit_indices),
        strides=None if strides is None else tuple(strides),
    )


def slice_in_dim(operand: Any, start: int, limit: int, stride: int = 1, axis: int = 0) -> Any:
    """``slice`` along one axis (nonnegative start and limit), written as JAX writes it (explicit strides)."""
    shape = get_aval(operand).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The slice at ``index`` (in range) along ``axis``, that axis kept (size 1) or dropped."""
    result = slice_in_dim(operand, index, index + 1, 1, axis)
    return result if keepdims else sp.squeeze(result, (axis,))


def pad(operand: Any, padding_value: Any, padding_config: Sequence[Sequence[int]]) -> Any:
    return pad_p.bind(operand, padding_value, padding_config=tuple(tuple(entry) for entry in padding_config))


# ===========================================================================
# Transformation rules: jvp, transpose and batching
#
# slice and pad are linear (pad in the operand and the padding value),
# dynamic_slice and dynamic_update_slice in the operand and the update (not
# in the start indices). The rules produce the same equations as JAX's; where
# JAX computes a param with NumPy arithmetic the param is a NumPy integer
# here too (the jaxpr text shows ``np.int64(1)``).


def _scalar(value: Any, dtype: np.dtype[Any]) -> Any:
    """A host scalar of ``dtype``: it becomes a literal in a jaxpr (``0.0:f32[]``)."""
    return np.array(value, dtype)


def _full(shape: Sequence[int], value: Any, dtype: np.dtype[Any]) -> Any:
    return sp.broadcast_in_dim(_scalar(value, dtype), shape, ())


def _aval_of(x: Any) -> ShapedArray:
    """The aval of an operand being transposed (UndefinedPrimal) or of a known value."""
    return x.aval if ad.is_undefined_primal(x) else get_aval(x)


# ---------------------------------------------------------------------------
# slice, dynamic_slice, dynamic_update_slice


def _slice_transpose(ct: Any, x: Any, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None) -> list[Any]:
    # The cotangent goes back where the slice read it, zeros elsewhere: a pad
    # whose low padding is the start, whose interior padding is stride - 1,
    # and whose high padding fills up to the operand's size.
    steps = (1,) * x.aval.ndim if strides is None else strides
    unit = all(s == 1 for s in steps)
    config = []
    for size, start, n, step in zip(x.aval.shape, start_indices, get_aval(ct).shape, steps):
        span = 0 if n == 0 else (n - 1) * step + 1  # from the first element read to the last
        interior = 0 if unit else np.int64(step - 1)
        config.append((start, np.int64(size - start - span), interior))
    return [pad_p.bind(ct, _scalar(0, get_aval(ct).dtype), padding_config=tuple(config))]


def _slice_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, start_indices: Shape, limit_indices: Shape, strides: Shape | None) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, batching.only_batch_dim(dims)
    # The batch axis is taken whole.
    starts, limits = list(start_indices), list(limit_indices)
    starts.insert(bdim, 0)
    limits.insert(bdim, get_aval(x).shape[bdim])
    steps = None if strides is None else (*strides[:bdim], 1, *strides[bdim:])
    return slice_p.bind(x, start_indices=tuple(starts), limit_indices=tuple(limits), strides=steps), bdim


def _dynamic_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, slice_sizes: Shape) -> tuple[Any, Any]:
    x, *indices = primals
    t = tangents[0]  # the indices' tangents are float0 zeros
    # The tangent first, then the primal: JAX's order of equations under jvp.
    t_out = None if type(t) is ad.Zero else dynamic_slice_p.bind(t, *indices, slice_sizes=slice_sizes)
    out = dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    return out, ad.Zero.from_primal(out) if t_out is None else t_out


def _dynamic_slice_transpose(ct: Any, x: Any, *indices: Any, slice_sizes: Shape) -> list[Any]:
    zeros = _full(x.aval.shape, 0, x.aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


def _dynamic_update_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, update, *indices = primals
    tx, tu = tangents[:2]
    out = dynamic_update_slice_p.bind(x, update, *indices)
    if type(tx) is ad.Zero and type(tu) is ad.Zero:
        return out, ad.Zero.from_primal(out)
    return out, dynamic_update_slice_p.bind(ad.instantiate_zeros(tx), ad.instantiate_zeros(tu), *indices)


def _dynamic_update_slice_transpose(ct: Any, x: Any, update: Any, *indices: Any) -> list[Any]:
    u_aval = _aval_of(update)
    # JAX makes the zeros even when only the update is being transposed.
    zeros = _full(u_aval.shape, 0, u_aval.dtype)
    ct_x = dynamic_update_slice_p.bind(ct, zeros, *indices) if ad.is_undefined_primal(x) else None
    ct_u = dynamic_slice_p.bind(ct, *indices, slice_sizes=u_aval.shape) if ad.is_undefined_primal(update) else None
    return [ct_x, ct_u] + [None] * len(indices)


# Batching dynamic_slice and dynamic_update_slice: as in JAX, each is a
# gather (a scatter) whose windows span every operand axis, started at the
# vector of start indices, and clamped to fit (mode CLIP) as these two
# primitives clamp. The rules build that index vector (one per batch element
# when some start is batched) and hand over to the gather / scatter batching
# rule, which pairs the batch axes up. One gather or scatter whatever the
# batch, and every start index may differ per element.


def _start_vector(indices: Sequence[Any], index_dims: Sequence[BatchDim], size: int) -> tuple[Any, BatchDim]:
    """The scalar start indices as one index array: ``int[ndim]`` when none is batched, else
    ``int[size, ndim]`` (batch axis first, the unbatched starts broadcast along it)."""
    if not indices:
        return np.zeros((0,), np.int32), None  # a rank-0 operand: an empty index vector
    if all(d is None for d in index_dims):
        return sp.concatenate([sp.broadcast(i, (1,)) for i in indices], 0), None
    # A batched scalar has one axis, its batch axis: it becomes column 0's rows.
    columns = [sp.broadcast_in_dim(i, (size, 1), () if d is None else (0,)) for i, d in zip(indices, index_dims)]
    return sp.concatenate(columns, 1), 0


def _dynamic_slice_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, slice_sizes: Shape) -> tuple[Any, BatchDim]:
    x, *indices = vals
    x_dim, *index_dims = dims
    axes = tuple(range(len(indices)))
    dnums = GatherDimensionNumbers(offset_dims=axes, collapsed_slice_dims=(), start_index_map=axes)
    index, index_dim = _start_vector(indices, index_dims, batching.batch_size(vals, dims))
    gather_batcher = batching.primitive_batchers[gather_p]
    return gather_batcher([x, index], [x_dim, index_dim], dimension_numbers=dnums, slice_sizes=slice_sizes,
                          unique_indices=True, indices_are_sorted=True, mode=GatherScatterMode.CLIP, fill_value=None)


def _dynamic_update_slice_batcher(vals: Sequence[Any], dims: Sequence[BatchDim]) -> tuple[Any, BatchDim]:
    x, update, *indices = vals
    x_dim, u_dim, *index_dims = dims
    axes = tuple(range(len(indices)))
    dnums = ScatterDimensionNumbers(update_window_dims=axes, inserted_window_dims=(), scatter_dims_to_operand_dims=axes)
    index, index_dim = _start_vector(indices, index_dims, batching.batch_size(vals, dims))
    scatter_batcher = batching.primitive_batchers[scatter_p]
    return scatter_batcher([x, index, update], [x_dim, index_dim, u_dim], update_jaxpr=None, update_consts=(),
                           dimension_numbers=dnums, indices_are_sorted=True, unique_indices=True,
                           mode=GatherScatterMode.CLIP)


# ---------------------------------------------------------------------------
# pad


def _pad_transpose(ct: Any, x: Any, padding_value: Any, *, padding_config: Any) -> list[Any]:
    lows, highs, interiors = ([entry[k] for entry in padding_config] for k in range(3))
    # Negative low/high padding crops the edges off; a slice with stride
    # interior + 1 then drops the interior padding.
    uncrop = tuple(zip(np.negative(lows), np.negative(highs), np.zeros_like(interiors)))
    cropped = pad_p.bind(ct, _scalar(0, get_aval(ct).dtype), padding_config=uncrop)
    ct_x = slice_p.bind(
        cropped,
        start_indices=tuple(np.zeros_like(lows)),
        limit_indices=get_aval(cropped).shape,
        strides=tuple(np.add(interiors, 1)),
    )
    ct_pad = None
    if ad.is_undefined_primal(padding_value):
        # Every padded position holds the padding value: its cotangent is the rest of the sum.
        everything = range(get_aval(ct).ndim)
        ct_pad = ew.sub_p.bind(sp.reduce_sum(ct, everything), sp.reduce_sum(ct_x, everything))
    return [ct_x if ad.is_undefined_primal(x) else None, ct_pad]


def _pad_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, padding_config: Any) -> tuple[Any, BatchDim]:
    (x, padding_value), (x_dim, value_dim) = vals, dims
    if x_dim is None:
        x, x_dim = batching.bdim_at_front(x, None, batching.batch_size(vals, dims)), 0
    config = list(padding_config)
    config.insert(x_dim, (0, 0, 0))
    if value_dim is None:
        return pad_p.bind(x, padding_value, padding_config=tuple(config)), x_dim
    # One padding value per batch element: pad with zeros and with a mask of
    # where the operand went, then select the batch's padding values elsewhere.
    dtype = get_aval(x).dtype
    padded = pad_p.bind(x, _scalar(0, dtype), padding_config=tuple(config))
    where_x = pad_p.bind(_full(get_aval(x).shape, True, np.dtype(np.bool_)), _scalar(False, np.dtype(np.bool_)), padding_config=tuple(config))
    values = sp.broadcast_in_dim(padding_value, get_aval(padded).shape, (x_dim,))
    return ew.select_n_p.bind(where_x, values, padded), x_dim


# ---------------------------------------------------------------------------
# The tables

ad.deflinear(slice_p, _slice_transpose)
ad.deflinear(pad_p, _pad_transpose)
ad.primitive_jvps[dynamic_slice_p] = _dynamic_slice_jvp
ad.transpose_rules[dynamic_slice_p] = ad.linear_transpose(_dynamic_slice_transpose)
ad.primitive_jvps[dynamic_update_slice_p] = _dynamic_update_slice_jvp
ad.transpose_rules[dynamic_update_slice_p] = ad.linear_transpose(_dynamic_update_slice_transpose)

batching.primitive_batchers.update({
    slice_p: _slice_batcher,
    pad_p: _pad_batcher,
    dynamic_slice_p: _dynamic_slice_batcher,
    dynamic_update_slice_p: _dynamic_update_slice_batcher,
})
