"""Collectives: operations across the members of a named mapped axis.

``vmap(f, axis_name="i")`` runs ``f`` once per member of an axis called
``"i"``; inside ``f`` the collectives combine values across those members:
``psum`` / ``pmax`` / ``pmin`` (all-reduce), ``all_gather`` and
``reduce_scatter`` (its transpose, reached through ``lax.psum_scatter``), and
``axis_index`` (which member am I). ``spec/primitives/collectives.md`` is the
written specification; each check below cites its constraint label.

How they run: never on a backend with a named axis. The batching trace of the
vmap that binds the name rewrites each collective into ordinary array
operations on the batched value (its ``trace_batch_rules`` below): a ``psum`` over
``"i"`` becomes a ``psum`` over the *positional* batch axis, which is just a
reduction. Positional axes (ints in ``axes``) are what backends see; a named
axis reaching a backend means the name was never bound (NameError).

Which names are bound is the axis environment of
``minijax/interpreters/batching.py`` (``lookup_axis_size``). ``lax.psum`` and
friends (``minijax/lax/parallel.py``) look names up when they are called, and
raise JAX's ``NameError: unbound axis name: i`` for a name nothing binds. (The
check is at the call, not in the abstract-eval rules: those are memoised,
and a name bound once would stay bound for the memo.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from minijax.core import Primitive, ShapedArray, abstract_eval_rules, get_aval
from minijax.interpreters import ad, batching
from minijax.interpreters.batching import AxisName, lookup_axis_size, unbound_axis_hint
from minijax.jaxpr import ClosedJaxpr
from minijax.mesh import AbstractMesh, Mesh, PartitionSpec
from minijax.primitives import elementwise as ew, indexing as ix, structural as sp
from minijax.primitives.common import standard_primitive


def check_bound(names: Iterable[Any], api_name: str) -> None:
    """NameError for the first named (non-int) axis that is not bound."""
    for name in names:
        if not is_positional(name) and lookup_axis_size(name) is None:
            raise NameError(
                f"Found an unbound axis name: {name}. To fix this, please call {api_name} "
                f"under a mapped function: {unbound_axis_hint(name)}."
            )


def unbound_axis_error(prim: str, names: Iterable[Any]) -> NameError:
    """What a backend raises when asked to run a collective over a named axis."""
    name = next(n for n in names if not is_positional(n))
    return NameError(
        f"unbound axis name: {name}. {prim} over a named axis only runs inside a vmap that binds "
        f"the name; {unbound_axis_hint(name)}."
    )


def is_positional(axis: Any) -> bool:
    """Ints in ``axes`` are positional axes of the operand; anything else names a mapped axis."""
    return isinstance(axis, int) and not isinstance(axis, bool)


def axis_tuple(axis_name: Any) -> tuple[Any, ...]:
    """``axis_name`` as JAX reads it: a tuple or list of names, or one name."""
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


# ---------------------------------------------------------------------------
# psum, pmax, pmin: all-reduce over named and positional axes


def _allreduce_rule(name: str) -> Any:
    def rule(x: ShapedArray, *, axes: tuple[Any, ...], axis_index_groups: Any) -> ShapedArray:
        if axis_index_groups is not None:  # psum C1
            raise NotImplementedError(f"{name}: axis_index_groups is not supported by minijax; pass None.")
        positional = [a for a in axes if is_positional(a)]
        if any(not 0 <= a < x.ndim for a in positional):  # psum C2
            raise ValueError(f"{name}: reduction axes {tuple(positional)} contains out-of-bounds indices for {x.str_short(False)}.")
        if len(set(axes)) != len(axes):  # psum C3
            raise ValueError(f"{name}: duplicate axis in 'axes': {axes}.")
        if name == "psum" and x.dtype == np.bool_:  # psum C4
            raise TypeError("psum does not accept dtype bool: lax.psum converts booleans to int32 first.")
        shape = tuple(n for i, n in enumerate(x.shape) if i not in positional)
        return ShapedArray(shape, x.dtype)  # psum C5: never weakly typed, as in JAX

    return rule


psum_p = standard_primitive("psum", _allreduce_rule("psum"))
pmax_p = standard_primitive("pmax", _allreduce_rule("pmax"))
pmin_p = standard_primitive("pmin", _allreduce_rule("pmin"))
ALLREDUCE_PRIMITIVES: dict[str, Primitive] = {"psum": psum_p, "pmax": pmax_p, "pmin": pmin_p}


# ---------------------------------------------------------------------------
# all_gather and reduce_scatter: one chunk per member, stacked or summed


def _check_size(prim: str, axis_size: Any) -> int:
    if not is_positional(axis_size) or axis_size < 1:
        raise TypeError(f"{prim}: axis_size must be a positive int, got {axis_size!r}.")
    return int(axis_size)


def _all_gather_rule(
    x: ShapedArray, *, all_gather_dimension: int, axis_name: tuple[Any, ...], axis_index_groups: Any, axis_size: int, tiled: bool
) -> ShapedArray:
    if axis_index_groups is not None:  # all_gather C1
        raise NotImplementedError("all_gather: axis_index_groups is not supported by minijax; pass None.")
    size = _check_size("all_gather", axis_size)  # all_gather C2
    dim = all_gather_dimension
    rank = x.ndim if tiled else x.ndim + 1
    if not 0 <= dim < rank:  # all_gather C3
        raise ValueError(f"axis {dim} is out of bounds for array of dimension {rank}")
    shape = list(x.shape)
    if tiled:
        shape[dim] *= size
    else:
        shape.insert(dim, size)
    return x.update(shape=shape)  # all_gather C4: keeps the weak type


def _reduce_scatter_rule(
    x: ShapedArray, *, scatter_dimension: int, axis_name: tuple[Any, ...], axis_index_groups: Any, axis_size: int, tiled: bool
) -> ShapedArray:
    if axis_index_groups is not None:  # reduce_scatter C1
        raise NotImplementedError("reduce_scatter: axis_index_groups is not supported by minijax; pass None.")
    size = _check_size("reduce_scatter", axis_size)  # reduce_scatter C2
    dim = scatter_dimension
    if not 0 <= dim < x.ndim:  # reduce_scatter C3
        raise ValueError(f"axis {dim} is out of bounds for array of dimension {x.ndim}")
    if x.dtype == np.bool_:  # reduce_scatter C4
        raise TypeError("reduce_scatter does not accept dtype bool; convert to an integer type first.")
    shape = list(x.shape)
    n = shape[dim]
    if tiled:
        if n % size:  # reduce_scatter C5
            raise ValueError(f"tiled reduce_scatter operand scatter dimension size {n} must be divisible by shard_count {size}")
        shape[dim] = n // size
    else:
        if n != size:  # reduce_scatter C5
            raise ValueError(f"reduce_scatter operand scatter dimension size {n} must match shard count {size}")
        del shape[dim]
    return x.update(shape=shape)  # reduce_scatter C6: keeps the weak type


all_gather_p = standard_primitive("all_gather", _all_gather_rule)
reduce_scatter_p = standard_primitive("reduce_scatter", _reduce_scatter_rule)


# ---------------------------------------------------------------------------
# axis_index: this member's position along the axis


def _axis_index_rule(*, axis_name: Any) -> ShapedArray:
    return ShapedArray((), np.int32)  # axis_index C1


axis_index_p = standard_primitive("axis_index", _axis_index_rule)



# ---------------------------------------------------------------------------
# ppermute: member dst receives member src's operand for each (src, dst) in perm


def _ppermute_rule(x: ShapedArray, *, axis_name: tuple[Any, ...], perm: tuple[tuple[int, int], ...]) -> ShapedArray:
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):  # ppermute C1
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if any(i < 0 for pair in perm for i in pair):  # ppermute C2
        raise ValueError(f"ppermute: the indices of perm must be non-negative, got {perm}.")
    return x  # ppermute C3: the operand's type


ppermute_p = standard_primitive("ppermute", _ppermute_rule)



# ---------------------------------------------------------------------------
# all_to_all: member i receives chunk i (along split_axis) of every member's
# operand, concatenated along concat_axis in member order. The primitive is
# always the tiled form; lax.all_to_all adds and removes the axis of the
# untiled one around it, as JAX's does.


class _AxisSizedPrimitive(Primitive):
    """A primitive whose result type depends on the size bound to its axis name: its
    abstract eval reads the axis environment, so it is not memoised on (avals, params)."""

    def abstract_eval_cached(self, avals: Sequence[ShapedArray], params: dict[str, Any]) -> Any:
        return self.abstract_eval(*avals, **params)


def _all_to_all_rule(
    x: ShapedArray, *, axis_name: Any, split_axis: int, concat_axis: int, axis_index_groups: Any, tiled: bool
) -> ShapedArray:
    if axis_index_groups is not None:  # all_to_all C1
        raise NotImplementedError("all_to_all: axis_index_groups is not supported by minijax; pass None.")
    if not (0 <= split_axis < x.ndim and 0 <= concat_axis < x.ndim):  # all_to_all C2
        raise ValueError(f"all_to_all: split_axis {split_axis} and concat_axis {concat_axis} must be axes of {x.str_short(False)}.")
    size = 1
    for name in axis_tuple(axis_name):
        bound = lookup_axis_size(name)
        if bound is None:  # all_to_all C3
            raise NameError(f"unbound axis name: {name}. {unbound_axis_hint(name)}.")
        size *= bound
    shape = list(x.shape)
    if shape[split_axis] % size:  # all_to_all C4
        raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has to be divisible by the size of the named axis {axis_name} ({size})")
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return x.update(shape=tuple(shape), weak_type=False)  # all_to_all C5


all_to_all_p = _AxisSizedPrimitive("all_to_all")
abstract_eval_rules[all_to_all_p] = _all_to_all_rule

# ---------------------------------------------------------------------------
# shard_map: one equation holding the body's jaxpr, typed on one device's blocks,
# and JAX's params. Its other rules, and how it runs, are in minijax/shard_map.py.


def spec_axes(entry: Any) -> tuple[str, ...]:
    if entry is None:
        return ()
    return (entry,) if isinstance(entry, str) else tuple(entry)


def block_shape(shape: Sequence[int], spec: PartitionSpec, sizes: dict[str, int]) -> tuple[int, ...]:
    """One device's block of an array of ``shape`` split as ``spec`` says."""
    return tuple(n // math.prod(sizes[a] for a in spec_axes(spec[d] if d < len(spec) else None)) for d, n in enumerate(shape))


def spec_sizes(mesh: Mesh | AbstractMesh) -> dict[str, int]:
    return dict(zip(mesh.axis_names, mesh.axis_sizes))


def _shard_map_abstract_eval(
    *avals: ShapedArray, jaxpr: ClosedJaxpr, mesh: Mesh | AbstractMesh, in_specs: tuple[PartitionSpec, ...],
    out_specs: tuple[PartitionSpec, ...], newly_manual_axes: frozenset[str], check_vma: bool,
) -> list[ShapedArray]:  # fmt: skip
    sizes = spec_sizes(mesh)
    if len(avals) != len(in_specs) or len(jaxpr.in_avals) != len(avals):
        raise TypeError(f"shard_map: {len(avals)} operands for {len(in_specs)} in_specs and a body of {len(jaxpr.in_avals)} inputs")
    for i, (aval, spec, block) in enumerate(zip(avals, in_specs, jaxpr.in_avals)):
        unknown = [a for a in spec.axis_names() if a not in sizes]
        if unknown:
            raise ValueError(f"shard_map in_specs[{i}] = {spec!r} names mesh axes {unknown} that the mesh {tuple(mesh.axis_names)} lacks")
        if len(spec) > aval.ndim or any(
            n % math.prod(sizes[a] for a in spec_axes(e)) for n, e in zip(aval.shape, spec)):
            raise ValueError(f"shard_map in_specs[{i}] = {spec!r} does not divide the operand {aval.str_short(short_dtypes=False)} over the mesh {sizes}")
        if block_shape(aval.shape, spec, sizes) != block.shape or aval.dtype != block.dtype:
            raise TypeError(f"shard_map: operand {i} {aval.str_short(short_dtypes=False)} split by {spec!r} does not give the body's input type {block.str_short(short_dtypes=False)}")
    outs = []
    for block, spec in zip(jaxpr.out_avals, out_specs):
        shape = list(block.shape)
        for d, e in enumerate(spec):
            shape[d] *= math.prod(sizes[a] for a in spec_axes(e))
        outs.append(block.update(shape=tuple(shape)))
    return outs


shard_map_p = standard_primitive("shard_map", _shard_map_abstract_eval, multiple_results=True)


COLLECTIVE_PRIMITIVES: tuple[Primitive, ...] = (
    psum_p, pmax_p, pmin_p, all_gather_p, reduce_scatter_p, axis_index_p, ppermute_p, all_to_all_p)  # fmt: skip


def scalar_like(x: Any, value: int) -> Any:
    """``value`` as a constant of ``x``'s type: a Python scalar for one, else a 0-d array of its dtype."""
    if type(x) in (int, float, bool):
        return type(x)(value)
    return np.array(value, get_aval(x).dtype)


# ---------------------------------------------------------------------------
# Batching: the vmap that binds the name turns each collective into array
# operations on the batched value. A collective naming another axis is bound
# again on the parent trace with this trace's batch dimension kept as an
# ordinary (positional) dimension, so that the enclosing vmap binding that
# name sees it. Rules run with the parent trace current.

BatchDim = batching.BatchDim


def _shift(axes: Sequence[Any], name: AxisName | None) -> tuple[Any, ...]:
    """``axes`` for the operand with its batch dimension moved to the front:
    positional axes move up by one, and this trace's name becomes axis 0."""
    return tuple(0 if a == name and not is_positional(a) else a + 1 if is_positional(a) else a for a in axes)


def _allreduce_axis_rule(prim: Primitive) -> Any:
    def rule(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[BatchDim], params: dict[str, Any]) -> tuple[Any, BatchDim]:
        (x,), (d,) = vals, dims
        axes = params["axes"]
        name = trace.axis_name
        if params["axis_index_groups"] is not None:
            raise NotImplementedError("axis_index_groups not supported in vmap collectives.")
        mine = name is not None and any(a == name and not is_positional(a) for a in axes)
        if d is None:
            if not mine:
                return prim.bind(x, **params), None
            # The same value on every member: reduce the other axes, then the
            # sum over this axis is size * x, and the max or min is x itself.
            rest = tuple(a for a in axes if not (a == name and not is_positional(a)))
            if rest:
                x = prim.bind(x, axes=rest, axis_index_groups=None)
            if prim is psum_p:
                x = _times_size(x, trace.axis_size)
            return x, None
        if not mine and not any(is_positional(a) for a in axes):
            # Named axes of enclosing vmaps only: elementwise along our batch dimension.
            return prim.bind(x, **params), d
        x = batching.moveaxis(x, d, 0)
        out = prim.bind(x, axes=_shift(axes, name), axis_index_groups=None)
        # Reducing over our axis leaves the result the same for every member.
        return out, (None if mine else 0)

    return rule


def _times_size(x: Any, size: int) -> Any:
    """``size * x`` the way JAX writes it (the constant first, in x's dtype)."""
    const = scalar_like(x, size)
    if type(x) in (int, float):
        return const * x
    return ew.mul_p.bind(const, x)


def _scaled(x: Any, size: int) -> Any:
    """``x * size`` as jnp writes it (``x`` first, ``size`` a weak constant of its dtype)."""
    if type(x) in (int, float):
        return x * size
    return ew.mul_p.bind(x, ew.scalar_like(x, size))


def _other_axis_dims(dim: int, d: int, tiled: bool) -> tuple[int, int]:
    """all_gather/reduce_scatter over another trace's axis, operand batched at ``d``:
    the param dimension and the result's batch dimension, in physical terms."""
    if d <= dim:
        return dim + 1, d
    # The untiled all_gather adds (reduce_scatter removes) a dimension before d.
    return dim, d if tiled else d + 1


def _all_gather_axis_rule(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[BatchDim], params: dict[str, Any]) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    names, dim, tiled, size = params["axis_name"], params["all_gather_dimension"], params["tiled"], params["axis_size"]
    if trace.axis_name is None or trace.axis_name not in names:
        if d is None:
            return all_gather_p.bind(x, **params), None
        dim, out_d = _other_axis_dims(dim, d, tiled)
        return all_gather_p.bind(x, **{**params, "all_gather_dimension": dim}), out_d
    _check_one_axis("all_gather", names, size, trace)
    if d is None:
        # Every member holds x: the gathered value is x repeated.
        shape = list(np.shape(x))
        shape.insert(dim, size)
        kept = tuple(i for i in range(len(shape)) if i != dim)
        y = sp.broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=kept, sharding=None)
    else:
        # The batch dimension already holds the members in order.
        y = batching.moveaxis(x, d, dim)
    if tiled:
        shape = list(np.shape(y))
        shape[dim : dim + 2] = [shape[dim] * shape[dim + 1]]
        y = sp.reshape_p.bind(y, new_sizes=tuple(shape), dimensions=None, sharding=None)
    return y, None


