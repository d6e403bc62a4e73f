"""shtypes (issue 17): sharding in types. A traced value laid out over Explicit mesh axes carries
a ``ShardedAval``; each staged primitive's result gets its sharding from a rule in ``_SHARDING_RULES``,
and operands whose shardings conflict raise ``ShardingTypeError``, as in JAX.

Installed into ``minijax.core.sharding_in_types`` on import (the tracer, a layer down, calls it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from minijax.core import ShapedArray, Tracer, partial_sum_products, sharding_in_types
from minijax.mesh import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    ShardedAval,
    ShardingTypeError,
    _entry_axes,
    get_abstract_mesh,
    get_mesh,
)
from minijax.placement import lay_out, resolve_sharding


def _explicit_dims(aval: ShapedArray) -> tuple[Any, ...] | None:
    """The spec entry of each dimension, padded with None; None when no Explicit axis splits the value."""
    sharding = getattr(aval, "sharding", None)
    if not isinstance(sharding, NamedSharding):
        return None
    kinds = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_types))
    if not any(kinds.get(a) is AxisType.Explicit for a in sharding.spec.axis_names()):
        return None
    spec = tuple(sharding.spec)
    return spec[: aval.ndim] + (None,) * (aval.ndim - len(spec))


def _mesh_of(aval: ShapedArray) -> Any:
    sharding = aval.sharding if isinstance(aval, ShardedAval) else None
    return sharding.mesh if isinstance(sharding, NamedSharding) else None


def _with_dims(
    out: ShapedArray, mesh: Any, dims: Sequence[Any], name: str, in_avals: Sequence[ShapedArray]
) -> ShapedArray:
    if all(d is None for d in dims):
        return ShapedArray(out.shape, out.dtype, out.weak_type)
    used = [a for e in dims for a in _entry_axes(e)]
    if len(used) != len(set(used)):
        # A mesh axis may split at most one dimension of a result.
        kinds = dict(zip(mesh.axis_names, mesh.axis_types))
        text = [str(n) + "".join(f"@{a}" for a in _entry_axes(e) if kinds[a] is AxisType.Explicit)
                for n, e in zip(out.shape, dims)]  # fmt: skip
        plain = out.str_short()
        shown = ", ".join(a.str_short() for a in in_avals)
        raise ShardingTypeError(
            f"{name} operation with inputs: {shown} produces an illegally sharded result: "
            f"{plain[: plain.index('[')]}[{','.join(text)}]"
        )
    entries = list(dims)
    while entries and entries[-1] is None:  # (a derived spec names its split dimensions, as device_put's do)
        entries.pop()
    return ShardedAval(out.shape, out.dtype, out.weak_type, NamedSharding(mesh, PartitionSpec(*entries)))


def _elementwise_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    # Every operand of the result's rank contributes; a dimension split by two different axis sets conflicts.
    specs = [(d, a) for a in in_avals if a.ndim == out.ndim and (d := _explicit_dims(a)) is not None]
    if not specs:
        return out
    dims: list[Any] = [None] * out.ndim
    for d, _ in specs:
        for i, entry in enumerate(d):
            if entry is not None and dims[i] is not None and dims[i] != entry:
                shown = ", ".join(repr(tuple(_spec_of(a))) for a in in_avals if a.ndim == out.ndim)
                raise ShardingTypeError(f"{name} got incompatible shardings for broadcasting: {shown}.")
            if entry is not None:
                dims[i] = entry
    mesh = _mesh_of(specs[0][1])
    return _with_dims(out, mesh, dims, name, in_avals)


def _spec_of(aval: ShapedArray) -> tuple[Any, ...]:
    return _explicit_dims(aval) or (None,) * aval.ndim


def _transpose_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    dims = _explicit_dims(in_avals[0])
    if dims is None:
        return out
    return _with_dims(out, _mesh_of(in_avals[0]), [dims[p] for p in params["permutation"]], name, in_avals)


def _reduce_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    # The reduced dimensions' sharding goes away with them (JAX: the result is all-reduced over those axes).
    dims = _explicit_dims(in_avals[0])
    if dims is None:
        return out
    axes = set(params["axes"])
    return _with_dims(out, _mesh_of(in_avals[0]), [e for i, e in enumerate(dims) if i not in axes], name, in_avals)


def _broadcast_in_dim_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    dims = _explicit_dims(in_avals[0])
    if dims is None:
        return out
    out_dims: list[Any] = [None] * out.ndim
    for i, d in enumerate(params["broadcast_dimensions"]):
        out_dims[d] = dims[i] if in_avals[0].shape[i] == out.shape[d] else None
    return _with_dims(out, _mesh_of(in_avals[0]), out_dims, name, in_avals)


def _dot_general_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    if params.get("out_sharding") is not None:
        return out  # the primitive's own rule refuses it (docs/differences.md)
    lhs, rhs = in_avals
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    ls, rs = _spec_of(lhs), _spec_of(rhs)
    lhs_batch, rhs_batch = tuple(ls[i] for i in lb), tuple(rs[i] for i in rb)
    if any(a is not None and b is not None and a != b for a, b in zip(lhs_batch, rhs_batch)):
        raise ShardingTypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the consistent sharding, "
            f"got {lhs_batch} and {rhs_batch}."
        )
    lhs_contracting_spec, rhs_contracting_spec = tuple(ls[i] for i in lc), tuple(rs[i] for i in rc)
    pairs = list(zip(lhs_contracting_spec, rhs_contracting_spec))
    if any(a is not None and b is not None and a != b for a, b in pairs):
        raise ShardingTypeError(
            "dot_general requires contracting dimensions to have consistent sharding, "
            f"got {lhs_contracting_spec} and {rhs_contracting_spec}."
        )
    if any(a is not None and b is not None for a, b in pairs):
        if partial_sum_products.allowed:
            return ShapedArray(out.shape, out.dtype, out.weak_type)
        # Each device would hold a partial sum: the user says where the result lives.
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be sharded. Please "
            "specify the output sharding via the `out_sharding` parameter. "
            f"Got {lhs_contracting_spec=} and {rhs_contracting_spec=}"
        )
    # The result's dimensions: batch (as the lhs has them), then the lhs's free ones, then the rhs's.
    lhs_free = [e for i, e in enumerate(ls) if i not in (*lc, *lb)]
    rhs_free = [e for i, e in enumerate(rs) if i not in (*rc, *rb)]
    mesh = _mesh_of(lhs if _explicit_dims(lhs) is not None else rhs)
    return _with_dims(out, mesh, [*lhs_batch, *lhs_free, *rhs_free], name, in_avals)


def _concatenate_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    placed = [a for a in in_avals if _explicit_dims(a) is not None]
    first = _explicit_dims(placed[0]) if placed else None
    if first is None:
        return out
    if any(_explicit_dims(a) != first for a in placed):

        def shown(a: ShapedArray) -> str:
            # A trace's sharding is over the abstract mesh and names no memory kind.
            return f"NamedSharding(mesh={_mesh_of(a).abstract_mesh!r}, spec={PartitionSpec(*_spec_of(a))!r})"

        raise ShardingTypeError(
            f"All operands should have the same sharding. Got shardings {', '.join(shown(a) for a in placed)}"
        )
    return _with_dims(out, _mesh_of(placed[0]), first, name, in_avals)


# ---------------------------------------------------------------------------
# reshape: a split dimension's axes go to the pieces it is split into (major first), merged
# dimensions' axes to the dimension they make; anything else needs out_sharding= (as in JAX).


class _Unresolved(Exception):
    pass


def _one_group(old: Sequence[int], new: Sequence[int]) -> list[Any] | None:
    """Per dimension of ``old``: its size when ``new`` keeps it, or the list of ``new``'s sizes it
    splits into, when ``new`` splits exactly one dimension of ``old``; None when it splits none.
    Raises _Unresolved when it splits more than one."""
    if len(new) <= len(old):
        return None
    trailing = 0
    while old and new and old[-1] == 1 and new[-1] == 1:
        old, new, trailing = old[:-1], new[:-1], trailing + 1
    out: list[Any] = []
    i = j = groups = 0
    while j < len(new):
        if i >= len(old):
            return None
        if old[i] == new[j]:
            out.append(old[i])
        else:
            groups += 1
            if groups > 1:
                raise _Unresolved
            group = [new[j]]
            start = j
            while math.prod(group) != old[i] or (start + 1 < len(new) and new[start + 1] == 1):
                if math.prod(group) > old[i]:
                    return None
                if math.prod(group) == old[i] and i + 1 < len(old) and new[start + 1] == old[i + 1]:
                    break
                j += 1
                if j >= len(new):
                    return None
                group.append(new[j])
                start += 1
            out.append(group)
        i += 1
        j += 1
    return out + [1] * trailing


def _spread(axes: Sequence[str], sizes: Sequence[int], mesh: Any) -> list[Any]:
    """``axes`` (major first) handed out over dimensions of ``sizes``: each takes axes while its
    size is left over 1, and each axis must divide what is left."""
    rest, out = list(axes), []
    for size in sizes:
        mine = []
        while size > 1 and rest:
            size, left = divmod(size, mesh.shape[rest[0]])
            if left:
                raise _Unresolved
            mine.append(rest.pop(0))
        out.append(None if not mine else mine[0] if len(mine) == 1 else tuple(mine))
    if rest:
        raise _Unresolved
    return out


def _reshape_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    operand = in_avals[0]
    dims = _explicit_dims(operand)
    if dims is None:
        return out
    mesh, old, new = _mesh_of(operand), tuple(operand.shape), tuple(out.shape)
    try:
        if [n for n in old if n != 1] == [n for n in new if n != 1]:
            kept = iter(e for n, e in zip(old, dims) if n != 1)
            return _with_dims(out, mesh, [None if n == 1 else next(kept) for n in new], name, in_avals)
        split = _one_group(old, new)
        if split is not None:
            result: list[Any] = []
            for piece, entry in zip(split, dims):
                if not isinstance(piece, list):
                    result.append(entry)
                elif entry is None:
                    result.extend([None] * len(piece))
                elif params.get("dimensions") is None:
                    result.extend(_spread(_entry_axes(entry), piece, mesh))
                else:
                    raise _Unresolved
            return _with_dims(out, mesh, result, name, in_avals)
        merge = _one_group(new, old) if len(new) < len(old) else None
        if merge is not None:
            result, entries = [], iter(dims)
            for size, piece in zip(new, merge):
                if not isinstance(piece, list):
                    result.append(next(entries))
                    continue
                group = [next(entries) for _ in piece]
                if all(e is None for e in group):
                    result.append(None)
                    continue
                axes = [a if e is not None else None for e in group for a in (_entry_axes(e) or (None,))]
                while axes[-1] is None:
                    axes.pop()
                if None in axes or params.get("dimensions") is not None:
                    raise _Unresolved
                result.extend(_spread([a for a in axes if a is not None], [size], mesh))
            return _with_dims(out, mesh, result, name, in_avals)
    except _Unresolved:
        pass
    raise ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the `out_sharding` argument "
        f"of jax.lax.reshape. Got operand type: {_long(operand)}, new sizes: {new}"
    )


def _long(aval: ShapedArray) -> str:
    """An aval as JAX's errors print it: ``float32[8@x,4]``."""
    return aval.str_short(short_dtypes=False)


