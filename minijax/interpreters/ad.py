"""Automatic differentiation: the JVP trace, linearize, and transposition.

Forward mode is a trace whose tracers pair a primal value with a tangent
(``JVPTracer``). Each primitive's jvp rule maps (primals, tangents) to
(primal out, tangent out); the rule computes on the *parent* trace, so the
primals may themselves be tracers of an enclosing transformation.

``linearize`` is the same trace with one difference: the tangents are tracers
of a separate staging trace, so every tangent operation is recorded into a
*linear jaxpr* while every primal operation runs on the parent right away.
While a jvp rule runs under linearize the current trace is a ``_SplitTrace``
that sends each operation to where its operands live: to the tangent
staging trace when any operand is a tangent, else to the parent. Primal
values the tangent operations read become the linear jaxpr's constants: the
*residuals*. (This is what JAX calls direct linearization.)

Reverse mode transposes that linear jaxpr (``backward_pass``): equations are
visited in reverse, each linear primitive's transpose rule maps output
cotangents to input cotangents. ``vjp`` is linearize + transpose and ``grad``
is ``vjp`` seeded with a cotangent of 1.

Symbolic zeros: a tangent or cotangent known to be zero is a ``Zero`` object
and is never materialised unless a rule asks for it (``instantiate_zeros``).
Integer and boolean values have tangents of dtype ``float0``.

The machinery stages three primitives of its own accord: ``add_any`` (the sum
of two tangents), ``broadcast_in_dim`` (to materialise a zero) and
``custom_lin`` (the tangent side of a ``custom_vjp`` function). They are
defined, with all their rules, in minijax/primitives/ (``autodiff.py`` and
``structural.py``), which sits above this module -- the primitives register
their rules in the tables below -- so they are named rather than imported
(``core.primitive_named``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes
from minijax.array import device_put_value
from minijax.core import (
    Primitive,
    ShapedArray,
    Trace,
    Tracer,
    get_aval,
    primitive_named,
    raise_leaked_tracer,
    set_current_trace,
)
from minijax.debug_checks import check_for_leaks, leak_checks_enabled
from minijax.interpreters.tracing import DynamicJaxprTrace, DynamicJaxprTracer, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, eval_jaxpr, literal_operand

# ---------------------------------------------------------------------------
# Tangent types and symbolic zeros


def tangent_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """Floats are their own tangent type; integers and booleans have float0 tangents."""
    return dtype if dtypes.issubdtype(dtype, np.inexact) else dtypes.float0


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    dt = tangent_dtype(aval.dtype)
    return aval if dt is aval.dtype else ShapedArray(aval.shape, dt, aval.weak_type)


class Zero:
    """A tangent or cotangent known to be zero, of the given (tangent) aval."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    @staticmethod
    def from_primal(x: Any) -> Zero:
        return Zero(tangent_aval(get_aval(x)))

    # The shape and dtype of the zero (JAX's SymbolicZero has them: a rule reads them to make a tangent).
    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.aval.dtype

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


def zeros_like_aval(aval: ShapedArray) -> Any:
    """A materialised zero of ``aval`` (weak type included), staged as JAX stages it:
    a scalar zero (a literal in a jaxpr) broadcast to the shape. float0 zeros
    stay on the host, as in JAX."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    zero = device_put_value(np.zeros((), aval.dtype), weak_type=aval.weak_type)
    if not aval.shape:
        return zero
    return primitive_named("broadcast_in_dim").bind(zero, shape=aval.shape, broadcast_dimensions=(), sharding=None)


def instantiate_zeros(t: Any) -> Any:
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(x: Any, y: Any) -> Any:
    """The sum of two tangents, keeping symbolic zeros symbolic."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return primitive_named("add_any").bind(x, y)