def _reduce_scatter_axis_rule(
    trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[BatchDim], params: dict[str, Any]
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    names, dim, tiled, size = params["axis_name"], params["scatter_dimension"], params["tiled"], params["axis_size"]
    if trace.axis_name is None or trace.axis_name not in names:
        if d is None:
            return reduce_scatter_p.bind(x, **params), None
        dim, out_d = _other_axis_dims(dim, d, tiled)
        return reduce_scatter_p.bind(x, **{**params, "scatter_dimension": dim}), out_d
    _check_one_axis("reduce_scatter", names, size, trace)
    # Member k keeps chunk k of the sum: the sum over members, batched along
    # the scatter dimension (for a value every member holds: size * x).
    y = _scaled(x, size) if d is None else sp.reduce_sum_p.bind(x, axes=(d,), out_sharding=None)
    if tiled:
        shape = list(np.shape(y))
        shape[dim : dim + 1] = [size, shape[dim] // size]
        y = sp.reshape_p.bind(y, new_sizes=tuple(shape), dimensions=None, sharding=None)
    return y, dim


def _check_one_axis(prim: str, names: tuple[Any, ...], size: int, trace: batching.BatchTrace) -> None:
    if len(names) > 1:
        raise NotImplementedError(f"{prim} over several axes at once ({names}) is not supported under vmap; use one axis name.")
    if size != trace.axis_size:
        raise ValueError(f"{prim}: axis_size={size} but the vmap binding {trace.axis_name!r} has size {trace.axis_size}.")


def _axis_index_axis_rule(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[BatchDim], params: dict[str, Any]) -> tuple[Any, BatchDim]:
    if params["axis_name"] != trace.axis_name or trace.axis_name is None:
        return axis_index_p.bind(**params), None
    # Member k's index is k: an iota along the batch dimension.
    return sp.iota_p.bind(dtype=np.dtype(np.int32), shape=(trace.axis_size,), dimension=0, sharding=None), 0


def _ppermute_axis_rule(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[BatchDim], params: dict[str, Any]) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    names, perm = params["axis_name"], params["perm"]
    if trace.axis_name is None or trace.axis_name not in names:
        return ppermute_p.bind(x, **params), d
    if len(names) > 1:
        raise NotImplementedError(f"ppermute over several axes at once ({names}) is not supported under vmap; use one axis name.")
    size = trace.axis_size
    if any(i >= size for pair in perm for i in pair):
        raise ValueError(f"ppermute: perm {perm} names a member outside axis {trace.axis_name!r} of size {size}.")
    x = batching.bdim_at_front(x, d, size)
    # One gather along the members: member k reads member source[k]; a member no pair
    # sends to reads past the end, which the fill mode makes zeros.
    source = np.full((size, 1), size, np.int32)
    for src, dst in perm:
        source[dst, 0] = src
    shape = np.shape(x)
    dnums = ix.GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape))), collapsed_slice_dims=(0,), start_index_map=(0,))
    y = ix.gather(x, source, dnums, (1, *shape[1:]), mode="fill", fill_value=0)
    return y, 0


