"""``jax.scipy.special``: special functions, with JAX's custom derivatives.

The functions that are one primitive (``erf``, ``gammaln``, ``digamma``,
``expit``, ...) bind it; ``logit``, ``xlogy``, ``xlog1py`` and ``entr`` carry
JAX's custom jvp rules, which keep their derivatives finite where the plain
formula's are not (``xlogy(0, 0)``). ``logsumexp``, ``softmax`` and
``log_softmax`` are ``minijax.nn``'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import config, lax
from minijax.array import Array
from minijax.autodiff import jvp
from minijax.core import concrete_or_error
from minijax.custom_derivatives import custom_jvp
from minijax.nn.functions import log_softmax as log_softmax, logsumexp as logsumexp, softmax as softmax
from minijax.numpy.util import promote_args_inexact
from minijax.scipy._special_complex import erfcx_complex, sph_harm_y as sph_harm_y, wofz as wofz  # sci21 (issue 21)

# special2 (issue 21): the remaining functions, and gamma/gammasgn, which they share, live there.
from minijax.scipy._special_more import (
    bessel_jn as bessel_jn,
    dawsn as dawsn,
    expn as expn,
    fresnel as fresnel,
    gamma as gamma,
    gammasgn as gammasgn,
    hyp1f1 as hyp1f1,
    hyp2f1 as hyp2f1,
    owens_t as owens_t,
    sici as sici,
    spence as spence,
)  # fmt: skip
from minijax.typing import ArrayLike


def _one(x: Any) -> Any:
    return lax.full_like(x, 1)


def _zero(x: Any) -> Any:
    return lax.full_like(x, 0)


def expit(x: ArrayLike) -> Array:
    """The logistic function ``1 / (1 + exp(-x))``."""
    (x,) = promote_args_inexact("expit", x)
    out: Array = lax.logistic(x)
    return out


@custom_jvp
def logit(x: ArrayLike) -> Array:
    """``log(x / (1 - x))``, the inverse of ``expit``."""
    (x,) = promote_args_inexact("logit", x)
    out: Array = lax.log(lax.div(x, lax.sub(_one(x), x)))
    return out


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_one(x), x))))


def erf(x: ArrayLike) -> Array:
    (x,) = promote_args_inexact("erf", x)
    out: Array = lax.erf(x)
    return out


def erfc(x: ArrayLike) -> Array:
    (x,) = promote_args_inexact("erfc", x)
    out: Array = lax.erfc(x)
    return out


def erfinv(x: ArrayLike) -> Array:
    (x,) = promote_args_inexact("erfinv", x)
    out: Array = lax.erf_inv(x)
    return out


def gammaln(x: ArrayLike) -> Array:
    """``log(abs(gamma(x)))``."""
    (x,) = promote_args_inexact("gammaln", x)
    out: Array = lax.lgamma(x)
    return out


def digamma(x: ArrayLike) -> Array:
    (x,) = promote_args_inexact("digamma", x)
    out: Array = lax.digamma(x)
    return out


def _x_is_not_zero(x: Any, y: Any) -> Any:
    """Where the product is computed: x != 0, or y is NaN (elsewhere the scipy functions define 0)."""

    return jnp.logical_or(lax.ne(x, _zero(x)), lax.ne(y, y))


@custom_jvp
def xlogy(x: ArrayLike, y: ArrayLike) -> Array:
    """``x * log(y)``, defined as 0 where x == 0 (unless y is NaN)."""
    x, y = promote_args_inexact("xlogy", x, y)

    safe = _x_is_not_zero(x, y)
    out: Array = jnp.where(safe, lax.mul(x, lax.log(y)), 0.0)
    return out


@xlogy.defjvp
def _xlogy_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlogy(x, y)
    return result, (x_dot * lax.log(y) + y_dot * x / y).astype(result.dtype)


@custom_jvp
def xlog1py(x: ArrayLike, y: ArrayLike) -> Array:
    """``x * log1p(y)``, defined as 0 where x == 0 (unless y is NaN)."""
    x, y = promote_args_inexact("xlog1py", x, y)

    safe = _x_is_not_zero(x, y)
    out: Array = jnp.where(safe, lax.mul(x, lax.log1p(y)), 0.0)
    return out


@xlog1py.defjvp
def _xlog1py_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlog1py(x, y)
    return result, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(result.dtype)


@custom_jvp
def _xlogx(x: Any) -> Any:
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


def entr(x: ArrayLike) -> Array:
    """Elementwise entropy ``-x log x`` for x > 0, 0 at 0, -inf for x < 0."""
    (x,) = promote_args_inexact("entr", x)
    out: Array = lax.select(lax.lt(x, _zero(x)), lax.full_like(x, -float("inf")), lax.neg(_xlogx(x)))
    return out


# ---------------------------------------------------------------------------
# special (issue 21): the rest of jax.scipy.special's real-valued functions.

_LOG_SQRT_2PI = 0.5 * float(np.log(2 * np.pi))


def _promote(name: str, *args: ArrayLike) -> tuple[Any, ...]:
    """``promote_args_inexact``, typed loosely: the results meet Python operators below."""
    return tuple(promote_args_inexact(name, *args))


def _dtype_of(x: Any) -> Any:
    return np.dtype(jnp.asarray(x).dtype)


def gammainc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    a, x = _promote("gammainc", a, x)
    out: Array = lax.igamma(a, x)
    return out


def gammaincc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    a, x = _promote("gammaincc", a, x)
    out: Array = lax.igammac(a, x)
    return out


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """The regularized incomplete beta function ``I_x(a, b)``."""
    a, b, x = _promote("betainc", a, b, x)
    out: Array = lax.betainc(a, b, x)
    return out


def loggamma(x: Any) -> Array:
    """The principal branch of log(gamma(x)): for real x, ``gammaln(x)`` for x > 0, NaN elsewhere."""
    (x,) = _promote("loggamma", x)
    out: Array = jnp.where(x > 0, lax.lgamma(x), jnp.nan)
    return out


def _stirling_correction(z: Any) -> Any:
    """lgamma(z) - ((z - 1/2) log z - z + log(2 pi)/2) for z >= 8: the first terms of Stirling's series."""
    r = 1.0 / z
    r2 = r * r
    return r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 / 1680)))


