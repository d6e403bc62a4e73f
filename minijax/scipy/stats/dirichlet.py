# mypy: disable-error-code="operator,union-attr,no-any-return"
# (the promoted arguments keep their ArrayLike annotations; each is an Array after promote_args_inexact)
"""``jax.scipy.stats.dirichlet``: densities on the simplex; ``x``'s first axis holds the components."""

from __future__ import annotations

from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy.util import promote_dtypes_inexact
from minijax.scipy.special import gammaln, xlogy
from minijax.scipy.stats._util import lax_const
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
    x, alpha = promote_dtypes_inexact(x, alpha)
    x, alpha = jnp.asarray(x), jnp.asarray(alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry fewer; "
            f"got x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    one = lax_const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, lax.sub(one, x.sum(0, keepdims=True))], axis=0)
    normalize_term = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = lax.sub(jnp.sum(xlogy(lax.sub(alpha, one), x), axis=0), normalize_term)
    return jnp.where(_is_simplex(x), log_probs, -np.inf)


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    out: Array = lax.exp(logpdf(x, alpha))
    return out
