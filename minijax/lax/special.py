"""``lax`` special functions: wrappers that bind the ``special`` primitives
(``minijax/primitives/special.py``), named as in ``jax.lax``, plus
``random_gamma_grad``, which JAX writes as a function rather than a primitive."""

from __future__ import annotations

from typing import Any

from minijax.primitives.special import (
    bessel_i0e_p,
    bessel_i1e_p,
    igamma_grad_a_p,
    igamma_p,
    igammac_p,
    polygamma_p,
    random_gamma_grad as _random_gamma_grad,
    regularized_incomplete_beta_p,
    zeta_p,
)

Array = Any
ArrayLike = Any


def igamma(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized lower incomplete gamma function P(a, x)."""
    return igamma_p.bind(a, x)


def igammac(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return igammac_p.bind(a, x)


def igamma_grad_a(a: ArrayLike, x: ArrayLike) -> Array:
    """dP(a, x)/da, the derivative of ``igamma`` in its first operand."""
    return igamma_grad_a_p.bind(a, x)


def random_gamma_grad(a: ArrayLike, x: ArrayLike) -> Array:
    """The derivative of a Gamma(a, 1) sample x in a, at fixed quantile: implicit
    differentiation of P(a, x) = u gives dx/da = -(dP/da) / (dP/dx)."""
    return _random_gamma_grad(a, x)


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """The regularized incomplete beta function I_x(a, b)."""
    return regularized_incomplete_beta_p.bind(a, b, x)


def polygamma(m: ArrayLike, x: ArrayLike) -> Array:
    """The m-th derivative of digamma at x (m a non-negative integer held in a float)."""
    return polygamma_p.bind(m, x)


def zeta(x: ArrayLike, q: ArrayLike) -> Array:
    """The Hurwitz zeta function sum_k (q + k)^-x."""
    return zeta_p.bind(x, q)


def bessel_i0e(x: ArrayLike) -> Array:
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0."""
    return bessel_i0e_p.bind(x)


def bessel_i1e(x: ArrayLike) -> Array:
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1."""
    return bessel_i1e_p.bind(x)


__all__ = [
    "bessel_i0e", "bessel_i0e_p", "bessel_i1e", "bessel_i1e_p", "betainc", "igamma", "igamma_grad_a",
    "igamma_grad_a_p", "igamma_p", "igammac", "igammac_p", "polygamma", "polygamma_p", "random_gamma_grad",
    "regularized_incomplete_beta_p", "zeta", "zeta_p",
]  # fmt: skip
