"""Lowering rules: the windowed reductions (``spec/primitives/windowed.md``).

- reduce_window_sum/max/min and the generic reduce_window are one
  ``stablehlo.reduce_window`` each, with the window params as they are; the
  region adds (max, min) two scalars or runs the primitive's body jaxpr.
  float16/bfloat16 sums are computed in float32 and rounded once (the
  reference's accumulation).
- select_and_scatter_add is a ``stablehlo.select_and_scatter`` (select by
  ``ge``/``le``, scatter by adding) on the operand padded explicitly with the
  selection's identity, sliced back afterwards: how JAX lowers it on CPU
  (XLA's CPU select_and_scatter mishandles padding).
- select_and_gather_add is a variadic ``stablehlo.reduce_window`` of
  (value, tangent) pairs from (identity, 0), keeping the pair whose value the
  comparison prefers: how JAX lowers it on CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax.primitives.reductions import reduction_identity
from minijax_xla.jaxlib_api import tensor_type
from minijax_xla.lowering import LoweringRuleContext, build_combiner, constant, emit_jaxpr, register

Value = ir.Value[Any]
DType = np.dtype[Any]
Shape = tuple[int, ...]

_F32 = np.dtype(np.float32)


def _padding_attr(padding: Sequence[tuple[int, int]]) -> ir.DenseIntElementsAttr:
    pads = np.asarray([[int(lo), int(hi)] for lo, hi in padding], np.int64).reshape(len(padding), 2)
    return ir.DenseIntElementsAttr.get(cast(Any, pads))  # an (ndim, 2) int64 array (numpy's stubs miss Buffer)


def _without_negative_pads(
    operands: Sequence[Value], in_shape: Sequence[int], padding: Sequence[tuple[int, int]], base_dilation: Sequence[int],
) -> tuple[list[Value], list[tuple[int, int]]] | None:
    """The operands cropped so that no pad is negative (XLA's CPU reduce_window aborts on one), or
    None when the crop leaves no operand element.

    A pad of -k removes k elements of the base-dilated operand: ceil(k / b)
    operand elements, and the b * ceil(k / b) - k holes left at that end
    become padding instead -- the same thing, as both are skipped.
    """
    starts, stops, pads = [], [], []
    for n, (lo, hi), b in zip(in_shape, padding, base_dilation):
        drop_lo = -(-max(-lo, 0) // b)
        drop_hi = -(-max(-hi, 0) // b)
        if n - drop_lo - drop_hi <= 0:
            return None
        starts.append(drop_lo)
        stops.append(n - drop_hi)
        pads.append((lo if lo >= 0 else drop_lo * b + lo, hi if hi >= 0 else drop_hi * b + hi))
    ndim = len(in_shape)
    cropped: list[Value] = [hlo.slice(x, starts, stops, [1] * ndim) for x in operands]
    return cropped, pads


def reduce_window(
    operands: Sequence[Value],
    inits: Sequence[Value],
    dtypes_: Sequence[DType],
    in_shape: Sequence[int],
    out_shape: Sequence[int],
    body: Callable[[list[Value], list[Value]], list[Value]],
    *,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> list[Value]:
    """A (variadic) ``stablehlo.reduce_window``; ``body(accumulators, elements)`` builds the region from 0-d values.

    Where no window has anything to reduce (an empty result, or negative pads
    that crop the whole operand away), the result is the init values
    broadcast: no reduce_window reaches XLA that its CPU code would abort on.
    """
    if 0 in out_shape or 0 in in_shape:
        return [hlo.broadcast_in_dim(tensor_type(out_shape, dt), init, []) for init, dt in zip(inits, dtypes_)]
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        found = _without_negative_pads(operands, in_shape, padding, base_dilation)
        if found is None:
            return [hlo.broadcast_in_dim(tensor_type(out_shape, dt), init, []) for init, dt in zip(inits, dtypes_)]
        operands, padding = found
    op = hlo.ReduceWindowOp(
        [tensor_type(out_shape, dt) for dt in dtypes_],
        list(operands),
        list(inits),
        [int(d) for d in window_dimensions],
        window_strides=[int(s) for s in window_strides],
        base_dilations=[int(d) for d in base_dilation],
        window_dilations=[int(d) for d in window_dilation],
        padding=_padding_attr(padding),
    )
    build_combiner(op.regions[0], dtypes_, body)
    return list(op.results)


def _is_float(dt: DType) -> bool:
    return dt.kind == "f" or dt.name == "bfloat16"


def _convert(x: Value, shape: Sequence[int], src: DType, dst: DType) -> Value:
    return x if src == dst else hlo.convert(tensor_type(shape, dst), x)


# ---------------------------------------------------------------------------
# reduce_window_sum, reduce_window_max, reduce_window_min


def _monoid_rule(identity: str, combine: Callable[[Value, Value], Value], widen: bool) -> Callable[..., list[Value]]:
    def rule(ctx: LoweringRuleContext, x: Value, **params: Any) -> list[Value]:
        aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
        dt = aval_in.dtype
        work = _F32 if widen and _is_float(dt) and dt.itemsize == 2 else dt
        x = _convert(x, aval_in.shape, dt, work)
        init = constant(reduction_identity(identity, work), work)
        (out,) = reduce_window([x], [init], [work], aval_in.shape, aval_out.shape, lambda a, b: [combine(a[0], b[0])],
                               **params)
        return [_convert(out, aval_out.shape, work, dt)]

    return rule


register("reduce_window_sum")(_monoid_rule("reduce_sum", hlo.add, widen=True))
# stablehlo.maximum/minimum propagate NaN, order -0.0 below +0.0, and are or/and on i1: the reference's meaning.
register("reduce_window_max")(_monoid_rule("reduce_max", hlo.maximum, widen=False))
register("reduce_window_min")(_monoid_rule("reduce_min", hlo.minimum, widen=False))


@register("reduce_window")
def _reduce_window(ctx: LoweringRuleContext, *args: Value, jaxpr: Any, consts: Any, **params: Any) -> list[Value]:
    n = len(args) // 2
    dts = [a.dtype for a in ctx.avals_in[:n]]

    def body(acc: list[Value], elem: list[Value]) -> list[Value]:
        const_values = [constant(c, v.aval.dtype) for v, c in zip(jaxpr.constvars, consts)]
        return emit_jaxpr(ctx.module_context, jaxpr, const_values, [*acc, *elem])

    return reduce_window(args[:n], args[n:], dts, ctx.avals_in[0].shape, ctx.avals_out[0].shape, body, **params)


# ---------------------------------------------------------------------------
# select_and_scatter_add, select_and_gather_add


def _compare(a: Value, b: Value, direction: str, dt: DType) -> Value:
    if _is_float(dt):
        kind = "FLOAT"
    elif dt.kind == "i":
        kind = "SIGNED"
    else:  # unsigned integers and bool (i1 read as 0/1)
        kind = "UNSIGNED"
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction), compare_type=hlo.ComparisonTypeAttr.get(kind))


def _selection(select_prim: Any) -> tuple[str, str]:
    """The comparison direction of ``select_prim`` and the reduction whose identity pads the operand."""
    return ("GE", "reduce_max") if select_prim.name == "ge" else ("LE", "reduce_min")


@register("select_and_scatter_add")
def _select_and_scatter_add(ctx: LoweringRuleContext, source: Value, operand: Value, *, select_prim: Any,
                            window_dimensions: Shape, window_strides: Shape, padding: Sequence[tuple[int, int]]) -> list[Value]:
    source_aval, operand_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    dt = operand_aval.dtype
    direction, identity = _selection(select_prim)
    ndim = operand_aval.ndim
    padded_sizes = [n + lo + hi for n, (lo, hi) in zip(operand_aval.shape, padding)]
    if 0 in source_aval.shape or min(padded_sizes, default=1) <= 0:
        # No window (negative pads may crop the operand away): nothing is scattered.
        return [hlo.broadcast_in_dim(tensor_type(operand_aval.shape, out_aval.dtype), constant(0, out_aval.dtype), [])]
    padded = any(lo or hi for lo, hi in padding)
    if padded:
        worst = constant(reduction_identity(identity, dt), dt)
        operand = hlo.pad(operand, worst, [int(lo) for lo, _ in padding], [int(hi) for _, hi in padding], [0] * ndim)
    op = hlo.SelectAndScatterOp(
        tensor_type(padded_sizes, out_aval.dtype),
        operand,
        source,
        constant(0, source_aval.dtype),
        window_dimensions=[int(d) for d in window_dimensions],
        window_strides=[int(s) for s in window_strides],
        padding=_padding_attr([(0, 0)] * ndim),
    )
    scalar = tensor_type((), dt)
    select = op.select.blocks.append(scalar, scalar)
    with ir.InsertionPoint(select):
        hlo.return_([_compare(select.arguments[0], select.arguments[1], direction, dt)])
    source_scalar = tensor_type((), out_aval.dtype)
    scatter = op.scatter.blocks.append(source_scalar, source_scalar)
    with ir.InsertionPoint(scatter):
        add = hlo.or_ if out_aval.dtype == np.bool_ else hlo.add
        hlo.return_([add(scatter.arguments[0], scatter.arguments[1])])
    result: Value = op.results[0]
    if padded:
        # Undo the padding: crop what was added, put zeros back where a negative pad cropped.
        zero = constant(0, out_aval.dtype)
        result = hlo.pad(result, zero, [-int(lo) for lo, _ in padding], [-int(hi) for _, hi in padding], [0] * ndim)
    return [result]


@register("select_and_gather_add")
def _select_and_gather_add(ctx: LoweringRuleContext, tangents: Value, operand: Value, *, select_prim: Any,
                           **params: Any) -> list[Value]:
    tangents_aval, operand_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    dt, tdt = operand_aval.dtype, tangents_aval.dtype
    direction, identity = _selection(select_prim)

    def body(acc: list[Value], elem: list[Value]) -> list[Value]:
        (ka, va), (kb, vb) = acc, elem
        which = _compare(ka, kb, direction, dt)
        return [hlo.select(which, ka, kb), hlo.select(which, va, vb)]

    inits = [constant(reduction_identity(identity, dt), dt), constant(0, tdt)]
    _, out = reduce_window([operand, tangents], inits, [dt, tdt], operand_aval.shape, out_aval.shape, body, **params)
    return [out]