def _all_to_all_axis_rule(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[BatchDim], params: dict[str, Any]) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    names = axis_tuple(params["axis_name"])
    if trace.axis_name is None or trace.axis_name not in names:
        if d is None:
            return all_to_all_p.bind(x, **params), None
        moved = {k: params[k] + (params[k] >= d) for k in ("split_axis", "concat_axis")}
        return all_to_all_p.bind(x, **{**params, **moved}), d
    if len(names) > 1:
        raise NotImplementedError(f"all_to_all over several axes at once ({names}) is not supported under vmap; use one axis name.")
    n, s, k = trace.axis_size, params["split_axis"], params["concat_axis"]
    x = batching.bdim_at_front(x, d, n)  # (sender j, *shape)
    shape = np.shape(x)[1:]
    # Cut the split axis into (receiver i, chunk); bring i to the front, then put the
    # senders j just before the concat axis and merge them into it, in member order.
    y = sp.reshape_p.bind(x, new_sizes=(n, *shape[:s], n, shape[s] // n, *shape[s + 1:]), dimensions=None, sharding=None)
    y = batching.moveaxis(y, s + 1, 0)  # (i, j, *local)
    local = list(shape)
    local[s] //= n
    y = batching.moveaxis(y, 1, 1 + k)  # (i, *local[:k], j, local[k], ...)
    merged = (n, *local[:k], n * local[k], *local[k + 1:])
    return sp.reshape_p.bind(y, new_sizes=merged, dimensions=None, sharding=None), 0


for _prim in (psum_p, pmax_p, pmin_p):
    batching.trace_batch_rules[_prim] = _allreduce_axis_rule(_prim)
batching.trace_batch_rules[all_to_all_p] = _all_to_all_axis_rule
batching.trace_batch_rules[ppermute_p] = _ppermute_axis_rule
batching.trace_batch_rules[all_gather_p] = _all_gather_axis_rule
batching.trace_batch_rules[reduce_scatter_p] = _reduce_scatter_axis_rule
batching.trace_batch_rules[axis_index_p] = _axis_index_axis_rule


# ---------------------------------------------------------------------------
# Autodiff. psum, all_gather and reduce_scatter are linear. Over a named
# axis JAX reads psum as "sum, then every member holds the sum", so its
# transpose sums the cotangents over the axis again; all_gather and
# reduce_scatter transpose to each other. pmax and pmin have no derivative in
# JAX 0.10.2 (differentiating through them raises NotImplementedError; apply
# them to stop_gradient(x) when only the value is wanted); axis_index is an
# integer.


def _psum_transpose(ct: Any, x: Any, *, axes: tuple[Any, ...], axis_index_groups: Any) -> list[Any]:
    named = tuple(a for a in axes if not is_positional(a))
    positional = tuple(a for a in axes if is_positional(a))
    if type(ct) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x.aval))]
    if positional:
        # Over positional axes psum is reduce_sum: broadcast the cotangent back.
        ct = ad.transpose_rules[sp.reduce_sum_p](ct, x, axes=positional, out_sharding=None)[0]
    return [psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups)]


