"""``while``: apply a body jaxpr to a carry while a predicate jaxpr of it holds, as one equation.

::

    outs = while[body_jaxpr body_nconsts cond_jaxpr cond_nconsts] *cond_consts *body_consts *carry

Constants the functions close over are leading operands: ``cond_nconsts`` of
them for ``cond_jaxpr``, then ``body_nconsts`` for ``body_jaxpr``.
``lax.while_loop`` and ``lax.fori_loop`` (minijax/lax/control_flow/while_loop.py)
build it.

The predicate is a boolean scalar, except after ``vmap`` with a batched
predicate: then ``cond_jaxpr`` returns a boolean array whose shape is a prefix
of every carry's shape, the loop runs while any element is true, and the body's
result is kept only where the predicate is true (finished lanes stay as they
are). The backends implement that meaning (``while`` C4 in
spec/primitives/while_loop.md), so the jaxprs stay JAX's.

The rules, as JAX has them:

- jvp: one ``while`` over (primal, tangent) carries; which carries have a
  nonzero tangent is a fixpoint over the body.
- linearize: a ``while`` of the primal computation on the primal side, and the
  whole jvp ``while`` staged on the tangent side (its primal operands become
  residuals): ``jax.linearize`` and forward evaluation work;
- transpose: the staged ``while`` cannot be transposed (its trip count is not
  known ahead), so ``grad`` raises JAX's ValueError;
- batching: a batched predicate batches every carry and keeps iterating while
  any lane is unfinished; an unbatched one keeps one loop of the batched body.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax.array import Array
from minijax.backend import Backend, default_device_of
from minijax.core import ShapedArray, set_current_trace
from minijax.dispatch import eager_rules
from minijax.interpreters import ad, batching
from minijax.interpreters.ad import JVPTrace, Zero
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.jaxpr import Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, eval_closed_jaxpr
from minijax.jaxpr_passes import typematch as _typematch
from minijax.primitives.common import standard_primitive

__all__ = ["split3", "while_p"]

# ---------------------------------------------------------------------------
# The primitive


def split3(xs: Sequence[Any], n1: int, n2: int) -> tuple[list[Any], list[Any], list[Any]]:
    """``xs`` as (the first ``n1``, the next ``n2``, the rest): cond constants, body constants, carry."""
    return list(xs[:n1]), list(xs[n1 : n1 + n2]), list(xs[n1 + n2 :])


def _short(avals: Sequence[ShapedArray]) -> str:
    return ", ".join(a.str_short() for a in avals)


def _while_abstract_eval(
    *avals: ShapedArray, cond_jaxpr: Any, body_jaxpr: Any, cond_nconsts: Any, body_nconsts: Any
) -> list[ShapedArray]:
    if not (isinstance(cond_jaxpr, ClosedJaxpr) and isinstance(body_jaxpr, ClosedJaxpr)):  # while C1
        raise TypeError("while: cond_jaxpr and body_jaxpr must be ClosedJaxprs")
    counts_ok = all(type(n) is int and n >= 0 for n in (cond_nconsts, body_nconsts))
    if not counts_ok or cond_nconsts + body_nconsts > len(avals):
        raise TypeError(  # while C1
            f"while: cond_nconsts={cond_nconsts} and body_nconsts={body_nconsts} must be non-negative "
            f"ints counting leading operands, of which there are {len(avals)}"
        )
    cconsts, bconsts, carry = split3(avals, cond_nconsts, body_nconsts)
    for name, jaxpr, consts in (("cond_jaxpr", cond_jaxpr, cconsts), ("body_jaxpr", body_jaxpr, bconsts)):
        expected = [*consts, *carry]
        if len(jaxpr.in_avals) != len(expected) or not all(map(_typematch, jaxpr.in_avals, expected)):  # while C2
            raise TypeError(
                f"while: {name} takes ({_short(jaxpr.in_avals)}) but is given its constants and the carry "
                f"({_short(expected)})"
            )
    outs: list[ShapedArray] = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(map(_typematch, outs, carry)):  # while C3
        raise TypeError(f"while: body_jaxpr returns ({_short(outs)}) but the carry is ({_short(carry)})")
    preds = cond_jaxpr.out_avals
    prefix = preds[0].shape if preds else ()
    if len(preds) != 1 or preds[0].dtype != np.bool_ or any(c.shape[: len(prefix)] != prefix for c in carry):
        raise TypeError(  # while C4
            f"while: cond_jaxpr must return one boolean whose shape is a prefix of every carry's shape "
            f"(a scalar unless batched), got ({_short(preds)}) for a carry ({_short(carry)})"
        )
    return outs  # while C5: the body's output types, weak types included


while_p = standard_primitive("while", _while_abstract_eval, multiple_results=True)


def _while_eager(backend: Backend, arrays: Sequence[Array], params: dict[str, Any]) -> list[Array]:
    # Each while_loop call traces new jaxprs, so a compiled program would
    # never be reused: compile this one equation for this call, and keep
    # nothing (the dispatch caches would hold every call's program alive).
    in_avals = [a.aval for a in arrays]
    out_avals = _while_abstract_eval(*in_avals, **params)
    invars, outvars = [Var(a) for a in in_avals], [Var(a) for a in out_avals]
    closed = ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(list(invars), outvars, while_p, dict(params))]), [])
    device = arrays[0]._device if arrays else default_device_of(backend)
    if device is backend.devices()[0]:
        run = backend.compile(closed)
    else:
        run = backend.compile(closed, device=device)  # type: ignore[call-arg]
    committed = any(a._committed for a in arrays)
    bufs = run([a._buf for a in arrays])
    return [Array(b, aval, backend, device, committed) for b, aval in zip(bufs, out_avals)]


eager_rules[while_p] = _while_eager


# ---------------------------------------------------------------------------
# Autodiff


def _carry_nonzeros(body: ClosedJaxpr, bconst_nz: list[bool], init_nz: list[bool]) -> list[bool]:
    """Which carries have a nonzero tangent in some iteration: the least fixpoint over the body."""
    carry_nz = list(init_nz)
    for _ in range(len(carry_nz) + 1):
        _, out_nz = ad.jvp_jaxpr(body, bconst_nz + carry_nz, instantiate=carry_nz)
        grown = [a or b for a, b in zip(carry_nz, out_nz)]
        if grown == carry_nz:
            return carry_nz
        carry_nz = grown
    raise RuntimeError("while jvp: the nonzero-tangent fixpoint did not converge")  # each round grows the set


def _while_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    cond_jaxpr: ClosedJaxpr = params["cond_jaxpr"]
    body_jaxpr: ClosedJaxpr = params["body_jaxpr"]
    n_cc, n_bc = params["cond_nconsts"], params["body_nconsts"]
    nonzeros = [type(t) is not Zero for t in tangents]
    _, bconst_nz, init_nz = split3(nonzeros, n_cc, n_bc)
    carry_nz = _carry_nonzeros(body_jaxpr, bconst_nz, init_nz)
    cconsts, bconsts, init = split3(primals, n_cc, n_bc)
    n_carry = len(init)
    if not any(bconst_nz) and not any(carry_nz):  # only the predicate's constants vary
        with set_current_trace(trace.parent):
            return list(while_p.bind(*primals, **params))
    body_jvp, _ = ad.jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, instantiate=carry_nz)
    n_bdot = sum(bconst_nz)
    # jvp_jaxpr takes (consts, carry, const tangents, carry tangents); the
    # while needs the constants first: (consts, const tangents, carry, carry tangents).
    jvp = body_jvp.jaxpr
    bconsts_in = jvp.invars[:n_bc]
    carry_in, bconst_dots_in, carry_dots_in = split3(jvp.invars[n_bc:], n_carry, n_bdot)
    reordered = [*bconsts_in, *bconst_dots_in, *carry_in, *carry_dots_in]
    body_jvp = ClosedJaxpr(Jaxpr(jvp.constvars, reordered, jvp.outvars, jvp.eqns), body_jvp.consts)
    carry_avals = body_jaxpr.out_avals
    # The predicate reads only the primal carry; it takes the tangents and ignores them.
    extra = [ad.tangent_aval(a) for a, nz in zip(carry_avals, carry_nz) if nz]
    cond_jvp = ClosedJaxpr(_renamed(cond_jaxpr.jaxpr, extra), cond_jaxpr.consts)
    _, bconst_t, init_t = split3(tangents, n_cc, n_bc)
    bconst_dot = [t for t in bconst_t if type(t) is not Zero]
    with set_current_trace(trace.parent):  # a zero tangent that must be carried is made on the primal side
        init_dot = [ad.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz) if nz]
    jvp_params = dict(cond_jaxpr=cond_jvp, body_jaxpr=body_jvp, cond_nconsts=n_cc, body_nconsts=n_bc + n_bdot)
    operands = [*cconsts, *bconsts, *bconst_dot, *init, *init_dot]
    if not trace.linearizing:
        with set_current_trace(trace.parent):
            outs = while_p.bind(*operands, **jvp_params)
        primal_outs = outs[:n_carry]
    else:
        # The primal loop runs on the primal side; the tangent side stages the
        # whole jvp loop, recomputing the primal carry (JAX's partial
        # evaluation of a while does the same: a loop saves no residuals).
        known = _primal_body(body_jaxpr, bconst_nz + carry_nz, carry_nz)
        with set_current_trace(trace.parent):
            primal_outs = while_p.bind(*cconsts, *bconsts, *init, **{**params, "body_jaxpr": known})
        with set_current_trace(trace.tangent_side):
            outs = while_p.bind(*operands, **jvp_params)
    out_tangents = iter(outs[n_carry:])
    return [
        trace.wrap(p, next(out_tangents) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip(primal_outs, carry_avals, carry_nz)
    ]


def _renamed(jaxpr: Jaxpr, extra_inputs: Sequence[ShapedArray]) -> Jaxpr:
    """A copy of ``jaxpr`` with variables of its own, taking ``extra_inputs`` more (unused) inputs.

    Its own variables print with names of their own, as JAX's copy does,
    when the original is printed in the same program.
    """
    env: dict[Var, Var] = {}

    def bind(v: Var) -> Var:
        new = env[v] = DropVar(v.aval) if isinstance(v, DropVar) else Var(v.aval)
        return new

    def read(a: Atom) -> Atom:
        return a if isinstance(a, Literal) else env[a]

    constvars = [bind(v) for v in jaxpr.constvars]
    invars = [*(bind(v) for v in jaxpr.invars), *(Var(a) for a in extra_inputs)]
    eqns = [JaxprEqn([read(a) for a in e.invars], [bind(v) for v in e.outvars], e.primitive, e.params)
            for e in jaxpr.eqns]  # fmt: skip
    return Jaxpr(constvars, invars, [read(a) for a in jaxpr.outvars], eqns)


def _primal_body(body: ClosedJaxpr, nonzeros: list[bool], instantiate: list[bool]) -> ClosedJaxpr:
    """The primal side of the linearized body: the primal outputs, computed with
    everything the tangents would read (JAX's known part of the jvp body)."""

    def known(*xs: Any) -> list[Any]:
        outs, lin = ad.linearize_flat(functools.partial(eval_closed_jaxpr, body), xs, linear=nonzeros)
        ad.instantiated_zeros(lin, instantiate)  # primal-side work in JAX too (the tangents themselves are unused here)
        return outs

    closed, _ = trace_to_jaxpr(known, body.in_avals)
    return closed


ad.trace_jvp_rules[while_p] = _while_jvp


def _while_transpose(cts: Any, *args: Any, **params: Any) -> list[Any]:
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
        "start/stop values. Try using lax.scan, or using fori_loop with static start/stop."
    )


