"""``minijax.sharding`` (``jax.sharding``): meshes, partition specs, shardings, and
the functions that lay arrays out by them.

The classes live in ``minijax.mesh`` (below the arrays that carry them); this
module adds what needs arrays: ``reshard``, ``make_array_from_callback``,
``make_array_from_single_device_arrays``.

minijax executes on one device: a sharded array's value is kept whole and its
shards are derived from its sharding, so every value is JAX's
(docs/parallelism.md says what runs where).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, tree_util
from minijax.array import Array
from minijax.backend import Device
from minijax.mesh import (
    AbstractMesh as AbstractMesh,
    AxisType as AxisType,
    DuplicateSpecError as DuplicateSpecError,
    Mesh as Mesh,
    NamedSharding as NamedSharding,
    PartitionSpec as PartitionSpec,
    Sharding as Sharding,
    SingleDeviceSharding as SingleDeviceSharding,
    get_abstract_mesh as get_abstract_mesh,
    get_mesh as get_mesh,
    make_mesh as make_mesh,
    set_mesh as set_mesh,
    use_abstract_mesh as use_abstract_mesh,
)
from minijax.placement import holds_shards, is_sharding_leaf, lay_out, put_sharded, resolve_sharding
from minijax.primitives.autodiff import reshard_p, sharding_constraint_p
from minijax.sharding_rules import explicit_constraint

__all__ = [
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_array_from_callback",
    "make_array_from_single_device_arrays",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
    "with_sharding_constraint",
]


def make_single_device_sharding(device: Device) -> SingleDeviceSharding:
    return SingleDeviceSharding(device)


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``xs`` laid out by ``out_shardings`` (a Sharding, a PartitionSpec over the current mesh, or a pytree of them)."""
    for spec in tree_util.tree_leaves(out_shardings, is_leaf=lambda s: isinstance(s, PartitionSpec)):
        if isinstance(spec, PartitionSpec):
            mesh = get_abstract_mesh()
            kinds = dict(zip(mesh.axis_names, mesh.axis_types))
            for name in spec.axis_names():
                if kinds.get(name, AxisType.Explicit) is not AxisType.Explicit:
                    raise ValueError(
                        "PartitionSpec passed to reshard cannot contain axis names that are of type Auto or Manual. "
                        f"Got PartitionSpec: {spec!r} with axis name: {name} of type: AxisType.{kinds[name].name}. "
                        "Make the mesh axis Explicit (jax.make_mesh(..., axis_types=...)), or pass a NamedSharding."
                    )
    if not any(isinstance(v, core.Tracer) for v in tree_util.tree_leaves(xs)):
        return lay_out(xs, out_shardings, "reshard")

    specs, spec_tree = tree_util.tree_flatten(out_shardings, is_leaf=is_sharding_leaf)
    out = []
    for spec, sub in zip(specs, spec_tree.flatten_up_to(xs)):
        if spec is None:
            raise ValueError(
                "Reshard should only be used with out_shardings which are non-None and have a non-empty mesh. "
                f"Got sharding {spec}."
            )
        sharding = resolve_sharding(spec, "reshard")
        concrete = sharding.mesh if isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, Mesh) else None
        out.append(tree_util.tree_map(
            lambda v, s=sharding, c=concrete: reshard_p.bind(v, dst_sharding=s, concrete_mesh=c)
            if isinstance(v, core.Tracer) else lay_out(v, s, "reshard"), sub))  # fmt: skip
    return tree_util.tree_unflatten(spec_tree, out)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``lax.with_sharding_constraint``: ``x`` with the given layout (the value is unchanged).

    A concrete value is laid out now; a traced one gets a ``sharding_constraint``
    equation (spmdx), which the SPMD partitioner reads when the program is compiled
    for several devices (a ``@Sharding`` annotation on XLA)."""
    # shtypes: over Explicit axes only, a value whose type carries its layout is checked, not moved.
    if _explicit_checks(x, shardings):
        return x
    # spmdx (issue 17): traced values are constrained in the program, concrete ones laid out.
    constrained = lay_out(x, shardings, "with_sharding_constraint")
    if not any(isinstance(v, core.Tracer) for v in tree_util.tree_leaves(x)):
        return constrained

    specs, spec_tree = tree_util.tree_flatten(shardings, is_leaf=is_sharding_leaf)
    out = []
    for spec, sub in zip(specs, spec_tree.flatten_up_to(constrained)):
        if spec is not None:
            sharding = resolve_sharding(spec, "with_sharding_constraint")
            params = {"sharding": sharding, "layout": None, "context_mesh": get_abstract_mesh(),
                      "unconstrained_dims": frozenset(i for i, e in enumerate(getattr(sharding, "spec", ()))
                                                      if e is PartitionSpec.UNCONSTRAINED)}  # fmt: skip
            sub = tree_util.tree_map(
                lambda v, p=params: sharding_constraint_p.bind(v, **p) if isinstance(v, core.Tracer) else v, sub
            )
        out.append(sub)
    return tree_util.tree_unflatten(spec_tree, out)


def _explicit_checks(x: Any, shardings: Any) -> bool:
    """Whether every constrained leaf of ``x`` is one ``explicit_constraint`` checks (and it holds)."""

    specs, spec_tree = tree_util.tree_flatten(shardings, is_leaf=is_sharding_leaf)
    try:
        subs = spec_tree.flatten_up_to(x)
    except Exception:
        return False  # (lay_out reports the mismatch)
    pairs = [(leaf, spec) for spec, sub in zip(specs, subs) if spec is not None for leaf in tree_util.tree_leaves(sub)]
    return bool(pairs) and all(
        explicit_constraint(leaf, resolve_sharding(spec, "with_sharding_constraint")) for leaf, spec in pairs
    )


def _with_mesh_spec(shardings: Any) -> Any:
    """``shardings`` with each bare PartitionSpec made a NamedSharding over the current mesh."""
    return tree_util.tree_map(
        lambda s: resolve_sharding(s, "auto_axes") if isinstance(s, PartitionSpec) else s, shardings,
        is_leaf=lambda s: isinstance(s, PartitionSpec),
    )


def _switched_mesh(axes: Any, shardings: Any = None) -> tuple[AbstractMesh, tuple[str, ...]] | None:
    """The current abstract mesh (or, with none set, the one ``shardings`` name) and the axes
    ``axes`` names (all by default); None when there is no mesh at all."""
    mesh = get_abstract_mesh()
    if mesh.empty:
        named = [s.mesh for s in tree_util.tree_leaves(shardings, is_leaf=lambda s: isinstance(s, Sharding))
                 if isinstance(s, NamedSharding)]  # fmt: skip
        if not named:
            return None
        mesh = named[0].abstract_mesh if isinstance(named[0], Mesh) else named[0]
    names = tuple(mesh.axis_names) if axes is None else (axes,) if isinstance(axes, str) else tuple(axes)
    return mesh, names


def _mesh_cast(xs: Any, types: dict[str, AxisType]) -> Any:
    """``xs`` with the mesh axes ``types`` names retyped (Auto or Explicit) in each concrete array's
    sharding: the same devices and blocks, so nothing moves (JAX's ``mesh_cast`` of a value)."""

    def cast(x: Any) -> Any:
        if isinstance(x, core.Tracer):
            return _retyped_tracer(x, types)
        sharding = getattr(x, "_sharding", None)
        if type(x) is not Array or not isinstance(sharding, NamedSharding) or not isinstance(sharding.mesh, Mesh):
            return x
        mesh = sharding.mesh
        retyped = Mesh(mesh.devices, mesh.axis_names,
                       axis_types=tuple(types.get(n, t) for n, t in zip(mesh.axis_names, mesh.axis_types)))  # fmt: skip
        out = Array(x._buf, x.aval, x._backend, x._device, x._committed)
        out._shards, out._whole = x._shards, x._whole
        out._sharding = NamedSharding(retyped, sharding.spec, memory_kind=sharding.memory_kind)
        return out

    return tree_util.tree_map(cast, xs)


def _retyped_tracer(x: Any, types: dict[str, AxisType]) -> Any:
    """A traced value retyped over the current abstract mesh: its Explicit layout kept on the axes
    that stay Explicit (``types`` says which switch), dropped on those that become Auto."""
    aval = core.get_aval(x)
    sharding = getattr(aval, "sharding", None)
    mesh = get_abstract_mesh()
    if mesh.empty:
        return x
    if not isinstance(sharding, NamedSharding):
        entries: list[Any] = [None] * aval.ndim
    else:
        def keep(entry: Any) -> Any:
            names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
            kept = tuple(n for n in names if types.get(n, AxisType.Explicit) is AxisType.Explicit)
            return None if not kept else kept[0] if len(kept) == 1 else kept

        entries = [keep(e) for e in sharding.spec] + [None] * (aval.ndim - len(sharding.spec))
    return reshard_p.bind(x, dst_sharding=NamedSharding(mesh, PartitionSpec(*entries)), concrete_mesh=None)


def auto_axes(f: Callable[..., Any] | None = None, /, *, axes: Any = None, out_sharding: Any = None) -> Any:
    """``f`` with mesh axes ``axes`` (all by default) Auto inside, its results laid out as ``out_sharding``
    (given here or per call; JAX requires it).

    Inside, ``get_abstract_mesh()`` shows those axes as Auto and the arguments' arrays are
    retyped over them, so the compiler, not the types, decides the layouts there; the results are
    retyped back and laid out as ``out_sharding`` over the caller's mesh. (Traced values keep their
    types inside: docs/differences.md.)"""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)
    fun = f

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        given = out_sharding if out_sharding is not None else kwargs.pop("out_sharding", None)
        if given is None:
            raise TypeError("Missing required keyword argument: 'out_sharding'")
        switched = _switched_mesh(axes, given)
        if switched is None:  # no mesh: nothing to switch
            return fun(*args, **kwargs)
        outer, names = switched
        if set(outer.auto_axes) == set(names):  # already Auto: JAX calls f as it is
            return fun(*args, **kwargs)
        with use_abstract_mesh(outer.update_axis_types({n: AxisType.Auto for n in names})):
            out = fun(*_mesh_cast(args, {n: AxisType.Auto for n in names}), **kwargs)
        back = {n: t for n, t in zip(outer.axis_names, outer.axis_types) if n in names}
        out = tree_util.tree_map(lambda v: v if isinstance(v, core.Tracer) else _mesh_cast(v, back), out)
        return reshard(out, given) if any(isinstance(v, core.Tracer) for v in tree_util.tree_leaves(out)) else \
            lay_out(out, _with_mesh_spec(given), "auto_axes")

    return wrapped


