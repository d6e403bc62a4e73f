"""The call primitives: ``jit``, ``remat2`` (checkpoint), ``custom_jvp_call``, ``custom_vjp_call``
and ``custom_vmap_call``.

Each carries a closed jaxpr and, applied to operands, evaluates it. They
differ in what the transformations do with them (``spec/primitives/calls.md``):

- ``jit``: a jit of a derivative is a derivative of a jit. jvp is one
  ``jit`` of the jvp of the inner jaxpr; linearize makes two, as JAX does: a
  *known* one on the primal side returns the primal outputs and the
  residuals (residuals that are just its inputs are passed through rather
  than returned); a *tangent* one, staged on the tangent side, maps
  (residuals, tangents) to output tangents. Transpose and batching give a
  ``jit`` of the transposed, the batched inner jaxpr.
- ``remat2``: recompute on the backward pass instead of storing. Under
  linearize the primal computation runs inline and the tangent side records
  a ``remat2`` (``differentiated=True``) of the jvp whose only residuals are
  the inputs -- nothing the function computes is stored; its transpose
  re-evaluates the primal equations first (the recomputation).
- ``custom_jvp_call`` / ``custom_vjp_call``: a ``custom_jvp`` / ``custom_vjp``
  function staged with its rule. The JVP trace calls the rule instead of
  differentiating the jaxpr (``JVPTrace.process_custom_jvp_call``); batching
  batches the jaxpr and wraps the rule so that it runs batched too.

The public functions that build them are ``minijax.jit`` (minijax/stages.py),
``minijax.checkpoint`` (minijax/ad_checkpoint.py) and ``minijax.custom_jvp`` /
``custom_vjp`` (minijax/custom_derivatives.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from minijax import core, dtypes, tree_util
from minijax.core import Primitive, ShapedArray, get_aval, set_current_trace
from minijax.dispatch import call_primitives, eager_rules, run_compiled
from minijax.interpreters import ad, batching
from minijax.interpreters.ad import JVPTrace, Zero
from minijax.interpreters.tracing import DebugInfo, DynamicJaxprTracer, hoist_tracer_consts, trace_to_jaxpr
from minijax.jaxpr import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Var,
    eval_closed_jaxpr,
    eval_jaxpr,
    name_sharing_params,
    param_filters,
)
from minijax.jaxpr_passes import consts_as_inputs, dce_jaxpr
from minijax.primitives import elementwise
from minijax.primitives.common import standard_primitive
from minijax.primitives.structural import reduce_sum

__all__ = [
    "CustomJVPCall",
    "CustomVJPCall",
    "NamedCallable",
    "Offloadable",
    "Recompute",
    "RecomputeType",
    "Saveable",
    "SaveableType",
    "custom_jvp_call_p",
    "custom_vmap_call_p",
    "custom_vjp_call_p",
    "jit_p",
    "remat_p",
]


# ===========================================================================
# jit


def _jit_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, name: str, **_: Any) -> list[ShapedArray]:
    core.typecheck_avals(jaxpr.in_avals, avals, f"jit of {name}")  # jit C1, C2
    return jaxpr.out_avals


jit_p = standard_primitive("jit", _jit_abstract_eval, multiple_results=True)
# JAX shows jit's name first, then its jaxpr, and hides the bookkeeping params.
param_filters["jit"] = lambda params: [("name", params["name"]), ("jaxpr", params["jaxpr"])]
name_sharing_params["jit"] = "jaxpr"  # its jaxpr's binders print with the names of the call's operands
eager_rules[jit_p] = lambda backend, arrays, params: run_compiled(backend, params["jaxpr"], arrays)
call_primitives.add(jit_p)


def _jit_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    closed: ClosedJaxpr = params["jaxpr"]
    name: str = params["name"]
    nonzeros = [type(t) is not Zero for t in tangents]
    if trace.linearizing:
        return _jit_linearize(trace, closed, name, primals, tangents, nonzeros)
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(closed, nonzeros)
    with set_current_trace(trace.parent):
        outs = jit_p.bind(*primals, *(t for t in tangents if type(t) is not Zero), jaxpr=jvp_closed, name=name)
    n_out = len(closed.out_avals)
    out_tangents = iter(outs[n_out:])
    return [
        trace.wrap(p, next(out_tangents) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip(outs[:n_out], closed.out_avals, out_nonzeros)
    ]


def _known_side(closed: ClosedJaxpr, nonzeros: list[bool], box: dict[str, Any]) -> Callable[..., list[Any]]:
    """The primal side of linearizing a call of ``closed``: its outputs, then the residuals it computes.

    Each residual of the linearized body is an input of the call (forwarded),
    a value computed inside (returned after the outputs), or a constant from
    outside (passed directly); ``box`` receives the linear jaxpr (``"lin"``)
    and where each residual comes from (``"sources"``).
    """
    n_out = len(closed.out_avals)

    def known(*xs: Any) -> list[Any]:
        outs, lin = ad.linearize_flat(functools.partial(eval_closed_jaxpr, closed), xs, linear=nonzeros)
        input_pos = {id(x): i for i, x in enumerate(xs)}
        sources: list[tuple[str, Any]] = []
        computed: list[Any] = []
        for r in lin.jaxpr.consts:
            if id(r) in input_pos:
                sources.append(("input", input_pos[id(r)]))
            elif isinstance(r, DynamicJaxprTracer):
                sources.append(("output", n_out + len(computed)))
                computed.append(r)
            else:
                sources.append(("const", r))
        box["lin"], box["sources"] = lin, sources
        return list(outs) + computed

    return known


def _jit_linearize(
    trace: JVPTrace, closed: ClosedJaxpr, name: str, primals: Sequence[Any], tangents: Sequence[Any], nonzeros: list[bool]
) -> list[Any]:
    n_out = len(closed.out_avals)
    box: dict[str, Any] = {}
    known = _known_side(closed, nonzeros, box)

    known_closed, _ = trace_to_jaxpr(known, [get_aval(p) for p in primals])
    with set_current_trace(trace.parent):
        known_outs = jit_p.bind(*primals, jaxpr=known_closed, name=name)
    lin: ad.LinearFunction = box["lin"]
    residuals = [
        primals[where] if kind == "input" else known_outs[where] if kind == "output" else where
        for kind, where in box["sources"]
    ]
    tangent_closed, _ = consts_as_inputs(lin.jaxpr)
    lin_tangents = [t for t, use in zip(tangents, lin.in_linear) if use]
    with set_current_trace(trace.tangent_side):
        tangent_outs = iter(
            jit_p.bind(*residuals, *(ad.instantiate_zeros(t) for t in lin_tangents), jaxpr=tangent_closed, name=name)
        )
    return [
        trace.wrap(p, Zero(a) if z else next(tangent_outs))
        for p, a, z in zip(known_outs[:n_out], lin.out_avals, lin.out_zeros)
    ]


def _jit_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, name: str, **unused: Any) -> list[Any]:
    return ad.transpose_call(jaxpr, args, cts, lambda xs, t: jit_p.bind(*xs, jaxpr=t, name=name))


def _jit_batch(
    trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]
) -> tuple[Any, Any]:
    # A rule with the trace, so that collectives inside the jaxpr find the vmap's axis name.
    closed: ClosedJaxpr = params["jaxpr"]
    batched, out_dims = batching.batch_jaxpr(closed, trace.axis_size, dims, axis_name=trace.axis_name)
    return jit_p.bind(*vals, **{**params, "jaxpr": batched}), out_dims


ad.trace_jvp_rules[jit_p] = _jit_jvp
ad.transpose_rules[jit_p] = _jit_transpose
batching.trace_batch_rules[jit_p] = _jit_batch


# ===========================================================================
# remat2 (checkpoint)


def _remat_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, **_: Any) -> list[ShapedArray]:
    core.typecheck_avals(jaxpr.in_avals, avals, "checkpoint")  # remat2 C1
    return jaxpr.out_avals


remat_p = standard_primitive("remat2", _remat_abstract_eval, multiple_results=True)
param_filters["remat2"] = lambda params: [(k, params[k]) for k in ("differentiated", "jaxpr", "policy", "prevent_cse")]
eager_rules[remat_p] = lambda backend, arrays, params: run_compiled(backend, params["jaxpr"], arrays)
call_primitives.add(remat_p)


def _remat_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    closed: ClosedJaxpr = params["jaxpr"]
    nonzeros = [type(t) is not Zero for t in tangents]
    n_out = len(closed.out_avals)
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(closed, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    differentiated = {**params, "differentiated": True}
    if not trace.linearizing:
        with set_current_trace(trace.parent):
            outs = remat_p.bind(*primals, *nz_tangents, **{**differentiated, "jaxpr": jvp_closed})
        primal_outs, tangent_outs = outs[:n_out], iter(outs[n_out:])
    else:
        return _remat_linearize(trace, closed, params, primals, tangents, nonzeros)
    return [
        trace.wrap(p, next(tangent_outs) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip(primal_outs, closed.out_avals, out_nonzeros)
    ]


# The policies of the checkpoints being linearized, innermost last (see _remat_linearize).
_OUTER_POLICIES: list[Callable[..., Any] | None] = []


class RecomputeType:
    """The type of ``Recompute``, a policy's answer: recompute the value."""


