"""The rest of ``jax.scipy.special``: Dawson's, Fresnel's, the sine/cosine and generalized exponential
integrals, Spence's function, Owen's T, the confluent and Gauss hypergeometric functions and the
Bessel functions J_0 ... J_v.

Each follows the algorithm JAX 0.10.2 evaluates (the same regions, rational approximations, series
lengths and stopping rules; the coefficient tables live in ``_special_tables``), so float32 values
round alike, and each carries JAX's custom derivative where JAX has one. ``special`` re-exports them.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.core import concrete_or_error
from minijax.custom_derivatives import custom_jvp
from minijax.numpy.util import promote_args_inexact, promote_dtypes_inexact
from minijax.scipy import _special_tables as T
from minijax.stages import jit
from minijax.typing import ArrayLike

_EULER_GAMMA = 0.5772156649015329


def _promote(name: str, *args: ArrayLike) -> tuple[Any, ...]:
    # promote_args_inexact leaves a Python scalar as it is; the rules below read .dtype (asarray keeps it weak).
    return tuple(jnp.asarray(a) for a in promote_args_inexact(name, *args))


def _const(x: Any, value: float) -> Any:
    """``value`` as a strongly typed scalar of ``x``'s dtype (JAX's ``_lax_const``)."""
    return np.array(value, np.dtype(x.dtype))


def _poly(coeffs: Sequence[float], x: Any) -> Any:
    """Horner's rule from a zero start, as ``jnp.polyval`` (so 0 * inf gives NaN as there)."""
    y = jnp.zeros_like(x)
    for c in coeffs:
        y = y * x + _const(x, c)
    return y


def _eps(x: Any) -> float:
    return float(np.finfo(np.dtype(x.dtype)).eps)


def _masked_while(cond: Callable[[Any], Any], body: Callable[[Any], Any], init: tuple[Any, ...]) -> tuple[Any, ...]:
    """An elementwise while loop: each element steps until its own ``cond`` fails (what JAX's
    ``vectorize``-d scalar loops compute), the finished ones held by a select."""

    def go(state: tuple[Any, ...]) -> Any:
        return jnp.any(cond(state))

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        active = cond(state)
        new = body(state)
        return tuple(jnp.where(active, n, o) for n, o in zip(new, state))

    shape = np.broadcast_shapes(*(np.shape(s) for s in init))
    start = tuple(jnp.broadcast_to(jnp.asarray(s), shape) for s in init)
    out: tuple[Any, ...] = lax.while_loop(go, step, start)
    return out


# ---------------------------------------------------------------------------
# gamma (real), shared with ``special``


def gammasgn(x: Any) -> Array:
    """The sign of the gamma function: NaN at the poles and at -inf, the sign of zero at +-0."""
    (x,) = _promote("gammasgn", x)
    floor_x = lax.floor(x)
    negative = x < 0
    nan_at = (negative & (x == floor_x)) | jnp.isnan(x)
    minus_at = (negative & (jnp.remainder(floor_x, 2) != 0)) | ((x == 0) & jnp.signbit(x))
    out: Array = jnp.where(nan_at, jnp.nan, jnp.where(minus_at, -1.0, 1.0)).astype(np.dtype(x.dtype))
    return out


def gamma(x: ArrayLike) -> Array:
    """The gamma function, ``gammasgn(x) * exp(gammaln(x))``."""
    (x,) = _promote("gamma", x)
    out: Array = gammasgn(x) * lax.exp(lax.lgamma(x))
    return out


# ---------------------------------------------------------------------------
# Dawson's integral


def _dawsn_value(x: Any) -> Any:
    # Three regions of |x| (Cody, Paciorek & Thacher); each evaluated at a harmless stand-in where it
    # is not taken, so that its overflow cannot leak a NaN through the select.
    ax = lax.abs(x)
    t = _const(x, 1.0) / lax.square(ax)
    one = jnp.ones_like(ax)
    small = ax < 3.25
    mid = (ax >= 3.25) & (ax < 6.25)
    large = ax >= 6.25
    a1 = jnp.where(small, ax, one)
    a1sq = lax.square(a1)
    v1 = a1 * _poly(T.DAWSN_SMALL_NUM, a1sq) / _poly(T.DAWSN_SMALL_DEN, a1sq)
    t2, a2 = jnp.where(mid, t, one), jnp.where(mid, ax, one)
    v2 = (_const(x, 0.5) / a2) * (_const(x, 1.0) + t2 * _poly(T.DAWSN_MID_NUM, t2) / _poly(T.DAWSN_MID_DEN, t2))
    t3, a3 = jnp.where(large, t, one), jnp.where(large, ax, one)
    v3 = (_const(x, 0.5) / a3) * (_const(x, 1.0) + t3 * _poly(T.DAWSN_LARGE_NUM, t3) / _poly(T.DAWSN_LARGE_DEN, t3))
    return jnp.sign(x) * jnp.where(small, v1, jnp.where(ax < 6.25, v2, v3))


