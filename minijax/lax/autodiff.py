"""lax functions about differentiation and what the compiler may do: ``stop_gradient``,
``optimization_barrier``."""

from __future__ import annotations

from typing import Any

from minijax import tree_util
from minijax.core import is_array_like
from minijax.primitives.autodiff import optimization_barrier_p, stop_gradient_p


def stop_gradient(x: Any) -> Any:
    """The identity on a pytree of arrays, with a zero derivative."""
    return tree_util.tree_map(stop_gradient_p.bind, x)


def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (a pytree of arrays) unchanged, as one barrier the compiler may not move
    work across: no fusion through it, no common-subexpression elimination of what it
    separates (checkpointing relies on that), and each output it gives is computed before
    anything that reads it. Outside ``jit`` it does nothing."""
    leaves, tree = tree_util.tree_flatten(operand)
    for i, leaf in enumerate(leaves):
        if not is_array_like(leaf):
            raise TypeError(
                "Error interpreting argument to optimization_barrier as a JAX value. The problematic value is "
                f"of type {type(leaf)} and was passed to optimization_barrier at position {i}."
            )
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


__all__ = ["optimization_barrier", "optimization_barrier_p", "stop_gradient", "stop_gradient_p"]
