"""NumPy implementations of the collectives (spec/primitives/collectives.md).

A collective over a named axis never reaches a backend when the name is
bound: the vmap binding it rewrites the collective into array operations.
So a named axis here means an unbound name, and the implementation raises
JAX's NameError. Over positional axes (what vmap produces) psum, pmax and
pmin are plain reductions, run by the reduction implementations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax.primitives.collectives import positional_reduction, unbound_axis_error
from minijax_numpy.table import IMPLS

Array = np.ndarray[Any, Any]


def _allreduce(name: str) -> Callable[..., Array]:
    def run(x: Array, *, axes: tuple[Any, ...], axis_index_groups: Any) -> Array:
        reduction, positional = positional_reduction(name, axes)  # NameError for a named axis
        if not positional:
            return x
        return IMPLS[reduction](x, axes=positional)  # type: ignore[no-any-return]

    return run


def _named_only(name: str) -> Callable[..., Array]:
    def run(*operands: Array, axis_name: Any, **params: Any) -> Array:
        raise unbound_axis_error(name, axis_name if isinstance(axis_name, tuple) else (axis_name,))

    return run


for _name in ("psum", "pmax", "pmin"):
    IMPLS[_name] = _allreduce(_name)
for _name in ("all_gather", "reduce_scatter", "axis_index", "ppermute", "all_to_all"):
    IMPLS[_name] = _named_only(_name)
