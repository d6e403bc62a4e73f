"""``checkpoint`` (alias ``remat``): recompute on the backward pass instead of storing.

``checkpoint(f)`` stages ``f`` into a ``remat2`` equation (JAX's name). Its
rules make the saving visible in the jaxpr, as in JAX:

- linearize: the primal computation runs inline; the tangent side records a
  ``remat2`` (``differentiated=True``) of the jvp of ``f`` whose only
  residuals are ``f``'s inputs — nothing ``f`` computes is stored.
- transpose: a ``remat2`` of the transposed jvp; transposing first
  re-evaluates the non-linear equations (the recomputation), then runs the
  linear ones backwards.

Only ``policy=None`` (save nothing) is supported.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from minijax import core, tree_util
from minijax.core import Primitive, ShapedArray, get_aval, set_current_trace
from minijax.dispatch import call_primitives, eager_rules, run_compiled
from minijax.interpreters import ad, batching
from minijax.interpreters.ad import JVPTrace, Zero
from minijax.interpreters.tracing import DebugInfo, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, eval_jaxpr

remat_p = Primitive("remat2", multiple_results=True)


def _remat_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, **_: Any) -> list[ShapedArray]:
    core.typecheck_avals(jaxpr.in_avals, avals, "checkpoint")
    return jaxpr.out_avals


core.abstract_eval_rules[remat_p] = _remat_abstract_eval
eager_rules[remat_p] = lambda backend, arrays, params: run_compiled(backend, params["jaxpr"], arrays)
call_primitives.add(remat_p)


def _remat_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    closed: ClosedJaxpr = params["jaxpr"]
    nonzeros = [type(t) is not Zero for t in tangents]
    n_out = len(closed.out_avals)
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(closed, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    if not trace.linearizing:
        with set_current_trace(trace.parent):
            outs = remat_p.bind(*primals, *nz_tangents, **{**params, "jaxpr": jvp_closed, "differentiated": True})
        primal_outs, tangent_outs = outs[:n_out], iter(outs[n_out:])
    else:
        # The primal runs inline; the tangent side keeps only the inputs.
        with set_current_trace(trace.parent):
            primal_outs = eval_jaxpr(closed.jaxpr, closed.consts, *primals)
        tangent_only = ad.dce_jaxpr(jvp_closed.jaxpr, [False] * n_out + [True] * sum(out_nonzeros))
        tangent_closed = ClosedJaxpr(tangent_only, jvp_closed.consts)
        with set_current_trace(trace.tangent_side):
            tangent_outs = iter(remat_p.bind(*primals, *nz_tangents, **{**params, "jaxpr": tangent_closed, "differentiated": True}))
    return [
        trace.wrap(p, next(tangent_outs) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip(primal_outs, closed.out_avals, out_nonzeros)
    ]


def _remat_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    def bind(xs: Sequence[Any], t: ClosedJaxpr) -> Sequence[Any]:
        return remat_p.bind(*xs, **{**params, "jaxpr": t, "differentiated": True})  # type: ignore[no-any-return]

    return ad.transpose_call(jaxpr, args, cts, bind)


ad.trace_jvp_rules[remat_p] = _remat_jvp
ad.transpose_rules[remat_p] = _remat_transpose


def _remat_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(k, params[k]) for k in ("differentiated", "jaxpr", "policy", "prevent_cse")]


def _register_printing() -> None:
    from minijax.jaxpr_text import param_filters

    param_filters["remat2"] = _remat_params


_register_printing()


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
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        static = {i % n: args[i] for i in statics} if n else {}
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
        moved, consts = ad.consts_as_inputs(closed)
        outs = remat_p.bind(*consts, *flat, jaxpr=moved, prevent_cse=prevent_cse, differentiated=False, policy=None)
        return tree_util.tree_unflatten(out_tree_box[0], outs)

    return checkpointed


remat = checkpoint



def _remat_batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    batched, out_dims = batching.batch_jaxpr(params["jaxpr"], trace.axis_size, dims, axis_name=trace.axis_name)
    return remat_p.bind(*vals, **{**params, "jaxpr": batched}), out_dims


batching.axis_rules[remat_p] = _remat_batch


__all__ = ["checkpoint", "remat", "remat_p"]
