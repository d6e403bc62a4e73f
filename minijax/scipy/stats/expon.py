"""``jax.scipy.stats.expon``: the exponential distribution, shifted by ``loc`` and stretched by ``scale``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.stats._core import outside_unit_interval
from minijax.typing import ArrayLike

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-(x - loc) / scale - log(scale)`` from ``loc`` on, ``-inf`` below."""
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-expm1(-(x - loc) / scale)``: accurate near ``loc``, where ``1 - exp`` would cancel."""
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), lax.neg(lax.expm1(neg_z)))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-(x - loc) / scale``, 0 below ``loc``."""
    # JAX names this one "expon.sf" in its dtype checks; the name only shows in error messages.
    x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), neg_z)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logsf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``log1p(-sf)``."""
    out: Array = lax.log1p(lax.neg(sf(x, loc, scale)))
    return out


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``loc - scale log1p(-q)``; nan for ``q`` outside ``[0, 1]``."""
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    quantile = lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q))))
    return jnp.where(outside_unit_interval(q), np.nan, quantile)