# ---------------------------------------------------------------------------
# Rules that keep the operand's sharding, drop or refuse some of its dimensions


def _varying_rule(what: str) -> Any:
    """slice, pad, dynamic_slice, split: the operand's sharding (as JAX 0.10.2 keeps it), where each
    dimension that changes size still divides by the axes that split it (JAX asks for even shards)."""

    def rule(name: str, in_avals: Sequence[ShapedArray], out: Any, params: dict[str, Any]) -> Any:
        operand = in_avals[0]
        dims = _explicit_dims(operand)
        if dims is None:
            return out
        mesh = _mesh_of(operand)
        results = out if isinstance(out, (list, tuple)) else [out]
        for res in results:
            for n_in, n_out, entry in zip(operand.shape, res.shape, dims):
                size = math.prod(mesh.shape[a] for a in _entry_axes(entry))
                if n_in != n_out and entry is not None and n_out % size:
                    raise ShardingTypeError(
                        f"{what} on sharded dims where out dim ({n_out}) is not divisible by mesh axes ({size}) with "
                        f"spec ({entry}) is not implemented. Got input type={operand.str_short()} and output "
                        f"shape={res.shape}"
                    )
        typed = [_with_dims(res, mesh, dims, name, in_avals) for res in results]
        return typed if isinstance(out, (list, tuple)) else typed[0]

    return rule


