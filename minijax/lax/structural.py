"""``lax`` shape, slicing and filling operations, named and shaped as in ``jax.lax``.

These wrappers check user arguments (lists, NumPy ints, negative indices,
Python scalars) and turn them into the exact params JAX's primitives carry,
then call the primitives' bind helpers (minijax/primitives/structural.py,
slicing.py), which -- like JAX -- skip the primitive when it would be the
identity (``reshape`` to the same shape, a ``transpose`` by the identity
permutation, ...), so that minijax's jaxprs match JAX's equation for equation.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, SupportsIndex

import numpy as np

from minijax import core, dtypes
from minijax.array import Array as MinijaxArray, device_put_value
from minijax.core import Tracer, get_aval, shape_size
from minijax.lax import elementwise as ew
from minijax.primitives import elementwise as ew_prims, slicing as slicing_prims, structural as sp
from minijax.primitives.common import int_tuple
from minijax.primitives.slicing import (
    dynamic_slice_p,
    dynamic_update_slice_p,
    pad_p,
    padding_triples,
    slice_p,
)
from minijax.primitives.structural import (
    broadcast_in_dim_p,
    concatenate_p,
    iota_p,
    reshape_p,
    rev_p,
    split_p,
    squeeze_p,
    stack_p,
    tile_p,
    transpose_p,
)
from minijax.shape_poly import DimExpr
from minijax.sharding_rules import out_sharding_param, place_result
from minijax.stages import jit

ArrayLike = Any
Array = Any
Shape = tuple[int, ...]
# Static integer sequences (shapes, axes, indices): Python or NumPy integers.
Ints = Sequence[SupportsIndex]


# ---------------------------------------------------------------------------
# Helpers


def _is_jax_value(x: Any) -> bool:
    """A minijax Array or a tracer: what the identity shortcuts may hand back unchanged."""
    return isinstance(x, (MinijaxArray, Tracer))


def _asarray(x: ArrayLike) -> Array:
    """``x`` as a minijax value: Arrays and tracers as they are, host values put on the device."""
    return x if _is_jax_value(x) else device_put_value(x)


def _shape(shape: Any) -> Shape:
    """A shape argument as a tuple of ints (an int is a 1-d shape), or TypeError."""
    items = (shape,) if isinstance(shape, (int, np.integer, DimExpr)) else tuple(shape)
    try:
        return tuple(core.dim_index(d) for d in items)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {items}.") from None


def _as_given(prim: str, what: str, values: Any) -> tuple[Any, ...]:
    """A sequence param as a tuple of its own elements, after checking they are integers.

    JAX keeps NumPy integers in these params as given (and prints them so),
    so minijax does too; params that JAX canonicalizes go through int_tuple.
    Bools become ints, though: the primitives refuse them (NumPy's axis arguments
    do, and XLA would lower a wrong program), and JAX computes with them as ints.
    """
    int_tuple(prim, what, values)
    return tuple(int(v) if isinstance(v, (bool, np.bool_)) else v for v in values)


def _no_sharding(name: str, sharding: Any) -> None:
    if sharding is not None:
        raise NotImplementedError(f"lax.{name}: minijax has no shardings; leave out_sharding/sharding as None.")


def _sharding_param(name: str, out_sharding: Any) -> Any:
    """An ``out_sharding=`` argument as the primitive's param (None, or a NamedSharding over the abstract mesh)."""
    return out_sharding_param(out_sharding, name)


def _placed(x: Any, out_sharding: Any, name: str) -> Any:
    return place_result(x, out_sharding, f"lax.{name}")


