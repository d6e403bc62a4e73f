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

from minijax.compat._alias import (
    JAX_VERSION as JAX_VERSION,
    JAX_VERSION_INFO as JAX_VERSION_INFO,
    PENDING_MODULES as PENDING_MODULES,
    PENDING_NAMES as PENDING_NAMES,
    PUBLIC_MODULES as PUBLIC_MODULES,
    SERVED_MODULES as SERVED_MODULES,
    SERVED_PACKAGES as SERVED_PACKAGES,
    is_public,
    package,
)
from minijax.compat._served import jax_module, pending, private

__all__ = ["JAX_VERSION", "JAX_VERSION_INFO", "PUBLIC_MODULES", "RealJaxError", "install", "installed", "uninstall"]

class RealJaxError(RuntimeError):
    """Real JAX is importable in this environment, so the ``jax`` alias is refused."""




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
        return jax_module.module()
    name = jax_name.removeprefix("jax.")
    head = name.split(".")[0]
    if name in SERVED_MODULES:
        served = importlib.import_module(f"minijax.compat._served.{SERVED_MODULES[name]}")
        return package(jax_name, served) if name in SERVED_PACKAGES else served
    if head == "_src":
        return private.module(jax_name)
    if is_public(name):
        found = _minijax_module(name)
        if found is not None:
            return package(jax_name, found) if hasattr(found, "__path__") else found
        if name in PENDING_MODULES:
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

