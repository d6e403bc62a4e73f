"""``jnp`` shape manipulation, joining and splitting, selection, and products.

Every function follows ``jax.numpy``: the same arguments, results, dtypes
(weak types included) and error types. Because the jaxpr is part of the
contract, each one also makes the same ``lax`` calls in the same order as
JAX, so ``make_jaxpr`` prints what JAX prints: a reshape to the same shape
records nothing, ``jnp.dot`` is one ``dot_general`` with
``preferred_element_type``, and the functions JAX stages as a nested ``jit``
(``_where``, ``clip``, ``_flip``, ``rot90``, ``atleast_*d``) are staged here
too, under the same names.

Sections: queries; reshaping; broadcasting; joining and splitting;
repetition; reversal; selection; products.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.array import Array, device_put_value
from minijax.errors import ConcretizationTypeError, InconclusiveDimensionOperation
from minijax.numpy import ufuncs, util
from minijax.numpy.util import canonicalize_axis, check_arraylike, convert_element_type, promote_dtypes
from minijax.stages import jit

__all__ = [
    "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays",
    "broadcast_shapes", "broadcast_to", "clip", "column_stack", "concatenate",
    "dstack", "expand_dims", "flip", "fliplr", "flipud", "hstack",
    "moveaxis", "ndim", "ravel", "repeat", "reshape", "rot90", "select", "shape",
    "size", "split", "squeeze", "stack", "swapaxes", "tile", "transpose",
    "vstack",
]

ArrayLike = Any
Shape = tuple[int, ...]


# ---------------------------------------------------------------------------
# Helpers


def _asarray(x: ArrayLike) -> Any:
    """``x`` as a minijax value: arrays and tracers as they are, host values put on the device."""
    if isinstance(x, (Array, core.Tracer)):
        return x
    return device_put_value(x)


def _shape_of(x: ArrayLike) -> Shape:
    return core.get_aval(x).shape


def _named_jit(name: str, fun: Callable[..., Any], **jit_kwargs: Any) -> Any:
    """``jit(fun)`` appearing in jaxprs as ``jit[name=<name>]``, as JAX's own staged helpers do."""
    fun.__name__ = fun.__qualname__ = name
    return jit(fun, **jit_kwargs)


def _static_ints(values: Any, what: str, *, is_shape: bool = False) -> tuple[int, ...]:
    """A static shape-like argument (an int or a sequence of ints) as a tuple.

    ``is_shape``: a traced dimension is JAX's ``TypeError`` about shapes (as
    ``reshape`` and ``broadcast_to`` raise it, showing the sequence as given,
    a lone dimension as a list) rather than a ``ConcretizationTypeError``.
    """
    seq = values if isinstance(values, (tuple, list, np.ndarray)) else (values,)
    shown = (values if isinstance(values, (tuple, list)) else list(seq)) if is_shape else tuple(seq)
    if is_shape:
        for v in seq:
            if isinstance(v, core.Tracer) and v.to_concrete_value() is None:
                raise util.traced_shape_error(shown, v)
    concrete = [core.concrete_or_error(v, f"The {what} must be static (a Python int or a tuple of them).") for v in seq]
    try:
        return tuple(core.dim_index(v) for v in concrete)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shown}.") from None


