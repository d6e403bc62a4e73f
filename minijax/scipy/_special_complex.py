"""The complex-valued special functions of ``jax.scipy.special``: ``wofz`` (and
``erfcx`` of complex arguments, which is ``wofz(iz)``) and ``sph_harm_y``
(sci21, issue 21).

``wofz`` is Weideman's rational approximation of the Faddeeva function
(J. A. C. Weideman, "Computation of the complex error function", SIAM J.
Numer. Anal. 31, 1994) with N = 32 terms, as JAX evaluates it: valid in the
upper half-plane, and continued to the lower one by w(-z) = 2 exp(-z²) - w(z).
Its 32 coefficients are the Fourier coefficients of Weideman's paper, computed
here once with NumPy's FFT (the same numbers as JAX's table to ~1e-16).

``sph_harm_y`` evaluates the normalised associated Legendre functions by
their three-term recurrences (the diagonal P_m^m, the first superdiagonal
P_m^{m+1}, then each further superdiagonal from the two before it), as JAX
does, and multiplies by exp(i|m|φ); negative orders by the conjugate symmetry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.core import concrete_or_error
from minijax.custom_derivatives import custom_jvp
from minijax.numpy.util import promote_args_inexact
from minijax.stages import jit
from minijax.typing import ArrayLike

Array = Any


def _weideman_coefficients(n: int) -> tuple[float, np.ndarray]:
    """(L, the n coefficients, highest power first) of Weideman's approximation
    w(z) ≈ 2 p(Z) / (L - iz)² + 1 / (√π (L - iz)), Z = (L + iz) / (L - iz)."""
    m = 2 * n
    length = np.sqrt(n / np.sqrt(2))
    k = np.arange(-m + 1, m)
    t = length * np.tan(k * np.pi / m / 2)
    samples = np.concatenate([[0.0], np.exp(-t * t) * (length * length + t * t)])
    coefficients = np.real(np.fft.fft(np.fft.fftshift(samples))) / (2 * m)
    return float(length), coefficients[1 : n + 1][::-1].copy()


_WOFZ_L, _WOFZ_C = _weideman_coefficients(32)


def _const(x: Array, value: float) -> Array:
    return lax.full_like(x, value, shape=())


def _wofz_upper_half(z: Array) -> Array:
    """Weideman's approximation, for Im z >= 0."""
    re = lax.real(z)
    length = lax.complex(_const(re, _WOFZ_L), _const(re, 0.0))
    iz = lax.complex(lax.neg(lax.imag(z)), re)
    denom = length - iz
    big_z = (length + iz) / denom
    p = jnp.polyval(jnp.asarray(_WOFZ_C, dtype=big_z.dtype), big_z)
    inv_sqrt_pi = lax.complex(_const(re, 1 / np.sqrt(np.pi)), _const(re, 0.0))
    return 2 * p / (denom * denom) + inv_sqrt_pi / denom


@custom_jvp
def _wofz(z: Array) -> Array:
    upper = lax.ge(lax.imag(z), _const(lax.real(z), 0.0))
    w = _wofz_upper_half(lax.select(upper, z, lax.neg(z)))
    return lax.select(upper, w, 2 * lax.exp(lax.neg(z * z)) - w)


# w'(z) = -2 z w(z) + 2i/√π
_wofz.defjvps(
    lambda g, ans, z: (
        g * (lax.neg(2 * z * ans) + lax.complex(_const(lax.real(z), 0.0), _const(lax.real(z), 2 / np.sqrt(np.pi))))
    )
)


def wofz(z: ArrayLike) -> Array:
    """The Faddeeva function ``exp(-z²) erfc(-iz)``, complex (real arguments are made complex)."""
    (x,) = promote_args_inexact("wofz", z)
    x = jnp.asarray(x)
    return _wofz(x.astype(dtypes.to_complex_dtype(x.dtype)))


def erfcx_complex(x: Array) -> Array:
    """``erfcx`` of a complex argument: ``wofz(iz)``."""
    return _wofz(lax.complex(lax.neg(lax.imag(x)), lax.real(x)))


# ---------------------------------------------------------------------------
# Spherical harmonics


