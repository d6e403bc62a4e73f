"""Staging Python functions into jaxprs (what ``make_jaxpr`` and ``jit`` use).

A ``JaxprTrace`` records every primitive bound on its tracers as an equation.
Values that are not its own tracers become constants of the jaxpr: scalars
are written inline as literals, anything else becomes a constvar (closing over
a tracer of an enclosing transform makes that tracer a constant here too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import tree_util
from minijax.core import (
    ShapedArray,
    Trace,
    Tracer,
    get_aval,
    is_array_like as core_is_array_like,
    raise_leaked_tracer,
    set_current_trace,
)
from minijax.jaxpr import Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, literal_value


class JaxprTracer(Tracer):
    __slots__ = ("_aval", "var")

    def __init__(self, trace: JaxprTrace, aval: ShapedArray, var: Var) -> None:
        self._trace = trace
        self._aval = aval
        self.var = var

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def _origin_msg(self) -> str:
        trace = self._trace
        assert isinstance(trace, JaxprTrace)
        return trace.describe_origin(self.var)


class JaxprTrace(Trace):
    transform_name = "jit"

    def __init__(self, debug_info: DebugInfo | None = None) -> None:
        self.eqns: list[JaxprEqn] = []
        self.invars: list[Var] = []
        self.constvars: dict[int, tuple[Var, Any]] = {}
        self.debug_info = debug_info

    def new_arg(self, aval: ShapedArray) -> JaxprTracer:
        var = Var(aval)
        self.invars.append(var)
        return JaxprTracer(self, aval, var)

    def to_atom(self, x: Any) -> Atom:
        if isinstance(x, JaxprTracer) and x._trace is self:
            return x.var
        if isinstance(x, Tracer) and not x._trace.is_alive:
            raise_leaked_tracer(x)
        aval = get_aval(x)
        if not aval.shape and not isinstance(x, Tracer):
            return Literal(literal_value(_host_value(x), aval), aval)
        entry = self.constvars.get(id(x))
        if entry is None:
            entry = self.constvars[id(x)] = (Var(aval), x)
        return entry[0]

    def process_primitive(self, prim: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
        atoms = [self.to_atom(x) for x in args]
        out = prim.abstract_eval_cached([a.aval for a in atoms], params)
        out_avals = out if prim.multiple_results else [out]
        outvars = [Var(a) for a in out_avals]
        self.eqns.append(JaxprEqn(atoms, outvars, prim, params))
        tracers = [JaxprTracer(self, a, v) for a, v in zip(out_avals, outvars)]
        return tracers if prim.multiple_results else tracers[0]

    def describe_origin(self, var: Var) -> str:
        info = self.debug_info
        if info is None or var not in self.invars:
            return "It is an intermediate value computed from the function's arguments."
        i = self.invars.index(var)
        name = info.arg_names[i] if i < len(info.arg_names) else f"argument {i}"
        return (
            f"The error occurred while tracing the function {info.func_name} for "
            f"{info.traced_for}. This concrete value was not available in Python "
            f"because it depends on the value of the argument {name}."
        )

    def to_jaxpr(self, out_tracers: Sequence[Any]) -> ClosedJaxpr:
        outvars = [self.to_atom(x) for x in out_tracers]
        consts = list(self.constvars.values())
        jaxpr = Jaxpr([v for v, _ in consts], self.invars, outvars, self.eqns)
        _mark_unused_outputs(jaxpr)
        return ClosedJaxpr(jaxpr, [c for _, c in consts])


def _host_value(x: Any) -> Any:
    value = getattr(x, "_value", None)
    return x if value is None else value


def _mark_unused_outputs(jaxpr: Jaxpr) -> None:
    """Replace equation outputs nothing reads with DropVar (printed ``_``), as JAX does."""
    used: set[Var] = {v for v in jaxpr.outvars if isinstance(v, Var)}
    for eqn in jaxpr.eqns:
        used.update(v for v in eqn.invars if isinstance(v, Var))
    for eqn in jaxpr.eqns:
        if eqn.primitive.multiple_results and any(v not in used for v in eqn.outvars):
            eqn.outvars = [v if v in used else DropVar(v.aval) for v in eqn.outvars]


class DebugInfo:
    """What a trace was for, to explain errors: function name and argument names."""

    __slots__ = ("func_name", "arg_names", "traced_for")

    def __init__(self, func_name: str, arg_names: Sequence[str], traced_for: str) -> None:
        self.func_name = func_name
        self.arg_names = list(arg_names)
        self.traced_for = traced_for


def fun_name(f: Any) -> str:
    return str(getattr(f, "__name__", type(f).__name__))


def arg_names_of(f: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> list[str]:
    """Names for the flattened arguments, like ``x`` or ``params['w']``."""
    import inspect

    try:
        sig = inspect.signature(f)
        bound = sig.bind(*args, **kwargs)
        named: list[tuple[str, Any]] = list(bound.arguments.items())
    except (TypeError, ValueError):
        named = [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
    names: list[str] = []
    for name, value in named:
        for path, _ in tree_util.tree_flatten_with_path(value)[0]:
            names.append(name + tree_util.keystr(path))
    return names


def trace_to_jaxpr(
    fun: Callable[..., Any],
    in_avals: Sequence[ShapedArray],
    debug_info: DebugInfo | None = None,
) -> tuple[ClosedJaxpr, list[Any]]:
    """Trace ``fun`` (taking and returning flat lists) on abstract inputs.

    Returns the closed jaxpr and the raw outputs (for their pytree structure the
    caller flattens before calling).
    """
    trace = JaxprTrace(debug_info)
    tracers = [trace.new_arg(a) for a in in_avals]
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        closed = trace.to_jaxpr(outs)
    finally:
        trace.invalidate()
    return closed, outs


def abstractify(x: Any) -> ShapedArray:
    """The aval a traced argument gets: Python scalars are weakly typed."""
    if not core_is_array_like(x):
        raise TypeError(
            f"Argument '{x}' of type {type(x)} is not a valid JAX type. Pass arrays "
            "(or pytrees of arrays), or mark the argument static with "
            "static_argnums / static_argnames."
        )
    return get_aval(x)


def is_scalar_literal(x: Any) -> bool:
    return np.ndim(x) == 0