def _canonical_axis(axis: SupportsIndex, ndim: int) -> int:
    """``axis`` in [0, ndim), counting negative axes from the end; ValueError otherwise."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _axis_of(axis: SupportsIndex, ndim: int, fun: str) -> int:
    # The *_in_dim helpers index a Python list of dimensions: IndexError, as in JAX.
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise IndexError(f"lax.{fun}: axis {axis} is out of range for an operand of rank {ndim}")
    return axis % ndim


# ---------------------------------------------------------------------------
# Broadcasting and reshaping


def broadcast_in_dim(operand: ArrayLike, shape: Ints, broadcast_dimensions: Ints, *, out_sharding: Any = None) -> Array:
    """Broadcast ``operand`` to ``shape``, operand axis i becoming result axis ``broadcast_dimensions[i]``."""
    param = _sharding_param("broadcast_in_dim", out_sharding)
    shape = _as_given("broadcast_in_dim", "shape", shape)
    dims = _as_given("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)
    return _placed(sp.broadcast_in_dim(operand, shape, dims, param), out_sharding, "broadcast_in_dim")


def dtype(x: Any) -> np.dtype[Any]:
    """The (canonical) dtype of a value or a type: ``lax.dtype(1.0)`` is float32 unless x64 is on."""
    return dtypes.dtype(x, canonicalize=True)


def broadcast_like(arr: ArrayLike, like_arr: ArrayLike) -> Array:
    """``arr`` broadcast to ``like_arr``'s shape, its axes aligned with the trailing ones (as NumPy does)."""
    shape, own = get_aval(like_arr).shape, get_aval(arr).shape
    lead = len(shape) - len(own)
    if lead < 0 or any(n not in (1, m) for n, m in zip(own, shape[lead:])):
        raise ValueError(f"broadcast_like: cannot broadcast an array of shape {own} to the shape {shape} of like_arr")
    return sp.broadcast_in_dim(arr, shape, tuple(range(lead, len(shape))))


def broadcast(operand: ArrayLike, sizes: Ints, *, out_sharding: Any = None) -> Array:
    """Add leading dimensions of the given ``sizes``."""
    param = _sharding_param("broadcast", out_sharding)
    return _placed(sp.broadcast(operand, _shape(sizes), param), out_sharding, "broadcast")


def broadcast_to_rank(x: ArrayLike, rank: int) -> Array:
    """Add leading 1-sized dimensions up to ``rank``."""
    ndim = np.ndim(x)
    if ndim == rank:
        return _asarray(x)
    return broadcast(x, (1,) * (rank - ndim))


def reshape(operand: ArrayLike, new_sizes: Ints, dimensions: Ints | None = None, *, out_sharding: Any = None) -> Array:
    """Reshape in row-major order, after transposing by ``dimensions`` if given."""
    param = _sharding_param("reshape", out_sharding)
    dims = None if dimensions is None else int_tuple("reshape", "dimensions", dimensions)
    return _placed(sp.reshape(operand, _shape(new_sizes), dims, param), out_sharding, "reshape")


def transpose(operand: ArrayLike, permutation: Ints) -> Array:
    """Permute the axes: result axis i is operand axis ``permutation[i]``."""
    return sp.transpose(operand, int_tuple("transpose", "permutation", permutation))


def squeeze(array: ArrayLike, dimensions: Ints) -> Array:
    """Remove the given 1-sized dimensions (negative ones count from the end)."""
    ndim = np.ndim(array)
    return sp.squeeze(array, [_canonical_axis(d, ndim) for d in dimensions])


def expand_dims(array: ArrayLike, dimensions: Ints) -> Array:
    """Insert 1-sized dimensions at the given positions of the result."""
    dims = tuple(dimensions)
    if not dims:
        return _asarray(array)
    ndim_out = np.ndim(array) + len(dims)
    new_axes = tuple(_canonical_axis(d, ndim_out) for d in dims)
    if len(set(new_axes)) != len(new_axes):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    return sp.expand_dims(array, new_axes)


def collapse(operand: Array, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """Merge the dimensions ``start_dimension:stop_dimension`` into one."""
    shape = get_aval(operand).shape
    ndim = len(shape)
    start = _canonical_axis(start_dimension, ndim)
    stop = ndim if stop_dimension is None else operator.index(stop_dimension)
    stop = stop + ndim if stop < 0 else stop
    if not start <= stop <= ndim:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}[{start_dimension}:{stop_dimension}]")
    return reshape(operand, shape[:start] + (shape_size(shape[start:stop]),) + shape[stop:])


def rev(operand: ArrayLike, dimensions: Ints) -> Array:
    """Reverse the order of elements along the given dimensions."""
    return rev_p.bind(operand, dimensions=_as_given("rev", "dimensions", dimensions))


# ---------------------------------------------------------------------------
# Static slicing


def slice(  # noqa: A001 (JAX's name)
    operand: ArrayLike, start_indices: Ints, limit_indices: Ints, strides: Ints | None = None
) -> Array:
    """``operand[start:limit:stride]`` along every dimension (all static)."""
    return slicing_prims.slice(
        operand,
        _as_given("slice", "start_indices", start_indices),
        _as_given("slice", "limit_indices", limit_indices),
        None if strides is None else _as_given("slice", "strides", strides),
    )


