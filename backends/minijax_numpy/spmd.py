"""Arrays over several simulated devices, and programs over them (issue 17).

The NumPy backend is the executable spec of SPMD semantics. A sharded array
is its list of shards: one read-only NumPy block per device, in the order of
the sharding's devices (``NamedSharding._device_assignment``, the mesh's
devices in their flat order), each block the part of the value that device's
``devices_indices_map`` index selects (replicated blocks are copies).

A jitted program over such arrays computes what the program means on the
global values: the blocks are assembled, the program runs once, and each
result is cut into the blocks of its sharding. That sharding is the one
``out_shardings`` gives, else the one :func:`propagate` derives from the
arguments' shardings, a rule written to give the layout XLA's partitioner
gives the same program (docs/differences.md says where it differs).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from minijax.mesh import NamedSharding, PartitionSpec, candidate_specs, result_hints
from minijax.primitives import complex as complex_family, elementwise as elementwise_family

Blocks = list[np.ndarray[Any, Any]]
# A layout, per dimension: the mesh axes that split it (major first); () for a whole dimension.
Layout = tuple[tuple[str, ...], ...]

__all__ = ["assemble", "compile_spmd", "layout_of", "propagate", "put_shards", "spec_of"]


def frozen_copy(block: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    out = np.array(block, copy=True)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=1024)
def _plan(sharding: NamedSharding, shape: tuple[int, ...]) -> tuple[list[tuple[slice, ...]], list[bool]]:
    """Each device's index into an array of ``shape``, and whether it holds the first replica
    of its block, in the sharding's device order (worked out once: a mesh walk is slow)."""
    where, replicas = sharding.devices_indices_map(shape), sharding.replica_ids(shape)
    devices = sharding._device_assignment
    return [where[d] for d in devices], [replicas[d] == 0 for d in devices]


def _indices(sharding: NamedSharding, shape: Sequence[int]) -> list[tuple[slice, ...]]:
    return _plan(sharding, tuple(shape))[0]


def put_shards(value: np.ndarray[Any, Any], sharding: NamedSharding) -> Blocks:
    """``value`` cut into its blocks, one per device in the sharding's device order."""
    return [frozen_copy(value[index]) for index in _indices(sharding, value.shape)]


def assemble(blocks: Blocks, sharding: NamedSharding, shape: Sequence[int], dtype: Any) -> np.ndarray[Any, Any]:
    """The global value of ``blocks``: each first replica's block written where its device's
    index says (replicas made by make_array_from_single_device_arrays may differ; JAX reads
    the first)."""
    out = np.empty(tuple(shape), dtype=dtype)
    indices, first = _plan(sharding, tuple(shape))
    for block, index, keep in zip(blocks, indices, first):
        if keep:
            out[index] = block
    out.flags.writeable = False
    return out


# --- the layout of a program's results ---------------------------------------------------


def layout_of(spec: PartitionSpec, ndim: int) -> Layout:
    def axes(entry: Any) -> tuple[str, ...]:
        if entry is None or not isinstance(entry, (str, tuple)):
            return ()
        return (entry,) if isinstance(entry, str) else tuple(entry)

    return tuple(axes(spec[d] if d < len(spec) else None) for d in range(ndim))


def spec_of(layout: Layout, sizes: dict[str, int], hints: Sequence[PartitionSpec] = ()) -> PartitionSpec:
    """The PartitionSpec of ``layout`` that XLA's backend reads back for the same layout
    (minijax_xla.spmd.spec_for): P() when nothing is split, else the first of ``hints`` (the
    arguments' specs) that lays the array out the same, else the first spec of the same
    search order. Axes of size 1 split nothing, so they do not tell layouts apart."""
    ndim = len(layout)

    def plain(lay: Layout) -> Layout:
        return tuple(tuple(a for a in axes if sizes[a] > 1) for axes in lay)

    want = plain(layout)
    if not any(want):
        return PartitionSpec()
    for hint in hints:
        if len(hint) <= ndim and plain(layout_of(hint, ndim)) == want:
            return hint
    for orders, spec in candidate_specs(list(sizes), ndim):
        if plain(orders) == want:
            return spec
    raise RuntimeError(f"no PartitionSpec lays out {layout}")  # (unreachable: every layout has one)


def _primitives_of(module: Any) -> set[str]:
    return {v.name for v in vars(module).values() if isinstance(v, Primitive)}


# Primitives that compute each element from the elements at the same position.
ELEMENTWISE = (_primitives_of(elementwise_family) | _primitives_of(complex_family)) - {"iota"}
REDUCTIONS = {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "reduce_xor",
              "argmax", "argmin"}  # fmt: skip


