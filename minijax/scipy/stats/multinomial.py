"""``jax.scipy.stats.multinomial``: counts ``x`` (last axis) of ``n`` draws with category probabilities ``p``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import dtypes
from minijax.array import Array
from minijax.numpy.util import promote_args_inexact, promote_args_numeric
from minijax.scipy.special import gammaln, xlogy
from minijax.typing import ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    """``log(n! prod(p**x / x!))`` over the last axis; ``-inf`` unless the counts sum to ``n``."""
    (p,) = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={dtypes.dtype(x)}, n.dtype={dtypes.dtype(n)}")
    # p may be a host constant (a Python float has no .dtype): ask dtypes for its dtype.
    x = jnp.asarray(x).astype(dtypes.dtype(p))
    n = jnp.asarray(n).astype(dtypes.dtype(p))
    logprobs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    # JAX compares the sum over every count (all axes) with n, not per row.
    return jnp.where(jnp.equal(jnp.sum(x), n), logprobs, -np.inf)


def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    return jnp.exp(logpmf(x, n, p))