def _same_rule(name: str, in_avals: Sequence[ShapedArray], out: Any, params: dict[str, Any]) -> Any:
    """rev, copy, reduce_precision, ...: the operand's sharding."""
    dims = _explicit_dims(in_avals[0])
    return out if dims is None else _with_dims(out, _mesh_of(in_avals[0]), dims, name, in_avals)


def _squeeze_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    dims = _explicit_dims(in_avals[0])
    if dims is None:
        return out
    gone = {d % in_avals[0].ndim for d in params["dimensions"]}
    return _with_dims(out, _mesh_of(in_avals[0]), [e for i, e in enumerate(dims) if i not in gone], name, in_avals)


def _argminmax_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    dims = _explicit_dims(in_avals[0])
    if dims is None:
        return out
    (axis,) = params["axes"]
    return _with_dims(out, _mesh_of(in_avals[0]), [e for i, e in enumerate(dims) if i != axis], name, in_avals)


def _cumulative_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    dims = _explicit_dims(in_avals[0])
    if dims is None:
        return out
    axis = params["axis"]
    if dims[axis] is not None:
        raise ShardingTypeError(
            "Input should be unsharded over the axis being reduced. Got input "
            f"type={_long(in_avals[0])} and axis={axis}"
        )
    return _with_dims(out, _mesh_of(in_avals[0]), dims, name, in_avals)