@custom_jvp
def _dawsn(x: Any) -> Any:
    if np.dtype(x.dtype) in (np.dtype(np.float32), np.dtype(np.float64)):
        return _dawsn_value(x)
    return _dawsn_value(x.astype(np.float32)).astype(x.dtype)  # half precision: through float32


_dawsn.defjvps(lambda g, ans, x: g * (_const(x, 1.0) - _const(x, 2.0) * x * ans))


def dawsn(x: ArrayLike) -> Array:
    """Dawson's integral ``exp(-x**2) * int_0^x exp(t**2) dt``."""
    (x,) = _promote("dawsn", x)
    out: Array = _dawsn(x)
    return out


# ---------------------------------------------------------------------------
# Fresnel integrals


def _sin_cos_half_pi_square(x: Any) -> tuple[Any, Any]:
    """sin and cos of pi x^2 / 2 with the argument reduced mod 2 before it is multiplied by pi:
    with s = x mod 2, x^2 / 2 = s (x - s/2) (mod 2), so no huge x^2 is ever formed."""
    x = jnp.abs(x)
    s = jnp.fmod(x, 2.0)
    r = jnp.fmod(s * (x - s / 2), 2.0)
    sin = jnp.where(r < 0.5, jnp.sin(np.pi * r), jnp.where(r > 1.5, jnp.sin(np.pi * (r - 2.0)), -jnp.sin(np.pi * (r - 1.0))))
    cos = jnp.where(r == 0.5, 0.0, jnp.where(r < 1.0, -jnp.sin(np.pi * (r - 0.5)), jnp.sin(np.pi * (r - 1.5))))
    return sin, cos


def _fresnel_value(xx: Any) -> tuple[Any, Any]:
    single = np.dtype(xx.dtype) == np.dtype(np.float32)
    x = jnp.abs(xx)
    x2 = x * x
    t = x2 * x2
    if single:
        s_small = x * x2 * _poly(T.FRESNEL32_S, t)
        c_small = x * _poly(T.FRESNEL32_C, t)
    else:
        s_small = x * x2 * _poly(T.FRESNEL64_S_NUM, t) / _poly(T.FRESNEL64_S_DEN, t)
        c_small = x * _poly(T.FRESNEL64_C_NUM, t) / _poly(T.FRESNEL64_C_DEN, t)
    sin, cos = _sin_cos_half_pi_square(x)
    if single:
        s_large: Any = 0.5
        c_large: Any = 0.5
    else:
        c_large = 0.5 + 1 / (np.pi * x) * sin
        s_large = 0.5 - 1 / (np.pi * x) * cos
    # In between: 1/2 -+ (f (cos|sin) + g (sin|cos)) / (pi x) with the auxiliary functions f, g.
    t = np.pi * x2
    u = 1.0 / (t * t)
    t = 1.0 / t
    if single:
        f = 1.0 - u * _poly(T.FRESNEL32_F, u)
        g = t * _poly(T.FRESNEL32_G, u)
    else:
        f = 1.0 - u * _poly(T.FRESNEL64_F_NUM, u) / _poly(T.FRESNEL64_F_DEN, u)
        g = t * _poly(T.FRESNEL64_G_NUM, u) / _poly(T.FRESNEL64_G_DEN, u)
    t = np.pi * x
    c_mid = 0.5 + (f * sin - g * cos) / t
    s_mid = 0.5 - (f * cos + g * sin) / t
    infinite = jnp.isinf(xx)
    small = x2 < 2.5625
    large = x > 36974.0
    s = jnp.where(infinite, 0.5, jnp.where(small, s_small, jnp.where(large, s_large, s_mid)))
    c = jnp.where(infinite, 0.5, jnp.where(small, c_small, jnp.where(large, c_large, c_mid)))
    negative = xx < 0.0
    return jnp.where(negative, -s, s), jnp.where(negative, -c, c)


def _fresnel_operand(x: ArrayLike) -> Any:
    (xx,) = _promote("fresnel", x)
    dtype = np.dtype(xx.dtype)
    if np.issubdtype(dtype, np.complexfloating):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if dtype.name in ("float16", "bfloat16"):
        return xx.astype(np.float32)  # Cephes' single-precision coefficients need float32
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise NotImplementedError(f"Support for {dtype} dtype is not implemented yet.")
    return xx


@custom_jvp
def fresnel(x: ArrayLike) -> tuple[Array, Array]:
    """The Fresnel integrals ``S(x) = int_0^x sin(pi t**2 / 2) dt`` and ``C(x)`` (with cos), as a pair."""
    original = np.dtype(_promote("fresnel", x)[0].dtype)
    s, c = _fresnel_value(_fresnel_operand(x))
    return s.astype(original), c.astype(original)


