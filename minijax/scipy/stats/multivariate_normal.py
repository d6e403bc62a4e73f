# mypy: disable-error-code="operator,union-attr,no-any-return"
# (the promoted arguments keep their ArrayLike annotations; each is an Array after promote_args_inexact)
"""``jax.scipy.stats.multivariate_normal``: the Gaussian density in ``n`` dimensions (last axis)."""

from __future__ import annotations

import numpy as np

import minijax.numpy as jnp
from minijax import lax
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
    x, mean, cov = (jnp.asarray(v) for v in promote_dtypes_inexact(x, mean, cov))
    log_two_pi = np.log(2 * np.pi)
    if not mean.shape:
        return -1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (log_two_pi + jnp.log(cov))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return -1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov - n / 2 * (log_two_pi + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax_linalg.cholesky(cov)
    diff = x - mean
    # Whiten: solve L y = x - mean for every pair of a factor and a point, batch axes broadcast.
    batch = np.broadcast_shapes(chol.shape[:-2], diff.shape[:-1])
    y = lax_linalg.triangular_solve(jnp.broadcast_to(chol, (*batch, n, n)), jnp.broadcast_to(diff, (*batch, n)),
                                    lower=True, transpose_a=True)
    log_det_half = jnp.log(chol.diagonal(axis1=-1, axis2=-2)).sum(-1)
    return -1 / 2 * jnp.einsum("...i,...i->...", y, y) - n / 2 * log_two_pi - log_det_half


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Array:
    out: Array = lax.exp(logpdf(x, mean, cov))
    return out
