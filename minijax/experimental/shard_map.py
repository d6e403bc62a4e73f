"""``jax.experimental.shard_map``: the older spelling of ``jax.shard_map`` (deprecated in JAX, kept working)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minijax.mesh import AbstractMesh, Mesh
from minijax.shard_map import shard_map as _shard_map

__all__ = ["shard_map"]


def shard_map(f: Callable[..., Any], mesh: Mesh | AbstractMesh, in_specs: Any, out_specs: Any,
              check_rep: bool = True) -> Callable[..., Any]:  # fmt: skip
    """``shard_map(f, mesh, in_specs, out_specs, check_rep=True)``: ``check_rep`` is ``jax.shard_map``'s ``check_vma``."""
    mapped: Callable[..., Any] = _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_rep)
    return mapped
