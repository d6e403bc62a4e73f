"""Meshes, partition specs and shardings: the classes behind ``minijax.sharding`` (``jax.sharding``).

A *mesh* arranges devices in an n-dimensional grid whose axes have names; a
``NamedSharding(mesh, P(...))`` says, per array dimension, which mesh axes
split it (``P('x', None)``: dimension 0 in as many blocks as axis ``x`` has
devices, dimension 1 whole). From a sharding and a shape follow each device's
block (``devices_indices_map``) and which devices hold the same block
(``replica_id``).

minijax keeps a sharded array's value whole on its sharding's first device
and derives each shard from the sharding on demand (``Array.addressable_shards``),
so values are always exactly JAX's; execution is still on one device
(docs/differences.md).
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from minijax.backend import Device, devices_for
from minijax.core import ShapedArray

__all__ = [
    "AbstractMesh",
    "AxisType",
    "DuplicateSpecError",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "get_abstract_mesh",
    "get_mesh",
    "make_mesh",
    "set_mesh",
    "use_abstract_mesh",
]

Index = tuple[slice, ...]


class AxisType(enum.Enum):
    """How a mesh axis is handled: by the compiler (Auto), in the types (Explicit), or by the user (Manual, inside shard_map)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:  # JAX prints the bare name inside meshes' reprs
        return self.name


class DuplicateSpecError(Exception):
    """A mesh axis named twice in one PartitionSpec."""


class IndivisibleError(ValueError):
    """An array dimension its mesh axes do not divide evenly."""


# --- PartitionSpec -------------------------------------------------------------------


class _Unconstrained:
    def __repr__(self) -> str:
        return "UNCONSTRAINED"


class PartitionSpec:
    """Per array dimension: None (not split), a mesh axis name, or a tuple of names (split by their product).

    Trailing dimensions the spec does not mention are not split.
    """

    UNCONSTRAINED = _Unconstrained()
    __slots__ = ("_partitions", "unreduced", "reduced")

    def __init__(self, *partitions: Any, unreduced: Any = frozenset(), reduced: Any = frozenset()) -> None:
        for p in partitions:
            if not (p is None or isinstance(p, str) or p is PartitionSpec.UNCONSTRAINED or (
                    isinstance(p, tuple) and all(isinstance(n, str) for n in p))):
                raise TypeError(
                    f"A PartitionSpec entry must be None, a mesh axis name (str) or a tuple of names, got {p!r}"
                )
        self._partitions: tuple[Any, ...] = tuple(
            (p[0] if len(p) == 1 else p) if isinstance(p, tuple) and p else (None if p == () else p)
            for p in partitions
        )
        # Axes over which each device holds a partial sum (unreduced) or a reduced copy: layouts
        # of partial results, which minijax does not lay out yet (put_sharded refuses them).
        self.unreduced: frozenset[str] = frozenset(unreduced)
        self.reduced: frozenset[str] = frozenset(reduced)
        for kind, names in (("unreduced", self.unreduced), ("reduced", self.reduced)):
            overlap = names & set(self.axis_names())
            if overlap:
                raise ValueError(
                    f"partitions cannot overlap with {kind} axes passed to PartitionSpec. Got partitions: "
                    f"{tuple(self.axis_names())} and {kind} axes: {names}"
                )

    def __len__(self) -> int:
        return len(self._partitions)

    def __getitem__(self, i: Any) -> Any:
        return self._partitions[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._partitions)

    def _key(self) -> tuple[Any, ...]:
        return (self._partitions, self.unreduced, self.reduced)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PartitionSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("PartitionSpec", self._key()))

    def __repr__(self) -> str:
        parts = [repr(p) for p in self._partitions]
        for kind, names in (("unreduced", self.unreduced), ("reduced", self.reduced)):
            if names:
                parts.append(f"{kind}={{{', '.join(repr(n) for n in sorted(names))}}}")
        if len(parts) == 1 and len(self._partitions) == 1:
            return f"P({parts[0]},)"
        return f"P({', '.join(parts)})"

    def axis_names(self) -> list[str]:
        """Every mesh axis the spec names, in order."""
        out: list[str] = []
        for p in self._partitions:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, tuple):
                out.extend(p)
        return out


