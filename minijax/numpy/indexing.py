"""NumPy indexing on minijax arrays: ``x[idx]``, ``x.at[idx]``, ``jnp.take``, ``jnp.take_along_axis``, ``jnp.put``.

``x[idx]`` follows JAX's strategy, so jaxprs match JAX's equation for equation:

1. **static slice** -- every entry an in-bounds static integer, a slice,
   None or Ellipsis: one ``slice`` (none when it keeps everything), then
   ``rev`` for negative steps, ``squeeze`` for the integers and
   ``expand_dims`` for None;
2. **dynamic slice** -- integers that are traced or out of bounds (which JAX
   clamps rather than rejects), 0-d integer arrays, slices of step +-1: one
   ``dynamic_slice`` (its starts wrapped when negative), then the same
   reshaping;
3. **gather** -- anything else: integer arrays (NumPy's advanced indexing,
   broadcast together; their result axes go where the arrays are when they
   are adjacent, first otherwise), concrete boolean masks (turned into the
   integer arrays of their True positions), scalar booleans, strided slices
   next to arrays. Negative indices are wrapped; out-of-bounds ones clamp
   (``mode=None`` is PROMISE_IN_BOUNDS, which clamps gathers).

``x.at[idx].set/add/...`` always scatters (the default mode drops
out-of-bounds updates); ``.get`` indexes like ``x[idx]`` with the options
``mode`` and ``fill_value``.
"""

from __future__ import annotations

import enum
import operator
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.array import Array, device_put_value
from minijax.errors import NonConcreteBooleanIndexError
from minijax.mesh import NamedSharding, PartitionSpec
from minijax.numpy import util
from minijax.numpy.creation import array, asarray
from minijax.numpy.reductions import sum as jnp_sum
from minijax.numpy.shape_ops import broadcast_shapes, broadcast_to, clip, expand_dims, moveaxis, ravel, reshape, tile
from minijax.numpy.ufuncs import divide, mod, power
from minijax.primitives.indexing import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers
from minijax.shape_poly import DimExpr
from minijax.sharding import auto_axes
from minijax.sharding_rules import explicit_type, out_sharding_param
from minijax.stages import jit

__all__ = ["put", "put_along_axis", "take", "take_along_axis"]

Mode = str | GatherScatterMode | None


# ---------------------------------------------------------------------------
# Parsing: each entry of the index gets a type and the input axes it consumes


class IndexType(enum.Enum):
    NONE = "none"
    SLICE = "slice"
    ELLIPSIS = "ellipsis"
    INTEGER = "integer"  # a static Python or NumPy integer
    BOOLEAN = "boolean"  # a boolean scalar or mask
    ARRAY = "array"  # an integer array (0-d included) or tracer


@dataclass(frozen=True)
class Parsed:
    index: Any
    typ: IndexType
    axes: tuple[int, ...]  # the input axes it consumes


def _is_integer(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _dtype_of_sequence(seq: Sequence[Any]) -> np.dtype[Any]:
    """The dtype ``jnp.asarray(seq)`` would have, without staging anything."""
    leaves = list(seq)
    while any(isinstance(e, (list, tuple)) for e in leaves):
        leaves = [x for e in leaves for x in (e if isinstance(e, (list, tuple)) else [e])]
    dtype: np.dtype[Any]
    if all(isinstance(e, (bool, int, float, complex, np.generic, np.ndarray)) for e in leaves):
        dtype = dtypes.canonicalize_dtype(np.asarray(seq).dtype)
    else:
        dtype = np.dtype(dtypes.result_type(*leaves))
    return dtype


def _index_type(idx: Any) -> IndexType:
    """JAX's classification of one index entry; TypeError/IndexError for what it refuses."""
    if idx is None:
        return IndexType.NONE
    if idx is Ellipsis:
        return IndexType.ELLIPSIS
    if isinstance(idx, slice):
        return IndexType.SLICE
    if _is_integer(idx):
        return IndexType.INTEGER
    if isinstance(idx, (bool, np.bool_)):
        return IndexType.BOOLEAN
    if isinstance(idx, (Array, core.Tracer, np.ndarray)):
        dtype = idx.dtype if isinstance(idx, np.ndarray) else core.get_aval(idx).dtype
        if dtype == np.bool_:
            return IndexType.BOOLEAN
        if dtypes.issubdtype(dtype, np.integer):
            return IndexType.ARRAY
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype}")
    if isinstance(idx, str):
        raise TypeError(f"JAX does not support string indexing; got idx={idx!r}")
    if isinstance(idx, Sequence):
        if not idx:  # an empty list is an (integer) index array
            return IndexType.ARRAY
        dtype = _dtype_of_sequence(idx)
        if dtype == np.bool_:
            return IndexType.BOOLEAN
        if dtypes.issubdtype(dtype, np.integer):
            return IndexType.ARRAY
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype}")
    if isinstance(idx, (float, complex, np.generic)):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {np.dtype(type(idx))}")
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and integer or boolean arrays "
        f"are valid indices. Got {idx}"
    )


def _as_tuple(idx: Any) -> tuple[Any, ...]:
    """The index as a tuple; a list (or other non-tuple sequence) as the whole index is refused, as in JAX."""
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, Sequence) and not isinstance(idx, str):
        unpack = any(
            (isinstance(i, (np.ndarray, Array, core.Tracer)) and np.ndim(i) != 0)
            or isinstance(i, (Sequence, slice)) or i is Ellipsis or i is None
            for i in idx
        )  # fmt: skip
        fix = "arr[tuple(seq)]" if unpack else "arr[array(seq)]"
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            f"`{fix}` instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 for more information."
        )
    return (idx,)