Recompute = RecomputeType()


class SaveableType:
    """The type of ``Saveable``, a policy's answer: save the value."""


Saveable = SaveableType()


class Offloadable(NamedTuple):
    """A policy's answer: save the value in memory ``dst`` (on the CPU: where it is)."""

    src: str
    dst: str


def _saveable(policy: Callable[..., Any] | None, eqn: JaxprEqn) -> bool:
    """Whether ``policy`` lets the outputs of ``eqn`` (a primal equation) be saved."""
    if policy is None:
        return False
    verdict = policy(eqn.primitive, *[a.aval for a in eqn.invars], **eqn.params)
    if isinstance(verdict, bool):
        return verdict
    if isinstance(verdict, (SaveableType, Offloadable)):
        return True  # an offloaded value is saved (host and device memory are one on the CPU)
    if isinstance(verdict, RecomputeType):
        return False
    hint = (" Did you return `Offloadable` instead of an instantiated `Offloadable(...)`?"
            if verdict is Offloadable else "")
    raise TypeError(
        "Value returned by a remat policy should be a bool or `ad_checkpoint.Recompute`, "
        f"`ad_checkpoint.Saveable` or `ad_checkpoint.Offloadable(...)`. Got {verdict} of type {type(verdict)}.{hint}"
    )