@fresnel.defjvp
def _fresnel_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    sin, cos = _sin_cos_half_pi_square(jnp.asarray(x))
    return fresnel(x), (sin * x_dot, cos * x_dot)


# ---------------------------------------------------------------------------
# Sine and cosine integrals


def _sici_small(x: Any) -> tuple[Any, Any]:
    t = x * x
    si = (x * _poly(T.SI_NUM, t)) / _poly(T.SI_DEN, t)
    ci = _EULER_GAMMA + jnp.log(x) + t * _poly(T.CI_NUM, t) / _poly(T.CI_DEN, t)
    return jnp.where(x == 0, 0.0, si), jnp.where(x == 0, -np.inf, ci)


def _sici_auxiliary(x: Any) -> tuple[Any, Any]:
    # Si = pi/2 - f cos x - g sin x, Ci = f sin x - g cos x, with f, g rational in 1/x^2.
    sin, cos = jnp.sin(x), jnp.cos(x)
    z = 1.0 / (x * x)
    f4 = _poly(T.SICI_F4_NUM, z) / (x * _poly(T.SICI_F4_DEN, z))
    g4 = z * _poly(T.SICI_G4_NUM, z) / _poly(T.SICI_G4_DEN, z)
    f8 = _poly(T.SICI_F8_NUM, z) / (x * _poly(T.SICI_F8_DEN, z))
    g8 = z * _poly(T.SICI_G8_NUM, z) / _poly(T.SICI_G8_DEN, z)
    below8 = x < 8.0
    f = jnp.where(below8, f4, f8)
    g = jnp.where(below8, g4, g8)
    return (np.pi / 2) - f * cos - g * sin, f * sin - g * cos


def _sici_huge(x: Any) -> tuple[Any, Any]:
    si = (np.pi / 2) - jnp.cos(x) / x
    ci = jnp.sin(x) / x
    return jnp.where(jnp.isposinf(x), np.pi / 2, si), jnp.where(jnp.isposinf(x), 0.0, ci)


@custom_jvp
def sici(x: ArrayLike) -> tuple[Array, Array]:
    """The sine and cosine integrals ``Si(x) = int_0^x sin t / t dt`` and
    ``Ci(x) = gamma + log x + int_0^x (cos t - 1) / t dt``, as a pair (Ci uses |x|; NaN at -inf)."""
    (x,) = _promote("sici", x)
    if np.issubdtype(jnp.result_type(x), np.complexfloating):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {jnp.result_type(x)}.")
    ax = jnp.abs(x)
    si_small, ci_small = _sici_small(ax)
    si_aux, ci_aux = _sici_auxiliary(ax)
    si_huge, ci_huge = _sici_huge(ax)
    near = ax <= 4
    middle = (ax > 4) & (ax <= 1e9)
    si = jnp.select([near, middle], [si_small, si_aux], si_huge)
    ci = jnp.select([near, middle], [ci_small, ci_aux], ci_huge)
    return jnp.sign(x) * si, jnp.where(jnp.isneginf(x), np.nan, ci)


@sici.defjvp
def _sici_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    (p,) = _promote("sici", x)
    return sici(x), (jnp.sinc(p / np.pi) * t, jnp.cos(p) / p * t)


# ---------------------------------------------------------------------------
# Spence's function


def _spence_rational(w: Any) -> Any:
    return -w * _poly(T.SPENCE_NUM, w) / _poly(T.SPENCE_DEN, w)


def _spence_positive(x: Any) -> Any:
    # Mapped onto w near 0 by x -> 1/x (x > 2, then also 1.5 < x), -x (x < 0.5) or x - 1,
    # and back through the reflection / inversion formulas.
    inverted = x > 2.0
    x = jnp.piecewise(x, [inverted], [lambda v: 1.0 / v, lambda v: v])
    above = x > 1.5
    below = x < 0.5
    inverted = inverted | above
    w = jnp.piecewise(x, [above, below], [lambda v: 1.0 / v - 1.0, lambda v: -v, lambda v: v - 1.0])
    y = _spence_rational(w)
    y = jnp.where(below, np.pi**2 / 6.0 - jnp.log(x) * jnp.log(1.0 - x) - y, y)
    return jnp.where(inverted, -0.5 * jnp.log(x) ** 2 - y, y)


def spence(x: Array) -> Array:
    """Spence's function ``int_1^x log t / (1 - t) dt`` for x >= 0 (NaN below); float32/float64 only."""
    x_: Any = jnp.asarray(x)  # compared with floats below: typed loosely
    dtype = np.dtype(x_.dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"x.dtype={dtype} is not supported, see docstring for supported types.")
    out: Array = jnp.piecewise(x_, [x_ < 0.0, x_ == 1.0, x_ == 0.0], [np.nan, 0, np.pi**2 / 6, _spence_positive])
    return out


