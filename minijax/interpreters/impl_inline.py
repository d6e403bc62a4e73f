"""Expanding, before compilation, the primitives a library lowers by a function (``mlir.lower_fun``).

A library's own primitive (``jax.extend.core.Primitive``) computes eagerly
through its impl, and in JAX it runs under ``jit`` through the lowering rule
it registers, usually ``mlir.register_lowering(prim, mlir.lower_fun(impl))``:
"lower it as this function of other operations". minijax's backends know only
minijax's primitives, so such a registration (``register_lowering_fun``, what
``jax.interpreters.mlir.register_lowering`` does under ``minijax.compat``) is
kept here, and before a backend compiles a jaxpr every equation of such a
primitive (one the backend does not support) is replaced by the equations of
that function, traced on the equation's input types, in the jaxpr and in the
closed jaxprs of its equations' params (control flow bodies). The jaxpr the
user sees (``make_jaxpr``, transformations) keeps the primitive. A primitive
with no lowering still fails to compile, naming it, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from minijax import core
from minijax.backend import Backend
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, eval_jaxpr

# prim -> the function of other operations it is lowered as (``fun(*args, **params)``).
lowering_funs: dict[core.Primitive, Callable[..., Any]] = {}


def register_lowering_fun(prim: core.Primitive, fun: Callable[..., Any]) -> None:
    """Lower ``prim`` as ``fun`` (called with the equation's operands and params) on every backend."""
    lowering_funs[prim] = fun


def _expands(prim: core.Primitive, backend: Backend) -> bool:
    return prim in lowering_funs and not backend.supports(prim)


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
    """``closed`` with the primitives ``backend`` lacks that have a lowering function replaced by its equations."""
    if not _needs_expansion(closed.jaxpr, backend):
        return closed

    def bind(eqn: JaxprEqn, args: Sequence[Any]) -> Any:
        if _expands(eqn.primitive, backend):
            out = lowering_funs[eqn.primitive](*args, **eqn.params)
            return list(out) if eqn.primitive.multiple_results else out
        params = {name: _expand_param(value, backend) for name, value in eqn.params.items()}
        return eqn.primitive.bind(*args, **params)

    expanded, _ = trace_to_jaxpr(lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args, bind=bind), closed.in_avals)
    return expanded