def _named(aval: ShapedArray) -> NamedSharding:
    """The NamedSharding of an aval ``_explicit_dims`` found Explicit axes in."""
    sharding = getattr(aval, "sharding", None)
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"{aval} carries no NamedSharding")
    return sharding


def _abstract(sharding: NamedSharding) -> str:
    return f"NamedSharding(mesh={sharding.mesh.abstract_mesh!r}, spec={sharding.spec!r})"


def _sort_rule(name: str, in_avals: Sequence[ShapedArray], out: Any, params: dict[str, Any]) -> Any:
    placed = [a for a in in_avals if _explicit_dims(a) is not None]
    if not placed:
        return out
    dim = params["dimension"]
    for a in placed:
        if _spec_of(a)[dim] is not None:
            raise ShardingTypeError(
                "Arguments to sort must be unsharded over the sorting dimension. "
                f"Got arg sharding={_abstract(_named(a))} and sorting dimension={dim}"
            )
    first = _explicit_dims(placed[0])
    assert first is not None
    if any(_spec_of(a) != first for a in placed):  # (an unplaced operand, minijax's argsort iota: follows)
        raise ShardingTypeError(
            "Arguments to sort must have the same sharding. Got shardings "
            + " ".join(_abstract(_named(a)) for a in placed)
        )
    return [_with_dims(o, _mesh_of(placed[0]), first, name, in_avals) for o in out]


def _top_k_rule(name: str, in_avals: Sequence[ShapedArray], out: Any, params: dict[str, Any]) -> Any:
    operand = in_avals[0]
    dims = _explicit_dims(operand)
    if dims is None:
        return out
    axis = params.get("axis", operand.ndim - 1)
    axis = operand.ndim - 1 if axis is None else axis % operand.ndim
    if dims[axis] is not None:
        raise ShardingTypeError(
            "The input should be unsharded over the axis along which to compute the top_k values. "
            f"Got input type={_long(operand)} and axis={axis}"
        )
    return [_with_dims(o, _mesh_of(operand), dims, name, in_avals) for o in out]


def _tile_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    operand = in_avals[0]
    dims = _explicit_dims(operand)
    if dims is None:
        return out
    for i, (entry, r) in enumerate(zip(dims, params["reps"])):
        if entry is not None and r != 1:
            raise ShardingTypeError(
                f"Operand cannot be sharded on dimension {i} when the tiling is non-trivial. Got input type: "
                f"{_long(operand)} with reps: {tuple(params['reps'])}"
            )
    return _with_dims(out, _mesh_of(operand), dims, name, in_avals)


def _stack_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    # As concatenate: the operands agree; the new dimension is whole.
    kept = _concatenate_rule(name, in_avals, ShapedArray(in_avals[0].shape, out.dtype, out.weak_type), params)
    dims = _explicit_dims(kept)
    if dims is None:
        return out
    axis = params["axis"]
    return _with_dims(out, _mesh_of(kept), [*dims[:axis], None, *dims[axis:]], name, in_avals)


def _dynamic_update_slice_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    operand, update = in_avals[0], in_avals[1]
    if _explicit_dims(operand) is None and _explicit_dims(update) is None:
        return out
    if _spec_of(operand) != _spec_of(update):
        raise ShardingTypeError(
            "dynamic_update_slice operand sharding must be equal to update sharding, got operand sharding "
            f"{_with_kinds(operand)} and update sharding {_with_kinds(update)}."
        )
    return _with_dims(out, _mesh_of(operand), _spec_of(operand), name, in_avals)


def _with_kinds(aval: ShapedArray) -> str:
    # JAX's str_short(mesh_axis_types=True): the type, then the mesh's axes by kind.
    mesh = _mesh_of(aval)
    if mesh is None:
        mesh = get_abstract_mesh()
    kinds: dict[str, list[str]] = {}
    for axis, kind in zip(mesh.axis_names, mesh.axis_types):
        kinds.setdefault(kind.name, []).append(axis)
    text = ", ".join(f"{k}: {tuple(v)!r}" for k, v in kinds.items())
    return f"{_long(aval)}({{{text}}})"