def _remat_linearize(
    trace: JVPTrace, closed: ClosedJaxpr, params: dict[str, Any], primals: Sequence[Any], tangents: Sequence[Any],
    nonzeros: list[bool],
) -> list[Any]:
    """The primal runs inline; the tangent side is a ``remat2`` that recomputes what the policy does not save.

    The function is linearized into a *known* jaxpr (primal inputs -> primal
    outputs and the residuals its tangent map reads) and the tangent map.
    Walking back from each residual through the known equations: an equation
    the policy calls saveable ends the walk (its output is saved); any other
    is recomputed inside the tangent ``remat2`` from the inputs and the saved
    values. With no policy nothing is saved: only the inputs are residuals.
    """
    n_out = len(closed.out_avals)
    box: dict[str, Any] = {}
    known = _known_side(closed, nonzeros, box)

    # A checkpoint inside a checkpoint being linearized follows the outer policy, and its
    # primal side stays one remat2 equation returning its residuals (even its inputs), as in
    # JAX: the outer policy then decides about that equation as a whole.
    nested = bool(_OUTER_POLICIES)
    policy = _OUTER_POLICIES[-1] if nested else params["policy"]
    _OUTER_POLICIES.append(policy)
    try:
        known_closed, _ = trace_to_jaxpr(known, [get_aval(p) for p in primals])
    finally:
        _OUTER_POLICIES.pop()
    lin: ad.LinearFunction = box["lin"]
    kj = known_closed.jaxpr
    producer = {v: e for e in kj.eqns for v in e.outvars}
    inputs = set(kj.constvars) if nested else set(kj.invars) | set(kj.constvars)
    saved: dict[Var, None] = {}  # ordered set
    recompute: set[int] = set()

    def need(atom: Any) -> None:
        if not isinstance(atom, Var) or atom in inputs or atom in saved:
            return
        if atom not in producer:  # an input returned by the nested primal equation
            saved[atom] = None
            return
        eqn = producer[atom]
        if _saveable(policy, eqn):
            saved[atom] = None
        elif id(eqn) not in recompute:
            recompute.add(id(eqn))
            for a in eqn.invars:
                need(a)

    residual_atoms: list[Any] = []
    for kind, where in box["sources"]:
        atom = kj.invars[where] if kind == "input" else kj.outvars[where] if kind == "output" else None
        residual_atoms.append(atom)
        need(atom)
    saved_vars = list(saved)
    # The primal side: the primal outputs and the saved values, computed inline.
    fwd = Jaxpr(kj.constvars, kj.invars, [*kj.outvars[:n_out], *saved_vars], kj.eqns)
    fwd, _ = dce_jaxpr(fwd, [True] * len(fwd.outvars))
    if not nested:
        fwd = _round_saved_values(fwd, saved_vars)
    with set_current_trace(trace.parent):
        if nested:
            fwd_moved, fwd_consts = consts_as_inputs(ClosedJaxpr(fwd, known_closed.consts))
            fwd_outs = remat_p.bind(*fwd_consts, *primals, **{**params, "jaxpr": fwd_moved, "policy": None})
        else:
            fwd_outs = eval_jaxpr(fwd, known_closed.consts, *primals)
    primal_outs, saved_vals = fwd_outs[:n_out], fwd_outs[n_out:]
    # The tangent side: (saved values, inputs, tangents) -> recompute the rest -> tangent map.
    # An input that is also saved (nested) is read from the saved value: its input binder is a dummy.
    rematerialize = Jaxpr(kj.constvars, saved_vars + [Var(v.aval) if v in saved else v for v in kj.invars],
                          [a for a in residual_atoms if a is not None],
                          [e for e in kj.eqns if id(e) in recompute])
    lin_tangents = [ad.instantiate_zeros(t) for t, use in zip(tangents, lin.in_linear) if use]
    n_saved, n_in = len(saved_vars), len(primals)

    def tangent_map(*args: Any) -> list[Any]:
        recomputed = iter(eval_jaxpr(rematerialize, known_closed.consts, *args[: n_saved + n_in]))
        residuals = [where if kind == "const" else next(recomputed) for kind, where in box["sources"]]
        return eval_jaxpr(lin.jaxpr.jaxpr, residuals, *args[n_saved + n_in :])

    operands = [*saved_vals, *primals, *lin_tangents]
    tangent_closed, _ = trace_to_jaxpr(tangent_map, [get_aval(x) for x in operands])
    moved, consts = consts_as_inputs(tangent_closed)
    # Only the inputs the tangent side reads become its operands (and so residuals), as in JAX.
    n_consts = len(consts)
    used_in = _used_inputs(moved.jaxpr, n_consts + n_saved + n_in)
    pruned = ClosedJaxpr(Jaxpr([], [v for v, u in zip(moved.jaxpr.invars, used_in) if u], moved.jaxpr.outvars,
                               moved.jaxpr.eqns), moved.consts)
    args = [x for x, u in zip([*consts, *saved_vals, *primals], used_in) if u] + lin_tangents
    with set_current_trace(trace.tangent_side):
        tangent_outs = iter(remat_p.bind(*args, **{**params, "differentiated": True, "jaxpr": pruned}))
    return [
        trace.wrap(p, Zero(a) if z else next(tangent_outs))
        for p, a, z in zip(primal_outs, lin.out_avals, lin.out_zeros)
    ]


