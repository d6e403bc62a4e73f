"""Sorting, cumulative reductions, searching, counting and set operations, as ``jax.numpy`` has them.

Sections: sorting (sort, argsort, lexsort, partition, argpartition),
cumulative reductions (cumsum, cumprod, their nan- and array-API variants),
searching (searchsorted, digitize), nonzero elements (nonzero, flatnonzero,
argwhere, count_nonzero), unique values, set operations (isin, intersect1d,
union1d, setdiff1d, setxor1d) and counting (bincount, histogram,
histogram_bin_edges).

Each function follows JAX 0.10.2's algorithm and is staged as a ``jit``
named as JAX names it where JAX does, so jaxprs show the same calls.

Data-dependent sizes: the number of nonzero or unique elements depends on
the values, so ``nonzero``, ``argwhere``, ``unique``, the set operations and
``bincount`` (without ``length``) need concrete input. Under a
transformation they raise JAX's ``ConcretizationTypeError`` unless a static
``size=`` (``length=``) is given; results are then truncated, or padded with
``fill_value``.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, overload

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.array import Array as _Array
from minijax.numpy import util
from minijax.numpy.creation import arange, asarray, full, full_like, linspace, ones, ones_like, zeros
from minijax.numpy.reductions import all as all_, any as _any, max as _max, min as _min, ptp, sum as _sum
from minijax.numpy.shape_ops import atleast_1d, clip, concatenate, moveaxis, ravel, swapaxes, transpose, vstack, where3
from minijax.numpy.ufuncs import isnan
from minijax.numpy.util import ArrayLike
from minijax.primitives.indexing import GatherDimensionNumbers
from minijax.stages import jit
from minijax.vectorization import vmap

__all__ = [
    "argpartition",
    "argsort",
    "argwhere",
    "bincount",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "digitize",
    "flatnonzero",
    "histogram",
    "histogram_bin_edges",
    "intersect1d",
    "isin",
    "lexsort",
    "nancumprod",
    "nancumsum",
    "nonzero",
    "partition",
    "searchsorted",
    "setdiff1d",
    "setxor1d",
    "sort",
    "sort_complex",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "where",
]

Array = Any
Fn = Callable[..., Any]


def _staged(name: str, fun: Fn, static_argnames: tuple[str, ...] = ()) -> Fn:
    """``fun`` as a jit named ``name``, as JAX stages these functions."""
    fun.__name__ = fun.__qualname__ = name
    staged: Fn = jit(fun, static_argnames=static_argnames)
    return staged


def _asarray(name: str, *args: Any) -> list[Any]:
    """JAX's ensure_arraylike: arrays and scalars become arrays; anything else is a TypeError."""
    util.check_arraylike(name, *args)
    return [asarray(a) for a in args]


def _int_dtype_for_dim(n: int) -> np.dtype[Any]:
    """A signed dtype that holds the indices of an axis of ``n``: int32, or int64 beyond it."""
    return np.dtype(np.int64) if n > np.iinfo(np.int32).max else np.dtype(np.int32)


def _index_dtype(n: int) -> np.dtype[Any]:
    """argsort's index dtype: the default int (int64 under x64, as NumPy's), or int64 beyond int32."""
    return np.dtype(np.int64) if n > np.iinfo(np.int32).max else dtypes.default_int_dtype()


def _dtype(x: Any) -> np.dtype[Any]:
    return dtypes.dtype(x)


def _size(x: Any) -> int:
    return core.shape_size(util.shape(x))


# ---------------------------------------------------------------------------
# Gathering rows (axis 0) at integer indices (scatters are written with ``.at[]``)


def _take(x: Array, idx: Array, mode: str = "clip", fill_value: Any = None) -> Array:
    """``x[idx]`` for a 1-d integer ``idx``: one gather of rows. ``mode='fill'`` reads
    ``fill_value`` (or the dtype's default) for out-of-range rows; ``'clip'`` clamps."""
    shape = util.shape(x)
    numbers = GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape))), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    indices = lax.expand_dims(idx, (util.ndim(idx),))
    return lax.gather(x, indices, numbers, (1, *shape[1:]), mode=mode, fill_value=fill_value)


def _diff(x: Array) -> Array:
    """``x[1:] - x[:-1]`` of a 1-d array."""
    return x[1:] - x[:-1]


# ===========================================================================
# Sorting


def _check_sort_args(name: str, kind: Any, order: Any) -> None:
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def _sort(a: Array, axis: int | None = -1, *, kind: Any = None, order: Any = None, stable: bool = True,
          descending: bool = False) -> Array:
    _check_sort_args("sort", kind, order)
    if axis is None:
        a, axis = ravel(a), 0
    dimension = util.canonicalize_axis(axis, util.ndim(a))
    result = lax.sort(a, dimension=dimension, is_stable=stable)
    return lax.rev(result, dimensions=[dimension]) if descending else result


_sort_jit = _staged("sort", _sort, ("axis", "kind", "order", "stable", "descending"))


def sort(a: ArrayLike, axis: int | None = -1, *, kind: None = None, order: None = None, stable: bool = True,
         descending: bool = False) -> Array:
    """A sorted copy of ``a`` along ``axis`` (flattened when ``axis`` is None).

    NaNs sort to the end; -0.0 and 0.0 are equal (kept in their order when
    ``stable``). ``descending`` reverses the result.
    """
    (arr,) = _asarray("sort", a)
    return _sort_jit(arr, axis=axis, kind=kind, order=order, stable=stable, descending=descending)


def _argsort(a: Array, axis: int | None = -1, *, kind: Any = None, order: Any = None, stable: bool = True,
             descending: bool = False, dtype: Any = None) -> Array:
    _check_sort_args("argsort", kind, order)
    if axis is None:
        a, axis = ravel(a), 0
    shape = util.shape(a)
    dimension = util.canonicalize_axis(axis, len(shape))
    if dtype is not None:
        index_dtype = dtypes.check_user_dtype_supported(dtype, "argsort")
    else:
        index_dtype = _index_dtype(shape[dimension])
    iota = lax.broadcasted_iota(index_dtype, shape, dimension)
    # A stable descending sort: sort the reversed array (equal elements then
    # come latest-first) and reverse the result (earliest-first again).
    if descending and stable:
        a = lax.rev(a, dimensions=[dimension])
        iota = lax.rev(iota, dimensions=[dimension])
    _, indices = lax.sort_key_val(a, iota, dimension=dimension, is_stable=stable)
    return lax.rev(indices, dimensions=[dimension]) if descending else indices


