"""``jax.scipy.stats.multivariate_normal``: the Gaussian density in ``n`` dimensions (last axis)."""

from __future__ import annotations

import math
from functools import partial

import minijax.numpy as jnp
from minijax.array import Array
from minijax.lax import linalg as lax_linalg
from minijax.numpy.util import promote_dtypes_inexact
from minijax.typing import ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike, allow_singular: None = None) -> Array:
    """``log N(x; mean, cov)``; ``cov`` may be a scalar (``cov * I``) or a batch of ``(n, n)`` matrices.

    A 0-d ``mean`` makes it the one-dimensional density of each element.
    """
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    # The promoted values may be host constants (a Python float has no shape): make them arrays.
    x, mean, cov = (jnp.asarray(v) for v in promote_dtypes_inexact(x, mean, cov))
    # A Python float: weakly typed, so float32 inputs give float32 under x64 too (as JAX's jnp.log(2 * pi)).
    log_two_pi = math.log(2 * math.pi)
    # (the squared distances are named to type them: jnp.square and jnp.einsum are untyped)
    squares: Array
    if not mean.shape:
        squares = jnp.square(x - mean)
        return -1 / 2 * squares / cov - 1 / 2 * (log_two_pi + jnp.log(cov))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        squares = jnp.einsum("...i,...i->...", y, y)
        return -1 / 2 * squares / cov - n / 2 * (log_two_pi + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax_linalg.cholesky(cov)
    # Whiten: solve L y = x - mean for every pair of a factor and a point, batch axes broadcast.
    whiten = jnp.vectorize(partial(lax_linalg.triangular_solve, lower=True, transpose_a=True),
                           signature="(n,n),(n)->(n)")
    y = whiten(chol, x - mean)
    squares = jnp.einsum("...i,...i->...", y, y)
    log_det_half = jnp.log(chol.diagonal(axis1=-1, axis2=-2)).sum(-1)
    return -1 / 2 * squares - n / 2 * log_two_pi - log_det_half


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Array:
    return jnp.exp(logpdf(x, mean, cov))
