"""The Backend interface and the registry of backends.

A backend knows primitives, never transforms: it stores buffers on its
devices, runs one primitive eagerly, and compiles a whole ClosedJaxpr into a
callable. ``spec/backends.md`` is the contract. Backends are found through the
``minijax.backends`` entry-point group; the bundled ones register that way too.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from minijax.config import generation, invalidate_derived, overridden_anywhere, read as read_flag
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr

if TYPE_CHECKING:
    from importlib import metadata

ENTRY_POINT_GROUP = "minijax.backends"


# How JAX spells a device's type in its repr, per platform.
_REPR_NAMES = {"cpu": "CpuDevice", "gpu": "CudaDevice", "tpu": "TpuDevice"}


class Device:
    """One device of a backend (``CpuDevice(id=0)``).

    ``platform`` is JAX's platform name ("cpu", "gpu"); ``str(device)`` is
    JAX's ``cpu:0`` form (``name`` overrides it, e.g. ``cuda:0``).
    """

    def __init__(self, backend: Backend, id: int, platform: str, device_kind: str, name: str | None = None) -> None:
        self.backend = backend
        self.id = id
        self.platform = platform
        self.device_kind = device_kind
        self.process_index = 0
        self._name = name or f"{platform}:{id}"

    def __repr__(self) -> str:
        return f"{_REPR_NAMES.get(self.platform, self.platform.capitalize() + 'Device')}(id={self.id})"

    def __str__(self) -> str:
        return self._name


Executable = Callable[[Sequence[Any]], list[Any]]


class Backend(abc.ABC):
    """What every backend implements. Buffers are the backend's own objects."""

    name: str
    platform: str
    # When several backends are installed the highest priority is the default.
    priority: int = 0

    @abc.abstractmethod
    def devices(self) -> list[Device]:
        """The devices of the backend's main platform; ``devices()[0]`` is its default device."""

    # mproc (issue 17): a backend spanning several processes (the xla one after
    # jax.distributed.initialize) says so here; devices() stays this process's.
    def global_devices(self) -> list[Device]:
        """Every process's devices (``jax.devices()``); one process: ``devices()``."""
        return self.devices()

    def process_index(self) -> int:
        return 0

    def process_count(self) -> int:
        return 1

    def platform_devices(self, platform: str) -> list[Device]:
        """Its devices of ``platform`` ("cpu", "gpu"), which may include devices
        beyond ``devices()`` (the xla backend on a GPU machine also has CPUs)."""
        return [d for d in self.devices() if d.platform == platform]

    @abc.abstractmethod
    def put(self, value: np.ndarray[Any, Any], device: Device | None = None) -> Any:
        """Copy a host array (already of a supported dtype) to a device buffer."""

    @abc.abstractmethod
    def get(self, buffer: Any) -> np.ndarray[Any, Any]:
        """The buffer's contents as a NumPy array (may be a read-only view)."""

    @abc.abstractmethod
    def execute(
        self,
        prim: Primitive,
        params: dict[str, Any],
        inputs: Sequence[Any],
        out_avals: Sequence[ShapedArray],
    ) -> list[Any]:
        """Run one primitive eagerly on buffers; return output buffers."""

    def prepare(
        self,
        prim: Primitive,
        params: dict[str, Any],
        in_avals: Sequence[ShapedArray],
        out_avals: Sequence[ShapedArray],
    ) -> Callable[[Sequence[Any]], list[Any]]:
        """A runner for one primitive at fixed avals and params.

        Eager execution caches the runner per (primitive, avals, params,
        device), so a backend can do its per-operation work (resolving an
        implementation, compiling an executable) once here instead of in every
        ``execute``. A backend with several devices also accepts a ``device``
        keyword; it is passed only for a device other than ``devices()[0]``, so
        single-device backends need not declare it.
        """
        return lambda bufs: self.execute(prim, params, bufs, out_avals)

    @abc.abstractmethod
    def compile(self, closed: ClosedJaxpr, donated_invars: Sequence[bool] | None = None) -> Executable:
        """Compile a whole jaxpr: the result maps input buffers to output buffers.

        As with ``prepare``, a ``device`` keyword is passed only for a device
        other than ``devices()[0]``.
        """

    @abc.abstractmethod
    def supports(self, prim: Primitive) -> bool: ...

    def block_until_ready(self, buffer: Any) -> None:
        """Wait until ``buffer`` is computed. A deleted buffer may raise any
        RuntimeError: ``Array`` then asks ``is_ready``, which should raise JAX's."""
        return None

    def is_ready(self, buffer: Any) -> bool:
        return True

    def buffer_device(self, buffer: Any) -> Device:
        return self.devices()[0]

    def lower_text(self, closed: ClosedJaxpr) -> str:
        """The backend's program text for ``jit(f).lower(...).as_text()``."""
        return str(closed)

    def lowered_text(self, closed: ClosedJaxpr, dialect: str) -> str:
        """The program in ``dialect`` ("stablehlo" or "hlo"), for
        ``Lowered.as_text(dialect=...)``. A backend that does not lower to XLA's
        dialects has neither text."""
        raise NotImplementedError(
            f"the {self.name} backend does not lower to {dialect}: Lowered.as_text() without a dialect "
            "shows its program (the jaxpr); the xla backend has the stablehlo and hlo texts"
        )

    def compiler_ir(self, closed: ClosedJaxpr, dialect: str | None) -> Any:
        """The compiler's in-memory program for ``Lowered.compiler_ir()`` (XLA: an
        MLIR module, or an XlaComputation for "hlo"); None where there is none."""
        return None

    def lowered_cost_analysis(self, closed: ClosedJaxpr) -> dict[str, float] | None:
        """Cost estimates of the program before compiling (``Lowered.cost_analysis()``)."""
        return None

    def profiler(self) -> Any:
        """A profiler for ``minijax.profiler`` (``start_session(options)`` -> an object with
        ``stop_and_export(log_dir)``; ``trace_me(name, **kw)`` -> a context manager;
        ``heap_profile()`` -> pprof bytes), or None where the backend has none."""
        return None

    # Whether ``compile_exported`` takes a StableHLO module's text (``jax.export``'s programs).
    compiles_stablehlo = False

    def refine_exported(self, module_text: str, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]) -> str:
        """An exported StableHLO module with symbolic dimensions specialized to ``in_avals``
        (where ``compiles_stablehlo``)."""
        raise NotImplementedError(f"the {self.name} backend does not compile StableHLO")

    def compile_exported(
        self, module_text: str, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]
    ) -> Executable:
        """Compile an exported StableHLO module for the default device (where ``compiles_stablehlo``)."""
        raise NotImplementedError(f"the {self.name} backend does not compile StableHLO")

    def memory_analysis(self, executable: Executable) -> Any:
        """The compiled program's memory sizes (``Compiled.memory_analysis()``), or None."""
        return None

    def compiled_text(self, executable: Executable) -> str | None:
        """The text of what ``compile`` produced, for ``.compile().as_text()``
        (XLA: the optimized HLO); None when there is nothing beyond ``lower_text``."""
        return None

    def cost_analysis(self, executable: Executable) -> dict[str, float] | None:
        """The compiler's cost estimates for an executable (XLA: flops, bytes
        accessed, ...); None where the backend has none."""
        return None

    # --- arrays over several devices (issue 17) -------------------------------------------
    # A backend that holds a sharded array as one buffer per device, and compiles one
    # program for all of a mesh's devices (the xla backend, over N CPU devices). Elsewhere
    # a sharded array keeps its whole value on its first device (minijax.placement).

    def holds_shards(self, devices: Sequence[Device]) -> bool:
        """Whether an array laid out over ``devices`` (more than one, all this backend's)
        holds one buffer per device here."""
        return False

    def put_shards(self, value: np.ndarray[Any, Any], sharding: Any) -> Any:
        """``value`` laid out by ``sharding`` (a NamedSharding): one buffer per device, as one object."""
        raise NotImplementedError(f"the {self.name} backend holds no per-device buffers")

    def put_blocks(self, blocks: Sequence[np.ndarray[Any, Any]], sharding: Any, shape: tuple[int, ...]) -> Any:
        """An array of ``shape`` made of the given blocks, one per device in the sharding's
        device order, each device keeping its own (as ``put_shards`` makes; replicated blocks
        are not compared, as in JAX's ``make_array_from_single_device_arrays``)."""
        raise NotImplementedError(f"the {self.name} backend holds no per-device buffers")

    def get_shards(self, buffer: Any, sharding: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
        """The whole value of what ``put_shards`` (or an SPMD program) made, on the host."""
        raise NotImplementedError(f"the {self.name} backend holds no per-device buffers")

    def shard_buffers(self, buffer: Any, sharding: Any, shape: tuple[int, ...]) -> list[Any]:
        """The per-device buffers of what ``put_shards`` made, in the sharding's device order."""
        raise NotImplementedError(f"the {self.name} backend holds no per-device buffers")

    def compile_spmd(
        self, closed: ClosedJaxpr, in_shardings: Sequence[Any], out_shardings: Sequence[Any | None],
        donated: Sequence[int] = (), name: str | None = None,
    ) -> tuple[Callable[[list[Any]], list[Any]], list[Any]]:
        """One program for all the devices of the arguments' shardings (NamedShardings over
        one mesh): a runner on their ``put_shards`` buffers, and each result's NamedSharding
        (``out_shardings``' where given, else the compiler's choice). NotImplementedError for
        a program that cannot run so (the caller then runs it on one device). ``donated``:
        the inputs whose buffers the program may take over (the runner consumes them);
        ``name``: the program's name (``jit_f``)."""
        raise NotImplementedError(f"the {self.name} backend compiles no SPMD programs")

    def lower_spmd_text(
        self, closed: ClosedJaxpr, in_shardings: Sequence[Any], out_shardings: Sequence[Any | None],
        donated: Sequence[int] = (), name: str | None = None,
    ) -> str:
        """The text of the program ``compile_spmd`` compiles (``Lowered.as_text()`` of an SPMD program)."""
        raise NotImplementedError(f"the {self.name} backend compiles no SPMD programs")

    def spmd_compiled_text(self, run: Callable[[list[Any]], list[Any]]) -> str | None:
        """What the compiler made of the SPMD program whose runner is ``run`` (``Compiled.as_text()``)."""
        return None


_registry_lock = threading.Lock()
_factories: dict[str, Callable[[], Backend]] = {}
_instances: dict[str, Backend] = {}
_discovered = False
# The highest-priority backend, once computed (reset when a backend registers).
_default_name: str | None = None

# The bundled backends, the same two that minijax's own entry points name. They are in the table
# from the start, so that a source checkout on PYTHONPATH (no entry points installed, as in the
# ecosystem environment) picks the backend an install would, and so that naming one of them
# (MINIJAX_BACKEND=xla) loads it without scanning every installed distribution's entry points
# (importing importlib.metadata and reading them: ~12 ms of the first operation). Third-party
# backends are found by that scan, at the first request for a name not yet registered. XLA's
# factory fails where jaxlib is missing, and the default then falls back to NumPy.
_BUNDLED = {"numpy": "minijax_numpy:make_backend", "xla": "minijax_xla:make_backend"}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    """Register a backend factory by name (what an entry point does)."""
    global _default_name
    with _registry_lock:
        _factories[name] = factory
        _instances.pop(name, None)
        _default_name = None  # the new backend may have the highest priority
    invalidate_derived()


def _load(spec: str) -> Callable[[], Backend]:
    import importlib

    def factory() -> Backend:
        module, _, attr = spec.partition(":")
        make: Callable[[], Backend] = getattr(importlib.import_module(module), attr)
        return make()

    return factory


_factories.update({name: _load(spec) for name, spec in _BUNDLED.items()})


def _entry_point_factory(ep: metadata.EntryPoint) -> Callable[[], Backend]:
    # Importing a backend can be costly (XLA loads a shared library): defer
    # the import until the backend is asked for.
    def factory() -> Backend:
        make: Callable[[], Backend] = ep.load()
        return make()

    return factory


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    with _registry_lock:
        if _discovered:
            return
        # (imported here: importlib.metadata costs ~5% of ``import minijax``, and backends are
        # discovered at the first use of one, not at import)
        from importlib import metadata

        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            _factories.setdefault(ep.name, _entry_point_factory(ep))
        _discovered = True


def backend_names() -> list[str]:
    _discover()
    return sorted(_factories)


def get_backend(name: str | None = None) -> Backend:
    """The backend called ``name``, or the default one."""
    if name is None:
        name = default_backend_name()
    backend = _instances.get(name)
    if backend is None:
        factory = _factories.get(name)
        if factory is None:
            _discover()
            factory = _factories.get(name)
        if factory is None:
            raise RuntimeError(
                f"Unknown backend {name!r}. Available backends: {', '.join(sorted(_factories))}. "
                "Backends register through the 'minijax.backends' entry-point group."
            )
        backend = _instances[name] = factory()
    return backend


# JAX's platform names, and the spellings JAX_PLATFORMS accepts for them.
_PLATFORM_ALIASES = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "tpu": "tpu"}