def slice_in_dim(operand: Array, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0) -> Array:
    """``slice`` along one axis; None and negative indices as in Python slicing (without clipping)."""
    shape = get_aval(operand).shape
    axis = _axis_of(axis, len(shape), "slice_in_dim")
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start, limit = (start + size if start < 0 else start), (limit + size if limit < 0 else limit)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: Array, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """The slice at static ``index`` along ``axis``, that axis kept (size 1) or dropped."""
    shape = get_aval(operand).shape
    axis = _axis_of(axis, len(shape), "index_in_dim")
    size, wrapped = shape[axis], operator.index(index)
    wrapped = wrapped + size if wrapped < 0 else wrapped
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    result = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return result if keepdims else squeeze(result, (axis,))


# ---------------------------------------------------------------------------
# Dynamic slicing: start indices are operands, clamped by the primitives


def _is_static_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _normalize_index(index: Any, size: int, allow_negative: bool) -> Any:
    """A start index with negative values counted from the end (``index + size``).

    Static ints are normalized here and become strongly typed scalars (Python
    ints of the default int dtype); traced signed indices get the same
    arithmetic as equations (lt, add, select_n), as JAX stages them.
    """
    if _is_static_int(index) or (isinstance(index, np.ndarray) and index.ndim == 0 and index.dtype.kind in "iu"):
        dtype = dtypes.default_int_dtype() if isinstance(index, int) else dtypes.canonicalize_dtype(index.dtype)
        value = int(index)
        if value < 0:
            if not allow_negative:
                raise ValueError(f"Index {value} is out of bounds for dimension {size} if allow_negative_indices=False")
            value += size
        return np.array(value, dtype=np.int64).astype(dtype)
    if not _is_jax_value(index):
        return np.asarray(index)  # a bool or float: the primitive's rule explains the error
    aval = get_aval(index)
    if not allow_negative or not dtypes.issubdtype(aval.dtype, np.signedinteger):
        return index
    zero, dim = np.zeros((), aval.dtype), np.array(size, aval.dtype)
    negative = ew.lt_p.bind(index, zero)
    strong = ew.convert_element_type_p.bind(index, new_dtype=aval.dtype, weak_type=False, sharding=None) if aval.weak_type else index
    return ew.select_n_p.bind(negative, index, ew.add_p.bind(strong, dim))


def _start_indices(fun: str, operand_shape: Shape, start_indices: Any, allow_negative: Any) -> list[Any]:
    """Split a 1-d index array into scalars, check the count, normalize each index."""
    if _is_jax_value(start_indices):
        # A 1-d array of indices: one scalar per dimension (slice + squeeze, as JAX stages it).
        if np.ndim(start_indices) != 1:
            raise TypeError(
                f"lax.{fun}: start_indices must be a sequence of scalars or a 1-d array, got shape {np.shape(start_indices)}"
            )
        start_indices = [index_in_dim(start_indices, i, keepdims=False) for i in range(np.shape(start_indices)[0])]
    indices = list(start_indices)
    if len(indices) != len(operand_shape):
        raise ValueError(
            f"Length of slice indices must match number of operand dimensions ({len(indices)} vs {operand_shape})"
        )
    flags = [allow_negative] * len(indices) if isinstance(allow_negative, bool) else list(allow_negative)
    return [_normalize_index(i, n, bool(a)) for i, n, a in zip(indices, operand_shape, flags)]