def _replicated(aval: Any) -> Layout:
    return ((),) * len(getattr(aval, "shape", ()))


def _merge(layouts: Sequence[Layout]) -> Layout:
    """The layout of an elementwise result: the first operand's that splits any dimension
    (XLA's partitioner keeps a split operand's layout and slices replicated ones locally)."""
    for layout in layouts:
        if any(layout):
            return layout
    return layouts[0] if layouts else ()


def _reshape_layout(layout: Layout, old: Sequence[int], new: Sequence[int], sizes: dict[str, int]) -> Layout | None:
    """The layout a reshape keeps: dimensions are matched in groups of equal product; a split
    dimension stays split when it is the major one of its group and the group's major result
    dimension is divisible by its split. None where the split cannot follow."""
    out: list[tuple[str, ...]] = [()] * len(new)
    i = j = 0
    while i < len(old) or j < len(new):
        i0, j0 = i, j
        p = q = 1
        if i < len(old):
            p *= old[i]
            i += 1
        if j < len(new):
            q *= new[j]
            j += 1
        while p != q:
            if p < q and i < len(old):
                p *= old[i]
                i += 1
            elif j < len(new):
                q *= new[j]
                j += 1
            else:
                return None
        # size-1 dimensions join no group
        group_in = [d for d in range(i0, i) if old[d] != 1 or layout[d]]
        group_out = [d for d in range(j0, j) if new[d] != 1]
        # The group's elements in order are cut into contiguous blocks by the axes of its
        # leading dimensions, as long as each dimension before is split down to single rows.
        axes: list[str] = []
        for d in group_in:
            axes += layout[d]
            if old[d] // math.prod(sizes[a] for a in layout[d]) > 1:
                break
        if not axes:
            continue
        # ... and those blocks are blocks of the result's leading dimensions in turn.
        for o in group_out:
            if not axes:
                break
            if new[o] % math.prod(sizes[a] for a in axes) == 0:
                out[o], axes = tuple(axes), []
                break
            k = next((k for k in range(1, len(axes)) if math.prod(sizes[a] for a in axes[:k]) == new[o]), None)
            if k is None:
                return None
            out[o], axes = tuple(axes[:k]), axes[k:]
        if axes:
            return None
    return tuple(out)


def _dot_layout(
    lhs: Layout, rhs: Layout, params: dict[str, Any], out_shape: Sequence[int], lhs_ndim: int, rhs_ndim: int
) -> Layout:
    """A dot's result keeps its operands' splits of batch and free dimensions; a split
    contracting dimension leaves a partial sum that is summed (the result whole over that
    axis). Where two result dimensions want one mesh axis the larger keeps it, the earlier
    on a tie (as XLA's partitioner chooses)."""
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lfree = [d for d in range(lhs_ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs_ndim) if d not in rc and d not in rb]
    wanted = [lhs[d] or rhs[e] for d, e in zip(lb, rb)] + [lhs[d] for d in lfree] + [rhs[d] for d in rfree]
    used: set[str] = set()
    result: list[tuple[str, ...]] = [()] * len(wanted)
    for o in sorted(range(len(wanted)), key=lambda o: (-out_shape[o], o)):
        if not any(a in used for a in wanted[o]):
            result[o] = wanted[o]
            used.update(wanted[o])
    return tuple(result)


def _same_rank(layouts: Sequence[Layout], avals: Sequence[Any], out: Any, sizes: dict[str, int]) -> Layout:
    """Any other result: as XLA's partitioner does for the structural operations (slices,
    pads, concatenations, scans, sorts, gathers and scatters, windows), the layout of the
    first split operand of the result's rank, each split kept where it divides the result's
    dimension; whole on every device when no operand has the result's rank."""
    shape = getattr(out, "shape", ())
    same = [lay for lay, a in zip(layouts, avals) if len(getattr(a, "shape", ())) == len(shape)]
    if not shape or not same:
        return _replicated(out)
    return tuple(axes if n % math.prod(sizes[a] for a in axes) == 0 else () for axes, n in zip(_merge(same), shape))


def _gather_layout(operand: Layout, shape: Sequence[int], params: dict[str, Any], out_shape: tuple[int, ...]) -> Layout:
    """A gather's result keeps the operand's split of each dimension it takes whole (its
    offset dimensions with a full slice); the dimensions the indices give are whole. (XLA
    simplifies a gather by constant indices that pick every row in order to the operand
    itself, keeping its layout; this rule does not look at the indices' values.)"""
    ndim = len(out_shape)
    numbers = params["dimension_numbers"]
    skipped = set(numbers.collapsed_slice_dims) | set(numbers.operand_batching_dims)
    offset_sources = [d for d in range(len(shape)) if d not in skipped]
    out: list[tuple[str, ...]] = [()] * ndim
    for o, d in zip(numbers.offset_dims, offset_sources):
        if params["slice_sizes"][d] == shape[d]:
            out[o] = operand[d]
    return tuple(out)