def _conv_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    # JAX's: a replicated rhs and an lhs whole over its feature dimension give the lhs's sharding
    # (position for position, each changed dimension still dividing evenly); else out_sharding=.
    lhs, rhs = in_avals
    if _explicit_dims(lhs) is None and _explicit_dims(rhs) is None:
        return out
    if _explicit_dims(rhs) is None and _spec_of(lhs)[params["dimension_numbers"].lhs_spec[1]] is None:
        return _varying_rule("conv_general_dilated")(name, [lhs], out, params)
    raise ShardingTypeError("Please specify the output sharding via `out_sharding` parameter of `conv_general_dilated`")


# ---------------------------------------------------------------------------
# gather and scatter: JAX's rules, which let a sharding through where each device holds all it
# reads (or writes) and refuse the rest (out_sharding= on .at[...] says where the result lives).


def _gather_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    operand, indices = in_avals
    if _explicit_dims(operand) is None and _explicit_dims(indices) is None:
        return out
    dn, sizes = params["dimension_numbers"], params["slice_sizes"]
    ops, ids = _spec_of(operand), list(_spec_of(indices))
    pairs = list(zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
    ok = (
        all(sizes[d] == operand.shape[d] or ops[d] is None for d in dn.start_index_map)  # whole slices or unsplit
        and all(ids[i] is None or ops[o] is None or ids[i] == ops[o] for o, i in pairs)  # batch dims agree
        and all(e is None for i, e in enumerate(ids) if i not in dn.start_indices_batching_dims)
    )
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing as out "
            "sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
            f"operand={operand!r}, indices={indices!r}"
        )
    for o, i in pairs:
        ids[i] = ids[i] if ids[i] is not None else ops[o]
    # Offset dimensions come from the operand's kept dimensions, the others from the indices'.
    kept = iter(d for d in range(operand.ndim) if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims)
    from_indices = iter(ids)
    dims = [ops[next(kept)] if i in dn.offset_dims else next(from_indices) for i in range(out.ndim)]
    mesh = _mesh_of(operand if _explicit_dims(operand) is not None else indices)
    return _with_dims(out, mesh, dims, name, in_avals)


def _scatter_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    operand, indices, updates = in_avals[:3]
    if all(_explicit_dims(a) is None for a in (operand, indices, updates)):
        return out
    dn = params["dimension_numbers"]
    ops, ids, ups = _spec_of(operand), _spec_of(indices), _spec_of(updates)
    vector_dim = indices.ndim - 1
    # Where each indices batching dimension sits in the updates: the scatter dims, with the window ones between.
    scatter_dims: list[int | None] = list(range(vector_dim))
    for w in dn.update_window_dims:
        scatter_dims.insert(w, None)
    up_batch = [scatter_dims.index(i) for i in dn.scatter_indices_batching_dims]
    windows = [d for d in range(operand.ndim) if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    batches = list(zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, up_batch))
    ok = (
        all(len({e for e in (ops[o], ids[i], ups[u]) if e is not None}) <= 1 for o, i, u in batches)
        and all((updates.shape[u] == operand.shape[o] and ups[u] == ops[o]) or (ups[u] is None and ops[o] is None)
                for u, o in zip(dn.update_window_dims, windows))  # fmt: skip
        and all(ops[d] is None for d in dn.inserted_window_dims)
        and all(e is None for i, e in enumerate(ups) if i not in up_batch and i not in dn.update_window_dims)
        and all(e is None for i, e in enumerate(ids[:vector_dim]) if i not in dn.scatter_indices_batching_dims)
        and ids[vector_dim] is None
    )
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the scatter update "
            "as out sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
            f"operand={operand!r}, indices={indices!r}, updates={updates!r}"
        )
    dims = list(ops)
    for o, i, u in batches:
        dims[o] = dims[o] if dims[o] is not None else (ids[i] if ids[i] is not None else ups[u])
    for u, o in zip(dn.update_window_dims, windows):
        dims[o] = dims[o] if dims[o] is not None else ups[u]
    placed = next(a for a in (operand, indices, updates) if _explicit_dims(a) is not None)
    return _with_dims(out, _mesh_of(placed), dims, name, in_avals)


# ---------------------------------------------------------------------------
# scan: the carry keeps its type (the body's); the stacked results are whole along the scanned
# dimension; the scanned operands must be whole along it (JAX's ValueError).