def dynamic_slice(operand: Array, start_indices: Any, slice_sizes: Ints, *, allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """The window of ``slice_sizes`` at traced ``start_indices``, clamped to stay in bounds."""
    shape = get_aval(operand).shape
    indices = _start_indices("dynamic_slice", shape, start_indices, allow_negative_indices)
    return dynamic_slice_p.bind(operand, *indices, slice_sizes=_shape(slice_sizes))


def dynamic_update_slice(operand: Array, update: ArrayLike, start_indices: Any, *, allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """``operand`` with ``update`` written at traced ``start_indices`` (clamped to stay in bounds)."""
    shape = get_aval(operand).shape
    indices = _start_indices("dynamic_update_slice", shape, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *indices)


def _zero_index_like(index: Any) -> Any:
    """A static 0 of the index's dtype, for the axes a *_in_dim helper does not move along."""
    if isinstance(index, int) and not isinstance(index, bool):
        return np.zeros((), dtypes.default_int_dtype())
    return np.zeros((), get_aval(index).dtype)


def dynamic_slice_in_dim(operand: Array, start_index: ArrayLike, slice_size: int, axis: int = 0, *, allow_negative_indices: bool = True) -> Array:
    """``dynamic_slice`` along one axis."""
    shape = get_aval(operand).shape
    axis = _axis_of(axis, len(shape), "dynamic_slice_in_dim")
    starts: list[Any] = [_zero_index_like(start_index)] * len(shape)
    sizes = list(shape)
    starts[axis], sizes[axis] = start_index, operator.index(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_update_slice_in_dim(operand: Array, update: ArrayLike, start_index: ArrayLike, axis: int, *, allow_negative_indices: bool = True) -> Array:
    """``dynamic_update_slice`` along one axis."""
    ndim = np.ndim(operand)
    axis = _axis_of(axis, ndim, "dynamic_update_slice_in_dim")
    starts: list[Any] = [_zero_index_like(start_index)] * ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow_negative_indices)


# JAX stages these two as jit calls of their own (printed ``jit[name=...]``).
def _dynamic_index_in_dim(operand: Array, index: ArrayLike, axis: int, keepdims: bool, allow_negative_indices: bool) -> Array:
    result = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return result if keepdims else squeeze(result, (axis,))


def _dynamic_update_index_in_dim(operand: Array, update: ArrayLike, index: ArrayLike, axis: int, allow_negative_indices: bool) -> Array:
    ndim = np.ndim(operand)
    if np.ndim(update) == ndim - 1:
        update = expand_dims(update, (axis,))
    elif np.ndim(update) != ndim:
        raise TypeError(
            f"lax.dynamic_update_index_in_dim: update must have rank {ndim} or {ndim - 1} (operand rank {ndim}), "
            f"got shape {np.shape(update)}"
        )
    return dynamic_update_slice_in_dim(operand, update, index, axis, allow_negative_indices=allow_negative_indices)


_dynamic_index_in_dim.__name__ = "dynamic_index_in_dim"
_dynamic_update_index_in_dim.__name__ = "dynamic_update_index_in_dim"
_dynamic_index_jit = jit(_dynamic_index_in_dim, static_argnums=(2, 3, 4))
_dynamic_update_index_jit = jit(_dynamic_update_index_in_dim, static_argnums=(3, 4))


def dynamic_index_in_dim(operand: Array, index: ArrayLike, axis: int = 0, keepdims: bool = True, *, allow_negative_indices: bool = True) -> Array:
    """The slice at traced ``index`` along ``axis``, that axis kept (size 1) or dropped."""
    axis = _axis_of(axis, np.ndim(operand), "dynamic_index_in_dim")
    return _dynamic_index_jit(operand, index, axis, bool(keepdims), bool(allow_negative_indices))


def dynamic_update_index_in_dim(operand: Array, update: ArrayLike, index: ArrayLike, axis: int, *, allow_negative_indices: bool = True) -> Array:
    """``operand`` with ``update`` (with or without the size-1 ``axis``) written at traced ``index``."""
    axis = _axis_of(axis, np.ndim(operand), "dynamic_update_index_in_dim")
    return _dynamic_update_index_jit(operand, update, index, axis, bool(allow_negative_indices))


# ---------------------------------------------------------------------------
# Joining, padding, filling


def concatenate(operands: Sequence[ArrayLike], dimension: int) -> Array:
    """Join arrays of one dtype along ``dimension``."""
    operands = list(operands)
    if not operands:
        raise ValueError("lax.concatenate requires a non-empty sequence of arrays")
    operator.index(dimension)  # an integer, kept as given (as JAX does)
    return sp.concatenate(operands, dimension)


def pad(operand: ArrayLike, padding_value: ArrayLike, padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """Pad each axis with (low, high, interior) copies of ``padding_value``; negative low/high crop."""
    if np.ndim(padding_value) != 0:
        raise ValueError(f"padding_value must be a scalar; got np.shape(padding_value)={np.shape(padding_value)}")
    padding_triples(padding_config)  # checked here, kept as given (as JAX does)
    return slicing_prims.pad(operand, padding_value, padding_config)


def iota(dtype: Any, size: int) -> Array:
    """``[0, 1, ..., size - 1]`` of ``dtype``."""
    dtypes.check_user_dtype_supported(dtype, "iota")  # the dtype first, as JAX checks
    return broadcasted_iota(dtype, _shape((size,)), 0)


def broadcasted_iota(dtype: Any, shape: Ints, dimension: int, *, out_sharding: Any = None) -> Array:
    """An array of ``shape`` whose elements count along ``dimension``."""
    param = _sharding_param("broadcasted_iota", out_sharding)
    dt = dtypes.check_user_dtype_supported(dtype, "iota")
    out = iota_p.bind(dtype=dt, shape=_shape(shape), dimension=operator.index(dimension), sharding=param)
    return _placed(out, out_sharding, "broadcasted_iota")


def full(shape: Ints, fill_value: ArrayLike, dtype: Any = None, *, sharding: Any = None) -> Array:
    """An array of ``shape`` filled with the scalar ``fill_value`` (weakly typed if it is)."""
    _no_sharding("full", sharding)
    if np.ndim(fill_value) != 0:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {np.shape(fill_value)}.")
    target = None if dtype is None else dtypes.check_user_dtype_supported(dtype, "full")
    return ew_prims.full(_shape(shape), fill_value, target)


def full_like(x: ArrayLike, fill_value: ArrayLike, dtype: Any = None, shape: Ints | None = None, sharding: Any = None) -> Array:
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``."""
    _no_sharding("full_like", sharding)
    target = None if dtype is None else dtypes.check_user_dtype_supported(dtype, "full_like")
    if np.ndim(fill_value) != 0:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {np.shape(fill_value)}.")
    return ew_prims.full_like(x, fill_value, target, None if shape is None else _shape(shape))


def zeros_like_array(x: ArrayLike) -> Array:
    """Zeros with ``x``'s shape, dtype and weak type."""
    return full_like(x, 0)


def split(operand: ArrayLike, sizes: Ints, axis: int = 0) -> list[Array]:
    """Cut ``operand`` along ``axis`` into consecutive pieces of the given ``sizes``."""
    axis = _canonical_axis(axis, np.ndim(operand))
    return list(split_p.bind(operand, sizes=_as_given("split", "sizes", sizes), axis=axis))


def tile(operand: ArrayLike, reps: Ints) -> Array:
    """Repeat ``operand`` ``reps[i]`` times along each axis i."""
    return tile_p.bind(operand, reps=_as_given("tile", "reps", reps))


def stack(operands: Sequence[ArrayLike], axis: int = 0) -> Array:
    """Join same-shaped arrays along a new axis at position ``axis`` of the result."""
    operands = list(operands)
    if not operands:
        raise ValueError("lax.stack requires a non-empty sequence of arrays")
    axis = _canonical_axis(axis, np.ndim(operands[0]) + 1)
    return stack_p.bind(*operands, axis=axis)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives ``shapes`` (``lax.broadcast_shapes``).

    Each shape is a sequence of non-negative Python (or NumPy) integers; sizes
    must agree or be 1 in every trailing axis.
    """
    if not shapes:
        raise TypeError("lax.broadcast_shapes requires at least one shape")
    checked = []
    for shape in shapes:
        dims = tuple(shape)
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dims):
            raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {dims}.")
        if any(d < 0 for d in dims):
            raise TypeError(f"Only non-negative indices are allowed when broadcasting static shapes, but got shape {dims}.")
        checked.append(tuple(int(d) for d in dims))
    rank = max(len(s) for s in checked)
    result = []
    for sizes in zip(*[(1,) * (rank - len(s)) + s for s in checked]):
        other = {d for d in sizes if d != 1}
        if len(other) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={checked}")
        result.append(other.pop() if other else 1)
    return tuple(result)


__all__ = [
    "broadcast", "broadcast_in_dim", "broadcast_in_dim_p", "broadcast_like", "broadcast_shapes", "broadcast_to_rank",
    "broadcasted_iota", "dtype",
    "collapse", "concatenate", "concatenate_p", "dynamic_index_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dynamic_slice_p", "dynamic_update_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_slice_p", "expand_dims", "full", "full_like",
    "index_in_dim", "iota", "iota_p", "pad", "pad_p", "reshape", "reshape_p", "rev", "rev_p", "slice",
    "slice_in_dim", "slice_p", "split", "split_p", "squeeze", "squeeze_p", "stack", "stack_p", "tile",
    "tile_p", "transpose", "transpose_p", "zeros_like_array",
]  # fmt: skip
