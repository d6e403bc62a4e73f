"""``jax.scipy.stats.logistic``: the logistic distribution (its cdf is ``expit``)."""

from __future__ import annotations

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.special import expit, logit
from minijax.typing import ArrayLike

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-2 logaddexp(z/2, -z/2) - log(scale)``: symmetric in ``z``, so neither tail overflows."""
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    two = lax_const(z, 2)
    half_z = lax.div(z, two)
    out: Array = lax.sub(lax.mul(lax.neg(two), jnp.logaddexp(half_z, lax.neg(half_z))), lax.log(scale))
    return out


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit(lax.div(lax.sub(x, loc), scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def ppf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``loc + scale logit(q)``."""
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    out: Array = lax.add(lax.mul(logit(x), scale), loc)
    return out


def isf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``loc - scale logit(q)``."""
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    out: Array = lax.add(lax.mul(lax.neg(logit(x)), scale), loc)
    return out
