"""Public testing utilities: derivative checks, hypothesis strategies, per-primitive samplers.

* ``check_grads`` / ``check_jvp`` / ``check_vjp`` (``minijax.testing.gradients``):
  JAX's ``jax.test_util`` checks of derivatives against finite differences.
* ``minijax.testing.strategies``: hypothesis strategies for dtypes, shapes and
  arrays with edge values.
* ``minijax.testing.samplers``: for every primitive, a hypothesis strategy of
  valid (operands, params) inside its differentiable domain, with the
  operands it is differentiable and linear in.

The last two need ``hypothesis`` (installed with the ``dev`` extra); they are
imported on first use, so ``check_grads`` works without it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from minijax.testing.gradients import (
    DEFAULT_EPS as DEFAULT_EPS,
    GRADIENT_TOLERANCE as GRADIENT_TOLERANCE,
    check_grads as check_grads,
    check_jvp as check_jvp,
    check_vjp as check_vjp,
    default_eps as default_eps,
    numerical_jvp as numerical_jvp,
)

_LAZY_SUBMODULES = ("strategies", "samplers")


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"minijax.testing.{name}")
    raise AttributeError(f"module 'minijax.testing' has no attribute {name!r}")


__all__ = [
    "DEFAULT_EPS",
    "GRADIENT_TOLERANCE",
    "check_grads",
    "check_jvp",
    "check_vjp",
    "default_eps",
    "numerical_jvp",
    "samplers",
    "strategies",
]