def _betaln(a: Any, b: Any) -> Any:
    small, big = jnp.minimum(a, b), jnp.maximum(a, b)
    plain = lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)
    # For a large argument, lgamma(big + small) - lgamma(big) through Stirling's series, without
    # the cancellation of two large lgammas.
    safe_big = jnp.where(big >= 8, big, 8.0)
    safe_small = jnp.where(big >= 8, small, 1.0)
    difference = (
        (safe_big - 0.5) * jnp.log1p(safe_small / safe_big)
        + safe_small * jnp.log(safe_big + safe_small)
        - safe_small
        + _stirling_correction(safe_big + safe_small)
        - _stirling_correction(safe_big)
    )
    return jnp.where((big >= 8) & (small > 0), lax.lgamma(safe_small) - difference, plain)


def betaln(a: ArrayLike, b: ArrayLike) -> Array:
    """``log(|B(a, b)|)``."""
    a, b = _promote("betaln", a, b)
    out: Array = _betaln(a, b)
    return out


def beta(a: Any, b: Any) -> Array:
    """The beta function ``gamma(a) gamma(b) / gamma(a + b)``."""
    a, b = _promote("beta", a, b)
    sign = jnp.multiply(jnp.multiply(gammasgn(a), gammasgn(b)), gammasgn(a + b))
    out: Array = sign * lax.exp(betaln(a, b))
    return out


