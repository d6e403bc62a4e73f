"""``jax.scipy.cluster.vq``: assign observations to their nearest code."""

from __future__ import annotations

from typing import Any

from minijax import numpy as jnp
from minijax.numpy.util import ArrayLike, check_arraylike, promote_dtypes_inexact
from minijax.vectorization import vmap

__all__ = ["vq"]


def vq(obs: ArrayLike, code_book: ArrayLike, check_finite: bool = True) -> tuple[Any, Any]:
    """For each row of ``obs``, the index of the nearest row of ``code_book`` and its Euclidean distance.

    ``check_finite`` is accepted for SciPy's signature and ignored, as in JAX.
    """
    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs_arr, cb_arr = promote_dtypes_inexact(obs, code_book)
    if obs_arr.ndim != cb_arr.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs_arr.ndim == 1:
        obs_arr, cb_arr = obs_arr[..., None], cb_arr[..., None]
    if obs_arr.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = vmap(lambda ob: jnp.linalg.norm(ob[None] - cb_arr, axis=-1))(obs_arr)
    code = jnp.argmin(dist, axis=-1)
    dist_min = vmap(lambda d, c: d[c])(dist, code)
    return code, dist_min
