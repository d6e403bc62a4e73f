"""``jax.scipy.stats.beta``: the beta distribution on ``[loc, loc + scale]``."""

from __future__ import annotations

from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy import special
from minijax.scipy.special import xlog1py, xlogy
from minijax.typing import ArrayLike

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``(a-1) log y + (b-1) log(1-y) - log B(a, b) - log scale``; ``-inf`` off the support, nan for bad params."""
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    one = lax_const(x, 1)
    zero = lax_const(a, 0)
    y = lax.div(lax.sub(x, loc), scale)
    log_linear_term = lax.add(xlogy(lax.sub(a, one), y), xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.add(lax.neg(special.betaln(a, b)), log_linear_term), lax.log(scale))
    outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    result = jnp.where(outside, -np.inf, log_probs)
    bad = jnp.logical_or(jnp.logical_or(lax.le(a, zero), lax.le(b, zero)), lax.le(scale, zero))
    return jnp.where(bad, np.nan, result)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _clamped(x: Any, loc: Any, scale: Any) -> Array:
    out: Array = lax.clamp(lax_const(x, 0), lax.div(lax.sub(x, loc), scale), lax_const(x, 1))
    return out


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``betainc(a, b, y)`` with ``y`` clamped to ``[0, 1]``."""
    x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, _clamped(x, loc, scale))


def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``betainc(b, a, 1 - y)``: the upper tail without ``1 - cdf``'s cancellation."""
    x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1 - _clamped(x, loc, scale))


def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.log(sf(x, a, b, loc, scale))
