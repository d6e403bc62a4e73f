"""``jax.scipy.stats.gumbel_l``: the left-skewed Gumbel distribution (of the minimum); nan for ``scale <= 0``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.special import xlog1py, xlogy
from minijax.typing import ArrayLike

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``z - exp(z) - log(scale)`` with ``z = (x - loc) / scale``."""
    x, loc, scale = promote_args_inexact("gumbel_l.logpdf", x, loc, scale)
    ok = lax.gt(scale, lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    log_pdf = lax.add(xlogy(-1, scale), lax.sub(z, lax.exp(z)))
    return jnp.where(ok, log_pdf, np.nan)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``log(1 - exp(-exp(z)))``, through ``expm1`` so that small ``exp(z)`` keeps its digits."""
    x, loc, scale = promote_args_inexact("gumbel_l.logcdf", x, loc, scale)
    ok = lax.gt(scale, lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    log_cdf = lax.log(lax.neg(lax.expm1(lax.neg(lax.exp(z)))))
    return jnp.where(ok, log_cdf, np.nan)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logcdf(x, loc, scale))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-exp(z)``."""
    x, loc, scale = promote_args_inexact("gumbel_l.logsf", x, loc, scale)
    ok = lax.gt(scale, lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    return jnp.where(ok, lax.neg(lax.exp(z)), np.nan)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logsf(x, loc, scale))


def ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``loc + scale log(-log1p(-p))``; nan outside ``0 < p < 1``."""
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    ok = lax.bitwise_and(lax.gt(p, lax_const(p, 0)), lax.lt(p, lax_const(p, 1)))
    quantile = lax.add(loc, lax.mul(scale, lax.log(xlog1py(-1, lax.neg(p)))))
    return jnp.where(ok, quantile, np.nan)