class UndefinedPrimal:
    """A linear input of an equation being transposed: only its aval is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x: Any) -> bool:
    return type(x) is UndefinedPrimal


# ---------------------------------------------------------------------------
# Rule tables

JvpRule = Callable[..., tuple[Any, Any]]
TransposeRule = Callable[..., Sequence[Any]]
# A rule with access to the trace: higher-order primitives (jit, custom_jvp,
# checkpoint, control flow) behave differently under jvp and linearize.
TraceJvpRule = Callable[["JVPTrace", Sequence[Any], Sequence[Any], dict[str, Any]], Sequence[Any]]

# prim -> rule(primals, tangents, **params) -> (primal_out, tangent_out)
primitive_jvps: dict[Primitive, JvpRule] = {}
# prim -> rule(cotangent(s), *inputs, **params) -> cotangent per input
# (None for inputs that are not linear). Inputs being transposed are
# UndefinedPrimal; the others carry their (residual) values.
transpose_rules: dict[Primitive, TransposeRule] = {}
# prim -> rule(trace, primals, tangents, params) -> output JVPTracers/values.
trace_jvp_rules: dict[Primitive, TraceJvpRule] = {}
# Primitives with no derivative that are not zero: their jvp rule raises.
# (Listed so that the registry test can tell "no rule" from "deliberately none".)
non_differentiable: set[Primitive] = set()


def defjvp(prim: Primitive, *rules: Callable[..., Any] | None) -> None:
    """A jvp rule from one tangent rule per operand: ``rule(t, *primals, **params)``.

    The output tangent is the sum of the operands' contributions; ``None``
    marks an operand that does not carry a derivative.
    """
    primitive_jvps[prim] = _sum_of_contributions(prim, rules, with_result=False)


def defjvp2(prim: Primitive, *rules: Callable[..., Any] | None) -> None:
    """Like ``defjvp`` but each rule also sees the primal output: ``rule(t, ans, *primals, **params)``."""
    primitive_jvps[prim] = _sum_of_contributions(prim, rules, with_result=True)


def _sum_of_contributions(prim: Primitive, rules: Sequence[Callable[..., Any] | None], with_result: bool) -> JvpRule:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = prim.bind(*primals, **params)
        before = (out, *primals) if with_result else tuple(primals)
        total: Any = Zero(tangent_aval(get_aval(out)))
        for rule, t in zip(rules, tangents):
            if rule is not None and type(t) is not Zero:
                total = add_tangents(total, rule(t, *before, **params))
        return out, total

    return jvp


def defjvp_zero(prim: Primitive) -> None:
    """The output does not depend differentiably on the inputs (comparisons, integer ops)."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [Zero.from_primal(o) for o in out]
        return out, Zero.from_primal(out)

    primitive_jvps[prim] = jvp


def deflinear(prim: Primitive, transpose: TransposeRule) -> None:
    """A primitive linear in all its operands: its jvp applies it to the tangents,
    and ``transpose`` (wrapped by ``linear_transpose``) gives its transpose."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            zeros: Any = [Zero.from_primal(o) for o in out] if prim.multiple_results else Zero.from_primal(out)
            return out, zeros
        return out, prim.bind(*(instantiate_zeros(t) for t in tangents), **params)

    primitive_jvps[prim] = jvp
    transpose_rules[prim] = linear_transpose(transpose)


def linear_transpose(rule: TransposeRule) -> TransposeRule:
    """``rule``, answering a symbolic-zero cotangent itself: Zero cotangents for
    the operands being transposed, None for the others (``rule`` never sees one)."""

    def transpose(ct: Any, *operands: Any, **params: Any) -> Sequence[Any]:
        if type(ct) is Zero:
            return [Zero(x.aval) if is_undefined_primal(x) else None for x in operands]
        return rule(ct, *operands, **params)

    return transpose


# ---------------------------------------------------------------------------
# The JVP trace


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def to_concrete_value(self) -> Any:
        if not self._trace.is_alive:  # a leaked tracer must not pass for its primal value
            raise_leaked_tracer(self)
        return concrete_value(self.primal)

    def _origin_msg(self) -> str:
        primal = self.primal
        return primal._origin_msg() if isinstance(primal, Tracer) else ""


def concrete_value(x: Any) -> Any:
    """The concrete value of ``x`` if one is known (None for abstract tracers)."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    to_concrete = getattr(x, "to_concrete_value", None)
    return to_concrete() if to_concrete is not None else np.asarray(x)