def factorial(n: Any, exact: bool = False) -> Array:
    """``n!`` as ``gamma(n + 1)``; 0 for negative n."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _promote("factorial", n)
    out: Array = jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))
    return out


def comb(N: Any, k: Any, *, repetition: bool = False) -> Array:
    """The float binomial coefficient ``N choose k``; 0 where ``N < 0``, ``k < 0`` or ``k > N``."""
    N, k = _promote("comb", N, k)
    if repetition:
        return comb(N + k - 1, k)
    ok = (k <= N) & (N >= 0) & (k >= 0)
    safe_n, safe_k = jnp.where(ok, N, 0.0), jnp.where(ok, k, 0.0)
    value = lax.exp(lax.lgamma(safe_n + 1) - lax.lgamma(safe_k + 1) - lax.lgamma(safe_n + 1 - safe_k))
    out: Array = jnp.where(ok, value, 0.0)
    return out


@custom_jvp
def poch(z: Any, m: Any) -> Array:
    """The Pochhammer symbol ``gamma(z + m) / gamma(z)`` (1 at m = 0)."""
    z, m = _promote("poch", z, m)
    out: Array = jnp.where(m == 0.0, jnp.array(1, dtype=_dtype_of(z)), jnp.divide(gamma(z + m), gamma(z)))
    return out


poch.defjvps(
    lambda z_dot, ans, z, m: (lax.digamma(z + m) - lax.digamma(z)) * poch(z, m) * z_dot,
    lambda m_dot, ans, z, m: lax.digamma(z + m) * poch(z, m) * m_dot,
)


def multigammaln(a: Any, d: Any) -> Array:
    """``log Gamma_d(a) = d(d-1)/4 log(pi) + sum_{i<d} gammaln(a - i/2)``; d a concrete integer."""
    d_int = int(concrete_or_error(d, "d argument of multigammaln"))
    a, d_ = (jnp.asarray(v) for v in _promote("multigammaln", a, d_int))
    constant = 0.25 * d_ * (d_ - 1) * jnp.log(jnp.asarray(np.pi, a.dtype))
    halves = jnp.arange(d_int, dtype=d_.dtype) / 2
    terms = lax.lgamma(jnp.expand_dims(a, -1) - jnp.expand_dims(halves, tuple(range(a.ndim))))
    out: Array = jnp.sum(terms, axis=-1) + constant
    return out


def rel_entr(p: Any, q: Any) -> Array:
    """``p log(p/q)`` for p, q > 0; 0 for p = 0, q >= 0; inf elsewhere."""
    p, q = _promote("rel_entr", p, q)
    both_positive = (p > 0) & (q > 0)
    safe_p, safe_q = jnp.where(both_positive, p, 1), jnp.where(both_positive, q, 1)
    value = _xlogx(safe_p) - xlogy(safe_p, safe_q)
    out: Array = jnp.where(both_positive, value, jnp.where((p == 0) & (q >= 0), 0.0, jnp.inf))
    return out


def kl_div(p: Any, q: Any) -> Array:
    """``p log(p/q) - p + q`` (the elementwise Kullback-Leibler divergence)."""
    p, q = _promote("kl_div", p, q)
    out: Array = rel_entr(p, q) - p + q
    return out


def boxcox(x: ArrayLike, lmbda: ArrayLike) -> Array:
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log x`` at lmbda = 0)."""
    x, lmbda = _promote("boxcox", x, lmbda)
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    log_x = jnp.log(x)
    out: Array = jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)
    return out


def boxcox1p(x: ArrayLike, lmbda: ArrayLike) -> Array:
    """The Box-Cox transform of ``1 + x``."""
    x, lmbda = _promote("boxcox1p", x, lmbda)
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    log1p_x = jnp.log1p(x)
    out: Array = jnp.where(zero, log1p_x, jnp.expm1(safe * log1p_x) / safe)
    return out