ad.transpose_rules[while_p] = _while_transpose


# ---------------------------------------------------------------------------
# Batching


def _while_batch(
    trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]
) -> tuple[Any, Any]:
    cond_jaxpr: ClosedJaxpr = params["cond_jaxpr"]
    body_jaxpr: ClosedJaxpr = params["body_jaxpr"]
    n_cc, n_bc = params["cond_nconsts"], params["body_nconsts"]
    size, name = trace.axis_size, trace.axis_name
    cconst_dims, bconst_dims, init_dims = split3(dims, n_cc, n_bc)
    # Which carries are batched: those batched initially, and those the body
    # makes batched (from batched constants or other carries): a fixpoint.
    carry_bat = [d is not None for d in init_dims]
    for _ in range(len(carry_bat) + 1):
        _, out_dims = batching.batch_jaxpr(body_jaxpr, size, bconst_dims + _at(carry_bat, 0), axis_name=name)
        grown = [b or d is not None for b, d in zip(carry_bat, out_dims)]
        if grown == carry_bat:
            break
        carry_bat = grown
    _, (pred_dim,) = batching.batch_jaxpr(cond_jaxpr, size, cconst_dims + _at(carry_bat, 0), axis_name=name)
    if pred_dim is not None:
        # Lanes may finish at different iterations: every carry is batched
        # (leading), the loop runs while any lane's predicate holds, and a
        # finished lane keeps its value (the while primitive's batched predicate).
        carry_dims = _at([True] * len(carry_bat), 0)
        pred_out: list[batching.BatchDim] = [0]
    else:
        # One predicate for all lanes. After an enclosing vmap the predicate
        # may itself be an array: batched carries keep its shape as a prefix.
        carry_dims = _at(carry_bat, cond_jaxpr.out_avals[0].ndim)
        pred_out = [None]
    if all(d is None for d in (*dims, *carry_dims, *pred_out)):
        return while_p.bind(*vals, **params), [None] * len(init_dims)  # nothing batched, not even inside
    body_b, _ = batching.batch_jaxpr(body_jaxpr, size, bconst_dims + carry_dims, carry_dims, axis_name=name)
    cond_b, _ = batching.batch_jaxpr(cond_jaxpr, size, cconst_dims + carry_dims, pred_out, axis_name=name)
    consts = vals[: n_cc + n_bc]
    init = [_moved(x, d, want, size) for x, d, want in zip(vals[n_cc + n_bc :], init_dims, carry_dims)]
    outs = while_p.bind(*consts, *init, **{**params, "cond_jaxpr": cond_b, "body_jaxpr": body_b})
    return outs, carry_dims


def _moved(x: Any, dim: batching.BatchDim, want: batching.BatchDim, size: int) -> Any:
    """``x`` batched at ``want``: moved there, or broadcast when it was not batched."""
    if want is None or dim is not None:
        return x if want is None else batching.moveaxis(x, dim, want)  # type: ignore[arg-type]
    return batching.broadcast(x, size, want)


def _at(batched: Sequence[bool], dim: int) -> list[batching.BatchDim]:
    return [dim if b else None for b in batched]


batching.trace_batch_rules[while_p] = _while_batch