def explicit_axes(f: Callable[..., Any] | None = None, /, *, axes: Any = None, in_sharding: Any = None) -> Any:
    """``f`` with mesh axes ``axes`` (all by default) Explicit inside, its arguments laid out as
    ``in_sharding`` first (given here or per call; JAX requires it); the results are retyped back
    over the caller's axes."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)
    fun = f

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        given = in_sharding if in_sharding is not None else kwargs.pop("in_sharding", None)
        if given is None:
            raise TypeError("Missing required keyword argument: 'in_sharding'")
        switched = _switched_mesh(axes)
        if switched is None:
            raise ValueError(
                "Context mesh cannot be empty. Please use `jax.set_mesh` API to enter into a mesh context when "
                "using `explicit_axes` API."
            )
        outer, names = switched
        shardings = given if isinstance(given, tuple) else (given,) * len(args)
        # Concrete arrays: laid out over the caller's mesh, then retyped (nothing moves twice).
        args = tuple(a if isinstance(a, core.Tracer) else lay_out(a, _with_mesh_spec(s), "explicit_axes")
                     for a, s in zip(args, shardings))  # fmt: skip
        inner = outer.update_axis_types({n: AxisType.Explicit for n in names})
        with use_abstract_mesh(inner):
            # Traced values: their types take the layout over the switched mesh (JAX's reshard).
            args = tuple(reshard_p.bind(a, dst_sharding=NamedSharding(inner, s.spec if isinstance(s, NamedSharding) else s),
                                        concrete_mesh=None) if isinstance(a, core.Tracer) and s is not None else a
                         for a, s in zip(args, shardings))  # fmt: skip
            out = fun(*_mesh_cast(args, {n: AxisType.Explicit for n in names}), **kwargs)
        return _mesh_cast(out, {n: t for n, t in zip(outer.axis_names, outer.axis_types) if n in names})

    return wrapped


def _block_shape(index: tuple[slice, ...], shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(len(range(*s.indices(n))) for s, n in zip(index, shape))


def _assemble(shape: tuple[int, ...], sharding: Sharding, blocks: list[tuple[tuple[slice, ...], Any]]) -> Array:
    """The array of ``shape`` laid out by ``sharding`` whose block at each index is the given one (every
    device's block, already checked against its index's shape; a sharding has at least one device)."""
    aval = core.get_aval(blocks[0][1]).update(shape=shape, weak_type=False)
    if not sharding.is_fully_addressable:
        # mproc (issue 17): over several processes the blocks are this process's devices' (in
        # addressable_devices_indices_map's order); the other processes supply theirs.
        first = sharding._device_assignment[0]
        local = sharding.addressable_devices_indices_map(shape)
        out = Array(None, aval, first.backend, first, True)
        out._shards = first.backend.put_local_blocks(  # type: ignore[attr-defined]  # a multi-process backend's
            shape, aval.dtype, sharding, {d: np.asarray(b, aval.dtype) for d, (_, b) in zip(local, blocks)}
        )
        out._sharding = sharding
        return out
    if isinstance(sharding, NamedSharding) and holds_shards(sharding, aval):
        # npspmd (issue 17): each device keeps the block it was given, as in JAX (blocks come
        # in devices_indices_map's order, which is the sharding's device order)
        first = sharding._device_assignment[0]
        out = Array(None, aval, first.backend, first, True)
        out._shards = first.backend.put_blocks([np.asarray(b, aval.dtype) for _, b in blocks], sharding, shape)
        out._sharding = sharding
        return out
    whole = np.empty(shape, blocks[0][1].dtype)
    for index, block in blocks:
        whole[index] = block
    return put_sharded(whole, sharding)  # type: ignore[no-any-return]


def make_array_from_callback(
    shape: Sequence[int], sharding: Sharding, data_callback: Callable[[tuple[slice, ...]], Any],
    dtype: Any = None,
) -> Array:  # fmt: skip
    """The array of ``shape`` whose block at each device's index is ``data_callback(index)``."""
    shape = tuple(int(d) for d in shape)
    if isinstance(sharding, NamedSharding):
        sharding.check_compatible(shape)
    blocks = []
    for index in sharding.addressable_devices_indices_map(shape).values():  # (over processes: this one's)
        block = np.asarray(data_callback(index), dtype=dtype)
        if block.shape != _block_shape(index, shape):
            raise ValueError(
                f"make_array_from_callback: the callback returned an array of shape {block.shape} for index {index}, "
                f"but the sharding's block there has shape {_block_shape(index, shape)}"
            )
        blocks.append((index, block))
    return _assemble(shape, sharding, blocks)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Sharding, arrays: Sequence[Any], *,
                                         dtype: Any = None) -> Array:  # fmt: skip
    """The array of ``shape`` made of one block per device of ``sharding``, in its device order."""
    shape = tuple(int(d) for d in shape)
    indices = sharding.addressable_devices_indices_map(shape)  # (over processes: this one's devices)
    if len(arrays) != len(indices):
        raise ValueError(
            f"make_array_from_single_device_arrays: the sharding has {len(indices)} addressable devices "
            f"but {len(arrays)} arrays were given; pass one array per device, in the order of "
            "sharding.addressable_devices_indices_map(shape)."
        )
    blocks = []
    for (device, index), array in zip(indices.items(), arrays):
        if isinstance(array, Array) and array._device is not device:
            raise ValueError(
                f"make_array_from_single_device_arrays: the array for {device!r} is on {array._device!r}; "
                "put each array on its device first (jax.device_put(a, device))."
            )
        block = np.asarray(array, dtype=dtype)
        if block.shape != _block_shape(index, shape):
            raise ValueError(
                f"make_array_from_single_device_arrays: expected an array of shape {_block_shape(index, shape)} "
                f"for {device!r} (index {index}), got {block.shape}"
            )
        blocks.append((index, block))
    return _assemble(shape, sharding, blocks)
