"""Polynomials as 1-D coefficient arrays, highest power first (NumPy's ``poly*`` functions).

``poly`` builds the coefficients from the roots by repeated convolution;
``polymul`` is one convolution; ``polydiv`` is long division with a static
number of steps; ``polyder``/``polyint`` scale by falling factorials;
``polyfit`` solves the scaled Vandermonde least-squares problem. ``roots``
are the eigenvalues of the companion matrix, and ``poly`` of a square
matrix builds the polynomial of its eigenvalues (``jnp.linalg.eigvals``).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from minijax import core, dtypes, lax
from minijax.numpy import util
from minijax.numpy.namespace import jnp
from minijax.numpy.ufuncs import staged
from minijax.numpy.util import ArrayLike

__all__ = ["poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul", "polysub", "roots"]


def _arr(name: str, *xs: Any) -> list[Any]:
    util.check_arraylike(name, *xs)
    return [jnp.asarray(x) for x in xs]


def _poly(seq_of_zeros: Any) -> Any:
    (z,) = util.promote_dtypes_inexact(seq_of_zeros)
    z = jnp.atleast_1d(z)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:  # a matrix: its characteristic polynomial
        z = jnp.linalg.eigvals(z)
    if z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return jnp.ones((), z.dtype)
    coeffs = jnp.ones((1,), z.dtype)
    for k in range(z.shape[0]):
        coeffs = jnp.convolve(coeffs, jnp.stack([jnp.ones((), z.dtype), -z[k]]), mode="full")
    return coeffs


_poly_jit = staged("poly", _poly)


def poly(seq_of_zeros: ArrayLike) -> Any:
    """The coefficients of the monic polynomial with the given roots."""
    (z,) = _arr("poly", seq_of_zeros)
    return _poly_jit(z)


def _polyadd(a1: Any, a2: Any) -> Any:
    a1, a2 = util.promote_dtypes(a1, a2)
    if a2.shape[0] <= a1.shape[0]:
        return a1.at[-a2.shape[0]:].add(a2)
    return a2.at[-a1.shape[0]:].add(a1)


_polyadd_jit = staged("polyadd", _polyadd)


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The sum of two polynomials (the shorter aligned to the lower powers)."""
    return _polyadd_jit(*_arr("polyadd", a1, a2))


def _polysub(a1: Any, a2: Any) -> Any:
    a1, a2 = util.promote_dtypes(a1, a2)
    return polyadd(a1, -a2)


_polysub_jit = staged("polysub", _polysub)


