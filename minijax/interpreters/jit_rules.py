"""Transformation rules of the ``jit`` primitive: a jit of a derivative is a derivative of a jit.

- jvp: one ``jit`` of the jvp of the inner jaxpr.
- linearize: two ``jit`` equations, as JAX makes them: the *known* one runs
  the primal computation and returns the residuals; the *tangent* one (staged
  on the tangent side) maps (residuals, tangents) to output tangents.
  Residuals that are just inputs of the known jit are passed through rather
  than returned.
- transpose: a ``jit`` of the transposed inner jaxpr.
- batching: a ``jit`` of the batched inner jaxpr.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minijax.core import get_aval, set_current_trace
from minijax.interpreters import ad, batching
from minijax.interpreters.ad import JVPTrace, Zero
from minijax.interpreters.jit import jit_p
from minijax.interpreters.tracing import DynamicJaxprTracer, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr


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


def _jit_linearize(
    trace: JVPTrace, closed: ClosedJaxpr, name: str, primals: Sequence[Any], tangents: Sequence[Any], nonzeros: list[bool]
) -> list[Any]:
    n_out = len(closed.out_avals)
    box: dict[str, Any] = {}

    def known(*xs: Any) -> list[Any]:
        outs, lin = ad.linearize_flat(ad.closed_call(closed), xs, linear=nonzeros)
        # Each residual is an input of this jit (forwarded), a value computed
        # here (returned), or a constant from outside (passed directly).
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

    known_closed, _ = trace_to_jaxpr(known, [get_aval(p) for p in primals])
    with set_current_trace(trace.parent):
        known_outs = jit_p.bind(*primals, jaxpr=known_closed, name=name)
    lin: ad.LinearFunction = box["lin"]
    residuals = [primals[where] if kind == "input" else known_outs[where] if kind == "output" else where for kind, where in box["sources"]]
    tangent_closed, _ = ad.consts_as_inputs(lin.jaxpr)
    lin_tangents = [t for t, use in zip(tangents, lin.in_linear) if use]
    with set_current_trace(trace.tangent_side):
        tangent_outs = iter(jit_p.bind(*residuals, *(ad.instantiate_zeros(t) for t in lin_tangents), jaxpr=tangent_closed, name=name))
    return [
        trace.wrap(p, Zero(a) if z else next(tangent_outs))
        for p, a, z in zip(known_outs[:n_out], lin.out_avals, lin.out_zeros)
    ]


def _jit_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, name: str, **unused: Any) -> list[Any]:
    return ad.transpose_call(jaxpr, args, cts, lambda xs, t: jit_p.bind(*xs, jaxpr=t, name=name))


ad.trace_jvp_rules[jit_p] = _jit_jvp
ad.transpose_rules[jit_p] = _jit_transpose


# ---------------------------------------------------------------------------
# Batching: a jit of the batched jaxpr. It is an axis rule (it sees the
# trace) so that collectives inside the jaxpr find the vmap's axis name.


def _jit_batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    closed: ClosedJaxpr = params["jaxpr"]
    batched, out_dims = batching.batch_jaxpr(closed, trace.axis_size, dims, axis_name=trace.axis_name)
    return jit_p.bind(*vals, **{**params, "jaxpr": batched}), out_dims


batching.axis_rules[jit_p] = _jit_batch
