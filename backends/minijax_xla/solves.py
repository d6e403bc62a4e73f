"""Lowering of ``custom_linear_solve``: a call of its ``solve`` jaxpr.

The solve jaxpr becomes a private ``func.func`` (as a ``jit`` does) called on
solve's constants and b; matvec, vecmat and transpose_solve matter only to
the transformations.
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from minijax.primitives.solves import LinearSolveTuple, split_linear_solve_args
from minijax_xla.lowering import LoweringRuleContext, ir_type, register


@register("custom_linear_solve")
def _custom_linear_solve(
    ctx: LoweringRuleContext, *operands: ir.Value[Any], const_lengths: LinearSolveTuple, jaxprs: LinearSolveTuple
) -> list[ir.Value[Any]]:
    consts, b = split_linear_solve_args(operands, const_lengths)
    symbol = ctx.module_context.lower_nested(jaxprs.solve, "custom_linear_solve")
    call = func.CallOp([ir_type(a) for a in ctx.avals_out], ir.FlatSymbolRefAttr.get(symbol), [*consts.solve, *b])
    return list(call.results)
