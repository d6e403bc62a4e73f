"""``jax.interpreters.mlir``: lowering to StableHLO. minijax's backends lower its own primitives only.

A library's ``register_lowering(prim, rule)`` is accepted and kept, and
``lower_fun(f)`` returns a marker: a primitive whose rule is ``lower_fun(f)``
(as Equinox registers ``lower_fun(impl)``) runs under ``jit``, because before
a backend compiles a program minijax expands it into ``f``'s operations
(``minijax.interpreters.impl_inline``). Any other rule is kept but not used
(the primitive then fails to compile, naming it). Other MLIR-level names
raise when used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minijax.compat._served.standin import stand_in_function
from minijax.interpreters.impl_inline import register_lowering_fun

_WHY = "minijax's backends lower only minijax's primitives"
# (primitive, platform) -> the rule a library registered.
registered_lowerings: dict[tuple[Any, str | None], Any] = {}


def register_lowering(prim: Any, rule: Any, platform: str | None = None, **kwargs: Any) -> Any:
    """Record ``rule`` as ``prim``'s lowering; a ``lower_fun(f)`` rule makes minijax lower ``prim`` as ``f``."""
    registered_lowerings[(prim, platform)] = rule
    fun = getattr(rule, "lowered_fun", None)
    if fun is not None and platform in (None, "cpu"):
        register_lowering_fun(prim, fun)
    return rule


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> Callable[..., Any]:
    """The lowering rule "lower ``fun``": kept as a marker; minijax runs the primitive's impl."""

    def rule(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"jax.interpreters.mlir.lower_fun: {_WHY}")

    rule.lowered_fun = fun  # type: ignore[attr-defined]
    return rule


ir_constant = stand_in_function("jax.interpreters.mlir.ir_constant", _WHY)
aval_to_ir_type = stand_in_function("jax.interpreters.mlir.aval_to_ir_type", _WHY)
LoweringRuleContext = stand_in_function("jax.interpreters.mlir.LoweringRuleContext", _WHY)
