"""``jnp.ufunc`` and ``jnp.frompyfunc``: a scalar function with NumPy's ufunc methods.

``frompyfunc(f, nin, nout)`` wraps a function of scalars. Calling the ufunc
broadcasts its arguments and maps ``f`` over every element (one ``vmap`` of
the flattened arguments); ``reduce``, ``accumulate``, ``reduceat`` and
``at`` apply ``f`` pairwise in a loop (``fori_loop``/``scan``), as JAX's
generic fallbacks do, so ``f`` needs no vectorized form. ``outer`` is the
call on the arguments' outer broadcast. minijax's own ``jnp.add`` & co. are
plain functions, not ufunc instances.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from minijax import api, dtypes, lax
from minijax.numpy import creation, shape_ops, util
from minijax.numpy.util import canonicalize_axis, check_arraylike
from minijax.vectorization import vmap

__all__ = ["frompyfunc", "ufunc"]


class ufunc:  # noqa: N801  (NumPy's and JAX's name)
    """A function of scalars with NumPy's ufunc interface (``reduce``, ``accumulate``, ``at``, ``outer``...)."""

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity: Any = None) -> None:  # fmt: skip
        self.__doc__ = func.__doc__
        self.__name__: str = str(name or getattr(func, "__name__", "ufunc"))
        self._func = func
        self._nin = operator.index(nin)
        self._nout = operator.index(nout)
        self._nargs = operator.index(nargs or nin)
        self._identity = identity

    nin = property(lambda self: self._nin)
    nout = property(lambda self: self._nout)
    nargs = property(lambda self: self._nargs)
    identity = property(lambda self: self._identity)

    def _key(self) -> tuple[Any, ...]:
        return (self._func, self.__name__, self._identity, self._nin, self._nout, self._nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    # -- calling ---------------------------------------------------------------
    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        arrays = shape_ops.broadcast_arrays(*args)
        shape = tuple(np.shape(arrays[0])) if arrays else ()
        if not shape:
            return self._func(*arrays)
        flat = [shape_ops.reshape(a, (math.prod(shape),)) for a in arrays]
        result = vmap(self._func)(*flat)
        if isinstance(result, tuple):
            return tuple(shape_ops.reshape(r, shape) for r in result)
        return shape_ops.reshape(result, shape)

    def _binary_only(self, method: str) -> None:
        if self._nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self._nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def _result_dtype(self, *args: Any) -> Any:
        ones = [lax.full((), 1, dtypes.dtype(a, canonicalize=True)) for a in args]
        return api.eval_shape(self._func, *ones).dtype

    # -- reductions ------------------------------------------------------------
    def reduce(self, a: Any, axis: int | None = 0, dtype: Any = None, out: None = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:  # fmt: skip
        """``f`` applied left to right along ``axis``: ``f(f(a[0], a[1]), a[2])...``."""
        check_arraylike(f"{self.__name__}.reduce", a)
        self._binary_only("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if where is not None:
            check_arraylike(f"{self.__name__}.reduce", where)
            if self._identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, "
                                 "so to use a where mask one has to specify 'initial'.")  # fmt: skip
            if np.dtype(dtypes.dtype(where, canonicalize=True)) != np.bool_:
                raise ValueError(f"where argument must have dtype=bool; got dtype={dtypes.dtype(where, canonicalize=True)}")
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        arr = creation.asarray(a)
        if initial is None:
            initial = self._identity
        dt = self._result_dtype(arr, arr) if dtype is None else dtype
        mask = None if where is None else shape_ops.broadcast_to(where, arr.shape)
        if axis is None:
            final_shape: tuple[int, ...] = (1,) * arr.ndim if keepdims else ()
            arr = shape_ops.ravel(arr)
            mask = None if mask is None else shape_ops.ravel(mask)
            axis = 0
        else:
            axis = canonicalize_axis(axis, arr.ndim)
            final_shape = (*arr.shape[:axis], 1, *arr.shape[axis + 1:]) if keepdims else (
                *arr.shape[:axis], *arr.shape[axis + 1:])  # fmt: skip
        if axis != 0:
            arr = shape_ops.moveaxis(arr, axis, 0)
            mask = None if mask is None else shape_ops.moveaxis(mask, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            return lax.full(final_shape, initial, dt)

        def body(i: Any, val: Any) -> Any:
            new = self(val, arr[i].astype(dt))
            return new if mask is None else util._where(mask[i], new, val)

        start, first = (1, arr[0]) if initial is None else (0, initial)
        first = shape_ops.broadcast_to(creation.asarray(first).astype(dt), arr.shape[1:])
        result = lax.fori_loop(start, arr.shape[0], body, first)
        return shape_ops.reshape(result, final_shape) if keepdims else result

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running ``reduce`` along ``axis``."""
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        check_arraylike(f"{self.__name__}.accumulate", a)
        arr = creation.asarray(a)
        dt = self._result_dtype(arr, arr) if dtype is None else dtype
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = canonicalize_axis(axis, arr.ndim)
        if arr.size == 0:
            return lax.full(arr.shape, 0, dt)
        arr = shape_ops.moveaxis(arr, axis, 0)

        def step(carry: Any, row: Any) -> tuple[Any, Any]:
            new = self(carry, row.astype(dt))
            return new, new

        first = arr[0].astype(dt)
        _, rest = lax.scan(step, first, arr[1:])
        result = shape_ops.concatenate([first[None], rest], axis=0)
        return shape_ops.moveaxis(result, 0, axis)

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """``reduce`` over each slice ``a[indices[i]:indices[i+1]]`` along ``axis``."""
        self._binary_only("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        arr, idx = creation.asarray(a), creation.asarray(indices)
        if arr.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={arr.shape}")
        if idx.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got indices.shape={idx.shape}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = canonicalize_axis(axis, arr.ndim)
        start = arr.take(idx, axis=axis)
        if dtype is not None:
            start = start.astype(dtype)
        bounds = shape_ops.concatenate([idx, creation.asarray([arr.shape[axis]], dtype=idx.dtype)])
        others = [d for d in range(start.ndim) if d != axis]
        lo = shape_ops.expand_dims(bounds[:-1], others)
        hi = shape_ops.expand_dims(bounds[1:], others)

        def body(i: Any, acc: Any) -> Any:
            row = lax.dynamic_index_in_dim(arr, i, axis, keepdims=True).astype(acc.dtype)
            return util._where((i > lo) & (i < hi), self(acc, row), acc)

        return lax.fori_loop(0, arr.shape[axis], body, start)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """``a`` with ``a[indices] = f(a[indices], b)`` applied once per index, repeats included."""
        if inplace:
            raise NotImplementedError(
                "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like np.ufunc.at(). "
                "Instead, you can pass inplace=False and capture the result; e.g. "
                "arr = u.at(arr, ind, val, inplace=False)"
            )
        args = () if b is None else (b,)
        check_arraylike(f"{self.__name__}.at", a, *args)
        dt = self._result_dtype(a, *args)
        arr = creation.asarray(a).astype(dt)
        extra = tuple(creation.asarray(x).astype(dt) for x in args)
        idx_tuple = indices if isinstance(indices, tuple) else (indices,)
        arrays = [creation.asarray(i) for i in idx_tuple if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*(i.shape for i in arrays)) if arrays else ()
        if not shape:
            return arr.at[idx_tuple].set(self(arr[idx_tuple], *extra))
        n = math.prod(shape)
        if extra:
            value = shape_ops.broadcast_to(extra[0], (*shape, *extra[0].shape[len(shape):]))
            extra = (shape_ops.reshape(value, (n, *extra[0].shape[len(shape):])),)
        flat_idx = [i if isinstance(i, slice) else shape_ops.ravel(shape_ops.broadcast_to(i, shape))
                    for i in idx_tuple]  # fmt: skip

        def step(carry: Any, k: Any) -> tuple[Any, None]:
            where_k = tuple(i if isinstance(i, slice) else i[k] for i in flat_idx)
            return carry.at[where_k].set(self(carry[where_k], *(e[k] for e in extra))), None

        result, _ = lax.scan(step, arr, creation.arange(n))
        return result

    def outer(self, A: Any, B: Any, /) -> Any:  # noqa: N803  (NumPy's names)
        """``f(A[i...], B[j...])`` for every pair: the call on the outer broadcast of ``A`` and ``B``."""
        self._binary_only("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        a, b = creation.asarray(A), creation.asarray(B)
        return self(a.reshape(a.shape + (1,) * b.ndim), b)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A ``jnp.ufunc`` from a function of scalars taking ``nin`` arguments and returning ``nout`` values."""
    return ufunc(func, nin, nout, identity=identity)