# ---------------------------------------------------------------------------
# Owen's T


def _owens_t_quadrature(h: Any, a: Any) -> Any:
    nodes = jnp.expand_dims(np.array(T.OWENS_T_NODES), tuple(range(a.ndim)))
    r = jnp.square(a)[..., None] * nodes
    integrand = jnp.exp(-0.5 * jnp.square(h)[..., None] * (1.0 + r)) / (1.0 + r)
    return a * (integrand @ np.array(T.OWENS_T_WEIGHTS))


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    h = jnp.abs(h)
    abs_a = jnp.abs(a)
    root2 = _const(h, np.sqrt(2))
    h_scaled = h / root2
    # The quadrature covers |a| <= 1; beyond, T(h, a) = (ndtr-terms) - T(a h, 1/a).
    a_in = jnp.where(abs_a <= 1.0, abs_a, jnp.reciprocal(abs_a))
    h_in = jnp.where(abs_a <= 1.0, h, abs_a * h)
    out = _owens_t_quadrature(h_in, a_in)
    out = jnp.where(h_in == 0.0, jnp.arctan(a_in) / (2 * np.pi), out)
    out = jnp.where(a_in == 1.0, 0.125 * lax.erfc(-h_in / root2) * lax.erfc(h_in / root2), out)
    tail_h = lax.erfc(h_scaled)
    tail_ah = lax.erfc(abs_a * h_scaled)
    reflected = jnp.where(
        abs_a * h <= 0.67,
        0.25 - 0.25 * lax.erf(h_scaled) * lax.erf(abs_a * h_scaled) - out,
        0.25 * (tail_h + tail_ah - tail_h * tail_ah) - out,
    )
    out = lax.sign(a) * jnp.where(abs_a > 1.0, reflected, out)
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(out, jnp.nan), out)


@_owens_t.defjvp
def _owens_t_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (h, a), (dh, da) = primals, tangents
    out = _owens_t(h, a)
    root2 = _const(h, np.sqrt(2))
    # dT/dh = -exp(-h^2/2) erf(a h / sqrt 2) / (2 sqrt(2 pi)); dT/da = exp(-(1 + a^2) h^2 / 2) / (2 pi (1 + a^2)).
    d_h = -lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / root2) / (2.0 * _const(h, np.sqrt(2.0 * np.pi)))
    d_a = lax.exp(-0.5 * (lax.square(a) + 1.0) * lax.square(h)) / (2.0 * np.pi * (lax.square(a) + 1.0))
    return out, (d_h * dh + d_a * da).astype(out.dtype)


def owens_t(h: ArrayLike, a: ArrayLike) -> Array:
    """Owen's T function ``(1/2pi) int_0^a exp(-h**2 (1 + x**2) / 2) / (1 + x**2) dx``, by a 13-point
    quadrature (Patefield & Tandy's T5)."""
    h, a = _promote("owens_t", h, a)
    out: Array = _owens_t(h, a)
    return out


# ---------------------------------------------------------------------------
# Bessel functions of the first kind J_0 ... J_v


def bessel_jn(z: ArrayLike, *, v: int, n_iter: int = 50) -> Array:
    """``J_0(z) ... J_v(z)`` stacked on a new leading axis, by Miller's backward recurrence from
    order ``n_iter`` normalized with ``J_0 + 2 (J_2 + J_4 + ...) = 1`` (Zhang & Jin's BJNDD)."""
    (z,) = promote_dtypes_inexact(jnp.asarray(z))
    if np.issubdtype(jnp.result_type(z), np.complexfloating):
        raise ValueError("complex input not supported.")
    v = operator.index(concrete_or_error(v, "Argument v of bessel_jn."))
    n_iter = int(concrete_or_error(n_iter, "Argument n_iter of bessel_jn."))
    previous, current = jnp.full_like(z, 0.0), jnp.full_like(z, 1e-16)
    norm = jnp.full_like(z, 0.0)
    values: list[Any] = []
    for k in range(n_iter, -1, -1):
        value = 2.0 * (k + 1.0) * current / z - previous
        if k % 2 == 0:
            norm = norm + 2.0 * value
        previous, current = current, value
        values.append(value)
    values.reverse()  # values[k] is the unnormalized J_k
    out: Array = jnp.stack(values[: v + 1]) / (norm - values[0])
    return out


# ---------------------------------------------------------------------------
# Generalized exponential integral E_n


