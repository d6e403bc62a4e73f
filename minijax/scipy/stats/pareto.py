"""``jax.scipy.stats.pareto``: the Pareto distribution of shape ``b``, supported from ``loc + scale`` on."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.stats._core import outside_unit_interval
from minijax.typing import ArrayLike

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``log(b / scale) - (b + 1) log(z)`` with ``z = (x - loc) / scale``; ``-inf`` for ``z < 1``."""
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    normalizer = lax.log(lax.div(scale, b))
    log_probs = lax.neg(lax.add(normalizer, lax.mul(lax.add(b, lax_const(x, 1)), lax.log(z))))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, log_probs)


def pdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``1 - z**-b``, 0 below the support."""
    x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.sub(lax_const(x, 1), lax.pow(z, lax.neg(b)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), lax_const(x, 0), value)


def logcdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``log1p(-z**-b)``, ``-inf`` below the support."""
    x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.log1p(lax.neg(lax.pow(z, lax.neg(b))))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, value)


def logsf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-b log(z)``, 0 below the support."""
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.neg(lax.mul(b, lax.log(z)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), lax_const(x, 0), value)


def sf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logsf(x, b, loc, scale))


def ppf(q: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``loc + scale (1 - q)**(-1/b)``; nan for ``q`` outside ``[0, 1]``."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = lax_const(q, 1)
    value = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return jnp.where(outside_unit_interval(q), np.nan, value)
