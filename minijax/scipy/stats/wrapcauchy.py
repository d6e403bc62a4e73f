"""``jax.scipy.stats.wrapcauchy``: the wrapped Cauchy distribution on ``[0, 2 pi]``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.typing import ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, c: ArrayLike) -> Array:
    """``log((1 - c**2) / (2 pi (1 + c**2 - 2 c cos x)))``; ``-inf`` off ``[0, 2 pi]``, nan unless ``0 < c < 1``."""
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    valid_c = lax.gt(c, lax_const(c, 0)) & lax.lt(c, lax_const(c, 1))
    inside = lax.ge(x, lax_const(x, 0)) & lax.le(x, lax_const(x, np.pi * 2))
    log_probs = jnp.log(1 - c * c) - jnp.log(2 * np.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
    return jnp.where(valid_c, jnp.where(inside, log_probs, -np.inf), np.nan)


def pdf(x: ArrayLike, c: ArrayLike) -> Array:
    return jnp.exp(logpdf(x, c))
