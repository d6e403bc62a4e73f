"""Lowerings of the primitives autodiff adds: add_any, stop_gradient and custom_lin; and of
the identities name and optimization_barrier.

(The call-like primitives of custom derivatives and checkpointing --
custom_jvp_call, custom_vjp_call, remat2 -- are in ``calls.py``, with jit.)
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax_xla.lowering import LoweringRuleContext, register
from minijax_xla.spmd import constraint_sharding


@register("add_any")
def _add_any(ctx: LoweringRuleContext, x: ir.Value[Any], y: ir.Value[Any]) -> list[ir.Value[Any]]:
    return [hlo.add(x, y)]


@register("stop_gradient")
def _stop_gradient(ctx: LoweringRuleContext, x: ir.Value[Any]) -> list[ir.Value[Any]]:
    return [x]


@register("name")
def _name(ctx: LoweringRuleContext, x: ir.Value[Any], *, name: str) -> list[ir.Value[Any]]:
    return [x]  # checkpoint_name: the identity when it runs


@register("optimization_barrier")
def _optimization_barrier(ctx: LoweringRuleContext, *operands: ir.Value[Any]) -> list[ir.Value[Any]]:
    return list(hlo.OptimizationBarrierOp(list(operands)).results)


@register("custom_lin")
def _custom_lin(ctx: LoweringRuleContext, *operands: ir.Value[Any], **_: Any) -> list[ir.Value[Any]]:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


@register("reshard")
def _reshard(ctx: LoweringRuleContext, x: ir.Value[Any], **_: Any) -> list[ir.Value[Any]]:
    # The value is unchanged; the program's results are laid out as their types say, and inside
    # the program XLA's partitioner places it.
    return [x]


@register("sharding_constraint")
def _sharding_constraint(ctx: LoweringRuleContext, x: ir.Value[Any], *, sharding: Any, **_: Any) -> list[ir.Value[Any]]:
    """spmdx (issue 17): the layout as XLA's ``@Sharding`` annotation (the GSPMD form, as
    the SPMD program's arguments carry ``mhlo.sharding``). Compiled for one device it is a copy."""
    hlo_text = constraint_sharding(sharding, len(ctx.avals_in[0].shape))
    if hlo_text is None:
        return [x]
    op = hlo.CustomCallOp([x.type], [x], call_target_name=ir.StringAttr.get("Sharding"))
    op.attributes["mhlo.sharding"] = ir.StringAttr.get(hlo_text)
    return list(op.results)
