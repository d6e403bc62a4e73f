"""Lowering rules: gather and the scatter family (``spec/primitives/indexing.md``).

``stablehlo.gather`` and ``stablehlo.scatter`` have the primitives' meaning
up to the out-of-bounds modes, which are lowered as JAX lowers them:

- gather: XLA clamps every window into bounds, which is CLIP and
  PROMISE_IN_BOUNDS; FILL_OR_DROP also computes, per index vector, whether
  its window fits, and selects ``fill_value`` where it does not.
- scatter: XLA drops a window that does not fit, which is FILL_OR_DROP and
  PROMISE_IN_BOUNDS; CLIP first clamps the indices so every window fits.

The update region of a scatter is the primitive's ``update_jaxpr`` lowered
in place (add, mul, ... or the function of ``scatter_apply``); a plain
scatter's region returns the update. The NumPy backend
(``backends/minijax_numpy/indexing.py``) is the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax import dtypes
from minijax.core import ShapedArray
from minijax.primitives.indexing import (
    SCATTER_OPS,
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    default_fill_value,
    scatter_p,
    update_jaxpr as update_jaxpr_of,
)
from minijax_xla.jaxlib_api import tensor_type
from minijax_xla.lowering import LoweringRuleContext, constant, emit_jaxpr, ir_type, register

Value = ir.Value[Any]
_I64 = np.dtype(np.int64)


def _ints(values: Sequence[Any]) -> list[int]:
    return [int(v) for v in values]


def _splat(value: Any, shape: Sequence[int], dtype: np.dtype[Any]) -> Value:
    """A constant of ``shape`` filled with ``value``."""
    scalar = constant(value, dtype)
    if not shape:
        return scalar
    return hlo.broadcast_in_dim(tensor_type(tuple(shape), dtype), scalar, [])


def _compare(x: Value, y: Value, direction: str) -> Value:
    return hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction), compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))


# ---------------------------------------------------------------------------
# gather


def _window_fits(indices: Value, aval: ShapedArray, operand_shape: Sequence[int], dn: GatherDimensionNumbers,
                 slice_sizes: Sequence[int]) -> Value:
    """``bool[batch...]``: whether each index vector's window lies inside the operand.

    The indices are compared as int64 (a uint64 index past int64's range
    reads as negative: out of bounds either way).
    """
    shape = aval.shape
    wide = indices if aval.dtype == _I64 else hlo.convert(tensor_type(shape, _I64), indices)
    upper = np.array([operand_shape[d] - slice_sizes[d] for d in dn.start_index_map], _I64)
    upper_b = hlo.broadcast_in_dim(tensor_type(shape, _I64), constant(upper, _I64), [len(shape) - 1])
    ok = hlo.and_(_compare(wide, _splat(0, shape, _I64), "GE"), _compare(wide, upper_b, "LE"))
    bool_t = np.dtype(np.bool_)
    op = hlo.ReduceOp([tensor_type(shape[:-1], bool_t)], [ok], [constant(True, bool_t)], [len(shape) - 1])
    scalar = tensor_type((), bool_t)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.and_(block.arguments[0], block.arguments[1])])
    result: Value = op.results[0]
    return result


@register("gather")
def _gather(ctx: LoweringRuleContext, operand: Value, indices: Value, *, dimension_numbers: GatherDimensionNumbers,
            slice_sizes: Any, unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode,
            fill_value: Any) -> list[Value]:
    operand_aval, indices_aval = ctx.avals_in
    out = ctx.avals_out[0]
    dn = dimension_numbers
    if out.size == 0:
        return [_splat(0, out.shape, out.dtype)]
    hlo_dn = hlo.GatherDimensionNumbers.get(
        offset_dims=_ints(dn.offset_dims),
        collapsed_slice_dims=_ints(dn.collapsed_slice_dims),
        operand_batching_dims=_ints(dn.operand_batching_dims),
        start_indices_batching_dims=_ints(dn.start_indices_batching_dims),
        start_index_map=_ints(dn.start_index_map),
        index_vector_dim=indices_aval.ndim - 1,
    )
    result: Value = hlo.gather(operand, indices, hlo_dn, _ints(slice_sizes), indices_are_sorted=bool(indices_are_sorted))
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return [result]
    fits = _window_fits(indices, indices_aval, operand_aval.shape, dn, _ints(slice_sizes))
    batch_positions = [i for i in range(out.ndim) if i not in dn.offset_dims]
    mask = hlo.broadcast_in_dim(tensor_type(out.shape, np.dtype(np.bool_)), fits, batch_positions)
    fill = default_fill_value(out.dtype) if fill_value is None else fill_value
    return [hlo.select(mask, result, _splat(np.asarray(fill).astype(out.dtype), out.shape, out.dtype))]


# ---------------------------------------------------------------------------
# The scatter family


def _clamped_indices(indices: Value, aval: ShapedArray, operand_shape: Sequence[int], window: Sequence[int],
                     index_map: Sequence[int]) -> Value:
    """The indices clamped so that every window fits: into [0, operand_dim - window_dim]."""
    dt = aval.dtype
    top = int(dtypes.iinfo(dt).max)
    upper = np.array([min(operand_shape[d] - window[d], top) for d in index_map], np.int64).astype(dt)
    upper_b = hlo.broadcast_in_dim(ir_type(aval), constant(upper, dt), [aval.ndim - 1])
    return hlo.clamp(constant(0, dt), indices, upper_b)


def _window(operand_shape: Sequence[int], updates_shape: Sequence[int], dn: ScatterDimensionNumbers) -> list[int]:
    """The extent of an update window along each operand axis (1 for inserted and batching axes)."""
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_axes = [d for d in range(len(operand_shape)) if d not in dropped]
    window = [1] * len(operand_shape)
    for d, u in zip(window_axes, dn.update_window_dims):
        window[d] = updates_shape[u]
    return window


def _scatter(ctx: LoweringRuleContext, operand: Value, indices: Value, updates: Value, *, update_jaxpr: Any,
             update_consts: Any, dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
             unique_indices: bool, mode: GatherScatterMode) -> list[Value]:
    operand_aval, indices_aval, updates_aval = ctx.avals_in
    out = ctx.avals_out[0]
    dn = dimension_numbers
    if updates_aval.size == 0 or out.size == 0:
        return [operand]  # nothing is written
    if indices_aval.shape[-1] == 0:
        return [_scatter_via_unit_axis(ctx, operand, updates, update_jaxpr, update_consts, dn, indices_are_sorted,
                                       unique_indices, mode)]  # fmt: skip
    if mode is GatherScatterMode.CLIP:
        window = _window(operand_aval.shape, updates_aval.shape, dn)
        indices = _clamped_indices(indices, indices_aval, operand_aval.shape, window, dn.scatter_dims_to_operand_dims)
    hlo_dn = hlo.ScatterDimensionNumbers.get(
        update_window_dims=_ints(dn.update_window_dims),
        inserted_window_dims=_ints(dn.inserted_window_dims),
        input_batching_dims=_ints(dn.operand_batching_dims),
        scatter_indices_batching_dims=_ints(dn.scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=_ints(dn.scatter_dims_to_operand_dims),
        index_vector_dim=indices_aval.ndim - 1,
    )
    op = hlo.ScatterOp([ir_type(out)], [operand], indices, [updates], hlo_dn,
                       indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices))
    scalar = tensor_type((), out.dtype)
    block = op.update_computation.blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        current, update = block.arguments[0], block.arguments[1]
        if update_jaxpr is None:
            combined = [update]  # a plain scatter: the update replaces the element
        else:
            consts = [constant(c, v.aval.dtype) for v, c in zip(update_jaxpr.constvars, update_consts)]
            combined = emit_jaxpr(ctx.module_context, update_jaxpr, consts, [current, update])
        hlo.return_(combined)
    result: Value = op.results[0]
    return [result]


def _scatter_via_unit_axis(ctx: LoweringRuleContext, operand: Value, updates: Value, update_jaxpr: Any,
                           update_consts: Any, dn: ScatterDimensionNumbers, indices_are_sorted: bool,
                           unique_indices: bool, mode: GatherScatterMode) -> Value:
    """A scatter whose index vectors are empty, lowered with one index entry.

    XLA CPU mishandles those: colliding updates are not all combined (only one
    counts; JAX shows the same), and a rank-0 operand is refused. So the
    operand gets a trailing axis of size 1, every index vector the entry 0 for
    it (an inserted window axis), and the result is reshaped back.
    """
    _, indices_aval, updates_aval = ctx.avals_in
    out = ctx.avals_out[0]
    wide = ShapedArray((*out.shape, 1), out.dtype)
    index_aval = ShapedArray((*indices_aval.shape[:-1], 1), indices_aval.dtype)
    inner = LoweringRuleContext([wide, index_aval, updates_aval], [wide], ctx.module_context)
    new_dn = ScatterDimensionNumbers(
        update_window_dims=dn.update_window_dims, inserted_window_dims=(*dn.inserted_window_dims, out.ndim),
        scatter_dims_to_operand_dims=(out.ndim,), operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
    )  # fmt: skip
    zeros = _splat(0, index_aval.shape, index_aval.dtype)
    (result,) = _scatter(inner, hlo.reshape(ir_type(wide), operand), zeros, updates, update_jaxpr=update_jaxpr,
                         update_consts=update_consts, dimension_numbers=new_dn, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode)  # fmt: skip
    reshaped: Value = hlo.reshape(ir_type(out), result)
    return reshaped


def _scatter_op_rule(op: str) -> Any:
    """scatter-``op``'s rule: the region combines with the primitive's own op.

    Its other rules (the NumPy backend, jvp, transpose) all assume that op, so
    a jaxpr whose ``update_jaxpr`` says otherwise (a hand-edited text) must
    not make XLA compute something else: the parameter is only printed.
    """

    def rule(ctx: LoweringRuleContext, operand: Value, indices: Value, updates: Value, *, update_jaxpr: Any,
             update_consts: Any, **params: Any) -> list[Value]:
        jaxpr, consts = update_jaxpr_of(op, ctx.avals_out[0].dtype)
        return _scatter(ctx, operand, indices, updates, update_jaxpr=jaxpr, update_consts=consts, **params)

    return rule


register(scatter_p.name)(_scatter)  # update_jaxpr None (replace) or scatter_apply's function
for _op, _prim in SCATTER_OPS.items():
    register(_prim.name)(_scatter_op_rule(_op))
