"""Reductions (sum, prod, max, min, mean, var, std, all, any, argmax, argmin, the
nan-ignoring variants, ptp) and whole-array comparisons (isclose, allclose,
array_equal, array_equiv).

Every reduction follows one recipe (``_reduce``), as in JAX:

1. pick the result dtype: the input's, or ``dtype=``; small integers and bool
   sum and multiply in the default integer (``promote_integers``);
2. compute in that dtype, or float32 for float16/bfloat16 sums and products
   (to keep precision), dropping any weak type;
3. mask with ``where=`` by substituting the reduction's identity;
4. reduce with the ``lax.reduce_*`` primitive, fold in ``initial=``;
5. restore reduced axes with ``keepdims``, and convert to the result dtype.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.array import Array
from minijax.numpy import util
from minijax.numpy.creation import asarray
from minijax.numpy.ufuncs import const, equal, staged
from minijax.numpy.util import ArrayLike
from minijax.primitives.structural import dimension_as_value

__all__ = [
    "all",
    "allclose",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "array_equal",
    "array_equiv",
    "isclose",
    "max",
    "mean",
    "min",
    "nanargmax",
    "nanargmin",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanstd",
    "nansum",
    "nanvar",
    "prod",
    "ptp",
    "std",
    "sum",
    "var",
]

Fn = Callable[..., Any]


def _asarray(x: Any) -> Any:
    return asarray(x)


def _upcast_f16(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """float16 and bfloat16 accumulate in float32 (their sums lose too much otherwise)."""
    return np.dtype(np.float32) if dtype in (np.float16, dtypes.bfloat16) else dtype


def _promoted_integer(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """NumPy's sum/prod dtype: bool and small integers accumulate in the default integer."""
    if dtype == np.bool_:
        return dtypes.default_int_dtype()
    if dtypes.issubdtype(dtype, np.unsignedinteger) and dtype.itemsize < dtypes.default_uint_dtype().itemsize:
        return dtypes.default_uint_dtype()
    if dtypes.issubdtype(dtype, np.signedinteger) and dtype.itemsize < dtypes.default_int_dtype().itemsize:
        return dtypes.default_int_dtype()
    return dtype


def _identity(name: str, dtype: np.dtype[Any]) -> Any:
    """The value a reduction starts from (what masked-out elements become)."""
    if name in ("sum", "any"):
        return np.zeros((), dtype)[()]
    if name in ("prod", "all"):
        return np.ones((), dtype)[()]
    lowest = name == "max"
    if dtype == np.bool_:
        return np.bool_(not lowest)
    if dtypes.issubdtype(dtype, np.integer):
        info = dtypes.iinfo(dtype)
        return np.array(info.min if lowest else info.max, dtype)[()]
    return np.array(-np.inf if lowest else np.inf, dtype)[()]


# name -> (lax reduction, binary op folding in ``initial``, has an identity)
_REDUCERS: dict[str, tuple[str, str, bool]] = {
    "sum": ("reduce_sum", "add", True),
    "prod": ("reduce_prod", "mul", True),
    "max": ("reduce_max", "max", False),
    "min": ("reduce_min", "min", False),
    "all": ("reduce_and", "bitwise_and", True),
    "any": ("reduce_or", "bitwise_or", True),
}


def _expand_dims(x: Any, axes: tuple[int, ...], rank: int) -> Any:
    """Put size-1 dimensions back at ``axes`` (``keepdims``): one broadcast_in_dim."""
    if not axes:
        return x
    shape = list(util.shape(x))
    kept = [d for d in range(rank) if d not in axes]
    out_shape = tuple(1 if d in axes else shape[kept.index(d)] for d in range(rank))
    return lax.broadcast_in_dim(x, out_shape, tuple(kept))