def polysub(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The difference of two polynomials."""
    return _polysub_jit(*_arr("polysub", a1, a2))


def _trim_front(a: Any, tol: float = 0.0) -> Any:
    """``a`` without its leading coefficients of magnitude <= tol (needs concrete values)."""
    values = np.asarray(core.concrete_or_error(a, "Error arose in the `filt` argument of trim_zeros()"))
    nonzero = np.flatnonzero(np.abs(values) > tol)
    start = int(nonzero[0]) if nonzero.size else values.shape[0]
    return a[start:]


def polymul(a1: ArrayLike, a2: ArrayLike, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (a full convolution of the coefficients)."""
    x, y = _arr("polymul", a1, a2)
    x, y = util.promote_dtypes_inexact(x, y)
    if trim_leading_zeros and (x.shape[0] > 1 or y.shape[0] > 1):
        x, y = _trim_front(x), _trim_front(y)
    if x.shape[0] == 0:
        x = jnp.zeros(1, y.dtype)
    if y.shape[0] == 0:
        y = jnp.zeros(1, x.dtype)
    return jnp.convolve(x, y, mode="full")


def polydiv(u: ArrayLike, v: ArrayLike, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """(quotient, remainder) of polynomial long division; the remainder keeps ``u``'s length
    unless ``trim_leading_zeros`` drops its (near-)zero leading terms."""
    num, den = _arr("polydiv", u, v)
    num, den = util.promote_dtypes_inexact(num, den)
    m, n = num.shape[0] - 1, den.shape[0] - 1
    scale = 1.0 / den[0]
    q = jnp.zeros(max(m - n + 1, 1), num.dtype)
    for k in range(m - n + 1):
        d = scale * num[k]
        q = q.at[k].set(d)
        num = num.at[k:k + n + 1].add(-d * den)
    if trim_leading_zeros:
        num = _trim_front(num, float(np.sqrt(dtypes.finfo(num.dtype).eps)))
    return q, num


def _polyder(p: Any, m: int) -> Any:
    (p,) = util.promote_dtypes_inexact(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    # Coefficient of x**k picks up k (k-1) ... (k-m+1).
    falling = (jnp.arange(m, p.shape[0], dtype=p.dtype)[None] - jnp.arange(m, dtype=p.dtype)[:, None]).prod(0)
    return p[:-m] * falling[::-1]


_polyder_jit = staged("polyder", _polyder, static_argnames=("m",))


def polyder(p: ArrayLike, m: int = 1) -> Any:
    """The ``m``-th derivative of the polynomial ``p``."""
    (arr,) = _arr("polyder", p)
    m = operator.index(core.concrete_or_error(m, "'m' argument of jnp.polyder"))
    return _polyder_jit(arr, m)


def _polyint(p: Any, k: Any, m: int) -> Any:
    p, k = util.promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = jnp.atleast_1d(k)
    if k.shape[0] == 1:
        k = jnp.full((m,), k[0])
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    grid = jnp.arange(p.shape[0] + m, dtype=p.dtype)[None] - jnp.arange(m, dtype=p.dtype)[:, None]
    return jnp.true_divide(jnp.concatenate((p, k)), jnp.maximum(1, grid).prod(0)[::-1])


_polyint_jit = staged("polyint", _polyint, static_argnames=("m",))


def polyint(p: ArrayLike, m: int = 1, k: int | ArrayLike | None = None) -> Any:
    """The ``m``-th antiderivative of ``p``, with integration constants ``k`` (a scalar or m of them, default 0)."""
    m = operator.index(core.concrete_or_error(m, "'m' argument of jnp.polyint"))
    arr, karr = _arr("polyint", p, 0 if k is None else k)
    return _polyint_jit(arr, karr, m)


def _polyfit(x: Any, y: Any, w: Any, deg: int, rcond: Any, full: bool, cov: Any) -> Any:
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(dtypes.finfo(x.dtype).eps)
    lhs = jnp.vander(x, order)
    rhs = y
    if w is not None:
        (w,) = util.promote_dtypes_inexact(w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    # Scaling the columns to unit norm improves the conditioning of the least-squares problem.
    scale = jnp.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = jnp.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, jnp.asarray(rcond)
    if cov:
        base = jnp.linalg.inv(jnp.dot(lhs.T, lhs)) / jnp.outer(scale, scale)
        if cov == "unscaled":
            fac = jnp.array(1.0)
        else:
            if x.shape[0] <= order:
                raise ValueError("the number of data points must exceed order to scale the covariance matrix")
            fac = resids / (x.shape[0] - order)
        if y.ndim == 1:
            return c, base * jnp.atleast_1d(fac)[None]
        return c, base[:, :, None] * jnp.atleast_1d(fac)[None, None, :]
    return c


_polyfit_jit = staged("polyfit", _polyfit, static_argnames=("deg", "rcond", "full", "cov"))


def polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None, full: bool = False,
            w: ArrayLike | None = None, cov: bool = False) -> Any:
    """The least-squares polynomial of degree ``deg`` through (x, y), optionally weighted by ``w``.

    ``full=True`` adds (residuals, rank, singular values, rcond); ``cov=True``
    (or ``'unscaled'``) adds the coefficients' covariance matrix.
    """
    if w is None:
        xa, ya = _arr("polyfit", x, y)
        wa = None
    else:
        xa, ya, wa = _arr("polyfit", x, y, w)
    deg = int(core.concrete_or_error(deg, "deg must be int"))
    if rcond is not None:
        rcond = float(core.concrete_or_error(rcond, "rcond must be float"))
    return _polyfit_jit(xa, ya, wa, deg, rcond, bool(full), cov)


# ---------------------------------------------------------------------------
# roots (cla, issue 19): the eigenvalues of the companion matrix


def _complex_dtype(dtype: Any) -> Any:
    return np.result_type(dtype, np.complex64)


def _roots_no_zeros(p: Any) -> Any:
    if p.size < 2:
        return jnp.array([], dtype=_complex_dtype(p.dtype))
    # The companion matrix: ones below the diagonal, -p[1:] / p[0] on the first row.
    companion = jnp.diag(jnp.ones((p.size - 2,), p.dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    return jnp.linalg.eigvals(companion)


_roots_no_zeros_jit = staged("_roots_no_zeros", _roots_no_zeros)


def _roots_with_zeros(p: Any, num_leading_zeros: Any) -> Any:
    p = jnp.where(len(p) == num_leading_zeros, 1.0, p)  # all zeros: LAPACK would fail
    found = _roots_no_zeros_jit(jnp.roll(p, -num_leading_zeros))
    found = lax.sort_key_val(found == 0, found)[1]  # the zero roots last
    keep = jnp.arange(found.size) < found.size - num_leading_zeros
    return jnp.where(keep, found, complex(np.nan, np.nan))


_roots_with_zeros_jit = staged("_roots_with_zeros", _roots_with_zeros)


def roots(p: ArrayLike, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial with coefficients ``p`` (highest power first), complex.

    Leading zeros are dropped (``strip_zeros``, which needs a concrete ``p``);
    with ``strip_zeros=False`` the roots they would remove are NaN.
    """
    (p_arr,) = _arr("roots", p)
    (p_arr,) = util.promote_dtypes_inexact(p_arr)
    p_arr = jnp.atleast_1d(p_arr)
    if p_arr.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if p_arr.size < 2:
        return jnp.array([], dtype=_complex_dtype(p_arr.dtype))
    num_leading_zeros = jnp.where(jnp.all(p_arr == 0), len(p_arr), jnp.argmin(p_arr == 0))
    if strip_zeros:
        count = int(core.concrete_or_error(
            num_leading_zeros,
            "The error occurred in the jnp.roots() function. To use this within a JIT-compiled context, pass "
            "strip_zeros=False, but be aware that leading zeros will result in some returned roots being set to NaN.",
        ))  # fmt: skip
        return _roots_no_zeros_jit(p_arr[count:])
    return _roots_with_zeros_jit(p_arr, num_leading_zeros)
