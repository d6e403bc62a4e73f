"""``jax.scipy.stats.poisson``: the Poisson distribution of mean ``mu``."""

from __future__ import annotations

from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import check_arraylike, promote_args_inexact, promote_dtypes_inexact
from minijax.scipy import special
from minijax.scipy.special import entr, gammaln, xlogy
from minijax.stages import jit
from minijax.typing import ArrayLike

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """``x log mu - lgamma(x + 1) - mu`` with ``x = k - loc``; ``-inf`` for negative or non-integer ``k``."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where(jnp.logical_or(lax.lt(x, lax_const(k, 0)), lax.ne(jnp.round(k), k)), -np.inf, log_probs)


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """``gammaincc(floor(x) + 1, mu)``: ``P(K <= k)``; 0 below ``loc``."""
    # JAX checks the arguments under the name "poisson.logpmf" here too.
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = lax_const(k, 0)
    x = lax.sub(k, loc)
    p = special.gammaincc(jnp.floor(1 + x), mu)
    return jnp.where(lax.lt(x, zero), zero, p)


def _entropy_by_sum(mu: Any, max_k: int, upper: Any) -> Any:
    # -sum p log p over k < upper (at most max_k terms), the terms beyond being negligible.
    k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    mask = k < jnp.ceil(upper).astype(k.dtype)[None, :]
    return jnp.sum(entr(jnp.where(mask, probs, 0.0)), axis=0)


@jit
def entropy(mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """The distribution's entropy in nats (``loc`` only shapes the result).

    Summed term by term for ``mu < 100``, by the normal approximation
    ``log(2 pi e mu) / 2 - 1 / (12 mu)`` above; 0 at ``mu = 0``.
    """
    check_arraylike("poisson.entropy", mu, loc)
    mu_p, loc_p = (jnp.asarray(v) for v in promote_dtypes_inexact(mu, loc))
    result_shape = jnp.broadcast_shapes(mu_p.shape, loc_p.shape)
    flat = jnp.ravel(mu_p)
    small = _entropy_by_sum(flat, 35, flat + 20)
    medium = _entropy_by_sum(flat, 250, flat + 10 * jnp.sqrt(flat) + 20)
    large = 0.5 * jnp.log(2 * np.pi * np.e * flat) - 1.0 / (12 * flat)
    result = jnp.where(flat == 0, jnp.zeros_like(flat), jnp.where(flat < 10, small, jnp.where(flat < 100, medium, large)))
    out: Array = jnp.broadcast_to(jnp.reshape(result, mu_p.shape), result_shape)
    return out
