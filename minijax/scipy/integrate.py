"""``jax.scipy.integrate``: the trapezoid rule."""

from __future__ import annotations

from typing import Any

from minijax import lax, numpy as jnp
from minijax.numpy.util import ArrayLike, check_arraylike, promote_dtypes_inexact

__all__ = ["trapezoid"]


def _diff(a: Any, axis: int) -> Any:
    n = a.shape[axis]
    return lax.slice_in_dim(a, 1, n, axis=axis) - lax.slice_in_dim(a, 0, max(n - 1, 0), axis=axis)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoid rule, at sample points ``x`` or spacing ``dx``."""
    spacing: Any
    if x is None:
        check_arraylike("trapezoid", y)
        (y_arr,) = promote_dtypes_inexact(y)
        spacing = jnp.asarray(dx)
        if spacing.ndim > 0:
            spacing = lax.expand_dims(spacing, tuple(range(y_arr.ndim - spacing.ndim)))
            spacing = jnp.moveaxis(spacing, axis, -1)
    else:
        check_arraylike("trapezoid", y, x)
        y_arr, x_arr = promote_dtypes_inexact(y, x)
        spacing = _diff(x_arr, 0) if x_arr.ndim == 1 else jnp.moveaxis(_diff(x_arr, axis), axis, -1)
    y_arr = jnp.moveaxis(y_arr, axis, -1)
    if spacing.ndim == 0 or spacing.shape[-1] == 1:
        # Uniform spacing: every interior sample counts once, the two ends half
        # (the same sums as JAX's, so the same float32 rounding).
        h = spacing if spacing.ndim == 0 else spacing[..., 0]
        return h * (y_arr.sum(-1) - 0.5 * (y_arr[..., 0] + y_arr[..., -1]))
    return 0.5 * (spacing * (y_arr[..., 1:] + y_arr[..., :-1])).sum(-1)
