"""Lowering of the call primitives: ``jit``, ``custom_jvp_call``, ``custom_vjp_call``
and ``remat2`` each become a call to a private function computing their jaxpr.

A nested ``jit`` keeps its own ``func.func`` (as JAX does) instead of being
inlined: the module mirrors the jaxpr's structure, and the same inner jaxpr
used twice is emitted once. XLA inlines the calls when it compiles. The
custom rules of custom_jvp_call / custom_vjp_call and remat2's policy matter
only to transformations, never to execution, so those lower as ``jit`` does.
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from minijax.jaxpr import ClosedJaxpr
from minijax_xla.lowering import LoweringRuleContext, ModuleContext, ir_type, register


def _call(ctx: LoweringRuleContext, operands: tuple[ir.Value[Any], ...], closed: ClosedJaxpr, name: str) -> list[ir.Value[Any]]:
    mctx: ModuleContext = ctx.module_context
    symbol = mctx.lower_nested(closed, name)
    call = func.CallOp([ir_type(a) for a in ctx.avals_out], ir.FlatSymbolRefAttr.get(symbol), list(operands))
    return list(call.results)


@register("jit")
def _jit_lowering(ctx: LoweringRuleContext, *operands: ir.Value[Any], jaxpr: ClosedJaxpr, name: str, **_: Any) -> list[ir.Value[Any]]:
    return _call(ctx, operands, jaxpr, name)


@register("custom_jvp_call")
def _custom_jvp_call(ctx: LoweringRuleContext, *operands: ir.Value[Any], call_jaxpr: ClosedJaxpr, name: str, **_: Any) -> list[ir.Value[Any]]:
    return _call(ctx, operands, call_jaxpr, name)


@register("custom_vjp_call")
def _custom_vjp_call(ctx: LoweringRuleContext, *operands: ir.Value[Any], call_jaxpr: ClosedJaxpr, name: str, **_: Any) -> list[ir.Value[Any]]:
    return _call(ctx, operands, call_jaxpr, name)


@register("custom_vmap_call")
def _custom_vmap_call(ctx: LoweringRuleContext, *operands: ir.Value[Any], call: ClosedJaxpr, **_: Any) -> list[ir.Value[Any]]:
    return _call(ctx, operands, call, "custom_vmap")  # its rule matters only under vmap, before lowering


@register("remat2")
def _remat(ctx: LoweringRuleContext, *operands: ir.Value[Any], jaxpr: ClosedJaxpr, **_: Any) -> list[ir.Value[Any]]:
    return _call(ctx, operands, jaxpr, "checkpoint")
