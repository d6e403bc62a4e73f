"""Lowering rules: structural primitives (``spec/primitives/structural.md``).

Most structural primitives have a StableHLO op of the same meaning; the rest
(squeeze, split, tile, stack) are short compositions of reshape, slice,
broadcast_in_dim and concatenate. reduce_sum is here, as in
``minijax/primitives/structural.py`` (it is broadcast_in_dim's transpose); it
lowers as the other monoid reductions do (``reductions.py``). The slicing
primitives are in ``slicing.py``. The NumPy backend
(``backends/minijax_numpy/structural.py``) is the reference every rule here
agrees with, exactly.

A fact checked against XLA CPU (jaxlib 0.10.2) that the rules rely on:
``stablehlo.iota`` of a float type rounds each count to nearest (ties to even)
and of a narrow integer type wraps around, as counting in int64 and
converting does in the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax.shape_poly import is_symbolic_shape
from minijax_xla.jaxlib_api import tensor_type
from minijax_xla.lowering import LoweringRuleContext, dimension_value, ir_type, register, shape_value
from minijax_xla.reductions import monoid_rule


def _ints(values: Sequence[int]) -> list[int]:
    return [int(v) for v in values]


# ---------------------------------------------------------------------------
# Ops with a StableHLO counterpart


@register("broadcast_in_dim")
def _broadcast_in_dim(
    ctx: LoweringRuleContext, x: ir.Value[Any], *, shape: Any, broadcast_dimensions: Any, sharding: Any
) -> list[ir.Value[Any]]:
    out = ctx.avals_out[0]
    if is_symbolic_shape(out.shape):
        shape_v = shape_value(ctx.module_context, out.shape)
        return [hlo.dynamic_broadcast_in_dim(ir_type(out), x, shape_v, _ints(broadcast_dimensions))]
    return [hlo.broadcast_in_dim(ir_type(out), x, _ints(broadcast_dimensions))]


@register("reshape")
def _reshape(ctx: LoweringRuleContext, x: ir.Value[Any], *, new_sizes: Any, dimensions: Any, sharding: Any) -> list[ir.Value[Any]]:
    # ``dimensions`` is the order to read the operand in: a transpose first.
    if dimensions is not None:
        x = hlo.transpose(x, _ints(dimensions))
    out = ctx.avals_out[0]
    if is_symbolic_shape(out.shape):
        return [hlo.dynamic_reshape(ir_type(out), x, shape_value(ctx.module_context, out.shape))]
    return [hlo.reshape(ir_type(out), x)]


@register("transpose")
def _transpose(ctx: LoweringRuleContext, x: ir.Value[Any], *, permutation: Any) -> list[ir.Value[Any]]:
    return [hlo.transpose(x, _ints(permutation))]


@register("squeeze")
def _squeeze(ctx: LoweringRuleContext, x: ir.Value[Any], *, dimensions: Any) -> list[ir.Value[Any]]:
    # Dropping size-1 axes never moves an element: a reshape.
    out = ctx.avals_out[0]
    if is_symbolic_shape(out.shape):
        return [hlo.dynamic_reshape(ir_type(out), x, shape_value(ctx.module_context, out.shape))]
    return [hlo.reshape(ir_type(out), x)]


@register("rev")
def _rev(ctx: LoweringRuleContext, x: ir.Value[Any], *, dimensions: Any) -> list[ir.Value[Any]]:
    return [hlo.reverse(x, _ints(dimensions))]


@register("concatenate")
def _concatenate(ctx: LoweringRuleContext, *xs: ir.Value[Any], dimension: Any) -> list[ir.Value[Any]]:
    return [hlo.concatenate(list(xs), int(dimension))]


@register("dim_as_value")
def _dim_as_value(ctx: LoweringRuleContext, *, dim: Any) -> list[ir.Value[Any]]:
    value = dimension_value(ctx.module_context, dim)  # an i32 scalar
    out = ctx.avals_out[0]
    return [value if out.dtype == np.int32 else hlo.convert(ir_type(out), value)]


@register("iota")
def _iota(ctx: LoweringRuleContext, *, dtype: Any, shape: Any, dimension: Any, sharding: Any) -> list[ir.Value[Any]]:
    out = ctx.avals_out[0]
    if is_symbolic_shape(out.shape):
        return [hlo.dynamic_iota(ir_type(out), shape_value(ctx.module_context, out.shape), int(dimension))]
    return [hlo.iota(ir_type(out), int(dimension))]


# ---------------------------------------------------------------------------
# Compositions


@register("split")
def _split(ctx: LoweringRuleContext, x: ir.Value[Any], *, sizes: Any, axis: Any) -> list[ir.Value[Any]]:
    # One static slice per piece, each starting where the previous one ended.
    shape = ctx.avals_in[0].shape
    pieces: list[ir.Value[Any]] = []
    offset = 0
    for size in _ints(sizes):
        starts = [offset if d == axis else 0 for d in range(len(shape))]
        limits = [offset + size if d == axis else n for d, n in enumerate(shape)]
        pieces.append(hlo.slice(x, starts, limits, [1] * len(shape)))
        offset += size
    return pieces


@register("tile")
def _tile(ctx: LoweringRuleContext, x: ir.Value[Any], *, reps: Any) -> list[ir.Value[Any]]:
    # Broadcast to (r0, n0, r1, n1, ...) -- each operand axis behind a new
    # repetition axis -- then merge every (r_i, n_i) pair: repetition-major, as np.tile.
    aval = ctx.avals_in[0]
    interleaved = [size for pair in zip(_ints(reps), aval.shape) for size in pair]
    wide = hlo.broadcast_in_dim(tensor_type(interleaved, aval.dtype), x, [2 * i + 1 for i in range(aval.ndim)])
    return [hlo.reshape(ir_type(ctx.avals_out[0]), wide)]


@register("stack")
def _stack(ctx: LoweringRuleContext, *xs: ir.Value[Any], axis: Any) -> list[ir.Value[Any]]:
    # Give every operand a size-1 axis at ``axis``, then join them along it.
    aval = ctx.avals_in[0]
    axis = int(axis)
    with_axis = tensor_type(aval.shape[:axis] + (1,) + aval.shape[axis:], aval.dtype)
    return [hlo.concatenate([hlo.reshape(with_axis, x) for x in xs], axis)]


# ---------------------------------------------------------------------------
# reduce_sum

# float16/bfloat16 sums accumulate in float32, as the spec asks (reductions.py).
register("reduce_sum")(monoid_rule("reduce_sum", hlo.add, widen=True))
