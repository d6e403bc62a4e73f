"""``jax.scipy.stats.gumbel_r``: the right-skewed Gumbel distribution (of the maximum); nan for ``scale <= 0``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.nn import log1mexp
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.special import xlogy
from minijax.typing import ArrayLike

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-(z + exp(-z)) - log(scale)`` with ``z = (x - loc) / scale``."""
    x, loc, scale = promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
    ok = lax.gt(scale, lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    log_pdf = lax.add(xlogy(-1, scale), lax.neg(lax.add(z, lax.exp(lax.neg(z)))))
    return jnp.where(ok, log_pdf, np.nan)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-exp(-z)``."""
    x, loc, scale = promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
    ok = lax.gt(scale, lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    return jnp.where(ok, lax.neg(lax.exp(lax.neg(z))), np.nan)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logcdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``1 - exp(-exp(-z))``."""
    x, loc, scale = promote_args_inexact("gumbel_r.sf", x, loc, scale)
    ok = lax.gt(scale, lax_const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    survival = lax.sub(lax_const(x, 1), lax.exp(lax.neg(lax.exp(neg_z))))
    return jnp.where(ok, survival, np.nan)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``log(1 - exp(-exp(-z)))`` by ``log1mexp``, accurate in both tails."""
    x, loc, scale = promote_args_inexact("gumbel_r.logsf", x, loc, scale)
    ok = lax.gt(scale, lax_const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    return jnp.where(ok, log1mexp(lax.exp(neg_z)), np.nan)


def ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``loc - scale log(-log p)``; nan outside ``0 < p < 1``."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    ok = lax.bitwise_and(lax.gt(p, lax_const(p, 0)), lax.lt(p, lax_const(p, 1)))
    quantile = lax.sub(loc, lax.mul(scale, lax.log(xlogy(-1, p))))
    return jnp.where(ok, quantile, np.nan)
