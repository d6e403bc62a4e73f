"""``jax.scipy.stats.geom``: the number of trials up to and including the first success."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.special import xlog1py
from minijax.typing import ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """``(x - 1) log(1 - p) + log p`` with ``x = k - loc``; ``-inf`` for ``x <= 0``."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = xlog1py(lax.sub(x, lax_const(k, 1)), -p) + lax.log(p)
    return jnp.where(lax.le(x, lax_const(k, 0)), -np.inf, log_probs)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    return jnp.exp(logpmf(k, p, loc))
