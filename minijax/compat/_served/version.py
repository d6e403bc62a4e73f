"""``jax.version``: the JAX version ``minijax.compat`` reports, and the jaxlib it runs beside."""

from __future__ import annotations

from minijax.compat._alias import JAX_VERSION, JAX_VERSION_INFO

__version__ = JAX_VERSION
__version_info__ = JAX_VERSION_INFO
_version = JAX_VERSION
# minijax's XLA backend uses jaxlib; JAX's "minimum jaxlib" is the version it follows.
_minimum_jaxlib_version = JAX_VERSION
_minimum_jaxlib_version_info = JAX_VERSION_INFO


def _version_as_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3])
