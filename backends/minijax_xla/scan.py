"""Lowering of ``scan`` to a ``stablehlo.while`` loop with an iteration counter.

The loop carries (counter, *carry, *ys). Iteration ``k`` reads element
``k`` of each ``xs`` operand (``length-1-k`` when reversed) with
``dynamic_slice`` and writes its ``y`` values into that row of the stacked
outputs with ``dynamic_update_slice``; the body's equations are emitted in
the loop body, which reads the constants and ``xs`` from the enclosing
function (StableHLO regions may capture values). ``unroll=u`` emits the body
``u`` times per trip, the remaining ``length % u`` iterations after the loop;
``unroll=0``, or one trip covering the whole length, unrolls completely (no
loop), as JAX does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr
from minijax_xla.lowering import LoweringRuleContext, ModuleContext, constant, emit_jaxpr, ir_type, register

Values = list[ir.Value[Any]]


def _i32(k: int) -> ir.Value[Any]:
    return constant(k, np.int32)


class _Body:
    """Emits one iteration of the scan at the current insertion point."""

    def __init__(self, mctx: ModuleContext, jaxpr: ClosedJaxpr, consts: Values, xs: Values, x_avals: Sequence[ShapedArray], length: int, reverse: bool) -> None:
        self.mctx = mctx
        self.jaxpr = jaxpr
        self.consts = consts
        self.xs = xs
        self.x_avals = x_avals
        self.length = length
        self.reverse = reverse

    def run(self, k: ir.Value[Any], carry: Values, ys: Values) -> tuple[Values, Values]:
        """Iteration number ``k`` (an int32 scalar, in execution order)."""
        index = hlo.subtract(_i32(self.length - 1), k) if self.reverse else k
        x_slices = [_row(x, aval, index) for x, aval in zip(self.xs, self.x_avals)]
        # The closed jaxpr's own constants are emitted where it runs.
        body_consts = [constant(c, v.aval.dtype) for v, c in zip(self.jaxpr.jaxpr.constvars, self.jaxpr.consts)]
        outs = emit_jaxpr(self.mctx, self.jaxpr.jaxpr, body_consts, [*self.consts, *carry, *x_slices])
        carry_out, y = outs[: len(carry)], outs[len(carry) :]
        return carry_out, [_set_row(stack, value, index) for stack, value in zip(ys, y)]


def _row(x: ir.Value[Any], aval: ShapedArray, index: ir.Value[Any]) -> ir.Value[Any]:
    """Row ``index`` of ``x`` (of the per-iteration ``aval``)."""
    starts = [index, *(_i32(0) for _ in aval.shape)]
    sliced = hlo.dynamic_slice(x, starts, [1, *aval.shape])
    result: ir.Value[Any] = hlo.reshape(ir_type(aval), sliced)
    return result


def _set_row(stack: ir.Value[Any], value: ir.Value[Any], index: ir.Value[Any]) -> ir.Value[Any]:
    shape = ir.RankedTensorType(value.type).shape
    element = ir.RankedTensorType(value.type).element_type
    row = hlo.reshape(ir.RankedTensorType.get([1, *shape], element), value)
    result: ir.Value[Any] = hlo.dynamic_update_slice(stack, row, [index, *(_i32(0) for _ in shape)])
    return result


def _trips(length: int, unroll: int) -> tuple[int, int, int]:
    """(loop trips, iterations per trip, iterations unrolled after the loop)."""
    if unroll == 0:
        return 0, 1, length
    trips, remainder = divmod(length, unroll)
    if unroll != 1 and trips == 1 and remainder == 0:
        return 0, 1, length
    return trips, unroll, remainder


@register("scan")
def _scan(
    ctx: LoweringRuleContext,
    *operands: ir.Value[Any],
    reverse: bool,
    length: int,
    num_consts: int,
    num_carry: int,
    jaxpr: ClosedJaxpr,
    unroll: int,
) -> Values:
    consts = list(operands[:num_consts])
    carry = list(operands[num_consts : num_consts + num_carry])
    xs = list(operands[num_consts + num_carry :])
    x_avals = jaxpr.in_avals[num_consts + num_carry :]
    stacked_avals = ctx.avals_out[num_carry:]
    body = _Body(ctx.module_context, jaxpr, consts, xs, x_avals, length, reverse)
    ys: Values = [hlo.broadcast_in_dim(ir_type(a), constant(0, a.dtype), []) for a in stacked_avals]
    trips, per_trip, remainder = _trips(length, unroll)
    if trips:
        counter = ir_type(ShapedArray((), np.int32))
        loop = hlo.WhileOp([counter, *(v.type for v in carry), *(v.type for v in ys)], [_i32(0), *carry, *ys])
        n = 1 + len(carry)
        cond = loop.regions[0].blocks.append(*(v.type for v in loop.operands))
        with ir.InsertionPoint(cond):
            direction = hlo.ComparisonDirectionAttr.get("LT")
            hlo.return_([hlo.compare(cond.arguments[0], _i32(trips), direction, compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))])
        step = loop.regions[1].blocks.append(*(v.type for v in loop.operands))
        with ir.InsertionPoint(step):
            trip, *state = step.arguments
            loop_carry, loop_ys = list(state[: n - 1]), list(state[n - 1 :])
            first = hlo.multiply(trip, _i32(per_trip)) if per_trip != 1 else trip
            for j in range(per_trip):
                k = hlo.add(first, _i32(j)) if j else first
                loop_carry, loop_ys = body.run(k, loop_carry, loop_ys)
            hlo.return_([hlo.add(trip, _i32(1)), *loop_carry, *loop_ys])
        results: Values = list(loop.results)
        carry, ys = results[1:n], results[n:]
    for j in range(remainder):
        carry, ys = body.run(_i32(trips * per_trip + j), carry, ys)
    return [*carry, *ys]