def _round_saved_values(jaxpr: Jaxpr, saved: Sequence[Var]) -> Jaxpr:
    """``jaxpr`` with each saved floating value passed through ``reduce_precision`` to its own dtype.

    As in JAX: XLA may keep a value in excess precision where it is computed
    but store it rounded, so the forward pass's later uses and the
    recomputing backward pass must both read the rounded value.
    """
    read = {a for e in jaxpr.eqns for a in e.invars if isinstance(a, Var)}
    targets = {v for v in saved if v in read and dtypes.issubdtype(v.aval.dtype, np.inexact)}
    if not targets:
        return jaxpr
    eqns: list[JaxprEqn] = []
    for eqn in jaxpr.eqns:
        hit = [v for v in eqn.outvars if v in targets]
        if not hit or eqn.primitive is elementwise.reduce_precision_p:
            eqns.append(eqn)
            continue
        fresh = {v: Var(v.aval) for v in hit}
        eqns.append(eqn.replace(outvars=[fresh.get(v, v) for v in eqn.outvars]))
        for v in hit:
            info = dtypes.finfo(v.aval.dtype)
            eqns.append(JaxprEqn([fresh[v]], [v], elementwise.reduce_precision_p,
                                 {"exponent_bits": info.nexp, "mantissa_bits": info.nmant}, eqn.source_info))
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns)


