"""Lowering of ``while`` to ``stablehlo.while``.

The loop carries every operand: the predicate's constants and the body's
constants pass through each iteration unchanged, followed by the carry (as
JAX lowers it). The condition region evaluates ``cond_jaxpr``; the body
region evaluates ``body_jaxpr``.

A batched predicate (a boolean array, after ``vmap``) is reduced with ``or``
in the condition region, and in the body region each new carry is selected
against the old one by the predicate evaluated on the old carry, broadcast
along the carry's trailing axes: finished lanes keep their values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr
from minijax_xla.lowering import LOWERINGS, LoweringRuleContext, ModuleContext, constant, emit_jaxpr, ir_type, register

Value = ir.Value[Any]


def _emit(mctx: ModuleContext, closed: ClosedJaxpr, args: Sequence[Value]) -> list[Value]:
    consts = [constant(c, v.aval.dtype) for v, c in zip(closed.jaxpr.constvars, closed.consts)]
    return emit_jaxpr(mctx, closed.jaxpr, consts, list(args))


def _apply(
    mctx: ModuleContext, name: str, avals_in: list[ShapedArray], aval_out: ShapedArray, *args: Value, **params: Any
) -> Value:
    """The lowering of primitive ``name`` (one result): the rule its family module registered."""
    (out,) = LOWERINGS[name](LoweringRuleContext(avals_in, [aval_out], mctx), *args, **params)
    result: Value = out
    return result


@register("while")
def _while(
    ctx: LoweringRuleContext,
    *operands: Value,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[Value]:
    mctx: ModuleContext = ctx.module_context
    types = [ir_type(a) for a in ctx.avals_in]
    n_consts = cond_nconsts + body_nconsts
    pred_aval = cond_jaxpr.out_avals[0]
    scalar_pred = ShapedArray((), np.bool_)
    loop = hlo.WhileOp(types, list(operands))

    cond_block = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        args = list(cond_block.arguments)
        (pred,) = _emit(mctx, cond_jaxpr, args[:cond_nconsts] + args[n_consts:])
        if pred_aval.shape:  # batched: go on while any lane goes on
            pred = _apply(mctx, "reduce_or", [pred_aval], scalar_pred, pred, axes=tuple(range(pred_aval.ndim)))
        hlo.return_([pred])

    body_block = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(body_block):
        args = list(body_block.arguments)
        carry = args[n_consts:]
        new = _emit(mctx, body_jaxpr, args[cond_nconsts:n_consts] + carry)
        if pred_aval.shape:  # batched: a finished lane keeps its carry
            (pred,) = _emit(mctx, cond_jaxpr, args[:cond_nconsts] + carry)
            new = [_keep_where(mctx, pred, pred_aval, n, old, a) for n, old, a in zip(new, carry, body_jaxpr.out_avals)]
        hlo.return_([*args[:n_consts], *new])

    results: list[Value] = list(loop.results)
    return results[n_consts:]


def _keep_where(
    mctx: ModuleContext, pred: Value, pred_aval: ShapedArray, new: Value, old: Value, aval: ShapedArray
) -> Value:
    """``new`` where ``pred`` holds, else ``old``; ``pred``'s shape is a prefix of ``aval``'s."""
    mask_aval = ShapedArray(aval.shape, np.bool_)
    if pred_aval.shape != aval.shape:
        pred = _apply(
            mctx, "broadcast_in_dim", [pred_aval], mask_aval, pred,
            shape=aval.shape, broadcast_dimensions=tuple(range(pred_aval.ndim)), sharding=None,
        )  # fmt: skip
    # select_n(which, false_case, true_case)
    return _apply(mctx, "select_n", [mask_aval, aval, aval], aval, pred, old, new)
