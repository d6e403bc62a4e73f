"""Lowering of the collectives and of ``shard_map`` (spec/primitives/collectives.md).

Over positional axes psum, pmax and pmin are reductions: they lower exactly
as reduce_sum, reduce_max and reduce_min do (those primitives' rules, with
the same accumulation). A vmap binding a name rewrites its collectives
before anything is lowered, so the only named axes a rule here can meet are
the mesh axes of a ``shard_map`` lowered as a *manual region*:

    @Sharding(x) {the in_spec's layout} -> @SPMDFullToShardShape {manual}
        the body, on one device's block, its collectives XLA's cross-device ops
    @Sharding {manual} -> @SPMDShardToFullShape {the out_spec's layout}

That is how JAX lowers it, and what XLA's SPMD partitioner expects: outside
the region it partitions the program; inside, every device runs the body on
its own block and the collectives are ``all_reduce``, ``all_gather``,
``reduce_scatter``, ``collective_permute`` and ``all_to_all`` over the groups
of devices that differ only along the named axes (the NumPy backend's
``_groups``, backends/minijax_numpy/shard_map.py, the meaning both follow).

A shard_map lowers so when the program is an SPMD program over exactly the
mesh's devices, in the mesh's order, and every mesh axis of size > 1 is
manual. Otherwise (one device, a partly manual mesh, a mesh other than the
program's, a body calling back into Python, a shard_map inside another) it
lowers as its per-device program, the body vectorized over the mesh axes
(minijax/shard_map.py): the same values, without cross-device collectives.
Anywhere else a named axis is an unbound name: NameError, as JAX raises.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo as hlo

from minijax.jaxpr import ClosedJaxpr, Jaxpr, subjaxprs
from minijax.mesh import Mesh, NamedSharding
from minijax.primitives.callbacks import CALLBACK_PRIMITIVES
from minijax.primitives.collectives import axis_tuple, is_positional, positional_reduction, unbound_axis_error
from minijax.shard_map import per_device_program
from minijax_xla import jaxlib_api, reductions, structural  # noqa: F401  (register reduce_sum/max/min, which psum/pmax/pmin use)
from minijax_xla.lowering import (
    LOWERINGS,
    LoweringRuleContext,
    ModuleContext,
    build_combiner,
    constant,
    ir_type,
    register,
)
from minijax_xla.spmd import hlo_sharding

Values = Sequence[ir.Value[Any]]


# ---------------------------------------------------------------------------
# The manual region: which devices meet in a collective over which axes


@dataclass(frozen=True)
class ManualRegion:
    """The mesh of a shard_map lowered as a manual region. Partition ``p`` of the program
    is the mesh's device ``p`` in row-major order (``lower_shard_map`` checks it)."""

    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]

    def groups(self, axes: Sequence[Any], ctx_name: str) -> list[list[int]]:
        """The partitions that meet in a collective over ``axes``: one group per position along
        the other axes, each in row-major order along ``axes`` as given (a member's index)."""
        unknown = [a for a in axes if a not in self.axis_names]
        if unknown:
            raise unbound_axis_error(ctx_name, unknown)
        where = [self.axis_names.index(a) for a in axes]
        rest = [i for i in range(len(self.axis_names)) if i not in where]
        out = []
        for others in itertools.product(*(range(self.axis_sizes[i]) for i in rest)):
            group = []
            for along in itertools.product(*(range(self.axis_sizes[i]) for i in where)):
                coords = [0] * len(self.axis_names)
                for i, k in zip(rest, others):
                    coords[i] = k
                for i, k in zip(where, along):
                    coords[i] = k
                group.append(int(np.ravel_multi_index(coords, self.axis_sizes)))
            out.append(group)
        return out

    def member_index(self, axes: Sequence[Any], ctx_name: str) -> ir.Value[Any]:
        """This device's index among its group along ``axes`` (an i32 scalar), from its partition id."""
        self.groups(axes, ctx_name)  # (NameError for an axis not of the mesh)
        u32 = np.dtype(np.uint32)
        pid = hlo.PartitionIdOp().result
        index = constant(0, u32)
        for a in axes:
            i = self.axis_names.index(a)
            stride = math.prod(self.axis_sizes[i + 1:])
            coord = hlo.remainder(hlo.divide(pid, constant(stride, u32)), constant(self.axis_sizes[i], u32))
            index = hlo.add(hlo.multiply(index, constant(self.axis_sizes[i], u32)), coord)
        result: ir.Value[Any] = hlo.convert(ir.RankedTensorType.get([], ir.IntegerType.get_signless(32)), index)
        return result


def _int64s(rows: list[list[int]]) -> ir.DenseIntElementsAttr:
    """An (n, k) int64 attribute: replica groups, source-target pairs."""
    attr: ir.DenseIntElementsAttr = ir.DenseIntElementsAttr.get(cast(Any, np.asarray(rows, dtype=np.int64)))  # (numpy's stubs miss Buffer)
    return attr


