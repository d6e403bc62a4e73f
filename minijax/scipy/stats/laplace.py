"""``jax.scipy.stats.laplace``: the double exponential distribution."""

from __future__ import annotations

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.typing import ArrayLike

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-|x - loc| / scale - log(2 scale)``."""
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    linear_term = lax.div(lax.abs(lax.sub(x, loc)), scale)
    out: Array = lax.neg(lax.add(linear_term, lax.log(lax.mul(lax_const(x, 2), scale))))
    return out


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``exp(z) / 2`` for ``z <= 0``, ``1 - exp(-z) / 2`` above."""
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    half = lax_const(x, 0.5)
    z = lax.div(lax.sub(x, loc), scale)
    lower = lax.mul(half, lax.exp(z))
    upper = lax.sub(lax_const(x, 1), lax.mul(half, lax.exp(lax.neg(z))))
    out: Array = lax.select(lax.le(z, lax_const(x, 0)), lower, upper)
    return out