P = PartitionSpec


def _entry_axes(entry: Any) -> tuple[str, ...]:
    if entry is None or entry is PartitionSpec.UNCONSTRAINED:
        return ()
    return (entry,) if isinstance(entry, str) else tuple(entry)


# --- meshes --------------------------------------------------------------------------


def _axis_types(axis_types: Any, n: int, default: AxisType) -> tuple[AxisType, ...]:
    if axis_types is None:
        return (default,) * n
    if isinstance(axis_types, AxisType):
        return (axis_types,) * n
    types = tuple(axis_types)
    if len(types) != n or not all(isinstance(t, AxisType) for t in types):
        raise ValueError(
            f"Number of axis names should match the number of axis_types. Got axis_names of length {n} "
            f"and axis_types {types!r}; pass one jax.sharding.AxisType per mesh axis."
        )
    return types


def _sizes_text(names: Sequence[str], sizes: Sequence[int]) -> str:
    return ", ".join(f"'{n}': {s}" for n, s in zip(names, sizes))


class _NamedAxes:
    """What a mesh, concrete or abstract, tells of its axes: names, sizes, and the two together."""

    axis_names: tuple[str, ...]

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def shape(self) -> OrderedDict[str, int]:
        return OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)


class AbstractMesh(_NamedAxes):
    """A mesh's shape, axis names and axis types, without devices (what tracing sees)."""

    def __init__(self, axis_sizes: Sequence[int], axis_names: Sequence[str], axis_types: Any = None,
                 *, device_kind: str | None = None, platform: str | None = None) -> None:  # fmt: skip
        self._axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(
                f"AbstractMesh: axis_sizes {self.axis_sizes} and axis_names {self.axis_names} must have the same length"
            )
        self.axis_types = _axis_types(axis_types, len(self.axis_names), AxisType.Auto)
        self._device_kind = device_kind
        self._platform = platform

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return self._axis_sizes

    @property
    def empty(self) -> bool:
        return not self.axis_names

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    def _names_of(self, kind: AxisType) -> tuple[str, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is kind)

    @property
    def explicit_axes(self) -> tuple[str, ...]:
        return self._names_of(AxisType.Explicit)

    @property
    def auto_axes(self) -> tuple[str, ...]:
        return self._names_of(AxisType.Auto)

    @property
    def manual_axes(self) -> tuple[str, ...]:
        return self._names_of(AxisType.Manual)

    def update_axis_types(self, new: Mapping[str, AxisType]) -> AbstractMesh:
        types = tuple(new.get(n, t) for n, t in zip(self.axis_names, self.axis_types))
        return AbstractMesh(self.axis_sizes, self.axis_names, types,
                            device_kind=self._device_kind, platform=self._platform)  # fmt: skip

    def _key(self) -> tuple[Any, ...]:
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        tail = ""
        if self._device_kind is not None:
            tail = f", device_kind={self._device_kind}, num_cores=None, platform={self._platform}"
        return f"AbstractMesh({_sizes_text(self.axis_names, self.axis_sizes)}, axis_types={self.axis_types!r}{tail})"

    def __enter__(self) -> AbstractMesh:
        self._cm = use_abstract_mesh(self)
        self._cm.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._cm.__exit__(*exc)