def _channel(ctx: LoweringRuleContext) -> Any:
    mctx: ModuleContext = ctx.module_context
    return hlo.ChannelHandle.get(mctx.new_channel(), 1)  # (1: device to device)


def _region(ctx: LoweringRuleContext, prim: str) -> ManualRegion:
    region: ManualRegion | None = ctx.module_context.manual
    if region is None:  # a name no shard_map lowered as a manual region binds
        raise unbound_axis_error(prim, ["?"])
    return region


def _reshape(x: ir.Value[Any], shape: Sequence[int], dtype: Any) -> ir.Value[Any]:
    result: ir.Value[Any] = hlo.reshape(jaxlib_api.tensor_type(tuple(shape), dtype), x)
    return result


# ---------------------------------------------------------------------------
# The collectives


_COMBINERS: dict[str, Callable[[ir.Value[Any], ir.Value[Any]], ir.Value[Any]]] = {
    "psum": hlo.add, "pmax": hlo.maximum, "pmin": hlo.minimum,
}  # fmt: skip


def _allreduce(name: str) -> Callable[..., Values]:
    def rule(ctx: LoweringRuleContext, x: ir.Value[Any], *, axes: tuple[Any, ...], axis_index_groups: Any) -> Values:
        named = [a for a in axes if not is_positional(a)]
        if not named or ctx.module_context.manual is None:
            reduction, positional = positional_reduction(name, axes)  # NameError for a named axis
            return LOWERINGS[reduction](ctx, x, axes=positional) if positional else [x]
        positional = tuple(a for a in axes if is_positional(a))
        if positional:  # each device's own value first, as reduce_* does it
            reduction = {"psum": "reduce_sum", "pmax": "reduce_max", "pmin": "reduce_min"}[name]
            (x,) = LOWERINGS[reduction](ctx, x, axes=positional)
        out = ctx.avals_out[0]
        groups = _region(ctx, name).groups(named, name)
        op = hlo.AllReduceOp([ir_type(out)], [x], _int64s(groups), channel_handle=_channel(ctx), use_global_device_ids=True)
        combine = _COMBINERS[name]
        build_combiner(op.regions[0], [out.dtype], lambda a, b: [combine(a[0], b[0])])
        return list(op.results)

    return rule


def _all_gather(ctx: LoweringRuleContext, x: ir.Value[Any], *, all_gather_dimension: int, axis_name: Any,
                axis_index_groups: Any, axis_size: int, tiled: bool) -> Values:  # fmt: skip
    groups = _region(ctx, "all_gather").groups(axis_tuple(axis_name), "all_gather")
    aval = ctx.avals_in[0]
    if not tiled:  # a new dimension of size 1 to gather along
        shape = list(aval.shape)
        shape.insert(all_gather_dimension, 1)
        x = _reshape(x, shape, aval.dtype)
    op = hlo.AllGatherOp([ir_type(ctx.avals_out[0])], [x], all_gather_dimension, _int64s(groups),
                         channel_handle=_channel(ctx), use_global_device_ids=True)  # fmt: skip
    return list(op.results)


def _reduce_scatter(ctx: LoweringRuleContext, x: ir.Value[Any], *, scatter_dimension: int, axis_name: Any,
                    axis_index_groups: Any, axis_size: int, tiled: bool) -> Values:  # fmt: skip
    groups = _region(ctx, "reduce_scatter").groups(axis_tuple(axis_name), "reduce_scatter")
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    shape = list(aval.shape)
    shape[scatter_dimension] //= axis_size
    op = hlo.ReduceScatterOp(ir_type(out.update(shape=tuple(shape))), x, scatter_dimension, _int64s(groups),
                             channel_handle=_channel(ctx), use_global_device_ids=True)  # fmt: skip
    build_combiner(op.regions[0], [out.dtype], lambda a, b: [hlo.add(a[0], b[0])])
    result: ir.Value[Any] = op.result
    return [result if tiled else _reshape(result, out.shape, out.dtype)]  # (the scattered dimension dropped)


def _axis_index(ctx: LoweringRuleContext, *, axis_name: Any) -> Values:
    return [_region(ctx, "axis_index").member_index(axis_tuple(axis_name), "axis_index")]


def _ppermute(ctx: LoweringRuleContext, x: ir.Value[Any], *, axis_name: Any, perm: tuple[tuple[int, int], ...]) -> Values:
    groups = _region(ctx, "ppermute").groups(axis_tuple(axis_name), "ppermute")
    pairs = [[group[src], group[dst]] for group in groups for src, dst in perm]
    # (a device no pair sends to receives zeros, as the spec says)
    op = hlo.CollectivePermuteOp(x, _int64s(pairs), channel_handle=_channel(ctx))
    return list(op.results)