def _reduce(
    name: str,
    a: Any,
    axis: Any,
    dtype: Any,
    out: Any,
    keepdims: bool,
    initial: Any,
    where: Any,
    promote_integers: bool = False,
    upcast_f16: bool = False,
) -> Any:
    util.check_arraylike(name, a)
    util.check_no_out(name, out)
    lax_reduce, fold, has_identity = _REDUCERS[name]
    if where is not None and initial is None and not has_identity:
        raise ValueError(
            f"reduction operation {name} does not have an identity, so to use a where mask one has to specify 'initial'"
        )
    want = None if dtype is None else dtypes.check_user_dtype_supported(dtype, name)
    a = _asarray(a)
    if name in ("all", "any"):
        a = util.convert_element_type(a, np.bool_)
    elif name in ("sum", "prod") and dtypes.dtype(a) == np.bool_:
        # bool sums and multiplies as an integer (True + True is 2), whatever dtype= says.
        a = util.convert_element_type(a, dtypes.default_int_dtype())
    axes = util.canonicalize_axes(axis, util.ndim(a))
    if initial is None and not has_identity and builtins.any(util.shape(a)[d] == 0 for d in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    result_dtype = want if want is not None else dtypes.dtype(a)
    if want is None and promote_integers:
        result_dtype = _promoted_integer(result_dtype)
    compute = _upcast_f16(result_dtype) if upcast_f16 else result_dtype
    a = util.convert_element_type(a, compute)
    if where is not None:
        a = util.where_jit(where, a, _identity(name, compute))
    if compute == np.bool_ and name in ("sum", "prod"):
        # Asked for a bool result: "any" and "every" are bool's sum and product.
        lax_reduce, fold = ("reduce_or", "bitwise_or") if name == "sum" else ("reduce_and", "bitwise_and")
    result = getattr(lax, lax_reduce)(a, axes)
    if initial is not None:
        util.check_arraylike(name, initial)
        # convert_element_type's rule, as in JAX: an out-of-range float saturates
        # (initial=-inf on ints is the smallest int), an int wraps; a Python int
        # too big for the default int raises OverflowError. (A Python scalar
        # becomes a literal.)
        start = util.convert_element_type(initial, compute)
        if np.shape(start) != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape {np.shape(start)}")
        result = getattr(lax, fold)(start, result)
    if keepdims:
        result = _expand_dims(result, axes, util.ndim(a))
    return util.convert_element_type(result, result_dtype)


@util.compiled_when_eager
def sum(  # noqa: A001  (NumPy's name)
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Array:
    """Sum over ``axis`` (all axes by default). Small integers and bool sum in int32."""
    out_: Array = _reduce("sum", a, axis, dtype, out, keepdims, initial, where, promote_integers, upcast_f16=True)
    return out_


@util.compiled_when_eager
def prod(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Any:
    """Product over ``axis`` (all axes by default). Small integers and bool multiply in int32."""
    return _reduce("prod", a, axis, dtype, out, keepdims, initial, where, promote_integers, upcast_f16=True)


@util.compiled_when_eager
def max(  # noqa: A001  (NumPy's name)
    a: ArrayLike,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Any:
    """Maximum over ``axis``; NaN if any element is NaN."""
    return _reduce("max", a, axis, None, out, keepdims, initial, where)


@util.compiled_when_eager
def min(  # noqa: A001  (NumPy's name)
    a: ArrayLike,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Any:
    """Minimum over ``axis``; NaN if any element is NaN."""
    return _reduce("min", a, axis, None, out, keepdims, initial, where)


amax = max
amin = min


@util.compiled_when_eager
def all(  # noqa: A001  (NumPy's name)
    a: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False, *, where: ArrayLike | None = None
) -> Any:
    """Whether every element along ``axis`` is true (nonzero)."""
    return _reduce("all", a, axis, None, out, keepdims, None, where)


@util.compiled_when_eager
def any(  # noqa: A001  (NumPy's name)
    a: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False, *, where: ArrayLike | None = None
) -> Any:
    """Whether any element along ``axis`` is true (nonzero)."""
    return _reduce("any", a, axis, None, out, keepdims, None, where)


# ---------------------------------------------------------------------------
# mean, var, std


def _count_value(a: Any, axes: tuple[int, ...], dtype: Any) -> Any:
    """The number of elements reduced, as a ``dtype`` scalar (a traced ``dim_as_value`` where the
    shape is symbolic: jax.export)."""
    n = _count(a, axes)
    if isinstance(n, int):
        return np.array(n, dtype)[()]
    return util.convert_element_type(dimension_as_value(n), dtype)


def _count(a: Any, axes: tuple[int, ...]) -> int:
    size = 1
    for d in axes:
        size *= util.shape(a)[d]
    return size


@util.compiled_when_eager
def mean(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Any:
    """Arithmetic mean over ``axis``; integers average in floating point."""
    util.check_arraylike("mean", a)
    util.check_no_out("mean", out)
    a = _asarray(a)
    want = None if dtype is None else dtypes.check_user_dtype_supported(dtype, "mean")
    result_dtype = want if want is not None else util.to_inexact_dtype(dtypes.dtype(a))
    compute = _upcast_f16(result_dtype)
    axes = util.canonicalize_axes(axis, util.ndim(a))
    if where is None:
        normalizer: Any = _count_value(a, axes, compute)
    else:
        mask = util.broadcast_to(asarray(where), util.shape(a))
        normalizer = sum(util.convert_element_type(mask, dtypes.default_int_dtype()), axes, dtype=compute, keepdims=keepdims)
    total = sum(a, axes, dtype=compute, keepdims=keepdims, where=where)
    return util.convert_element_type(lax.div(total, normalizer), result_dtype)


def _var_dtypes(a_dtype: np.dtype[Any], dtype: Any) -> tuple[np.dtype[Any], np.dtype[Any]]:
    """(computation dtype, result dtype) of var/std."""
    if dtype is None:
        result = a_dtype if dtypes.issubdtype(a_dtype, np.inexact) else dtypes.default_float_dtype()
        if result.kind == "c":  # the variance of complex values is real
            return _upcast_f16(a_dtype), np.dtype(np.finfo(result).dtype)
    else:
        result = dtypes.check_user_dtype_supported(dtype, "var")
        if result.kind != "c" and a_dtype.kind == "c":
            raise ValueError(
                "jax.numpy.var does not yet support real dtype parameters when computing the variance of an "
                "array of complex values. The semantics of numpy.var seem unclear in this case. Please comment "
                "on https://github.com/jax-ml/jax/issues/2283 if this behavior is important to you."
            )
    return _upcast_f16(dtypes.promote_types(a_dtype, result) if dtypes.issubdtype(result, np.inexact) else result), result


def _var(
    a: Any, correction: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
    where: Any = None, mean_value: Any = None,
) -> Any:
    compute, result_dtype = _var_dtypes(dtypes.dtype(a), dtype)
    a = util.convert_element_type(a, compute)
    axes = util.canonicalize_axes(axis, util.ndim(a))
    if mean_value is None:
        mean_value = mean(a, axes, dtype=compute, keepdims=True, where=where)
    else:
        mean_value = util.convert_element_type(mean_value, compute)
    centered = lax.sub(a, mean_value)
    if dtypes.issubdtype(compute, np.complexfloating):  # |a - mean|^2, real
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        compute = dtypes.dtype(centered)
    else:
        centered = lax.square(centered)
    if where is None:
        normalizer: Any = lax.sub(_count_value(a, axes, compute), util.convert_element_type(correction, compute))
    else:
        mask = util.broadcast_to(where, util.shape(a))
        count = sum(util.convert_element_type(mask, dtypes.default_int_dtype()), axes, dtype=compute, keepdims=keepdims)
        normalizer = lax.sub(count, util.convert_element_type(correction, compute))
    total = sum(centered, axes, dtype=compute, keepdims=keepdims, where=where)
    result = util.convert_element_type(lax.div(total, normalizer), result_dtype)
    # Fewer elements than the correction: the variance is undefined (NaN).
    return util.where_jit(lax.gt(normalizer, const(normalizer, 0)), result, np.nan)


_var_jit = staged("_var", _var, static_argnames=("axis", "dtype", "keepdims"))


def _std(
    a: Any, correction: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
    where: Any = None, mean_value: Any = None,
) -> Any:
    return lax.sqrt(_var_jit(a, correction, axis=axis, dtype=dtype, keepdims=keepdims, **_dynamic(where, mean_value)))


_std_jit = staged("_std", _std, static_argnames=("axis", "dtype", "keepdims"))


def _dynamic(where: Any, mean_value: Any) -> dict[str, Any]:
    # Optional array arguments are passed to the staged function only when given,
    # so that its signature (and jaxpr) is JAX's in the common case.
    return {k: v for k, v in (("where", where), ("mean_value", mean_value)) if v is not None}


def _var_args(
    name: str, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any, where: Any, mean_value: Any, correction: Any
) -> tuple[Any, Any, Any]:
    util.check_arraylike(name, a)
    util.check_no_out(name, out)
    if correction is None:
        correction = ddof
    elif not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, name)
    axes = util.canonicalize_axes(axis, util.ndim(a))
    return _asarray(a), correction, axes if axis is not None else None


def var(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    correction: int | float | None = None,
) -> Any:
    """Variance over ``axis``: ``sum((a - mean)**2) / (N - correction)``; ``ddof`` is ``correction``."""
    a, correction, axes = _var_args("var", a, axis, dtype, out, ddof, where, mean, correction)
    return _var_jit(a, correction, axis=axes, dtype=dtype, keepdims=bool(keepdims), **_dynamic(where, mean))


def std(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    correction: int | float | None = None,
) -> Any:
    """Standard deviation over ``axis``: the square root of ``var``."""
    a, correction, axes = _var_args("std", a, axis, dtype, out, ddof, where, mean, correction)
    return _std_jit(a, correction, axis=axes, dtype=dtype, keepdims=bool(keepdims), **_dynamic(where, mean))


# ---------------------------------------------------------------------------
# argmax / argmin


def _arg_reduce(name: str, a: Any, axis: Any, out: Any, keepdims: bool | None) -> Any:
    util.check_arraylike(name, a)
    util.check_no_out(name, out)
    a = _asarray(a)
    if axis is None:
        if util.ndim(a) != 1:
            a = lax.reshape(a, (a.size,))
        axis = 0
        kept_rank = util.ndim(a) if not keepdims else None
    else:
        axis = util.canonicalize_axis(core.concrete_or_error(axis, f"axis argument of jnp.{name}"), util.ndim(a))
        kept_rank = None
    if util.shape(a)[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = getattr(lax, name)(a, axis, dtypes.default_int_dtype())
    if keepdims:
        rank = util.ndim(a) if kept_rank is None else kept_rank
        result = _expand_dims(result, (axis,), rank)
    return result


def argmax(a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Any:
    """Index of the maximum along ``axis`` (of the flattened array by default); first NaN wins."""
    return _argmax_or_min("argmax", a, axis, out, keepdims)


def argmin(a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Any:
    """Index of the minimum along ``axis`` (of the flattened array by default); first NaN wins."""
    return _argmax_or_min("argmin", a, axis, out, keepdims)


def _argmax_or_min(name: str, a: Any, axis: Any, out: Any, keepdims: bool | None) -> Any:
    if axis is None and keepdims:
        rank = util.ndim(a)
        flat = _arg_reduce(name, a, None, out, False)
        return lax.broadcast_in_dim(flat, (1,) * rank, ())
    return _arg_reduce(name, a, axis, out, keepdims)


# ---------------------------------------------------------------------------
# NaN-ignoring reductions


def _is_inexact(x: Any) -> bool:
    return dtypes.issubdtype(dtypes.dtype(x), np.inexact)


def _nan_to(a: Any, value: Any) -> Any:
    return util.where_jit(lax.ne(a, a), value, a)


def _nansum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, initial: Any = None,
            where: Any = None) -> Any:
    if _is_inexact(a):
        a = _nan_to(a, np.zeros((), dtypes.dtype(a))[()])
    return sum(a, axis, dtype, None, keepdims, initial, where)


_nansum_jit = staged("nansum", _nansum, static_argnames=("axis", "dtype", "keepdims"))


def _static_axis(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def nansum(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Any:
    """Sum treating NaNs as zero."""
    util.check_arraylike("nansum", a)
    util.check_no_out("nansum", out)
    given = _given(axis=_static_axis(axis), dtype=dtype, keepdims=bool(keepdims), initial=initial, where=where)
    return _nansum_jit(_asarray(a), **given)


def _given(**kwargs: Any) -> dict[str, Any]:
    """The keyword arguments that differ from their defaults (None/False).

    The staged functions are called with only those, as JAX's are, so that a
    call with defaults and an internal call passing them explicitly are traced
    separately, and print like JAX's.
    """
    return {k: v for k, v in kwargs.items() if v is not None and v is not False}


def _nanmean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, where: Any = None) -> Any:
    if not _is_inexact(a):
        return mean(a, axis, dtype, None, keepdims, where=where)
    want = util.to_inexact_dtype(dtypes.dtype(a)) if dtype is None else dtypes.canonicalize_dtype(dtype)
    present = lax.bitwise_not(lax.ne(a, a))
    count = sum(util.convert_element_type(present, dtypes.default_int_dtype()), axis, want, None, keepdims,
                where=where)
    total = _nansum_jit(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(total, count)


_nanmean_jit = staged("nanmean", _nanmean, static_argnames=("axis", "dtype", "keepdims"))


def nanmean(
    a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
    where: ArrayLike | None = None,
) -> Any:
    """Mean of the non-NaN elements."""
    util.check_arraylike("nanmean", a)
    util.check_no_out("nanmean", out)
    given = _given(axis=_static_axis(axis), dtype=dtype, keepdims=bool(keepdims), where=where)
    return _nanmean_jit(_asarray(a), **given)


def _nan_extreme(name: str) -> Fn:
    reduce_fn = max if name == "nanmax" else min
    fill = -np.inf if name == "nanmax" else np.inf

    def body(a: Any, axis: Any = None, keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        if not _is_inexact(a):
            return reduce_fn(a, axis, None, keepdims, initial, where)
        out = reduce_fn(_nan_to(a, const(a, fill)), axis, None, keepdims, initial, where)
        # All-NaN slices have no maximum: NaN, like NumPy (which also warns).
        return util.where_jit(all(lax.ne(a, a), axis, None, keepdims, where=where), const(out, np.nan), out)

    staged_body = staged(name, body, static_argnames=("axis", "keepdims"))

    def fn(
        a: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False,
        initial: ArrayLike | None = None, where: ArrayLike | None = None,
    ) -> Any:
        util.check_arraylike(name, a)
        util.check_no_out(name, out)
        given = _given(axis=_static_axis(axis), keepdims=bool(keepdims), initial=initial, where=where)
        return staged_body(_asarray(a), **given)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{'Maximum' if name == 'nanmax' else 'Minimum'} ignoring NaNs (NaN only for all-NaN slices)."
    return fn


nanmax = _nan_extreme("nanmax")
nanmin = _nan_extreme("nanmin")


def nanvar(a: ArrayLike, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("jnp.nanvar is not supported by minijax yet; use jnp.var with where=~jnp.isnan(a).")


def nanstd(a: ArrayLike, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("jnp.nanstd is not supported by minijax yet; use jnp.std with where=~jnp.isnan(a).")


def nanargmax(a: ArrayLike, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("jnp.nanargmax is not supported by minijax yet.")


def nanargmin(a: ArrayLike, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("jnp.nanargmin is not supported by minijax yet.")


def _ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return lax.sub(max(a, axis, None, keepdims), min(a, axis, None, keepdims))


_ptp_jit = staged("_ptp", _ptp, static_argnames=("axis", "keepdims"))


def ptp(a: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """Range (maximum minus minimum) over ``axis``."""
    util.check_arraylike("ptp", a)
    util.check_no_out("ptp", out)
    return _ptp_jit(_asarray(a), **_given(axis=_static_axis(axis), keepdims=bool(keepdims)))


# ---------------------------------------------------------------------------
# Whole-array comparisons

_RTOL = 1e-05
_ATOL = 1e-08


def _isfinite(x: Any) -> Any:
    """Both parts finite for complex values (lax.is_finite takes real ones only)."""
    if dtypes.issubdtype(dtypes.dtype(x), np.complexfloating):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def _isclose(a: Any, b: Any, rtol: Any = _RTOL, atol: Any = _ATOL, equal_nan: bool = False) -> Any:
    a, b = util.promote_args_inexact("isclose", a, b)
    dtype = dtypes.dtype(a)
    if dtype.kind == "c":  # tolerances compare with |a - b|, which is real
        dtype = np.dtype(np.finfo(dtype).dtype)
    rtol = util.convert_element_type(rtol, dtype)
    atol = util.convert_element_type(atol, dtype)
    both_nan = lax.bitwise_and(lax.ne(a, a), lax.ne(b, b))
    finite = _isfinite(b)
    within = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    # Equal infinities are close; otherwise an infinite b is close to nothing.
    out = lax.bitwise_or(lax.eq(a, b), lax.bitwise_and(finite, within))
    return lax.bitwise_or(out, both_nan) if equal_nan else out


_isclose_jit = staged("isclose", _isclose, static_argnames=("equal_nan",))


def _tolerances(rtol: Any, atol: Any) -> dict[str, Any]:
    # Defaults stay inside the staged function (as constants), like JAX's.
    return {k: v for k, v, d in (("rtol", rtol, _RTOL), ("atol", atol, _ATOL)) if v is not d}


def isclose(a: ArrayLike, b: ArrayLike, rtol: ArrayLike = _RTOL, atol: ArrayLike = _ATOL,
            equal_nan: bool = False) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (NaNs equal only with ``equal_nan``)."""
    util.check_arraylike("isclose", a, b)
    return _isclose_jit(a, b, **_tolerances(rtol, atol), equal_nan=bool(equal_nan))


def _allclose(a: Any, b: Any, rtol: Any = _RTOL, atol: Any = _ATOL, equal_nan: bool = False) -> Any:
    return all(_isclose_jit(a, b, rtol, atol, equal_nan=equal_nan))


_allclose_jit = staged("allclose", _allclose, static_argnames=("equal_nan",))


def allclose(a: ArrayLike, b: ArrayLike, rtol: ArrayLike = _RTOL, atol: ArrayLike = _ATOL,
             equal_nan: bool = False) -> Any:
    """Whether ``isclose`` holds for every element."""
    util.check_arraylike("allclose", a, b)
    return _allclose_jit(a, b, **_tolerances(rtol, atol), equal_nan=bool(equal_nan))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Any:
    """Whether two arrays have the same shape and elements (a bool Array)."""
    a1, a2 = _asarray(a1), _asarray(a2)
    if util.shape(a1) != util.shape(a2):
        return _asarray(np.bool_(False))
    eq = equal(a1, a2)
    if equal_nan:
        eq = lax.bitwise_or(eq, lax.bitwise_and(lax.ne(a1, a1), lax.ne(a2, a2)))
    return all(eq)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Any:
    """Whether two arrays are equal after broadcasting against each other."""
    a1, a2 = _asarray(a1), _asarray(a2)
    try:
        eq = equal(a1, a2)
    except ValueError:
        return _asarray(np.bool_(False))
    return all(eq)
