"""``jax.scipy.stats.cauchy``: the Cauchy (Lorentz) distribution."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy import arctan
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.typing import ArrayLike

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-log(pi scale (1 + z**2))`` with ``z = (x - loc) / scale``."""
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    normalizer = lax.log(lax.mul(lax_const(x, np.pi), scale))
    out: Array = lax.neg(lax.add(normalizer, lax.log1p(lax.mul(z, z))))
    return out


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``1/2 + arctan(z) / pi``."""
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    inv_pi = lax.div(lax_const(x, 1.0), lax_const(x, np.pi))
    out: Array = lax.add(lax_const(x, 0.5), lax.mul(inv_pi, arctan(z)))
    return out


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.log(cdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``cdf`` of the mirrored distribution: ``cdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``loc + scale tan(pi (q - 1/2))``."""
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    unscaled = lax.tan(lax.sub(lax.mul(lax_const(q, np.pi), q), lax_const(q, np.pi / 2)))
    out: Array = lax.add(lax.mul(unscaled, scale), loc)
    return out


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``loc + scale tan(pi (1/2 - q))``."""
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    unscaled = lax.tan(lax.sub(lax_const(q, np.pi / 2), lax.mul(lax_const(q, np.pi), q)))
    out: Array = lax.add(lax.mul(unscaled, scale), loc)
    return out