def parse(idx: Any, shape: Sequence[int]) -> list[Parsed]:
    """Each entry of ``idx`` with its type and the axes of ``shape`` it consumes."""
    entries = _as_tuple(idx)
    types = [_index_type(e) for e in entries]
    consumed = []
    for e, t in zip(entries, types):
        if t is IndexType.BOOLEAN:
            consumed.append(int(np.ndim(e)))
        else:
            consumed.append(1 if t in (IndexType.INTEGER, IndexType.ARRAY, IndexType.SLICE) else 0)
    ellipses = [i for i, t in enumerate(types) if t is IndexType.ELLIPSIS]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    total = sum(consumed)
    if total > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {total} were indexed")
    if ellipses:
        consumed[ellipses[0]] = len(shape) - total
    parsed, axis = [], 0
    for e, t, n in zip(entries, types, consumed):
        parsed.append(Parsed(e, t, tuple(range(axis, axis + n))))
        axis += n
    return parsed


def _expand_ellipses(indices: list[Parsed], shape: Sequence[int]) -> list[Parsed]:
    """The Ellipsis and the implicit trailing axes as explicit full slices."""
    out: list[Parsed] = []
    consumed = 0
    for p in indices:
        consumed += len(p.axes)
        if p.typ is IndexType.ELLIPSIS:
            out.extend(Parsed(slice(None), IndexType.SLICE, (a,)) for a in p.axes)
        else:
            out.append(p)
    out.extend(Parsed(slice(None), IndexType.SLICE, (a,)) for a in range(consumed, len(shape)))
    return out


def _concrete(x: Any) -> Any:
    """The value of ``x`` when it is known now (None for a tracer of unknown value)."""
    if isinstance(x, core.Tracer):
        return x.to_concrete_value()
    return x


def _check_slices(indices: list[Parsed]) -> None:
    for position, p in enumerate(indices):
        if p.typ is IndexType.SLICE:
            s = p.index
            if any(v is not None and isinstance(v, core.Tracer) and _concrete(v) is None for v in (s.start, s.stop, s.step)):
                raise IndexError(f"Slice entries must be static integers. Got {s} at position {position}")


def _slice_indices(s: slice, size: int) -> tuple[int, int, int]:
    """``s.indices(size)`` with concrete tracers read; TypeError for floats, ValueError for step 0."""
    bounds = [None if v is None else operator.index(core.concrete_or_error(v)) for v in (s.start, s.stop, s.step)]
    if isinstance(size, DimExpr) and bounds[0] in (None, 0) and bounds[1] is None and bounds[2] in (None, 1):
        return 0, size, 1  # the whole of a symbolic dimension (jax.export); other slices of one need its value
    return slice(*bounds).indices(size)


def _in_bounds_or_raise(indices: list[Parsed], shape: Sequence[int], normalize: bool) -> None:
    for p in indices:
        if p.typ is IndexType.INTEGER:
            i = operator.index(p.index)
            (axis,) = p.axes
            size = shape[axis]
            normed = i + size if normalize and i < 0 else i
            if not 0 <= normed < size:
                raise IndexError(
                    f"index {i} out of bounds for axis {axis} with size {size} (normalize_indices={normalize})"
                )


def _mode_of(mode: Mode) -> GatherScatterMode:
    return GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)


def _index_dtype(shape: Sequence[int]) -> np.dtype[Any]:
    """int32 unless an axis is too long for it (JAX's int_dtype_for_shape)."""
    return np.dtype(np.int64) if any(d > np.iinfo(np.int32).max for d in shape) else np.dtype(np.int32)


# ---------------------------------------------------------------------------
# Strategy 1: a static slice


@dataclass
class _StaticSlice:
    starts: list[int] = field(default_factory=list)
    limits: list[int] = field(default_factory=list)
    strides: list[int] = field(default_factory=list)
    rev_axes: list[int] = field(default_factory=list)
    squeeze_axes: list[int] = field(default_factory=list)
    newaxis_dims: list[int] = field(default_factory=list)


def _to_static_slice(indices: list[Parsed], shape: Sequence[int], mode: Mode, normalize: bool) -> _StaticSlice:
    parsed_mode = _mode_of(mode)
    if parsed_mode not in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
        raise ValueError("static_slice requires mode='promise_in_bounds' or mode='clip'")
    if parsed_mode is GatherScatterMode.PROMISE_IN_BOUNDS:
        _in_bounds_or_raise(indices, shape, normalize)
    _check_slices(indices)
    for position, p in enumerate(indices):
        if p.typ in (IndexType.ARRAY, IndexType.BOOLEAN):
            raise TypeError(f"static_slice: indices must be static scalars or slices. Got index of type "
                            f"{type(p.index)} at position {position}")  # fmt: skip
    plan = _StaticSlice()
    for p in _expand_ellipses(indices, shape):
        if p.typ is IndexType.NONE:
            plan.newaxis_dims.append(len(plan.starts) - len(plan.squeeze_axes) + len(plan.newaxis_dims))
        elif p.typ is IndexType.INTEGER:
            (axis,) = p.axes
            if shape[axis] == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            start = int(p.index)
            if normalize and start < 0:
                start += shape[axis]
            start = min(max(start, 0), shape[axis] - 1)  # CLIP; in bounds already otherwise
            plan.starts.append(start)
            plan.limits.append(start + 1)
            plan.strides.append(1)
            plan.squeeze_axes.append(axis)
        else:  # a slice
            (axis,) = p.axes
            size = shape[axis]
            start, stop, step = _slice_indices(p.index, size)
            if step < 0:
                # The same elements read upwards from the lowest, reversed afterwards.
                first = min(size, stop + 1 + abs(start - stop - 1) % -step)
                plan.starts.append(first)
                plan.limits.append(max(first, start + 1))
                plan.strides.append(-step)
                plan.rev_axes.append(axis)
            else:
                plan.starts.append(start)
                plan.limits.append(max(start, stop))
                plan.strides.append(step)
    return plan


