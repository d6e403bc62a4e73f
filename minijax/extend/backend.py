"""``jax.extend.backend``: minijax's backends, as JAX's backend utilities show them.

A minijax backend (``minijax.backend.Backend``: the NumPy reference or XLA
through PJRT) stands where JAX has an XLA client. ``clear_backends`` empties
every cache of compiled programs; the backend objects themselves stay, since
the arrays already made hold their devices.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minijax import backend as _backend
from minijax.backend import Backend, Device
from minijax.extend._unsupported import unsupported
from minijax.stages import clear_caches

__all__ = [
    "backend_xla_version", "backends", "clear_backends", "clear_in_memory_compilation_cache", "get_backend",
    "get_compile_options", "get_default_device", "ifrt_proxy", "register_backend_cache", "register_backend_factory",
]  # fmt: skip

# Caches registered by libraries: emptied by clear_backends, as JAX empties its own.
_registered_caches: list[tuple[Any, str]] = []


def backends() -> dict[str, Backend]:
    """Every backend that loads, by name ("numpy", "xla")."""
    found = {}
    for name in _backend.backend_names():
        try:
            found[name] = _backend.get_backend(name)
        except Exception:  # noqa: BLE001  (a backend whose library is missing is not offered, as JAX skips it)
            continue
    return found


def get_backend(platform: str | Backend | None = None) -> Backend:
    """The backend called ``platform`` (a backend passes through), or the default one."""
    if isinstance(platform, Backend):
        return platform
    return _backend.get_backend(platform)


def get_default_device() -> Device:
    return _backend.default_device()


def backend_xla_version(platform: str | None = None) -> int | None:
    """JAX's XLA version number of a backend's C API; None, as JAX's CPU client answers, for all of minijax's."""
    get_backend(platform)
    return None


def clear_in_memory_compilation_cache() -> None:
    """Forget every compiled program (traces and executables): they are made again when next needed."""
    clear_caches()


def clear_backends() -> None:
    """Empty every cache of compiled programs, the registered ones included."""
    clear_caches()
    for cache, _ in _registered_caches:
        cache.cache_clear()


def register_backend_cache(cache: Any, for_what: str) -> None:
    """Have ``clear_backends`` call ``cache.cache_clear()``."""
    _registered_caches.append((cache, for_what))


def register_backend_factory(name: str, factory: Callable[[], Backend], *, priority: int = 0,
                             fail_quietly: bool = True, experimental: bool = False, make_topology: Any = None,
                             c_api: Any = None) -> None:  # fmt: skip
    """Register a minijax backend under ``name`` (JAX's priority and C API options do not apply)."""
    del priority, fail_quietly, experimental, make_topology, c_api
    _backend.register_backend(name, factory)


get_compile_options = unsupported(
    "extend.backend", "get_compile_options", "minijax's XLA backend builds its own compile options per program"
)
ifrt_proxy = unsupported("extend.backend", "ifrt_proxy", "minijax has no IFRT proxy client")