def _normalized_legendre(l_max: int, x: Array) -> Array:
    """P[m, l, k]: the normalised associated Legendre function of order m and degree l at x[k]
    (zero where m > l), orthonormal on the sphere with the 1/√(4π)-scaled P_0^0."""
    dtype = x.dtype
    size = l_max + 1
    p = jnp.zeros((size, size, x.shape[0]), dtype=dtype)
    first = 0.5 / jnp.sqrt(np.pi)
    p = p.at[0, 0].set(first)
    if l_max == 0:
        return p
    a = jnp.arange(1, size, dtype=dtype)
    # P_m^m = first · ∏_{i≤m} (-√(1 + 1/(2i))) · (1 - x²)^{m/2}
    diag_factor = jnp.cumprod(-1 * jnp.sqrt(1.0 + 0.5 / a))
    sines = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max, x.shape[0])), axis=0)
    rows = np.arange(1, size)
    p = p.at[rows, rows].set(first * (diag_factor[:, None] * sines))
    # P_m^{m+1} = √(2m + 3) · x · P_m^m
    b = jnp.arange(l_max, dtype=dtype)
    m_idx = np.arange(l_max)
    p = p.at[m_idx, m_idx + 1].set((jnp.sqrt(2.0 * b + 3.0)[:, None] * x[None, :]) * p[m_idx, m_idx])
    if l_max < 2:
        return p
    # Superdiagonal s (l = m + s) from the two before it:
    # P_m^l = d0 · x · P_m^{l-1} - d1 · P_m^{l-2}.
    m_grid, l_grid = jnp.meshgrid(jnp.arange(size, dtype=dtype), jnp.arange(size, dtype=dtype), indexing="ij")
    ll, mm = l_grid * l_grid, m_grid * m_grid
    d0 = jnp.sqrt((4.0 * ll - 1.0) / (ll - mm))
    d1 = jnp.sqrt(((2.0 * l_grid + 1.0) * ((l_grid - 1.0) * (l_grid - 1.0) - mm)) / ((2.0 * l_grid - 3.0) * (ll - mm)))
    offset = np.arange(size)[None, :] - np.arange(size)[:, None]  # l - m

    def superdiagonal(s: Array, p: Array) -> Array:
        on = offset == s
        c0 = jnp.where(on, d0, 0)[:, :, None]
        c1 = jnp.where(on, d1, 0)[:, :, None]
        return p + (c0 * (jnp.roll(p, 1, axis=1) * x) - c1 * jnp.roll(p, 2, axis=1))

    out: Array = lax.fori_loop(2, size, superdiagonal, p)
    return out


def _sph_harm(n: Array, m: Array, theta: Array, phi: Array, n_max: int) -> Array:
    legendre = _normalized_legendre(n_max, jnp.cos(theta))
    value = legendre.at[abs(m), n, jnp.arange(len(n))].get(mode="clip")
    angle = abs(m) * phi
    harmonics = lax.complex(value * jnp.cos(angle), value * jnp.sin(angle))
    return jnp.where(m < 0, (-1.0) ** abs(m) * jnp.conjugate(harmonics), harmonics)


_SPH_HARM_JITS: dict[int, Any] = {}


def sph_harm_y(
    n: Array, m: Array, theta: Array, phi: Array, diff_n: int | None = None, n_max: int | None = None
) -> Array:
    """The spherical harmonics Y_n^m(θ, φ) (θ the colatitude, φ the longitude), complex.

    ``n_max`` (JAX's extra argument) is the largest degree, static; by default
    ``max(n)``, which must then be concrete. Degrees above ``n_max`` are
    clipped to it; ``diff_n`` is not supported (NotImplementedError, as in JAX).
    """
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if jnp.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = np.max(n)
    # (JAX 0.10.2's message names sph_harm, the function sph_harm_y replaced.)
    n_max = int(
        concrete_or_error(
            n_max,
            "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically specified to use "
            "`sph_harm` within JAX transformations.",
        )
    )
    fn = _SPH_HARM_JITS.get(n_max)
    if fn is None:
        fn = _SPH_HARM_JITS[n_max] = jit(lambda n, m, theta, phi: _sph_harm(n, m, theta, phi, n_max))
    return fn(n, m, theta, phi)