def _static_slice(x: Any, plan: _StaticSlice, shape: Sequence[int]) -> Any:
    unit = all(s == 1 for s in plan.strides)
    trivial = unit and all((s, lim) == (0, n) for s, lim, n in zip(plan.starts, plan.limits, shape))
    out = x if trivial else lax.slice(x, plan.starts, plan.limits, None if unit else plan.strides)
    if plan.rev_axes:
        out = lax.rev(out, plan.rev_axes)
    if plan.squeeze_axes:
        out = lax.squeeze(out, plan.squeeze_axes)
    if plan.newaxis_dims:
        out = lax.expand_dims(out, plan.newaxis_dims)
    return out


# ---------------------------------------------------------------------------
# Strategy 2: a dynamic slice


@dataclass
class _DynamicSlice:
    starts: list[Any] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    rev_axes: list[int] = field(default_factory=list)
    squeeze_axes: list[int] = field(default_factory=list)
    newaxis_dims: list[int] = field(default_factory=list)
    trivial: bool = True


def _to_dynamic_slice(indices: list[Parsed], shape: Sequence[int], mode: Mode) -> _DynamicSlice:
    if mode is not None and GatherScatterMode.from_any(mode) not in (
        GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP,
    ):  # fmt: skip
        raise ValueError("dynamic_slice requires mode='promise_in_bounds' or mode='clip'")
    for position, p in enumerate(indices):
        if p.typ is IndexType.SLICE and p.index.step is not None and _concrete(p.index.step) not in (-1, 1):
            raise TypeError(f"dynamic_slice: only unit steps supported in slice. Got {p.index} at position {position}")
        if p.typ is IndexType.ARRAY and (isinstance(p.index, Sequence) or np.ndim(p.index) != 0):
            raise TypeError(f"dynamic_slice: only scalar indices allowed. Got index of type {type(p.index)} "
                            f"at position {position}")  # fmt: skip
        if p.typ is IndexType.BOOLEAN:
            raise TypeError(f"dynamic_slice: indices must be scalars or slices. Got index of type {type(p.index)} "
                            f"at position {position}")  # fmt: skip
    plan = _DynamicSlice()
    for p in _expand_ellipses(indices, shape):
        if p.typ is IndexType.NONE:
            plan.newaxis_dims.append(len(plan.starts) - len(plan.squeeze_axes) + len(plan.newaxis_dims))
        elif p.typ in (IndexType.INTEGER, IndexType.ARRAY):
            plan.trivial = False
            (axis,) = p.axes
            if shape[axis] == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            plan.starts.append(p.index)
            plan.sizes.append(1)
            plan.squeeze_axes.append(axis)
        else:
            if p.index != slice(None):
                plan.trivial = False
            (axis,) = p.axes
            start, stop, step = _slice_indices(p.index, shape[axis])
            if step < 0:
                first = stop + 1 + abs(start - stop - 1) % -step
                plan.starts.append(first)
                plan.sizes.append(max(0, start + 1 - first))
                plan.rev_axes.append(axis)
            else:
                plan.starts.append(start)
                plan.sizes.append(max(0, stop - start))
    return plan


def _dynamic_starts(starts: list[Any], shape: Sequence[int]) -> list[Any]:
    """dynamic_slice's start indices, all as arrays (of one dtype when there are several).

    Like JAX (``jnp.asarray`` of each), static starts become array constants
    too, so that lax.dynamic_slice stages its wrap-around of negative starts
    for every axis the same way.
    """
    if len(starts) == 1:
        (s,) = starts
        return [s if isinstance(s, (Array, core.Tracer)) else device_put_value(s)]
    dtype = _index_dtype(shape)
    return [
        util.convert_element_type(s, dtype) if isinstance(s, (Array, core.Tracer))
        else device_put_value(np.asarray(s).astype(dtype))
        for s in starts
    ]  # fmt: skip


def _dynamic_slice(x: Any, plan: _DynamicSlice, shape: Sequence[int], normalize: bool) -> Any:
    out = x
    if not plan.trivial:
        out = lax.dynamic_slice(out, _dynamic_starts(plan.starts, shape), plan.sizes, allow_negative_indices=normalize)
    if plan.rev_axes:
        out = lax.rev(out, plan.rev_axes)
    if plan.squeeze_axes:
        out = lax.squeeze(out, plan.squeeze_axes)
    if plan.newaxis_dims:
        out = lax.expand_dims(out, plan.newaxis_dims)
    return out


# ---------------------------------------------------------------------------
# Strategy 3: a gather (what x.at[...] scatters use too)


def _expand_bool_indices(indices: list[Parsed], shape: Sequence[int]) -> list[Parsed]:
    """Boolean masks as the integer index arrays of their True positions (they must be concrete);
    scalar booleans are kept."""
    out: list[Parsed] = []
    for position, p in enumerate(indices):
        if p.typ is not IndexType.BOOLEAN:
            out.append(p)
            continue
        value = _concrete(p.index)
        if value is None:
            raise NonConcreteBooleanIndexError(core.get_aval(p.index).str_short(short_dtypes=True))
        mask = np.asarray(value)
        if mask.ndim == 0:
            out.append(Parsed(bool(mask), IndexType.BOOLEAN, ()))
            continue
        expected = [shape[a] for a in p.axes]
        if not all(s in (0, e) for s, e in zip(mask.shape, expected)):
            raise IndexError(f"boolean index did not match shape of indexed array in index {position}: "
                             f"got {mask.shape}, expected {expected}")  # fmt: skip
        out.extend(Parsed(i, IndexType.ARRAY, (a,)) for i, a in zip(np.where(mask), p.axes))
    return out


@dataclass
class _Gather:
    """How to compute ``x[idx]`` with one gather (and what a scatter needs to invert it)."""

    slice_shape: list[int]  # the shape of x[idx]
    gather_slice_shape: list[int]
    indices: Any  # the gather's start indices (index vector last)
    dnums: GatherDimensionNumbers
    unique_indices: bool
    indices_are_sorted: bool
    reversed_y_dims: list[int]
    newaxis_dims: list[int]
    scalar_bool_dims: list[int]
    slice_axes: list[int | None]  # per dimension of x[idx]: the axis of x it is a slice of (None: an index's)


