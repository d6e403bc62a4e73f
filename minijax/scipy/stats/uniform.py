"""``jax.scipy.stats.uniform``: the uniform distribution on ``[loc, loc + scale]``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.array import Array
from minijax.numpy.util import promote_args_inexact
from minijax.scipy.stats._core import outside_unit_interval
from minijax.typing import ArrayLike

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``-log(scale)`` inside the interval, ``-inf`` outside."""
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    return jnp.where(outside, -np.inf, lax.neg(lax.log(scale)))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``(x - loc) / scale`` clipped to ``[0, 1]``; nan where no case holds (nan input)."""
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    # JAX's zero and one are typed arrays here: the result is never weak.
    zero, one = jnp.array(0, dtypes.dtype(x)), jnp.array(1, dtypes.dtype(x))
    upper = lax.add(loc, scale)
    conds = [lax.lt(x, loc), lax.gt(x, upper), lax.ge(x, loc) & lax.le(x, upper)]
    return jnp.select(conds, [zero, one, lax.div(lax.sub(x, loc), scale)])


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``loc + scale q``; nan for ``q`` outside ``[0, 1]``."""
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return jnp.where(outside_unit_interval(q), np.nan, lax.add(loc, lax.mul(scale, q)))