def _sort_layout(layout: Layout, shape: Sequence[int], dim: int, sizes: dict[str, int]) -> Layout:
    """XLA sorts along a split dimension by moving its split to another dimension first (and
    back after): where no other dimension can take it too, the result is whole everywhere."""
    if not layout or not layout[dim]:
        return layout
    parts = math.prod(sizes[a] for a in layout[dim])
    if any(i != dim and n % (parts * math.prod(sizes[a] for a in layout[i])) == 0 for i, n in enumerate(shape)):
        return layout
    return ((),) * len(layout)


def _scan_layouts(layouts: Sequence[Layout], params: dict[str, Any], sizes: dict[str, int]) -> list[Layout | None]:
    """A scan's results: its body's, with the stacked outputs whole along their new leading
    dimension. A carry takes the layout the body gives it (XLA's while loop does), found by
    running the body's rule twice, the second time on the first's carry."""
    n_consts, n_carry = params["num_consts"], params["num_carry"]
    body: Jaxpr = params["jaxpr"].jaxpr
    consts, carry = list(layouts[:n_consts]), list(layouts[n_consts : n_consts + n_carry])
    xs = [lay[1:] for lay in layouts[n_consts + n_carry :]]
    outs: list[Layout | None] = []
    for _ in range(2):
        outs = propagate(body, [*consts, *carry, *xs], sizes)
        if any(lay is None for lay in outs):
            return [None] * len(outs)
        carry = [_merge([out, init]) for out, init in zip(outs[:n_carry], carry) if out is not None]
    ys = [None if lay is None else ((), *lay) for lay in outs[n_carry:]]
    return [*carry, *ys]


# Primitives whose result is laid out as a sharding in their params says.
_LAID_OUT_BY_PARAM = {"sharding_constraint": "sharding", "reshard": "dst_sharding"}