def default_backend_name() -> str:
    """The registry name of the default backend.

    In order: the ``minijax_backend`` flag (MINIJAX_BACKEND); the first entry of
    ``jax_platforms`` (JAX_PLATFORMS) that names an installed backend or a
    platform some backend offers; else the loadable backend of highest priority.
    """
    chosen = read_flag("minijax_backend")
    if chosen:
        return str(chosen)
    wanted = read_flag("jax_platforms") or read_flag("jax_platform_name")
    if wanted:
        return _backend_for_platforms(str(wanted))
    return _highest_priority_backend()


def _highest_priority_backend() -> str:
    global _default_name
    if _default_name is None:
        _discover()
        candidates = []
        failures = []
        for name in list(_factories):
            try:
                candidates.append((get_backend(name).priority, name))
            except Exception as e:  # a broken third-party backend must not break minijax
                failures.append(f"{name}: {type(e).__name__}: {e}")
        if not candidates:
            raise RuntimeError("No minijax backend could be loaded. " + "; ".join(failures))
        _default_name = max(candidates)[1]
    return _default_name


def _backend_for_platforms(wanted: str) -> str:
    """The backend for a JAX_PLATFORMS value such as "cpu", "cuda,cpu" or "xla"."""
    entries = [e.strip() for e in wanted.split(",") if e.strip()]
    for entry in entries:
        backend = _backend_offering(entry)
        if backend is not None:
            return backend.name
    _discover()
    raise RuntimeError(
        f"Unable to initialize backend {entries[0]!r}: no installed minijax backend is called that or offers "
        f"that platform (backends: {', '.join(sorted(_factories))}; platforms: cpu, gpu). "
        "Set JAX_PLATFORMS='' to choose an available backend automatically."
    )


