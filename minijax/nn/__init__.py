"""``jax.nn``: neural-network functions. So far ``sigmoid``; the rest of the
module is issue 7's (breadth)."""

from __future__ import annotations

from minijax import lax
from minijax.array import Array
from minijax.typing import ArrayLike


def sigmoid(x: ArrayLike) -> Array:
    """The logistic sigmoid ``1 / (1 + exp(-x))``: JAX binds ``logistic`` directly."""
    out: Array = lax.logistic(x)
    return out


__all__ = ["sigmoid"]
