"""``jax.scipy.stats.chi2``: the chi-squared distribution with ``df`` degrees of freedom."""

from __future__ import annotations

from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy import special
from minijax.typing import ArrayLike

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``(df/2 - 1) log y - y/2 - lgamma(df/2) - df/2 log 2 - log scale``; ``-inf`` below ``loc``."""
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    one, two = lax_const(x, 1), lax_const(x, 2)
    y = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(half_df, one), lax.log(y)), lax.div(y, two))
    normalizer = lax.neg(lax.add(lax.lgamma(half_df), lax.div(lax.mul(lax.log(two), df), two)))
    log_probs = lax.add(lax.sub(normalizer, lax.log(scale)), kernel)
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, df, loc, scale))


def _half_y(x: Any, loc: Any, scale: Any) -> Array:
    # y / 2 clamped to [0, inf]: below the support the regularized gammas give 0 and 1.
    two = lax_const(scale, 2)
    out: Array = lax.clamp(lax_const(x, 0), lax.div(lax.sub(x, loc), lax.mul(scale, two)), lax_const(x, np.inf))
    return out


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``gammainc(df/2, y/2)``."""
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    return special.gammainc(lax.div(df, lax_const(scale, 2)), _half_y(x, loc, scale))


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.log(cdf(x, df, loc, scale))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``gammaincc(df/2, y/2)``."""
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    return special.gammaincc(lax.div(df, lax_const(scale, 2)), _half_y(x, loc, scale))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.log(sf(x, df, loc, scale))
