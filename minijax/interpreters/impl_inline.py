"""Expanding, before compilation, the primitives a library defined by an impl alone.

A library's own primitive (``jax.extend.core.Primitive`` with ``def_impl``)
computes eagerly through its impl, and in JAX it runs under ``jit`` through
the lowering ``mlir.lower_fun(impl)``. minijax's backends know only minijax's
primitives, so before a backend compiles a jaxpr every equation of such a
primitive (one the backend does not support) is replaced by the equations of
its impl, traced on the equation's input types, in the jaxpr and in the
closed jaxprs of its equations' params (control flow bodies). The jaxpr the
user sees (``make_jaxpr``, transformations) keeps the primitive.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minijax import core
from minijax.backend import Backend
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, eval_jaxpr


def _expands(prim: core.Primitive, backend: Backend) -> bool:
    return prim in core.impl_rules and not backend.supports(prim)


def _needs_expansion(jaxpr: Jaxpr, backend: Backend) -> bool:
    for eqn in jaxpr.eqns:
        if _expands(eqn.primitive, backend):
            return True
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(item, ClosedJaxpr) and _needs_expansion(item.jaxpr, backend):
                    return True
    return False


def _expand_param(value: Any, backend: Backend) -> Any:
    if isinstance(value, ClosedJaxpr):
        return expand_impl_primitives(value, backend)
    if isinstance(value, tuple) and any(isinstance(v, ClosedJaxpr) for v in value):
        return tuple(_expand_param(v, backend) for v in value)
    if isinstance(value, list) and any(isinstance(v, ClosedJaxpr) for v in value):
        return [_expand_param(v, backend) for v in value]
    return value


def expand_impl_primitives(closed: ClosedJaxpr, backend: Backend) -> ClosedJaxpr:
    """``closed`` with the impl-defined primitives ``backend`` lacks replaced by their impls' equations."""
    if not _needs_expansion(closed.jaxpr, backend):
        return closed

    def bind(eqn: JaxprEqn, args: Sequence[Any]) -> Any:
        if _expands(eqn.primitive, backend):
            out = core.impl_rules[eqn.primitive](*args, **eqn.params)
            return list(out) if eqn.primitive.multiple_results else out
        params = {name: _expand_param(value, backend) for name, value in eqn.params.items()}
        return eqn.primitive.bind(*args, **params)

    expanded, _ = trace_to_jaxpr(lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args, bind=bind), closed.in_avals)
    return expanded