_argsort_jit = _staged("argsort", _argsort, ("axis", "kind", "order", "stable", "descending", "dtype"))


def argsort(a: ArrayLike, axis: int | None = -1, *, kind: None = None, order: None = None, stable: bool = True,
            descending: bool = False, dtype: Any = None) -> Array:
    """Indices that sort ``a`` along ``axis`` (of the flattened array when ``axis`` is None).

    The indices have the default integer dtype unless ``dtype`` is given.
    """
    (arr,) = _asarray("argsort", a)
    return _argsort_jit(arr, axis=axis, kind=kind, order=order, stable=stable, descending=descending, dtype=dtype)


def _lexsort(keys: tuple[Array, ...], axis: int = -1) -> Array:
    shape = util.shape(keys[0])
    if not shape:
        return lax.full((), 0, dtypes.default_int_dtype())
    dimension = util.canonicalize_axis(axis, len(shape))
    iota = lax.broadcasted_iota(_index_dtype(shape[dimension]), shape, dimension)
    # The last key is the primary one: it goes first to lax.sort.
    result: tuple[Array, ...] = lax.sort((*keys[::-1], iota), dimension=dimension, num_keys=len(keys))
    return result[-1]


_lexsort_jit = _staged("lexsort", _lexsort, ("axis",))


def lexsort(keys: Sequence[ArrayLike], axis: int = -1) -> Array:
    """Indices that sort by several keys, the *last* key primary (as NumPy's lexsort)."""
    key_arrays = tuple(_asarray("lexsort", *tuple(keys)))
    if len(key_arrays) == 0:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({util.shape(k) for k in key_arrays}) > 1:
        raise ValueError("all keys need to be the same shape")
    return _lexsort_jit(key_arrays, axis=axis)


def sort_complex(a: ArrayLike) -> Array:
    """``a`` sorted along its last axis (by real part, then imaginary part), as a complex array."""
    (arr,) = _asarray("sort_complex", a)
    out = lax.sort(arr, dimension=arr.ndim - 1)
    parts = _dtype(out) if dtypes.issubdtype(_dtype(out), np.floating) else dtypes.default_float_dtype()
    if dtypes.issubdtype(_dtype(out), np.complexfloating):
        return out
    return lax.convert_element_type(out, np.result_type(parts, np.complex64))


def _bottom(arr: Array, count: int, want_indices: bool) -> Array:
    """The ``count`` smallest entries along the last axis (or their indices), via top_k of the negation."""
    if dtypes.issubdtype(_dtype(arr), np.unsignedinteger):
        # -(x + 1) maps unsigned 0..max to a decreasing run without a wrap at 0.
        values, indices = lax.top_k(-(arr + 1), count)
        return indices if want_indices else -values - 1
    values, indices = lax.top_k(-arr, count)
    return indices if want_indices else -values


def _partition(a: Array, kth: int, axis: int = -1) -> Array:
    axis = util.canonicalize_axis(axis, util.ndim(a))
    kth = util.canonicalize_axis(kth, util.shape(a)[axis])
    arr = swapaxes(a, axis, -1)
    n = util.shape(arr)[-1]
    bottom = _bottom(arr, kth + 1, want_indices=False)
    top, _ = lax.top_k(arr, n - kth - 1)
    return swapaxes(lax.concatenate([bottom, top], util.ndim(arr) - 1), -1, axis)


_partition_jit = _staged("partition", _partition, ("kth", "axis"))


def partition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """A copy of ``a`` with the ``kth`` entry along ``axis`` in its sorted place, smaller
    entries before it and larger ones after (in an unspecified order)."""
    (arr,) = _asarray("partition", a)
    return _partition_jit(arr, kth=operator.index(kth), axis=operator.index(axis))


def _argpartition(a: Array, kth: int, axis: int = -1) -> Array:
    axis = util.canonicalize_axis(axis, util.ndim(a))
    kth = util.canonicalize_axis(kth, util.shape(a)[axis])
    arr = swapaxes(a, axis, -1)
    shape = util.shape(arr)
    bottom = _bottom(arr, kth + 1, want_indices=True)
    # The top indices come from a proxy in which the bottom ones are 0 and the
    # rest 1, so that duplicates of the kth value are not taken twice.
    def set_to_zero(row: Array, i: Array) -> Array:
        return row.at[i].set(0)

    for _ in range(len(shape) - 1):
        set_to_zero = vmap(set_to_zero)
    proxy = set_to_zero(lax.full(shape, 1.0), bottom)
    _, top = lax.top_k(proxy, shape[-1] - kth - 1)
    return swapaxes(lax.concatenate([bottom, top], len(shape) - 1), -1, axis)


_argpartition_jit = _staged("argpartition", _argpartition, ("kth", "axis"))


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """Indices that partition ``a`` at ``kth`` along ``axis`` (see ``partition``)."""
    (arr,) = _asarray("argpartition", a)
    return _argpartition_jit(arr, kth=operator.index(kth), axis=operator.index(axis))


# ===========================================================================
# Cumulative reductions


