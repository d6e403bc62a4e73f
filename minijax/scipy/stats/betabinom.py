"""``jax.scipy.stats.betabinom``: a binomial whose success probability is beta distributed."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.scipy import special
from minijax.stages import jit
from minijax.typing import ArrayLike

__all__ = ["logpmf", "pmf"]


@jit
def logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Array:
    """``log C(n, y) + log B(y + a, n - y + b) - log B(a, b)`` with ``y = floor(k) - loc``.

    ``-inf`` outside ``0 <= y <= n``; nan for ``n < 0``, ``a <= 0`` or ``b <= 0``.
    """
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one, zero = lax_const(y, 1), lax_const(y, 0)
    betaln = special.betaln
    # log C(n, y) = -log(n + 1) - log B(n - y + 1, y + 1)
    log_comb = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one), lax.add(y, one))))
    beta_terms = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
    log_probs = lax.add(log_comb, beta_terms)
    log_probs = jnp.where(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0.0, log_probs)
    outside = jnp.logical_or(jnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)), lax.le(lax.add(y, a), zero))
    log_probs = jnp.where(outside, -np.inf, log_probs)
    bad = jnp.logical_or(jnp.logical_or(lax.lt(n, zero), lax.le(a, zero)), lax.le(b, zero))
    return jnp.where(bad, np.nan, log_probs)


def pmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Array:
    return jnp.exp(logpmf(k, n, a, b, loc))