def _backend_offering(name: str) -> Backend | None:
    """The backend registered as ``name``, else the highest-priority loadable
    backend with devices of platform ``name``; None if there is none."""
    _discover()
    if name in _factories:
        return get_backend(name)
    platform = _PLATFORM_ALIASES.get(name.lower())
    if platform is None:
        return None
    found: list[tuple[int, str, Backend]] = []
    for backend_name in list(_factories):
        try:
            backend = get_backend(backend_name)
        except Exception:  # a backend that cannot load offers nothing
            continue
        if backend.platform_devices(platform):
            found.append((backend.priority, backend_name, backend))
    return max(found, key=lambda t: (t[0], t[1]))[2] if found else None


def devices_for(name: str | None = None) -> list[Device]:
    """``minijax.devices(name)``: a backend name ("xla"), a platform ("cpu",
    "gpu"), or None for the default backend's devices."""
    if name is None:
        return list(get_backend().global_devices())
    _discover()
    if name in _factories:
        return list(get_backend(name).global_devices())
    platform = _PLATFORM_ALIASES.get(name.lower())
    if platform is not None:
        # The default backend first, so devices("cpu") agrees with devices().
        default = get_backend()
        if default.platform_devices(platform):
            return default.platform_devices(platform)
        backend = _backend_offering(name)
        if backend is not None:
            return backend.platform_devices(platform)
        present = sorted({d.platform for d in default.devices()})
        raise RuntimeError(
            f"Unknown backend: {name!r} requested, but no platforms that are instances of {name} are present. "
            f"Platforms present are: {', '.join(present)}"
        )
    raise RuntimeError(
        f"Unknown backend {name}. Available backends are {sorted(_factories)} "
        "and the platforms 'cpu' and 'gpu' (when a backend offers them)."
    )