def _normalize(p: Parsed, size: int) -> Parsed:
    """Negative indices counted from the end: Python arithmetic for static ints, a select for arrays."""
    if p.typ is IndexType.INTEGER:
        if isinstance(p.index, np.unsignedinteger) or p.index >= 0:
            return p
        return replace(p, index=p.index + size)
    index = p.index
    dtype = core.get_aval(index).dtype
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        return p
    size_const = np.array(size, dtype)
    # ``index < 0``: on the host for a NumPy array, a jnp comparison otherwise (as in JAX).
    normed = lax.select(index < 0, lax.add(index, size_const), index)
    return replace(p, index=normed)


def _to_gather(indices: list[Parsed], shape: Sequence[int], normalize: bool) -> _Gather:
    _check_slices(indices)
    indices = [replace(p, index=asarray(p.index)) if isinstance(p.index, Sequence) and p.typ is not IndexType.SLICE
               else p for p in indices]  # fmt: skip
    is_advanced = [i for i, p in enumerate(indices) if p.typ in (IndexType.ARRAY, IndexType.INTEGER)]
    contiguous = all(b - a == 1 for a, b in zip(is_advanced, is_advanced[1:]))
    indices = _expand_ellipses(indices, shape)

    # Scalar booleans: a new axis of length 1 indexed by arange(1) or arange(0).
    scalar_bool_dims = [n for n, p in enumerate(indices) if p.typ is IndexType.BOOLEAN]
    shape = list(shape)
    expanded: list[Parsed] = []
    current = 0
    for i, p in enumerate(indices):
        if p.typ is IndexType.BOOLEAN:
            shape.insert(i, 1)
            expanded.append(Parsed(np.arange(int(p.index)), IndexType.ARRAY, (current,)))
            current += 1
        else:
            expanded.append(Parsed(p.index, p.typ, tuple(range(current, current + len(p.axes)))))
            current += len(p.axes)
    indices = expanded
    if normalize:
        indices = [_normalize(p, shape[p.axes[0]]) if p.typ in (IndexType.INTEGER, IndexType.ARRAY) else p
                   for p in indices]  # fmt: skip

    # NumPy's advanced indexing: integer arrays (and integers, when there is
    # an array) broadcast together, their axes placed where they are when
    # adjacent, else first.
    advanced: list[Any] = []
    idx_advanced_axes: list[int] = []
    x_advanced_axes: list[int] = []
    if any(p.typ is IndexType.ARRAY and np.ndim(p.index) > 0 for p in indices):
        without_none = [(i, p) for i, p in enumerate(indices) if p.typ is not IndexType.NONE]
        for j, (i, p) in enumerate(without_none):
            if p.typ in (IndexType.ARRAY, IndexType.INTEGER):
                advanced.append(asarray(p.index))
                idx_advanced_axes.append(i)
                x_advanced_axes.append(j)

    index_dtype = _index_dtype(shape)
    x_axis = y_axis = collapsed_y_axis = 0
    offset_dims: list[int] = []
    collapsed: list[int] = []
    start_index_map: list[int] = []
    gather_indices: list[tuple[Any, int]] = []  # (array, its first axis in the indices' batch shape)
    gather_indices_shape: list[int] = []
    slice_shape: list[int] = []
    slice_axes: list[int | None] = []
    newaxis_dims: list[int] = []
    reversed_y_dims: list[int] = []
    gather_slice_shape: list[int] = []

    for position, p in enumerate(indices):
        if advanced and position == (idx_advanced_axes[0] if contiguous else 0):
            arrays = _broadcast_index_arrays(advanced)
            bshape = list(core.get_aval(arrays[0]).shape)
            start_dim = len(gather_indices_shape)
            gather_indices.extend((util.convert_element_type(a, index_dtype), start_dim) for a in arrays)
            gather_indices_shape += bshape
            start_index_map.extend(x_advanced_axes)
            collapsed.extend(x_advanced_axes)
            slice_shape.extend(bshape)
            slice_axes.extend([None] * len(bshape))
            y_axis += len(bshape)
            collapsed_y_axis += len(bshape)
        if position in idx_advanced_axes:
            x_axis += 1
            gather_slice_shape.append(1)
            continue
        if p.typ in (IndexType.INTEGER, IndexType.ARRAY) and np.ndim(p.index) == 0:
            if shape[x_axis] == 0:
                raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
            gather_indices.append((util.convert_element_type(p.index, index_dtype), len(gather_indices_shape)))
            collapsed.append(x_axis)
            gather_slice_shape.append(1)
            start_index_map.append(x_axis)
            x_axis += 1
        elif p.typ is IndexType.NONE:
            slice_shape.append(1)
            slice_axes.append(None)
            newaxis_dims.append(y_axis)
            y_axis += 1
        elif p.typ is IndexType.SLICE:
            first, stop, step = _slice_indices(p.index, shape[x_axis])
            size = len(range(first, stop, step))
            slice_shape.append(size)
            slice_axes.append(x_axis)
            if step == 1:
                if size != shape[x_axis]:  # a trivial slice needs no index
                    gather_indices.append((util.convert_element_type(first, index_dtype), len(gather_indices_shape)))
                    start_index_map.append(x_axis)
                gather_slice_shape.append(size)
                offset_dims.append(collapsed_y_axis)
            else:
                positions = array(first, dtype=index_dtype) + array(step, dtype=index_dtype) * lax.iota(index_dtype, size)
                if step < 0:
                    reversed_y_dims.append(collapsed_y_axis)
                    positions = lax.rev(positions, dimensions=(0,))
                gather_slice_shape.append(1)
                gather_indices.append((positions, len(gather_indices_shape)))
                start_index_map.append(x_axis)
                gather_indices_shape.append(size)
                collapsed.append(x_axis)
            collapsed_y_axis += 1
            y_axis += 1
            x_axis += 1
        else:
            raise IndexError(f"Got unsupported indexer at position {position}: {p!r}")

    if not gather_indices:
        gather_array: Any = np.zeros((0,), index_dtype)
    elif len(gather_indices) == 1:
        g, _ = gather_indices[0]
        gather_array = lax.expand_dims(g, (np.ndim(g),))
    else:
        last = len(gather_indices_shape)
        full = (*gather_indices_shape, 1)
        gather_array = lax.concatenate(
            [lax.broadcast_in_dim(g, full, tuple(range(i, i + np.ndim(g)))) for g, i in gather_indices], last
        )
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(sorted(collapsed)),
        start_index_map=tuple(start_index_map),
    )  # fmt: skip
    return _Gather(slice_shape, gather_slice_shape, gather_array, dnums, not advanced, not advanced, reversed_y_dims,
                   newaxis_dims, scalar_bool_dims, slice_axes)


