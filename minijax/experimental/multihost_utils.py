"""``jax.experimental.multihost_utils``: moving values between the processes of a
multi-process computation (``jax.distributed.initialize``).

Every exchange here is an XLA program over all processes' devices (its collectives
cross processes over gloo), as JAX does it; with one process each is the identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes, placement, tree_util
from minijax.array import Array
from minijax.backend import Device, get_backend
from minijax.mesh import Mesh, NamedSharding, PartitionSpec
from minijax.stages import jit


def _axis_size(mesh: Mesh, entry: Any, spec: Any) -> int:
    if entry is None:
        return 1
    names = entry if isinstance(entry, tuple) else (entry,)
    size = 1
    for name in names:
        if name not in mesh.shape:
            raise ValueError(f"Resource axis: {name} of {spec} is not found in mesh: {tuple(mesh.shape)}.")
        size *= mesh.shape[name]
    return size


def make_array_from_process_local_data(
    sharding: NamedSharding, local_data: Any, global_shape: Sequence[int] | None = None
) -> Array:
    """The global array, laid out by ``sharding``, whose part on this process's devices
    is ``local_data`` (each process passes its own part). ``global_shape`` defaults to
    ``local_data``'s shape scaled, along each sharded dimension, by how many of its
    blocks live on other processes."""
    local = np.asarray(local_data)
    local = local.astype(dtypes.canonicalize_dtype(local.dtype), copy=False)
    mesh = sharding._concrete_mesh
    backend = get_backend()
    mine = backend.process_index()
    devices: list[Device] = list(sharding._device_assignment)
    local_devices = [d for d in devices if d.process_index == mine]
    spec = tuple(sharding.spec) + (None,) * (local.ndim - len(tuple(sharding.spec)))
    if len(tuple(sharding.spec)) > local.ndim:
        raise ValueError(
            f"make_array_from_process_local_data: the sharding's spec {sharding.spec} has more entries than "
            f"local_data has dimensions ({local.shape}); give a spec of at most {local.ndim} entries"
        )
    sizes = [_axis_size(mesh, e, sharding.spec) for e in spec]
    if global_shape is None:
        # Each block's position along each dimension, from a shape of one element per block.
        positions = sharding.devices_indices_map(tuple(sizes))
        shape = []
        for dim, (n, size) in enumerate(zip(local.shape, sizes)):
            held = {positions[d][dim].indices(size)[0] for d in local_devices}
            # The other processes hold size/len(held) times as much along this dimension.
            shape.append(n * (size // len(held)))
        global_shape = tuple(shape)
    global_shape = tuple(int(n) for n in global_shape)
    for dim, (n, size) in enumerate(zip(global_shape, sizes)):
        if n % size:
            raise ValueError(
                f"Sharding spec {tuple(spec[:len(tuple(sharding.spec))])} implies that array axis {dim} is partitioned "
                f"{size} times, but does not evenly divide the dimension size {n}. Got shape: {global_shape} and "
                f"sharding {sharding}"
            )
    indices = sharding.devices_indices_map(global_shape)
    starts = [min(indices[d][k].indices(n)[0] for d in local_devices) for k, n in enumerate(global_shape)]
    blocks = {}
    for d in local_devices:
        index = tuple(
            slice(s.indices(n)[0] - start, s.indices(n)[1] - start) for s, n, start in zip(indices[d], global_shape, starts)
        )
        block = local[index]
        expected = sharding.shard_shape(global_shape)
        if block.shape != tuple(expected):
            raise ValueError(
                f"make_array_from_process_local_data: local_data of shape {local.shape} does not cover this "
                f"process's part of the global shape {global_shape} (device {d} needs a block of {tuple(expected)}); "
                "pass global_shape, or local data of the shape of this process's part"
            )
        blocks[d] = block
    if not hasattr(backend, "put_local_blocks"):  # a one-process backend (NumPy): the whole value is local
        return placement.device_put(local, sharding)  # type: ignore[no-any-return]
    out = Array(None, core.ShapedArray(global_shape, local.dtype), backend, devices[0], True)
    out._shards = backend.put_local_blocks(global_shape, local.dtype, sharding, blocks)
    out._sharding = sharding
    return out


def _all_devices_mesh() -> tuple[Mesh, int]:
    backend = get_backend()
    n = backend.process_count()
    every = backend.global_devices()
    grid = np.array(sorted(every, key=lambda d: (d.process_index, d.id)), dtype=object).reshape(n, -1)
    return Mesh(grid, ("processes", "local_devices")), n


def _gather_host(x: Any, tiled: bool) -> np.ndarray[Any, Any]:
    mesh, n = _all_devices_mesh()
    if isinstance(x, Array) and not x.is_fully_addressable:
        replicated = NamedSharding(x.sharding.mesh, PartitionSpec())  # type: ignore[attr-defined]
        value = jit(lambda a: a, out_shardings=replicated)(x)
        return np.asarray(value)
    local = np.asarray(x)
    if n == 1:
        return local if tiled else local[None]
    if tiled and local.ndim == 0:
        raise ValueError("process_allgather(tiled=True) needs inputs of at least one dimension; got a scalar")
    stacked = make_array_from_process_local_data(NamedSharding(mesh, PartitionSpec("processes")), local[None])
    out = jit(lambda a: a, out_shardings=NamedSharding(mesh, PartitionSpec()))(stacked)
    whole = np.asarray(out)
    return whole.reshape((-1,) + whole.shape[2:]) if tiled else whole


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's value of each leaf, on every process, as NumPy arrays: stacked on a
    new leading axis (``tiled=False``) or concatenated along the first (``tiled=True``).
    A global array (spanning processes) comes back whole."""
    return tree_util.tree_map(lambda x: _gather_host(x, tiled), in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Process 0's value of each leaf (or the ``is_source`` processes', summed), on every process."""
    if is_source is None:
        is_source = get_backend().process_index() == 0

    def one(x: Any) -> np.ndarray[Any, Any]:
        value = np.asarray(x)
        gathered = _gather_host(value if is_source else np.zeros_like(value), tiled=False)
        result: np.ndarray[Any, Any] = gathered.sum(axis=0).astype(value.dtype)
        return result

    return tree_util.tree_map(one, in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """AssertionError unless every process passed equal values."""

    def check(x: Any) -> None:
        gathered = _gather_host(np.asarray(x), tiled=False)
        if not all(np.array_equal(gathered[0], g) for g in gathered[1:]):
            raise AssertionError(f"{fail_message} Expected: {gathered[0]}; got: {gathered}.")

    tree_util.tree_map(check, in_tree)


def sync_global_devices(name: str) -> None:
    """Wait until every process reaches this call with the same ``name`` (an XLA
    collective over all devices); AssertionError when the names differ."""
    import hashlib  # (here: ~2% of ``import minijax``, for this one call)

    digest = np.frombuffer(hashlib.sha256(name.encode()).digest()[:8], dtype=np.uint32).copy()
    assert_equal(digest, f"sync_global_devices name mismatch ('{name}')")


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """Each leaf (this process's part) as the global array laid out by its PartitionSpec over ``global_mesh``."""
    leaves, tree = tree_util.tree_flatten(local_inputs)
    specs = _specs(pspecs, len(leaves), tree)
    return tree_util.tree_unflatten(
        tree,
        [make_array_from_process_local_data(NamedSharding(global_mesh, s), x) for x, s in zip(leaves, specs)],
    )


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """Each global leaf's part on this process's devices, as an array of this process."""
    leaves, tree = tree_util.tree_flatten(global_inputs)
    specs = _specs(pspecs, len(leaves), tree)
    return tree_util.tree_unflatten(tree, [_local_part(x) for x, _ in zip(leaves, specs)])


def _local_part(x: Array) -> Any:
    shards = x.addressable_shards
    shape = x.shape
    starts = [min(s.index[k].indices(n)[0] for s in shards) for k, n in enumerate(shape)]
    stops = [max(s.index[k].indices(n)[1] for s in shards) for k, n in enumerate(shape)]
    local = np.empty(tuple(b - a for a, b in zip(starts, stops)), x.dtype)
    for s in shards:
        index = tuple(slice(i.indices(n)[0] - a, i.indices(n)[1] - a) for i, n, a in zip(s.index, shape, starts))
        local[index] = np.asarray(s.data)
    return placement.device_put(local)


def _specs(pspecs: Any, n: int, tree: Any) -> list[PartitionSpec]:
    if isinstance(pspecs, PartitionSpec):
        return [pspecs] * n
    specs: list[PartitionSpec] = tree_util.tree_leaves(pspecs, is_leaf=lambda s: isinstance(s, PartitionSpec))
    if len(specs) != n:
        raise ValueError(f"pspecs must be a PartitionSpec or a tree of them matching the inputs ({n} leaves)")
    return specs


__all__ = [
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "make_array_from_process_local_data",
    "process_allgather",
    "sync_global_devices",
]
