"""The `jax.tree` namespace: short names for the `tree_util` functions.

These are the same function objects as in `minijax.tree_util` (no wrappers), so
`jax.tree.map is jax.tree_util.tree_map` holds here. `all` and `map` shadow the
builtins inside this module only, as in JAX.
"""

from minijax.tree_util import tree_all as all
from minijax.tree_util import tree_broadcast as broadcast
from minijax.tree_util import tree_flatten as flatten
from minijax.tree_util import tree_flatten_with_path as flatten_with_path
from minijax.tree_util import tree_leaves as leaves
from minijax.tree_util import tree_leaves_with_path as leaves_with_path
from minijax.tree_util import tree_map as map
from minijax.tree_util import tree_map_with_path as map_with_path
from minijax.tree_util import tree_reduce as reduce
from minijax.tree_util import tree_structure as structure
from minijax.tree_util import tree_transpose as transpose
from minijax.tree_util import tree_unflatten as unflatten

__all__ = [
    "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
    "map_with_path", "reduce", "structure", "transpose", "unflatten",
]
