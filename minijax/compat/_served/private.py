"""``jax._src.*``: the few private JAX names these libraries touch at import, as inert stand-ins.

JAX's ``_src`` is its implementation, which minijax does not mirror. Libraries
reach into it for a handful of things (``_PRIVATE`` below, each with the reason);
nothing else under ``jax._src`` exists. Where a name does something harmless
(``register_exclusion``, ``api_boundary``) it does that; where using it would
need JAX's implementation it raises ``CompatUnsupportedError`` naming it.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from minijax import dtypes as _dtypes, numpy as _jnp, tree_util as _tree_util
from minijax.extend import source_info_util as _source_info_util
from minijax.state import AbstractRef as _AbstractRef

# --- jax._src.traceback_util: Flax and Equinox hide their frames from tracebacks at import.
_exclude_paths: list[str] = []


def register_exclusion(path: str) -> None:
    """Leave frames from ``path`` out of the traceback summaries minijax writes into jaxprs."""
    _exclude_paths.append(path)
    _source_info_util.register_exclusion(path)


def api_boundary(fun: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """JAX filters tracebacks at its API boundary; minijax shows them whole, so this is the identity."""
    if fun is None:
        return lambda f: f
    return fun


def include_frame(frame: types.FrameType) -> bool:
    """Whether a frame is from user code (not from a path registered with ``register_exclusion``)."""
    filename = frame.f_code.co_filename
    return not any(filename.startswith(path) for path in _exclude_paths)


# --- jax._src.tree_util._registry: Flax nnx asks whether a type is a registered pytree node.
class _RegistryView:
    """Which types are pytree nodes (``type in _registry``), answered by minijax's registry."""

    def __contains__(self, typ: object) -> bool:
        return isinstance(typ, type) and _tree_util.default_registry.is_node(typ)

    def __iter__(self) -> Iterator[type]:
        return iter(())

    def __repr__(self) -> str:
        return "<minijax.compat view of the pytree registry>"


def _supports_inf(dtype: Any) -> bool:
    """Whether a floating dtype has infinities (the float8 formats without them do not)."""
    dt = np.dtype(dtype)
    return bool(np.issubdtype(dt, np.inexact)) and bool(np.isinf(_jnp.finfo(dt).max.astype(np.float64) * 2))


def _wait_for_tokens() -> None:
    """minijax has no runtime tokens: effects are done when the call returns."""



# module -> {name: value}
_PRIVATE: dict[str, dict[str, Any]] = {
    "jax._src": {},
    "jax._src.traceback_util": {
        "register_exclusion": register_exclusion, "api_boundary": api_boundary, "include_frame": include_frame,
        "_exclude_paths": _exclude_paths,
    },
    "jax._src.tree_util": {"_registry": _RegistryView()},
    "jax._src.dispatch": {"wait_for_tokens": _wait_for_tokens},
    "jax._src.dtypes": {name: getattr(_dtypes, name) for name in dir(_dtypes) if not name.startswith("_")},
    "jax._src.state": {},
    "jax._src.state.types": {"AbstractRef": _AbstractRef},  # refs (issue 24): minijax's type of a Ref
    "jax._src.interpreters": {},
    # chex.restrict_backends patches JAX's compile functions; minijax has none there, so it finds nothing to patch.
    "jax._src.compiler": {},
    # chex.set_n_cpu_devices checks that JAX made no backend yet, then sets XLA_FLAGS, which minijax's XLA
    # backend reads too when it is made. minijax's backends are not listed here: a call after the first XLA
    # operation is not detected (and has no effect), where JAX would raise.
    "jax._src.xla_bridge": {"_backends": {}},
}  # fmt: skip
_PRIVATE["jax._src.dtypes"].update(DType=np.dtype, finfo=_jnp.finfo, iinfo=_jnp.iinfo, supports_inf=_supports_inf)

# Private modules that are a public minijax module (or served one) under another name.
_ALIASES: dict[str, str] = {
    "jax._src.core": "minijax.compat._served.core",
    "jax._src.checkify": "jax.experimental.checkify",
}

_made: dict[str, types.ModuleType] = {}


def module(jax_name: str) -> types.ModuleType:
    """The stand-in module ``jax_name`` (``jax._src`` or below); ModuleNotFoundError for any other."""
    if jax_name in _ALIASES:
        return importlib.import_module(_ALIASES[jax_name])
    if jax_name not in _PRIVATE:
        raise ModuleNotFoundError(
            f"No module named {jax_name!r}: JAX's private modules are not part of minijax "
            "(minijax.compat stands in only for the few names libraries touch at import; see docs/ecosystem.md)",
            name=jax_name,
        )
    if jax_name not in _made:
        made = types.ModuleType(jax_name, f"minijax.compat's stand-in for JAX's private {jax_name}")
        # A package: jax._src.state.types lives under it.
        made.__path__ = []  # type: ignore[attr-defined]
        for name, value in _PRIVATE[jax_name].items():
            setattr(made, name, value)
        made.__getattr__ = _submodules_of(jax_name)  # type: ignore[method-assign]
        _made[jax_name] = made
    return _made[jax_name]


def _submodules_of(jax_name: str) -> Any:
    # ``jax._src.xla_bridge`` read as an attribute, never imported (JAX imports it at start-up).
    def getattr_(attr: str) -> Any:
        full = f"{jax_name}.{attr}"
        if full in _PRIVATE or full in _ALIASES:
            return importlib.import_module(full)
        raise AttributeError(f"module {jax_name!r} has no attribute {attr!r} (not part of minijax.compat's stand-ins)")

    return getattr_