def _promoted_integer(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """bool and narrow integers accumulate in the default integer (NumPy's rule for sums)."""
    if dtype == np.bool_:
        return dtypes.default_int_dtype()
    if dtypes.issubdtype(dtype, np.unsignedinteger) and dtype.itemsize < dtypes.default_uint_dtype().itemsize:
        return dtypes.default_uint_dtype()
    if dtypes.issubdtype(dtype, np.signedinteger) and dtype.itemsize < dtypes.default_int_dtype().itemsize:
        return dtypes.default_int_dtype()
    return dtype


def _cumulative_reduction(name: str, reduction: Fn, a: Array, axis: int | None, dtype: Any,
                          fill_nan: bool = False, fill_value: Any = 0, promote_integers: bool = False) -> Array:
    """JAX's recipe: flatten for axis=None; result dtype (bool -> default int; dtype=bool
    accumulates ``a != 0`` in an integer); compute; convert to the result dtype."""
    if axis is None or util.ndim(a) == 0:
        a = lax.reshape(a, (_size(a),))
    if axis is None:
        axis = 0
    axis = util.canonicalize_axis(axis, util.ndim(a))
    a_dtype = _dtype(a)
    if fill_nan:
        a = where(isnan(a), np.array(fill_value, a_dtype), a)
    if dtype is None:
        result_type = _promoted_integer(a_dtype) if promote_integers or a_dtype == np.bool_ else a_dtype
        computation_type = result_type
    elif dtypes.canonicalize_dtype(dtype) == np.bool_:
        # Accumulating bools as bools would lose counts: count nonzeros in an integer.
        result_type = np.dtype(np.bool_)
        if a_dtype != result_type:
            a = lax.ne(a, lax.full((), 0, a_dtype))
        computation_type = _promoted_integer(result_type)
    else:
        result_type = dtypes.check_user_dtype_supported(dtype, name)
        computation_type = result_type
    a = lax.convert_element_type(a, computation_type)
    return lax.convert_element_type(reduction(a, axis), result_type)


def _cumulative(name: str, reduction: Fn, **options: Any) -> Fn:
    def impl(a: Array, axis: int | None = None, dtype: Any = None) -> Array:
        return _cumulative_reduction(name, reduction, a, axis, dtype, **options)

    staged = _staged(name, impl, ("axis", "dtype"))

    def public(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
        util.check_no_out(name, out)
        (arr,) = _asarray(name, a)
        return staged(arr, axis=None if axis is None else operator.index(axis), dtype=dtype)

    public.__name__ = public.__qualname__ = name
    return public


cumsum = _cumulative("cumsum", lax.cumsum)
cumsum.__doc__ = "Cumulative sum along ``axis`` (of the flattened array when ``axis`` is None)."
cumprod = _cumulative("cumprod", lax.cumprod)
cumprod.__doc__ = "Cumulative product along ``axis`` (of the flattened array when ``axis`` is None)."
nancumsum = _cumulative("nancumsum", lax.cumsum, fill_nan=True, fill_value=0)
nancumsum.__doc__ = "Cumulative sum treating NaNs as 0."
nancumprod = _cumulative("nancumprod", lax.cumprod, fill_nan=True, fill_value=1)
nancumprod.__doc__ = "Cumulative product treating NaNs as 1."
_cumsum_with_promotion = _cumulative("_cumsum_with_promotion", lax.cumsum, promote_integers=True)


def _array_api_cumulative(name: str, what: str, base: Fn, initial: int, x: ArrayLike, axis: int | None, dtype: Any,
                          include_initial: bool) -> Array:
    (arr,) = _asarray(name, x)
    if util.ndim(arr) == 0:
        raise ValueError(
            f"The input must be non-scalar to take a cumulative {what}, however a scalar value or scalar array was given."
        )
    if axis is None:
        axis = 0
        if util.ndim(arr) > 1:
            raise ValueError(
                f"The input array has rank {util.ndim(arr)}, however axis was not set to an explicit value. "
                "The axis argument is only optional for one-dimensional arrays."
            )
    axis = util.canonicalize_axis(axis, util.ndim(arr))
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, name)
    out = base(arr, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(util.shape(arr))
        shape[axis] = 1
        out = lax.concatenate([lax.full(shape, initial, dtype=_dtype(out)), out], dimension=axis)
    return out


def cumulative_sum(x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Array:
    """The array API's cumulative sum: small integers accumulate in the default integer;
    ``include_initial`` puts a 0 in front."""
    return _array_api_cumulative("cumulative_sum", "sum", _cumsum_with_promotion, 0, x, axis, dtype, include_initial)


def cumulative_prod(x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Array:
    """The array API's cumulative product; ``include_initial`` puts a 1 in front."""
    return _array_api_cumulative("cumulative_prod", "product", _cumprod_unstaged, 1, x, axis, dtype, include_initial)


def _cumprod_unstaged(a: Array, axis: int, dtype: Any) -> Array:
    # JAX's cumulative_prod calls the recipe directly, without cumprod's jit.
    return _cumulative_reduction("cumulative_prod", lax.cumprod, a, axis, dtype)


# ===========================================================================
# Searching


def _canonical_float(x: Array) -> Array:
    """``x`` with -0.0 as 0.0 and every NaN as NaN: the values sort compares."""
    dt = _dtype(x)
    if not dtypes.issubdtype(dt, np.floating):
        return x
    zero = lax.full((), 0, dt)
    x = lax.select(lax.eq(x, zero), lax.full_like(x, 0), x)
    return lax.select(lax.ne(x, x), lax.full_like(x, np.nan), x)


def _sort_less(x: Array, y: Array, or_equal: bool) -> Array:
    """``x < y`` (or ``<=``) in sort's order: -0.0 equals 0.0, NaNs after everything."""
    if not dtypes.issubdtype(_dtype(x), np.floating):
        return lax.le(x, y) if or_equal else lax.lt(x, y)
    x, y = _canonical_float(x), _canonical_float(y)
    y_nan = lax.ne(y, y)
    if or_equal:
        return lax.bitwise_or(lax.le(x, y), y_nan)
    return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(y_nan, lax.eq(x, x)))


def _searchsorted_scan(a: Array, q: Array, side: str, dtype: np.dtype[Any], unroll: bool) -> Array:
    """Binary search: (low, high] brackets the answer; log2(n + 1) halvings, all queries at once."""
    n = util.shape(a)[0]
    if n == 0:
        return lax.full(util.shape(q), 0, dtype)
    unsigned = np.dtype(np.uint64) if dtype.itemsize == 8 else np.dtype(np.uint32)
    levels = int(np.ceil(np.log2(n + 1)))
    flat = lax.reshape(q, (_size(q),))

    def halve(state: tuple[Array, Array], _: Any) -> tuple[tuple[Array, Array], tuple[()]]:
        low, high = state
        mid = low + (high - low) // lax.full((), 2, unsigned)
        at_mid = _take(a, mid)
        # left: the first place with q <= a[i]; right: the first with q < a[i].
        go_left = _sort_less(flat, at_mid, or_equal=side == "left")
        return (lax.select(go_left, low, mid), lax.select(go_left, mid, high)), ()

    init = (lax.full(util.shape(flat), 0, unsigned), lax.full(util.shape(flat), n, unsigned))
    (_, high), _ = lax.scan(halve, init, None, length=levels, unroll=levels if unroll else 1)
    return lax.reshape(lax.convert_element_type(high, dtype), util.shape(q))


def _rank(x: Array, working: np.dtype[Any]) -> Array:
    """The position of each element of the 1-d ``x`` in its stable sort."""
    idx = lax.iota(working, util.shape(x)[0])
    _, perm = lax.sort_key_val(x, idx)
    return lax.full_like(idx, 0).at[perm].set(idx)


def _searchsorted_sort(a: Array, q: Array, side: str, dtype: np.dtype[Any]) -> Array:
    """Co-sorting: a query's rank among (queries and a) minus its rank among the queries."""
    working = np.dtype(np.int32) if _size(a) + _size(q) <= np.iinfo(np.int32).max else np.dtype(np.int64)
    flat = lax.reshape(q, (_size(q),))
    if side == "left":
        index = _rank(lax.concatenate([flat, a], 0), working)[: _size(q)]
    else:
        index = _rank(lax.concatenate([a, flat], 0), working)[_size(a) :]
    return lax.convert_element_type(lax.reshape(lax.sub(index, _rank(flat, working)), util.shape(q)), dtype)


def _searchsorted_compare_all(a: Array, q: Array, side: str, dtype: np.dtype[Any]) -> Array:
    """Count the elements of ``a`` that go before each query: an n-by-m comparison."""
    n, qs = util.shape(a)[0], util.shape(q)
    rows = lax.broadcast_in_dim(a, (n, *qs), (0,))
    cols = lax.broadcast_in_dim(q, (n, *qs), tuple(range(1, len(qs) + 1)))
    before = _sort_less(rows, cols, or_equal=side == "right")
    return lax.reduce_sum(lax.convert_element_type(before, dtype), (0,))


def _searchsorted(a: Array, v: Array, sorter: Array | None = None, *, side: str = "left", method: str = "scan") -> Array:
    if util.ndim(a) != 1:
        raise ValueError("a should be 1-dimensional")
    a, v = util.promote_dtypes(a, v)
    if sorter is not None:
        a = _take(a, sorter)
    dtype = _int_dtype_for_dim(util.shape(a)[0])
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of ['left', 'right'].")
    if method in ("scan", "scan_unrolled"):
        return _searchsorted_scan(a, v, side, dtype, unroll=method == "scan_unrolled")
    if method == "sort":
        return _searchsorted_sort(a, v, side, dtype)
    if method == "compare_all":
        return _searchsorted_compare_all(a, v, side, dtype)
    raise ValueError(f"Unsupported method: {method}")


_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")
_searchsorted_jit = _staged("searchsorted", _searchsorted, ("side", "method"))


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None, *,
                 method: str = "scan") -> Array:
    """Where to insert ``v`` into the sorted 1-d ``a`` to keep it sorted.

    ``side='left'`` gives the first such place, ``'right'`` the last. ``sorter``:
    indices that sort ``a``. ``method``: 'scan' (binary search, the default),
    'scan_unrolled', 'sort' (co-sorting) or 'compare_all' (an all-pairs count).
    """
    if method not in _SEARCH_METHODS:
        raise ValueError(f"invalid argument method={method!r}, expected one of {sorted(_SEARCH_METHODS)}")
    args = _asarray("searchsorted", a, v) if sorter is None else _asarray("searchsorted", a, v, sorter)
    return _searchsorted_jit(*args, side=side, method=method)


def _digitize(x: Array, bins: Array, right: bool = False, method: str | None = None) -> Array:
    if util.ndim(bins) != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if util.shape(bins)[0] == 0:
        return zeros(util.shape(x), dtype=np.int32)
    side = "right" if not right else "left"
    kwds: dict[str, str] = {} if method is None else {"method": method}
    return where(
        bins[-1] >= bins[0],
        searchsorted(bins, x, side=side, **kwds),
        util.shape(bins)[0] - searchsorted(bins[::-1], x, side=side, **kwds),
    )


_digitize_jit = _staged("digitize", _digitize, ("right", "method"))


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False, *, method: str | None = None) -> Array:
    """The bin index of each ``x``: bins[i-1] <= x < bins[i] (``right``: bins[i-1] < x <= bins[i]).

    ``bins`` may increase or decrease.
    """
    x_arr, bins_arr = _asarray("digitize", x, bins)
    right = bool(core.concrete_or_error(right, "right argument of jnp.digitize()"))
    return _digitize_jit(x_arr, bins_arr, right=right, method=method)


# ===========================================================================
# Nonzero elements


def nonzero(a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None
            ) -> tuple[Array, ...]:
    """The indices of the nonzero elements of ``a``, one array per axis.

    Needs concrete input, unless ``size`` (the number of indices to return) is
    given: then results are truncated or padded with ``fill_value`` (default 0).
    """
    (arr,) = _asarray("nonzero", a)
    shape = util.shape(arr)
    if not shape:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() instead.")
    mask = arr if _dtype(arr) == np.bool_ else lax.ne(arr, lax.full((), 0, _dtype(arr)))
    count = _sum(mask) if size is None else size
    calculated = operator.index(core.concrete_or_error(
        count, "The size argument of jnp.nonzero must be statically specified to use jnp.nonzero within JAX "
        "transformations."))  # fmt: skip
    if _size(arr) == 0 or calculated == 0:
        return tuple(zeros(calculated, dtypes.default_int_dtype()) for _ in shape)
    # Position k of the result is the number of elements whose running count
    # of nonzeros is at most k: bincount the running counts, accumulate.
    flat_indices = cumsum(bincount(cumsum(mask), length=calculated))
    strides = np.cumprod(shape[::-1])[::-1] // shape
    index_dtype = _dtype(flat_indices)
    # Strides in the indices' dtype, sizes as Python ints (weak), as JAX writes them.
    out = tuple((flat_indices // index_dtype.type(s)) % int(n) for s, n in zip(strides, shape))
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else len(shape) * (fill_value,)
        if len(fills) != len(shape) or builtins.any(np.shape(f) != () for f in fills):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {len(shape)}; got {fill_value}")
        padding = arange(calculated) >= _sum(mask)
        out = tuple(where(padding, f, entry) for f, entry in zip(fills, out))
    return out


# (_Array: the real class; this module's ``Array`` names Any.)
@overload
def where(condition: ArrayLike, /, *, size: int | None = None, fill_value: Any = None) -> tuple[_Array, ...]: ...
@overload
def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike, /) -> _Array: ...
def where(condition: ArrayLike, x: ArrayLike = None, y: ArrayLike = None, /, *, size: int | None = None,
          fill_value: Any = None) -> _Array | tuple[_Array, ...]:
    """``jnp.where(condition, x, y)``: elements of ``x`` where ``condition`` holds, else of ``y``.

    With one argument it is ``jnp.nonzero(condition, size=size, fill_value=fill_value)``.
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where function.")
    return where3(condition, x, y)


def flatnonzero(a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """The indices of the nonzero elements of the flattened ``a`` (see ``nonzero``)."""
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """The indices of the nonzero elements of ``a``, one row per element (see ``nonzero``)."""
    (arr,) = _asarray("argwhere", a)
    result = transpose(vstack(nonzero(atleast_1d(arr), size=size, fill_value=fill_value)))
    rows = util.shape(result)[0]
    if util.ndim(arr) == 0:
        return lax.reshape(result[:0], (rows, 0))
    return lax.reshape(result, (rows, util.ndim(arr)))


def _count_nonzero(a: Array, axis: Any = None, keepdims: bool = False) -> Array:
    nonzero_ = lax.ne(a, lax.full((), 0, _dtype(a)))
    return _sum(nonzero_, axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


_count_nonzero_jit = _staged("count_nonzero", _count_nonzero, ("axis", "keepdims"))


def count_nonzero(a: ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Array:
    """The number of nonzero elements along ``axis`` (all of them by default)."""
    (arr,) = _asarray("count_nonzero", a)
    axis = tuple(axis) if isinstance(axis, list) else axis
    return _count_nonzero_jit(arr, axis=axis, keepdims=keepdims)


# ===========================================================================
# Unique values

_UNIQUE_SIZE_HINT = (
    "To make jnp.unique() compatible with JIT and other transforms, you can specify a concrete value for the size "
    "argument, which will determine the output size."
)


def _unique_sorted_mask(ar: Array, axis: int, equal_nan: bool) -> tuple[Array, Array, Array]:
    """The slices along ``axis`` sorted (lexicographically), whether each starts a new
    value, and the sorting permutation."""
    aux = moveaxis(ar, axis, 0)
    size, *rest = util.shape(aux)
    row = core.shape_size(rest)
    if row == 0:
        size, perm = 1, zeros(1, dtype=dtypes.default_int_dtype())
    else:
        columns = lax.transpose(lax.reshape(aux, (size, row)), (1, 0))
        perm = lexsort(tuple(columns[i] for i in range(row - 1, -1, -1)))
    aux = _take(aux, perm)
    if _size(aux):
        def neq(x: Array, y: Array) -> Array:
            if equal_nan and dtypes.issubdtype(_dtype(x), np.inexact):
                return lax.bitwise_and(lax.ne(x, y), lax.bitwise_not(lax.bitwise_and(isnan(x), isnan(y))))
            return lax.ne(x, y)

        differs = _any(neq(aux[1:], aux[:-1]), tuple(range(1, util.ndim(aux))))
        mask = concatenate([ones(1, dtype=np.bool_), differs])
    else:
        mask = zeros(size, dtype=np.bool_)
    return aux, mask, perm


_unique_sorted_mask_jit = _staged("_unique_sorted_mask", _unique_sorted_mask, ("axis", "equal_nan"))


def _unique(ar: Array, axis: int, return_index: bool = False, return_inverse: bool = False,
            return_counts: bool = False, equal_nan: bool = True, size: int | None = None,
            fill_value: ArrayLike | None = None, return_true_size: bool = False) -> Any:
    axis = util.canonicalize_axis(axis, util.ndim(ar))
    if util.shape(ar)[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, fill_value must be specified")
    aux, mask, perm = _unique_sorted_mask_jit(ar, axis=axis, equal_nan=equal_nan)
    if size is None:
        concrete = np.asarray(core.concrete_or_error(mask, "The error arose in jnp.unique(). " + _UNIQUE_SIZE_HINT))
        ind = asarray(np.nonzero(concrete)[0].astype(dtypes.default_int_dtype()))
    else:
        ind = nonzero(mask, size=size)[0]
    result = _take(aux, ind) if _size(aux) else aux
    if size is not None and fill_value is not None:
        fill = asarray(fill_value).astype(_dtype(result))
        if util.shape(result)[0]:
            valid = lax.expand_dims(arange(size) < _sum(mask), tuple(range(1, util.ndim(result))))
            result = where(valid, result, fill)
        else:
            result = full_like(result, fill, shape=(size, *util.shape(result)[1:]))
    result = moveaxis(result, 0, axis)
    ret: list[Array] = [result]
    if return_index:
        ret.append(_take(perm, ind) if _size(aux) else perm)
    if return_inverse:
        if _size(aux):
            position = cumsum(mask) - 1
            inverse = zeros(util.shape(mask), dtype=dtypes.default_int_dtype()).at[perm].set(position)
        else:
            inverse = zeros(util.shape(ar)[axis], dtype=dtypes.default_int_dtype())
        ret.append(inverse)
    if return_counts:
        n = util.shape(mask)[0]
        if _size(aux):
            if size is None:
                starts = concatenate([ind, full(1, n, dtype=_dtype(ind))])
            else:
                starts = nonzero(mask, size=size + 1)[0]
                # Padding past the last unique value starts at the end: a count of 0.
                starts = concatenate([starts[:1], where(starts[1:] != 0, starts[1:], n)])
            ret.append(_diff(starts))
        elif util.shape(ar)[axis]:
            ret.append(full((1,), util.shape(ar)[axis], dtype=dtypes.default_int_dtype()))
        else:
            ret.append(zeros(0, dtype=dtypes.default_int_dtype()))
    if return_true_size:
        ret.append(_sum(mask))
    return ret[0] if len(ret) == 1 else tuple(ret)


def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, size: int | None = None,
           fill_value: ArrayLike | None = None, sorted: bool = True) -> Any:
    """The sorted unique values of ``ar`` (of its slices along ``axis``), and optionally the index
    of each one's first occurrence, the inverse indices and the counts.

    Needs concrete input unless ``size`` is given: then the first ``size``
    unique values, padded with ``fill_value`` (default: the smallest value).
    """
    (arr,) = _asarray("unique", ar)
    if size is None:
        core.concrete_or_error(arr, "The error arose for the first argument of jnp.unique(). " + _UNIQUE_SIZE_HINT)
    else:
        size = operator.index(core.concrete_or_error(
            size, "The error arose for the size argument of jnp.unique(). " + _UNIQUE_SIZE_HINT))  # fmt: skip
    shape = util.shape(arr)
    if axis is None:
        axis_int, arr = 0, ravel(arr)
    else:
        axis_int = util.canonicalize_axis(axis, len(shape))
    result = _unique(arr, axis_int, return_index, return_inverse, return_counts, equal_nan=equal_nan, size=size,
                     fill_value=fill_value)  # fmt: skip
    if return_inverse and axis is None:
        at = 2 if return_index else 1
        result = (*result[:at], lax.reshape(result[at], shape), *result[at + 1 :])
    return result


class _UniqueAllResult(NamedTuple):
    """What ``unique_all`` returns."""

    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class _UniqueCountsResult(NamedTuple):
    """What ``unique_counts`` returns."""

    values: Array
    counts: Array


class _UniqueInverseResult(NamedTuple):
    """What ``unique_inverse`` returns."""

    values: Array
    inverse_indices: Array


def unique_all(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> _UniqueAllResult:
    """The array API's unique_all: values, first indices, inverse indices and counts (NaNs distinct)."""
    values, indices, inverse, counts = unique(x, return_index=True, return_inverse=True, return_counts=True,
                                              equal_nan=False, size=size, fill_value=fill_value)  # fmt: skip
    return _UniqueAllResult(values=values, indices=indices, inverse_indices=inverse, counts=counts)


def unique_counts(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> _UniqueCountsResult:
    """The array API's unique_counts: values and counts (NaNs distinct)."""
    values, counts = unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueCountsResult(values=values, counts=counts)


def unique_inverse(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None
                   ) -> _UniqueInverseResult:
    """The array API's unique_inverse: values and inverse indices (NaNs distinct)."""
    values, inverse = unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueInverseResult(values=values, inverse_indices=inverse)


def unique_values(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """The array API's unique_values (NaNs distinct)."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# ===========================================================================
# Set operations


def _in1d(ar1: Array, ar2: Array, invert: bool, method: str = "auto", assume_unique: bool = False) -> Array:
    arr1, arr2 = util.promote_dtypes(ar1, ar2)
    arr1, arr2 = ravel(arr1), ravel(arr2)
    n1, n2 = _size(arr1), _size(arr2)
    if n1 == 0 or n2 == 0:
        return (ones if invert else zeros)(util.shape(arr1), dtype=np.bool_)
    if method in ("auto", "compare_all"):
        rows, cols = lax.expand_dims(arr1, (1,)), lax.expand_dims(arr2, (0,))
        if invert:
            return _all_last(rows != cols)
        return _any(rows == cols, -1)
    if method == "binary_search":
        arr2 = lax.sort(arr2)
        found = _take(arr2, searchsorted(arr2, arr1))
        return arr1 != found if invert else arr1 == found
    if method == "sort":
        if assume_unique:
            inverse: Array | None = None
        else:
            arr1, inverse = unique(arr1, size=n1, return_inverse=True, fill_value=_max(arr2))
        aux, order = lax.sort_key_val(concatenate([arr1, arr2]), arange(n1 + n2))
        # An element of arr1 sorted right before an equal element is in arr2.
        if invert:
            out = ones(util.shape(arr1), np.bool_).at[order[:-1]].set(aux[1:] != aux[:-1], mode="drop")
        else:
            out = zeros(util.shape(arr1), np.bool_).at[order[:-1]].set(aux[1:] == aux[:-1], mode="drop")
        return out if inverse is None else _take(out, inverse)
    raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', 'binary_search', 'sort', and 'auto'")


def _all_last(x: Array) -> Array:
    return all_(x, -1)


_in1d_jit = _staged("_in1d", _in1d, ("invert", "method", "assume_unique"))


def isin(element: ArrayLike, test_elements: ArrayLike, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto") -> Array:
    """Whether each element of ``element`` occurs in ``test_elements`` (the opposite when ``invert``).

    ``method``: 'compare_all' (the default 'auto'), 'binary_search' or 'sort'.
    """
    element_arr, test_arr = _asarray("isin", element, test_elements)
    result = _in1d_jit(element_arr, test_arr, invert=bool(invert), method=method, assume_unique=bool(assume_unique))
    return lax.reshape(result, util.shape(element_arr))


def _concrete_or_size(name: str, size: int | None, *arrays: Array) -> int | None:
    """``size`` as an int; or, without it, check the arrays are concrete (JAX's error otherwise)."""
    if size is None:
        for a in arrays:
            core.concrete_or_error(a, f"The error arose in {name}()")
        return None
    return operator.index(core.concrete_or_error(size, f"The error arose in {name}()"))


def _compress(x: Array, mask: Array) -> Array:
    """``x[mask]`` for a concrete boolean ``mask``."""
    picked = np.nonzero(np.asarray(mask))[0].astype(dtypes.default_int_dtype())
    return _take(x, asarray(picked))


def _fill_tail(vals: Array, count: Array, fill_value: ArrayLike | None) -> Array:
    """``vals`` with the entries from ``count`` on replaced: by ``fill_value``, or by the
    smallest kept value when it is None."""
    keep = arange(util.shape(vals)[0]) < count
    if fill_value is None:
        vals = where(keep, vals, _max(vals))
        return where(keep, vals, _min(vals))
    return where(keep, vals, fill_value)


def _concat_unique(arr1: Array, arr2: Array) -> tuple[Array, Array]:
    """The unique values of each, back to back (padding after), and their total number."""
    arr1, arr2 = ravel(arr1), ravel(arr2)
    arr1, n1 = _unique(arr1, 0, size=_size(arr1), return_true_size=True)
    arr2, n2 = _unique(arr2, 0, size=_size(arr2), return_true_size=True)
    arr = zeros(_size(arr1) + _size(arr2), dtype=dtypes.result_type(arr1, arr2))
    arr = lax.dynamic_update_slice(arr, arr1, (0,))
    arr = lax.dynamic_update_slice(arr, arr2, (n1,))
    return arr, n1 + n2


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *, size: int | None = None,
              fill_value: ArrayLike | None = None) -> Array:
    """The sorted unique values of ``ar1`` that are not in ``ar2``.

    Needs concrete input unless ``size`` is given (then padded with
    ``fill_value``, default 0).
    """
    arr1, arr2 = _asarray("setdiff1d", ar1, ar2)
    arr1, arr2 = ravel(arr1), ravel(arr2)
    size = _concrete_or_size("setdiff1d", size, arr1)
    fill = full_like(arr1, 0 if fill_value is None else fill_value, shape=())
    if _size(arr1) == 0:
        return full_like(arr1, fill, shape=size or 0)
    if not assume_unique:
        arr1 = unique(arr1, size=size and _size(arr1))
    mask = _in1d_jit(arr1, arr2, invert=True, method="auto", assume_unique=assume_unique)
    if size is None:
        return _compress(arr1, mask)
    if not assume_unique:
        # unique padded arr1 with its first value: those copies are not results.
        n_unique = _size(arr1) + 1 - _sum(arr1 == arr1[0])
        mask = where(arange(_size(arr1)) < n_unique, mask, False)
    return where(arange(size) < _sum(mask), _take(arr1, nonzero(mask, size=size)[0]), fill)


def union1d(ar1: ArrayLike, ar2: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """The sorted unique values found in either array (see ``unique`` for ``size``)."""
    arr1, arr2 = _asarray("union1d", ar1, ar2)
    size = _concrete_or_size("union1d", size, arr1, arr2)
    return unique(concatenate((arr1, arr2), axis=None), size=size, fill_value=fill_value)


def _setxor1d_size(arr1: Array, arr2: Array, fill_value: ArrayLike | None, *, assume_unique: bool, size: int) -> Array:
    if assume_unique:
        aux = sort(concatenate([arr1, arr2]))
        flag = concatenate([full(1, _size(aux) > 0, np.bool_), aux[1:] != aux[:-1], ones(1, np.bool_)])
    else:
        arr, num_unique = _concat_unique(arr1, arr2)
        mask = arange(_size(arr) + 1) < num_unique + 1
        _, aux = lax.sort([lax.bitwise_not(mask[1:]), arr], is_stable=True, num_keys=2)
        flag = concatenate([full(1, _size(aux) > 0, np.bool_), aux[1:] != aux[:-1], zeros(1, np.bool_)])
        flag = lax.bitwise_and(mask, flag.at[num_unique].set(True))
    aux_mask = lax.bitwise_and(flag[1:], flag[:-1])
    if _size(aux):
        indices = nonzero(aux_mask, size=size, fill_value=_size(aux))[0]
        vals = _take(aux, indices, mode="fill", fill_value=0)
    else:
        vals = zeros(size, _dtype(aux))
    return _fill_tail(vals, _sum(aux_mask), fill_value)


_setxor1d_size_jit = _staged("_setxor1d_size", _setxor1d_size, ("assume_unique", "size"))


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *, size: int | None = None,
             fill_value: ArrayLike | None = None) -> Array:
    """The sorted values found in exactly one of the arrays (see ``unique`` for ``size``)."""
    a1, a2 = _asarray("setxor1d", ar1, ar2)
    arr1, arr2 = util.promote_dtypes(ravel(a1), ravel(a2))
    if size is not None:
        return _setxor1d_size_jit(arr1, arr2, fill_value, assume_unique=bool(assume_unique), size=operator.index(size))
    if not assume_unique:
        arr1, arr2 = unique(arr1), unique(arr2)
    aux = concatenate((arr1, arr2))
    if _size(aux) == 0:
        return aux
    aux = sort(aux)
    flag = concatenate([ones(1, np.bool_), aux[1:] != aux[:-1], ones(1, np.bool_)])
    return _compress(aux, lax.bitwise_and(flag[1:], flag[:-1]))


def _intersect1d_size(arr1: Array, arr2: Array, fill_value: ArrayLike | None, assume_unique: bool, size: int,
                      return_indices: bool) -> Any:
    n1, n2 = _size(arr1), _size(arr2)
    if assume_unique:
        ind1, num_unique1 = arange(n1), full((), n1)
        ind2 = arange(n2)
        arr = concatenate([arr1, arr2])
        aux, aux_sort_indices = lax.sort([arr, arange(_size(arr))], is_stable=True, num_keys=1)
        mask = ones(_size(arr), dtype=np.bool_)
    else:
        arr1, ind1, num_unique1 = _unique(arr1, 0, size=n1, return_index=True, return_true_size=True, fill_value=0)
        arr2, ind2, num_unique2 = _unique(arr2, 0, size=n2, return_index=True, return_true_size=True, fill_value=0)
        arr = zeros(n1 + n2, dtype=dtypes.result_type(arr1, arr2))
        arr = lax.dynamic_update_slice(arr, arr1, (0,))
        arr = lax.dynamic_update_slice(arr, arr2, (num_unique1,))
        mask = arange(_size(arr)) < num_unique1 + num_unique2
        _, aux, aux_sort_indices = lax.sort([lax.bitwise_not(mask), arr, arange(_size(arr))], is_stable=True,
                                            num_keys=2)  # fmt: skip
    # A value in both arrays appears twice in a row.
    aux_mask = lax.bitwise_and(aux[1:] == aux[:-1], mask[1:])
    num_results = _sum(aux_mask)
    if _size(aux):
        val_indices = nonzero(aux_mask, size=size, fill_value=_size(aux))[0]
        vals = _take(aux, val_indices, mode="fill", fill_value=0)
    else:
        val_indices = arange(0)
        vals = zeros(size, _dtype(aux))
    vals = _fill_tail(vals, num_results, fill_value)
    if not return_indices:
        return vals
    valid = arange(size) < num_results
    arr1_indices = _take(aux_sort_indices, val_indices, mode="fill", fill_value=n1)
    arr1_indices = where(valid, arr1_indices, n1)
    arr2_indices = _take(aux_sort_indices, val_indices + 1, mode="fill", fill_value=n2) - num_unique1
    arr2_indices = where(valid, arr2_indices, n2)
    if not assume_unique:
        arr1_indices = _take(ind1, arr1_indices, mode="fill", fill_value=_size(ind1))
        arr2_indices = _take(ind2, arr2_indices, mode="fill", fill_value=_size(ind2))
    return vals, arr1_indices, arr2_indices


_intersect1d_size_jit = _staged("_intersect1d_size", _intersect1d_size, ("fill_value", "assume_unique", "size", "return_indices"))


def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values found in both arrays; with ``return_indices``, also where each
    first occurs in the (flattened) inputs (see ``unique`` for ``size``)."""
    a1, a2 = _asarray("intersect1d", ar1, ar2)
    arr1, arr2 = util.promote_dtypes(a1, a2)
    arr1, arr2 = ravel(arr1), ravel(arr2)
    if size is not None:
        return _intersect1d_size_jit(arr1, arr2, fill_value=fill_value, assume_unique=bool(assume_unique),
                                     size=operator.index(size), return_indices=bool(return_indices))
    ind1 = ind2 = arange(0)
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    arr = concatenate((arr1, arr2))
    if return_indices:
        iota = lax.broadcasted_iota(_int_dtype_for_dim(_size(arr)), util.shape(arr), 0)
        aux, aux_sort_indices = lax.sort_key_val(arr, iota)
    else:
        aux = sort(arr)
    mask = aux[1:] == aux[:-1]
    values = _compress(aux[:-1], mask)
    if not return_indices:
        return values
    arr1_indices = _compress(aux_sort_indices[:-1], mask)
    arr2_indices = _compress(aux_sort_indices[1:], mask) - _size(arr1)
    if not assume_unique:
        arr1_indices, arr2_indices = _take(ind1, arr1_indices), _take(ind2, arr2_indices)
    return values, arr1_indices, arr2_indices


# ===========================================================================
# Counting


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *, length: int | None = None) -> Array:
    """How many times each non-negative integer occurs in ``x`` (the sum of ``weights`` there).

    The result has ``max(minlength, max(x) + 1)`` entries, which needs a
    concrete ``x``; under a transformation pass ``length`` (values at or past
    it are dropped). Negative values count as 0, as in JAX.
    """
    (arr,) = _asarray("bincount", x)
    if _dtype(arr) == np.bool_:
        arr = lax.convert_element_type(arr, np.int32)
    if not dtypes.issubdtype(_dtype(arr), np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {_dtype(arr)}")
    if util.ndim(arr) != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(core.concrete_or_error(
        minlength, "The error occurred because of argument 'minlength' of jnp.bincount."))  # fmt: skip
    if length is None:
        concrete = np.asarray(core.concrete_or_error(
            arr, "The error occurred because of argument 'x' of jnp.bincount. To avoid this error, pass a static "
            "`length` argument."))  # fmt: skip
        length = builtins.max(minlength, concrete.size and int(builtins.max(0, concrete.max())) + 1)
    else:
        length = operator.index(core.concrete_or_error(
            length, "The error occurred because of argument 'length' of jnp.bincount."))  # fmt: skip
    if weights is None:
        w: Array = np.array(1, dtype=dtypes.default_int_dtype())
    else:
        (w,) = _asarray("bincount", weights)
        if util.shape(w) != util.shape(arr):
            raise ValueError(
                f"type of weights must match type of x. Got typeof(x)={core.get_aval(arr).str_short()} and "
                f"typeof(weights)={core.get_aval(w).str_short()}"
            )
    return zeros(length, _dtype(w)).at[clip(arr, 0)].add(w, mode="drop")


def histogram_bin_edges(a: ArrayLike, bins: ArrayLike = 10, range: Sequence[ArrayLike] | None = None,  # noqa: A002
                        weights: ArrayLike | None = None) -> Array:
    """The edges of ``histogram``'s bins: ``bins`` itself if it is an array, else that many
    equal bins over ``range`` (default: the data's min and max; widened by 0.5 each
    way when they are equal)."""
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    util.check_arraylike("histogram_bin_edges", a, bins)
    (arr,) = _asarray("histogram_bin_edges", a)
    dtype = util.to_inexact_dtype(_dtype(arr))
    if np.ndim(bins) == 1:
        return asarray(bins, dtype=dtype)
    bins_int = operator.index(core.concrete_or_error(bins, "bins argument of histogram_bin_edges"))
    bounds = asarray([_min(arr), _max(arr)] if range is None else range, dtype=dtype)
    if util.shape(bounds) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    empty_range = ptp(bounds) == 0
    lo = where(empty_range, bounds[0] - 0.5, bounds[0])
    hi = where(empty_range, bounds[1] + 0.5, bounds[1])
    return linspace(lo, hi, bins_int + 1, dtype=dtype)


def histogram(a: ArrayLike, bins: ArrayLike = 10, range: Sequence[ArrayLike] | None = None,  # noqa: A002
              weights: ArrayLike | None = None, density: bool | None = None) -> tuple[Array, Array]:
    """Counts (or summed ``weights``) of ``a`` in ``bins`` and the bin edges.

    ``bins``: a number of equal bins over ``range`` (static), or the edges.
    Each bin holds [left, right) except the last, [left, right]. ``density``
    divides by the bin widths and the total, making the integral 1.
    """
    if weights is None:
        arr, _ = _asarray("histogram", a, bins)
        (arr,) = util.promote_dtypes_inexact(arr)
        w = ones_like(arr)
    else:
        arr, _, w = _asarray("histogram", a, bins, weights)
        if util.shape(arr) != util.shape(w):
            raise ValueError("weights should have the same shape as a.")
        arr, w = util.promote_dtypes_inexact(arr, w)
    edges = histogram_bin_edges(arr, bins, range, w)
    n_edges = util.shape(edges)[0]
    bin_idx = searchsorted(edges, arr, side="right")
    bin_idx = where(arr == edges[-1], n_edges - 1, bin_idx)
    counts = zeros(n_edges, _dtype(w)).at[bin_idx].add(w)[1:]
    if density:
        counts = counts / _diff(edges) / _sum(counts)
    return counts, edges
