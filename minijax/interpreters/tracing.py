"""Staging Python functions into jaxprs (what ``make_jaxpr`` and ``jit`` use).

A ``JaxprTrace`` records every primitive bound on its tracers as an equation.
Values that are not its own tracers become constants of the jaxpr: scalars
are written inline as literals, anything else becomes a constvar (closing over
a tracer of an enclosing transform makes that tracer a constant here too).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import config, dtypes, source_info, tree_util
from minijax.core import (
    ShapedArray,
    Trace,
    Tracer,
    eval_trace,
    get_aval,
    is_array_like as core_is_array_like,
    raise_leaked_tracer,
    set_current_trace,
    sharding_in_types,
)
from minijax.debug_checks import check_for_leaks, leak_checks_enabled
from minijax.jaxpr import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, literal_value
from minijax.jaxpr_check import check_jaxpr


class DynamicJaxprTracer(Tracer):
    __slots__ = ("_aval", "var")

    def __init__(self, trace: DynamicJaxprTrace, aval: ShapedArray, var: Atom) -> None:
        # ``var`` is a Literal when the value was folded at trace time (see _CONST_FOLDING).
        self._trace = trace
        self._aval = aval
        self.var = var

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def _origin_msg(self) -> str:
        trace = self._trace
        return trace.describe_origin(self.var) if isinstance(trace, DynamicJaxprTrace) and isinstance(self.var, Var) else ""


class DynamicJaxprTrace(Trace):
    transform_name = "jit"
    tracer_kind = "JitTracer"

    def __init__(self, debug_info: DebugInfo | None = None) -> None:
        self.eqns: list[JaxprEqn] = []
        self.invars: list[Var] = []
        # id -> (var, value, origin). An Array converted from a host array in
        # this trace is an alias of the host array's entry (host_constant).
        self.constvars: dict[int, tuple[Var, Any, Any]] = {}
        # id(host array) -> (host array, the Array made from it in this trace).
        self._host_arrays: dict[int, tuple[Any, Any]] = {}
        self.debug_info = debug_info

    def describe(self) -> str:
        info = self.debug_info
        return "jit" if info is None else f"{info.traced_for} of {info.func_src}"

    def new_arg(self, aval: ShapedArray) -> DynamicJaxprTracer:
        var = Var(aval)
        self.invars.append(var)
        return DynamicJaxprTracer(self, aval, var)

    def host_constant(self, x: np.ndarray[Any, Any], convert: Callable[[Any], Any]) -> Any:
        """The Array a jnp function makes of the host array ``x`` while tracing: one per
        ``x`` in this trace (``convert(x)`` the first time), so that every function that
        converts it, and every raw use of it, reads one constvar. JAX keys a
        constant by the identity of what the traced function closed over."""
        entry = self._host_arrays.get(id(x))
        if entry is None:
            entry = self._host_arrays[id(x)] = (x, convert(x))  # keeps `x` alive: its id stays its own
            raw = self.constvars.get(id(x))
            if raw is not None:  # `x` was already read raw: the Array reads the same constvar
                self.constvars[id(entry[1])] = raw
        return entry[1]

    def to_atom(self, x: Any) -> Atom:
        if isinstance(x, DynamicJaxprTracer) and x._trace is self:
            return x.var
        if type(x) is np.ndarray and id(x) in self._host_arrays:
            x = self._host_arrays[id(x)][1]  # converted before: its Array's constvar
        if isinstance(x, Tracer) and not x._trace.is_alive:
            raise_leaked_tracer(x)
        aval = get_aval(x)
        # A scalar of an extended dtype (a PRNG key) is no NumPy scalar: as a
        # literal it would be its raw data under the key's type; it stays a
        # constant, as in JAX.
        if not aval.shape and not isinstance(x, Tracer) and not isinstance(aval.dtype, dtypes.ExtendedDType):
            return Literal(literal_value(_host_value(x), aval), aval)
        entry = self.constvars.get(id(x))
        if entry is None:
            value = x
            if isinstance(x, (np.ndarray, np.generic)) and x.dtype != aval.dtype:
                # A host constant takes its canonical dtype when captured
                # (float64 -> float32 with x64 off), as its aval already says.
                value = np.asarray(x, dtype=aval.dtype)
            # Keyed by id: the entry keeps `x` alive, so the id stays its own.
            entry = self.constvars[id(x)] = (Var(aval), value, x)
        return entry[0]

    def process_primitive(self, prim: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
        if config.read("jax_eager_constant_folding") and not any(isinstance(x, Tracer) for x in args):
            # jax.ensure_compile_time_eval: concrete operands compute now, not in the program.
            with set_current_trace(eval_trace):
                return prim.bind(*args, **params)
        atoms = [self.to_atom(x) for x in args]
        in_avals = [a.aval for a in atoms]
        out = prim.abstract_eval_cached(in_avals, params)
        if "propagate" in sharding_in_types and (
            any(type(a) is not ShapedArray for a in in_avals)
            or params.get("out_sharding") is not None
            or params.get("sharding") is not None
            or params.get("dst_sharding") is not None
        ):
            out = sharding_in_types["propagate"](prim, in_avals, out, params)  # shtypes: sharding in types
        fold = _CONST_FOLDING.get(prim.name)
        if fold is not None and not prim.multiple_results:
            folded = fold(args, out, params)
            if folded is not None:
                return DynamicJaxprTracer(self, out, folded)
        out_avals = out if prim.multiple_results else [out]
        outvars = [Var(a) for a in out_avals]
        self.eqns.append(JaxprEqn(atoms, outvars, prim, params, source_info.current()))
        tracers = [DynamicJaxprTracer(self, a, v) for a, v in zip(out_avals, outvars)]
        return tracers if prim.multiple_results else tracers[0]

    def unique_consts(self) -> list[tuple[Var, Any, Any]]:
        """The constants, each once (a host array and its Array share an entry), in order of first use."""
        return list({id(entry[0]): entry for entry in self.constvars.values()}.values())

    def describe_origin(self, var: Var) -> str:
        """Which function was being traced, and which arguments ``var`` depends on."""
        info = self.debug_info
        if info is None:
            return ""
        depends = self._argument_dependencies(var)
        names = [info.arg_names[i] if i < len(info.arg_names) else f"args[{i}]" for i in depends]
        head = f"The error occurred while tracing the function {info.func_src} for {info.traced_for}."
        if not names:
            return head
        if len(names) == 1:
            return f"{head} This concrete value was not available in Python because it depends on the value of the argument {names[0]}."
        listed = ", ".join(names[:-1]) + " and " + names[-1]
        return f"{head} This concrete value was not available in Python because it depends on the values of the arguments {listed}."

    def _argument_dependencies(self, var: Var) -> list[int]:
        # Walk the recorded equations backwards from `var` to the inputs.
        wanted = {var}
        for eqn in reversed(self.eqns):
            if any(v in wanted for v in eqn.outvars):
                wanted.update(a for a in eqn.invars if isinstance(a, Var))
        return [i for i, v in enumerate(self.invars) if v in wanted]

    def to_jaxpr(self, out_tracers: Sequence[Any]) -> ClosedJaxpr:
        outvars = [self.to_atom(x) for x in out_tracers]
        consts = self.unique_consts()
        jaxpr = Jaxpr([v for v, _, _ in consts], self.invars, outvars, self.eqns)
        return ClosedJaxpr(jaxpr, [c for _, c, _ in consts])


def _fold_convert_element_type(args: Sequence[Any], out: ShapedArray, params: dict[str, Any]) -> Literal | None:
    """A host scalar converted while tracing becomes a literal of the new dtype,
    with no equation (JAX folds these: ``2 * iota`` prints ``mul 2:i32[] b``).
    Only NumPy values and Python scalars fold: an Array stays a conversion."""
    (x,) = args
    host = type(x) in (np.ndarray, bool, int, float, complex) or isinstance(x, np.generic)
    if not host or np.shape(x) or isinstance(out.dtype, dtypes.ExtendedDType):
        return None
    value = np.asarray(x)
    if value.dtype.kind == "c" and np.dtype(params["new_dtype"]).kind != "c":
        value = value.real
    value = value.astype(params["new_dtype"])
    return Literal(literal_value(value, out), out)


# Primitives evaluated at trace time when their operands are host constants, by name.
_CONST_FOLDING: dict[str, Callable[[Sequence[Any], ShapedArray, dict[str, Any]], Literal | None]] = {
    "convert_element_type": _fold_convert_element_type,
}


def _host_value(x: Any) -> Any:
    value = getattr(x, "_value", None)
    return x if value is None else value


class DebugInfo:
    """What a trace was for, to explain errors: function, argument names, purpose."""

    __slots__ = ("func_name", "func_src", "arg_names", "traced_for")

    def __init__(self, fun: Any, arg_names: Sequence[str], traced_for: str) -> None:
        self.func_name = fun_name(fun)
        self.func_src = f"{self.func_name}{_source_location(fun)}"
        self.arg_names = list(arg_names)
        self.traced_for = traced_for


def _source_location(fun: Any) -> str:
    code = getattr(inspect.unwrap(fun), "__code__", None)
    if code is None:
        return ""
    return f" at {code.co_filename}:{code.co_firstlineno}"


def fun_name(f: Any) -> str:
    return str(getattr(f, "__name__", type(f).__name__))


def arg_names_of(f: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> list[str]:
    """Names for the flattened arguments, like ``x`` or ``params['w']``."""
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
    const_origins: list[Any] | None = None,
) -> tuple[ClosedJaxpr, list[Any]]:
    """Trace ``fun`` (taking and returning flat lists) on abstract inputs.

    Returns the closed jaxpr and the raw outputs (for their pytree structure the
    caller flattens before calling). ``const_origins``, when given, receives
    for each constant the object ``fun`` closed over (a constant may be a
    converted copy of it): what identifies a constant across traces.
    """
    trace = DynamicJaxprTrace(debug_info)
    tracers = [trace.new_arg(a) for a in in_avals]
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        closed = trace.to_jaxpr(outs)
        if const_origins is not None:
            const_origins.extend(origin for _, _, origin in trace.unique_consts())
    finally:
        trace.invalidate()
    if leak_checks_enabled():
        check_for_leaks(trace, tracers, outs)
    if config.read("jax_enable_checks"):
        check_jaxpr(closed)
    return closed, outs


def refuse_tracing_if_asked(fun: Callable[..., Any], described: str | None = None) -> None:
    """``jax_no_tracing``: jit and make_jaxpr refuse to trace ``fun`` (JAX's RuntimeError).

    ``described``: how the message names ``fun`` (jit gives its name and source
    position, make_jaxpr its repr, as JAX does).
    """
    if config.read("jax_no_tracing"):
        name = repr(fun) if described is None else described
        raise RuntimeError(f"re-tracing function {name} for `jit`, but 'no_tracing' is set")


def hoist_tracer_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Move constants that are tracers of an enclosing trace to leading inputs.

    A function traced inside a transformation may close over that
    transformation's tracers; as inputs of the equation that calls the jaxpr
    they are operands the transformation sees (JAX's closure conversion).
    """
    jaxpr = closed.jaxpr
    is_tracer = [isinstance(c, Tracer) for c in closed.consts]
    if not any(is_tracer):
        return closed, []
    kept = [(v, c) for v, c, t in zip(jaxpr.constvars, closed.consts, is_tracer) if not t]
    moved = [(v, c) for v, c, t in zip(jaxpr.constvars, closed.consts, is_tracer) if t]
    new = Jaxpr([v for v, _ in kept], [v for v, _ in moved] + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)
    return ClosedJaxpr(new, [c for _, c in kept]), [c for _, c in moved]


def abstractify(x: Any, fun: Any = None, path: str = "") -> ShapedArray:
    """The aval a traced argument gets: Python scalars are weakly typed."""
    if not core_is_array_like(x):
        raise TypeError(
            f"Error interpreting argument to {fun} as an abstract array. The "
            f"problematic value is of type {type(x)} and was passed to the function "
            f"at path {path}.\nThis typically means that a jit-wrapped function was "
            "called with a non-array argument, and this argument was not marked as "
            "static using the static_argnums or static_argnames parameters of jax.jit."
        )
    return get_aval(x)


def abstractify_flat(flat: Sequence[Any], fun: Any, names: Callable[[], list[str]]) -> tuple[ShapedArray, ...]:
    """Avals of flattened arguments; ``names()`` gives their paths for the error."""
    try:
        avals = tuple(get_aval(x) if core_is_array_like(x) else _raise_not_array() for x in flat)
        arg_aval = sharding_in_types.get("arg_aval")  # shtypes: Explicit-axis layouts enter the types
        return avals if arg_aval is None else tuple(arg_aval(x, a) for x, a in zip(flat, avals))
    except _NotAnArray:
        paths = names()
        for i, x in enumerate(flat):
            if not core_is_array_like(x):
                abstractify(x, fun, paths[i] if i < len(paths) else f"args[{i}]")
        raise AssertionError("unreachable") from None


class _NotAnArray(Exception):
    pass


def _raise_not_array() -> ShapedArray:
    raise _NotAnArray
