"""``jax.scipy.stats.gennorm``: the generalized normal distribution of shape ``beta``."""

from __future__ import annotations

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.util import promote_args_inexact
from minijax.typing import ArrayLike

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """``log(beta / 2) - lgamma(1 / beta) - |x|**beta``."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    out: Array = lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta
    return out


def cdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """``(1 + sign(x) P(1/beta, |x|**beta)) / 2`` with ``P`` the regularized lower incomplete gamma."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    out: Array = 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))
    return out


def pdf(x: ArrayLike, beta: ArrayLike) -> Array:
    return jnp.exp(logpdf(x, beta))
