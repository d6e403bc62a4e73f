"""lax functions about differentiation: ``stop_gradient``."""

from __future__ import annotations

from typing import Any

from minijax import tree_util
from minijax.primitives.autodiff import stop_gradient_p


def stop_gradient(x: Any) -> Any:
    """The identity on a pytree of arrays, with a zero derivative."""
    return tree_util.tree_map(stop_gradient_p.bind, x)


__all__ = ["stop_gradient", "stop_gradient_p"]