def _all_gather_transpose(ct: Any, x: Any, *, all_gather_dimension: int, **params: Any) -> list[Any]:
    if type(ct) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x.aval))]
    return [reduce_scatter_p.bind(ct, scatter_dimension=all_gather_dimension, **params)]


def _reduce_scatter_transpose(ct: Any, x: Any, *, scatter_dimension: int, **params: Any) -> list[Any]:
    if type(ct) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x.aval))]
    return [all_gather_p.bind(ct, all_gather_dimension=scatter_dimension, **params)]


def _no_derivative(prim: Primitive) -> ad.JvpRule:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        # JAX's message for a primitive without a rule; the fix is in the section comment above.
        raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented")

    return jvp


def _ppermute_transpose(ct: Any, x: Any, *, axis_name: tuple[Any, ...], perm: tuple[tuple[int, int], ...]) -> list[Any]:
    # The cotangent goes back along each pair: the inverse permutation.
    if type(ct) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x.aval))]
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((dst, src) for src, dst in perm))]


def _all_to_all_transpose(ct: Any, x: Any, *, split_axis: int, concat_axis: int, **params: Any) -> list[Any]:
    # Chunks go back where they came from: the exchange with split and concat swapped.
    if type(ct) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x.aval))]
    return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, **params)]


