"""Lowering of call-like primitives: ``jit`` becomes a call to a private function.

A nested ``jit`` keeps its own ``func.func`` (as JAX does) instead of being
inlined: the module mirrors the jaxpr's structure, and the same inner jaxpr
used twice is emitted once. XLA inlines the calls when it compiles.
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from minijax.jaxpr import ClosedJaxpr
from minijax_xla.lowering import LoweringRuleContext, ModuleContext, ir_type, register


@register("jit")
def _jit_lowering(ctx: LoweringRuleContext, *operands: ir.Value[Any], jaxpr: ClosedJaxpr, name: str, **_: Any) -> list[ir.Value[Any]]:
    mctx: ModuleContext = ctx.module_context
    symbol = mctx.lower_nested(jaxpr, name)
    call = func.CallOp([ir_type(a) for a in ctx.avals_out], ir.FlatSymbolRefAttr.get(symbol), list(operands))
    return list(call.results)