def _all_to_all(ctx: LoweringRuleContext, x: ir.Value[Any], *, axis_name: Any, split_axis: int, concat_axis: int,
                axis_index_groups: Any, tiled: bool) -> Values:  # fmt: skip
    groups = _region(ctx, "all_to_all").groups(axis_tuple(axis_name), "all_to_all")
    op = hlo.AllToAllOp([x], split_axis, concat_axis, len(groups[0]), _int64s(groups),
                        channel_handle=_channel(ctx), results=[ir_type(ctx.avals_out[0])])  # fmt: skip
    return list(op.results)


for _name in ("psum", "pmax", "pmin"):
    register(_name)(_allreduce(_name))
_NAMED: dict[str, Callable[..., Values]] = {
    "all_gather": _all_gather, "reduce_scatter": _reduce_scatter, "axis_index": _axis_index,
    "ppermute": _ppermute, "all_to_all": _all_to_all,
}  # fmt: skip


def _named_only(name: str) -> Callable[..., Values]:
    def rule(ctx: LoweringRuleContext, *operands: ir.Value[Any], **params: Any) -> Values:
        if ctx.module_context.manual is None:
            axis_name = params["axis_name"]
            raise unbound_axis_error(name, axis_name if isinstance(axis_name, tuple) else (axis_name,))
        return _NAMED[name](ctx, *operands, **params)

    return rule


for _name in _NAMED:
    register(_name)(_named_only(_name))


# ---------------------------------------------------------------------------
# shard_map


_CALLBACKS = frozenset(p.name for p in CALLBACK_PRIMITIVES) | {"check"}


def _calls_back(jaxpr: Jaxpr) -> bool:
    return any(e.primitive.name in _CALLBACKS or any(_calls_back(s) for s in subjaxprs(e.params)) for e in jaxpr.eqns)


def manual_region(mctx: ModuleContext, params: dict[str, Any]) -> ManualRegion | None:
    """The manual region a shard_map equation lowers as, or None when it lowers as its
    per-device program (the module docstring says when)."""
    mesh = params["mesh"]
    devices = mctx.spmd_devices
    if devices is None or mctx.manual is not None or not isinstance(mesh, Mesh):
        return None
    if [d.id for d in mesh.devices.flat] != [d.id for d in devices]:
        return None
    if any(size > 1 and name not in params["newly_manual_axes"] for name, size in zip(mesh.axis_names, mesh.axis_sizes)):
        return None  # (partly manual: XLA's partitioner keeps the other axes; not built)
    if _calls_back(params["jaxpr"].jaxpr):
        return None  # (host callbacks run once, on the first device, outside any manual region)
    return ManualRegion(tuple(mesh.axis_names), tuple(mesh.axis_sizes))


def _custom_call(target: str, x: ir.Value[Any], out_type: ir.Type, sharding: str) -> ir.Value[Any]:
    op = hlo.CustomCallOp([out_type], [x], call_target_name=ir.StringAttr.get(target))
    op.attributes["mhlo.sharding"] = ir.StringAttr.get(sharding)
    result: ir.Value[Any] = op.result
    return result


@register("shard_map")
def _shard_map_lowering(ctx: LoweringRuleContext, *operands: ir.Value[Any], **params: Any) -> list[ir.Value[Any]]:
    mctx: ModuleContext = ctx.module_context
    region = manual_region(mctx, params)
    body: ClosedJaxpr = params["jaxpr"]
    if region is None:
        closed, name = per_device_program(params), "shard_map"
    else:
        closed, name = body, "shmap_body"
    blocks = []
    if region is not None:
        for x, aval, block, spec in zip(operands, ctx.avals_in, body.in_avals, params["in_specs"]):
            layout = str(hlo_sharding(NamedSharding(params["mesh"], spec), aval.ndim))
            blocks.append(_custom_call("SPMDFullToShardShape", _custom_call("Sharding", x, x.type, layout),
                                       ir_type(block), "{manual}"))  # fmt: skip
    # (a per-device program inside a manual region: its collectives over the outer axes are the region's)
    saved, mctx.manual = mctx.manual, region or mctx.manual
    try:
        symbol = mctx.lower_nested(closed, name)
    finally:
        mctx.manual = saved
    out_types = [ir_type(a) for a in (ctx.avals_out if region is None else body.out_avals)]
    results: list[ir.Value[Any]] = list(func.CallOp(out_types, ir.FlatSymbolRefAttr.get(symbol), blocks or list(operands)).results)
    if region is None:
        return results
    outs = []
    for v, aval, spec in zip(results, ctx.avals_out, params["out_specs"]):
        layout = str(hlo_sharding(NamedSharding(params["mesh"], spec), aval.ndim))
        outs.append(_custom_call("SPMDShardToFullShape", _custom_call("Sharding", v, v.type, "{manual}"), ir_type(aval), layout))
    return outs