class JVPTrace(Trace):
    """Forward mode. With ``tangent_trace`` set it linearizes instead (see the module doc)."""

    transform_name = "jvp"
    tracer_kind = "JVPTracer"

    def __init__(self, parent: Trace, tangent_trace: DynamicJaxprTrace | None = None) -> None:
        self.parent = parent
        self.tangent_trace = tangent_trace
        # Where jvp rules run: the parent for plain jvp; the split trace
        # (primal work to the parent, tangent work staged) for linearize.
        self.rule_trace: Trace = parent if tangent_trace is None else _SplitTrace(parent, tangent_trace)

    @property
    def linearizing(self) -> bool:
        return self.tangent_trace is not None

    def describe(self) -> str:
        return "linearize (grad, vjp)" if self.linearizing else "jvp"

    @property
    def tangent_side(self) -> DynamicJaxprTrace:
        """The staging trace of the tangents (only while linearizing)."""
        if self.tangent_trace is None:
            raise RuntimeError("tangent_side: this JVP trace is not linearizing")
        return self.tangent_trace

    def to_primal_tangent(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer) and not x._trace.is_alive:
            raise_leaked_tracer(x)
        return x, Zero.from_primal(x)

    def wrap(self, primal: Any, tangent: Any) -> Any:
        # A symbolic-zero tangent needs no tracer: the value is a constant here.
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        primals: list[Any] = []
        tangents: list[Any] = []
        for x in args:
            p, t = self.to_primal_tangent(x)
            primals.append(p)
            tangents.append(t)
        if all(type(t) is Zero for t in tangents):
            with set_current_trace(self.parent):
                return prim.bind(*primals, **params)
        trace_rule = trace_jvp_rules.get(prim)
        if trace_rule is not None:
            outs = trace_rule(self, primals, tangents, params)
            return outs if prim.multiple_results else outs[0]
        rule = primitive_jvps.get(prim)
        if rule is None:
            raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented")
        with set_current_trace(self.rule_trace):
            primal_out, tangent_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [self.wrap(p, t) for p, t in zip(primal_out, tangent_out)]
        return self.wrap(primal_out, tangent_out)

    # custom_jvp / custom_vjp functions (minijax/custom_derivatives.py). ``call``
    # is the application of one to flat arguments, whose leading
    # ``call.num_consts`` are constants the function closed over.
    def process_custom_jvp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        """The user's jvp rule gives the tangents (the function is not differentiated)."""
        n = call.num_consts
        primals, tangents = self._unzip(args)
        tangents = tangents[n:]
        if all(type(t) is Zero for t in tangents):
            with set_current_trace(self.parent):
                return self.parent.process_custom_jvp_call(call, primals)  # type: ignore[no-any-return]
        if not call.symbolic_zeros:
            tangents = [instantiate_zeros(t) for t in tangents]
        with set_current_trace(self.rule_trace):
            outs, out_tangents = call.jvp(primals[n:], tangents)
        return [self.wrap(p, t) for p, t in zip(outs, out_tangents)]

    def process_custom_vjp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        """Under linearize: ``fwd`` runs on the primal side, and the tangent side
        records a ``custom_lin`` equation, whose transpose calls ``bwd``. Forward
        mode (plain jvp) of a custom_vjp function is an error, as in JAX."""
        n = call.num_consts
        primals, tangents = self._unzip(args)
        tangents = tangents[n:]
        if all(type(t) is Zero for t in tangents):
            with set_current_trace(self.parent):
                return self.parent.process_custom_vjp_call(call, primals)  # type: ignore[no-any-return]
        # JAX runs ``fwd`` before it finds that plain jvp has no use for its
        # residuals (its prints show on JAX's custom-derivatives page).
        with set_current_trace(self.parent):
            outs, residuals = call.fwd(*primals[n:])
        if self.tangent_trace is None:
            raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")
        in_zeros = [type(t) is Zero for t in tangents]
        out_avals = tuple(tangent_aval(get_aval(o)) for o in outs)
        if call.symbolic_zeros:
            lin_in = [t for t in tangents if type(t) is not Zero]
        else:
            lin_in = [instantiate_zeros(t) for t in tangents]
        with set_current_trace(self.tangent_trace):
            out_tangents = primitive_named("custom_lin").bind(
                *residuals, *lin_in, bwd=call.bwd, in_zeros=in_zeros, num_res=len(residuals),
                out_avals=out_avals, symbolic_zeros=call.symbolic_zeros,
                res_is_array=tuple(not isinstance(r, (bool, int, float, complex)) for r in residuals),
            )  # fmt: skip
        return [self.wrap(p, t) for p, t in zip(outs, out_tangents)]

    def _unzip(self, args: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        pairs = [self.to_primal_tangent(x) for x in args]
        return [p for p, _ in pairs], [t for _, t in pairs]


class _SplitTrace(Trace):
    """Current while a jvp rule runs under linearize: tangent work is staged, primal work runs."""

    transform_name = "linearize"

    def __init__(self, parent: Trace, tangent_trace: DynamicJaxprTrace) -> None:
        self.parent = parent
        self.tangent_trace = tangent_trace

    def _target(self, args: Sequence[Any]) -> Trace:
        tangent_trace = self.tangent_trace
        for x in args:
            if isinstance(x, DynamicJaxprTracer) and x._trace is tangent_trace:
                return tangent_trace
        return self.parent

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        target = self._target(args)
        with set_current_trace(target):
            return target.process_primitive(prim, args, params)

    # A custom_jvp / custom_vjp function applied to a tangent is part of a
    # linear function that will be transposed, never differentiated again:
    # its body is inlined (as JAX's partial evaluation does), so that its
    # primitives' transpose rules apply. Applied to primals, it goes to the parent.
    def process_custom_jvp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        target = self._target(args)
        with set_current_trace(target):
            if target is self.tangent_trace:
                return call.run(args)  # type: ignore[no-any-return]
            return target.process_custom_jvp_call(call, args)

    def process_custom_vjp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        target = self._target(args)
        with set_current_trace(target):
            if target is self.tangent_trace:
                return call.run(args)  # type: ignore[no-any-return]
            return target.process_custom_vjp_call(call, args)


# ---------------------------------------------------------------------------
# Flat entry points: jvp, linearize, and evaluation of linear jaxprs


def check_tangent(primal: Any, tangent: Any, where: str = "jvp") -> None:
    p_aval, t_aval = get_aval(primal), get_aval(tangent)
    expected = tangent_dtype(p_aval.dtype)
    if p_aval.shape != t_aval.shape:
        raise ValueError(
            f"{where} called with different primal and tangent shapes;Got primal shape "
            f"{p_aval.shape} and tangent shape as {t_aval.shape}"
        )
    if t_aval.dtype != expected:
        # (JAX's message, run-on sentence and all.)
        raise TypeError(
            f"primal and tangent arguments to jax.{where} do not match; dtypes must be equal, "
            f"or in case of int/bool primal dtype the tangent dtype must be float0."
            f"Got primal dtype {p_aval.dtype} and so expected tangent dtype {expected}, but got "
            f"tangent dtype {t_aval.dtype} instead."
        )


def jvp_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Push (possibly Zero) ``tangents`` forward through ``fun`` (flat lists in and out)."""
    trace = JVPTrace(core.current_trace())
    tracers = [trace.wrap(p, t if type(t) is Zero or get_aval(t).dtype != dtypes.float0 else Zero(get_aval(t))) for p, t in zip(primals, tangents)]
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        pairs = [trace.to_primal_tangent(o) for o in outs]
    finally:
        trace.invalidate()
    if leak_checks_enabled():
        check_for_leaks(trace, tracers, outs)
    return [p for p, _ in pairs], [t for _, t in pairs]


class LinearFunction:
    """The tangent map ``linearize`` returns: a linear jaxpr over its residuals.

    ``out_zeros`` marks outputs whose tangent is identically zero (not
    computed by the jaxpr); ``in_linear`` marks the inputs that are jaxpr
    inputs (float0 inputs are not).
    """

    def __init__(self, jaxpr: ClosedJaxpr, in_avals: Sequence[ShapedArray], in_linear: Sequence[bool], out_avals: Sequence[ShapedArray], out_zeros: Sequence[bool]) -> None:
        self.jaxpr = jaxpr
        self.in_avals = list(in_avals)
        self.in_linear = list(in_linear)
        self.out_avals = list(out_avals)
        self.out_zeros = list(out_zeros)

    def __call__(self, *tangents: Any) -> list[Any]:
        """Evaluate on flat tangents (Zero allowed); Zero outputs stay symbolic."""
        args = [instantiate_zeros(t) for t, lin in zip(tangents, self.in_linear) if lin]
        outs = iter(eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *args))
        return [Zero(a) if z else next(outs) for a, z in zip(self.out_avals, self.out_zeros)]

    def transpose(self, cts: Sequence[Any]) -> list[Any]:
        """Cotangents of the inputs from cotangents of the outputs (Zero allowed)."""
        jaxpr = self.jaxpr.jaxpr
        linear_in = [UndefinedPrimal(v.aval) for v in jaxpr.invars]
        cts_out = [ct for ct, z in zip(cts, self.out_zeros) if not z]
        cts_in = iter(backward_pass(jaxpr, self.jaxpr.consts, linear_in, cts_out))
        return [next(cts_in) if lin else Zero(a) for a, lin in zip(self.in_avals, self.in_linear)]


def instantiated_zeros(lin: LinearFunction, instantiate: Sequence[bool]) -> list[Any]:
    """For each output of ``lin``: its zero tangent made now when it is
    identically zero and ``instantiate`` asks for it, else None.

    The linearize rules of control flow make these on the primal side, as JAX
    does: an array of zeros is then a residual, a scalar zero a literal.
    """
    return [zeros_like_aval(a) if z and i else None for a, z, i in zip(lin.out_avals, lin.out_zeros, instantiate)]


def tangent_outputs(out_zeros: Sequence[bool], made: Sequence[Any], computed: Iterator[Any], zero_residuals: Iterator[Any]) -> list[Any]:
    """The output tangents of a linearized part, in order: the next ``computed``
    one where the tangent is nonzero; where it is zero and was instantiated
    (``made``, from ``instantiated_zeros``), that zero, read back from
    ``zero_residuals`` when it was a residual; nothing where it was not."""
    outs = []
    for zero, zeros in zip(out_zeros, made):
        if not zero:
            outs.append(next(computed))
        elif isinstance(zeros, Tracer):
            outs.append(next(zero_residuals))
        elif zeros is not None:
            outs.append(zeros)
    return outs


def linearize_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any], linear: Sequence[bool] | None = None) -> tuple[list[Any], LinearFunction]:
    """Run ``fun`` on ``primals`` now and stage its tangent map as a linear jaxpr.

    ``linear[i]`` False makes input i a constant (zero tangent); inputs of
    integer or boolean dtype are always constants (their tangents are float0).
    """
    parent = core.current_trace()
    tangent_trace = DynamicJaxprTrace()
    trace = JVPTrace(parent, tangent_trace)
    in_avals = [tangent_aval(get_aval(p)) for p in primals]
    in_linear = [
        (linear is None or linear[i]) and a.dtype != dtypes.float0 for i, a in enumerate(in_avals)
    ]
    tracers = [
        JVPTracer(trace, p, tangent_trace.new_arg(a)) if lin else p
        for p, a, lin in zip(primals, in_avals, in_linear)
    ]
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        pairs = [trace.to_primal_tangent(o) for o in outs]
    finally:
        trace.invalidate()
    if leak_checks_enabled():
        check_for_leaks(trace, tracers, outs)
    out_primals = [p for p, _ in pairs]
    out_zeros = [type(t) is Zero for _, t in pairs]
    out_avals = [tangent_aval(get_aval(p)) for p in out_primals]
    try:
        closed = tangent_trace.to_jaxpr([t for _, t in pairs if type(t) is not Zero])
    finally:
        tangent_trace.invalidate()
    if leak_checks_enabled():
        check_for_leaks(tangent_trace, tracers, pairs)
    return out_primals, LinearFunction(closed, in_avals, in_linear, out_avals, out_zeros)


# ---------------------------------------------------------------------------
# Transposition


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], cts_out: Sequence[Any]) -> list[Any]:
    """Transpose ``jaxpr`` with respect to its ``UndefinedPrimal`` arguments.

    Equations that read no linear variable are evaluated forwards first (they
    compute residuals, e.g. a checkpointed primal); the others are visited in
    reverse, each handing its output cotangents to its transpose rule. Returns
    one cotangent per argument (Zero for those that received none; None for
    the non-linear ones).
    """
    primal_env: dict[Var, Any] = {}
    linear_vars: set[Var] = set()
    for v, c in zip(jaxpr.constvars, consts):
        primal_env[v] = c
    for v, x in zip(jaxpr.invars, args):
        if is_undefined_primal(x):
            linear_vars.add(v)
        else:
            primal_env[v] = x

    def read_primal(a: Any) -> Any:
        if isinstance(a, Literal):
            return literal_operand(a)
        return UndefinedPrimal(a.aval) if a in linear_vars else primal_env[a]

    linear_eqns: list[JaxprEqn] = []
    for eqn in jaxpr.eqns:
        if any(isinstance(a, Var) and a in linear_vars for a in eqn.invars):
            linear_eqns.append(eqn)
            linear_vars.update(eqn.outvars)
            continue
        outs = eqn.primitive.bind(*(read_primal(a) for a in eqn.invars), **eqn.params)
        for v, x in zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]):
            if not isinstance(v, DropVar):
                primal_env[v] = x

    ct_env: dict[Var, Any] = {}

    def write_ct(v: Any, ct: Any) -> None:
        if ct is None or type(ct) is Zero or not isinstance(v, Var) or v not in linear_vars:
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else primitive_named("add_any").bind(prev, ct)

    def read_ct(v: Var) -> Any:
        ct = ct_env.pop(v, None)
        return Zero(v.aval) if ct is None else ct

    for out, ct in zip(jaxpr.outvars, cts_out):
        write_ct(out, ct)
    for eqn in reversed(linear_eqns):
        cts = [read_ct(v) for v in eqn.outvars]
        if all(type(ct) is Zero for ct in cts):
            continue
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for '{eqn.primitive.name}' not implemented")
        invals = [read_primal(a) for a in eqn.invars]
        cts_in = rule(cts if eqn.primitive.multiple_results else cts[0], *invals, **eqn.params)
        for a, ct in zip(eqn.invars, cts_in):
            write_ct(a, ct)
    results: list[Any] = []
    for v, x in zip(jaxpr.invars, args):
        results.append(read_ct(v) if is_undefined_primal(x) else None)
    return results


# ---------------------------------------------------------------------------
# Derivatives of whole jaxprs, for the rules of the primitives that carry
# jaxprs (jit, checkpoint, cond, the loops)


def jvp_jaxpr(closed: ClosedJaxpr, nonzeros: Sequence[bool], instantiate: bool | Sequence[bool] = False) -> tuple[ClosedJaxpr, list[bool]]:
    """A jaxpr computing (primal outs, nonzero tangent outs) from (primals, nonzero tangents).

    ``nonzeros`` says which inputs have a tangent; ``instantiate`` which
    outputs must have one even when it is zero. Returns the jaxpr and which
    outputs have a tangent.
    """
    in_avals = closed.in_avals
    n = len(in_avals)
    tangent_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
    out_nonzeros: list[bool] = []
    inst = [instantiate] * len(closed.out_avals) if isinstance(instantiate, bool) else list(instantiate)

    def fun(*args: Any) -> list[Any]:
        primals, nz_tangents = args[:n], iter(args[n:])
        tangents = [next(nz_tangents) if nz else Zero(tangent_aval(a)) for a, nz in zip(in_avals, nonzeros)]
        outs, out_tangents = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), primals, tangents)
        out_tangents = [instantiate_zeros(t) if i else t for t, i in zip(out_tangents, inst)]
        out_nonzeros.extend(type(t) is not Zero for t in out_tangents)
        return list(outs) + [t for t in out_tangents if type(t) is not Zero]

    jvp_closed, _ = trace_to_jaxpr(fun, list(in_avals) + tangent_avals)
    return jvp_closed, out_nonzeros


def transpose_call(
    closed: ClosedJaxpr, args: Sequence[Any], cts: Sequence[Any], bind: Callable[[Sequence[Any], ClosedJaxpr], Sequence[Any]]
) -> list[Any]:
    """Transpose rule of a primitive that calls ``closed`` (jit, remat2).

    Stages the transposed jaxpr (inputs: the residual operands, then the
    cotangents) and hands it to ``bind(operands, jaxpr)``, which binds the
    same kind of call; returns one cotangent per operand (None for residuals).
    """
    linear = [is_undefined_primal(a) for a in args]
    residuals = [a for a in args if not is_undefined_primal(a)]
    cts = [instantiate_zeros(ct) for ct in cts]
    n_res = len(residuals)

    def transposed(*xs: Any) -> list[Any]:
        res = iter(xs[:n_res])
        full = [UndefinedPrimal(a.aval) if lin else next(res) for a, lin in zip(args, linear)]
        cts_in = backward_pass(closed.jaxpr, closed.consts, full, xs[n_res:])
        return [instantiate_zeros(ct) for ct, lin in zip(cts_in, linear) if lin]

    t_closed, _ = trace_to_jaxpr(transposed, [get_aval(r) for r in residuals] + [get_aval(c) for c in cts])
    outs = iter(bind([*residuals, *cts], t_closed))
    return [next(outs) if lin else None for lin in linear]


__all__ = [
    "JVPTrace",
    "JVPTracer",
    "LinearFunction",
    "UndefinedPrimal",
    "Zero",
    "add_tangents",
    "backward_pass",
    "defjvp",
    "defjvp2",
    "defjvp_zero",
    "deflinear",
    "instantiate_zeros",
    "is_undefined_primal",
    "jvp_flat",
    "jvp_jaxpr",
    "linear_transpose",
    "linearize_flat",
    "primitive_jvps",
    "tangent_aval",
    "trace_jvp_rules",
    "transpose_call",
    "transpose_rules",
    "zeros_like_aval",
]