def _broadcast_index_arrays(arrays: list[Any]) -> list[Any]:
    """The advanced index arrays broadcast to one shape (as arrays, even the scalars)."""
    shapes = [np.shape(a) for a in arrays]
    if all(s == shapes[0] for s in shapes):
        return [a if isinstance(a, (Array, core.Tracer)) else device_put_value(a) for a in arrays]
    target = broadcast_shapes(*shapes)
    return [broadcast_to(a, target) for a in arrays]


def _check_fill_value(fill_value: Any) -> Any:
    if fill_value is None:
        return None
    value = core.concrete_or_error(fill_value, "fill_value argument to indexed get()")
    if np.ndim(value) != 0:
        raise ValueError("fill_value argument to indexed get() must be a scalar")
    return value.item() if isinstance(value, np.ndarray) else value


def _gather(x: Any, indices: list[Parsed], *, indices_are_sorted: bool, unique_indices: bool, mode: Mode,
            fill_value: Any, normalize: bool) -> Any:
    plan = _to_gather(indices, core.get_aval(x).shape, normalize)
    fill_value = _check_fill_value(fill_value)
    y = x
    if plan.scalar_bool_dims:
        y = lax.expand_dims(y, plan.scalar_bool_dims)
    if 0 in plan.slice_shape:
        return lax.full_like(y, 0, shape=plan.slice_shape)
    if 0 not in np.shape(plan.indices):
        y = lax.gather(y, plan.indices, plan.dnums, plan.gather_slice_shape,
                       unique_indices=unique_indices or plan.unique_indices,
                       indices_are_sorted=indices_are_sorted or plan.indices_are_sorted,
                       mode=mode, fill_value=fill_value)  # fmt: skip
    if plan.reversed_y_dims:
        y = lax.rev(y, plan.reversed_y_dims)
    return lax.expand_dims(y, plan.newaxis_dims)


def rewriting_take(x: Any, idx: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                   mode: Mode = None, fill_value: Any = None, normalize_indices: bool = True) -> Any:
    """``x[idx]`` by the first strategy that applies: static slice, dynamic slice, gather."""
    shape = core.get_aval(x).shape
    indices = parse(idx, shape)
    try:
        plan = _to_static_slice(indices, shape, mode, normalize_indices)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        return _static_slice(x, plan, shape)
    try:
        dynamic = _to_dynamic_slice(indices, shape, mode)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        return _dynamic_slice(x, dynamic, shape, normalize_indices)
    indices = _expand_bool_indices(indices, shape)
    return _gather(x, indices, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
                   fill_value=fill_value, normalize=normalize_indices)


def getitem(x: Any, idx: Any) -> Any:
    """``x[idx]`` (what ``Array.__getitem__`` and tracers call)."""
    return rewriting_take(x, idx)


# ---------------------------------------------------------------------------
# x.at[idx]: functional updates by scatter


_SCATTER_OPS: dict[str, Callable[..., Any]] = {
    "set": lax.scatter, "add": lax.scatter_add, "subtract": lax.scatter_sub, "multiply": lax.scatter_mul,
    "min": lax.scatter_min, "max": lax.scatter_max,
}  # fmt: skip


def _update_value(x: Any, y: Any) -> Any:
    """The update as JAX's ``jnp.asarray`` would make it, kept on the host when it is a host value.

    A Python int that fits takes ``x``'s integer dtype; other Python scalars
    stay weakly typed; lists become arrays. Host values are converted on the
    host when the dtypes are promoted, so no conversion is staged (JAX folds
    those conversions of constants too).
    """
    x_dtype = core.get_aval(x).dtype
    if isinstance(y, int) and not isinstance(y, bool) and dtypes.issubdtype(x_dtype, np.integer):
        info = dtypes.iinfo(x_dtype)
        if info.min <= y <= info.max:
            return np.array(y, dtype=x_dtype)
    if isinstance(y, (list, tuple)):
        util.check_arraylike("scatter", *y)
        return np.asarray(y).astype(dtypes.canonicalize_dtype(np.asarray(y).dtype))
    util.check_arraylike("scatter", y)
    return y