def propagate(jaxpr: Jaxpr, layouts: Sequence[Layout | None], sizes: dict[str, int]) -> list[Layout | None]:
    """Each result's layout, from the arguments' (see the module's docstring); None for a
    layout no PartitionSpec names (a reshape that cuts a split dimension's blocks across
    result dimensions the mesh axes do not match), and for what is computed from one."""
    env: dict[Var, Layout | None] = dict(zip(jaxpr.invars, layouts))

    def read(atom: Any) -> Layout | None:
        if isinstance(atom, Literal):
            return _replicated(atom.aval)
        return env.get(atom, _replicated(atom.aval))

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        avals = [a.aval for a in eqn.invars]
        name = eqn.primitive.name
        params = eqn.params
        out_avals = [v.aval for v in eqn.outvars]
        outs: list[Layout | None] | None = None
        known = [lay for lay in ins if lay is not None]
        if len(known) < len(ins):
            outs = [None] * len(out_avals)
        elif name in ELEMENTWISE and len(out_avals) == 1:
            shape = out_avals[0].shape
            # operands of the result's rank (size-1 dimensions broadcast: split nowhere)
            same = [tuple(lay[d] if a.shape[d] == n else () for d, n in enumerate(shape))
                    for lay, a in zip(known, avals) if len(a.shape) == len(shape)]  # fmt: skip
            outs = [_merge(same) if same else _replicated(out_avals[0])]
        elif name == "stack":
            merged = _merge(known)
            outs = [(*merged[: params["axis"]], (), *merged[params["axis"] :])]
        elif name == "gather":
            outs = [_gather_layout(known[0], avals[0].shape, params, tuple(out_avals[0].shape))]
        elif name in ("slice", "pad", "dynamic_slice"):
            kept = _same_rank(known[:1], avals[:1], out_avals[0], sizes)
            empty = 0 in out_avals[0].shape
            # XLA keeps all splits or none (and none of an empty result)
            outs = [kept if kept == known[0] and not empty else _replicated(out_avals[0])]
        elif name in REDUCTIONS:
            dropped = set(params["axes"])
            outs = [tuple(lay for d, lay in enumerate(known[0]) if d not in dropped)]
        elif name == "transpose":
            outs = [tuple(known[0][p] for p in params["permutation"])]
        elif name == "broadcast_in_dim":
            out: list[tuple[str, ...]] = [()] * len(out_avals[0].shape)
            for d, o in enumerate(params["broadcast_dimensions"]):
                if avals[0].shape[d] == out_avals[0].shape[o]:
                    out[o] = known[0][d]
            outs = [tuple(out)]
        elif name in ("reshape", "squeeze"):
            outs = [_reshape_layout(known[0], avals[0].shape, out_avals[0].shape, sizes)]
        elif name in ("fft", "top_k"):  # (XLA's partitioner gathers these whole)
            outs = [_replicated(a) for a in out_avals]
        elif name == "sort":
            outs = [
                _sort_layout(_same_rank(known, avals, a, sizes), a.shape, params["dimension"], sizes) for a in out_avals
            ]
        elif name == "scan":
            outs = _scan_layouts(known, params, sizes)
        elif (name in _LAID_OUT_BY_PARAM and isinstance(params[_LAID_OUT_BY_PARAM[name]], NamedSharding)
              and set(params[_LAID_OUT_BY_PARAM[name]].spec.axis_names()) <= set(sizes)):  # fmt: skip
            # (XLA keeps a constraint's layout; an UNCONSTRAINED dimension keeps the operand's)
            given = layout_of(params[_LAID_OUT_BY_PARAM[name]].spec, len(out_avals[0].shape))
            spec = tuple(params[_LAID_OUT_BY_PARAM[name]].spec)
            outs = [tuple(known[0][d] if d < len(spec) and spec[d] is PartitionSpec.UNCONSTRAINED else given[d]
                          for d in range(len(given)))]  # fmt: skip
        elif name == "shard_map":  # (XLA lays a manual region's results out as its out_specs say)
            outs = [layout_of(spec, a.ndim) for spec, a in zip(params["out_specs"], out_avals)]
        elif name == "dot_general":
            outs = [
                _dot_layout(known[0], known[1], params, out_avals[0].shape, len(avals[0].shape), len(avals[1].shape))
            ]
        elif name == "rev":
            reversed_split = any(known[0][d] and avals[0].shape[d] > 1 for d in params["dimensions"])
            outs = [None if reversed_split else known[0]]  # XLA reverses the device order: no spec names it
        elif name == "tile":
            outs = [tuple(() if r != 1 else lay for lay, r in zip(known[0], params["reps"]))]
        elif name in (
            "jit",
            "pjit",
            "closed_call",
            "core_call",
            "remat2",
            "custom_jvp_call",
            "custom_vjp_call",
        ):
            inner = params.get("jaxpr", params.get("call_jaxpr"))
            if isinstance(inner, ClosedJaxpr):
                inner = inner.jaxpr
            if isinstance(inner, Jaxpr) and len(inner.invars) == len(ins):
                outs = propagate(inner, known, sizes)
        if outs is None:
            outs = [_same_rank(known, avals, a, sizes) for a in out_avals]
        for v, lay in zip(eqn.outvars, outs):
            env[v] = lay
    return [read(v) for v in jaxpr.outvars]


def compile_spmd(
    run_global: Callable[[list[Any]], list[Any]],
    closed: ClosedJaxpr,
    in_shardings: Sequence[NamedSharding],
    out_shardings: Sequence[NamedSharding | None],
) -> tuple[Callable[[list[Blocks]], list[Blocks]], list[NamedSharding]]:
    """A runner on the arguments' block lists, and each result's sharding: ``out_shardings``'
    where given, else :func:`propagate`'s. ``run_global`` runs the program on global values."""
    mesh = in_shardings[0].mesh
    in_avals: list[ShapedArray] = list(closed.in_avals)
    out_avals: list[ShapedArray] = list(closed.out_avals)
    sizes = dict(mesh.shape)
    # Axes of size 1 split nothing: the rules see only real splits.
    layouts = [
        tuple(tuple(n for n in axes if sizes[n] > 1) for axes in layout_of(s.spec, a.ndim))
        for s, a in zip(in_shardings, in_avals)
    ]
    derived = propagate(closed.jaxpr, layouts, sizes)
    results: list[NamedSharding] = []
    for given, lay, out_aval in zip(out_shardings, derived, out_avals):
        if given is not None:
            results.append(given)
        elif lay is None:  # as on XLA, where such a layout comes back from the partitioner
            raise NotImplementedError(
                "minijax: a result of this program is laid out in a way no PartitionSpec over "
                f"{mesh} names; give jit out_shardings= for it."
            )
        else:
            results.append(NamedSharding(mesh, spec_of(lay, dict(mesh.shape), result_hints(in_shardings, in_avals, out_aval))))

    def run(args: list[Blocks]) -> list[Blocks]:
        values = [assemble(b, s, a.shape, a.dtype) for b, s, a in zip(args, in_shardings, in_avals)]
        outs = run_global(values)
        return [put_shards(np.asarray(v, dtype=a.dtype), s) for v, a, s in zip(outs, out_avals, results)]

    return run, results
