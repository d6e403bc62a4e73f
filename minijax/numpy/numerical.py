"""Numerical jax.numpy functions built from the rest of ``jnp``: NaN handling,
weighted averages and covariances, finite differences, interpolation and
integration, order statistics (median/percentile/quantile and their NaN
forms), multi-dimensional histograms, floating-point decomposition (frexp,
ldexp, modf, spacing), integer gcd/lcm, the Bessel function ``i0`` and the
window functions.

Each follows JAX 0.10.2's definition (its dtypes, weak types, options and
errors); where JAX stages a function with ``jit`` we do too, so the static
arguments are the same.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes, lax
from minijax.autodiff import jvp
from minijax.custom_derivatives import custom_jvp
from minijax.numpy import util
from minijax.numpy.namespace import jnp
from minijax.numpy.ufuncs import staged
from minijax.numpy.util import ArrayLike
from minijax.stages import jit

__all__ = [
    "average", "bartlett", "blackman", "corrcoef", "cov", "diff", "ediff1d", "frexp", "gcd", "gradient", "hamming",
    "hanning", "histogram2d", "histogramdd", "i0", "interp", "kaiser", "lcm", "ldexp", "median", "modf", "nan_to_num",
    "nanmedian", "nanpercentile", "nanprod", "nanquantile", "percentile", "quantile", "spacing", "trapezoid", "unwrap",
]


def _arr(name: str, *xs: Any) -> list[Any]:
    util.check_arraylike(name, *xs)
    return [jnp.asarray(x) for x in xs]


def _static_index(x: Any, what: str) -> int:
    return operator.index(core.concrete_or_error(x, what))


# ---------------------------------------------------------------------------
# NaN handling


def _nan_to_num(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    dtype = x.dtype
    if not dtypes.issubdtype(dtype, np.inexact):
        return x
    if dtypes.issubdtype(dtype, np.complexfloating):  # each part on its own, as JAX
        return lax.complex(_nan_to_num(lax.real(x), nan, posinf, neginf), _nan_to_num(lax.imag(x), nan, posinf, neginf))
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = jnp.where(jnp.isnan(x), jnp.asarray(nan, dtype=dtype), x)
    out = jnp.where(jnp.isposinf(out), jnp.asarray(posinf, dtype=dtype), out)
    return jnp.where(jnp.isneginf(out), jnp.asarray(neginf, dtype=dtype), out)


_nan_to_num_jit = staged("nan_to_num", _nan_to_num)


def nan_to_num(x: ArrayLike, copy: bool = True, nan: ArrayLike = 0.0, posinf: ArrayLike | None = None,
               neginf: ArrayLike | None = None) -> Any:
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf``/``neginf`` (default: the dtype's extremes)."""
    del copy
    (arr,) = _arr("nan_to_num", x)
    return _nan_to_num_jit(arr, nan, posinf, neginf)