def _expn_series(x: Any, n: Any, active: Any) -> Any:
    """E_n(x) for 0 < x <= 1: (-x)^(n-1) psi(n) / (n-1)! - sum_{k != n-1} (-x)^k / (k! (k - n + 1))."""
    zero, one = _const(x, 0.0), _const(x, 1.0)
    # psi(n) = -gamma + 1 + 1/2 + ... + 1/(n-1), minus log x folded in.
    psi = -_EULER_GAMMA - jnp.log(x)
    (_, psi) = _masked_while(lambda s: active & (s[0] < n), lambda s: (s[0] + one, s[1] + one / s[0]),
                             (jnp.ones_like(n), psi))
    n1 = jnp.where(n == 1, one + one, n)
    eps = _eps(x)
    init = (-x, jnp.zeros_like(x), jnp.ones_like(x), one - n, jnp.where(n == 1, zero, one / (one - n1)),
            jnp.full_like(x, np.inf))  # fmt: skip

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        z, xk, yk, pk, ans, _ = s
        xk = xk + one
        yk = yk * (z / xk)
        pk = pk + one
        ans = ans + jnp.where(pk != zero, yk / pk, zero)
        t = jnp.where(ans != zero, jnp.abs(yk / ans), one)
        return z, xk, yk, pk, ans, t

    z, _, _, _, ans, _ = _masked_while(lambda s: active & (x > 0) & (s[5] > eps), body, init)
    return z ** (n - 1) * psi / jnp.exp(lax.lgamma(n)) - ans


_EXPN_BIG = 1.44115188075855872e17


def _expn_fraction(x: Any, n: Any, active: Any) -> Any:
    """E_n(x) for x > 1: the continued fraction e^-x (1/(x + n/(1 + 1/(x + (n+1)/(1 + 2/(x + ...)))))),
    by its convergents p_k / q_k, rescaled when they grow past 2^57."""
    one = _const(x, 1.0)
    eps = _eps(x)
    big = _const(x, _EXPN_BIG)
    init = (jnp.ones_like(n), jnp.ones_like(x), x, jnp.ones_like(x), x + n, one / (x + n),
            jnp.full_like(x, np.inf), jnp.zeros_like(x))  # fmt: skip

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        k, pkm2, qkm2, pkm1, qkm1, ans, _, r = s
        k = k + 1
        odd = k % 2 == 1
        yk = jnp.where(odd, one, x)
        xk = jnp.where(odd, n + (k - 1) / 2, k / 2)
        pk = pkm1 * yk + pkm2 * xk
        qk = qkm1 * yk + qkm2 * xk
        nonzero = qk != 0
        r = jnp.where(nonzero, pk / qk, r)
        t = jnp.where(nonzero, jnp.abs((ans - r) / r), one)
        ans = jnp.where(nonzero, r, ans)
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        rescale = jnp.abs(pk) > big
        pkm2, pkm1, qkm2, qkm1 = (jnp.where(rescale, v / big, v) for v in (pkm2, pkm1, qkm2, qkm1))
        return k, pkm2, qkm2, pkm1, qkm1, ans, t, r

    out = _masked_while(lambda s: active & (x > 0) & (s[6] > eps), body, init)
    return out[5] * jnp.exp(-x)


def _expn_large_n(x: Any, n: Any) -> Any:
    """E_n(x) for n >= 5000: e^-x / (x + n) (1 + n/(x+n)^2 + n (n - 2x)/(x+n)^4 + ...)."""
    xk = x + n
    yk = 1.0 / (xk * xk)
    ans = yk * n * (_const(x, 6) * x * x - _const(x, 8) * n * x + n * n)
    ans = yk * (ans + n * (n - _const(x, 2) * x))
    ans = yk * (ans + n)
    return (ans + 1.0) * jnp.exp(-x) / xk


def _expn_value(n: Any, x: Any) -> Any:
    one = _const(x, 1.0)
    n1 = jnp.where(n == 1, n + n, n)  # keeps 1/n1 finite where it is not taken
    # As jnp.piecewise: the LAST condition that holds wins. The loops step only on the elements whose
    # value they give. JAX's piecewise on an array runs every branch on every element, and its loops have
    # no iteration cap: the continued fraction at a tiny x (expn(1, [1e-20, 2.0])) or psi's loop at a
    # huge n never end there, so JAX returns nothing for such an array (for a scalar it runs the selected
    # branch alone and returns). Stepping a loop only where it is selected changes no value JAX returns:
    # the selected elements step exactly as before, and the others are discarded by the select.
    conditions = [
        (n < 0) | (x < 0),
        (x == 0) & (n < 2),
        (x == 0) & (n >= 2),
        (n == 0) & (x >= 0),
        n >= 5000,
        x > one,
    ]
    fraction_taken = conditions[-1]
    series_taken = ~functools.reduce(operator.or_, conditions)
    values = [
        jnp.full_like(x, np.nan),
        jnp.full_like(x, np.inf),
        one / n1,
        jnp.exp(-x) / x,
        _expn_large_n(x, n),
        _expn_fraction(x, n, fraction_taken),
    ]
    cases = list(zip(conditions, values))
    out = _expn_series(x, n, series_taken)
    for cond, value in cases:
        out = jnp.where(cond, value, out)
    return out


