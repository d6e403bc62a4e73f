"""Where values live and where a computation runs.

Placement follows JAX (its FAQ, "Controlling data and computation placement
on devices"): an array is *committed* to its device when it was put there
explicitly (``device_put(x, device)``) or computed from committed arrays.
A computation runs on the device of its committed operands (arrays committed
to two different devices are an error), else on the default device
(``backend.default_device``); operands elsewhere are moved there first.
Results are committed when any operand was.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes, transfers, tree_util
from minijax.array import Array, device_put_value, put_on
from minijax.backend import Backend, Device, default_device, default_device_of, resolve_device
from minijax.mesh import (
    AbstractMesh,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    get_abstract_mesh,
    get_mesh,
)

__all__ = ["deleted_error", "device_put", "holds_shards", "install_reshard", "lay_out", "placement", "put_sharded", "resolve_sharding", "to_device"]


def deleted_error(x: Array) -> RuntimeError:
    return RuntimeError(f"Array has been deleted with shape={x.aval.str_short(short_dtypes=False)}.")


def to_device(x: Any, device: Device, committed: bool = False) -> Array:
    """``x`` (an Array anywhere, or a host value) as an Array on ``device``."""
    if type(x) is Array:
        if x._buf is None:
            if x._shards is None:
                raise deleted_error(x)
            # Per-device buffers: the whole value, on its first device (assembled once).
            whole = Array(x._whole_buffer(), x.aval, x._backend, x._device, x._committed)
            return whole if x._device is device else to_device(whole, device, committed)
        if x._device is device and (x._committed or not committed):
            return x
        if x._device is device:  # same buffer, now committed
            return Array(x._buf, x.aval, x._backend, device, True)
        # Between devices through the host: simple, and devices here are CPUs.
        if transfers.active:
            transfers.check_device_to_device(x.aval, x._device, device)
        return Array(put_on(device, np.asarray(x._value)), x.aval, device.backend, device, committed)
    if isinstance(x, core.Tracer):  # nothing is being traced here: it escaped its transformation
        core.raise_leaked_tracer(x)
    return device_put_value(x, device=device)


def placement(
    values: Sequence[Any], what: str, names: Callable[[], Sequence[str]], backend: Backend | None = None
) -> tuple[Device, bool]:
    """The device a computation on ``values`` runs on, and whether its results
    are committed. ``what`` and ``names`` (the operands' names) are for the
    error when operands are committed to different devices. With ``backend``
    given (``jit(backend=...)``) the computation stays on that backend.
    """
    first = -1
    for i, x in enumerate(values):
        if type(x) is Array and x._committed:
            if first < 0:
                first = i
            elif _device_ids(x) != _device_ids(values[first]):
                raise _incompatible_devices(what, names(), values, first, i)
    if first >= 0:
        device: Device = values[first]._device
        if backend is None or device.backend is backend:
            return device, True
    return (default_device() if backend is None else default_device_of(backend)), False


def _device_ids(x: Array) -> list[int]:
    """The ids of the devices ``x`` is laid out over, in order. An array laid out over a mesh is
    not compatible with one committed to a single device of it: JAX rejects the pair, and over
    several processes accepting it would let the process holding that device run a program the
    others refuse (and wait for them forever)."""
    if x._sharding is not None and x._sharding.num_devices > 1:
        return [d.id for d in x._sharding._device_assignment]
    return [x._device.id]


def _incompatible_devices(what: str, names: Sequence[str], values: Sequence[Any], i: int, j: int) -> ValueError:
    def describe(k: int) -> str:
        x: Array = values[k]
        name = names[k] if k < len(names) else f"args[{k}]"
        return (
            f"argument {name} of {what} with shape {x.aval.str_short(short_dtypes=False)} and with device ids "
            f"{_device_ids(x)} on platform {x._device.platform.upper()}"
        )

    return ValueError(
        f"Received incompatible devices for jitted computation. Got {describe(i)} and {describe(j)}\n"
        "(arrays committed to different devices cannot be combined: move one with jax.device_put(x, device) first)"
    )


def device_put(
    x: Any, device: Any = None, *, src: Any = None, donate: bool = False, may_alias: bool | None = None
) -> Any:
    """``minijax.device_put``: place a pytree of values on a device.

    With a device (a Device, or a platform name like "cpu") the results are
    committed to it. Without one, arrays stay where they are (committed or
    not) and host values go, uncommitted, to the default device.
    ``donate=True`` deletes an input Array that was copied; ``may_alias=False``
    always copies. ``src`` is accepted for JAX compatibility (arrays know
    where they are).
    """
    del src
    if isinstance(device, (list, tuple, dict)):  # a tree of devices/shardings, a prefix of x's
        targets, spec_tree = tree_util.tree_flatten(device, is_leaf=lambda d: not isinstance(d, (list, tuple, dict)))
        subtrees = spec_tree.flatten_up_to(x)
        placed = [device_put(sub, target, donate=donate, may_alias=may_alias) for sub, target in zip(subtrees, targets)]
        return tree_util.tree_unflatten(spec_tree, placed)
    if isinstance(device, (Sharding, PartitionSpec)):
        sharding = resolve_sharding(device, "device_put")
        if isinstance(sharding, SingleDeviceSharding):
            device = sharding._device
        else:
            with transfers.explicit_transfers():
                return tree_util.tree_map(lambda leaf: put_sharded(leaf, sharding, donate), x)
    target = None if device is None else resolve_device(device)

    def put(leaf: Any) -> Any:
        if isinstance(leaf, core.Tracer):
            return leaf
        if type(leaf) is Array:
            if leaf._deleted:
                raise deleted_error(leaf)
            if leaf._shards is not None and not leaf.is_fully_addressable:  # (JAX refuses it, without a device too)
                raise ValueError(
                    "When the second argument to `device_put` is a Device, the first argument must be a fully "
                    "addressable array or a non-addressable array with a single device sharding. Got value "
                    f"with devices {leaf.devices()}"
                )
            if target is None and may_alias is not False:
                return leaf
            where = leaf._device if target is None else target
            if may_alias is False or leaf._buf is None:
                out = Array(put_on(where, np.array(leaf._value)), leaf.aval, where.backend, where, target is not None)
            else:
                out = to_device(leaf, where, committed=target is not None)
            if donate and out._buf is not leaf._buf:
                leaf.delete()
            return out
        if target is None:
            return device_put_value(leaf)
        placed = device_put_value(leaf, device=target)
        placed._committed = True
        return placed

    with transfers.explicit_transfers():
        return tree_util.tree_map(put, x)


def resolve_sharding(spec: Sharding | PartitionSpec, what: str) -> Sharding:
    """A Sharding, or a PartitionSpec over the mesh ``jax.set_mesh`` set."""
    if isinstance(spec, NamedSharding) and isinstance(spec.mesh, AbstractMesh) and not spec.mesh.empty:
        # A type's sharding (``jax.typeof(x).sharding``) names an abstract mesh: its devices are the
        # concrete mesh's of the same axes, where one is set.
        concrete = get_mesh()
        same = (concrete.axis_names, concrete.axis_sizes) == (spec.mesh.axis_names, spec.mesh.axis_sizes)
        if same and not concrete.empty:
            return NamedSharding(concrete, spec.spec)
    if isinstance(spec, Sharding):
        return spec
    abstract = get_abstract_mesh()
    mesh: Mesh | AbstractMesh = get_mesh()
    if abstract != mesh.abstract_mesh:  # use_abstract_mesh set one of its own: a layout for traced values
        mesh = abstract
    if mesh.empty:
        raise ValueError(
            f"{what}: got the PartitionSpec {spec!r} but no mesh is set. Pass a jax.sharding.NamedSharding(mesh, spec), "
            "or set a mesh with jax.set_mesh(mesh)."
        )
    return NamedSharding(mesh, spec)


def put_sharded(x: Any, sharding: Sharding, donate: bool = False) -> Any:
    """``x`` laid out as ``sharding`` says: its value whole on the sharding's first device
    (minijax executes on one device), committed, with the sharding recorded for its shards."""
    if isinstance(x, core.Tracer):
        return x
    if isinstance(sharding, SingleDeviceSharding):
        return device_put(x, sharding._device, donate=donate)
    aval = core.get_aval(x)
    if isinstance(sharding, NamedSharding):
        if sharding.spec.unreduced or sharding.spec.reduced:
            raise NotImplementedError(
                f"{sharding.spec!r}: laying an array out with unreduced or reduced mesh axes (each device holding a "
                "partial sum) is not supported by minijax yet; drop unreduced=/reduced= from the PartitionSpec."
            )
        try:
            sharding.check_compatible(aval.shape)
        except ValueError as e:
            if len(sharding.spec) > aval.ndim:
                raise ValueError(
                    f"One of device_put args is incompatible with its sharding annotation {sharding!r}: {e}"
                ) from None
            raise
    first = sharding._device_assignment[0]
    if type(x) is Array and x._deleted:
        raise deleted_error(x)
    if type(x) is Array and x._shards is not None and not x.is_fully_addressable:
        if x._sharding == sharding:
            return x
        return _reshard_across_processes(x, sharding, donate)
    if isinstance(sharding, NamedSharding) and holds_shards(sharding, aval):
        return _put_shards(x, aval, sharding, donate)
    if type(x) is Array:
        buf = x._buf if x._device is first else put_on(first, np.asarray(x._value))
        out = Array(buf, x.aval, first.backend, first, True)
        if donate and out._buf is not x._buf:
            x.delete()
    else:
        out = device_put_value(x, device=first)
        out._committed = True
    out._sharding = sharding
    return out


# mproc (issue 17): ``run(x, sharding)`` relays an array out with a one-operation jitted program
# (installed by minijax.stages, a layer above): over several processes no process holds the value
# whole, so every process runs the same resharding program, as JAX's device_put does.
_reshard: list[Callable[[Array, Sharding], Array]] = []


def install_reshard(run: Callable[[Array, Sharding], Array]) -> None:
    _reshard[:] = [run]


def _reshard_across_processes(x: Array, sharding: Sharding, donate: bool) -> Array:
    """``x``, which spans processes, laid out by ``sharding`` (over the same devices)."""
    assert x._sharding is not None
    source = x._sharding._device_assignment
    target = sharding._device_assignment
    if sharding.is_fully_addressable:  # onto this process's devices alone: JAX's refusal
        raise NotImplementedError("Cannot reshard an input that is not fully addressable")
    if {d.id for d in source} != {d.id for d in target}:
        raise ValueError(
            "For a cross-host reshard in multi-controller JAX, input and target sharding should have the same set "
            f"of devices. Got input's device set ids: {[d.id for d in source]} on platform "
            f"{source[0].platform.upper()} and target sharding's device set ids: {[d.id for d in target]} on platform "
            f"{target[0].platform.upper()}.\n\nminijax has no cross-host transfers between different device sets: "
            "lay the array out over the same devices (the same Mesh), or gather it with "
            "jax.experimental.multihost_utils.process_allgather."
        )
    if tuple(source) != tuple(target):
        raise NotImplementedError(
            f"minijax: resharding an array that spans processes onto the same devices in another order "
            f"({[d.id for d in source]} -> {[d.id for d in target]}) is not supported; build the target Mesh "
            "over the devices in the order of the array's mesh."
        )
    out = _reshard[0](x, sharding)
    if donate and out is not x:
        x.delete()
    return out


def holds_shards(sharding: NamedSharding, aval: core.ShapedArray) -> bool:
    """Whether an array of ``aval`` laid out by ``sharding`` gets one buffer per device: the
    backend holds such arrays, the dtype is a plain one, and the mesh axes divide the shape."""
    if not isinstance(aval.dtype, np.dtype) or aval.dtype == dtypes.float0:
        return False
    devices = sharding._device_assignment
    if not devices[0].backend.holds_shards(devices):
        return False
    sizes = sharding.mesh.shape
    for dim, n in enumerate(aval.shape):
        entry = sharding.spec[dim] if dim < len(sharding.spec) else None
        if entry is None:
            continue
        if not isinstance(entry, (str, tuple)):  # P.UNCONSTRAINED: no layout of its own
            return False
        axes = (entry,) if isinstance(entry, str) else entry
        if n % math.prod(sizes[a] for a in axes):
            return False
    return True


def _put_shards(x: Any, aval: core.ShapedArray, sharding: NamedSharding, donate: bool) -> Array:
    """``x`` laid out by ``sharding`` as one buffer per device (``_holds_shards``)."""
    if type(x) is Array and x._shards is not None and x._sharding == sharding:
        return x
    first = sharding._device_assignment[0]
    host = np.asarray(x._value) if type(x) is Array else np.asarray(x, dtype=aval.dtype)
    if transfers.active and type(x) is not Array:
        transfers.check_host_to_device(aval, first)
    out = Array(None, aval, first.backend, first, True)
    out._shards = first.backend.put_shards(host, sharding)
    out._sharding = sharding
    if donate and type(x) is Array:
        x.delete()
    return out


def is_sharding_leaf(s: Any) -> bool:
    """A leaf of a tree of shardings: a Sharding, a PartitionSpec, or None (that subtree as it is)."""
    return s is None or isinstance(s, (Sharding, PartitionSpec))


def lay_out(tree: Any, shardings: Any, what: str) -> Any:
    """``tree`` with each leaf laid out by the sharding of the subtree it is in: ``shardings``
    is a prefix of ``tree``'s structure whose leaves are Shardings, PartitionSpecs (over the
    current mesh) or None (that subtree as it is). Traced values are left alone: minijax's
    traces carry no shardings."""

    specs, spec_tree = tree_util.tree_flatten(shardings, is_leaf=is_sharding_leaf)
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except Exception:
        raise ValueError(
            f"{what}: the shardings {shardings!r} do not match the structure of the value, "
            f"{tree_util.tree_structure(tree)}: give one sharding, or a prefix of the value's structure."
        ) from None
    out = []
    for spec, sub in zip(specs, subtrees):
        if spec is not None:
            sharding = resolve_sharding(spec, what)
            sub = tree_util.tree_map(lambda v, s=sharding: v if isinstance(v, core.Tracer) else put_sharded(v, s), sub)
        out.append(sub)
    return tree_util.tree_unflatten(spec_tree, out)