class Mesh(_NamedAxes):
    """Devices in an n-dimensional grid whose axes have names (``jax.sharding.Mesh``).

    ``with mesh:`` makes it the current mesh, as ``jax.set_mesh(mesh)`` does.
    """

    def __init__(self, devices: Any, axis_names: str | Sequence[str], axis_types: Any = None) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        grid = np.empty(np.shape(devices), dtype=object) if not isinstance(devices, np.ndarray) else None
        if grid is not None:
            flat = list(np.ravel(np.array(devices, dtype=object)))
            grid.reshape(-1)[:] = flat
            devices = grid
        devices = np.asarray(devices, dtype=object)
        if devices.ndim != len(names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second "
                f"argument (`axis_names`), but got devices.ndim == {devices.ndim} and len(axis_names) == {len(names)}."
            )
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh axis names must be unique, got {names}")
        flat_devices = list(devices.flat) if names else []  # no names: the empty mesh, Mesh()
        if not all(isinstance(d, Device) for d in flat_devices):
            raise TypeError(f"Mesh: every entry of `devices` must be a Device, got {flat_devices!r}")
        if len(set(map(id, flat_devices))) != len(flat_devices):
            raise ValueError(f"Mesh: a device appears more than once in {flat_devices!r}")
        self.devices: np.ndarray[Any, Any] = devices
        self.axis_names: tuple[str, ...] = names
        self.axis_types: tuple[AxisType, ...] = _axis_types(axis_types, len(names), AxisType.Auto)
        self._cms: list[Any] = []

    # --- shape ---
    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self.devices.shape)

    @property
    def empty(self) -> bool:
        return self.devices.ndim == 0 or not self.axis_names

    @property
    def device_ids(self) -> np.ndarray[Any, Any]:
        ids: np.ndarray[Any, Any] = np.array([d.id for d in self.devices.flat], dtype=int).reshape(self.devices.shape)
        return ids

    @property
    def local_devices(self) -> list[Device]:
        return list(self.devices.flat)

    @property
    def local_mesh(self) -> Mesh:
        return self

    @property
    def is_multi_process(self) -> bool:
        return False

    @property
    def abstract_mesh(self) -> AbstractMesh:
        if self.empty:
            return AbstractMesh((), ())
        first: Device = self.devices.flat[0]
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                            device_kind=first.platform, platform=first.platform)  # fmt: skip

    @property
    def explicit_axes(self) -> tuple[str, ...]:
        return self.abstract_mesh.explicit_axes

    @property
    def auto_axes(self) -> tuple[str, ...]:
        return self.abstract_mesh.auto_axes

    @property
    def manual_axes(self) -> tuple[str, ...]:
        return self.abstract_mesh.manual_axes

    def _key(self) -> tuple[Any, ...]:
        return (tuple(map(id, self.devices.flat)), self.devices.shape, self.axis_names, self.axis_types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, axis_types={self.axis_types!r})"

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        return f"Mesh({_sizes_text(self.axis_names, self.axis_sizes)}, axis_types={self.axis_types!r})"

    def __enter__(self) -> Mesh:
        cm = set_mesh(self)
        cm.__enter__()
        self._cms.append(cm)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._cms.pop().__exit__(*exc)


_EMPTY_MESH = Mesh(np.empty((), dtype=object), ())


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], axis_types: Any = None, *,
              devices: Sequence[Device] | None = None) -> Mesh:  # fmt: skip
    """A mesh of the given shape over the first ``prod(axis_shapes)`` devices (``jax.make_mesh``).

    As in JAX 0.10, the axes are Explicit unless ``axis_types`` says otherwise.
    """
    shape = tuple(int(s) for s in axis_shapes)
    names = tuple(axis_names)
    if len(shape) != len(names):
        raise ValueError(
            "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second "
            f"argument (`axis_names`), but got devices.ndim == {len(shape)} and len(axis_names) == {len(names)}."
        )
    available = list(devices) if devices is not None else devices_for(None)
    need = math.prod(shape)
    if len(available) < need:
        raise ValueError(f"Number of devices {len(available)} must be >= the product of mesh_shape {shape}")
    grid = np.empty(shape, dtype=object)
    grid.reshape(-1)[:] = available[:need]
    return Mesh(grid, names, _axis_types(axis_types, len(names), AxisType.Explicit))


# --- the current mesh ----------------------------------------------------------------


class _MeshState(threading.local):
    def __init__(self) -> None:
        self.mesh: Mesh = _EMPTY_MESH
        self.abstract: AbstractMesh | None = None  # None: the concrete mesh's


_state = _MeshState()


