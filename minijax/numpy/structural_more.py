"""``jnp``'s remaining structural names: editing, selection, index helpers and grids.

Every function follows ``jax.numpy``: the same arguments, results, dtypes
(weak types included) and errors. They are compositions of the other ``jnp``
modules, so they differentiate, batch and compile as those do. Where the
output's shape depends on values (``delete`` with repeated indices,
``compress``/``extract`` without ``size``, ``trim_zeros``, ``choose`` with
``mode='raise'``) the values must be concrete, as in JAX.

Sections: append/insert/delete/resize/trim_zeros; selection (choose,
compress, extract, place, fill_diagonal); flat indices (unravel_index,
ravel_multi_index, indices, ix_, mask_indices); joining and splitting
(block, concat, unstack, permute_dims, rollaxis, hsplit/vsplit/dsplit);
ranges (logspace, geomspace, fromfunction); index tricks (mgrid, ogrid,
r_, c_, s_, index_exp); bits (packbits, unpackbits).
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes, lax
from minijax.numpy import creation, matrix_ops, reductions, shape_ops, sorting, ufuncs, ufuncs_math
from minijax.numpy.creation import arange, array, asarray
from minijax.numpy.util import canonicalize_axis, check_arraylike, promote_dtypes
from minijax.vectorization import vmap

__all__ = [
    "append", "block", "c_", "choose", "compress", "concat", "delete", "dsplit", "extract", "fill_diagonal",
    "fromfunction", "geomspace", "hsplit", "index_exp", "indices", "insert", "ix_", "logspace", "mask_indices",
    "mgrid", "ogrid", "packbits", "permute_dims", "place", "r_", "ravel_multi_index", "resize", "rollaxis", "s_",
    "trim_zeros", "unpackbits", "unravel_index", "unstack", "vsplit",
]  # fmt: skip

ArrayLike = Any


def _asarray(x: ArrayLike) -> Any:
    return x if isinstance(x, core.Tracer) else asarray(x)


def _concrete_index(x: Any, what: str) -> int:
    return operator.index(core.concrete_or_error(x, f"The {what} must be a static integer."))


def _tile_to_size(arr: Any, size: int) -> Any:
    """The 1-D ``arr`` repeated (whole) and cut to exactly ``size`` elements."""
    if arr.size < size:
        arr = shape_ops.tile(arr, int(np.ceil(size / arr.size)))
    return arr[:size] if arr.size > size else arr


# ---------------------------------------------------------------------------
# append / insert / delete / resize / trim_zeros


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Any:
    """``arr`` with ``values`` appended (both raveled first when ``axis`` is None)."""
    if axis is None:
        return shape_ops.concatenate([shape_ops.ravel(arr), shape_ops.ravel(values)], 0)
    return shape_ops.concatenate([arr, values], axis=axis)


def insert(arr: ArrayLike, obj: ArrayLike | slice, values: ArrayLike, axis: int | None = None) -> Any:
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis``.

    The indices may be traced: the output is built by two scatters, one placing
    the values at their shifted positions, one placing the old elements around them.
    """
    check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    a = _asarray(arr)
    if axis is None:
        a = shape_ops.ravel(a)
        axis = 0
    axis = canonicalize_axis(_concrete_index(axis, "axis argument of jnp.insert()"), a.ndim)
    indices = arange(*obj.indices(a.shape[axis])) if isinstance(obj, slice) else _asarray(obj)
    if indices.ndim > 1:
        raise ValueError(f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}")
    if not np.issubdtype(indices.dtype, np.integer):
        if indices.size == 0 and not isinstance(obj, (core.Tracer, type(a))):
            indices = indices.astype(int)
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    values_arr = array(values, ndmin=a.ndim, dtype=a.dtype, copy=False)
    if indices.size == 1:
        index = shape_ops.ravel(indices)[0]
        if indices.ndim == 0:
            values_arr = shape_ops.moveaxis(values_arr, 0, axis)
        indices = creation.full(values_arr.shape[axis], index)
    n_input = a.shape[axis]
    n_insert = np.broadcast_shapes(indices.shape, (values_arr.shape[axis],))[0]
    out_shape = list(a.shape)
    out_shape[axis] += n_insert
    out = creation.zeros_like(a, shape=tuple(out_shape))
    indices = sorting.where(indices < 0, indices + n_input, indices)
    indices = shape_ops.clip(indices, 0, n_input)
    values_ind = indices.at[sorting.argsort(indices)].add(arange(n_insert, dtype=indices.dtype))
    arr_mask = creation.ones(n_input + n_insert, dtype=bool).at[values_ind].set(False)
    arr_ind = sorting.where(arr_mask, size=n_input)[0]
    out = out.at[(slice(None),) * axis + (values_ind,)].set(values_arr)
    return out.at[(slice(None),) * axis + (arr_ind,)].set(a)


