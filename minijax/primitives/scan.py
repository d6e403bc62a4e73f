"""``scan``: a loop over the leading axis of arrays, as one equation.

``scan(*consts, *init, *xs, jaxpr=body, length=n, num_consts=nc, num_carry=nk,
reverse=r, unroll=u)`` evaluates ``body(*consts, *carry, *x_i) -> (*carry, *y_i)``
for ``i = 0 .. n-1`` (``n-1 .. 0`` when reversed), threading ``carry`` from
``init`` and stacking the ``y_i`` into ``ys``; it returns ``(*carry, *ys)``.
``unroll`` only says how many iterations a backend may run per loop trip.

The rules, each as JAX 0.10.2 has them (``spec/primitives/scan.md``):

- jvp: one scan of the body's jvp, its tangent carries chosen by a fixpoint
  (a carry's tangent is nonzero when its initial tangent is, or when the
  body makes it so).
- linearize: a *known* scan computes the outputs and stacks each
  iteration's residuals; residuals that only depend on the constants are
  computed once before the loop (the body is partially evaluated with the
  constants known). A *tangent* scan, staged on the tangent side, applies the
  body's linear map, reading the loop-invariant residuals as constants and the
  stacked ones as ``xs``.
- transpose: a scan in the other direction of the transposed body; the
  cotangents of the linear constants are accumulated in its carry.
- batching: a scan of the batched body; a carry becomes batched from the start
  when the body batches it (fixpoint); ``xs`` and ``ys`` are batched along
  axis 1.

The jaxpr is the same size whatever the trip count. Both backends evaluate it
as a loop (``backends/minijax_numpy/scan.py``, ``backends/minijax_xla/scan.py``).
``lax.scan`` and ``lax.map`` (minijax/lax/control_flow/scan.py) build it.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import core
from minijax.array import Array
from minijax.backend import default_device_of
from minijax.core import ShapedArray, Trace, Tracer, get_aval, set_current_trace
from minijax.dispatch import eager_rules
from minijax.interpreters import ad, batching
from minijax.interpreters.ad import JVPTrace, UndefinedPrimal, Zero, is_undefined_primal
from minijax.interpreters.tracing import DynamicJaxprTracer, hoist_tracer_consts, trace_to_jaxpr
from minijax.jaxpr import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Var,
    bind_equation,
    eval_jaxpr,
)
from minijax.jaxpr_passes import consts_as_inputs, dce_closed_jaxpr, dce_jaxpr, has_effects, typematch
from minijax.primitives.common import standard_primitive

__all__ = ["bind_scan", "mapped_aval", "scan_p", "split_list", "unmapped_aval"]

# ---------------------------------------------------------------------------
# The primitive


def _avals_short(avals: Sequence[ShapedArray]) -> str:
    return " ".join(a.str_short() for a in avals)


def split_list(xs: Sequence[Any], *sizes: int) -> list[list[Any]]:
    """``xs`` cut into consecutive pieces of ``sizes``, and the rest."""
    parts, start = [], 0
    for n in sizes:
        parts.append(list(xs[start : start + n]))
        start += n
    parts.append(list(xs[start:]))
    return parts


def unmapped_aval(length: int, aval: ShapedArray) -> ShapedArray:
    return aval.update(shape=(length, *aval.shape))


def mapped_aval(aval: ShapedArray) -> ShapedArray:
    return aval.update(shape=aval.shape[1:])


def _scan_abstract_eval(
    *avals: ShapedArray, reverse: bool, length: int, num_consts: int, num_carry: int, jaxpr: ClosedJaxpr, unroll: int
) -> list[ShapedArray]:
    if not isinstance(jaxpr, ClosedJaxpr):  # scan C1
        raise TypeError(f"scan param jaxpr must be a ClosedJaxpr, got {type(jaxpr).__name__}")
    for name, value in (("length", length), ("num_consts", num_consts), ("num_carry", num_carry), ("unroll", unroll)):
        if type(value) is not int or value < 0:  # scan C1
            raise TypeError(f"scan param {name} must be a non-negative int, got {value!r}")
    if type(reverse) is not bool:  # scan C1
        raise TypeError(f"scan param reverse must be a bool, got {reverse!r}")
    if len(avals) != len(jaxpr.in_avals) or num_consts + num_carry > len(avals):  # scan C2
        raise TypeError(
            f"scan called with {len(avals)} operands but its jaxpr takes {len(jaxpr.in_avals)} inputs "
            f"(num_consts={num_consts}, num_carry={num_carry})"
        )
    if len(jaxpr.out_avals) < num_carry:  # scan C2
        raise TypeError(f"scan jaxpr returns {len(jaxpr.out_avals)} values, fewer than num_carry={num_carry}")
    consts, init, xs = split_list(avals, num_consts, num_carry)
    body_consts, body_init, body_xs = split_list(jaxpr.in_avals, num_consts, num_carry)
    carry_out, ys = split_list(jaxpr.out_avals, num_carry)
    if not all(typematch(a, b) for a, b in zip(body_init, carry_out)):  # scan C3
        raise TypeError(
            f"scan input carry input and output types mismatch:\n{_avals_short(body_init)}\nvs\n{_avals_short(carry_out)}"
        )
    if not all(typematch(a, b) for a, b in zip(body_consts, consts)):  # scan C4
        raise TypeError(
            f"scan jaxpr takes input const types\n{_avals_short(body_consts)},\ncalled with consts of type\n{_avals_short(consts)}"
        )
    if not all(typematch(a, b) for a, b in zip(body_init, init)):  # scan C4
        raise TypeError(
            f"scan jaxpr takes input carry types\n{_avals_short(body_init)},\n"
            f"called with initial carry of type\n{_avals_short(init)}"
        )
    if not all(x.ndim >= 1 and x.shape[0] == length and typematch(b, mapped_aval(x)) for b, x in zip(body_xs, xs)):  # scan C5
        raise TypeError(
            f"scan jaxpr takes input sequence types\n{_avals_short(body_xs)},\n"
            f"called with sequences of type\n{_avals_short(xs)} (each with leading axis of length {length})"
        )
    return [*carry_out, *(unmapped_aval(length, y) for y in ys)]  # scan C6


scan_p = standard_primitive("scan", _scan_abstract_eval, multiple_results=True)


def bind_scan(
    consts: Sequence[Any], init: Sequence[Any], xs: Sequence[Any], jaxpr: ClosedJaxpr, length: int, reverse: bool, unroll: int
) -> list[Any]:
    """Bind ``scan`` on the current trace. Constants of ``jaxpr`` that are tracers
    (of an enclosing transformation) become leading ``consts`` operands."""
    jaxpr, tracer_consts = hoist_tracer_consts(jaxpr)
    consts = [*tracer_consts, *consts]
    out: list[Any] = scan_p.bind(
        *consts, *init, *xs,
        reverse=reverse, length=length, num_consts=len(consts), num_carry=len(init), jaxpr=jaxpr, unroll=unroll,
    )  # fmt: skip
    return out


# ---------------------------------------------------------------------------
# Eager evaluation: compile the one equation (a loop) and run it

# Each lax.scan call traces a new body, so compiled scans are rarely reused;
# the few most recent are kept (the key holds the body, so its id stays its own).
_EAGER_CACHE_SIZE = 32
_eager_cache: collections.OrderedDict[tuple[Any, ...], tuple[ClosedJaxpr, Any]] = collections.OrderedDict()


def _scan_eager(backend: Any, arrays: Sequence[Array], params: dict[str, Any]) -> list[Array]:
    device = arrays[0]._device if arrays else default_device_of(backend)
    committed = any(a._committed for a in arrays)
    in_avals = [a.aval for a in arrays]
    out_avals = _scan_abstract_eval(*in_avals, **params)
    key = (id(params["jaxpr"]), *sorted((k, v) for k, v in params.items() if k != "jaxpr"), *in_avals, device)
    entry = _eager_cache.get(key)
    if entry is None or entry[0] is not params["jaxpr"]:
        invars = [Var(a) for a in in_avals]
        outvars = [Var(a) for a in out_avals]
        closed = ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(list(invars), outvars, scan_p, dict(params))]), [])
        if device is backend.devices()[0]:
            executable = backend.compile(closed)
        else:
            executable = backend.compile(closed, device=device)  # type: ignore[call-arg]
        entry = _eager_cache[key] = (params["jaxpr"], executable)
        if len(_eager_cache) > _EAGER_CACHE_SIZE:
            _eager_cache.popitem(last=False)
    else:
        _eager_cache.move_to_end(key)
    bufs = entry[1]([a._buf for a in arrays])
    return [Array(b, aval, backend, device, committed) for b, aval in zip(bufs, out_avals)]


eager_rules[scan_p] = _scan_eager


# ---------------------------------------------------------------------------
# Jaxpr utilities the rules share


def _dce_scan(
    closed: ClosedJaxpr, num_consts: int, num_carry: int, used_outputs: Sequence[bool]
) -> tuple[ClosedJaxpr, list[bool], list[bool]]:
    """A scan body keeping only what the used outputs need: (body, used inputs, used outputs).

    A carry is kept when its output is used or when its value flows into a
    kept output (a fixpoint: keeping one carry may need another).
    """
    used_carry, used_ys = split_list(used_outputs, num_carry)
    jaxpr = closed.jaxpr
    for _ in range(1 + num_carry):
        pruned, used_in = dce_jaxpr(jaxpr, [*used_carry, *used_ys])
        reads_carry = split_list(used_in, num_consts, num_carry)[1]
        if all(u or not r for u, r in zip(used_carry, reads_carry)):
            break
        used_carry = [u or r for u, r in zip(used_carry, reads_carry)]
    used_consts, _, used_xs = split_list(used_in, num_consts, num_carry)
    used_inputs = [*used_consts, *used_carry, *used_xs]
    new = Jaxpr(pruned.constvars, [v for v, u in zip(jaxpr.invars, used_inputs) if u], pruned.outvars, pruned.eqns)
    return ClosedJaxpr(new, closed.consts), used_inputs, [*used_carry, *used_ys]


def _permuted(closed: ClosedJaxpr, in_order: Sequence[int], out_order: Sequence[int]) -> ClosedJaxpr:
    """``closed`` with its inputs and outputs taken in the given orders."""
    jaxpr = closed.jaxpr
    new = Jaxpr(jaxpr.constvars, [jaxpr.invars[i] for i in in_order], [jaxpr.outvars[i] for i in out_order], jaxpr.eqns)
    return ClosedJaxpr(new, closed.consts)


def _retyped_inputs(jaxpr: Jaxpr, avals: Sequence[ShapedArray | None]) -> Jaxpr:
    """``jaxpr`` whose inputs have the given types (None: unchanged), read by its equations."""
    subst: dict[Var, Var] = {}
    for v, a in zip(jaxpr.invars, avals):
        if a is not None and a != v.aval:
            subst[v] = Var(a)
    if not subst:
        return jaxpr

    def sub(x: Any) -> Any:
        return subst.get(x, x) if isinstance(x, Var) else x

    eqns = [e.replace(invars=[sub(a) for a in e.invars]) for e in jaxpr.eqns]
    return Jaxpr(jaxpr.constvars, [sub(v) for v in jaxpr.invars], [sub(v) for v in jaxpr.outvars], eqns)


def _groups(*sizes: int) -> list[list[int]]:
    """Consecutive index ranges of the given sizes: ``(2, 1) -> [[0, 1], [2]]``."""
    out, start = [], 0
    for n in sizes:
        out.append(list(range(start, start + n)))
        start += n
    return out


def _or(a: Sequence[bool], b: Sequence[bool]) -> list[bool]:
    return [x or y for x, y in zip(a, b)]


# ---------------------------------------------------------------------------
# jvp


def _scan_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    nonzeros = [type(t) is not Zero for t in tangents]
    const_nz, init_nz, xs_nz = split_list(nonzeros, num_consts, num_carry)
    if trace.linearizing:
        return _scan_linearize(trace, primals, tangents, const_nz, init_nz, xs_nz, params)
    num_ys = len(jaxpr.out_avals) - num_carry
    carry_nz = init_nz
    for _ in range(1 + num_carry):
        jvp_closed, out_nz = ad.jvp_jaxpr(jaxpr, [*const_nz, *carry_nz, *xs_nz], instantiate=[*carry_nz, *[False] * num_ys])
        if out_nz[:num_carry] == carry_nz:
            break
        carry_nz = _or(carry_nz, out_nz[:num_carry])
    num_xs = len(jaxpr.in_avals) - num_consts - num_carry
    # jvp_jaxpr takes (primals, nonzero tangents): reorder to (consts, their
    # tangents, carry, its tangents, xs, their tangents), and likewise the outputs.
    c, k, x, dc, dk, dx = _groups(num_consts, num_carry, num_xs, sum(const_nz), sum(carry_nz), sum(xs_nz))
    n_dk_out = sum(carry_nz)
    k_out, y_out, dk_out, dy_out = _groups(num_carry, num_ys, n_dk_out, sum(out_nz) - n_dk_out)
    body = _permuted(jvp_closed, [*c, *dc, *k, *dk, *x, *dx], [*k_out, *dk_out, *y_out, *dy_out])
    consts, init, xs = split_list(primals, num_consts, num_carry)
    consts_dot, init_dot, xs_dot = split_list(tangents, num_consts, num_carry)
    with set_current_trace(trace.parent):
        init_dot = [ad.instantiate_zeros(t) for t, nz in zip(init_dot, carry_nz) if nz]
        outs = bind_scan(
            [*consts, *(t for t in consts_dot if type(t) is not Zero)],
            [*init, *init_dot],
            [*xs, *(t for t in xs_dot if type(t) is not Zero)],
            body, params["length"], params["reverse"], params["unroll"],
        )  # fmt: skip
    carry, carry_dot, ys, ys_dot = split_list(outs, num_carry, n_dk_out, num_ys)
    out_tangents = iter([*carry_dot, *ys_dot])
    return [
        trace.wrap(p, next(out_tangents) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip([*carry, *ys], jaxpr.out_avals, out_nz)
    ]


ad.trace_jvp_rules[scan_p] = _scan_jvp


# ---------------------------------------------------------------------------
# Linearize


class _LinearizedBody:
    """The body split in two by linearization (JAX's ``linearize_jaxpr``).

    ``known`` maps (consts, carry, x) to (outputs, the residuals it computes);
    ``tangent`` maps (residuals, nonzero tangents) to the nonzero output
    tangents, those that ``instantiate`` asks for included. ``sources`` says
    where each residual comes from: ``("input", i)`` a ``forwardable`` input
    of the body (not stored again), ``("computed", k)`` the k-th residual
    output of ``known`` (other inputs included), or ``("value", v)`` a
    constant the rules made.

    A zero tangent that must be instantiated is made on the primal side (an
    array of zeros is then a residual, hoisted out of the loop; a scalar zero
    is a literal), and the tangent jaxpr keeps no dead code, as in JAX.
    """

    def __init__(self, body: ClosedJaxpr, forwardable: Sequence[bool], nonzeros: Sequence[bool], instantiate: Sequence[bool]) -> None:
        box: list[tuple[ad.LinearFunction, ClosedJaxpr, list[Any], list[Any], list[tuple[str, Any]]]] = []

        def known(*xs: Any) -> list[Any]:
            known_trace = core.current_trace()
            outs, lin = ad.linearize_flat(functools.partial(eval_jaxpr, body.jaxpr, body.consts), xs, linear=nonzeros)
            tangent = dce_closed_jaxpr(lin.jaxpr)
            zeros = ad.instantiated_zeros(lin, instantiate)
            residuals = [*tangent.consts, *(z for z in zeros if isinstance(z, Tracer))]
            position = {id(x): i for i, x in enumerate(xs)}
            sources: list[tuple[str, Any]] = []
            computed: list[Any] = []
            for r in residuals:
                i = position.get(id(r))
                if i is not None and forwardable[i]:
                    sources.append(("input", i))
                elif isinstance(r, DynamicJaxprTracer) and r._trace is known_trace:
                    sources.append(("computed", len(computed)))
                    computed.append(r)
                else:
                    sources.append(("value", r))
            box.append((lin, tangent, zeros, residuals, sources))
            return [*outs, *computed]

        self.known, _ = trace_to_jaxpr(known, body.in_avals)
        lin, self.tangent, self.zeros, residuals, self.sources = box[0]
        self.res_avals = [get_aval(r) for r in residuals]
        self.out_zeros = lin.out_zeros
        self.out_nz = [not z or i for z, i in zip(lin.out_zeros, instantiate)]
        self.num_out = len(body.out_avals)

    def tangent_body(self, in_order: Sequence[tuple[str, int]], tangent_avals: Sequence[ShapedArray]) -> ClosedJaxpr:
        """The tangent map as one jaxpr taking its arguments in ``in_order``:
        ``("res", i)`` for residual i, ``("tangent", j)`` for nonzero tangent j."""
        lin_jaxpr, n_lin_res = self.tangent.jaxpr, len(self.tangent.consts)
        avals = [self.res_avals[i] if kind == "res" else tangent_avals[i] for kind, i in in_order]

        def tangent(*args: Any) -> list[Any]:
            res: list[Any] = [None] * len(self.res_avals)
            tangents: list[Any] = [None] * len(tangent_avals)
            for (kind, i), x in zip(in_order, args):
                (res if kind == "res" else tangents)[i] = x
            computed = iter(eval_jaxpr(lin_jaxpr, res[:n_lin_res], *tangents))
            return ad.tangent_outputs(self.out_zeros, self.zeros, computed, iter(res[n_lin_res:]))

        closed, _ = trace_to_jaxpr(tangent, avals)
        return closed


def _hoist_invariants(
    known: ClosedJaxpr, consts: Sequence[Any], num_primal_out: int, parent: Trace
) -> tuple[ClosedJaxpr, list[Any], list[bool], list[Any]]:
    """Move what depends only on the constants out of the loop (JAX's known-scan hoisting).

    ``known`` takes (consts, carry, x) and returns (outputs, residuals). Its
    equations that read only constants run once, now, on ``parent``; the
    others are staged into the loop body. Returns that body, taking
    (its new constants, carry, x) and returning (outputs, the residuals
    that vary per iteration); the new constants; which residuals were
    hoisted; and the hoisted residuals' values.
    """
    num_consts = len(consts)
    box: list[tuple[list[bool], list[Any]]] = []

    def loop(*carry_x: Any) -> list[Any]:
        loop_trace = core.current_trace()

        def in_loop(x: Any) -> bool:
            return isinstance(x, Tracer) and x._trace is loop_trace

        def bind(eqn: JaxprEqn, args: Sequence[Any]) -> Any:
            if has_effects(eqn) or any(in_loop(x) for x in args):
                return bind_equation(eqn, args)
            with set_current_trace(parent):  # it reads only constants: once, before the loop
                return bind_equation(eqn, args)

        outs = eval_jaxpr(known.jaxpr, known.consts, *consts, *carry_x, bind=bind)
        residuals = outs[num_primal_out:]
        hoisted = [not in_loop(r) for r in residuals]
        box.append((hoisted, [r for r, h in zip(residuals, hoisted) if h]))
        return outs[:num_primal_out] + [r for r, h in zip(residuals, hoisted) if not h]

    closed, _ = trace_to_jaxpr(loop, known.in_avals[num_consts:])
    body, new_consts = consts_as_inputs(dce_closed_jaxpr(closed))
    hoisted, values = box[0]
    return body, new_consts, hoisted, values


def _scan_linearize(
    trace: JVPTrace,
    primals: Sequence[Any],
    tangents: Sequence[Any],
    const_nz: list[bool],
    init_nz: list[bool],
    xs_nz: list[bool],
    params: dict[str, Any],
) -> list[Any]:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    length, reverse, unroll = params["length"], params["reverse"], params["unroll"]
    num_ys = len(jaxpr.out_avals) - num_carry
    num_out = num_carry + num_ys
    # A residual that is a constant or an ``x`` is read from the operand, not
    # stored again -- unless the operand is a NumPy array (as in JAX); a carry
    # changes every iteration, so it is always stored.
    forwardable = [
        not num_consts <= i < num_consts + num_carry and not isinstance(p, np.ndarray) for i, p in enumerate(primals)
    ]
    carry_nz = init_nz
    for _ in range(1 + num_carry):
        body = _LinearizedBody(jaxpr, forwardable, [*const_nz, *carry_nz, *xs_nz], [*carry_nz, *[False] * num_ys])
        if body.out_nz[:num_carry] == carry_nz:
            break
        carry_nz = _or(carry_nz, body.out_nz[:num_carry])
    consts, init, xs = split_list(primals, num_consts, num_carry)

    # The known scan: loop-invariant work hoisted before it, residuals that
    # vary per iteration stacked as extra ``ys``.
    loop, loop_consts, hoisted, hoisted_values = _hoist_invariants(body.known, consts, num_out, trace.parent)
    with set_current_trace(trace.parent):
        outs = bind_scan(loop_consts, init, xs, loop, length, reverse, unroll) if loop.out_avals else []
    primal_outs, stacked = outs[:num_out], iter(outs[num_out:])
    hoisted_iter, hoisted_values_iter = iter(hoisted), iter(hoisted_values)

    # Each residual is loop-invariant (a constant of the tangent scan) or one
    # value per iteration (an ``x`` of the tangent scan).
    res_values: list[Any] = []
    res_extensive: list[bool] = []
    for kind, where in body.sources:
        if kind == "input":
            extensive = where >= num_consts + num_carry
            res_values.append(xs[where - num_consts - num_carry] if extensive else consts[where])
        elif kind == "computed":
            extensive = not next(hoisted_iter)
            res_values.append(next(stacked) if extensive else next(hoisted_values_iter))
        else:
            extensive = False
            res_values.append(where)
        res_extensive.append(extensive)

    nzs = [*const_nz, *carry_nz, *xs_nz]
    tangent_avals = [ad.tangent_aval(a) for a, nz in zip(jaxpr.in_avals, nzs) if nz]
    n_dc, n_dk = sum(const_nz), sum(carry_nz)
    intensive = [("res", i) for i, e in enumerate(res_extensive) if not e]
    extensive = [("res", i) for i, e in enumerate(res_extensive) if e]
    tangent_order = [("tangent", j) for j in range(len(tangent_avals))]
    tangent_body = body.tangent_body([*intensive, *tangent_order, *extensive], tangent_avals)
    if not tangent_body.out_avals:
        return [trace.wrap(p, Zero(ad.tangent_aval(a))) for p, a in zip(primal_outs, jaxpr.out_avals)]

    with set_current_trace(trace.tangent_side):
        nz_tangents = [ad.instantiate_zeros(t) for t, nz in zip(tangents, nzs) if nz]
        dc, dk, dx = split_list(nz_tangents, n_dc, n_dk)
        tangent_outs = iter(
            bind_scan(
                [*(res_values[i] for _, i in intensive), *dc],
                dk,
                [*dx, *(res_values[i] for _, i in extensive)],
                tangent_body, length, reverse, unroll,
            )  # fmt: skip
        )
    return [
        trace.wrap(p, next(tangent_outs) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip(primal_outs, jaxpr.out_avals, body.out_nz)
    ]


# ---------------------------------------------------------------------------
# Transpose


def _scan_transpose(
    cts: Sequence[Any], *args: Any, reverse: bool, length: int, num_consts: int, num_carry: int, jaxpr: ClosedJaxpr, unroll: int
) -> list[Any]:
    # What no nonzero cotangent needs is dropped first (JAX removes it as dead
    # code before transposing): a y with a zero cotangent, a carry that
    # reaches none of the rest, and the operands they alone read.
    body, used_in, used_out = _dce_scan(jaxpr, num_consts, num_carry, [type(ct) is not Zero for ct in cts])
    consts, init, xs = split_list(args, num_consts, num_carry)
    used_consts, used_init, used_xs = split_list(used_in, num_consts, num_carry)
    used_carry, used_ys = split_list(used_out, num_carry)
    consts = [c for c, u in zip(consts, used_consts) if u]
    init = [c for c, u in zip(init, used_init) if u]
    xs = [x for x, u in zip(xs, used_xs) if u]
    ct_carry = [ct for ct, u in zip(cts[:num_carry], used_carry) if u]
    ct_ys = [ct for ct, u in zip(cts[num_carry:], used_ys) if u]
    n_c, n_k = len(consts), len(init)

    # Constants split into residuals and linear ones, xs into linear ones and
    # residuals; every carry is linear (a known carry is an instantiated zero
    # tangent, whose cotangent is not wanted).
    const_lin = [is_undefined_primal(c) for c in consts]
    xs_lin = [is_undefined_primal(x) for x in xs]
    ires = [c for c, lin in zip(consts, const_lin) if not lin]
    eres = [x for x, lin in zip(xs, xs_lin) if not lin]
    # The cotangents carried around the loop: those of the linear constants
    # (accumulated from zero), then those of the carries. As in JAX, their
    # types are those of these initial values.
    ct_carry = [ad.instantiate_zeros(ct) for ct in ct_carry]
    acc_init = [ad.zeros_like_aval(c.aval) for c, lin in zip(consts, const_lin) if lin]
    acc_avals = [get_aval(z) for z in acc_init]
    ct_carry_avals = [get_aval(ct) for ct in ct_carry]
    lin_xs_avals = [mapped_aval(x.aval) for x, lin in zip(xs, xs_lin) if lin]
    # Each accumulator starts the backward pass as the cotangent of its
    # constant, so every contribution is added to it where it arises.
    # The linear inputs take those types too (the transpose rules read them).
    acc_it, xs_it = iter(acc_avals), iter(lin_xs_avals)
    retyped = _retyped_inputs(body.jaxpr, [
        *(next(acc_it) if lin else None for lin in const_lin), *ct_carry_avals,
        *(next(xs_it) if lin else None for lin in xs_lin),
    ])  # fmt: skip
    const_vars = [v for v, lin in zip(retyped.invars[:n_c], const_lin) if lin]
    seeded = Jaxpr(retyped.constvars, retyped.invars, [*retyped.outvars, *const_vars], retyped.eqns)

    def transposed(*targs: Any) -> list[Any]:
        res, acc, ct_k, ct_y, eres_x = split_list(targs, len(ires), len(acc_init), n_k, len(ct_ys))
        res_it, eres_it, acc_it, xs_it = iter(res), iter(eres_x), iter(acc_avals), iter(lin_xs_avals)
        primals = [
            *(UndefinedPrimal(next(acc_it)) if lin else next(res_it) for lin in const_lin),
            *(UndefinedPrimal(a) for a in ct_carry_avals),
            *(UndefinedPrimal(next(xs_it)) if lin else next(eres_it) for lin in xs_lin),
        ]
        cts_in = ad.backward_pass(seeded, body.consts, primals, [*ct_k, *ct_y, *acc])
        ct_consts, ct_init, ct_xs = split_list(cts_in, n_c, n_k)
        new_acc = [ct for ct, lin in zip(ct_consts, const_lin) if lin]
        ct_xs = [ct for ct, lin in zip(ct_xs, xs_lin) if lin]
        return [*new_acc, *(ad.instantiate_zeros(ct) for ct in [*ct_init, *ct_xs])]

    in_avals = [
        *(get_aval(r) for r in ires), *acc_avals, *ct_carry_avals, *(mapped_aval(get_aval(ct)) for ct in ct_ys),
        *(mapped_aval(get_aval(x)) for x in eres),
    ]  # fmt: skip
    t_body, _ = trace_to_jaxpr(transposed, in_avals)
    outs = bind_scan(ires, [*acc_init, *ct_carry], [*ct_ys, *eres], t_body, length, not reverse, unroll)
    ct_consts_out, ct_init_out, ct_xs_out = split_list(outs, len(acc_init), n_k)

    # One cotangent per operand: None for residuals (and known carries), Zero
    # for linear operands nothing reached.
    results: list[Any] = []
    it_consts, it_init, it_xs = iter(ct_consts_out), iter(ct_init_out), iter(ct_xs_out)
    for a, u in zip(args[:num_consts], used_consts):
        results.append(None if not is_undefined_primal(a) else next(it_consts) if u else Zero(a.aval))
    for a, u in zip(args[num_consts : num_consts + num_carry], used_init):
        ct = next(it_init) if u else Zero(get_aval(a) if not is_undefined_primal(a) else a.aval)
        results.append(ct if is_undefined_primal(a) else None)
    for a, u in zip(args[num_consts + num_carry :], used_xs):
        results.append(None if not is_undefined_primal(a) else next(it_xs) if u else Zero(a.aval))
    return results


ad.transpose_rules[scan_p] = _scan_transpose


# ---------------------------------------------------------------------------
# Batching


def _scan_batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    size, name = trace.axis_size, trace.axis_name
    num_ys = len(jaxpr.out_avals) - num_carry
    const_b, init_b, xs_b = split_list([d is not None for d in dims], num_consts, num_carry)
    # Inside the body every batched value has its batch axis first.
    carry_b = init_b
    for _ in range(1 + num_carry):
        in_dims: list[batching.BatchDim] = [0 if b else None for b in [*const_b, *carry_b, *xs_b]]
        _, found = batching.batch_jaxpr(jaxpr, size, in_dims, axis_name=name)
        carry_b_out = [d is not None for d in found[:num_carry]]
        if all(b or not o for b, o in zip(carry_b, carry_b_out)):
            break
        carry_b = _or(carry_b, carry_b_out)
    ys_b = [d is not None for d in found[num_carry:]]
    if not any([*const_b, *carry_b, *xs_b, *ys_b]):
        # Nothing is batched, not even through a collective in the body.
        return scan_p.bind(*vals, **params), [None] * (num_carry + num_ys)
    out_dims: list[batching.BatchDim] = [0 if b else None for b in [*carry_b, *ys_b]]
    body, _ = batching.batch_jaxpr(jaxpr, size, in_dims, out_dims, axis_name=name)
    consts, init, xs = split_list(vals, num_consts, num_carry)
    consts_d, init_d, xs_d = split_list(dims, num_consts, num_carry)
    consts = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(consts, consts_d)]
    init = [batching.broadcast(x, size, 0) if b and d is None else x if d is None else batching.moveaxis(x, d, 0) for x, d, b in zip(init, init_d, carry_b)]
    xs = [x if d is None else batching.moveaxis(x, d, 1) for x, d in zip(xs, xs_d)]
    outs = bind_scan(consts, init, xs, body, params["length"], params["reverse"], params["unroll"])
    return outs, [*(0 if b else None for b in carry_b), *(1 if b else None for b in ys_b)]


batching.trace_batch_rules[scan_p] = _scan_batch
