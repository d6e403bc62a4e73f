"""The module ``jax`` under the alias: minijax's public names, JAX's version, JAX's submodules.

It is a module of its own (not ``minijax``) so that ``jax.__version__`` is
the JAX version libraries check, and so that ``jax.core`` or
``jax.interpreters`` are the served extension points, not minijax's own
modules of those names.
"""

from __future__ import annotations

import importlib
import types
from typing import Any

import minijax
from minijax.compat import _alias as compat
from minijax.compat._served import version


def _public(name: str, value: Any) -> bool:
    if name.startswith("_"):
        return False
    if isinstance(value, types.ModuleType):  # only the modules JAX has under that name
        return compat.is_public(name) and value.__name__ == f"minijax.{name}"
    return True


class _JaxModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        # A submodule not imported yet (``jax.core`` after a bare ``import jax``), or a public name minijax
        # gained after the alias was installed.
        if not name.startswith("__"):
            if name in compat.SERVED_MODULES or name in compat.PENDING_MODULES:
                return importlib.import_module(f"jax.{name}")
            value = getattr(minijax, name, None)
            if value is not None and _public(name, value):
                return importlib.import_module(f"jax.{name}") if hasattr(value, "__path__") else value
            if compat.is_public(name):
                try:
                    return importlib.import_module(f"jax.{name}")
                except ModuleNotFoundError:
                    pass
        return compat.pending_name("jax", name)


_module: _JaxModule | None = None


def module() -> _JaxModule:
    """The ``jax`` module (one per process)."""
    global _module
    if _module is None:
        made = _JaxModule("jax", minijax.__doc__)
        for name, value in vars(minijax).items():
            # (A package is given by __getattr__ as the alias's package, imported once ``jax`` exists.)
            if _public(name, value) and not hasattr(value, "__path__"):
                setattr(made, name, value)
        made.__version__ = version.__version__  # type: ignore[attr-defined]
        made.__version_info__ = version.__version_info__  # type: ignore[attr-defined]
        made.__path__ = []  # a package: its submodules come from the alias's finder
        _module = made
    return _module