class _Restore(contextlib.AbstractContextManager[Any]):
    """Sets a value now; as a context manager, restores the old one on exit (``jax.set_mesh``)."""

    def __init__(self, set_now: Any, restore: Any, value: Any) -> None:
        self._restore = restore
        self._value = value
        set_now()

    def __enter__(self) -> Any:
        return self._value

    def __exit__(self, *exc: Any) -> None:
        self._restore()


def set_mesh(mesh: Mesh) -> contextlib.AbstractContextManager[Any]:
    """Make ``mesh`` the current mesh: for good, or, used in ``with``, until the block ends."""
    if not isinstance(mesh, Mesh):
        raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
    old_mesh, old_abstract = _state.mesh, _state.abstract

    def now() -> None:
        _state.mesh, _state.abstract = mesh, None

    def restore() -> None:
        _state.mesh, _state.abstract = old_mesh, old_abstract

    return _Restore(now, restore, mesh)


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh) -> Iterator[AbstractMesh]:
    """Make ``mesh`` the current abstract mesh inside the block (the concrete one is unchanged)."""
    if not isinstance(mesh, AbstractMesh):
        raise ValueError(f"Expected mesh of type `jax.sharding.AbstractMesh`. Got {type(mesh)}")
    old = _state.abstract
    _state.abstract = mesh
    try:
        yield mesh
    finally:
        _state.abstract = old


def get_abstract_mesh() -> AbstractMesh:
    return _state.abstract if _state.abstract is not None else _state.mesh.abstract_mesh


def get_mesh() -> Mesh:
    """The concrete mesh ``set_mesh`` set (``Mesh()`` when none is)."""
    return _state.mesh


# --- shardings -----------------------------------------------------------------------


class Sharding:
    """How an array is laid out over devices: per device, the index of the block it holds."""

    memory_kind = "device"

    @property
    def device_set(self) -> set[Device]:
        return set(self._device_assignment)

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        raise NotImplementedError

    @property
    def num_devices(self) -> int:
        return len(self._device_assignment)

    # mproc (issue 17): over several processes a device is addressable by the process it belongs to.
    @property
    def addressable_devices(self) -> set[Device]:
        return {d for d in self.device_set if d.process_index == d.backend.process_index()}

    @property
    def is_fully_addressable(self) -> bool:
        return all(d.process_index == d.backend.process_index() for d in self._device_assignment)

    @property
    def is_fully_replicated(self) -> bool:
        raise NotImplementedError

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Index]:
        raise NotImplementedError

    def addressable_devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Index]:
        return {d: index for d, index in self.devices_indices_map(global_shape).items()
                if d.process_index == d.backend.process_index()}  # fmt: skip

    def replica_ids(self, global_shape: Sequence[int]) -> dict[Device, int]:
        raise NotImplementedError

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        index = next(iter(self.devices_indices_map(global_shape).values()))
        return tuple(len(range(*s.indices(n))) for s, n in zip(index, global_shape))

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        shape = (1,) * ndim
        return self._device_assignment == other._device_assignment and (
            self.devices_indices_map(shape) == other.devices_indices_map(shape)
        )

    def with_memory_kind(self, kind: str) -> Sharding:
        return self


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device: Device, *, memory_kind: str | None = None) -> None:
        self._device = device

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Index]:
        return {self._device: (slice(None),) * len(global_shape)}

    def replica_ids(self, global_shape: Sequence[int]) -> dict[Device, int]:
        return {self._device: 0}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device is self._device

    def __hash__(self) -> int:
        return hash(("SingleDeviceSharding", id(self._device)))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