def scatter_update(x: Any, idx: Any, y: Any, scatter_op: Callable[..., Any], *, indices_are_sorted: bool,
                   unique_indices: bool, mode: Mode, normalize_indices: bool = True) -> Any:
    """``x`` with ``x[idx] op= y`` applied, functionally: one scatter (JAX's ``_scatter_update``)."""

    x = asarray(x)
    y = _update_value(x, y)
    x_aval = core.get_aval(x)
    dtype, weak = x_aval.dtype, x_aval.weak_type
    indices = _expand_bool_indices(parse(idx, x_aval.shape), x_aval.shape)
    y_aval = core.get_aval(y)
    if dtypes.result_type(y, x_aval.strip_weak_type()) != dtype:
        warnings.warn(
            f"scatter inputs have incompatible types: cannot safely cast value from dtype={y_aval.dtype.name} "
            f"to dtype={dtype.name} with jax_numpy_dtype_promotion=standard. In future JAX releases this will "
            "result in an error.",
            FutureWarning,
            stacklevel=4,
        )
    plan = _to_gather(indices, x_aval.shape, normalize_indices)
    if 0 in plan.slice_shape:
        return x
    x, y = util.promote_dtypes(x, y)
    typed = explicit_type(x)
    if typed is not None and isinstance(typed.sharding, NamedSharding) and not plan.scalar_bool_dims:
        # shtypes: the updates laid out as the slice of x they update is (as JAX broadcasts them)
        spec = tuple(typed.sharding.spec) + (None,) * x_aval.ndim
        given = NamedSharding(typed.sharding.mesh, PartitionSpec(*(None if a is None else spec[a] for a in plan.slice_axes)))
        y = broadcast_to(y, tuple(plan.slice_shape), out_sharding=given)
    else:
        y = broadcast_to(y, tuple(plan.slice_shape))
    if plan.newaxis_dims:
        y = lax.squeeze(y, plan.newaxis_dims)
    if plan.reversed_y_dims:
        y = lax.rev(y, plan.reversed_y_dims)
    if plan.scalar_bool_dims:
        x = lax.expand_dims(x, plan.scalar_bool_dims)
    dn = plan.dnums
    dnums = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map, operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )  # fmt: skip
    out = scatter_op(x, plan.indices, y, dnums, indices_are_sorted=plan.indices_are_sorted or indices_are_sorted,
                     unique_indices=plan.unique_indices or unique_indices, mode=mode)
    if plan.scalar_bool_dims:
        out = lax.squeeze(out, plan.scalar_bool_dims)
    return util.convert_element_type(out, dtype, weak)


class _IndexUpdateHelper:
    """What ``x.at`` is: indexing it gives an ``_IndexUpdateRef``."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def at_helper(x: Any) -> _IndexUpdateHelper:
    """The value of ``x.at``."""
    return _IndexUpdateHelper(x)


def _with_out_sharding(f: Callable[..., Any], out_sharding: Any, method: str, *args: Any) -> Any:
    """``f(*args)``, or with ``out_sharding=``: computed with the mesh axes Auto (the operands
    resharded whole) and the result laid out so, as JAX's ``.at[...]`` does (jax.sharding.auto_axes)."""
    if out_sharding is None:
        return f(*args)
    out_sharding_param(out_sharding, method)  # (its TypeError for what is no sharding)
    return auto_axes(f, out_sharding=out_sharding)(*args)


class _IndexUpdateRef:
    """``x.at[idx]``: ``.get()`` reads ``x[idx]``; ``.set(y)``, ``.add(y)``, ... return updated copies.

    Options (as in JAX): ``mode`` ('fill'/'drop' by default for updates, which
    drops out-of-bounds updates; 'clip' clamps them; 'promise_in_bounds'),
    ``fill_value`` for ``get(mode='fill')``, ``indices_are_sorted`` and
    ``unique_indices`` (promises passed to the gather/scatter) and
    ``wrap_negative_indices`` (False: negative indices are out of bounds).
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: Mode = None,
            fill_value: Any = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        def take(array: Any) -> Any:
            return rewriting_take(array, self.index, indices_are_sorted=indices_are_sorted,
                                  unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                                  normalize_indices=wrap_negative_indices)  # fmt: skip

        return _with_out_sharding(take, out_sharding, "get", self.array)

    def _update(self, method: str, values: Any, indices_are_sorted: bool, unique_indices: bool, mode: Mode,
                out_sharding: Any, wrap: bool, array: Any = None) -> Any:
        target = self.array if array is None else array
        op = _SCATTER_OPS["multiply" if method in ("divide", "power") else method]

        def update(target: Any, values: Any) -> Any:
            return scatter_update(target, self.index, values, op, indices_are_sorted=indices_are_sorted,
                                  unique_indices=unique_indices, mode=mode, normalize_indices=wrap)

        return _with_out_sharding(update, out_sharding, method, target, values)

    def set(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: Mode = None,
            out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("set", values, indices_are_sorted, unique_indices, mode, out_sharding, wrap_negative_indices)

    def add(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: Mode = None,
            out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("add", values, indices_are_sorted, unique_indices, mode, out_sharding, wrap_negative_indices)

    def subtract(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                 mode: Mode = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("subtract", values, indices_are_sorted, unique_indices, mode, out_sharding,
                            wrap_negative_indices)  # fmt: skip

    def multiply(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                 mode: Mode = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("multiply", values, indices_are_sorted, unique_indices, mode, out_sharding,
                            wrap_negative_indices)  # fmt: skip

    mul = multiply

    def divide(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
               mode: Mode = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        # As JAX: x / (ones with the values multiplied in at idx), true division.
        ones = lax.full_like(self.array, 1)  # jnp.ones_like's equation (and x's weak type)
        scale = self._update("divide", values, indices_are_sorted, unique_indices, mode, out_sharding,
                             wrap_negative_indices, array=ones)  # fmt: skip
        return divide(self.array, scale)

    def power(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: Mode = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        # As JAX: x ** (ones with the exponents multiplied in at idx).
        ones = lax.full_like(self.array, 1)  # jnp.ones_like's equation (and x's weak type)
        exponent = self._update("power", values, indices_are_sorted, unique_indices, mode, out_sharding,
                                wrap_negative_indices, array=ones)  # fmt: skip
        return power(self.array, exponent)

    def min(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: Mode = None,
            out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("min", values, indices_are_sorted, unique_indices, mode, out_sharding, wrap_negative_indices)

    def max(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: Mode = None,
            out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("max", values, indices_are_sorted, unique_indices, mode, out_sharding, wrap_negative_indices)

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: Mode = None, wrap_negative_indices: bool = True) -> Any:
        """``func`` applied to the elements at idx (an element indexed twice gets it twice)."""

        def scatter_apply(x: Any, indices: Any, y: Any, dims: ScatterDimensionNumbers, **kwargs: Any) -> Any:
            return lax.scatter_apply(x, indices, func, dims, update_shape=core.get_aval(y).shape, **kwargs)

        zero = np.zeros((), core.get_aval(self.array).dtype)
        return scatter_update(self.array, self.index, zero, scatter_apply, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode, normalize_indices=wrap_negative_indices)


# ---------------------------------------------------------------------------
# take, take_along_axis, put, put_along_axis


def _named_jit(name: str, fun: Callable[..., Any], **kwargs: Any) -> Any:
    """``jit(fun)`` appearing as ``jit[name=<name>]`` in jaxprs, as JAX's staged helpers do."""
    fun.__name__ = fun.__qualname__ = name
    return jit(fun, **kwargs)