def _expn_primal(n: Any, x: Any) -> Any:
    n, x = _promote("expn", n, x)
    if np.issubdtype(jnp.result_type(x), np.complexfloating):
        raise ValueError("expn does not support complex-valued inputs.")
    n, x = jnp.broadcast_arrays(n, x)
    return _expn_value(n, x)


_expn = custom_jvp(_expn_primal, nondiff_argnums=(0,))


@_expn.defjvp
def _expn_jvp(n: Any, primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    return _expn(n, x), lax.neg(x_dot) * _expn(jnp.asarray(n) - 1, x)


def expn(n: ArrayLike, x: ArrayLike) -> Array:
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t**n dt``; NaN for n < 0
    or x < 0 (JAX's convention; differentiable in x only)."""
    out: Array = _expn(n, x)
    return out


# ---------------------------------------------------------------------------
# The confluent hypergeometric function 1F1


def _hyp1f1_taylor(a: Any, b: Any, x: Any) -> Any:
    """sum_k (a)_k / (b)_k x^k / k!, until a term drops below eps of the sum or after 250 terms
    (Pearson, Olver & Porter 2014, method (a))."""
    eps = _eps(x)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        total, k, term = s
        return total + term, k + 1, term * ((a + k) / (b + k) * x / (k + 1))

    init = (jnp.ones_like(x), jnp.ones_like(x), a / b * x)
    return _masked_while(lambda s: (s[1] < 250) & (jnp.abs(s[2]) / jnp.abs(s[0]) > eps), body, init)[0]


def _hyp1f1_asymptotic(a: Any, b: Any, x: Any) -> Any:
    """Gamma(b)/Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / k! x^-k, for |x| >= 100."""
    eps = _eps(x)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        total, k, term = s
        return total + term, k + 1, term * ((b - a + k) * (1 - a + k) / (k + 1) / x)

    init = (jnp.ones_like(x), jnp.ones_like(x), (b - a) * (1 - a) / x)
    total = _masked_while(lambda s: (s[1] < 250) & (jnp.abs(s[2]) / jnp.abs(s[0]) > eps), body, init)[0]
    return jnp.divide(gamma(b), gamma(a)) * lax.exp(x) * x ** (a - b) * total


def _hyp1f1_parameter_slope(a: Any, b: Any, x: Any, weight: Callable[[Any], Any]) -> Any:
    """sum_k (a)_k / (b)_k x^k / k! * weight(k): with weight psi(a+k) - psi(a) the a-derivative of 1F1,
    with psi(b) - psi(b+k) the b-derivative."""
    eps = _eps(x)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        total, k, term = s
        return total + term * weight(k), k + 1, term * ((a + k) / (b + k) * x / (k + 1))

    init = (jnp.zeros_like(x), jnp.ones_like(x), a / b * x)
    return _masked_while(lambda s: (s[1] < 250) & (jnp.abs(s[2]) / jnp.abs(s[0]) > eps), body, init)[0]


@custom_jvp
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    value = jnp.where(jnp.abs(x) < 100, _hyp1f1_taylor(a, b, x), _hyp1f1_asymptotic(a, b, x))
    index = (a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3
    return lax.select_n(index, value, jnp.full_like(x, 1), jnp.exp(x), jnp.full_like(x, np.inf))


_hyp1f1.defjvps(
    lambda a_dot, out, a, b, x: a_dot * _hyp1f1_parameter_slope(a, b, x, lambda k: lax.digamma(a + k) - lax.digamma(a)),
    lambda b_dot, out, a, b, x: b_dot * _hyp1f1_parameter_slope(a, b, x, lambda k: lax.digamma(b) - lax.digamma(b + k)),
    lambda x_dot, out, a, b, x: x_dot * (a / b * _hyp1f1(a + 1, b + 1, x)),
)


def hyp1f1(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """The confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / (b)_k x**k / k!`` for real
    arguments (``hyp1f1(0, 0, x) == 1``, unlike SciPy, as in JAX)."""
    a, b, x = _promote("hyp1f1", a, b, x)
    if np.issubdtype(jnp.result_type(x), np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    a, b, x = jnp.broadcast_arrays(a, b, x)
    out: Array = _hyp1f1(a, b, x)
    return out


# ---------------------------------------------------------------------------
# The Gauss hypergeometric function 2F1
#
# JAX 0.10.2 evaluates 2F1 element by element (Pearson, Olver & Porter 2014, with the digamma
# transformation of A&S 15.3.10-12 near x = 1): the regions, loop lengths and stopping rules below are
# its, in its order of operations. Every region is computed for every element and one is selected; the
# two loops whose length is a parameter (|a| terms of a terminating series, |c - a - b| terms of the
# digamma sum) step only where their result is the one selected (``active``). JAX runs them on every
# element, so where an unselected element has a huge or infinite parameter JAX never returns; the
# selected values are the same either way.


def _hyp2f1_terminal(a: Any, b: Any, c: Any, x: Any, active: Any) -> Any:
    """The series when a (or b) is a non-positive integer: it ends after |a| terms. Of the two, the
    one of greater magnitude ends it, unless c is a non-positive integer that stops the series first."""
    eps = _eps(x) * 50
    near_int_b = jnp.abs(b - jnp.round(b)) < eps
    c_stops_first = (jnp.remainder(c, 1) == 0) & (c <= 0) & (c > b)
    swap = (b < a) & near_int_b & ~c_stops_first
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    a = jnp.abs(a)
    one = _const(x, 1.0)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        i, total, term = s
        term = term * (-(a - i + one) / (c + i - one) * (b + i - one) / i * x)
        return i + one, total + term, term

    init = (jnp.ones_like(x), jnp.ones_like(x), jnp.ones_like(x))
    return _masked_while(lambda s: active & (s[0] < a + one), body, init)[1]


def _hyp2f1_series(a: Any, b: Any, c: Any, x: Any) -> Any:
    """sum_k (a)_k (b)_k / (c)_k x^k / k!, until a term drops below eps of the sum or after 249 terms."""
    eps = _eps(x)
    one = _const(x, 1.0)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        total, k, term = s
        total = total + term
        term = term * ((a + k - one) * (b + k - one) / (c + k - one) / k * x)
        return total, k + one, term

    init = (jnp.zeros_like(x), jnp.ones_like(x), jnp.ones_like(x))
    return _masked_while(lambda s: (s[1] < 250) & (jnp.abs(s[2]) > eps * jnp.abs(s[0])), body, init)[0]


def _hyp2f1_digamma(a: Any, b: Any, c: Any, x: Any, active: Any) -> Any:
    """2F1 near x = 1 when c - a - b is (close to) an integer m, where the Gauss series converges too
    slowly and the usual 1 - x transformation divides by Gamma(-m): A&S 15.3.10-12, a log series in
    1 - x plus (for m != 0) a finite sum of |m| - 1 terms."""
    eps = _eps(x)
    one, zero = _const(x, 1.0), _const(x, 0.0)
    d = c - a - b
    s = one - x
    rd = jnp.round(d)
    up = rd >= 0
    e = jnp.where(up, d, -d)
    d1 = jnp.where(up, d, zero)
    d2 = jnp.where(up, zero, d)
    m = jnp.where(up, rd, -rd).astype(np.int32)
    log_s = jnp.log(s)
    digamma_1 = lax.digamma(jnp.asarray(1.0))  # a weakly typed constant, as JAX's digamma(1.0)
    y = digamma_1 + lax.digamma(one + e) - lax.digamma(a + d1) - lax.digamma(b + d1) - log_s
    y = y / gamma(e + one)
    p = (a + d1) * (b + d1) * s / gamma(e + _const(x, 2.0))

    def log_body(st: tuple[Any, ...]) -> tuple[Any, ...]:
        p, q, t, y = st
        r = lax.digamma(one + t) + lax.digamma(one + t + e) - lax.digamma(a + t + d1) - lax.digamma(b + t + d1) - log_s
        q = p * r
        y = y + q
        p = p * (s * (a + t + d1) / (t + one))
        p = p * ((b + t + d1) / (t + one + e))
        return p, q, t + one, y

    init = (p, y, jnp.ones_like(x), y)
    y = _masked_while(lambda st: (st[2] < 250) & (jnp.abs(st[1]) >= eps * jnp.abs(st[3])), log_body, init)[3]

    def finite_body(st: tuple[Any, ...]) -> tuple[Any, ...]:
        i, p, t, y1 = st
        r = one - e + t
        p = p * (s * (a + t + d2) * (b + t + d2) / r)
        t = t + one
        p = p / t
        return i + 1, p, t, y1 + p

    init = (jnp.ones_like(m), jnp.ones_like(x), jnp.zeros_like(x), jnp.ones_like(x))
    y1 = _masked_while(lambda st: active & (rd != 0) & (st[0] < m), finite_body, init)[3]
    gamma_c = gamma(c)
    y1 = y1 * (gamma(e) * gamma_c / (gamma(a + d1) * gamma(b + d1)))
    y_m = y * (gamma_c / (gamma(a + d2) * gamma(b + d2)))
    y_m = jnp.where((m & 1) != 0, -y_m, y_m)
    q = s**rd
    with_sum = jnp.where(rd > 0, y_m * q + y1, y_m + y1 * q)
    return jnp.where(rd == 0, y * gamma_c / (gamma(a) * gamma(b)), with_sum)


def _hyp2f1_series_or_terminal(a: Any, b: Any, c: Any, x: Any, active: Any) -> Any:
    eps = _eps(x) * 50
    d = c - a - b
    neg_int = ((a <= 0) & (jnp.abs(a - jnp.round(a)) < eps)) | ((b <= 0) & (jnp.abs(b - jnp.round(b)) < eps))
    # (the test is "far from an integer", so that a NaN d counts as near one, as in JAX)
    far_int_d = jnp.abs(d - jnp.round(d)) >= eps
    index = jnp.where((x > 0.9) & ~neg_int, jnp.where(far_int_d, 0, 1), jnp.where(neg_int, 2, 0))
    return lax.select_n(index, _hyp2f1_series(a, b, c, x), _hyp2f1_digamma(a, b, c, x, active & (index == 1)),
                        _hyp2f1_terminal(a, b, c, x, active & (index == 2)))


def _hyp2f1_value(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = _eps(x) * 50
    one = _const(x, 1.0)
    d = c - a - b
    s = one - x
    ca, cb = c - a, c - b
    far_int_d = jnp.abs(d - jnp.round(d)) >= eps  # False for a NaN d, as JAX's test
    # 0: 1 (x = 0, or a or b = 0 with c != 0); 1: inf (c a pole, x > 1, or x = 1 with c - a - b <= 0);
    # 2: Euler's transformation (1-x)^(c-a-b) 2F1(c-a, c-b; c; x); 3, 4: (1-x)^-a when b = c (and a, b
    # swapped); 5: Gauss's theorem at x = 1; 6: 2F1 itself.
    index = jnp.where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0,
             jnp.where((c == 0) | ((c < 0) & (jnp.remainder(c, 1) == 0)), 1,
              jnp.where((d <= -1) & ~(far_int_d & (s < 0)), 2,
               jnp.where((d <= 0) & (x == 1), 1,
                jnp.where((x < 1) & (b == c), 3,
                 jnp.where((x < 1) & (a == c), 4,
                  jnp.where(x > 1, 1, jnp.where(x == 1, 5, 6))))))))  # fmt: skip
    return lax.select_n(
        index,
        jnp.ones_like(x),
        jnp.full_like(x, np.inf),
        s**d * _hyp2f1_series_or_terminal(ca, cb, c, x, index == 2),
        s ** (-a),
        s ** (-b),
        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
        _hyp2f1_series_or_terminal(a, b, c, x, index == 6),
    )


# Compiled once per shape and dtype, as JAX's (eagerly, each loop would be built and compiled per call).
_hyp2f1_jit = jit(_hyp2f1_value)


@custom_jvp
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_jit(a, b, c, x)


def _hyp2f1_parameter_slope(a: Any, b: Any, c: Any, x: Any, weight: Callable[[Any], Any]) -> Any:
    """sum_{k>=1} (a)_k (b)_k / (c)_k x^k / k! * weight(k): with weight psi(a+k) - psi(a) the
    a-derivative of 2F1, psi(b+k) - psi(b) the b-derivative, psi(c) - psi(c+k) the c-derivative."""
    eps = _eps(x)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        total, k, term = s
        total = total + term * weight(k)
        return total, k + 1, term * ((a + k) * (b + k) / (c + k) / (k + 1) * x)

    init = (jnp.zeros_like(x), jnp.ones_like(x), a * b / c * x)
    return _masked_while(lambda s: (s[1] < 250) & (jnp.abs(s[2]) / jnp.abs(s[0]) > eps), body, init)[0]


@jit
def _hyp2f1_da(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_parameter_slope(a, b, c, x, lambda k: lax.digamma(a + k) - lax.digamma(a))


@jit
def _hyp2f1_db(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_parameter_slope(a, b, c, x, lambda k: lax.digamma(b + k) - lax.digamma(b))


@jit
def _hyp2f1_dc(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_parameter_slope(a, b, c, x, lambda k: lax.digamma(c) - lax.digamma(c + k))


_hyp2f1.defjvps(
    lambda a_dot, out, a, b, c, x: _hyp2f1_da(a, b, c, x) * a_dot,
    lambda b_dot, out, a, b, c, x: _hyp2f1_db(a, b, c, x) * b_dot,
    lambda c_dot, out, a, b, c, x: _hyp2f1_dc(a, b, c, x) * c_dot,
    lambda x_dot, out, a, b, c, x: a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * x_dot,
)


def hyp2f1(a: ArrayLike, b: ArrayLike, c: ArrayLike, x: ArrayLike) -> Array:
    """The Gauss hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x**k / k!`` for
    real arguments; ``inf`` for x > 1 (as JAX: no analytic continuation) and at the poles of c."""
    args = _promote("hyp2f1", a, b, c, x)
    dtype = np.dtype(args[0].dtype)
    if np.issubdtype(dtype, np.complexfloating):
        raise ValueError("hyp2f1 does not support complex-valued inputs.")
    # JAX's result is never weakly typed; strong operands also let calls share one compiled loop.
    out: Array = _hyp2f1(*(jnp.asarray(v, dtype) for v in jnp.broadcast_arrays(*args)))
    return out
