"""``jax.scipy.stats.binom``: the number of successes in ``n`` trials of probability ``p``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.special import gammaln, xlog1py, xlogy
from minijax.typing import ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """``log(C(n, y) p**y (1 - p)**(n - y))`` with ``y = k - loc``; ``-inf`` outside ``loc <= k < loc + n + 1``."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    zero = lax_const(y, 0)
    comb_term = lax.sub(gammaln(n + 1), lax.add(gammaln(y + 1), gammaln(n - y + 1)))
    log_linear_term = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(comb_term, log_linear_term)
    # A certain outcome (n = 0, or p at 0 or 1 with k at the matching end) is exactly log 1, not lgamma's rounding.
    certain = jnp.logical_or(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), lax.eq(log_linear_term, zero))
    log_probs = jnp.where(certain, 0.0, log_probs)
    return jnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, -np.inf)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """``P(K = k)``."""
    return jnp.exp(logpmf(k, n, p, loc))
