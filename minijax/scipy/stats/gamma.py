"""``jax.scipy.stats.gamma``: the gamma distribution of shape ``a``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy import special
from minijax.scipy.special import gammaln, xlogy
from minijax.typing import ArrayLike

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``(a - 1) log y - y - lgamma(a) - log scale``; ``-inf`` below ``loc``."""
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    one = lax_const(x, 1)
    # Below the support y is replaced by 1 so that the discarded branch stays finite (and its gradient too).
    y = jnp.where(ok, lax.div(lax.sub(x, loc), scale), one)
    log_linear_term = lax.sub(xlogy(lax.sub(a, one), y), y)
    shape_terms = lax.add(gammaln(a), lax.log(scale))
    return jnp.where(ok, lax.sub(log_linear_term, shape_terms), -np.inf)


def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``gammainc(a, y)`` with ``y`` clamped to ``[0, inf]``."""
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    y = lax.clamp(lax_const(x, 0), lax.div(lax.sub(x, loc), scale), lax_const(x, np.inf))
    return special.gammainc(a, y)


def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.log(cdf(x, a, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``gammaincc(a, y)``, 1 below the support."""
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return jnp.where(lax.lt(y, lax_const(y, 0)), 1, special.gammaincc(a, y))


def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.log(sf(x, a, loc, scale))
