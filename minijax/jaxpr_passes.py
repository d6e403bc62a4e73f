"""Passes over jaxprs that the transformation rules share, written once.

- ``dce_jaxpr``: dead-code elimination. An equation stays when one of its
  outputs is used or when it has effects (``has_effects``: its primitive is
  effectful, or an equation of a jaxpr it holds is). A primitive that holds
  jaxprs may prune them (``dce_rules``: cond keeps only the outputs used, in
  every branch); others are kept or dropped whole.
- ``typematch``: two avals are the same type up to weak typing.
- ``consts_as_inputs``: a closed jaxpr's constants as leading inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, subjaxprs

__all__ = [
    "consts_as_inputs",
    "dce_closed_jaxpr",
    "dce_jaxpr",
    "dce_rules",
    "effectful_primitives",
    "has_effects",
    "typematch",
]

# Primitives whose equations must stay even when their outputs are unused
# (callbacks, debug printing): filled by their modules.
effectful_primitives: set[Primitive] = set()

# prim -> rule(eqn, used_outputs) -> the equation computing just those outputs
# (and its effects), or None when nothing of it is needed.
DceRule = Callable[[JaxprEqn, list[bool]], JaxprEqn | None]
dce_rules: dict[Primitive, DceRule] = {}


def has_effects(eqn: JaxprEqn) -> bool:
    """Whether ``eqn`` has effects: its primitive's own, or those of any equation
    in a jaxpr it holds (a ``debug.print`` inside a jit inside a loop)."""
    if eqn.primitive in effectful_primitives:
        return True
    return any(has_effects(e) for sub in subjaxprs(eqn.params) for e in sub.eqns)


def _dce_eqn(eqn: JaxprEqn, used_outputs: list[bool]) -> JaxprEqn | None:
    rule = dce_rules.get(eqn.primitive)
    if rule is not None:
        return rule(eqn, used_outputs)
    return eqn if any(used_outputs) or has_effects(eqn) else None


def dce_jaxpr(
    jaxpr: Jaxpr, used_outputs: Sequence[bool], keep_inputs: bool | Sequence[bool] = True
) -> tuple[Jaxpr, list[bool]]:
    """``jaxpr`` computing only its used outputs; and which of its inputs it still reads.

    The equations nothing needs are dropped (see the module docstring).
    The constvars all stay; an input stays when it is read or ``keep_inputs``
    says so (``True``: every input stays, as a binder).
    """
    live = {v for v, used in zip(jaxpr.outvars, used_outputs) if used and isinstance(v, Var)}
    kept: list[JaxprEqn] = []
    for eqn in reversed(jaxpr.eqns):
        new = _dce_eqn(eqn, [v in live for v in eqn.outvars])
        if new is not None:
            kept.append(new)
            live.update(a for a in new.invars if isinstance(a, Var))
    keep = [keep_inputs] * len(jaxpr.invars) if isinstance(keep_inputs, bool) else list(keep_inputs)
    used_inputs = [v in live for v in jaxpr.invars]
    invars = [v for v, used, k in zip(jaxpr.invars, used_inputs, keep) if used or k]
    outvars = [v for v, used in zip(jaxpr.outvars, used_outputs) if used]
    return Jaxpr(jaxpr.constvars, invars, outvars, kept[::-1]), used_inputs


def dce_closed_jaxpr(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` without dead code and the constants only it read (every input and output kept)."""
    jaxpr, _ = dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
    live = {a for e in jaxpr.eqns for a in e.invars if isinstance(a, Var)}
    live.update(v for v in jaxpr.outvars if isinstance(v, Var))
    used = [v in live for v in jaxpr.constvars]
    return ClosedJaxpr(
        Jaxpr([v for v, u in zip(jaxpr.constvars, used) if u], jaxpr.invars, jaxpr.outvars, jaxpr.eqns),
        [c for c, u in zip(closed.consts, used) if u],
    )


def typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Same type up to weak typing (JAX's ``typematch``)."""
    return a.shape == b.shape and a.dtype == b.dtype


def consts_as_inputs(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """The same function with its constants turned into leading inputs, and those constants."""
    jaxpr = closed.jaxpr
    moved = Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)
    return ClosedJaxpr(moved, []), list(closed.consts)
