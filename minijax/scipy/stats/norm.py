"""``jax.scipy.stats.norm``: the normal distribution's density and distribution functions.

Computed as JAX computes them (the log-density in one expression, the
density as its exponential), so float32 results round the same way.
``logcdf``, ``logsf``, ``ppf`` and ``isf`` need ``log_ndtr``/``ndtri``,
which ``minijax.scipy.special`` does not have yet.
"""

from __future__ import annotations

import math

from minijax import lax
from minijax.array import Array
from minijax.numpy.util import promote_args_inexact
from minijax.typing import ArrayLike

__all__ = ["cdf", "logpdf", "pdf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``log`` of the normal density with mean ``loc`` and standard deviation ``scale``."""
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sq = lax.square(scale)
    log_normalizer = lax.log(lax.mul(lax.full_like(x, 2 * math.pi), scale_sq))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sq)
    out: Array = lax.div(lax.add(log_normalizer, quadratic), lax.full_like(x, -2))
    return out


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The normal density with mean ``loc`` and standard deviation ``scale``."""
    out: Array = lax.exp(logpdf(x, loc, scale))
    return out


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``P(X <= x)`` for the normal distribution: ``erfc(-z / sqrt(2)) / 2`` with ``z = (x - loc) / scale``."""
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    # JAX's ndtr computes with constants of x's dtype: the result is never weakly typed.
    z = lax.div(lax.sub(x, loc), scale)
    z = lax.convert_element_type(z, z.dtype)
    # erfc of -z keeps the lower tail accurate, where 1 + erf(z) would cancel.
    out: Array = lax.mul(lax.full_like(z, 0.5), lax.erfc(lax.mul(z, lax.full_like(z, -1 / math.sqrt(2)))))
    return out


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``P(X > x) = cdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)