def _axis_tuple(axis: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(canonicalize_axis(a, ndim) for a in axes)


def _is_identity(perm: Sequence[int]) -> bool:
    return tuple(perm) == tuple(range(len(perm)))


# ---------------------------------------------------------------------------
# Queries


def ndim(a: ArrayLike) -> int:
    """``jnp.ndim``: the number of dimensions of an array, scalar or nested sequence."""
    return len(shape(a))


def shape(a: ArrayLike) -> Shape:
    """``jnp.shape``: the shape of an array, scalar or nested sequence."""
    if core.is_array_like(a):
        return _shape_of(a)
    return tuple(np.shape(a))


def size(a: ArrayLike, axis: int | Sequence[int] | None = None) -> int:
    """``jnp.size``: the number of elements, in total or along ``axis``."""
    s = shape(a)
    axes = range(len(s)) if axis is None else _axis_tuple(axis, len(s))
    return core.shape_size(s[i] for i in axes)


# ---------------------------------------------------------------------------
# Reshaping


def _resolve_shape(old: Shape, new: Shape) -> Shape:
    """``new`` with its ``-1`` (if any) inferred; TypeError (as JAX) when it does not fit."""
    old_size = core.shape_size(old)
    prefix = f"cannot reshape array of shape {old} (size {old_size}) into shape {new}"
    unknown = [i for i, d in enumerate(new) if d == -1]
    if len(unknown) > 1:
        raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {new}")
    known = core.shape_size(d for d in new if d != -1)
    if unknown:
        if any(d < 0 for d in new if d != -1):
            raise TypeError(f"{prefix}: axis sizes must be non-negative or the single -1")
        if not isinstance(old_size, int) and known and old_size % known:  # a symbolic size (jax.export)
            raise InconclusiveDimensionOperation(
                f"Cannot divide evenly the sizes of shapes {old} and {new}. The remainder {old_size % known} should be 0."
            )
        if known == 0 or old_size % known:
            raise TypeError(
                f"{prefix} because the product of specified axis sizes ({known}) does not evenly divide {old_size}"
            )
        return tuple(old_size // known if d == -1 else d for d in new)
    if known != old_size or any(d < 0 for d in new):
        raise TypeError(f"{prefix} (size {known})")
    return new


def reshape(a: ArrayLike, shape: int | Sequence[int], order: str = "C", *, copy: bool | None = None,
            out_sharding: Any = None) -> Any:
    """``jnp.reshape``: the same elements in a new shape (one ``-1`` is inferred)."""
    check_arraylike("reshape", a)
    old = _shape_of(a)
    new = _resolve_shape(old, _static_ints(shape, "new shape", is_shape=True))
    if order not in ("C", "F"):
        if order == "A":
            raise NotImplementedError("np.reshape order=A is not implemented.")
        raise ValueError(f"Unexpected value for 'order' argument: {order}.")
    if new == old and out_sharding is None:
        return _asarray(a)
    if order == "C":
        return lax.reshape(a, new, out_sharding=out_sharding)
    if out_sharding is not None:
        raise NotImplementedError("jnp.reshape: out_sharding with order='F' is not supported by minijax (issue 17).")
    # Fortran order: read the elements with the axes reversed, write them the same way.
    rev_new = tuple(reversed(range(len(new))))
    flat = lax.reshape(a, new[::-1], dimensions=tuple(reversed(range(len(old)))))
    return lax.transpose(flat, rev_new)


def ravel(a: ArrayLike, order: str = "C", *, out_sharding: Any = None) -> Any:
    """``jnp.ravel``: the elements as a 1-D array."""
    check_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    s = _shape_of(a)
    return reshape(a, (core.shape_size(s),), order=order, out_sharding=out_sharding)


def _transpose(a: ArrayLike, perm: Sequence[int]) -> Any:
    if sorted(perm) != list(range(len(_shape_of(a)))):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, "
            f"got permutation {tuple(perm)} for operand shape {_shape_of(a)}."
        )
    return _asarray(a) if _is_identity(perm) else lax.transpose(a, tuple(perm))


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Any:
    """``jnp.transpose``: permute the axes (reverse them when ``axes`` is None)."""
    check_arraylike("transpose", a)
    nd = len(_shape_of(a))
    perm = tuple(reversed(range(nd))) if axes is None else tuple(canonicalize_axis(i, nd) for i in axes)
    return _transpose(a, perm)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Any:
    """``jnp.swapaxes``: exchange two axes."""
    check_arraylike("swapaxes", a)
    perm = list(range(len(_shape_of(a))))
    for ax in (axis1, axis2):
        if not -len(perm) <= ax < len(perm):
            raise IndexError(f"index {ax} is out of bounds for axis 0 with size {len(perm)}")
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return _transpose(a, perm)


def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """``jnp.moveaxis``: move axes to new positions, keeping the others in order."""
    check_arraylike("moveaxis", a)
    nd = len(_shape_of(a))
    src, dst = _axis_tuple(source, nd), _axis_tuple(destination, nd)
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    perm = [i for i in range(nd) if i not in src]
    for d, s_ in sorted(zip(dst, src)):
        perm.insert(d, s_)
    return _transpose(a, perm)  # repeated axes make perm no permutation: _transpose says so


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Any:
    """``jnp.squeeze``: remove length-1 axes (all of them, or the ones named)."""
    check_arraylike("squeeze", a)
    s = _shape_of(a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        dims = _axis_tuple(axis, len(s))
        if len(set(dims)) != len(dims):
            raise ValueError(f"dimensions are not unique: {dims}")
        if any(s[i] != 1 for i in dims):
            raise ValueError(
                "cannot select an axis to squeeze out which has size not equal to one, "
                f"got shape={s} and dimensions={dims}"
            )
    return lax.squeeze(a, tuple(sorted(dims))) if dims else _asarray(a)


def expand_dims(a: ArrayLike, axis: int | Sequence[int]) -> Any:
    """``jnp.expand_dims``: insert length-1 axes at the given positions of the result."""
    check_arraylike("expand_dims", a)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out_nd = len(_shape_of(a)) + len(axes)
    dims = tuple(canonicalize_axis(i, out_nd) for i in axes)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {tuple(axes)}")
    return lax.expand_dims(a, dims) if dims else _asarray(a)


# ---------------------------------------------------------------------------
# Broadcasting


def broadcast_shapes(*shapes: int | Sequence[int]) -> Shape:
    """``jnp.broadcast_shapes``: the shape NumPy broadcasting gives these shapes."""
    tuples = [_static_ints(s, "shape") for s in shapes]
    rank = max((len(s) for s in tuples), default=0)
    result = []
    for dims in zip(*[(1,) * (rank - len(s)) + s for s in tuples]):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={tuples}")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def broadcast_to(array: ArrayLike, shape: int | Sequence[int], *, out_sharding: Any = None) -> Any:
    """``jnp.broadcast_to``: ``array`` repeated along new leading and length-1 axes."""
    check_arraylike("broadcast_to", array)
    target = _static_ints(shape, "shape", is_shape=True)
    aval = core.get_aval(array)
    if aval.shape == target and out_sharding is None:
        return _asarray(array)
    lead = len(target) - aval.ndim
    if lead < 0:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={aval.shape} shape={target}")
    if any(d not in (1, t) for d, t in zip(aval.shape, target[lead:])):
        raise ValueError(
            f"Incompatible types for broadcasting: input type={aval.str_short(short_dtypes=False)} and "
            f"requested type={aval.dtype.name}[{','.join(map(str, target))}]"
        )
    if any(d < 0 for d in target):  # compatible, but negative: JAX's broadcast_in_dim refuses it (TypeError)
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got {target}.")
    return lax.broadcast_in_dim(array, target, tuple(range(lead, len(target))), out_sharding=out_sharding)


def _broadcast_arrays(*args: ArrayLike) -> list[Any]:
    target = broadcast_shapes(*(_shape_of(x) for x in args))
    return [broadcast_to(x, target) for x in args]


def broadcast_arrays(*args: ArrayLike) -> list[Any]:
    """``jnp.broadcast_arrays``: the arguments broadcast to their common shape."""
    check_arraylike("broadcast_arrays", *args)
    return _broadcast_arrays(*args)


# atleast_nd: where a value of rank r < n lands in the rank-n result
# (JAX's rule: a vector becomes a row (2d), or a (1, n, 1) slab (3d)).
_ATLEAST_DIMS: dict[tuple[int, int], tuple[int, ...]] = {
    (1, 0): (), (2, 0): (), (2, 1): (1,), (3, 0): (), (3, 1): (1,), (3, 2): (0, 1),
}


def _make_atleast(n: int) -> Callable[..., Any]:
    def impl(*arys: Any) -> Any:
        outs = []
        for x in arys:
            s = _shape_of(x)
            if len(s) >= n:
                outs.append(x)
                continue
            dims = _ATLEAST_DIMS[n, len(s)]
            out_shape = [1] * n
            for d, size_ in zip(dims, s):
                out_shape[d] = size_
            outs.append(lax.broadcast_in_dim(x, tuple(out_shape), dims))
        return outs[0] if len(outs) == 1 else outs

    staged = _named_jit(f"atleast_{n}d", impl)

    def atleast(*arys: ArrayLike) -> Any:
        check_arraylike(f"atleast_{n}d", *arys)
        return staged(*arys)

    atleast.__name__ = atleast.__qualname__ = f"atleast_{n}d"
    atleast.__doc__ = f"``jnp.atleast_{n}d``: each argument viewed with at least {n} dimensions."
    return atleast


atleast_1d = _make_atleast(1)
atleast_2d = _make_atleast(2)
atleast_3d = _make_atleast(3)


# ---------------------------------------------------------------------------
# Joining and splitting


def _is_array_input(arrays: Any) -> bool:
    """An array passed where a sequence of arrays is expected: its rows are the items."""
    return isinstance(arrays, (Array, core.Tracer, np.ndarray))


def _concatenate_rows(arr: ArrayLike, axis: int) -> Any:
    """Concatenate the rows of ``arr`` along ``axis`` of a row: one reshape, as JAX does."""
    s = _shape_of(arr)
    if len(s) < 2:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, len(s) - 1)
    rows = s[1:]
    new = rows[:axis] + (rows[axis] * s[0],) + rows[axis + 1:]
    perm = (*range(1, axis + 1), 0, *range(axis + 1, len(s)))
    return lax.reshape(arr, new, dimensions=None if _is_identity(perm) else perm)


def _check_same_ranks(what: str, shapes: list[Shape], error: type[Exception]) -> None:
    if len({len(s) for s in shapes}) > 1:
        raise error(f"Cannot {what} arrays with different numbers of dimensions: got {', '.join(map(str, shapes))}.")


def concatenate(arrays: Any, axis: int | None = 0, dtype: Any = None) -> Any:
    """``jnp.concatenate``: join arrays along an existing axis (``axis=None`` flattens first)."""
    if _is_array_input(arrays):
        out = ravel(arrays) if axis is None else _concatenate_rows(arrays, axis)
        return out if dtype is None else convert_element_type(out, dtypes.check_user_dtype_supported(dtype))
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    check_arraylike("concatenate", *arrays)
    if axis is None:
        return concatenate([ravel(a) for a in arrays], 0, dtype)
    shapes = [_shape_of(a) for a in arrays]
    # JAX's order: the first array's rank, the axis against it, then the other ranks.
    if len(shapes[0]) == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, len(shapes[0]))
    _check_same_ranks("concatenate", shapes, TypeError)
    if any(s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:] for s in shapes):
        raise TypeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
            f"concatenated: concatenating along dimension {axis} for shapes {', '.join(map(str, shapes))}."
        )
    if dtype is None:
        out_dtype, weak = dtypes.result_type(*arrays, return_weak_type_flag=True)
    else:
        out_dtype, weak = dtypes.check_user_dtype_supported(dtype, "concatenate"), False
    arrays = [convert_element_type(a, out_dtype, weak) for a in arrays]
    return _asarray(arrays[0]) if len(arrays) == 1 else lax.concatenate(arrays, axis)