class NamedSharding(Sharding):
    """An array's dimensions split over named mesh axes, as ``spec`` says."""

    def __init__(self, mesh: Mesh | AbstractMesh, spec: PartitionSpec, *, memory_kind: str | None = None) -> None:
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding: mesh must be a jax.sharding.Mesh or AbstractMesh, got {type(mesh).__name__}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError(
                "NamedSharding: spec must be a jax.sharding.PartitionSpec (jax.P(...)), "
                f"got {type(spec).__name__} {spec!r}"
            )
        self.mesh = mesh
        self.spec = spec
        seen: set[str] = set()
        for name in spec.axis_names():
            if name in seen:
                raise DuplicateSpecError(
                    "A single NamedSharding spec specification can map every mesh axis to at most one positional "
                    f"dimension, but {spec!r} has duplicate entries for `{name}`"
                )
            seen.add(name)
            if name not in mesh.axis_names:
                raise ValueError(f"Resource axis: {name} of {spec!r} is not found in mesh: {mesh.axis_names}.")

    @property
    def _concrete_mesh(self) -> Mesh:
        if not isinstance(self.mesh, Mesh):
            raise ValueError(f"{self!r} is over an AbstractMesh: it names no devices. Build it over a jax.sharding.Mesh.")
        return self.mesh

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return tuple(self._concrete_mesh.devices.flat)

    @property
    def is_fully_replicated(self) -> bool:
        sizes = self.mesh.shape
        return all(sizes[n] == 1 for n in self.spec.axis_names())

    def check_compatible(self, shape: Sequence[int], what: str = "") -> None:
        """JAX's errors for a spec longer than the rank, or a dimension its axes do not divide."""
        if len(self.spec) > len(shape):
            raise ValueError(
                f"Sharding {self!r} is only valid for values of rank at least {len(self.spec)}, "
                f"but was applied to a value of rank {len(shape)}."
            )
        sizes = self.mesh.shape
        kinds = dict(zip(self.mesh.axis_names, self.mesh.axis_types))
        for dim, entry in enumerate(self.spec):
            parts = math.prod(sizes[a] for a in _entry_axes(entry))
            if shape[dim] % parts and not any(kinds[a] is AxisType.Explicit for a in _entry_axes(entry)):
                tiling = [math.prod(sizes[a] for a in _entry_axes(self.spec[d] if d < len(self.spec) else None))
                          for d in range(len(shape))]  # fmt: skip
                raise IndivisibleError(
                    f"Sharding {self!r} implies that array axis {dim} is partitioned {parts} times, but the dimension "
                    f"size is {shape[dim]} (full shape: {tuple(shape)}, per-dimension tiling factors: {tiling} should "
                    "evenly divide the shape)"
                )
            if shape[dim] % parts:
                raise ValueError(
                    f"Sharding spec {entry if isinstance(entry, tuple) else (entry,)!r} implies that array axis {dim} is "
                    f"partitioned {parts} times, but does not evenly divide the dimension size {shape[dim]}. "
                    f"Got shape: {tuple(shape)} and sharding {self!r}"
                )

    def _position_maps(self, shape: Sequence[int]) -> tuple[dict[Device, Index], dict[Device, int]]:
        mesh = self._concrete_mesh
        sizes = mesh.shape
        used = set(self.spec.axis_names())
        indices: dict[Device, Index] = {}
        replicas: dict[Device, int] = {}
        for pos in np.ndindex(*mesh.devices.shape):
            coord = dict(zip(mesh.axis_names, pos))
            index = []
            for dim, n in enumerate(shape):
                axes = _entry_axes(self.spec[dim]) if dim < len(self.spec) else ()
                if not axes:
                    index.append(slice(None))
                    continue
                block, parts = 0, 1
                for a in axes:  # the first axis named is the major one
                    block = block * sizes[a] + coord[a]
                    parts *= sizes[a]
                size = n // parts
                index.append(slice(block * size, (block + 1) * size))
            replica = 0
            for a in mesh.axis_names:
                if a not in used:
                    replica = replica * sizes[a] + coord[a]
            device: Device = mesh.devices.item(pos)
            indices[device] = tuple(index)
            replicas[device] = replica
        return indices, replicas

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Index]:
        return self._position_maps(global_shape)[0]

    def replica_ids(self, global_shape: Sequence[int]) -> dict[Device, int]:
        return self._position_maps(global_shape)[1]

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        sizes = self.mesh.shape
        return tuple(
            n // math.prod(sizes[a] for a in _entry_axes(self.spec[d] if d < len(self.spec) else None))
            for d, n in enumerate(global_shape)
        )

    def update(self, **kwargs: Any) -> NamedSharding:
        return NamedSharding(kwargs.get("mesh", self.mesh), kwargs.get("spec", self.spec))

    def with_spec(self, spec: PartitionSpec) -> NamedSharding:
        return NamedSharding(self.mesh, spec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedSharding) and self.mesh == other.mesh and self.spec == other.spec

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec))

    def __repr__(self) -> str:
        # (a trace's sharding, over an abstract mesh, names no memory kind)
        memory = "" if isinstance(self.mesh, AbstractMesh) else ", memory_kind=device"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}{memory})"


