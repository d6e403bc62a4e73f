"""``jax.scipy.stats.truncnorm``: the standard-normal shape truncated to ``[a, b]`` (in standard units).

Probabilities of the interval are kept in log space (``log_ndtr``), taking
the tail that does not cancel, so that far-out intervals keep their digits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.util import promote_args_inexact
from minijax.scipy import special
from minijax.scipy.stats import norm
from minijax.stages import jit
from minijax.typing import ArrayLike

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(x: Any, y: Any) -> Any:
    # log(exp(x) - exp(y)) for x >= y.
    return special.logsumexp(jnp.array([x, y]), b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]), axis=0)


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """``log(ndtr(b) - ndtr(a))``."""
    a, b = jnp.broadcast_arrays(jnp.array(a), jnp.array(b))
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    # Right of 0 the mirrored interval [-b, -a] has the same mass and its log_ndtr values do not round to 0.
    a_tail = jnp.where(case_right, -b, a)
    b_tail = jnp.where(case_right, -a, b)
    mass_tail = _log_diff(special.log_ndtr(b_tail), special.log_ndtr(a_tail))
    mass_central = jnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return jnp.where(case_central, mass_central, mass_tail)


@jit
def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``norm.logpdf`` minus the log mass of ``[a, b]``; ``-inf`` outside, nan for ``a >= b``."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    z = lax.div(lax.sub(x, loc), scale)
    val = jnp.where((z < a) | (z > b), -np.inf, val)
    return jnp.where(a >= b, np.nan, val)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logpdf(x, a, b, loc, scale))


@jit
def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``log`` of the mass of ``[a, z]`` over that of ``[a, b]``; from the upper tail when close to 1."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    z = lax.div(lax.sub(x, loc), scale)
    log_mass = _log_gauss_mass(a, b)
    log_lower = _log_gauss_mass(a, z) - log_mass
    log_upper = _log_gauss_mass(z, b) - log_mass
    out = jnp.select([z >= b, z <= a, log_lower > -0.1, z > a],
                     [0, -np.inf, jnp.log1p(-jnp.exp(log_upper)), log_lower])
    return jnp.where(a >= b, np.nan, out)


@jit
def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logcdf(x, a, b, loc, scale))


@jit
def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """``logcdf`` of the mirrored distribution."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    out: Array = logcdf(-x, -b, -a, -loc, scale)  # logcdf is jitted: its result type is not tracked
    return out


@jit
def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return jnp.exp(logsf(x, a, b, loc, scale))