def stack(arrays: Any, axis: int = 0, out: None = None, dtype: Any = None) -> Any:
    """``jnp.stack``: join same-shaped arrays along a new axis."""
    util.check_no_out("stack", out)
    if _is_array_input(arrays):
        axis = canonicalize_axis(axis, len(_shape_of(arrays)))
        return concatenate(expand_dims(arrays, axis + 1), axis, dtype)
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    check_arraylike("stack", *arrays)
    shapes = [_shape_of(a) for a in arrays]
    _check_same_ranks("stack", shapes, ValueError)
    if len(set(shapes)) > 1:
        raise ValueError(f"All input arrays must have the same shape. Got {', '.join(map(str, shapes))}.")
    axis = canonicalize_axis(axis, len(shapes[0]) + 1)
    if dtype is None:
        arrays = promote_dtypes(*arrays) if len(arrays) > 1 else arrays
    else:
        arrays = [convert_element_type(a, dtypes.check_user_dtype_supported(dtype, "stack")) for a in arrays]
    return lax.stack(arrays, axis)


def _rows(arrays: Any) -> list[Any]:
    """The items of a sequence-of-arrays argument (an array's rows when given an array)."""
    if _is_array_input(arrays):
        return [arrays[i] for i in range(_shape_of(arrays)[0])]
    return list(arrays)


