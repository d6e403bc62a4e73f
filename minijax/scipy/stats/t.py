"""``jax.scipy.stats.t``: Student's t distribution with ``df`` degrees of freedom."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.typing import ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``lgamma((df+1)/2) - lgamma(df/2) - log(pi df scale**2)/2 - (df+1)/2 log1p(z**2/df)``."""
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    two = lax_const(x, 2)
    z = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, two)
    half_df_plus_half = lax.add(half_df, lax_const(x, 0.5))
    log_pi_df_scale_sq = lax.log(lax.mul(lax.mul(lax.mul(scale, scale), lax_const(x, np.pi)), df))
    normalizer = lax.sub(lax.add(lax.lgamma(half_df), lax.div(log_pi_df_scale_sq, two)), lax.lgamma(half_df_plus_half))
    quadratic = lax.div(lax.mul(z, z), df)
    out: Array = lax.neg(lax.add(normalizer, lax.mul(half_df_plus_half, lax.log1p(quadratic))))
    return out


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, df, loc, scale))