ad.deflinear(ppermute_p, _ppermute_transpose)
ad.deflinear(all_to_all_p, _all_to_all_transpose)
ad.deflinear(psum_p, _psum_transpose)
ad.deflinear(all_gather_p, _all_gather_transpose)
ad.deflinear(reduce_scatter_p, _reduce_scatter_transpose)
for _prim in (pmax_p, pmin_p):
    ad.primitive_jvps[_prim] = _no_derivative(_prim)
ad.non_differentiable.update((pmax_p, pmin_p))
ad.defjvp_zero(axis_index_p)


def positional_reduction(name: str, axes: Sequence[Any]) -> tuple[str, tuple[int, ...]]:
    """For a backend: the reduction primitive an all-reduce over positional ``axes`` is."""
    if any(not is_positional(a) for a in axes):
        raise unbound_axis_error(name, axes)
    return {"psum": "reduce_sum", "pmax": "reduce_max", "pmin": "reduce_min"}[name], tuple(int(a) for a in axes)


__all__ = [
    "ALLREDUCE_PRIMITIVES",
    "all_to_all_p",
    "COLLECTIVE_PRIMITIVES",
    "all_gather_p",
    "axis_index_p",
    "axis_tuple",
    "check_bound",
    "is_positional",
    "pmax_p",
    "pmin_p",
    "positional_reduction",
    "ppermute_p",
    "psum_p",
    "reduce_scatter_p",
    "shard_map_p",
    "unbound_axis_error",
]