def vstack(tup: Any, dtype: Any = None) -> Any:
    """``jnp.vstack``: stack arrays as rows (1-D arrays become rows)."""
    return concatenate([atleast_2d(m) for m in _rows(tup)], axis=0, dtype=dtype)


def hstack(tup: Any, dtype: Any = None) -> Any:
    """``jnp.hstack``: join arrays along their second axis (the first for 1-D arrays)."""
    arrs = [atleast_1d(m) for m in _rows(tup)]
    axis = 0 if arrs and len(_shape_of(arrs[0])) == 1 else 1
    return concatenate(arrs, axis=axis, dtype=dtype)


def dstack(tup: Any, dtype: Any = None) -> Any:
    """``jnp.dstack``: join arrays along their third axis."""
    return concatenate([atleast_3d(m) for m in _rows(tup)], axis=2, dtype=dtype)


def column_stack(tup: Any) -> Any:
    """``jnp.column_stack``: 1-D arrays become columns, then join along the second axis."""
    items = _rows(tup)
    check_arraylike("column_stack", *items)
    cols = [transpose(atleast_2d(a)) if len(_shape_of(a)) < 2 else a for a in items]
    return concatenate(cols, axis=1)


def _split_sizes(fun_name: str, length: int, indices_or_sections: Any, equal: bool) -> list[int]:
    """The sizes of the pieces ``split``/``array_split`` cut an axis of ``length`` into."""
    spec = core.concrete_or_error(indices_or_sections, f"jnp.{fun_name} needs static indices_or_sections.")
    if np.ndim(spec) == 0:
        n = operator.index(spec)
        if n <= 0:
            raise (ZeroDivisionError if n == 0 else ValueError)(
                f"jnp.{fun_name}: the number of sections must be positive, got {n}."
            )
        if equal and length % n:
            raise ValueError(f"array split does not result in an equal division: rest is {length % n}")
        small, extra = divmod(length, n)
        return [small + 1] * extra + [small] * (n - extra)
    cuts = [0, *(operator.index(i) for i in np.asarray(spec).tolist()), length]
    sizes = [b - a for a, b in zip(cuts, cuts[1:])]
    if any(s < 0 for s in sizes):
        raise ValueError(
            f"Sizes passed to split must be nonnegative, got {sizes}: jnp.{fun_name} needs increasing "
            f"indices between 0 and the axis length {length}."
        )
    return sizes