# --- the default device ---------------------------------------------------------


def resolve_device(spec: Any) -> Device:
    """A Device from what ``jax_default_device`` accepts: a Device or a name."""
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, str):
        return devices_for(spec)[0]
    raise ValueError(
        "jax.default_device must be passed either a Device object (e.g. `jax.devices('cpu')[0]`) "
        f"or a platform name string like 'cpu' or 'gpu', got: {spec!r}"
    )


def _compute_default_device() -> Device:
    wanted = read_flag("jax_default_device")
    if wanted is not None:
        return resolve_device(wanted)
    return get_backend().devices()[0]


# The flags the default device depends on.
_PLACEMENT_FLAGS = ("jax_default_device", "minijax_backend", "jax_platforms", "jax_platform_name")


class _DefaultDeviceCache:
    """A default device, valid while ``config.generation`` is unchanged."""

    __slots__ = ("generation", "device")

    def __init__(self) -> None:
        self.generation = -1
        self.device: Device | None = None


class _ThreadDefaultDeviceCache(threading.local):
    """The same, per thread (no slots: a threading.local keeps its attributes per thread)."""

    def __init__(self) -> None:
        self.generation = -1
        self.device: Device | None = None


# Process-wide while no thread overrides a placement flag with config_context
# (the common case: one attribute compare on the eager hot path); per thread
# while some thread does. A threading.local read costs about 40 ns, a third
# of this function, hence the two levels.
_shared_default = _DefaultDeviceCache()
_thread_default = _ThreadDefaultDeviceCache()


def default_device() -> Device:
    """Where uncommitted values go and computations on them run.

    The ``jax_default_device`` flag (or ``minijax.default_device(dev)``) if
    set, else the default backend's first device. On the eager hot path, so
    cached until a flag or the registry changes.
    """
    shared = _shared_default
    # generation before device: the slow path stores them in the other order.
    if shared.generation == generation.value:
        device = shared.device
        if device is not None:
            return device
    return _default_device_slow()


def _default_device_slow() -> Device:
    now = generation.value  # read before the override check: see config.overridden_anywhere
    cache = _thread_default if overridden_anywhere(_PLACEMENT_FLAGS) else _shared_default
    device = cache.device
    if cache.generation != now or device is None:
        device = cache.device = _compute_default_device()
        cache.generation = now
    return device


def default_device_of(backend: Backend) -> Device:
    """The default device if it belongs to ``backend``, else the backend's first."""
    device = default_device()
    return device if device.backend is backend else backend.devices()[0]