def _used_inputs(jaxpr: Jaxpr, n: int) -> list[bool]:
    """Which of the first ``n`` inputs of ``jaxpr`` any equation or output reads (the rest count as read)."""
    read = {a for e in jaxpr.eqns for a in e.invars if isinstance(a, Var)} | {
        a for a in jaxpr.outvars if isinstance(a, Var)}
    return [i >= n or v in read for i, v in enumerate(jaxpr.invars)]


def _remat_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    def bind(xs: Sequence[Any], t: ClosedJaxpr) -> Sequence[Any]:
        return remat_p.bind(*xs, **{**params, "jaxpr": t, "differentiated": True})  # type: ignore[no-any-return]

    return ad.transpose_call(jaxpr, args, cts, bind)


def _remat_batch(
    trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]
) -> tuple[Any, Any]:
    batched, out_dims = batching.batch_jaxpr(params["jaxpr"], trace.axis_size, dims, axis_name=trace.axis_name)
    return remat_p.bind(*vals, **{**params, "jaxpr": batched}), out_dims


ad.trace_jvp_rules[remat_p] = _remat_jvp
ad.transpose_rules[remat_p] = _remat_transpose
batching.trace_batch_rules[remat_p] = _remat_batch


# ===========================================================================
# custom_jvp_call, custom_vjp_call


class NamedCallable:
    """A function stored in an equation's params: prints as its name, like JAX."""

    __slots__ = ("fun", "name")

    def __init__(self, fun: Callable[..., Any], name: str) -> None:
        self.fun = fun
        self.name = name

    def __call__(self, *args: Any) -> Any:
        return self.fun(*args)

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


def _trace_flat(fun: Callable[..., Sequence[Any]], args: Sequence[Any], name: str) -> tuple[ClosedJaxpr, list[Any]]:
    closed, _ = trace_to_jaxpr(lambda *xs: list(fun(*xs)), [get_aval(x) for x in args], DebugInfo(fun, [], name))
    return hoist_tracer_consts(closed)


class _CustomCall:
    """What the two kinds of call share: the function (taking ``num_consts``
    constants first, then the arguments), its name, and the flag that says
    whether its rules see symbolic zeros."""

    kind = ""

    def __init__(self, fun: Callable[..., Sequence[Any]], name: str, symbolic_zeros: bool, num_consts: int) -> None:
        self.fun = fun
        self.name = name
        self.symbolic_zeros = symbolic_zeros
        self.num_consts = num_consts

    def run(self, args: Sequence[Any]) -> list[Any]:
        return list(self.fun(*args))

    def primitive(self) -> Primitive:
        raise NotImplementedError

    def rule_params(self) -> dict[str, Any]:
        raise NotImplementedError

    def bind(self, args: Sequence[Any]) -> list[Any]:
        closed, consts = _trace_flat(self.fun, args, self.kind)
        return self.primitive().bind(  # type: ignore[no-any-return]
            *consts, *args, call_jaxpr=closed, **self.rule_params(), name=self.name,
            num_consts=len(consts) + self.num_consts, symbolic_zeros=self.symbolic_zeros,
        )  # fmt: skip


