"""Public testing utilities: derivative checks, hypothesis strategies, samplers, and the conformance suite.

* ``check_grads`` / ``check_jvp`` / ``check_vjp`` (``minijax.testing.gradients``):
  JAX's ``jax.test_util`` checks of derivatives against finite differences.
* ``minijax.testing.strategies``: hypothesis strategies for dtypes, shapes and
  arrays with edge values.
* ``minijax.testing.samplers``: for every primitive, a hypothesis strategy of
  valid (operands, params) inside its differentiable domain, with the
  operands it is differentiable and linear in.
* ``minijax.testing.tolerances``: the tolerance policy (``spec/tolerances.md``):
  when a backend's results agree with the reference's.
* ``minijax.testing.programs``: ``random_jaxprs`` and ``nested_programs``
  (hypothesis strategies of random programs) and ``assert_backends_agree``.
* ``minijax.testing.conformance``: the suite behind ``minijax conformance``
  (``docs/conformance.md``), also a pytest entry point; ``checks`` (one check
  and its reproducer), ``runner`` (``run_check`` and ``replay``: running one),
  ``laws``, ``corpus`` (``spec/cases/``), ``report``.

Everything but ``gradients`` and ``tolerances`` needs ``hypothesis``
(installed with the ``dev`` extra); those modules and names are imported on
first use, so ``check_grads`` works without it.
"""

from __future__ import annotations

import importlib
from typing import Any

from minijax.testing.gradients import (
    DEFAULT_EPS as DEFAULT_EPS,
    GRADIENT_TOLERANCE as GRADIENT_TOLERANCE,
    check_grads as check_grads,
    check_jvp as check_jvp,
    check_vjp as check_vjp,
    default_eps as default_eps,
    numerical_jvp as numerical_jvp,
)

_LAZY_SUBMODULES = (
    "strategies", "samplers", "tolerances", "programs", "conformance", "checks", "runner", "laws", "corpus", "report", "suite",
)  # fmt: skip
# Public names that live in a submodule needing hypothesis: imported when first asked for.
_LAZY_NAMES = {
    "assert_backends_agree": "programs",
    "random_jaxprs": "programs",
    "nested_programs": "programs",
    "RandomProgram": "programs",
    "NestedProgram": "programs",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"minijax.testing.{name}")
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f"minijax.testing.{_LAZY_NAMES[name]}"), name)
    raise AttributeError(f"module 'minijax.testing' has no attribute {name!r}")


__all__ = [
    "DEFAULT_EPS",
    "GRADIENT_TOLERANCE",
    "NestedProgram",
    "RandomProgram",
    "assert_backends_agree",
    "check_grads",
    "check_jvp",
    "check_vjp",
    "checks",
    "conformance",
    "corpus",
    "default_eps",
    "laws",
    "nested_programs",
    "numerical_jvp",
    "programs",
    "random_jaxprs",
    "report",
    "samplers",
    "strategies",
    "suite",
    "tolerances",
]