def _scan_rule(name: str, in_avals: Sequence[ShapedArray], out: Any, params: dict[str, Any]) -> Any:
    num_carry = params["num_carry"]
    body_out = params["jaxpr"].out_avals
    typed = list(out)
    for k, (o, b) in enumerate(zip(out, body_out)):
        dims = _explicit_dims(b)
        if dims is not None:
            typed[k] = _with_dims(o, _mesh_of(b), dims if k < num_carry else (None, *dims), name, in_avals)
    return typed


def scan_slice_aval(x_aval: ShapedArray, sliced: ShapedArray) -> ShapedArray:
    """The type of one slice ``sliced`` of a scanned operand of type ``x_aval``: its layout without the
    scanned dimension, which must be whole (JAX's ValueError otherwise)."""
    dims = _explicit_dims(x_aval)
    if dims is None:
        return sliced
    if dims[0] is not None:
        raise ValueError(f"0th dimension of all xs should be replicated. Got {_named(x_aval).spec!r}")
    return _with_dims(sliced, _mesh_of(x_aval), dims[1:], "scan", [x_aval])


def explicit_spec(aval: ShapedArray) -> tuple[Any, ...] | None:
    """The Explicit spec entry of each dimension of ``aval``; None when no Explicit axis splits it."""
    return _explicit_dims(aval)


def _constraint_check(have: Sequence[Any], given: Any) -> bool:
    """Whether a constraint to ``given`` on a value whose Explicit layout is ``have`` (one entry per
    dimension) is a check: a mesh of Explicit axes only. A mismatch raises JAX's AssertionError."""
    if not isinstance(given, NamedSharding) or any(t is not AxisType.Explicit for t in given.mesh.axis_types):
        return False
    spec = tuple(given.spec)[: len(have)]
    if tuple(have) != spec + (None,) * (len(have) - len(spec)):
        raise AssertionError(
            "`with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. The "
            f"array sharding: {PartitionSpec(*have)!r} did not match the sharding provided: {given.spec!r}. "
            "Please use `jax.sharding.reshard` to shard your input to the sharding you want."
        )
    return True


def explicit_constraint(x: Any, given: Any) -> bool:
    """``with_sharding_constraint(x, given)`` over Explicit axes only, on a value whose type carries
    its layout (a traced one's, or an array's): an assert, true when it holds (JAX stages nothing)."""
    typed = explicit_type(x)
    have = None if typed is None else _explicit_dims(typed)
    return have is not None and _constraint_check(have, given)


def explicit_type(x: Any) -> ShardedAval | None:
    """The type of ``x`` when it carries a layout over Explicit mesh axes (a traced value's, or an
    Array laid out so); None otherwise."""
    if isinstance(x, Tracer):
        aval = x.aval
        return aval if isinstance(aval, ShardedAval) and _explicit_dims(aval) is not None else None
    sharding = getattr(x, "_sharding", None)
    if not isinstance(sharding, NamedSharding) or not hasattr(x, "shape"):
        return None
    typed = ShardedAval(x.shape, x.dtype, False, sharding)
    return typed if _explicit_dims(typed) is not None else None


def _sharding_constraint_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    # Over Explicit axes the type already says the layout: the constraint only checks it (JAX's
    # reshard changes it). The result keeps the operand's sharding.
    operand = in_avals[0]
    have = _explicit_dims(operand)
    if have is not None:
        _constraint_check(have, params["sharding"])
    return operand if have is not None else out


def _reshard_rule(name: str, in_avals: Sequence[ShapedArray], out: ShapedArray, params: dict[str, Any]) -> Any:
    # The result's type is the layout asked for (its Explicit axes: over Auto ones the compiler decides).
    dst = params["dst_sharding"]
    if not isinstance(dst, NamedSharding):
        return out
    spec = tuple(dst.spec)
    dims = spec[: out.ndim] + (None,) * (out.ndim - len(spec))
    typed = ShardedAval(out.shape, out.dtype, out.weak_type, NamedSharding(dst.mesh, PartitionSpec(*dims)))
    if _explicit_dims(typed) is None:
        return ShapedArray(out.shape, out.dtype, out.weak_type)
    return _with_dims(out, dst.mesh, dims, name, in_avals)


def shard_map_out_sharding(mesh: Any, spec: PartitionSpec, ndim: int) -> NamedSharding | None:
    """The type's sharding of a shard_map result laid out by ``spec``: its Explicit axes, over the
    abstract mesh (None where no Explicit axis splits it)."""
    abstract = mesh.abstract_mesh if isinstance(mesh, Mesh) else mesh
    kinds = dict(zip(abstract.axis_names, abstract.axis_types))
    dims: list[Any] = []
    for d in range(ndim):
        axes = tuple(a for a in _entry_axes(spec[d] if d < len(spec) else None) if kinds.get(a) is AxisType.Explicit)
        dims.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    while dims and dims[-1] is None:
        dims.pop()
    return NamedSharding(abstract, PartitionSpec(*dims)) if dims else None