def polygamma(n: ArrayLike, x: ArrayLike) -> Array:
    """The n-th derivative of digamma; n must have an integer dtype."""
    n_dtype = _dtype_of(n)
    if not np.issubdtype(n_dtype, np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
    n, x = _promote("polygamma", n, x)
    out: Array = lax.polygamma(n, x)
    return out


_RIEMANN = "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function."
_ZETA_SHIFT = 10
# B_2j / (2j)!: the Euler-Maclaurin corrections of the zeta series below.
_ZETA_CORRECTIONS = tuple(
    b / float(np.prod(np.arange(1, 2 * j + 1, dtype=np.float64)))
    for j, b in enumerate((1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510), 1)
)


def _zeta_series(x: Any, q: Any) -> Any:
    """The Euler-Maclaurin sum for zeta(x, q), written in jnp so that it can be differentiated
    in both operands (JAX differentiates a series of its own the same way)."""
    total = sum(((q + k) ** -x for k in range(_ZETA_SHIFT)), jnp.zeros_like(x))
    w = q + _ZETA_SHIFT
    total = total + w ** (1 - x) / (x - 1) + w**-x / 2
    rising = x
    for j, c in enumerate(_ZETA_CORRECTIONS, 1):
        total = total + c * rising * w ** (-x - 2 * j + 1)
        rising = rising * (x + 2 * j - 1) * (x + 2 * j)
    return total


@custom_jvp
def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Array:
    """The Hurwitz zeta function ``sum_k (q + k)**-x`` (``q=None``, Riemann's, is not supported, as in JAX)."""
    if q is None:
        raise NotImplementedError(_RIEMANN)
    x, q = _promote("zeta", x, q)
    out: Array = lax.zeta(x, q)
    return out


@zeta.defjvp
def _zeta_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    x, q = primals
    if q is None:
        raise NotImplementedError(_RIEMANN)
    x, q = _promote("zeta", x, q)
    x_dot, q_dot = (jnp.asarray(t, dtype=_dtype_of(x)) for t in tangents)
    _, out_dot = jvp(_zeta_series, (x, q), (x_dot, q_dot))
    return zeta(x, q), out_dot


def i0e(x: ArrayLike) -> Array:
    """``exp(-|x|) I0(x)``."""
    (x,) = _promote("i0e", x)
    out: Array = lax.bessel_i0e(x)
    return out


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order 0."""
    (x,) = _promote("i0", x)
    out: Array = lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))
    return out


def i1e(x: ArrayLike) -> Array:
    """``exp(-|x|) I1(x)``."""
    (x,) = _promote("i1e", x)
    out: Array = lax.bessel_i1e(x)
    return out


def i1(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order 1."""
    (x,) = _promote("i1", x)
    out: Array = lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))
    return out


def _strong(x: Any) -> Any:
    """``x`` as an array that is not weakly typed (what JAX's ``jnp.asarray`` of a Python scalar gives)."""
    x = jnp.asarray(x)
    return lax.convert_element_type(x, x.dtype) if x.weak_type else x


def _check_normal_dtype(x: Any) -> Any:
    x = _strong(x)
    if np.dtype(x.dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"x.dtype={np.dtype(x.dtype)} is not supported, see docstring for supported types.")
    return x


def _ndtr(x: Any) -> Any:
    # 0.5 (1 + erf(x/sqrt2)) near 0; through erfc in the tails, where 1 + erf would cancel.
    half_sqrt2 = float(np.sqrt(0.5))
    w = x * half_sqrt2
    z = jnp.abs(w)
    y = jnp.where(z < half_sqrt2, 1.0 + lax.erf(w), jnp.where(w > 0, 2.0 - lax.erfc(z), lax.erfc(z)))
    return 0.5 * y


def ndtr(x: ArrayLike) -> Array:
    """The standard normal CDF ``(1 + erf(x / sqrt 2)) / 2``; float32 and float64 only."""
    out: Array = _ndtr(_check_normal_dtype(x))
    return out


def _log_ndtr_bounds(dtype: Any) -> tuple[float, float]:
    if np.dtype(dtype) == np.float64:
        return -20.0, 8.0
    if np.dtype(dtype) == np.float32:
        return -10.0, 5.0
    raise TypeError(f"x.dtype={np.dtype(dtype)} is not supported.")


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    """log ndtr(x) for x << -1: log(e^(-x^2/2) / (-x sqrt(2 pi))) + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n))."""
    x2 = x * x
    log_scale = -0.5 * x2 - jnp.log(-x) - _LOG_SQRT_2PI
    total = jnp.ones_like(x)
    term = jnp.ones_like(x)
    for n in range(1, series_order + 1):
        term = -term * (2 * n - 1) / x2
        total = total + term
    return log_scale + jnp.log(total)


def _log_ndtr_value(x: Any, series_order: int) -> Any:
    lower, upper = _log_ndtr_bounds(_dtype_of(x))
    above = x > upper
    # One ndtr for both branches; min/max keep the branch not taken finite (its gradient is NaN-free).
    values = _ndtr(jnp.where(above, -x, jnp.maximum(x, lower)))
    return jnp.where(
        above,
        -values,  # log(1 - t) ~ -t for the tiny upper tail t
        jnp.where(x > lower, jnp.log(values), _log_ndtr_lower(jnp.minimum(x, lower), series_order)),
    )