def _take_impl(a: Any, indices: Any, axis: int | None = None, mode: str | None = None, unique_indices: bool = False,
               indices_are_sorted: bool = False, fill_value: Any = None) -> Any:
    if axis is None:
        a = ravel(a)
        axis_idx = 0
    else:
        axis_idx = util.canonicalize_axis(axis, np.ndim(a))
    a_shape = core.get_aval(a).shape
    index_aval = core.get_aval(indices)
    if mode is None or mode == "fill":
        gather_mode = GatherScatterMode.FILL_OR_DROP
        # lax.gather does not wrap negative indices: wrap them here.
        indices = util.where_jit(indices < 0, indices + a_shape[axis_idx], indices)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        indices = mod(indices, np.array(a_shape[axis_idx], index_aval.dtype))
        gather_mode = GatherScatterMode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        gather_mode = GatherScatterMode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    index_dims = index_aval.ndim
    slice_sizes = list(a_shape)
    if slice_sizes[axis_idx] == 0:
        if index_aval.size != 0:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if index_aval.size == 0:
        out_shape = slice_sizes[:axis_idx] + list(index_aval.shape) + slice_sizes[axis_idx + 1 :]
        return lax.full_like(a, 0, shape=out_shape)
    slice_sizes[axis_idx] = 1
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(list(range(axis_idx)) + list(range(axis_idx + index_dims, len(a_shape) + index_dims - 1))),
        collapsed_slice_dims=(axis_idx,), start_index_map=(axis_idx,),
    )  # fmt: skip
    return lax.gather(a, lax.expand_dims(indices, (index_dims,)), dnums, tuple(slice_sizes), mode=gather_mode,
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, fill_value=fill_value)


_take_jit = _named_jit("_take", _take_impl, static_argnames=(
    "axis", "mode", "unique_indices", "indices_are_sorted", "fill_value"))  # fmt: skip


def take(a: Any, indices: Any, axis: int | None = None, out: None = None, mode: str | None = None,
         unique_indices: bool = False, indices_are_sorted: bool = False, fill_value: Any = None) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when None).

    ``mode``: 'fill' (the default; out-of-bounds reads ``fill_value``, NaN by
    default for floats), 'clip', 'wrap'; 'raise' is not supported (as in JAX).
    Negative indices count from the end except with 'clip'.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    util.check_arraylike("take", a, indices)
    return _take_jit(a, indices, axis=None if axis is None else operator.index(axis), mode=mode,
                     unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, fill_value=fill_value)


def _take_along_axis_impl(arr: Any, indices: Any, axis: int | None = -1, mode: Mode = None, fill_value: Any = None,
                          wrap_negative_indices: bool | None = None) -> Any:
    index_dtype = core.get_aval(indices).dtype
    idx_shape = core.get_aval(indices).shape
    if not dtypes.issubdtype(index_dtype, np.integer):
        raise TypeError(f"take_along_axis indices must be of integer type, got {index_dtype}")
    a = arr
    if axis is None:
        if len(idx_shape) != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape {idx_shape}")
        a = ravel(a)
        axis = 0
    a_shape = core.get_aval(a).shape
    rank = len(a_shape)
    if rank != len(idx_shape):
        raise ValueError(f"indices and arr must have the same number of dimensions; {len(idx_shape)} vs. {rank}")
    axis_int = util.canonicalize_axis(axis, rank)
    arr_shape = tuple(1 if i == axis_int else n for i, n in enumerate(a_shape))
    axis_size = a_shape[axis_int]
    out_shape = np.broadcast_shapes(idx_shape, arr_shape)
    if axis_size == 0:
        return lax.full(out_shape, 0, core.get_aval(a).dtype)
    if wrap_negative_indices is None:  # JAX's legacy default
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:
        wide = np.dtype(np.int64) if axis_size > np.iinfo(np.int32).max else np.dtype(np.int32)
        indices = lax.convert_element_type(indices, wide)
        if not dtypes.issubdtype(wide, np.unsignedinteger):
            indices = lax.select(indices < 0, lax.add(indices, np.array(axis_size, wide)), indices)
    if mode == "one_hot":
        return _one_hot_take(a, indices, axis_int, axis_size)
    index_dims = [i for i, n in enumerate(idx_shape) if i == axis_int or n != 1]
    gather_index_shape = tuple(out_shape[i] for i in index_dims) + (1,)
    gather_indices = lax.reshape(indices, gather_index_shape)
    slice_sizes: list[int] = []
    offset_dims: list[int] = []
    start_index_map: list[int] = []
    collapsed: list[int] = []
    operand_batching: list[int] = []
    index_batching: list[int] = []
    squeezed: list[int] = []
    new_i = j = 0
    for i in range(rank):
        if i == axis_int:
            slice_sizes.append(1)
            start_index_map.append(new_i)
            collapsed.append(new_i)
            new_i += 1
            j += 1
        elif idx_shape[i] == 1:  # the whole axis of arr, no index needed
            offset_dims.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif arr_shape[i] == 1:  # arr broadcasts along it: squeeze it away
            squeezed.append(i)
            j += 1
        else:  # paired axes of arr and indices
            slice_sizes.append(0 if arr_shape[i] == 0 else 1)
            operand_batching.append(new_i)
            index_batching.append(j)
            new_i += 1
            j += 1
    a = lax.squeeze(a, squeezed)
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed), start_index_map=tuple(start_index_map),
        operand_batching_dims=tuple(operand_batching), start_indices_batching_dims=tuple(index_batching),
    )  # fmt: skip
    return lax.gather(a, gather_indices, dnums, tuple(slice_sizes), mode="fill" if mode is None else mode,
                      fill_value=fill_value)