def _shard_map_rule(name: str, in_avals: Sequence[ShapedArray], out: Any, params: dict[str, Any]) -> Any:
    # Each result is laid out as its out_specs entry says: its type names the Explicit axes (as JAX's).
    typed = []
    for o, spec in zip(out, params["out_specs"]):
        sharding = shard_map_out_sharding(params["mesh"], spec, o.ndim)
        typed.append(o if sharding is None else ShardedAval(o.shape, o.dtype, o.weak_type, sharding))
    return typed


_ELEMENTWISE = (
    "neg sign floor ceil round is_finite exp exp2 log log1p expm1 tanh logistic sin cos tan asin acos atan "
    "sinh cosh asinh acosh atanh sqrt rsqrt cbrt abs not imag real conj square integer_pow erf erfc "
    "erf_inv lgamma digamma convert_element_type reduce_precision copy copy_p stop_gradient "
    "add sub mul div rem pow max min atan2 nextafter and or xor eq ne lt le gt ge "
    "shift_left shift_right_logical shift_right_arithmetic select_n clamp population_count clz"
).split()

_SHARDING_RULES: dict[str, Any] = {
    **dict.fromkeys(_ELEMENTWISE, _elementwise_rule),
    "transpose": _transpose_rule,
    "broadcast_in_dim": _broadcast_in_dim_rule,
    "dot_general": _dot_general_rule,
    "slice": _varying_rule("slicing"),
    "concatenate": _concatenate_rule,
    "sharding_constraint": _sharding_constraint_rule,
    "reshard": _reshard_rule,
    "reshape": _reshape_rule,
    "squeeze": _squeeze_rule,
    "pad": _varying_rule("padding"),
    "dynamic_slice": _varying_rule("dynamic_slice"),
    "split": _varying_rule("split"),
    "dynamic_update_slice": _dynamic_update_slice_rule,
    "rev": _same_rule,
    "argmax": _argminmax_rule,
    "argmin": _argminmax_rule,
    **dict.fromkeys("cumsum cumprod cummax cummin cumlogsumexp".split(), _cumulative_rule),
    "sort": _sort_rule,
    "top_k": _top_k_rule,
    "tile": _tile_rule,
    "stack": _stack_rule,
    "conv_general_dilated": _conv_rule,
    "gather": _gather_rule,
    "scan": _scan_rule,
    "shard_map": _shard_map_rule,
    **dict.fromkeys("scatter scatter-add scatter-sub scatter-mul scatter-min scatter-max".split(), _scatter_rule),
    **dict.fromkeys("reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or reduce_xor".split(),
                    _reduce_rule),  # fmt: skip
}


def _given(params: dict[str, Any]) -> NamedSharding | None:
    """The sharding a primitive's params name for its result (``out_sharding=`` of dot_general,
    reduce_sum, conv; ``sharding=`` of broadcast_in_dim, reshape, iota, sharding_constraint)."""
    for key in ("out_sharding", "sharding"):
        given = params.get(key)
        if isinstance(given, NamedSharding):
            return given
    return None


# Primitives whose ``sharding`` param is no result type (their rule reads it).
_RULE_OWN_SHARDING = {"sharding_constraint", "reshard"}


def _propagate(prim: Any, in_avals: Sequence[ShapedArray], out: Any, params: dict[str, Any]) -> Any:
    given = _given(params) if not prim.multiple_results and prim.name not in _RULE_OWN_SHARDING else None
    if given is not None and _explicit_dims(ShardedAval(out.shape, out.dtype, out.weak_type, given)) is not None:
        # The caller said where the result lives (an ``out_sharding=`` argument): its type says so.
        spec = tuple(given.spec)[: out.ndim]
        dims = spec + (None,) * (out.ndim - len(spec))
        _with_dims(out, given.mesh, dims, prim.name, in_avals)  # (checks it)
        # The spec as given, one entry per dimension (as JAX normalizes a given sharding).
        return ShardedAval(out.shape, out.dtype, out.weak_type, NamedSharding(given.mesh, PartitionSpec(*dims)))
    rule = _SHARDING_RULES.get(prim.name)
    if rule is None:
        # Not yet ruled: the result carries no sharding, as before (docs/differences.md lists this).
        return out
    return rule(prim.name, in_avals, out, params)


