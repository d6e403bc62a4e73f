"""``jax.scipy.stats.bernoulli``: a single trial that succeeds (``k = 1``) with probability ``p``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.special import xlog1py, xlogy
from minijax.typing import ArrayLike

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """``log P(K = k)``: ``log p`` at ``k = loc + 1``, ``log(1 - p)`` at ``k = loc``, ``-inf`` elsewhere."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    # One formula for both outcomes: x log p + (1 - x) log(1 - p), with 0 log 0 = 0.
    log_probs = xlogy(x, p) + xlog1py(lax.sub(lax_const(k, 1), x), -p)
    outside = jnp.logical_or(lax.lt(x, lax_const(k, 0)), lax.gt(x, lax_const(k, 1)))
    return jnp.where(outside, -np.inf, log_probs)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """``P(K = k)``."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k: ArrayLike, p: ArrayLike) -> Array:
    """``P(K <= k)``: 0 below 0, ``1 - p`` on ``[0, 1)``, 1 from 1 on; nan for ``p`` outside ``[0, 1]``."""
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    zero, one = lax_const(k, 0), lax_const(k, 1)
    bad = jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one)
    conds = [bad, lax.lt(k, zero), jnp.logical_and(lax.ge(k, zero), lax.lt(k, one)), lax.ge(k, one)]
    return jnp.select(conds, [np.nan, zero, one - p, one])


def ppf(q: ArrayLike, p: ArrayLike) -> Array:
    """The smallest ``k`` with ``cdf(k) >= q``: 0 for ``q <= 1 - p``, else 1; nan outside the domain."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    zero, one = lax_const(q, 0), lax_const(q, 1)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return jnp.where(bad, np.nan, jnp.where(lax.le(q, one - p), zero, one))
