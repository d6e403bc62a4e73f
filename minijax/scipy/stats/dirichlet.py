"""``jax.scipy.stats.dirichlet``: densities on the simplex; ``x``'s first axis holds the components."""

from __future__ import annotations

from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.ufuncs import lax_const
from minijax.numpy.util import promote_dtypes_inexact
from minijax.scipy.special import gammaln, xlogy
from minijax.typing import ArrayLike

__all__ = ["logpdf", "pdf"]


def _is_simplex(x: Any) -> Any:
    # The same tolerance as JAX: components must sum to 1 within 1e-6, all positive.
    x_sum = jnp.sum(x, axis=0)
    return jnp.all(x > 0, axis=0) & (abs(x_sum - 1) < 1e-6)


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """``sum((alpha - 1) log x) - log B(alpha)``; ``x`` may omit its last component (then ``1 - sum``).

    ``-inf`` off the simplex.
    """
    # The promoted values may be host constants (a Python float has no shape): make them arrays.
    x_arr, alpha_arr = (jnp.asarray(v) for v in promote_dtypes_inexact(x, alpha))
    if alpha_arr.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha_arr.shape}")
    if x_arr.shape[0] not in (alpha_arr.shape[0], alpha_arr.shape[0] - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry fewer; "
            f"got x.shape={x_arr.shape}, alpha.shape={alpha_arr.shape}"
        )
    one = lax_const(x_arr, 1)
    if x_arr.shape[0] != alpha_arr.shape[0]:
        x_arr = jnp.concatenate([x_arr, lax.sub(one, x_arr.sum(0, keepdims=True))], axis=0)
    normalize_term = jnp.sum(gammaln(alpha_arr)) - gammaln(jnp.sum(alpha_arr))
    if x_arr.ndim > 1:
        alpha_arr = lax.broadcast_in_dim(alpha_arr, alpha_arr.shape + (1,) * (x_arr.ndim - 1), (0,))
    log_probs = lax.sub(jnp.sum(xlogy(lax.sub(alpha_arr, one), x_arr), axis=0), normalize_term)
    return jnp.where(_is_simplex(x_arr), log_probs, -np.inf)


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    return jnp.exp(logpdf(x, alpha))
