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
from importlib import metadata
from typing import Any

import numpy as np

from minijax.config import config
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr

ENTRY_POINT_GROUP = "minijax.backends"


class Device:
    """One device of a backend (``CpuDevice(id=0)``)."""

    def __init__(self, backend: Backend, id: int, platform: str, device_kind: str) -> None:
        self.backend = backend
        self.id = id
        self.platform = platform
        self.device_kind = device_kind
        self.process_index = 0

    def __repr__(self) -> str:
        return f"{self.platform.capitalize() if self.platform != 'cpu' else 'Cpu'}Device(id={self.id})"

    def __str__(self) -> str:
        return f"{self.platform.upper() if self.platform != 'cpu' else 'TFRT_CPU'}_{self.id}"


Executable = Callable[[Sequence[Any]], list[Any]]


class Backend(abc.ABC):
    """What every backend implements. Buffers are the backend's own objects."""

    name: str
    platform: str
    # When several backends are installed the highest priority is the default.
    priority: int = 0

    @abc.abstractmethod
    def devices(self) -> list[Device]: ...

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

        Eager execution caches the runner per (primitive, avals, params), so a
        backend can do its per-operation work (resolving an implementation,
        compiling an executable) once here instead of in every ``execute``.
        """
        return lambda bufs: self.execute(prim, params, bufs, out_avals)

    @abc.abstractmethod
    def compile(self, closed: ClosedJaxpr, donated_invars: Sequence[bool] | None = None) -> Executable:
        """Compile a whole jaxpr: the result maps input buffers to output buffers."""

    @abc.abstractmethod
    def supports(self, prim: Primitive) -> bool: ...

    def block_until_ready(self, buffer: Any) -> None:
        return None

    def is_ready(self, buffer: Any) -> bool:
        return True

    def buffer_device(self, buffer: Any) -> Device:
        return self.devices()[0]

    def lower_text(self, closed: ClosedJaxpr) -> str:
        """The backend's program text for ``jit(f).lower(...).as_text()``."""
        return str(closed)


_registry_lock = threading.Lock()
_factories: dict[str, Callable[[], Backend]] = {}
_instances: dict[str, Backend] = {}
_discovered = False

# Bundled backends, used only when the package's entry points are not
# installed (running from a source checkout without `pip install`).
_BUNDLED = {"numpy": "minijax_numpy:make_backend"}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    """Register a backend factory by name (what an entry point does)."""
    with _registry_lock:
        _factories[name] = factory
        _instances.pop(name, None)


def _load(spec: str) -> Callable[[], Backend]:
    import importlib

    def factory() -> Backend:
        module, _, attr = spec.partition(":")
        make: Callable[[], Backend] = getattr(importlib.import_module(module), attr)
        return make()

    return factory


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
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            _factories.setdefault(ep.name, _entry_point_factory(ep))
        for name, spec in _BUNDLED.items():
            if name not in _factories:
                _factories[name] = _load(spec)
        _discovered = True


def backend_names() -> list[str]:
    _discover()
    return sorted(_factories)


def get_backend(name: str | None = None) -> Backend:
    """The backend called ``name``, or the default one."""
    _discover()
    if name is None:
        name = default_backend_name()
    backend = _instances.get(name)
    if backend is None:
        factory = _factories.get(name)
        if factory is None:
            raise RuntimeError(
                f"Unknown backend {name!r}. Available backends: {', '.join(sorted(_factories))}. "
                "Backends register through the 'minijax.backends' entry-point group."
            )
        backend = _instances[name] = factory()
    return backend


_default_name: str | None = None


def default_backend_name() -> str:
    global _default_name
    chosen = config.minijax_backend
    if chosen:
        return str(chosen)
    wanted = config.jax_platforms or config.jax_platform_name
    if wanted:
        first = str(wanted).split(",")[0].strip()
        return "numpy" if first == "cpu" and "xla" not in _factories else first
    if _default_name is None:
        _discover()
        candidates = []
        failures = []
        for name in _factories:
            try:
                candidates.append((get_backend(name).priority, name))
            except Exception as e:  # a broken third-party backend must not break minijax
                failures.append(f"{name}: {type(e).__name__}: {e}")
        if not candidates:
            raise RuntimeError("No minijax backend could be loaded. " + "; ".join(failures))
        _default_name = max(candidates)[1]
    return _default_name
