"""Lowering of ``cond`` to ``stablehlo.case``, and of ``empty2`` to a zero constant.

A case op's regions take no arguments: each branch's jaxpr is emitted inside
its region reading the operands from the enclosing function (implicit
capture), and returns its outputs. An index out of range runs the last
region, which is the semantics ``cond`` has on every backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax.jaxpr import ClosedJaxpr
from minijax_xla.lowering import LoweringRuleContext, constant, emit_jaxpr, ir_type, register


@register("cond")
def _cond(ctx: LoweringRuleContext, index: ir.Value[Any], *operands: ir.Value[Any], branches: tuple[ClosedJaxpr, ...]) -> list[ir.Value[Any]]:
    case = hlo.CaseOp([ir_type(a) for a in ctx.avals_out], index, len(branches))
    for region, branch in zip(case.regions, branches):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            jaxpr = branch.jaxpr
            consts = [constant(c, v.aval.dtype) for v, c in zip(jaxpr.constvars, branch.consts)]
            hlo.return_(emit_jaxpr(ctx.module_context, jaxpr, consts, list(operands)))
    return list(case.results)


@register("empty2")
def _empty2(ctx: LoweringRuleContext, *, dtype: Any, memory_space: Any) -> list[ir.Value[Any]]:
    return [constant(np.zeros((), dtype), dtype)]
