"""Collectives over a named mapped axis: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``psum_scatter``, ``axis_index``, ``axis_size``, as in ``jax.lax``.

Inside ``vmap(f, axis_name="i")`` these combine ``f``'s per-member values
across the members of axis ``"i"`` (``spec/primitives/collectives.md``).
Each takes a pytree of arrays and works leaf by leaf. ``axis_name`` is one
name or a tuple of names (several nested vmaps at once); for psum, pmax and
pmin ints in it are positional axes of the operand, reduced as well.
A name no enclosing vmap binds raises ``NameError: unbound axis name``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minijax import core, tree_util
from minijax.core import Tracer, get_aval
from minijax.interpreters.batching import axis_size as _bound_size
from minijax.lax.elementwise import add, convert_element_type, ge, select_n
from minijax.lax.reductions import reduce_sum
from minijax.lax.structural import (
    broadcast_in_dim,
    expand_dims,
    full,
    squeeze,
)
from minijax.primitives.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    axis_tuple,
    check_bound,
    is_positional,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
    reduce_scatter_p,
    scalar_like,
)


def _no_groups(api: str, axis_index_groups: Any) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(
            f"{api}: axis_index_groups is not supported by minijax (vmap collectives reduce over "
            "the whole axis, as JAX's do); pass axis_index_groups=None."
        )


def _leaves(api: str, x: Any) -> tuple[list[Any], tree_util.PyTreeDef]:
    leaves, tree = tree_util.tree_flatten(x)
    for leaf in leaves:
        if not core.is_array_like(leaf):
            raise TypeError(f"{api}: every leaf must be an array or a scalar, got a value of type {type(leaf).__name__}.")
    return leaves, tree


def _canonical_axis(axis: Any, ndim: int) -> int:
    i = int(axis)
    if not -ndim <= i < ndim:
        raise ValueError(f"axis {i} is out of bounds for array of dimension {ndim}")
    return i % ndim


# ---------------------------------------------------------------------------
# All-reduce


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of ``x`` over the members of axis ``axis_name`` (booleans are summed as int32)."""
    axes = axis_tuple(axis_name)
    if not axes:
        return x
    _no_groups("psum", axis_index_groups)
    leaves, tree = _leaves("psum", x)
    leaves = [convert_element_type(v, np.int32) if get_aval(v).dtype == np.bool_ else v for v in leaves]
    named = [a for a in axes if not is_positional(a)]
    positional = [a for a in axes if is_positional(a)]
    if not any(isinstance(v, Tracer) for v in leaves):
        # Known values are the same on every member: the sum is size * x,
        # computed now (this is also how axis_size = psum(1, name) is found).
        size = math.prod(_bound_size(n) for n in named)

        def constant(v: Any) -> Any:
            if positional:
                v = reduce_sum(v, [_canonical_axis(a, np.ndim(v)) for a in positional])
            return scalar_like(v, size) * v

        return tree_util.tree_unflatten(tree, [constant(v) for v in leaves])
    check_bound(axes, "psum")

    def bind(v: Any) -> Any:
        psum_p.abstract_eval(get_aval(v), axes=axes, axis_index_groups=None)  # the user's shapes, checked
        return psum_p.bind(v, axes=axes, axis_index_groups=None)

    return tree_util.tree_unflatten(tree, [bind(v) for v in leaves])


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of ``x`` over the members of axis ``axis_name``: ``psum(x) / axis size``."""
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    n = axis_size(axis_name)
    return tree_util.tree_map(lambda v: v / n, total)


def _extremum(api: str, prim: Any, x: Any, axis_name: Any, axis_index_groups: Any) -> Any:
    axes = axis_tuple(axis_name)
    _no_groups(api, axis_index_groups)
    check_bound(axes, api)
    leaves, tree = _leaves(api, x)

    def bind(v: Any) -> Any:
        prim.abstract_eval(get_aval(v), axes=axes, axis_index_groups=None)
        return prim.bind(v, axes=axes, axis_index_groups=None)

    return tree_util.tree_unflatten(tree, [bind(v) for v in leaves])


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The maximum of ``x`` over the members of axis ``axis_name`` (not differentiable, as in JAX)."""
    return _extremum("pmax", pmax_p, x, axis_name, axis_index_groups)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The minimum of ``x`` over the members of axis ``axis_name`` (not differentiable, as in JAX)."""
    return _extremum("pmin", pmin_p, x, axis_name, axis_index_groups)


# ---------------------------------------------------------------------------
# Gather and scatter


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0, tiled: bool = False, to: str = "varying") -> Any:
    """Every member's ``x``, stacked along a new axis ``axis`` (or, ``tiled``, concatenated along ``axis``)."""
    if to not in ("varying", "reduced", "invarying"):
        raise ValueError(
            "Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values are: "
            "{'varying', 'reduced', 'invarying'}"
        )
    if to != "varying":
        raise NotImplementedError(f"all_gather(to={to!r}) is about sharded types, which minijax does not have; use to='varying'.")
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not names:
        return x
    _no_groups("all_gather", axis_index_groups)
    size = axis_size(names)
    leaves, tree = _leaves("all_gather", x)

    def bind(v: Any) -> Any:
        ndim = np.ndim(v) if not hasattr(v, "aval") else get_aval(v).ndim
        params = dict(
            all_gather_dimension=_canonical_axis(axis, ndim if tiled else ndim + 1),
            axis_name=names,
            axis_index_groups=None,
            axis_size=size,
            tiled=bool(tiled),
        )
        all_gather_p.abstract_eval(get_aval(v), **params)
        return all_gather_p.bind(v, **params)

    return tree_util.tree_unflatten(tree, [bind(v) for v in leaves])


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0, axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """``psum(x)`` left scattered: member k keeps chunk k of the sum along ``scatter_dimension``.

    Untiled, that dimension's size must equal the axis size and is removed;
    tiled, it must be a multiple of it and shrinks by that factor.
    """
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not names:
        return x
    _no_groups("psum_scatter", axis_index_groups)
    size = axis_size(names)
    leaves, tree = _leaves("psum_scatter", x)

    def bind(v: Any) -> Any:
        aval = get_aval(v)
        params = dict(
            scatter_dimension=_canonical_axis(scatter_dimension, aval.ndim),
            axis_name=names,
            axis_index_groups=None,
            axis_size=size,
            tiled=bool(tiled),
        )
        reduce_scatter_p.abstract_eval(aval, **params)
        return reduce_scatter_p.bind(v, **params)

    return tree_util.tree_unflatten(tree, [bind(v) for v in leaves])


