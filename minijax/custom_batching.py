"""``jax.custom_batching``: functions with a user-given vmap rule.

``custom_vmap(f)`` then ``f.def_vmap(rule)``: under ``vmap`` the call runs
``rule(axis_size, in_batched, *args)`` (batched arguments with the batch axis
moved to the front, ``in_batched`` a list of pytrees of bools, one per
argument) instead of batching ``f``; the rule returns ``(out, out_batched)``
where ``out_batched`` has ``out``'s structure and says which outputs carry the
batch axis at the front. Outside vmap ``f`` itself runs.

Under any transformation the call is one ``custom_vmap_call`` equation
(``minijax/primitives/calls.py``) holding ``f``'s jaxpr and the rule, as in
JAX: the innermost vmap whose tracers reach it calls the rule, also when the
equation sits inside a ``jit``'s jaxpr (``vmap(jit(f))``). Differentiating it
differentiates ``f``'s body; the rule is not differentiated (JAX refuses
reverse mode through a custom_vmap call).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from minijax import core, tree_util
from minijax.custom_derivatives import _resolve_args, as_arrays
from minijax.interpreters.tracing import fun_name
from minijax.lax.control_flow.scan import map as lax_map
from minijax.primitives.calls import VmapRule, _trace_flat, custom_vmap_call_p

__all__ = ["custom_vmap", "sequential_vmap"]


class custom_vmap:  # noqa: N801  (JAX's name)
    """A function with a user-given vmap rule (``@custom_vmap`` then ``@f.def_vmap``)."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., tuple[Any, Any]] | None = None

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = fun_name(self.fun)
        try:
            args = _resolve_args(self.fun, args, kwargs, "custom_vmap")
        except TypeError as e:
            raise TypeError(
                "The input arguments to the custom_vmap-decorated function "
                f"{name} could not be resolved to positional-only "
                f"arguments. Binding failed with the error:\n{e}"
            ) from e
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        if core.current_trace() is core.eval_trace:  # nothing to batch or stage: the function itself
            out = self.fun(*args)
            leaves, tree = tree_util.tree_flatten(out)
            return tree_util.tree_unflatten(tree, as_arrays(leaves))
        # Staged (or batched, or differentiated) as one custom_vmap_call equation that keeps the rule.
        flat, in_tree = tree_util.tree_flatten(args)
        out_trees: list[tree_util.PyTreeDef] = []

        def flat_fun(*xs: Any) -> list[Any]:
            out = self.fun(*tree_util.tree_unflatten(in_tree, list(xs)))
            leaves, tree = tree_util.tree_flatten(out)
            out_trees.append(tree)
            return as_arrays(leaves)

        closed, consts = _trace_flat(flat_fun, flat, "custom_vmap")
        outs = custom_vmap_call_p.bind(
            *consts, *flat, call=closed, num_consts=len(consts), in_tree=tree_util.tree_structure(([], tuple(args))),
            out_tree=out_trees[0], rule=VmapRule(self.vmap_rule),
        )
        return tree_util.tree_unflatten(out_trees[0], outs)


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` whose vmap runs it on one example at a time (``lax.map``), unbatched arguments shared."""
    fv = custom_vmap(f)

    @fv.def_vmap
    def rule(axis_size: int, in_batched: list[Any], *args: Any) -> tuple[Any, Any]:
        del axis_size
        flags, tree = tree_util.tree_flatten(in_batched)
        leaves = tree_util.tree_leaves(list(args))
        mapped = [x for x, b in zip(leaves, flags) if b]
        shared = [x for x, b in zip(leaves, flags) if not b]

        def one(xs: list[Any]) -> Any:
            it_m, it_s = iter(xs), iter(shared)
            merged = [next(it_m) if b else next(it_s) for b in flags]
            return f(*tree_util.tree_unflatten(tree, merged))

        out = lax_map(one, mapped)
        return out, tree_util.tree_map(lambda _: True, out)

    return fv
