"""``jax.scipy.stats.nbinom``: the number of failures before the ``n``-th success."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.special import gammaln, xlogy
from minijax.typing import ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """``log(C(y + n - 1, y) p**n (1 - p)**y)`` with ``y = k - loc``; ``-inf`` below ``loc``."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = lax_const(k, 1)
    y = lax.sub(k, loc)
    comb_term = lax.sub(lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one)))
    log_linear_term = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    return jnp.where(lax.lt(k, loc), -np.inf, lax.add(comb_term, log_linear_term))


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    return jnp.exp(logpmf(k, n, p, loc))
