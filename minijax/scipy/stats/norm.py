"""``jax.scipy.stats.norm``: the normal distribution's density and distribution functions.

Computed as JAX computes them (the log-density in one expression, the
density as its exponential), so float32 results round the same way.
"""

from __future__ import annotations

import math

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy import special
from minijax.typing import ArrayLike

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``log`` of the normal density with mean ``loc`` and standard deviation ``scale``."""
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sq = lax.square(scale)
    # Scalar constants (not x-shaped ones): with a scalar scale the log is taken once, not once per element.
    log_normalizer = lax.log(lax.mul(lax_const(x, 2 * math.pi), scale_sq))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sq)
    out: Array = lax.div(lax.add(log_normalizer, quadratic), lax_const(x, -2))
    return out


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The normal density with mean ``loc`` and standard deviation ``scale``."""
    return jnp.exp(logpdf(x, loc, scale))


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


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``log_ndtr(z)``: accurate far into the lower tail, where ``log(cdf)`` would be ``log(0)``."""
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    # As JAX's log_ndtr computes with constants of z's dtype, the result is never weakly typed.
    return special.log_ndtr(lax.convert_element_type(z, z.dtype))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``logcdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The quantile ``loc + scale * ndtri(q)`` (nan outside ``[0, 1]``), in the default float dtype as JAX's."""
    return jnp.asarray(special.ndtri(q) * scale + loc, float)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``ppf(1 - q)``."""
    return ppf(lax.sub(lax_const(q, 1), q), loc, scale)