class CustomJVPCall(_CustomCall):
    """One application of a ``custom_jvp`` function, flattened.

    ``fun``: flat primals -> flat outputs; ``jvp``: (primals, tangents) ->
    (outs, tangent outs), seeing the arguments only. A trace handles it
    (``trace.process_custom_jvp_call``): the eval trace runs ``fun``, a
    staging trace records ``custom_jvp_call``, the JVP trace calls ``jvp``.
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable[..., Sequence[Any]], jvp: NamedCallable, name: str, symbolic_zeros: bool, num_consts: int = 0) -> None:
        super().__init__(fun, name, symbolic_zeros, num_consts)
        self.jvp = jvp

    def primitive(self) -> Primitive:
        return custom_jvp_call_p

    def rule_params(self) -> dict[str, Any]:
        return {"jvp": self.jvp}


class CustomVJPCall(_CustomCall):
    """One application of a ``custom_vjp`` function, flattened.

    ``fwd``: flat primals -> (flat outs, flat residuals); ``bwd``: (residuals,
    cts) -> cts; both see the arguments only. Handled by the traces as
    ``CustomJVPCall`` is.
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable[..., Sequence[Any]], fwd: NamedCallable, bwd: NamedCallable, name: str, symbolic_zeros: bool, num_consts: int = 0) -> None:
        super().__init__(fun, name, symbolic_zeros, num_consts)
        self.fwd = fwd
        self.bwd = bwd

    def primitive(self) -> Primitive:
        return custom_vjp_call_p

    def rule_params(self) -> dict[str, Any]:
        return {"fwd": self.fwd, "bwd": self.bwd}


def _custom_call_abstract_eval(*avals: ShapedArray, call_jaxpr: ClosedJaxpr, **_: Any) -> list[ShapedArray]:
    return call_jaxpr.out_avals


custom_jvp_call_p = standard_primitive("custom_jvp_call", _custom_call_abstract_eval, multiple_results=True)
custom_vjp_call_p = standard_primitive("custom_vjp_call", _custom_call_abstract_eval, multiple_results=True)


def _num_consts_if_any(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("num_consts", params["num_consts"])] if params["num_consts"] else []


param_filters["custom_jvp_call"] = lambda params: [
    ("name", params["name"]), ("call_jaxpr", params["call_jaxpr"]), ("jvp", params["jvp"]),
    *_num_consts_if_any(params), ("symbolic_zeros", params["symbolic_zeros"]),
]  # fmt: skip
param_filters["custom_vjp_call"] = lambda params: [
    ("name", params["name"]), ("bwd", params["bwd"]), ("call_jaxpr", params["call_jaxpr"]), ("fwd", params["fwd"]),
    *_num_consts_if_any(params), ("symbolic_zeros", params["symbolic_zeros"]),
]  # fmt: skip


def _call_of(params: dict[str, Any]) -> Callable[..., list[Any]]:
    """The function an equation's ``call_jaxpr`` is (its leading num_consts inputs are constants)."""
    return functools.partial(eval_closed_jaxpr, params["call_jaxpr"])


def _custom_jvp_call_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    # A replayed equation (a jit's jaxpr under grad) does what the call did.
    call = CustomJVPCall(_call_of(params), params["jvp"], params["name"], params["symbolic_zeros"], params["num_consts"])
    return trace.process_custom_jvp_call(call, [trace.wrap(p, t) for p, t in zip(primals, tangents)])


def _custom_vjp_call_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    call = CustomVJPCall(
        _call_of(params), params["fwd"], params["bwd"], params["name"], params["symbolic_zeros"], params["num_consts"]
    )
    return trace.process_custom_vjp_call(call, [trace.wrap(p, t) for p, t in zip(primals, tangents)])


# Batching: the function's jaxpr is batched, and the rules are wrapped so
# that they run batched too (outputs, residuals and cotangents at axis 0).