def out_sharding_param(out_sharding: Any, what: str) -> NamedSharding | None:
    """An ``out_sharding=`` argument as the primitive's param: a NamedSharding over the abstract
    mesh (as JAX stages it), from a PartitionSpec over the mesh ``jax.set_mesh`` set or a NamedSharding."""
    if out_sharding is None:
        return None
    if isinstance(out_sharding, PartitionSpec):
        mesh = get_abstract_mesh()
        if mesh.empty:
            raise ValueError(
                "Using PartitionSpec when you are not under a mesh context is not allowed. Please pass a "
                f"NamedSharding instance or enter into a mesh context via `jax.set_mesh`. Got {out_sharding!r}"
            )
        return NamedSharding(mesh, out_sharding)
    if isinstance(out_sharding, NamedSharding):
        return NamedSharding(out_sharding.mesh.abstract_mesh, out_sharding.spec)
    raise TypeError(
        f"`out_sharding` argument of {what} only supports instances of `NamedSharding` or `PartitionSpec`. "
        f"Got {out_sharding} of type: {type(out_sharding)}"
    )


def concrete_sharding(sharding: Any) -> NamedSharding | None:
    """A type's sharding over the mesh that holds the devices: a NamedSharding over an abstract
    mesh names that of ``jax.set_mesh``'s mesh when it is its abstract mesh (None otherwise)."""
    if not isinstance(sharding, NamedSharding):
        return None
    mesh = sharding.mesh
    if isinstance(mesh, Mesh):
        return sharding
    current = get_mesh()
    if current.empty:
        return None
    if current.abstract_mesh == mesh:
        return NamedSharding(current, sharding.spec)
    if isinstance(mesh, AbstractMesh) and mesh.size == current.size:
        # An abstract mesh of other axes (``use_abstract_mesh`` inside a jit) over the same devices: JAX
        # builds its concrete mesh from the program's devices, in their order.
        devices = current.devices.reshape(tuple(mesh.axis_sizes))
        return NamedSharding(Mesh(devices, tuple(mesh.axis_names), axis_types=tuple(mesh.axis_types)), sharding.spec)
    return None


def typed_out_shardings(avals: Sequence[ShapedArray]) -> list[NamedSharding | None] | None:
    """Per result, the sharding its type carries over the devices' mesh (None where it carries
    none); None when no result carries one. A program's results are laid out so (as in JAX)."""
    found = [_without_unit_axes(concrete_sharding(a.sharding)) if type(a) is ShardedAval else None for a in avals]
    return found if any(s is not None for s in found) else None


def _without_unit_axes(sharding: NamedSharding | None) -> NamedSharding | None:
    # A mesh axis of size 1 splits nothing: the layout without it is the same one, and the
    # name the backends read a layout back as (mesh.candidate_specs' first).
    if sharding is None:
        return None
    sizes = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_sizes))
    if all(sizes[a] > 1 for a in sharding.spec.axis_names()):
        return sharding
    entries = []
    for entry in sharding.spec:
        axes = tuple(a for a in _entry_axes(entry) if sizes[a] > 1)
        entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    while entries and entries[-1] is None:
        entries.pop()
    return NamedSharding(sharding.mesh, PartitionSpec(*entries))


def place_result(x: Any, out_sharding: Any, what: str) -> Any:
    """An eager result laid out as its ``out_sharding=`` argument says (a traced one's type says it already)."""
    if out_sharding is None or isinstance(x, Tracer):
        return x
    if isinstance(out_sharding, PartitionSpec):
        out_sharding = resolve_sharding(out_sharding, what)
    if isinstance(out_sharding, NamedSharding):
        out_sharding = concrete_sharding(out_sharding) or out_sharding
        spec = tuple(out_sharding.spec)[: x.ndim]  # one entry per dimension, as JAX normalizes it
        out_sharding = NamedSharding(out_sharding.mesh, PartitionSpec(*spec, *(None,) * (x.ndim - len(spec))))
    return lay_out(x, out_sharding, what)


def _arg_aval(x: Any, aval: ShapedArray) -> ShapedArray:
    if isinstance(x, Tracer):
        return aval  # an enclosing trace's value: its aval carries its sharding already
    # An Array made from a jit's result may hold the trace's ShardedAval; its own layout is the truth.
    sharding = getattr(x, "_sharding", None)
    if isinstance(sharding, NamedSharding):
        placed = ShardedAval(aval.shape, aval.dtype, aval.weak_type, sharding)
        if _explicit_dims(placed) is not None:
            return placed
    return aval if type(aval) is ShapedArray else ShapedArray(aval.shape, aval.dtype, aval.weak_type)


sharding_in_types.update(propagate=_propagate, arg_aval=_arg_aval)
