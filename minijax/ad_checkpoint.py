"""``checkpoint`` (alias ``remat``): recompute on the backward pass instead of storing.

``checkpoint(f)`` stages ``f`` into a ``remat2`` equation (JAX's name; the
primitive and its rules are in minijax/primitives/calls.py). Its rules make
the saving visible in the jaxpr, as in JAX: under linearize the tangent side
records a ``remat2`` of the jvp of ``f`` whose only residuals are ``f``'s
inputs, and its transpose re-evaluates the primal equations first.

Only ``policy=None`` (save nothing) is supported.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from minijax import tree_util
from minijax.core import get_aval
from minijax.interpreters.tracing import DebugInfo, trace_to_jaxpr
from minijax.jaxpr_passes import consts_as_inputs
from minijax.primitives.calls import remat_p

__all__ = ["checkpoint", "remat"]


def checkpoint(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool = True,
    policy: Callable[..., bool] | None = None,
    static_argnums: int | tuple[int, ...] = (),
) -> Callable[..., Any]:
    """``fun`` whose intermediate values are recomputed, not stored, for its derivative."""
    if policy is not None:
        raise NotImplementedError(
            "checkpoint(policy=...) is not supported by minijax: only policy=None "
            "(save nothing, recompute everything) is implemented."
        )
    statics = (operator.index(static_argnums),) if isinstance(static_argnums, int) else tuple(operator.index(i) for i in static_argnums)

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        if not all(-n <= i < n for i in statics):
            raise ValueError(
                "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take integer values "
                f"greater than or equal to `-len(args)` and less than `len(args)`, but got {statics}, while "
                f"`len(args)` = {n}. Pass the static arguments positionally, or drop the numbers past them."
            )
        static = {i % n: args[i] for i in statics}
        dyn_args = [a for i, a in enumerate(args) if i not in static]
        flat, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
        out_tree_box: list[tree_util.PyTreeDef] = []

        def flat_fun(*xs: Any) -> list[Any]:
            d_args, d_kwargs = tree_util.tree_unflatten(in_tree, xs)
            it = iter(d_args)
            full = [static[i] if i in static else next(it) for i in range(n)]
            leaves, tree = tree_util.tree_flatten(fun(*full, **d_kwargs))
            out_tree_box.append(tree)
            return leaves

        closed, _ = trace_to_jaxpr(flat_fun, [get_aval(x) for x in flat], DebugInfo(fun, [], "checkpoint"))
        moved, consts = consts_as_inputs(closed)
        outs = remat_p.bind(*consts, *flat, jaxpr=moved, prevent_cse=prevent_cse, differentiated=False, policy=None)
        return tree_util.tree_unflatten(out_tree_box[0], outs)

    return checkpointed


remat = checkpoint