def _split(fun_name: str, ary: ArrayLike, indices_or_sections: Any, axis: int, equal: bool) -> list[Any]:
    check_arraylike(fun_name, ary)
    s = _shape_of(ary)
    if not -len(s) <= axis < len(s):
        raise IndexError(f"jnp.{fun_name}: axis {axis} is out of bounds for array of dimension {len(s)}")
    axis %= len(s)
    sizes = _split_sizes(fun_name, s[axis], indices_or_sections, equal)
    return list(lax.split(ary, tuple(np.int64(z) for z in sizes), axis))


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``jnp.split``: cut an array into equal sections, or at the given indices."""
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``jnp.array_split``: like split, but sections may differ in length by one."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


# ---------------------------------------------------------------------------
# Repetition


def tile(A: ArrayLike, reps: int | Sequence[int]) -> Any:
    """``jnp.tile``: repeat the whole array ``reps`` times along each axis."""
    check_arraylike("tile", A)
    reps_t = _static_ints(reps, "reps")
    if any(r < 0 for r in reps_t):
        raise ValueError(f"jnp.tile: reps must be non-negative, got {reps_t}")
    s = _shape_of(A)
    if len(reps_t) > len(s):
        lead = len(reps_t) - len(s)
        A = lax.broadcast_in_dim(A, (1,) * lead + s, tuple(range(lead, len(reps_t))))
    reps_t = (1,) * (len(s) - len(reps_t)) + reps_t
    return lax.tile(A, reps_t)


def _repeat_indices(counts: np.ndarray[Any, Any], total: int | None) -> np.ndarray[Any, Any]:
    """Which input position each output position along the axis reads.

    Without ``total`` this is ``np.repeat(arange(n), counts)``. With it, JAX's
    rule: output ``j`` reads the last input whose run starts at or before
    ``j``, so extra positions repeat the final input, and it is cut at ``total``.
    """
    if total is None:
        return np.repeat(np.arange(len(counts)), counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return np.searchsorted(starts, np.arange(total), side="right") - 1


def _gather_runs(a: ArrayLike, axis: int, index: np.ndarray[Any, Any]) -> Any:
    """``a`` read at the static positions ``index`` along ``axis``, one slice per run of equal positions."""
    s = _shape_of(a)
    pieces = []
    run_starts = np.flatnonzero(np.diff(index, prepend=-1) != 0) if len(index) else np.array([], np.int64)
    for start, stop in zip(run_starts, [*run_starts[1:], len(index)]):
        k = int(index[start])
        lo = [0] * len(s)
        hi = list(s)
        lo[axis], hi[axis] = k, k + 1
        piece = lax.slice(a, lo, hi)
        shape_ = list(s)
        shape_[axis] = int(stop - start)
        pieces.append(lax.broadcast_in_dim(piece, tuple(shape_), tuple(range(len(s)))) if stop - start > 1 else piece)
    if not pieces:
        hi = list(s)
        hi[axis] = 0
        return lax.slice(a, [0] * len(s), hi)
    return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, axis)


def repeat(a: ArrayLike, repeats: ArrayLike, axis: int | None = None, *, total_repeat_length: int | None = None,
           out_sharding: Any = None) -> Any:
    """``jnp.repeat``: repeat each element (along ``axis``, or of the flattened array).

    ``repeats`` must be static (as under JAX's jit unless ``total_repeat_length``
    is given; minijax needs it static in that case too, until gather arrives).
    """
    check_arraylike("repeat", a, repeats)
    if axis is None:
        a, axis = ravel(a), 0
    s = _shape_of(a)
    axis = canonicalize_axis(axis, len(s))
    if isinstance(repeats, core.Tracer) and repeats.to_concrete_value() is None:
        if total_repeat_length is None:
            raise ConcretizationTypeError(
                repeats,
                "When jit-compiling jnp.repeat, the total number of repeats must be static. To fix this, "
                "either specify a static value for `repeats`, or pass a static value to `total_repeat_length`.",
            )
        raise NotImplementedError(
            "jnp.repeat with traced `repeats` needs gather, which minijax does not support yet; pass static repeats."
        )
    counts = np.asarray(core.concrete_or_error(repeats))
    if counts.size == 0:
        counts = counts.astype(np.int64)  # an empty list of counts has NumPy's float dtype
    if not (np.issubdtype(counts.dtype, np.integer) or counts.dtype == np.bool_):
        raise TypeError(f"jnp.repeat: repeats must be integers, got dtype {counts.dtype}")
    if counts.ndim > 1 or (counts.ndim == 1 and len(counts) not in (1, s[axis])):
        raise ValueError(
            f"jnp.repeat: repeats of shape {counts.shape} do not match axis {axis} of length {s[axis]}; "
            "give one count, or one count per element."
        )
    if np.any(counts < 0):
        raise TypeError(f"jnp.repeat: repeats must be non-negative, got {counts.tolist()}")
    uniform = counts.size == 1 and total_repeat_length in (None, int(counts.reshape(())) * s[axis])
    if uniform:
        # Every element the same number of times: broadcast a new axis, then merge it.
        r = int(counts.reshape(()))
        wide = s[: axis + 1] + (r,) + s[axis + 1:]
        dims = (*range(axis + 1), *range(axis + 2, len(s) + 1))
        out = lax.broadcast_in_dim(a, wide, dims)
        return lax.reshape(out, s[:axis] + (s[axis] * r,) + s[axis + 1:])
    if s[axis] == 0:
        return _asarray(a)  # nothing to repeat: JAX ignores total_repeat_length here
    counts = np.broadcast_to(counts, (s[axis],)).astype(np.int64)
    total = None if total_repeat_length is None else operator.index(total_repeat_length)
    return _gather_runs(a, axis, _repeat_indices(counts, total))


# ---------------------------------------------------------------------------
# Reversal


def _flip_impl(m: Any, axis: tuple[int, ...]) -> Any:
    return lax.rev(m, axis)


_flip_staged = _named_jit("_flip", _flip_impl, static_argnames="axis")


def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Any:
    """``jnp.flip``: reverse the order of elements along the given axes (all by default)."""
    check_arraylike("flip", m)
    nd = len(_shape_of(m))
    axes = tuple(range(nd)) if axis is None else _axis_tuple(axis, nd)
    return _flip_staged(m, axis=axes)


def fliplr(m: ArrayLike) -> Any:
    """``jnp.fliplr``: reverse the second axis."""
    return flip(m, 1)


def flipud(m: ArrayLike) -> Any:
    """``jnp.flipud``: reverse the first axis."""
    return flip(m, 0)


def _rot90_impl(m: Any, k: int, axes: tuple[int, int]) -> Any:
    ax1, ax2 = axes
    perm = list(range(len(_shape_of(m))))
    perm[ax1], perm[ax2] = ax2, ax1
    if k == 1:
        return lax.transpose(flip(m, ax2), tuple(perm))
    if k == 2:
        return flip(flip(m, ax1), ax2)
    if k == 3:
        return flip(lax.transpose(m, tuple(perm)), ax2)
    return m


_rot90_staged = _named_jit("rot90", _rot90_impl, static_argnames=("k", "axes"))


def rot90(m: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """``jnp.rot90``: rotate by 90 degrees ``k`` times, from the first axis towards the second."""
    check_arraylike("rot90", m)
    s = _shape_of(m)
    if len(s) < 2:
        raise ValueError(
            "rot90 requires its first argument to have ndim at least two, but got first argument "
            f"of shape {s}, which has ndim {len(s)}"
        )
    if len(axes) != 2:
        raise ValueError(f"rot90: len(axes) must be 2, got axes={axes}")
    ax = (canonicalize_axis(axes[0], len(s)), canonicalize_axis(axes[1], len(s)))
    if ax[0] == ax[1]:
        raise ValueError("Axes must be different")
    return _rot90_staged(m, k=operator.index(k) % 4, axes=ax)


# ---------------------------------------------------------------------------
# Selection


def _where_impl(condition: Any, x: Any, y: Any) -> Any:
    if dtypes.dtype(condition) != np.bool_:
        condition = lax.ne(condition, convert_element_type(0, dtypes.dtype(condition)))
    x, y = promote_dtypes(x, y)
    if _shape_of(condition):
        condition, x, y = _broadcast_arrays(condition, x, y)
    else:
        # select_n takes a scalar predicate as it is.
        x, y = _broadcast_arrays(x, y)
    if 0 in _shape_of(x):
        return x
    return lax.select_n(condition, y, x)


_where_staged = _named_jit("_where", _where_impl)


def where3(condition: ArrayLike, x: ArrayLike, y: ArrayLike, /) -> Array:
    """``jnp.where(condition, x, y)``: elements of ``x`` where ``condition`` holds, else of ``y``.
    (``jnp.where`` itself is in minijax/numpy/sorting.py: with one argument it is ``nonzero``.)"""
    check_arraylike("where", condition, x, y)
    out: Array = _where_staged(condition, x, y)
    return out


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike], default: ArrayLike = 0) -> Array:
    """``jnp.select``: for each element, the choice of the first condition that holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    choices = promote_dtypes(default, *choicelist)
    conditions = stack(_broadcast_arrays(False, *condlist))
    # argmax finds the first True; the default sits in front under an always-False condition.
    idx = lax.argmax(convert_element_type(conditions, np.bool_), 0, dtypes.default_int_dtype())
    out: Array = lax.select_n(*_broadcast_arrays(idx, *choices))
    return out


def _clip_impl(arr: Any, min: Any = None, max: Any = None) -> Any:
    if min is not None:
        arr = ufuncs.maximum(min, arr)
    if max is not None:
        arr = ufuncs.minimum(max, arr)
    return arr


_clip_staged = _named_jit("clip", _clip_impl)


def clip(arr: ArrayLike | None = None, /, min: ArrayLike | None = None, max: ArrayLike | None = None) -> Any:
    """``jnp.clip``: limit values to ``[min, max]`` (either bound may be omitted)."""
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr, *(v for v in (min, max) if v is not None))
    return _clip_staged(arr, min, max)