def _nanprod(a: Any, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any) -> Any:
    if dtypes.issubdtype(a.dtype, np.inexact):
        a = jnp.where(jnp.isnan(a), np.ones((), a.dtype)[()], a)
    return jnp.prod(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


_nanprod_jit = staged("nanprod", _nanprod, static_argnames=("axis", "dtype", "keepdims"))


def nanprod(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
            initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Any:
    """The product treating NaNs as one."""
    util.check_arraylike("nanprod", a)
    util.check_no_out("nanprod", out)
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "nanprod")
    axis = tuple(axis) if isinstance(axis, list) else axis
    return _nanprod_jit(jnp.asarray(a), axis, dtype, bool(keepdims), initial, where)


# ---------------------------------------------------------------------------
# Averages and covariance


def _axis_tuple(axis: Any, nd: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if isinstance(axis, int) or np.ndim(axis) == 0 else tuple(axis)
    return tuple(util.canonicalize_axis(a, nd) for a in axes)


def _average(a: Any, weights: Any, axis: Any, returned: bool, keepdims: bool) -> Any:
    axes = _axis_tuple(axis, a.ndim)
    if weights is None:
        (a,) = util.promote_dtypes_inexact(a)
        avg = jnp.mean(a, axis=axis, keepdims=keepdims)
        count = math.prod(a.shape[d] for d in axes)
        weights_sum = lax.full((), count, avg.dtype)
    else:
        a, weights = util.promote_dtypes_inexact(a, weights)
        if a.shape != weights.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if weights.shape != tuple(a.shape[d] for d in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            # The weights' axes follow the order ``axis`` names them in; put them in place.
            order = tuple(int(i) for i in np.argsort(axes))
            new_shape = tuple(dim if i in axes else 1 for i, dim in enumerate(a.shape))
            weights = lax.reshape(lax.transpose(weights, order), new_shape)
        weights_sum = jnp.sum(weights, axis=axis, keepdims=keepdims)
        avg = jnp.sum(a * weights, axis=axis, keepdims=keepdims) / weights_sum
    if returned:
        if avg.shape != weights_sum.shape:
            weights_sum = jnp.broadcast_to(weights_sum, avg.shape)
        return avg, weights_sum
    return avg


_average_jit = staged("_average", _average, static_argnames=("axis", "returned", "keepdims"))


def average(a: ArrayLike, axis: Any = None, weights: ArrayLike | None = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """The weighted mean over ``axis``; ``returned=True`` also gives the sum of the weights.

    ``weights`` has ``a``'s shape, or (with ``axis``) the shape of the reduced axes.
    """
    if weights is None:
        (arr,) = _arr("average", a)
        w = None
    else:
        arr, w = _arr("average", a, weights)
    if isinstance(axis, list):
        axis = tuple(axis)
    return _average_jit(arr, w, axis, bool(returned), bool(keepdims))


def _cov(m: Any, y: Any, rowvar: bool, bias: bool, ddof: Any, fweights: Any, aweights: Any, dtype: Any) -> Any:
    if y is not None:
        m, y = util.promote_args_inexact("cov", m, y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = util.promote_args_inexact("cov", m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype!r}")
    X = jnp.atleast_2d(m)  # noqa: N806  (NumPy's name)
    if not rowvar and m.ndim != 1:
        X = X.T  # noqa: N806
    if X.shape[0] == 0:
        return jnp.array([]).reshape(0, 0)
    if y is not None:
        y2 = jnp.atleast_2d(y)
        if not rowvar and y2.shape[0] != 1:
            y2 = y2.T
        X = jnp.concatenate((X, y2), axis=0)  # noqa: N806
    if X.shape[1] == 0:
        return jnp.full(() if X.shape[0] == 1 else (X.shape[0], X.shape[0]), np.nan, dtype=X.dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    if fweights is not None:
        if np.ndim(fweights) > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if np.shape(fweights)[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dtypes.issubdtype(fweights.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = jnp.abs(fweights)  # NumPy refuses negative weights; JAX (traced) takes their size
    if aweights is not None:
        if np.ndim(aweights) > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if np.shape(aweights)[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aweights = jnp.abs(aweights)
        w = aweights if w is None else w * aweights
    if dtype is not None:
        X = X.astype(dtype)  # noqa: N806
        w = None if w is None else w.astype(dtype)
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        f: Any = X.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = w_sum - ddof
    else:
        f = w_sum - ddof * jnp.sum(w * aweights) / w_sum
    X = X - avg[:, None]  # noqa: N806
    X_T = X.T if w is None else (X * util.broadcast_to_rank(w, X.ndim)).T  # noqa: N806
    return jnp.true_divide(jnp.dot(X, X_T.conj()), f).squeeze()  # conj: NumPy's (and JAX's) complex covariance


_cov_jit = staged("cov", _cov, static_argnames=("rowvar", "bias", "ddof", "dtype"))


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: ArrayLike | None = None, aweights: ArrayLike | None = None, dtype: Any = None) -> Any:
    """The sample covariance of the variables in ``m`` (rows, or columns with ``rowvar=False``), optionally with ``y``'s."""
    util.check_arraylike("cov", m, *(v for v in (y, fweights, aweights) if v is not None))
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype!r}")
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "cov")
    return _cov_jit(m, y, bool(rowvar), bool(bias), ddof, fweights, aweights, dtype)


def _corrcoef(x: Any, y: Any, rowvar: bool, dtype: Any) -> Any:
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype!r}")
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c  # NaN for 0/0, inf/inf and NaN; 1 otherwise
    stddev = jnp.sqrt(jnp.diag(c))
    c = c / stddev[:, None] / stddev[None, :]
    return jnp.clip(c, -1, 1)


_corrcoef_jit = staged("corrcoef", _corrcoef, static_argnames=("rowvar", "dtype"))


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, dtype: Any = None) -> Any:
    """Pearson correlation coefficients: ``cov`` normalised by the standard deviations, clipped to [-1, 1]."""
    util.check_arraylike("corrcoef", x, *(() if y is None else (y,)))
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype!r}")
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "corrcoef")
    return _corrcoef_jit(x, y, bool(rowvar), dtype)


# ---------------------------------------------------------------------------
# Differences, gradients, integration


def _pad_operand(v: Any, shape: tuple[int, ...], axis: int) -> Any:
    if np.ndim(v):
        return v
    unit = list(shape)
    unit[axis] = 1
    return jnp.broadcast_to(v, tuple(unit))


def _diff(a: Any, n: int, axis: int, prepend: Any, append: Any) -> Any:
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = util.canonicalize_axis(axis, a.ndim)
    parts = [_pad_operand(v, a.shape, axis) for v in (prepend, a, append) if v is not None]
    if len(parts) > 1:
        a = jnp.concatenate(parts, axis)
    for _ in range(n):
        upper = lax.slice_in_dim(a, 1, None, axis=axis)
        lower = lax.slice_in_dim(a, 0, -1, axis=axis)
        a = jnp.not_equal(upper, lower) if a.dtype == np.bool_ else jnp.subtract(upper, lower)
    return a


_diff_jit = staged("diff", _diff, static_argnames=("n", "axis"))


def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Any:
    """The ``n``-th discrete difference along ``axis`` (booleans: ``!=``), after joining ``prepend``/``append``."""
    (arr,) = _arr("diff", a)
    n = _static_index(n, "'n' argument of jnp.diff")
    axis = _static_index(axis, "'axis' argument of jnp.diff")
    pre = None if prepend is None else _arr("diff", prepend)[0]
    app = None if append is None else _arr("diff", append)[0]
    return _diff_jit(arr, n, axis, pre, app)


def _ediff1d(arr: Any, to_end: Any, to_begin: Any) -> Any:
    arr = arr.ravel()
    result = lax.sub(arr[1:], arr[:-1])
    if to_begin is not None:
        result = jnp.concatenate((jnp.ravel(to_begin.astype(arr.dtype)), result))
    if to_end is not None:
        result = jnp.concatenate((result, jnp.ravel(to_end.astype(arr.dtype))))
    return result


_ediff1d_jit = staged("ediff1d", _ediff1d)


def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None) -> Any:
    """Differences of consecutive elements of the flattened ``ary``, with ``to_begin``/``to_end`` joined on."""
    (arr,) = _arr("ediff1d", ary)
    end = None if to_end is None else _arr("ediff1d", to_end)[0]
    begin = None if to_begin is None else _arr("ediff1d", to_begin)[0]
    return _ediff1d_jit(arr, end, begin)


def _gradient_along(a: Any, h: Any, axis: int) -> Any:
    def part(start: int | None, stop: int | None, x: Any = a) -> Any:
        return lax.slice_in_dim(x, start, stop, axis=axis)

    upper = part(1, 2) - part(0, 1)
    lower = part(-1, None) - part(-2, -1)
    if np.ndim(h) == 0:
        inner = (part(2, None) - part(None, -2)) * 0.5 / h
        upper = upper / h
        lower = lower / h
    elif np.ndim(h) == 1:
        if h.shape[0] != a.shape[axis]:
            raise ValueError("Spacing arrays must have the same length as the dimension along which the gradient "
                             "is calculated.")
        h_shape = [1] * a.ndim
        h_shape[axis] = h.shape[0]
        h = h.reshape(h_shape)
        upper = upper / (part(1, 2, h) - part(0, 1, h))
        lower = lower / (part(-1, None, h) - part(-2, -1, h))
        dx1 = part(1, -1, h) - part(0, -2, h)
        dx2 = part(2, None, h) - part(1, -1, h)
        # Second-order accurate central differences on a non-uniform grid.
        c0 = -dx2 / (dx1 * (dx1 + dx2))
        c1 = (dx2 - dx1) / (dx1 * dx2)
        c2 = dx1 / (dx2 * (dx1 + dx2))
        inner = c0 * part(0, -2) + c1 * part(1, -1) + c2 * part(2, None)
    else:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    return jnp.concatenate((upper, inner, lower), axis=axis)


def _gradient(f: Any, *varargs: Any, axis: Any) -> Any:
    a, *spacing = util.promote_dtypes_inexact(f, *varargs)
    axes = tuple(range(a.ndim)) if axis is None else _axis_tuple(axis, a.ndim)
    if not axes:
        return []
    if builtins.min(a.shape[i] for i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least 2 elements are "
                         "required.")
    if not spacing:
        dx: list[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        dx = spacing * len(axes)
    elif len(spacing) == len(axes):
        dx = spacing
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    grads = [_gradient_along(a, h, ax) for ax, h in zip(axes, dx)]
    return grads[0] if len(axes) == 1 else grads


_gradient_jit = staged("gradient", _gradient, static_argnames=("axis",))


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """Central differences inside, one-sided at the edges, along each of ``axis``.

    ``varargs``: one scalar spacing for every axis, or one per axis, each a
    scalar or the coordinates along that axis. ``edge_order`` is not
    supported (JAX raises NotImplementedError).
    """
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    util.check_arraylike("gradient", f, *varargs)
    if isinstance(axis, list):
        axis = tuple(axis)
    return _gradient_jit(f, *varargs, axis=axis)


def _trapezoid(y: Any, x: Any, dx: Any, axis: int) -> Any:
    if x is None:
        (y,) = util.promote_dtypes_inexact(y)
        dx_arr = jnp.asarray(dx)
        if dx_arr.ndim > 0:
            dx_arr = jnp.moveaxis(lax.expand_dims(dx_arr, tuple(range(y.ndim - dx_arr.ndim))), axis, -1)
    else:
        y, x = util.promote_dtypes_inexact(y, x)
        dx_arr = diff(x) if x.ndim == 1 else jnp.moveaxis(diff(x, axis=axis), axis, -1)
    y = jnp.moveaxis(y, axis, -1)
    if dx_arr.ndim == 0 or dx_arr.shape[-1] == 1:
        # Equal spacing: the sum with the end points halved, times the step.
        step = dx_arr if dx_arr.ndim == 0 else dx_arr[..., 0]
        return step * (y.sum(-1) - 0.5 * (y[..., 0] + y[..., -1]))
    return 0.5 * (dx_arr * (y[..., 1:] + y[..., :-1])).sum(-1)


_trapezoid_jit = staged("trapezoid", _trapezoid, static_argnames=("axis",))


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule (sample points ``x``, or spacing ``dx``)."""
    util.check_arraylike("trapezoid", y, *(() if x is None else (x,)))
    return _trapezoid_jit(y, x, dx, _static_index(axis, "'axis' argument of jnp.trapezoid"))


def _unwrap(p: Any, discont: Any, axis: int, period: Any) -> Any:
    p, period = util.promote_dtypes(p, period)
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    interval = period // 2 if dtypes.issubdtype(p.dtype, np.integer) else period / 2
    dd = diff(p, axis=axis)
    ddmod = jnp.mod(dd + interval, period) - interval
    ddmod = jnp.where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correction = jnp.where(jnp.abs(dd) < discont, 0, ddmod - dd)
    rest = lax.slice_in_dim(p, 1, None, axis=axis) + jnp.cumsum(correction, axis=axis)
    return jnp.concatenate((lax.slice_in_dim(p, 0, 1, axis=axis), rest), axis=axis)


_unwrap_jit = staged("unwrap", _unwrap, static_argnames=("axis",))


def unwrap(p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1, period: ArrayLike = 2 * np.pi) -> Any:
    """``p`` with jumps larger than ``discont`` (default ``period/2``) along ``axis`` removed by adding multiples of ``period``."""
    (arr,) = _arr("unwrap", p)
    return _unwrap_jit(arr, discont, _static_index(axis, "'axis' argument of jnp.unwrap"), period)


def _interp(x: Any, xp: Any, fp: Any, left: Any, right: Any, period: Any) -> Any:
    if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = util.promote_dtypes_inexact(x, xp)
    (fp,) = util.promote_dtypes_inexact(fp)
    for side, value in (("left", left), ("right", right)):
        if isinstance(value, str) and value != "extrapolate":
            raise ValueError(f"the only valid string value of `{side}` is 'extrapolate', but got: {value!r}")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = jnp.abs(period)
        x = x % period
        xp = xp % period
        xp, fp = lax.sort_key_val(xp, fp)
        xp = jnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = jnp.concatenate([fp[-1:], fp, fp[:1]])
    i = jnp.clip(jnp.searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    df = fp[i] - fp[i - 1]
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    # Coincident sample points: take the left value, with no 0/0 in the gradient.
    tiny = np.spacing(dtypes.finfo(xp.dtype).eps)
    flat = lax.abs(dx) <= tiny
    f = jnp.where(flat, fp[i - 1], fp[i - 1] + (delta / jnp.where(flat, 1, dx)) * df)
    if not isinstance(left, str) and period is None:
        f = jnp.where(x < xp[0], fp[0] if left is None else left, f)
    if not isinstance(right, str) and period is None:
        f = jnp.where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | str | None = None,
           right: ArrayLike | str | None = None, period: ArrayLike | None = None) -> Any:
    """Piecewise-linear interpolation of the points (``xp``, ``fp``) at ``x``.

    Outside ``xp``: ``left``/``right`` (default the end values of ``fp``), or
    ``'extrapolate'`` to continue the end segments; ``period`` makes ``xp`` periodic.
    """
    util.check_arraylike("interp", x, xp, fp)
    static = [name for name, v in (("left", left), ("right", right)) if v is None or isinstance(v, str)]
    if period is None:
        static.append("period")
    fn = jit(_interp, static_argnames=tuple(static))
    return fn(jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp), left, right, period)


# ---------------------------------------------------------------------------
# Order statistics

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _flatten_axes(a: Any, w: Any, axis: Any, keepdims: bool) -> tuple[Any, Any, int, list[int] | None]:
    """``a`` (and ``w``) with the reduced axes as one, that axis, and the keepdims shape."""
    if axis is None:
        keep = [1] * a.ndim if keepdims else None
        return a.ravel(), None if w is None else w.ravel(), 0, keep
    if isinstance(axis, tuple):
        nd = a.ndim
        axes = tuple(util.canonicalize_axis(ax, nd) for ax in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
        keep = [1 if i in axes else n for i, n in enumerate(a.shape)]
        rest = [i for i in range(nd) if i not in axes]
        perm = (*rest, *axes)
        shape = (*(a.shape[i] for i in rest), math.prod(a.shape[i] for i in axes))
        a = lax.reshape(lax.transpose(a, perm), shape)
        if w is not None:
            w = lax.reshape(lax.transpose(w, perm), shape)
        return a, w, a.ndim - 1, keep if keepdims else None
    return a, w, util.canonicalize_axis(axis, a.ndim), None


def _quantile(a: Any, q: Any, weights: Any, axis: Any, method: str, keepdims: bool, squash_nans: bool) -> Any:
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'")
    if weights is not None:
        if method != "inverted_cdf":
            raise NotImplementedError(f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights.")
        a, weights = util.promote_dtypes_inexact(a, weights)
        if weights.shape != a.shape:
            if axis is None:
                raise ValueError("Weights shape must match 'a' shape when axis is None.")
            axes = _axis_tuple(axis, a.ndim)
            if weights.shape != tuple(a.shape[ax] for ax in axes):
                raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                                 f"{tuple(a.shape[ax] for ax in axes)}")
            weights = lax.broadcast_in_dim(weights, a.shape, axes)
    else:
        (a,) = util.promote_dtypes_inexact(a)
    out_dtype = a.dtype
    a, weights, axis, keep = _flatten_axes(a, weights, axis, keepdims)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    n = a.shape[axis]
    # Work with the reduced axis last: every index below is along it.
    a = jnp.moveaxis(a, axis, -1)
    if weights is not None:
        weights = jnp.moveaxis(weights, axis, -1)
    isnan = lax.ne(a, a)
    if not squash_nans:
        # Any NaN makes the whole slice's quantiles NaN.
        a = jnp.where(jnp.any(isnan, axis=-1, keepdims=True), np.nan, a)
    else:
        a = jnp.where(isnan, np.nan, a)  # NaN with its sign bit cleared sorts last
    if weights is not None:
        a, weights = lax.sort_key_val(a, weights, dimension=a.ndim - 1)
    else:
        a = lax.sort(a, dimension=a.ndim - 1)
    batch = a.shape[:-1]
    qdt = q.dtype if dtypes.issubdtype(q.dtype, np.inexact) else out_dtype
    qv = q.astype(qdt).reshape(q.shape + (1,) * len(batch))  # q's axis first, then the batch
    if not dtypes.issubdtype(q.dtype, np.inexact):
        raise TypeError(f"floor does not accept dtype {q.dtype}. Accepted dtypes are subtypes of floating.")
    if method == "inverted_cdf":
        result = _inverted_cdf(a, weights, qv, n, squash_nans)
    else:
        if squash_nans:
            count = jnp.sum(~lax.ne(a, a), axis=-1).astype(qdt)
        else:
            count = jnp.full(batch, n, qdt)
        pos = qv * (count - 1)
        low = jnp.floor(pos)
        high = jnp.ceil(pos)
        high_weight = pos - low
        low_weight = 1 - high_weight
        last = jnp.maximum(count - 1, 0)
        low_i = jnp.clip(low, 0, last).astype(dtypes.default_int_dtype())
        high_i = jnp.clip(high, 0, last).astype(dtypes.default_int_dtype())
        low_value = _take_last(a, low_i)
        high_value = _take_last(a, high_i)
        if method == "linear":
            result = low_value.astype(qdt) * low_weight + high_value.astype(qdt) * high_weight
        elif method == "lower":
            result = low_value
        elif method == "higher":
            result = high_value
        elif method == "nearest":
            result = jnp.where(high_weight <= 0.5, low_value, high_value)
        else:
            result = (low_value + high_value) * np.array(0.5, low_value.dtype)
    if keepdims:
        shape = keep if keep is not None else [*batch[:axis], 1, *batch[axis:]]
        result = result.reshape(tuple(q.shape) + tuple(shape))
    return lax.convert_element_type(result, out_dtype)


def _take_last(a: Any, idx: Any) -> Any:
    """``a[..., idx]`` per batch element: ``idx`` is (q..., *batch), the result has that shape."""
    if idx.ndim == a.ndim - 1:  # scalar q
        return jnp.take_along_axis(a, idx[..., None], axis=-1)[..., 0]
    idx = jnp.broadcast_to(idx, idx.shape[:1] + a.shape[:-1])
    moved = jnp.moveaxis(idx, 0, -1)
    return jnp.moveaxis(jnp.take_along_axis(a, moved, axis=-1), -1, 0)


def _inverted_cdf(a: Any, weights: Any, qv: Any, n: int, squash_nans: bool) -> Any:
    """The first sorted value whose cumulative weight reaches ``q`` times the total."""
    if weights is None:
        weights = jnp.ones_like(a)
    isnan = lax.ne(a, a)
    bad = (weights < 0) | lax.ne(weights, weights)
    clean = jnp.where(bad | isnan, 0, weights)
    cum = jnp.cumsum(clean, axis=-1)
    target = qv * cum[..., -1]
    below = jnp.sum((cum[None] if qv.ndim > cum.ndim - 1 else cum) < target[..., None], axis=-1)
    if squash_nans:
        valid = jnp.sum(~isnan, axis=-1)
    else:
        valid = jnp.full(a.shape[:-1], n, dtypes.default_int_dtype())
    idx = jnp.clip(below, 0, jnp.maximum(valid - 1, 0)).astype(dtypes.default_int_dtype())
    result = _take_last(a, idx)
    force_nan = jnp.any(bad, axis=-1) | ((valid == 0) if squash_nans else jnp.any(isnan, axis=-1))
    return jnp.where(force_nan, np.nan, result)


_quantile_jit = staged("quantile", _quantile, static_argnames=("axis", "method", "keepdims", "squash_nans"))


def _quantile_entry(name: str, a: Any, q: Any, axis: Any, out: Any, overwrite_input: bool, method: str,
                    keepdims: bool, weights: Any, squash_nans: bool, percent: bool) -> Any:
    util.check_arraylike(name, a, q, *(() if weights is None else (weights,)))
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")
    q_arr = jnp.asarray(q)
    if percent:
        (q_arr,) = util.promote_dtypes_inexact(q_arr)
        q_arr = q_arr / 100
    if isinstance(axis, list):
        axis = tuple(axis)
    w = None if weights is None else jnp.asarray(weights)
    return _quantile_jit(jnp.asarray(a), q_arr, w, axis, method, bool(keepdims), squash_nans)


def quantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
             weights: ArrayLike | None = None) -> Any:
    """The ``q``-th quantiles (``q`` in [0, 1], a scalar or 1-D) of ``a`` over ``axis``.

    ``method``: 'linear', 'lower', 'higher', 'midpoint', 'nearest' or
    'inverted_cdf' (the only one that takes ``weights``). Any NaN in a slice
    makes its quantiles NaN.
    """
    return _quantile_entry("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights, False, False)


def nanquantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
                weights: ArrayLike | None = None) -> Any:
    """``quantile`` ignoring NaNs (NaN only where a slice holds nothing else)."""
    return _quantile_entry("nanquantile", a, q, axis, out, overwrite_input, method, keepdims, weights, True, False)


def percentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
               weights: ArrayLike | None = None, out_sharding: Any = None) -> Any:
    """``quantile`` with ``q`` in percent (0 to 100)."""
    if out_sharding is not None:
        raise NotImplementedError("minijax has no shardings: out_sharding must be None")
    return _quantile_entry("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights, False, True)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
                  weights: ArrayLike | None = None) -> Any:
    """``nanquantile`` with ``q`` in percent (0 to 100)."""
    return _quantile_entry("nanquantile", a, q, axis, out, overwrite_input, method, keepdims, weights, True, True)


def median(a: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """The median over ``axis`` (the mean of the two middle values for even counts)."""
    util.check_arraylike("median", a)
    return _quantile_entry("quantile", a, 0.5, axis, out, overwrite_input, "midpoint", keepdims, None, False, False)


def nanmedian(a: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
              overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """The median ignoring NaNs."""
    util.check_arraylike("nanmedian", a)
    return _quantile_entry("nanquantile", a, 0.5, axis, out, overwrite_input, "midpoint", keepdims, None, True, False)


# ---------------------------------------------------------------------------
# Histograms in several dimensions


def histogramdd(sample: ArrayLike, bins: Any = 10, range: Sequence[Any] | None = None,  # noqa: A002
                weights: ArrayLike | None = None, density: bool | None = None) -> tuple[Any, list[Any]]:
    """Counts (or summed ``weights``) of the N points of ``sample`` (N, D) in a D-dimensional grid of bins.

    ``bins``: one number of bins or one array of edges for every dimension, or
    a list with one per dimension; ``range``: a (min, max) pair or None per dimension.
    """
    if weights is None:
        (arr,) = _arr("histogramdd", sample)
        (arr,) = util.promote_dtypes_inexact(arr)
        w = None
    else:
        arr, w = _arr("histogramdd", sample, weights)
        if np.shape(w) != np.shape(arr)[:1]:
            raise ValueError("should have one weight for each sample.")
        arr, w = util.promote_dtypes_inexact(arr, w)
    n, d = np.shape(arr)
    if range is not None and (len(range) != d or builtins.any(r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or Nones; got range={range}")
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = d * [bins]
    else:
        if len(per_dim) != d:
            raise ValueError("should be a bin for each dimension.")
    indices, edges = [], []
    for i in builtins.range(d):
        column = arr[:, i]
        e = jnp.histogram_bin_edges(column, per_dim[i], None if range is None else range[i], w)
        idx = jnp.searchsorted(e, column, side="right")
        indices.append(jnp.where(column == e[-1], idx - 1, idx))  # the last bin is closed on the right
        edges.append(e)
    # One extra bin each side for the points outside the edges; cut off below.
    nbins = tuple(e.shape[0] + 1 for e in edges)
    flat = jnp.zeros(np.shape(arr)[:1], dtypes.default_int_dtype())
    for idx, size in zip(indices, nbins):
        flat = flat * size + jnp.clip(idx, 0, size - 1)
    hist = jnp.bincount(flat, w, length=math.prod(nbins)).reshape(nbins)
    hist = hist[(slice(1, -1),) * d]
    if density:
        hist = hist.astype(arr.dtype)
        hist = hist / hist.sum()
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = e.shape[0] - 1
            hist = hist / diff(e).reshape(shape)
    return hist, edges


def histogram2d(x: ArrayLike, y: ArrayLike, bins: Any = 10, range: Sequence[Any] | None = None,  # noqa: A002
                weights: ArrayLike | None = None, density: bool | None = None) -> tuple[Any, Any, Any]:
    """``histogramdd`` of the points (x, y): the counts and the x and y edges."""
    xa, ya = _arr("histogram2d", x, y)
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):
        edges = jnp.asarray(bins)
        bins = [edges, edges]
    hist, edge_list = histogramdd(jnp.stack([xa, ya], axis=1), bins, range, weights, density)
    return hist, edge_list[0], edge_list[1]


# ---------------------------------------------------------------------------
# Floating-point decomposition


def _int_type(bits: int) -> Any:
    return {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[bits]


@custom_jvp
def _frexp(x: Any) -> tuple[Any, Any]:
    dtype = x.dtype
    info = dtypes.finfo(dtype)
    ity = _int_type(info.bits)
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    # Subnormals: scale into the normal range first, remember the shift.
    tiny = lax.abs(x) < np.array(info.tiny, dtype)
    scaled = jnp.where(tiny, x * np.array(2.0**info.nmant, dtype), x)
    shift = jnp.where(tiny, ity(-info.nmant), ity(0))
    bits = lax.bitcast_convert_type(scaled, ity)
    exponent = shift + ((bits >> ity(info.nmant)) & ity(mask)) - ity(bias) + ity(1)
    # Keep sign and mantissa, set the exponent field so that 0.5 <= |m| < 1.
    m_bits = (bits & ity(~(mask << info.nmant))) | ity((bias - 1) << info.nmant)
    mantissa = lax.bitcast_convert_type(m_bits, dtype)
    special = jnp.isinf(x) | jnp.isnan(x) | (x == 0)
    exponent = jnp.where(special, ity(0), exponent)
    return jnp.where(special, x, mantissa), lax.convert_element_type(exponent, np.int32)


@_frexp.defjvp
def _frexp_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    m, e = _frexp(x)
    return (m, e), (t * jnp.exp2(-e.astype(t.dtype)), np.zeros(e.shape, dtypes.float0))


def _frexp_entry(x: Any) -> tuple[Any, Any]:
    (x,) = util.promote_dtypes_inexact(x)
    result: tuple[Any, Any] = _frexp(x)
    return result


_frexp_jit = staged("frexp", _frexp_entry)


def frexp(x: ArrayLike, /) -> tuple[Any, Any]:
    """(mantissa, exponent) with ``x = mantissa * 2**exponent`` and 0.5 <= |mantissa| < 1 (int32 exponent)."""
    (arr,) = _arr("frexp", x)
    return _frexp_jit(arr)  # type: ignore[no-any-return]


def _ldexp(x1: Any, x2: Any) -> Any:
    if dtypes.issubdtype(x2.dtype, np.inexact):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    (x1,) = util.promote_args_inexact("ldexp", x1)
    x2 = lax.convert_element_type(x2, x1.dtype)
    # Apply the exponent to the mantissa so small x1 with large x2 does not overflow on the way.
    m, e = frexp(x1)
    e = (e.astype(x2.dtype) + x2).astype(x1.dtype)
    m = jnp.where(e > 0, m * 2, m)
    e = jnp.where(e > 0, e - 1, e)
    out = m * (2 ** e.astype(m.dtype))
    return jnp.where(jnp.isinf(x1) | (x1 == 0), x1, out)


_ldexp_jit = staged("ldexp", _ldexp)


def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """``x1 * 2**x2`` for an integer ``x2``."""
    a, b = _arr("ldexp", x1, x2)
    return _ldexp_jit(a, b)


def _modf(x: Any) -> tuple[Any, Any]:
    (x,) = util.promote_dtypes_inexact(x)
    whole = jnp.where(x >= 0, jnp.floor(x), jnp.ceil(x))
    return x - whole, whole


_modf_jit = staged("modf", _modf)


def modf(x: ArrayLike, /, out: None = None) -> tuple[Any, Any]:
    """(fractional part, integral part) of ``x``, both with ``x``'s sign."""
    (arr,) = _arr("modf", x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    return _modf_jit(arr)  # type: ignore[no-any-return]


def _spacing(x: Any) -> Any:
    (x,) = util.promote_args_inexact("spacing", x)
    inf = np.array(np.inf, x.dtype)
    if x.dtype == np.float16:
        return lax.nextafter(x, lax.full_like(x, inf)) - x  # NumPy's float16 rule: always toward +inf
    step = lax.nextafter(x, jnp.copysign(inf, x)) - x
    return jnp.where(step == 0, jnp.copysign(np.array(dtypes.finfo(x.dtype).smallest_subnormal, x.dtype), x), step)


_spacing_jit = staged("spacing", _spacing)


def spacing(x: ArrayLike, /) -> Any:
    """The distance from ``x`` to the next representable number away from zero."""
    (arr,) = _arr("spacing", x)
    return _spacing_jit(arr)


# ---------------------------------------------------------------------------
# gcd and lcm


def _gcd_continue(xs: tuple[Any, Any]) -> Any:
    return jnp.any(xs[1] != 0)


def _gcd_step(xs: tuple[Any, Any]) -> tuple[Any, Any]:
    a, b = xs
    nonzero = b != 0
    a, b = jnp.where(nonzero, b, a), jnp.where(nonzero, lax.rem(a, jnp.where(nonzero, b, 1)), 0)
    return jnp.maximum(a, b), jnp.minimum(a, b)


def _gcd(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_dtypes(x1, x2)
    if not dtypes.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = jnp.broadcast_arrays(x1, x2)
    # Euclid's algorithm elementwise, until every remainder is zero.
    result, _ = lax.while_loop(_gcd_continue, _gcd_step, (jnp.abs(x1), jnp.abs(x2)))
    return result


_gcd_jit = staged("gcd", _gcd)


def gcd(x1: ArrayLike, x2: ArrayLike) -> Any:
    """The greatest common divisor of integers (non-negative; gcd(0, 0) = 0)."""
    a, b = _arr("gcd", x1, x2)
    return _gcd_jit(a, b)


def _lcm(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_dtypes(x1, x2)
    x1, x2 = jnp.abs(x1), jnp.abs(x2)
    if not dtypes.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(x1, x2)
    return jnp.where(d == 0, np.zeros((), d.dtype)[()], x1 * jnp.floor_divide(x2, jnp.where(d == 0, 1, d)))


_lcm_jit = staged("lcm", _lcm)


def lcm(x1: ArrayLike, x2: ArrayLike) -> Any:
    """The least common multiple of integers (non-negative; 0 when either is 0)."""
    a, b = _arr("lcm", x1, x2)
    return _lcm_jit(a, b)


# ---------------------------------------------------------------------------
# i0: the modified Bessel function of the first kind, order 0

def _i0_formula(x: Any) -> Any:
    # I0 is even: exp(|x|) * i0e(|x|), with the scaled function from the bessel_i0e primitive.
    ax = lax.abs(x)
    return lax.mul(lax.exp(ax), lax.bessel_i0e(ax))


@custom_jvp
def _i0(x: Any) -> Any:
    return _i0_formula(x)


@_i0.defjvp
def _i0_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # The formula's own derivative, except at 0, where |x|'s kink would give sign(0) = 0 times a
    # one-sided slope; I0 is even and smooth there, so its derivative is exactly 0 (as JAX's).
    out, out_dot = jvp(_i0_formula, primals, tangents)
    return out, jnp.where(primals[0] == 0, 0.0, out_dot)


def _i0_entry(x: Any) -> Any:
    (x,) = util.promote_args_inexact("i0", x)
    if not dtypes.issubdtype(x.dtype, np.floating):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.dtype}")
    return _i0(x)


_i0_jit = staged("i0", _i0_entry)


def i0(x: ArrayLike) -> Any:
    """The modified Bessel function of the first kind of order 0, with JAX's custom derivative (0 at x = 0)."""
    util.check_arraylike("i0", x)
    return _i0_jit(x)


# ---------------------------------------------------------------------------
# Window functions


def _window(name: str, M: Any) -> tuple[int, Any]:  # noqa: N803  (NumPy's name)
    size = int(core.concrete_or_error(M, f"M argument of jnp.{name}"))
    n = lax.iota(dtypes.default_float_dtype(), builtins.max(size, 0)) if size > 1 else None
    return size, n


def _ones_window(size: int) -> Any:
    return lax.full((size,), 1, dtypes.default_float_dtype())


def bartlett(M: int) -> Any:  # noqa: N803
    """The Bartlett (triangular) window of ``M`` points."""
    size, n = _window("bartlett", M)
    if n is None:
        return _ones_window(size)
    return 1 - jnp.abs(2 * n + 1 - size) / (size - 1)


def blackman(M: int) -> Any:  # noqa: N803
    """The Blackman window of ``M`` points."""
    size, n = _window("blackman", M)
    if n is None:
        return _ones_window(size)
    return 0.42 - 0.5 * jnp.cos(2 * np.pi * n / (size - 1)) + 0.08 * jnp.cos(4 * np.pi * n / (size - 1))


def hamming(M: int) -> Any:  # noqa: N803
    """The Hamming window of ``M`` points."""
    size, n = _window("hamming", M)
    if n is None:
        return _ones_window(size)
    return 0.54 - 0.46 * jnp.cos(2 * np.pi * n / (size - 1))


def hanning(M: int) -> Any:  # noqa: N803
    """The Hann window of ``M`` points."""
    size, n = _window("hanning", M)
    if n is None:
        return _ones_window(size)
    return 0.5 * (1 - jnp.cos(2 * np.pi * n / (size - 1)))


def kaiser(M: int, beta: ArrayLike) -> Any:  # noqa: N803
    """The Kaiser window of ``M`` points with shape parameter ``beta``."""
    size, n = _window("kaiser", M)
    if n is None:
        return _ones_window(size)
    alpha = 0.5 * (size - 1)
    return i0(beta * jnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)
