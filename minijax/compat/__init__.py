"""Run code written for JAX — and libraries built on it — on minijax, unmodified.

``install()`` puts a finder on ``sys.meta_path`` that answers ``import jax``
and ``import jax.<module>``:

- JAX's public modules (``jax.numpy``, ``jax.lax``, ``jax.random``,
  ``jax.tree_util``, ``jax.nn``, ``jax.scipy.*``, ``jax.extend.*``,
  ``jax.experimental.*``, ...) are minijax's public modules of the same name,
  the very module objects (``jax.numpy is minijax.numpy``). Only the names in
  ``PUBLIC_MODULES`` are mapped: minijax modules that merely share a name with
  a JAX one (``minijax.core`` is minijax's IR, ``minijax.interpreters`` its
  transformation machinery) are never reached through ``jax``.
- ``jax`` itself is a module of its own whose names are minijax's, except that
  it reports JAX's version (``JAX_VERSION``), so that version checks in
  libraries take the path they take on that JAX.
- The extension points libraries build on (``jax.core``,
  ``jax.interpreters.ad``/``batching``/``partial_eval``/``mlir``/...,
  ``jax.version``, ``jax.monitoring``) are small modules of this package
  (``minijax/compat/_served/``), each made of minijax's public pieces.
- A public module minijax does not have yet (``jax.sharding``,
  ``jax.experimental.checkify``, ...) is minijax's as soon as it exists, and
  until then a stand-in whose names import but raise ``NotImplementedError``
  naming the feature when used.
- ``jax._src.*`` (JAX's private modules) holds only the few names these
  libraries touch at import (``PRIVATE_NAMES``), each an inert stand-in.

Nothing named ``jax`` is ever written to disk, and the alias is refused when
real JAX is importable: two different ``jax`` in one process would be
confusing at best. ``minijax run script.py`` (or ``python -m minijax.run``)
runs a script with the alias installed.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence
from typing import Any

__all__ = ["JAX_VERSION", "JAX_VERSION_INFO", "PUBLIC_MODULES", "RealJaxError", "install", "installed", "uninstall"]

# The JAX version the alias reports: the one minijax follows (and its tests compare with).
JAX_VERSION = "0.10.2"
JAX_VERSION_INFO = (0, 10, 2)

# JAX's public modules that are minijax modules of the same name (``jax.X`` -> ``minijax.X``); a name
# ending in ".*" covers the package's submodules too.
PUBLIC_MODULES: tuple[str, ...] = (
    "numpy", "numpy.*", "lax", "lax.*", "random", "tree_util", "tree", "nn", "nn.*", "scipy", "scipy.*",
    "extend", "extend.*", "experimental", "experimental.*", "sharding", "stages", "export", "profiler", "debug",
    "dlpack", "dtypes", "errors", "flatten_util", "image", "image.*", "ops", "ops.*", "typing",
    "custom_derivatives", "custom_batching", "ad_checkpoint", "example_libraries", "example_libraries.*",
    "test_util",
)  # fmt: skip

# JAX modules served by this package (``jax.X`` -> ``minijax.compat._served.X``).
SERVED_MODULES: dict[str, str] = {
    "core": "core",
    "version": "version",
    "monitoring": "monitoring",
    "interpreters": "interpreters",
    "interpreters.ad": "interpreters_ad",
    "interpreters.batching": "interpreters_batching",
    "interpreters.partial_eval": "interpreters_partial_eval",
    "interpreters.mlir": "interpreters_mlir",
    "interpreters.pxla": "interpreters_pxla",
    "interpreters.xla": "interpreters_xla",
    "lib": "lib",
}

# Public modules minijax does not have yet: a stand-in until it does (``_served/pending.py``).
PENDING_MODULES: dict[str, str] = {
    "sharding": "jax.sharding (meshes and shardings)",
    "experimental.checkify": "jax.experimental.checkify",
    "experimental.layout": "jax.experimental.layout",
    "experimental.multihost_utils": "jax.experimental.multihost_utils (several processes)",
    "experimental.mesh_utils": "jax.experimental.mesh_utils (device meshes)",
    "experimental.shard_map": "jax.experimental.shard_map",
    "experimental.pjit": "jax.experimental.pjit",
    "experimental.hijax": "jax.experimental.hijax",
}

# Public names minijax does not have yet, in modules it has: a stand-in that raises when used.
PENDING_NAMES: dict[str, dict[str, str]] = {
    "jax.lax": {name: f"lax.{name} (a collective)" for name in ("all_to_all", "pswapaxes", "ppermute", "pshuffle")},
    "jax": {"Ref": "jax.Ref (mutable array references)", "new_ref": "jax.new_ref (mutable array references)"},
}
# Pending dtype names: NumPy's scalar types, which libraries use as test parameters at import; making an
# array of one raises minijax's own error naming the dtype until minijax has it.
PENDING_DTYPES: dict[str, tuple[str, ...]] = {
    "jax.numpy": ("complex64", "complex128", "complex_", "csingle", "cdouble", "complexfloating"),
}


# Served modules that are packages (their submodules are served too).
SERVED_PACKAGES = frozenset({"interpreters"})


class _Package(types.ModuleType):
    """A package under its JAX name whose names are another module's.

    A package must carry its JAX name: ``from jax.experimental import checkify`` imports the submodule
    ``<package>.__name__ + ".checkify"`` when the package lacks the attribute, and that has to be
    ``jax.experimental.checkify`` (the alias's) rather than ``minijax.experimental.checkify``. A plain
    module is given as itself.
    """

    def __init__(self, name: str, target: types.ModuleType) -> None:
        super().__init__(name, target.__doc__)
        self.__path__: list[str] = []
        self._minijax_target = target

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr != "__all__":
            raise AttributeError(attr)
        try:
            value = getattr(self._minijax_target, attr)
        except AttributeError:
            return pending_name(self.__name__, attr)
        if isinstance(value, types.ModuleType) and hasattr(value, "__path__"):
            return importlib.import_module(f"{self.__name__}.{attr}")  # a subpackage: its alias too
        return value

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self._minijax_target)) | set(self.__dict__))


_packages: dict[str, _Package] = {}


def _package(jax_name: str, target: types.ModuleType) -> _Package:
    if jax_name not in _packages:
        _packages[jax_name] = _Package(jax_name, target)
    return _packages[jax_name]


def pending_name(module: str, attr: str) -> Any:
    """The stand-in for ``module.attr`` from ``PENDING_NAMES``; AttributeError for a name not there."""
    if attr in PENDING_DTYPES.get(module, ()):
        import numpy as np

        return getattr(np, "complex128" if attr == "complex_" else attr)
    feature = PENDING_NAMES.get(module, {}).get(attr)
    if feature is None:
        raise AttributeError(f"module {module!r} has no attribute {attr!r} (minijax has no {module}.{attr})")
    from minijax.compat._served.standin import stand_in_class, stand_in_function

    # A capitalised name is a class (libraries put it in isinstance checks and unions).
    make = stand_in_class if attr[:1].isupper() else stand_in_function
    return make(f"{module}.{attr}", f"{feature} is not implemented by this minijax yet")


class RealJaxError(RuntimeError):
    """Real JAX is importable in this environment, so the ``jax`` alias is refused."""


def _is_public(name: str) -> bool:
    for pattern in PUBLIC_MODULES:
        if name == pattern or (pattern.endswith(".*") and name.startswith(pattern[:-1])):
            return True
    return False


def _minijax_module(name: str) -> types.ModuleType | None:
    """minijax's module ``minijax.<name>``, or None where it does not exist (a missing parent included)."""
    full = f"minijax.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as error:
        if error.name is not None and full.startswith(error.name):
            return None
        raise


def resolve(jax_name: str) -> types.ModuleType:
    """The module that answers ``import <jax_name>`` under the alias."""
    if jax_name == "jax":
        from minijax.compat._served import jax_module

        return jax_module.module()
    name = jax_name.removeprefix("jax.")
    head = name.split(".")[0]
    if name in SERVED_MODULES:
        served = importlib.import_module(f"minijax.compat._served.{SERVED_MODULES[name]}")
        return _package(jax_name, served) if name in SERVED_PACKAGES else served
    if head == "_src":
        from minijax.compat._served import private

        return private.module(jax_name)
    if _is_public(name):
        found = _minijax_module(name)
        if found is not None:
            return _package(jax_name, found) if hasattr(found, "__path__") else found
        if name in PENDING_MODULES:
            from minijax.compat._served import pending

            return pending.module(jax_name, PENDING_MODULES[name])
    raise ModuleNotFoundError(
        f"No module named {jax_name!r}: minijax.compat has no counterpart of JAX's {jax_name} "
        f"(see docs/ecosystem.md for what the alias covers)",
        name=jax_name,
    )


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``import jax[.X]`` with the module ``resolve`` gives (an existing module object)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "jax" and not fullname.startswith("jax."):
            return None
        module = resolve(fullname)  # raises ModuleNotFoundError naming what is missing
        spec = importlib.util.spec_from_loader(fullname, self, is_package=hasattr(module, "__path__"))
        assert spec is not None  # (spec_from_loader returns None only without a loader)
        spec.loader_state = module
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module: types.ModuleType = spec.loader_state
        # The import system writes the new spec into the module; the module keeps its own (exec_module).
        spec.loader_state = (module, getattr(module, "__spec__", None), getattr(module, "__loader__", None))
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        spec = module.__spec__
        assert spec is not None
        _, own_spec, own_loader = spec.loader_state
        module.__spec__ = own_spec  # already executed under its own name: nothing to run
        module.__loader__ = own_loader


_finder: _AliasFinder | None = None


def real_jax_location() -> str | None:
    """Where real JAX would be imported from, or None when it is not importable."""
    if _finder is not None:
        sys.meta_path.remove(_finder)
    try:
        found = importlib.util.find_spec("jax") if "jax" not in sys.modules else sys.modules["jax"].__spec__
    except (ImportError, ValueError):
        found = None
    finally:
        if _finder is not None:
            sys.meta_path.insert(0, _finder)
    if found is None or isinstance(found.loader, _AliasFinder):
        return None
    return found.origin or "an unknown location"


def installed() -> bool:
    """Whether the ``jax`` alias is installed in this process."""
    return _finder is not None


def install() -> None:
    """Make ``import jax`` (and ``jax.*``) give minijax, in this process only.

    Raises :class:`RealJaxError` when real JAX can be imported here (or already was): minijax's alias and
    JAX must not both answer to ``jax``. Installing twice is harmless.
    """
    global _finder
    if _finder is not None:
        return
    location = real_jax_location()
    if location is not None:
        raise RealJaxError(
            f"minijax.compat.install(): real JAX is importable in this environment (from {location}); "
            "the jax alias would hide it or be hidden by it. Use an environment without jax "
            "(pip uninstall jax), or import real JAX directly."
        )
    _finder = _AliasFinder()
    sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Remove the alias and every ``jax`` module it gave from ``sys.modules`` (the minijax modules stay)."""
    global _finder
    if _finder is None:
        return
    sys.meta_path.remove(_finder)
    _finder = None
    for name in [n for n in sys.modules if n == "jax" or n.startswith("jax.")]:
        del sys.modules[name]

