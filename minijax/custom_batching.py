"""``jax.custom_batching``: functions with a user-given vmap rule.

``custom_vmap(f)`` then ``f.def_vmap(rule)``: under ``vmap`` the call runs
``rule(axis_size, in_batched, *args)`` (batched arguments with the batch axis
moved to the front, ``in_batched`` a list of pytrees of bools, one per
argument) instead of batching ``f``; the rule returns ``(out, out_batched)``
where ``out_batched`` has ``out``'s structure and says which outputs carry the
batch axis at the front. Outside vmap ``f`` itself runs.

minijax applies the rule when the innermost vmap whose tracers reach the call
is current (``vmap(f)``, ``jit(vmap(f))``, ``grad(vmap(f))`` -- the rule is
differentiated). It has no ``custom_vmap`` primitive: a custom_vmap function
staged by ``jit`` (or differentiated by ``jvp``/``grad`` inside the vmap) is
inlined as ``f``'s body, so ``vmap(jit(f))`` batches ``f``'s equations rather
than calling the rule. JAX keeps the rule in a ``custom_vmap_call`` equation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from minijax import core, tree_util
from minijax.api import ShapeDtypeStruct, eval_shape
from minijax.custom_derivatives import _resolve_args, as_arrays
from minijax.interpreters import batching
from minijax.interpreters.batching import BatchTrace, BatchTracer
from minijax.interpreters.tracing import fun_name
from minijax.lax.control_flow.scan import map as lax_map

__all__ = ["custom_vmap", "sequential_vmap"]


def _rule_name(rule: Any) -> str:
    return getattr(rule, "__name__", "<unnamed rule>")


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
        flat, in_tree = tree_util.tree_flatten(args)
        trace = core.current_trace()
        # Skip vmaps none of whose tracers reach the call: the rule belongs to
        # the innermost vmap that batches an argument.
        while isinstance(trace, BatchTrace) and not any(isinstance(x, BatchTracer) and x._trace is trace for x in flat):
            trace = trace.parent
        if not isinstance(trace, BatchTrace):
            with core.set_current_trace(trace):
                out = self.fun(*args)
            leaves, tree = tree_util.tree_flatten(out)
            return tree_util.tree_unflatten(tree, as_arrays(leaves))
        return self._apply_rule(trace, flat, in_tree)

    def _apply_rule(self, trace: BatchTrace, flat: list[Any], in_tree: tree_util.PyTreeDef) -> Any:
        rule = self.vmap_rule
        assert rule is not None
        vals, dims = zip(*(trace.to_val_dim(x) for x in flat))
        with core.set_current_trace(trace.parent):
            out_tree = tree_util.tree_structure(
                _eval_shape_tree(self.fun, tree_util.tree_unflatten(in_tree, [_unbatched_aval(trace, x) for x in flat]))
            )
            front = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
            args = tree_util.tree_unflatten(in_tree, front)
            in_batched = tree_util.tree_unflatten(in_tree, [d is not None for d in dims])
            out, out_batched = rule(trace.axis_size, list(in_batched), *args)
        flat_out, tree1 = tree_util.tree_flatten(out)
        flat_batched, tree2 = tree_util.tree_flatten(out_batched)
        if tree1 != tree2:
            raise ValueError(
                "structure of output value and output batching specification returned "
                f"by custom vmap rule ({_rule_name(rule)}) do not match.\n"
                f"Output values: {tree1}\n"
                f"Batching spec: {tree2}"
            )
        if tree1 != out_tree:
            raise ValueError(
                f"structure of output returned by custom vmap rule ({_rule_name(rule)}) "
                "does not match that of original custom-vmapped function.\n"
                f"Original output: {out_tree}\n"
                f"Rule output: {tree1}"
            )
        outs = [trace.wrap(v, 0 if b else None) for v, b in zip(flat_out, flat_batched)]
        return tree_util.tree_unflatten(out_tree, outs)


def _unbatched_aval(trace: BatchTrace, x: Any) -> Any:
    """The per-example abstract value of ``x`` (what ``f`` sees under vmap)."""
    return core.ShapedArray(x.aval.shape, x.aval.dtype, x.aval.weak_type) if isinstance(x, BatchTracer) and x._trace is trace else x


def _eval_shape_tree(fun: Callable[..., Any], args: Any) -> Any:
    leaves, tree = tree_util.tree_flatten(args)
    specs = [_as_spec(x) for x in leaves]
    return eval_shape(lambda *xs: fun(*tree_util.tree_unflatten(tree, xs)), *specs)


def _as_spec(x: Any) -> Any:
    if isinstance(x, core.ShapedArray):
        return ShapeDtypeStruct(x.shape, x.dtype, weak_type=x.weak_type)
    return x


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
