"""``jax.scipy.stats.vonmises``: the von Mises (circular normal) distribution of concentration ``kappa``."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_args_inexact
from minijax.typing import ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """``kappa (cos x - 1) - log(2 pi i0e(kappa))``; nan for ``kappa <= 0``.

    The exponentially scaled Bessel function keeps large ``kappa`` from overflowing.
    """
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return jnp.where(lax.gt(kappa, lax_const(kappa, 0)), value, np.nan)


def pdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    return jnp.exp(logpdf(x, kappa))
