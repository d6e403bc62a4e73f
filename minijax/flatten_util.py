"""``minijax.flatten_util``: ``ravel_pytree``, as ``jax.flatten_util`` provides it.

``ravel_pytree(tree)`` concatenates the raveled leaves into one 1-D array and
returns the function that splits such a vector back into the tree. The
vector's dtype is the promotion of the leaves' dtypes (their weak types
dropped, as JAX promotes the dtypes, not the values). When the leaves share
one dtype the unravel function keeps whatever dtype it is given (so a
tangent or a different-precision vector unravels too); when they differ it
insists on the promoted dtype and casts each piece back to its leaf's dtype.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes, lax
from minijax.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]

Shapes = tuple[tuple[int, ...], ...]


class _Unravel:
    """A partial application that compares and hashes by its contents, so two
    ravels of same-structured trees give equal unravel functions (usable as a
    static argument of ``jit`` without a retrace)."""

    def __init__(self, fun: Callable[..., Any], *args: Any) -> None:
        self.fun = fun
        self.args = args

    def __call__(self, flat: Any) -> Any:
        return self.fun(*self.args, flat)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unravel) and self.fun is other.fun and self.args == other.args

    def __hash__(self) -> int:
        return hash((self.fun, self.args))

    def __repr__(self) -> str:
        return f"<unravel function of {self.args[0] if self.args else 'a pytree'}>"


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``pytree``'s leaves raveled and concatenated into one 1-D array, and the function that undoes it.

    An empty tree ravels to a float32 array of length 0, by JAX's convention.
    """
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, _Unravel(_unravel_pytree, treedef, unravel_list)


def _unravel_pytree(treedef: PyTreeDef, unravel_list: Callable[[Any], list[Any]], flat: Any) -> Any:
    return tree_unflatten(treedef, unravel_list(flat))


def _ravel_list(leaves: Sequence[Any]) -> tuple[Any, Callable[[Any], list[Any]]]:
    if not leaves:
        return lax.full([0], 0, np.float32), _Unravel(_unravel_nothing)
    from_dtypes = tuple(dtypes.dtype(leaf, canonicalize=True) for leaf in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.size(leaf)) for leaf in leaves)
    shapes = tuple(tuple(np.shape(leaf)) for leaf in leaves)
    if all(dt == to_dtype for dt in from_dtypes):
        raveled = lax.concatenate([lax.reshape(leaf, (size,)) for leaf, size in zip(leaves, sizes)], 0)
        return raveled, _Unravel(_unravel_single_dtype, sizes, shapes)
    pieces = [lax.reshape(lax.convert_element_type(leaf, to_dtype), (size,)) for leaf, size in zip(leaves, sizes)]
    return lax.concatenate(pieces, 0), _Unravel(_unravel_mixed, sizes, shapes, from_dtypes, to_dtype)


def _unravel_nothing(flat: Any) -> list[Any]:
    return []


def _unravel_single_dtype(sizes: tuple[int, ...], shapes: Shapes, flat: Any) -> list[Any]:
    chunks = lax.split(flat, sizes)
    return [lax.reshape(chunk, shape) for chunk, shape in zip(chunks, shapes)]


def _unravel_mixed(sizes: tuple[int, ...], shapes: Shapes, from_dtypes: tuple[np.dtype[Any], ...],
                   to_dtype: np.dtype[Any], flat: Any) -> list[Any]:  # fmt: skip
    flat_dtype = dtypes.dtype(flat)
    if flat_dtype != to_dtype:
        raise TypeError(f"unravel function given array of dtype {flat_dtype}, but expected dtype {to_dtype}")
    chunks = lax.split(flat, sizes)
    return [
        lax.convert_element_type(lax.reshape(chunk, shape), dtype)
        for chunk, shape, dtype in zip(chunks, shapes, from_dtypes)
    ]