def result_hints(in_shardings: Sequence[NamedSharding], in_avals: Sequence[Any], out_aval: Any) -> list[PartitionSpec]:
    """The spec a result laid out by the partitioner is named by when it lays it out alike: the first
    argument's, for a result of its rank (JAX's rule; else the spec read from the layout, trailing
    unsplit dimensions left out). Both backends name results so."""
    if in_shardings and in_avals and in_avals[0].ndim == out_aval.ndim:
        return [in_shardings[0].spec]
    return []


def candidate_specs(axis_names: Sequence[str], ndim: int) -> Iterator[tuple[tuple[tuple[str, ...], ...], PartitionSpec]]:
    """Every PartitionSpec of a rank-``ndim`` array that gives each mesh axis at most one
    dimension, with the axes it puts on each dimension, in one fixed order: how a backend
    names a layout it reads back (a mesh has a few axes, an array a few dimensions)."""
    names = list(axis_names)
    for place in itertools.product(range(ndim + 1), repeat=len(names)):  # ndim: the axis unused
        per_dim: list[list[str]] = [[] for _ in range(ndim)]
        for name, dim in zip(names, place):
            if dim < ndim:
                per_dim[dim].append(name)
        for orders in itertools.product(*[list(itertools.permutations(axes)) for axes in per_dim]):
            entries: list[Any] = [None if not o else (o[0] if len(o) == 1 else tuple(o)) for o in orders]
            while entries and entries[-1] is None:
                entries.pop()
            yield tuple(orders), PartitionSpec(*entries)


def explicit_spec_text(sharding: Sharding | None, shape: Sequence[int]) -> list[str]:
    """Each dimension of ``shape`` as ``jax.typeof`` prints it: ``8@x`` where Explicit mesh axes split it."""
    dims = [str(d) for d in shape]
    if not isinstance(sharding, NamedSharding):
        return dims
    mesh = sharding.mesh
    kinds = dict(zip(mesh.axis_names, mesh.axis_types))
    for dim, entry in enumerate(sharding.spec):
        axes = [a for a in _entry_axes(entry) if kinds[a] is AxisType.Explicit]
        if axes and dim < len(dims):
            dims[dim] += "@" + (axes[0] if len(axes) == 1 else "(" + ",".join(axes) + ")")
    return dims


class ShardedAval(ShapedArray):
    """The aval ``jax.typeof`` gives for an array placed with a NamedSharding: it prints
    the Explicit mesh axes splitting each dimension (``float32[8@x,4]``), as JAX's does.

    Traced values over Explicit axes carry one too (``minijax.sharding_rules``). It is equal to
    the plain aval of the same shape and dtype, so caches keyed on avals add the sharding
    themselves where it matters (jit's)."""

    __slots__ = ("sharding",)

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool, sharding: Sharding) -> None:
        super().__init__(shape, dtype, weak_type)
        self.sharding = sharding

    def str_short(self, short_dtypes: bool = True) -> str:
        plain = super().str_short(short_dtypes)
        return plain[: plain.index("[")] + "[" + ",".join(explicit_spec_text(self.sharding, self.shape)) + "]"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ShapedArray, (self.shape, self.dtype, self.weak_type))


# shtypes (issue 17): the error minijax.sharding_rules raises for operands whose shardings conflict.


class ShardingTypeError(Exception):
    """Operands whose Explicit shardings conflict (JAX's ``ShardingTypeError``)."""