def _unbatched_call(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> bool:
    """Whether nothing in the call is batched: no operand, and no output
    (through a collective inside). Then the call stays as it is, with its
    outputs unbatched: a jvp rule that computes its primal by calling its own
    function (``out = f(x)``) under a vmap of the tangents (jacfwd) must get
    an unbatched primal back, as in JAX."""
    if any(d is not None for d in dims):
        return False
    _, out_batched = batching.batch_jaxpr(params["call_jaxpr"], trace.axis_size, dims, axis_name=trace.axis_name)
    return all(d is None for d in out_batched)


def _custom_jvp_call_batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    size, axis_name = trace.axis_size, trace.axis_name
    closed: ClosedJaxpr = params["call_jaxpr"]
    n_out = len(closed.out_avals)
    if _unbatched_call(trace, vals, dims, params):
        return custom_jvp_call_p.bind(*vals, **params), [None] * n_out
    batched, _ = batching.batch_jaxpr(closed, size, dims, out_dims=[0] * n_out, axis_name=axis_name)
    old_jvp: NamedCallable = params["jvp"]
    arg_dims = list(dims[params["num_consts"]:])

    def jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        n = len(primals)

        def one(*xs: Any) -> list[Any]:
            outs, out_tangents = old_jvp(list(xs[:n]), list(xs[n:]))
            return list(outs) + [ad.instantiate_zeros(t) for t in out_tangents]

        args = list(primals) + [ad.instantiate_zeros(t) for t in tangents]
        res = batching.vmap_flat(one, args, arg_dims * 2, size, axis_name, [0] * (2 * n_out))
        return res[:n_out], res[n_out:]

    new_params = {**params, "call_jaxpr": batched, "jvp": NamedCallable(jvp, old_jvp.name)}
    return custom_jvp_call_p.bind(*vals, **new_params), [0] * n_out


def _custom_vjp_call_batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    size, axis_name = trace.axis_size, trace.axis_name
    closed: ClosedJaxpr = params["call_jaxpr"]
    n_out = len(closed.out_avals)
    if _unbatched_call(trace, vals, dims, params):
        return custom_vjp_call_p.bind(*vals, **params), [None] * n_out
    batched, _ = batching.batch_jaxpr(closed, size, dims, out_dims=[0] * n_out, axis_name=axis_name)
    old_fwd: NamedCallable = params["fwd"]
    old_bwd: NamedCallable = params["bwd"]
    arg_dims = list(dims[params["num_consts"]:])

    def fwd(*primals: Any) -> tuple[list[Any], list[Any]]:
        def one(*xs: Any) -> list[Any]:
            outs, res = old_fwd(*xs)
            return list(outs) + list(res)

        res = batching.vmap_flat(one, list(primals), arg_dims, size, axis_name, lambda n: [0] * n)
        return res[:n_out], res[n_out:]

    def bwd(res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        n_res = len(res)

        def one(*xs: Any) -> list[Any]:
            return [ad.instantiate_zeros(c) for c in old_bwd(list(xs[:n_res]), list(xs[n_res:]))]

        cts = [ad.instantiate_zeros(c) for c in cts]
        cts_in = batching.vmap_flat(one, list(res) + cts, [0] * (n_res + len(cts)), size, axis_name, lambda n: [0] * n)
        # An argument that was not batched receives the sum over the batch.
        return [reduce_sum(c, (0,)) if d is None else batching.moveaxis(c, 0, d) for c, d in zip(cts_in, arg_dims)]

    new_params = {**params, "call_jaxpr": batched, "fwd": NamedCallable(fwd, old_fwd.name), "bwd": NamedCallable(bwd, old_bwd.name)}
    return custom_vjp_call_p.bind(*vals, **new_params), [0] * n_out


ad.trace_jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
ad.trace_jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
batching.trace_batch_rules[custom_jvp_call_p] = _custom_jvp_call_batch
batching.trace_batch_rules[custom_vjp_call_p] = _custom_vjp_call_batch


# linsolve: a custom_jvp / custom_vjp function applied to tangents inside a
# replayed jaxpr (custom_root's tangent_solve, say) lands in a linear jaxpr
# as its equation; JAX's partial evaluation inlines its body there, so its
# transpose is the transpose of that body.
def _custom_call_transpose(cts: Sequence[Any], *args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return ad.transpose_call(call_jaxpr, args, cts, lambda xs, t: eval_closed_jaxpr(t, *xs))


ad.transpose_rules[custom_jvp_call_p] = _custom_call_transpose
ad.transpose_rules[custom_vjp_call_p] = _custom_call_transpose


# ===========================================================================
# custom_vmap_call: a ``custom_batching.custom_vmap`` function applied. It
# evaluates ``call`` (the function's jaxpr, its first ``num_consts`` inputs the
# values it closes over); under vmap it calls the user's ``rule(axis_size,
# in_batched, *args)`` instead of batching ``call``, which is why the equation
# keeps it (``vmap(jit(f))`` reaches it inside jit's jaxpr). Differentiating
# it differentiates ``call`` (the rule is not differentiated: JAX refuses
# reverse mode there, minijax differentiates the function's body).


class VmapRule:
    """A custom_vmap rule in an equation's params: prints as JAX prints it, the function's
    repr with its address masked (``<function rule at 0xXXXXXXXXXXXX>``)."""

    __slots__ = ("fun",)

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun

    def __call__(self, *args: Any) -> Any:
        return self.fun(*args)

    @property
    def __name__(self) -> str:
        return str(getattr(self.fun, "__name__", "<unnamed rule>"))

    def __repr__(self) -> str:
        return re.sub(r" at 0x[0-9a-fA-F]+>", " at 0xXXXXXXXXXXXX>", repr(self.fun))

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VmapRule) and other.fun is self.fun

    def __hash__(self) -> int:
        return id(self.fun)


def _custom_vmap_call_abstract_eval(*avals: ShapedArray, call: ClosedJaxpr, **_: Any) -> list[ShapedArray]:
    return call.out_avals


custom_vmap_call_p = standard_primitive("custom_vmap_call", _custom_vmap_call_abstract_eval, multiple_results=True)
param_filters["custom_vmap_call"] = lambda params: [
    ("call", params["call"]), ("in_tree", params["in_tree"]), ("out_tree", params["out_tree"]), ("rule", params["rule"]),
]  # fmt: skip


def _custom_vmap_call_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    with set_current_trace(trace):
        return list(eval_closed_jaxpr(params["call"], *[trace.wrap(p, t) for p, t in zip(primals, tangents)]))


def _custom_vmap_call_batch(
    trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]
) -> tuple[Any, Any]:
    call: ClosedJaxpr = params["call"]
    n_consts = params["num_consts"]
    if all(d is None for d in dims):
        return custom_vmap_call_p.bind(*vals, **params), [None] * len(call.out_avals)
    if any(d is not None for d in dims[:n_consts]):
        raise NotImplementedError(
            "custom_vmap: the function closes over a value that this vmap batches; pass it as an argument "
            "so that the rule sees it batched"
        )
    rule = params["rule"]
    args = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals[n_consts:], dims[n_consts:])]
    _, arg_tree = params["in_tree"].children()
    in_batched = tree_util.tree_unflatten(arg_tree, [d is not None for d in dims[n_consts:]])
    out, out_batched = rule(trace.axis_size, list(in_batched), *tree_util.tree_unflatten(arg_tree, args))
    flat_out, out_tree = tree_util.tree_flatten(out)
    flat_batched, batched_tree = tree_util.tree_flatten(out_batched)
    name = rule.__name__
    if out_tree != batched_tree:
        raise ValueError(
            f"structure of output value and output batching specification returned by custom vmap rule ({name}) "
            f"do not match.\nOutput values: {out_tree}\nBatching spec: {batched_tree}"
        )
    if out_tree != params["out_tree"]:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({name}) does not match that of original "
            f"custom-vmapped function.\nOriginal output: {params['out_tree']}\nRule output: {out_tree}"
        )
    return flat_out, [0 if b else None for b in flat_batched]


ad.trace_jvp_rules[custom_vmap_call_p] = _custom_vmap_call_jvp
batching.trace_batch_rules[custom_vmap_call_p] = _custom_vmap_call_batch
