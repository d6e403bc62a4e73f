"""The `jax.tree` namespace: short names for the `tree_util` functions.

These are the same function objects as in `minijax.tree_util` (no wrappers), so
`jax.tree.map is jax.tree_util.tree_map` holds here. `all` and `map` shadow the
builtins inside this module only, as in JAX.
"""

import dataclasses
from typing import Any

# jnpshape (issue 21)
from minijax.tree_util import (
    tree_all as all,
    tree_broadcast as broadcast,
    tree_flatten as flatten,
    tree_flatten_with_path as flatten_with_path,
    tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path,
    tree_map as map,
    tree_map_with_path as map_with_path,
    tree_reduce as reduce,
    tree_reduce_associative as reduce_associative,
    tree_structure as structure,
    tree_transpose as transpose,
    tree_unflatten as unflatten,
)

__all__ = [
    "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
    "map_with_path", "reduce", "structure", "transpose", "unflatten",
    "reduce_associative", "static",
]


def static(**kwargs: Any) -> Any:
    """A ``dataclasses.field`` marked static (``metadata={"static": True}``), so
    ``register_dataclass`` keeps the field in the treedef rather than as a leaf."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
