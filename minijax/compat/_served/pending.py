"""Stand-ins for public JAX modules minijax does not have yet (``minijax.compat.PENDING_MODULES``).

Once minijax has the module (``minijax.sharding``, ``minijax.experimental.checkify``, ...), the alias
gives that module instead; until then every name a library imports from it is here, and raises
``CompatUnsupportedError`` naming the feature when it is used.
"""

from __future__ import annotations

import types
from typing import Any

from minijax.compat._served.standin import stand_in_class, stand_in_function
from minijax.interpreters.ad import Zero, instantiate_zeros, is_undefined_primal

# The names libraries import from each pending module: classes (isinstance works) and functions.
_CLASSES: dict[str, tuple[str, ...]] = {
    "jax.sharding": ("Mesh", "AbstractMesh", "NamedSharding", "PartitionSpec", "Sharding", "SingleDeviceSharding",
                     "PositionalSharding", "AxisType"),
    "jax.experimental.checkify": ("JaxException", "Error", "FailedCheckError", "NaNError", "OOBError", "DivisionByZeroError"),
    "jax.experimental.layout": ("Format", "Layout", "DeviceLocalLayout"),
    "jax.experimental.shard_map": (),
    "jax.experimental.pjit": (),
    "jax.experimental.mesh_utils": (),
    "jax.experimental.multihost_utils": (),
}  # fmt: skip
_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "jax.sharding": ("get_abstract_mesh", "use_mesh", "set_mesh", "reshard"),
    "jax.experimental.checkify": ("checkify", "check", "check_error", "debug_check"),
    "jax.experimental.layout": (),
    "jax.experimental.shard_map": ("shard_map",),
    "jax.experimental.pjit": ("pjit",),
    "jax.experimental.mesh_utils": ("create_device_mesh", "create_hybrid_device_mesh"),
    "jax.experimental.multihost_utils": ("sync_global_devices", "process_allgather", "broadcast_one_to_all",
                                         "host_local_array_to_global_array", "global_array_to_host_local_array"),
}  # fmt: skip
# Error sets of checkify, which libraries read at import (frozensets of error classes).
_CHECKIFY_SETS = ("user_checks", "nan_checks", "index_checks", "div_checks", "float_checks", "automatic_checks", "all_checks")

_made: dict[str, types.ModuleType] = {}


class _HiPrimitive:
    """``jax.experimental.hijax.HiPrimitive``: subclassed and instantiated at import by Flax nnx; binding raises."""

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.name = name

    def bind(self, *args: Any, **params: Any) -> Any:
        raise stand_in_function("jax.experimental.hijax.HiPrimitive.bind", _HIJAX_WHY)()


class _EffectTypes(set[type]):
    def add_type(self, effect_type: type) -> None:
        self.add(effect_type)


_HIJAX_WHY = "jax.experimental.hijax (JAX's higher-level types) has no counterpart in minijax"


def _hijax(made: types.ModuleType) -> None:
    # Flax nnx builds its "hijax variables" on these at import; they are used only when that mode is on.
    made.HiPrimitive = _HiPrimitive  # type: ignore[attr-defined]
    for name in ("AbstractValue", "AvalQDD", "AvalMutableQDD", "MutableHiType", "HiType"):
        setattr(made, name, type(name, (), {"__module__": "jax.experimental.hijax", "__doc__": _HIJAX_WHY}))
    made.Zero, made.instantiate_zeros, made.is_undefined_primal = Zero, instantiate_zeros, is_undefined_primal  # type: ignore[attr-defined]
    made.aval_method = lambda f: f  # type: ignore[attr-defined]
    made.aval_property = property  # type: ignore[attr-defined]
    made.control_flow_allowed_effects = _EffectTypes()  # type: ignore[attr-defined]
    made.register_hitype = lambda cls, to_aval: None  # type: ignore[attr-defined]


def module(jax_name: str, feature: str) -> types.ModuleType:
    """The stand-in module for ``jax_name`` (one per process)."""
    if jax_name not in _made:
        why = f"{feature} is not implemented by this minijax yet"
        made = types.ModuleType(jax_name, f"minijax.compat's stand-in for {jax_name}: {why}.")
        for name in _CLASSES.get(jax_name, ()):
            setattr(made, name, stand_in_class(f"{jax_name}.{name}", why))
        for name in _FUNCTIONS.get(jax_name, ()):
            setattr(made, name, stand_in_function(f"{jax_name}.{name}", why))
        if jax_name == "jax.experimental.checkify":
            for name in _CHECKIFY_SETS:
                setattr(made, name, frozenset())
            # (JAX's alias for the type of an error class)
            made.ErrorCategory = type  # type: ignore[attr-defined]
        if jax_name == "jax.experimental.hijax":
            _hijax(made)
        made.__getattr__ = _missing(jax_name, why)  # type: ignore[method-assign]
        _made[jax_name] = made
    return _made[jax_name]


def _missing(jax_name: str, why: str) -> Any:
    def getattr_(name: str) -> Any:
        raise AttributeError(f"module {jax_name!r} has no attribute {name!r} ({why})")

    return getattr_
