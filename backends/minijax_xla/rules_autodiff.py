"""Lowerings of the primitives autodiff adds: add_any, stop_gradient, and the
call-like ones (custom_jvp_call, custom_vjp_call, remat2), which become calls
of their jaxpr as nested ``jit`` does (the custom rules matter only to
transformations, never to execution)."""

from __future__ import annotations

from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo as hlo

from minijax.jaxpr import ClosedJaxpr
from minijax_xla.lowering import LoweringRuleContext, ModuleContext, ir_type, register


@register("add_any")
def _add_any(ctx: LoweringRuleContext, x: ir.Value[Any], y: ir.Value[Any]) -> list[ir.Value[Any]]:
    return [hlo.add(x, y)]


@register("stop_gradient")
def _stop_gradient(ctx: LoweringRuleContext, x: ir.Value[Any]) -> list[ir.Value[Any]]:
    return [x]


def _call(ctx: LoweringRuleContext, operands: tuple[ir.Value[Any], ...], closed: ClosedJaxpr, name: str) -> list[ir.Value[Any]]:
    mctx: ModuleContext = ctx.module_context
    symbol = mctx.lower_nested(closed, name)
    call = func.CallOp([ir_type(a) for a in ctx.avals_out], ir.FlatSymbolRefAttr.get(symbol), list(operands))
    return list(call.results)


@register("custom_jvp_call")
def _custom_jvp_call(ctx: LoweringRuleContext, *operands: ir.Value[Any], call_jaxpr: ClosedJaxpr, name: str, **_: Any) -> list[ir.Value[Any]]:
    return _call(ctx, operands, call_jaxpr, name)


@register("custom_vjp_call")
def _custom_vjp_call(ctx: LoweringRuleContext, *operands: ir.Value[Any], call_jaxpr: ClosedJaxpr, name: str, **_: Any) -> list[ir.Value[Any]]:
    return _call(ctx, operands, call_jaxpr, name)


@register("remat2")
def _remat(ctx: LoweringRuleContext, *operands: ir.Value[Any], jaxpr: ClosedJaxpr, **_: Any) -> list[ir.Value[Any]]:
    return _call(ctx, operands, jaxpr, "checkpoint")


@register("custom_lin")
def _custom_lin(ctx: LoweringRuleContext, *operands: ir.Value[Any], **_: Any) -> list[ir.Value[Any]]:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")