def _norm_logpdf(x: Any) -> Any:
    return -0.5 * x * x - _LOG_SQRT_2PI


def log_ndtr(x: Any, series_order: int = 3) -> Array:
    """``log(ndtr(x))``, accurate far into both tails (an asymptotic series below -20 / -10 for
    float64 / float32, ``-ndtr(-x)`` above 8 / 5), with JAX's custom derivative."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = _strong(x)
    _log_ndtr_bounds(x.dtype)
    out: Array = _log_ndtr_custom(x, series_order)
    return out


def _log_ndtr_primal(x: Any, series_order: int) -> Any:
    return _log_ndtr_value(x, series_order)


_log_ndtr_custom = custom_jvp(_log_ndtr_primal, nondiff_argnums=(1,))


@_log_ndtr_custom.defjvp
def _log_ndtr_jvp(series_order: int, primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    ans = _log_ndtr_custom(x, series_order)
    return ans, t * jnp.exp(_norm_logpdf(x) - ans)


def _ndtri_lower(q: Any, steps: int) -> Any:
    """ndtri(q) for 0 < q <= 1/2: the rational start of Abramowitz & Stegun 26.2.23 (error < 5e-4),
    polished by Newton steps on log ndtr(x) = log q, which converge fast in the far tail too."""
    t = jnp.sqrt(-2.0 * jnp.log(q))
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    log_q = jnp.log(q)
    for _ in range(steps):
        log_cdf = _log_ndtr_value(x, 3)
        x = x - (log_cdf - log_q) / jnp.exp(_norm_logpdf(x) - log_cdf)
    return x


@custom_jvp
def _ndtri(p: Any) -> Any:
    steps = 3 if _dtype_of(p) == np.float64 else 2
    upper = p > 0.5
    q = jnp.where(upper, 1.0 - p, p)
    inside = (q > 0) & (q <= 0.5)
    x = _ndtri_lower(jnp.where(inside, q, 0.25), steps)
    x = jnp.where(upper, -x, x)
    x = jnp.where(p == 0.5, 0.0, x)  # exactly, with its sign
    x = jnp.where(p == 0, -jnp.inf, jnp.where(p == 1, jnp.inf, x))
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(p), jnp.nan, x)


@_ndtri.defjvp
def _ndtri_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (p,), (t,) = primals, tangents
    x = _ndtri(p)
    return x, t * jnp.exp(-_norm_logpdf(x))  # 1 / pdf(x)


def ndtri(p: ArrayLike) -> Array:
    """The inverse of ``ndtr``: the x with ``ndtr(x) == p``; float32 and float64 only."""
    out: Array = _ndtri(_check_normal_dtype(p))
    return out


def bernoulli(n: int) -> Array:
    """The Bernoulli numbers B_0 ... B_n (B_1 = -1/2), computed exactly on the host and returned as floats."""
    import operator
    from fractions import Fraction

    n = operator.index(concrete_or_error(n, "Argument n of bernoulli"))
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    # Akiyama-Tanigawa: each row's first entry is B_m (with B_1 = +1/2, flipped below).
    numbers: list[Fraction] = []
    row: list[Fraction] = []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])
    if n >= 1:
        numbers[1] = -numbers[1]
    out: Array = jnp.array([float(b) for b in numbers], dtype=jnp.float32 if not _x64() else jnp.float64)
    return out


def _x64() -> bool:
    return config.x64_enabled()


_ERFCX_TERMS = 60


def _erfcx_value(x: Any) -> Any:
    # exp(x^2) erfc(x) directly where it neither overflows nor loses erfc to underflow; beyond
    # x = 2 the continued fraction erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
    # evaluated from the tail, gives the product without forming either factor.
    direct = jnp.exp(x * x) * lax.erfc(x)
    safe = jnp.where(x >= 2, x, 2.0)
    t = safe
    for k in range(_ERFCX_TERMS, 0, -1):
        t = safe + (k / 2) / t
    fraction = 1 / (float(np.sqrt(np.pi)) * t)
    return jnp.where(x >= 2, fraction, jnp.where(x < -10, jnp.inf, direct))


@custom_jvp
def _erfcx(x: Any) -> Any:
    return _erfcx_value(x)


_erfcx.defjvps(lambda t, ans, x: t * (2 * x * ans - 2 / float(np.sqrt(np.pi))))


def erfcx(x: ArrayLike) -> Array:
    """The scaled complementary error function ``exp(x**2) * erfc(x)``."""
    (x,) = _promote("erfcx", x)
    if jnp.iscomplexobj(x):  # sci21 (issue 21): the Faddeeva function at iz
        return erfcx_complex(x)  # type: ignore[no-any-return]
    out: Array = _erfcx(x)
    return out


_EULER_GAMMA = 0.5772156649015329


def _e1_fraction(z: Any, terms: int = 60) -> Any:
    """E1(z) for z >= 1: exp(-z) / (z + 1 - 1/(z + 3 - 4/(z + 5 - 9/(z + 7 - ...)))), from the tail."""
    t = z + (2 * terms + 1)
    for k in range(terms, 0, -1):
        t = z + (2 * k - 1) - (k * k) / t
    return jnp.exp(-z) / t


def _ei_series(x: Any, terms: int) -> Any:
    """Ei(x) = gamma + log|x| + sum_k x^k / (k k!)."""
    term = jnp.ones_like(x)
    total = jnp.zeros_like(x)
    for k in range(1, terms + 1):
        term = term * x / k
        total = total + term / k
    return _EULER_GAMMA + jnp.log(jnp.abs(x)) + total


def _ei_asymptotic(x: Any, terms: int = 20) -> Any:
    """Ei(x) ~ e^x / x * sum_k k! / x^k for large x."""
    term = jnp.ones_like(x)
    total = jnp.ones_like(x)
    for k in range(1, terms + 1):
        term = term * k / x
        total = total + term
    return jnp.exp(x) / x * total


def _expi_value(x: Any) -> Any:
    # x < -1: Ei(x) = -E1(-x) by the fraction; |x| <= 1 and 1 < x <= 40: the series; beyond, asymptotic.
    neg = jnp.where(x < -1, -x, 1.0)
    mid = jnp.where((x >= -1) & (x <= 40) & (x != 0), x, 1.0)
    big = jnp.where(x > 40, x, 50.0)
    out = jnp.where(x < -1, -_e1_fraction(neg), jnp.where(x <= 40, _ei_series(mid, 120), _ei_asymptotic(big)))
    return jnp.where(x == 0, jnp.nan, out)


@custom_jvp
def _expi(x: Any) -> Any:
    return _expi_value(x)


_expi.defjvps(lambda t, ans, x: t * jnp.exp(x) / x)


def expi(x: ArrayLike) -> Array:
    """The exponential integral ``Ei(x)``; NaN at 0 (as JAX's)."""
    (x,) = _promote("expi", x)
    out: Array = _expi(x)
    return out


def _exp1_value(x: Any) -> Any:
    small = jnp.where((x > 0) & (x < 1), x, 0.5)
    large = jnp.where(x >= 1, x, 1.0)
    out = jnp.where(x >= 1, _e1_fraction(large), -_ei_series(-small, 40))
    return jnp.where(x == 0, jnp.inf, jnp.where(x < 0, jnp.nan, out))


@custom_jvp
def _exp1(x: Any) -> Any:
    return _exp1_value(x)


_exp1.defjvps(lambda t, ans, x: -t * jnp.exp(-x) / x)


def exp1(x: ArrayLike) -> Array:
    """The exponential integral ``E1(x) = int_x^inf e^-t / t dt`` for x > 0; inf at 0, NaN below."""
    (x,) = _promote("exp1", x)
    out: Array = _exp1(x)
    return out


__all__ = [
    "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammaln", "log_softmax", "logit", "logsumexp",
    "softmax", "xlog1py", "xlogy",
    # special (issue 21)
    "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "factorial", "gamma", "gammainc",
    "gammaincc", "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "loggamma", "multigammaln",
    "ndtr", "ndtri", "poch", "polygamma", "rel_entr", "zeta", "bernoulli", "erfcx", "expi", "exp1",
    # special2 (issue 21)
    "bessel_jn", "dawsn", "expn", "fresnel", "hyp1f1", "hyp2f1", "owens_t", "sici", "spence",
    # sci21 (issue 21): complex results
    "sph_harm_y", "wofz",
]  # fmt: skip
