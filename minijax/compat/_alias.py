"""The tables of ``minijax.compat``'s alias (what ``jax.X`` is) and the package and name stand-ins it uses."""

from __future__ import annotations

import importlib
import types
from typing import Any

import numpy as np

from minijax.compat._served.standin import stand_in_class, stand_in_function

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


packages_made: dict[str, _Package] = {}


def package(jax_name: str, target: types.ModuleType) -> _Package:
    if jax_name not in packages_made:
        packages_made[jax_name] = _Package(jax_name, target)
    return packages_made[jax_name]


def pending_name(module: str, attr: str) -> Any:
    """The stand-in for ``module.attr`` from ``PENDING_NAMES``; AttributeError for a name not there."""
    if attr in PENDING_DTYPES.get(module, ()):
        return getattr(np, "complex128" if attr == "complex_" else attr)
    feature = PENDING_NAMES.get(module, {}).get(attr)
    if feature is None:
        raise AttributeError(f"module {module!r} has no attribute {attr!r} (minijax has no {module}.{attr})")
    # A capitalised name is a class (libraries put it in isinstance checks and unions).
    make = stand_in_class if attr[:1].isupper() else stand_in_function
    return make(f"{module}.{attr}", f"{feature} is not implemented by this minijax yet")


def is_public(name: str) -> bool:
    for pattern in PUBLIC_MODULES:
        if name == pattern or (pattern.endswith(".*") and name.startswith(pattern[:-1])):
            return True
    return False