# ---------------------------------------------------------------------------
# Permutations (sharding, issue 17). Written over all_gather and axis_index:
# each member gathers every member's value and keeps the part it receives. The
# values, and through all_gather's rules the derivatives and batching, are
# JAX's; the jaxpr shows the gather instead of a ppermute/all_to_all primitive.


def ppermute(x: Any, axis_name: Any, perm: Any) -> Any:
    """Member ``dst`` receives member ``src``'s ``x`` for each ``(src, dst)`` in ``perm``; others receive zeros."""
    pairs = tuple((int(src), int(dst)) for src, dst in perm)
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {pairs}.")
    size = axis_size(axis_name)
    for src, dst in pairs:
        if not (0 <= src < size and 0 <= dst < size):
            raise ValueError(
                f"ppermute: the pair {(src, dst)} of perm names a member outside axis {axis_name!r} of size {size}; "
                f"indices must be in [0, {size})."
            )
    leaves, tree = _leaves("ppermute", x)
    return tree_util.tree_unflatten(tree, [ppermute_p.bind(v, axis_name=axis_tuple(axis_name), perm=pairs) for v in leaves])


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *, axis_index_groups: Any = None,
               tiled: bool = False) -> Any:  # fmt: skip
    """Member ``i`` receives chunk ``i`` (along ``split_axis``) of every member's ``x``, joined along
    ``concat_axis`` in member order: concatenated when ``tiled``, else stacked as a new axis there
    (untiled, ``x.shape[split_axis]`` must equal the axis size and that axis is removed)."""
    _no_groups("all_to_all", axis_index_groups)
    size = axis_size(axis_name)
    leaves, tree = _leaves("all_to_all", x)

    def exchange(v: Any) -> Any:
        shape = get_aval(v).shape
        split = _canonical_axis(split_axis, len(shape))
        concat = _canonical_axis(concat_axis, len(shape))
        if tiled:
            if shape[split] % size:
                raise ValueError(f"The size of all_to_all split_axis ({shape[split]}) has to be divisible by the size "
                                 f"of the named axis {axis_name} ({size})")  # fmt: skip
        else:
            if shape[split] != size:
                raise ValueError(
                    f"all_to_all requires the size of the mapped axis axis_name to equal x.shape[split_axis], "
                    f"but they are {size} and {shape[split]} respectively."
                )
            # Untiled: the members' chunks are stacked along a new axis at concat_axis (counted
            # after the split axis is gone), and the split axis, left of size 1, is dropped.
            if split < concat:
                concat += 1
                v = expand_dims(v, (concat,))
            elif concat < split:
                v = expand_dims(v, (concat,))
                split += 1
        out = all_to_all_p.bind(v, axis_name=axis_name, split_axis=split, concat_axis=concat,
                                axis_index_groups=None, tiled=tiled)  # fmt: skip
        if not tiled and split != concat:
            out = squeeze(out, (split,))
        return out

    return tree_util.tree_unflatten(tree, [exchange(v) for v in leaves])


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """Change how ``x`` varies over the named axes, keeping its value. ``to='varying'``: ``x``
    becomes a per-member value (so shard_map's ``check_vma`` no longer sees it as replicated).
    minijax tracks variation as batching, so the value is made to depend on the axis
    (a select on the member's index that picks ``x`` either way)."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not axis_name:
        return x
    if to not in ("varying", "unreduced", "reduced"):
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: {'unreduced', 'reduced', 'varying'}")
    if to != "varying":
        raise NotImplementedError(f"pcast(to={to!r}): unreduced and reduced values are not supported by minijax yet.")
    check_bound(names, "pcast")
    leaves, tree = _leaves("pcast", x)
    # Always false, but computed from every named axis: the result depends on each of them.
    never = ge(full((), -1, np.int32), add(axis_index(names), 0))

    def vary(v: Any) -> Any:
        return select_n(broadcast_in_dim(never, get_aval(v).shape, ()), v, v)

    return tree_util.tree_unflatten(tree, [vary(v) for v in leaves])


# ---------------------------------------------------------------------------
# Where am I


def axis_index(axis_name: Any) -> Any:
    """This member's index along axis ``axis_name`` (int32). For a tuple of names,
    the index into the flattened axes, the last name varying fastest."""
    if not isinstance(axis_name, (tuple, list)):
        check_bound([axis_name], "axis_index")
        return axis_index_p.bind(axis_name=axis_name)
    inner_size = 1
    index: Any = full((), 0, np.int32)
    for name in reversed(axis_name):
        index = add(index, axis_index(name) * inner_size)
        inner_size *= axis_size(name)
    return index


def axis_size(axis_name: Any) -> int:
    """The number of members of axis ``axis_name`` (the product, for a tuple of names)."""
    return int(psum(1, axis_name))


__all__ = [
    "all_gather",
    "all_gather_p",
    "all_to_all",
    "axis_index",
    "axis_index_p",
    "axis_size",
    "pmax",
    "pmax_p",
    "pmean",
    "pmin",
    "pmin_p",
    "pcast",
    "ppermute",
    "psum",
    "psum_p",
    "psum_scatter",
    "reduce_scatter_p",
]