def delete(arr: ArrayLike, obj: ArrayLike | slice, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:  # fmt: skip
    """``arr`` without the entries ``obj`` (an int, a slice, integer indices or a boolean mask) along ``axis``.

    Traced integer indices need ``assume_unique_indices=True`` (then the kept
    positions are computed arithmetically); otherwise ``obj`` must be concrete.
    """
    check_arraylike("delete", arr)
    a = _asarray(arr)
    if axis is None:
        a = shape_ops.ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, a.ndim)
    lead = (slice(None),) * axis
    if not isinstance(obj, (slice, core.Tracer)) and not hasattr(obj, "__len__") and not isinstance(obj, np.ndarray):
        try:
            index = canonicalize_axis(operator.index(obj), a.shape[axis])
        except TypeError:
            pass
        else:
            return shape_ops.concatenate([a[(*lead, slice(0, index))], a[(*lead, slice(index + 1, None))]], axis=axis)
    if isinstance(obj, slice):
        obj = arange(a.shape[axis])[obj]
        assume_unique_indices = True
    check_arraylike("delete", a, obj)
    if np.issubdtype(dtypes.dtype(obj), np.integer) and assume_unique_indices:
        obj_array = shape_ops.ravel(_asarray(obj))
        obj_array = shape_ops.clip(sorting.where(obj_array < 0, obj_array + a.shape[axis], obj_array), 0, a.shape[axis])
        obj_array = sorting.sort(obj_array)
        obj_array = obj_array - arange(obj_array.shape[0], dtype=obj_array.dtype)
        i = arange(a.shape[axis] - obj_array.size, dtype=obj_array.dtype)
        i = i + reductions.sum(i[None, :] >= obj_array[:, None], axis=0, dtype=i.dtype)
        return a[(*lead, i)]
    obj_np = np.asarray(core.concrete_or_error(obj, "The 'obj' array argument of jnp.delete() must be concrete "
                                               "(or pass assume_unique_indices=True for unique integer indices)."))
    if np.issubdtype(obj_np.dtype, np.integer):
        mask = np.ones(a.shape[axis], dtype=bool)
        mask[obj_np] = False
    elif obj_np.dtype == bool:
        if obj_np.shape != (a.shape[axis],):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be one-dimensional "
                             "with length matching specified axis.")  # fmt: skip
        mask = ~obj_np
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={obj_np.dtype}; must be integer or bool.")
    return a[(*lead, mask)]