def _one_hot_take(a: Any, indices: Any, axis: int, axis_size: int) -> Any:
    """take_along_axis(mode='one_hot'): a one-hot contraction over the axis (no gather), as JAX computes it."""

    a_aval, idx_aval = core.get_aval(a), core.get_aval(indices)
    # The result's shape: the indices broadcast with a (a's axis taken by the indices).
    out_shape = np.broadcast_shapes(idx_aval.shape, tuple(1 if i == axis else n for i, n in enumerate(a_aval.shape)))
    iota = lax.broadcasted_iota(idx_aval.dtype, (*idx_aval.shape, axis_size), idx_aval.ndim)
    hot = lax.eq(expand_dims(indices, -1), iota)  # [..., n]: which element each index picks
    values = expand_dims(moveaxis(a, axis, -1), axis)  # a's axis last, a new axis where the indices run
    full = (*out_shape, axis_size)
    hot = util.broadcast_to(util.convert_element_type(hot, a_aval.dtype), full)
    product = lax.mul(hot, util.broadcast_to(values, full))
    return jnp_sum(product, axis=-1, dtype=a_aval.dtype)


_take_along_axis_jit = _named_jit("take_along_axis", _take_along_axis_impl, static_argnames=(
    "axis", "mode", "fill_value", "wrap_negative_indices"))  # fmt: skip


def take_along_axis(arr: Any, indices: Any, axis: int | None = -1, mode: Mode = None, fill_value: Any = None, *,
                    wrap_negative_indices: bool | None = None) -> Any:
    """``arr`` indexed along ``axis`` by ``indices`` of the same rank (broadcast with ``arr`` on the other axes).

    ``mode``: 'fill' (default; out-of-bounds reads ``fill_value``), 'clip',
    'promise_in_bounds' or 'one_hot'. ``wrap_negative_indices``: by default
    negative indices wrap unless the mode is 'promise_in_bounds'.
    """
    util.check_arraylike("take_along_axis", arr, indices)
    return _take_along_axis_jit(arr, indices, axis=axis, mode=mode, fill_value=fill_value,
                                wrap_negative_indices=wrap_negative_indices)


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """A copy of ``a`` with the elements of the flattened array at ``ind`` replaced by ``v`` (tiled to fit).

    ``mode``: None and 'clip' clamp out-of-bounds indices (None first wraps
    negative ones once, as JAX does), 'wrap' wraps them; ``inplace`` must be
    False (JAX arrays are immutable).
    """
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
                         "Pass inplace=False to instead return an updated array.")  # fmt: skip
    util.check_arraylike("put", a, ind, v)
    arr = asarray(a)
    ind_arr = ravel(asarray(ind))
    v_arr = ravel(asarray(v))
    size, n_ind, n_v = core.get_aval(arr).size, core.get_aval(ind_arr).size, core.get_aval(v_arr).size
    if not size or not n_ind or not n_v:
        return arr
    if n_v != n_ind:
        v_arr = lax.slice(tile(v_arr, -(-n_ind // n_v)), [0], [n_ind])
    if mode is None:
        # As JAX's unravel_index reads flat indices: negative ones wrap once, then all are clipped.
        ind_arr = clip(util.where_jit(ind_arr < 0, ind_arr + size, ind_arr), 0, size - 1)
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr = clip(ind_arr, 0, size - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        ind_arr = mod(ind_arr, size)
        scatter_mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
    flat = _IndexUpdateRef(ravel(arr), ind_arr).set(v_arr, mode=scatter_mode)
    return reshape(flat, core.get_aval(arr).shape)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None, inplace: bool = True, *,
                   mode: Mode = None) -> Any:
    """A copy of ``arr`` with ``values`` written where ``take_along_axis(arr, indices, axis)`` reads;
    ``inplace`` must be False."""

    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays"
                         "are immutable. Pass inplace=False to instead return an updated array.")  # fmt: skip
    util.check_arraylike("put_along_axis", arr, indices, values)
    a, idx, vals = asarray(arr), asarray(indices), asarray(values)
    original_shape = core.get_aval(a).shape
    if axis is None:
        a = ravel(a)
        axis = 0
    a_shape, idx_shape = core.get_aval(a).shape, core.get_aval(idx).shape
    if len(a_shape) != len(idx_shape):
        raise ValueError(f"put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
                         f"arr.ndim={len(a_shape)} and indices.ndim={len(idx_shape)}.")  # fmt: skip
    try:
        vals = util.broadcast_to(vals, idx_shape)
    except (TypeError, ValueError):
        raise ValueError(f"put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
                         f"values.shape={core.get_aval(vals).shape} and indices.shape={idx_shape}.") from None
    axis_int = util.canonicalize_axis(axis, len(a_shape))
    # NumPy's sparse open grid for the other axes, indices along this one.
    index: list[Any] = []
    for i, n in enumerate(a_shape):
        if i == axis_int:
            index.append(idx)
        else:
            grid = [1] * len(a_shape)
            grid[i] = n
            index.append(lax.broadcasted_iota(np.dtype(np.int32), tuple(grid), i))
    result = _IndexUpdateRef(a, tuple(index)).set(vals, mode=mode)
    return reshape(result, original_shape) if core.get_aval(result).shape != original_shape else result