def resize(a: ArrayLike, new_shape: Any) -> Any:
    """``a`` raveled, repeated as often as needed, cut and reshaped to ``new_shape``."""
    check_arraylike("resize", a)
    shape = tuple(_concrete_index(d, "new_shape") for d in (new_shape if isinstance(new_shape, Sequence)
                                                            else (new_shape,)))  # fmt: skip
    if builtins.any(d < 0 for d in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat = shape_ops.ravel(a)
    new_size = math.prod(shape)
    if flat.size == 0 or new_size == 0:
        return creation.zeros_like(flat, shape=shape)
    flat = shape_ops.tile(flat, -(-new_size // flat.size))[:new_size]
    return shape_ops.reshape(flat, shape)


def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Any:
    """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) all-zero slices along ``axis``."""
    check_arraylike("trim_zeros", filt)
    f = _asarray(filt)
    core.concrete_or_error(f, "Error arose in the `filt` argument of trim_zeros()")
    axes = range(f.ndim) if axis is None else (axis if isinstance(axis, Sequence) else (axis,))
    axis_set = {canonicalize_axis(ax, f.ndim) for ax in axes}
    low = trim.lower()
    if not axis_set or ("f" not in low and "b" not in low):
        return f
    host = np.asarray(f)

    def cut(ax: int) -> slice:
        if ax not in axis_set:
            return slice(None)
        mask = np.asarray(host.any(axis=tuple(i for i in range(host.ndim) if i != ax)))
        if not mask.any():
            return slice(0, 0)
        start = int(mask.argmax()) if "f" in low else None
        stop = host.shape[ax] - int(mask[::-1].argmax()) if "b" in low else None
        return slice(start, stop)

    return f[tuple(cut(ax) for ax in range(f.ndim))]


# ---------------------------------------------------------------------------
# Selection


def choose(a: ArrayLike, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """``choices[a[i]][i]`` for every position ``i`` (``a``, ``choices`` broadcast together)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    check_arraylike("choose", a, *choices)
    arr = _asarray(a)
    choice_list = [_asarray(c) for c in choices]
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(choice_list)
    if mode == "raise":
        concrete = np.asarray(core.concrete_or_error(
            arr, "The error occurred because jnp.choose was jit-compiled with mode='raise'. "
                 "Use mode='wrap' or mode='clip' instead."))  # fmt: skip
        if ((concrete < 0) | (concrete >= n)).any():
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        arr = ufuncs.remainder(arr, n)
    elif mode == "clip":
        arr = shape_ops.clip(arr, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arr, *choice_list = shape_ops.broadcast_arrays(arr, *choice_list)
    return array(choice_list)[(arr, *indices(arr.shape, sparse=True))]


def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, *, size: int | None = None,
             fill_value: ArrayLike = 0, out: None = None) -> Any:  # fmt: skip
    """The slices of ``a`` along ``axis`` where ``condition`` is true (the first ``size``, padded, with ``size``)."""
    check_arraylike("compress", condition, a, fill_value)
    cond = _asarray(condition).astype(bool)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    arr = _asarray(a)
    if axis is None:
        axis = 0
        arr = shape_ops.ravel(arr)
    else:
        arr = shape_ops.moveaxis(arr, axis, 0)
    cond, extra = cond[: arr.shape[0]], cond[arr.shape[0]:]
    arr = arr[: cond.shape[0]]
    if size is None:
        msg = ("The size argument of jnp.compress must be specified in order to use jnp.compress within JAX "
               "transformations like jax.jit, jax.vmap, and jax.grad. For more information, refer to the "
               "jnp.compress documentation.")  # fmt: skip
        # As in JAX, a traced condition fails at the bool() of the bounds check
        # (TracerBoolConversionError); the message above goes with a vmapped one.
        if reductions.any(extra):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[np.asarray(core.concrete_or_error(cond, msg))]
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array axis;"
                         f" got size={size} for a.shape[axis]={arr.shape[0]}")  # fmt: skip
    else:
        mask = shape_ops.expand_dims(cond, tuple(range(1, arr.ndim)))
        arr = sorting.where(mask, arr, array(fill_value, dtype=arr.dtype))
        result = arr[sorting.argsort(cond, stable=True, descending=True)][:size]
    return shape_ops.moveaxis(result, 0, axis)


def extract(condition: ArrayLike, arr: ArrayLike, *, size: int | None = None, fill_value: ArrayLike = 0) -> Any:
    """The elements of ``arr`` where ``condition`` is true, both raveled."""
    check_arraylike("extract", condition, arr, fill_value)
    return compress(shape_ops.ravel(condition), shape_ops.ravel(arr), size=size, fill_value=fill_value)


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Any:
    """``arr`` with the positions where ``mask`` holds set to ``vals`` in order (repeated as needed).

    JAX arrays are immutable, so ``inplace=False`` is required, as in JAX.
    """
    check_arraylike("place", arr, mask, vals)
    data, mask_arr, vals_arr = _asarray(arr), _asarray(mask), shape_ops.ravel(vals)
    if inplace:
        raise ValueError(
            "jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    if data.size != mask_arr.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals_arr.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    where_true = sorting.where(shape_ops.ravel(mask_arr), size=mask_arr.size, fill_value=mask_arr.size)[0]
    vals_arr = _tile_to_size(vals_arr, where_true.shape[0])
    return shape_ops.ravel(data).at[where_true].set(vals_arr, mode="drop").reshape(data.shape)


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *, inplace: bool = True) -> Any:
    """``a`` with its main diagonal set to ``val`` (``inplace=False`` required, as in JAX)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    arr, v = _asarray(a), _asarray(val)
    if arr.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if arr.ndim > 2 and not builtins.all(n == arr.shape[0] for n in arr.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(arr.shape)
    idx = matrix_ops.diag_indices(n, arr.ndim)
    return arr.at[idx].set(v if v.ndim == 0 else _tile_to_size(shape_ops.ravel(v), n))


# ---------------------------------------------------------------------------
# Flat indices and index helpers


def unravel_index(indices: ArrayLike, shape: Any) -> tuple[Any, ...]:
    """The coordinates in an array of ``shape`` of the flat ``indices`` (out-of-range ones clamped)."""
    check_arraylike("unravel_index", indices)
    rest = _asarray(indices)
    try:
        dims = list(shape)
    except TypeError:
        dims = [shape]
    if builtins.any(np.ndim(s) != 0 for s in dims):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    coords: list[Any] = [0] * len(dims)
    for i, s in reversed(list(enumerate(dims))):
        rest, coords[i] = ufuncs.divmod(rest, s)
    too_high = rest > 0
    too_low = asarray(False) if np.issubdtype(rest.dtype, np.unsignedinteger) else rest < -1
    return tuple(sorting.where(too_high, s - 1, sorting.where(too_low, 0, c)) for s, c in zip(dims, coords))


def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Any:  # fmt: skip
    """The flat index of each coordinate tuple in ``multi_index`` in an array of shape ``dims``."""
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims_t = tuple(_concrete_index(d, "`dims` argument of ravel_multi_index()") for d in dims)
    check_arraylike("ravel_multi_index", *multi_index)
    parts = [_asarray(i) for i in multi_index]
    if dtype is None:
        out_dtype = dtypes.result_type(int, *parts)
    else:
        out_dtype = dtypes.check_user_dtype_supported(dtype, "ravel_multi_index")
    if not np.issubdtype(out_dtype, np.integer):
        raise ValueError(f"dtype={out_dtype!r} is not an integer type.")
    if math.prod(dims_t) - 1 > np.iinfo(out_dtype).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={out_dtype!r} not large enough to hold flattened index for dims={dims_t}. "
            "Use the dtype argument to pass a suitable dtype (e.g. dtype=np.min_scalar_type(prod(dims)))."
        )
    for index in parts:
        if mode == "raise":
            core.concrete_or_error(index, "The error occurred because ravel_multi_index was jit-compiled with "
                                          "mode='raise'. Use mode='wrap' or mode='clip' instead.")  # fmt: skip
        if not np.issubdtype(index.dtype, np.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        if builtins.any(((np.asarray(i) < 0) | (np.asarray(i) >= d)).any() for i, d in zip(parts, dims_t)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        parts = [shape_ops.clip(i, 0, d - 1) for i, d in zip(parts, dims_t)]
    elif mode == "wrap":
        parts = [ufuncs.remainder(i, d) for i, d in zip(parts, dims_t)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "F":
        strides = np.cumprod((1, *dims_t[:-1]))
    elif order == "C":
        strides = np.cumprod((1, *dims_t[1:][::-1]))[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = array(0, dtype=out_dtype)
    for i, s in zip(parts, strides):
        result = result + i.astype(out_dtype) * int(s)
    return result


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """The index grid of an array of shape ``dimensions`` (one broadcastable array per axis when ``sparse``)."""
    dt = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "indices")
    dims = tuple(_concrete_index(d, "dimensions argument of jnp.indices") for d in dimensions)
    n = len(dims)
    out = []
    for i, d in enumerate(dims):
        target = (1,) * i + (d,) + (1,) * (n - i - 1) if sparse else dims
        out.append(lax.broadcast_in_dim(lax.iota(dt, d), target, (i,)))
    if sparse:
        return tuple(out)
    return shape_ops.stack(out, 0) if out else array([], dtype=dt)


def ix_(*args: ArrayLike) -> tuple[Any, ...]:
    """1-D index arrays reshaped to index an open (outer-product) grid: ``x[ix_(rows, cols)]``."""
    check_arraylike("ix", *args)
    n = len(args)
    out = []
    for i, arg in enumerate(args):
        a = _asarray(arg)
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {a.shape}")
        if a.dtype == bool:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        target = [1] * n
        target[i] = a.shape[0]
        if a.size == 0:
            out.append(lax.full(target, np.zeros((), np.intp)))
        else:
            out.append(lax.broadcast_in_dim(a, target, (i,)))
    return tuple(out)


def mask_indices(n: int, mask_func: Callable[[ArrayLike, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:  # fmt: skip
    """The (row, column) indices where ``mask_func(ones((n, n)), k)`` is nonzero."""
    i, j = sorting.nonzero(mask_func(creation.ones((n, n)), k), size=size)
    return i, j


# ---------------------------------------------------------------------------
# Joining and splitting


def _atleast_nd(x: Any, n: int) -> Any:
    m = np.ndim(x)
    return lax.broadcast(x, (1,) * (n - m)) if m < n else _asarray(x)


def _block(xs: Any) -> tuple[Any, int]:
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if isinstance(xs, list):
        if len(xs) == 0:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        parts, depths = zip(*(_block(x) for x in xs))
        if builtins.any(d != depths[0] for d in depths[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        rank = max(depths[0], max(np.ndim(x) for x in parts))
        return shape_ops.concatenate([_atleast_nd(x, rank) for x in parts], axis=-depths[0]), depths[0] + 1
    return _asarray(xs), 1


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks (innermost lists join along the last axis)."""
    return _block(arrays)[0]


def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Any:
    """``concatenate``, under the Array API's name."""
    check_arraylike("concat", *arrays)
    return shape_ops.concatenate(arrays, axis=axis)


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, that axis dropped."""
    check_arraylike("unstack", x)
    arr = _asarray(x)
    axis = canonicalize_axis(axis, arr.ndim)
    return tuple(lax.index_in_dim(arr, i, axis, keepdims=False) for i in range(arr.shape[axis]))


def permute_dims(a: ArrayLike, /, axes: tuple[int, ...]) -> Any:
    """``a``'s axes reordered (the Array API's ``transpose``); ``axes`` must be a permutation."""
    check_arraylike("permute_dims", a)
    # No wrapping of negative axes: like JAX, lax.transpose rejects them (and repeats).
    return lax.transpose(_asarray(a), tuple(axes))


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Any:
    """``a`` with ``axis`` moved to sit before position ``start`` (NumPy's older ``moveaxis``)."""
    check_arraylike("rollaxis", a)
    start = _concrete_index(start, "'start' argument of jnp.rollaxis()")
    ndim = np.ndim(a)
    axis = canonicalize_axis(axis, ndim)
    if not -ndim <= start <= ndim:
        raise ValueError(f"start={start} must satisfy {-ndim}<=start<={ndim}")
    if start < 0:
        start += ndim
    if start > axis:
        start -= 1
    return shape_ops.moveaxis(a, axis, start)


def hsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """``split`` along the second axis (the first for 1-D arrays)."""
    check_arraylike("hsplit", ary)
    return shape_ops._split("hsplit", ary, indices_or_sections, 0 if np.ndim(ary) == 1 else 1, equal=True)


def vsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """``split`` along the first axis (arrays of at least 2 dimensions)."""
    check_arraylike("vsplit", ary)
    return shape_ops._split("vsplit", ary, indices_or_sections, 0, equal=True)


def dsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """``split`` along the third axis (arrays of at least 3 dimensions)."""
    check_arraylike("dsplit", ary)
    if np.ndim(ary) < 3:
        raise IndexError("tuple index out of range")  # JAX's words: it reads ary.shape[2]
    return shape_ops._split("dsplit", ary, indices_or_sections, 2, equal=True)


# ---------------------------------------------------------------------------
# Ranges


def _inexact(dt: np.dtype[Any]) -> np.dtype[Any]:
    return dt if np.issubdtype(dt, np.inexact) else dtypes.default_float_dtype()


def logspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True, base: ArrayLike = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:  # fmt: skip
    """``base ** linspace(start, stop, num)``."""
    num = _concrete_index(num, "'num' argument of jnp.logspace")
    axis = _concrete_index(axis, "'axis' argument of jnp.logspace")
    if dtype is None:
        out_dtype = _inexact(dtypes.result_type(start, stop))
    else:
        out_dtype = dtypes.check_user_dtype_supported(dtype, "logspace")
    compute = _inexact(out_dtype)
    check_arraylike("logspace", start, stop)
    lo, hi = _asarray(start).astype(compute), _asarray(stop).astype(compute)
    lin = creation.linspace(lo, hi, num, endpoint=endpoint, retstep=False, dtype=None, axis=axis)
    return lax.convert_element_type(ufuncs.power(base, lin), out_dtype)


def geomspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:  # fmt: skip
    """``num`` numbers from ``start`` to ``stop`` evenly spaced on a log scale (signs kept)."""
    num = _concrete_index(num, "'num' argument of jnp.geomspace")
    axis = _concrete_index(axis, "'axis' argument of jnp.geomspace")
    if dtype is None:
        out_dtype = _inexact(dtypes.result_type(start, stop))
    else:
        out_dtype = dtypes.check_user_dtype_supported(dtype, "geomspace")
    compute = _inexact(out_dtype)
    check_arraylike("geomspace", start, stop)
    lo, hi = _asarray(start).astype(compute), _asarray(stop).astype(compute)
    sign = ufuncs_math.sign(lo)
    res = sign * logspace(ufuncs_math.log10(lo / sign), ufuncs_math.log10(hi / sign), num, endpoint=endpoint, base=10.0,
                          dtype=compute, axis=0)  # fmt: skip
    axis = canonicalize_axis(axis, res.ndim)
    if axis != 0:
        res = lax.transpose(res, (*range(1, axis + 1), 0, *range(axis + 1, res.ndim)))
    return lax.convert_element_type(res, out_dtype)


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any) -> Any:
    """``function`` evaluated on the index grid of ``shape`` (vmapped over each axis, as JAX does)."""
    dims = creation.canonicalize_shape(shape, context="shape argument of jnp.fromfunction()")
    for i in range(len(dims)):
        in_axes = [0 if i == j else None for j in range(len(dims))]
        function = vmap(function, in_axes=tuple(in_axes[::-1]))
    return function(*(arange(s, dtype=dtype) for s in dims), **kwargs)


# ---------------------------------------------------------------------------
# Index tricks


def _grid_1d(s: slice, op_name: str) -> Any:
    start = core.concrete_or_error(s.start, f"slice start of jnp.{op_name}") or 0
    stop = core.concrete_or_error(s.stop, f"slice stop of jnp.{op_name}")
    step = core.concrete_or_error(s.step, f"slice step of jnp.{op_name}") or 1
    if np.iscomplex(step):
        return creation.linspace(start, stop, int(abs(step)))
    return arange(start, stop, step)


class _Mgrid:
    """``mgrid[a:b:s, ...]``: the dense grid of the slices' ranges (a complex step counts points)."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_1d(key, "mgrid")
        grids = promote_dtypes(*(_grid_1d(k, "mgrid") for k in key))
        out = matrix_ops.meshgrid(*grids, indexing="ij", sparse=False)
        if len(out) == 0:
            return arange(0)
        return shape_ops.stack(out, 0)


class _Ogrid:
    """``ogrid[a:b:s, ...]``: the open (broadcastable) grid of the slices' ranges."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_1d(key, "ogrid")
        grids = promote_dtypes(*(_grid_1d(k, "ogrid") for k in key))
        return list(matrix_ops.meshgrid(*grids, indexing="ij", sparse=True))


class _AxisConcat:
    """``r_[...]``/``c_[...]``: concatenate arrays, scalars and slice ranges, with NumPy's string directives."""

    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        directive = items[0]
        if isinstance(directive, str):
            items = items[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec: list[Any] = directive.split(",")
                vec = vec + params[len(vec):] if len(vec) < 4 else [*vec[:3], params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        out = []
        for item in items:
            if isinstance(item, slice):
                new = _grid_1d(item, self.op_name)
                item_ndim = 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                new = array(item, copy=False)
                item_ndim = new.ndim
            new = array(new, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                order = tuple(range(ndmin))
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                new = shape_ops.transpose(new, order[shift:] + order[:shift])
            out.append(new)
        res = shape_ops.concatenate(tuple(out), axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = shape_ops.expand_dims(res, matrix)
        return res

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    """``jnp.r_``: concatenation along the first axis."""

    axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"


class CClass(_AxisConcat):
    """``jnp.c_``: concatenation along the last axis, 1-D pieces as columns."""

    axis, ndmin, trans1d, op_name = -1, 2, 0, "c_"


mgrid = _Mgrid()
ogrid = _Ogrid()
r_ = RClass()
c_ = CClass()
s_ = np.s_
index_exp = np.index_exp


# ---------------------------------------------------------------------------
# Bits


def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Any:
    """The truth values of ``a`` packed eight to a ``uint8`` along ``axis`` (zero-padded at the end)."""
    check_arraylike("packbits", a)
    arr = _asarray(a)
    if not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    arr = lax.ne(arr, lax.full((), 0, arr.dtype)).astype("uint8")
    bits = arange(8, dtype="uint8")
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr = shape_ops.ravel(arr)
        axis = 0
    arr = shape_ops.swapaxes(arr, axis, -1)
    remainder = arr.shape[-1] % 8
    if remainder:
        arr = lax.pad(arr, np.uint8(0), [(0, 0, 0)] * (arr.ndim - 1) + [(0, 8 - remainder, 0)])
    arr = arr.reshape((*arr.shape[:-1], arr.shape[-1] // 8, 8))
    bits = shape_ops.expand_dims(bits, tuple(range(arr.ndim - 1)))
    packed = reductions.sum(ufuncs.left_shift(arr, bits), axis=-1).astype("uint8")
    return shape_ops.swapaxes(packed, axis, -1)


def unpackbits(a: ArrayLike, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Any:
    """The bits of a ``uint8`` array, one ``uint8`` 0/1 per bit along ``axis`` (the first ``count``)."""
    check_arraylike("unpackbits", a)
    arr = _asarray(a)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = ufuncs.left_shift(asarray(1), arange(8, dtype="uint8"))
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr = shape_ops.ravel(arr)
        axis = 0
    arr = shape_ops.swapaxes(arr, axis, -1)
    picked = ufuncs.bitwise_and(arr[..., None], shape_ops.expand_dims(bits, tuple(range(arr.ndim))))
    unpacked = (picked > 0).astype("uint8")
    unpacked = unpacked.reshape((*unpacked.shape[:-2], -1))
    if count is not None:
        if count > unpacked.shape[-1]:
            extra = count - unpacked.shape[-1]
            unpacked = lax.pad(unpacked, np.uint8(0), [(0, 0, 0)] * (unpacked.ndim - 1) + [(0, extra, 0)])
        else:
            unpacked = unpacked[..., :count]
    return shape_ops.swapaxes(unpacked, axis, -1)
