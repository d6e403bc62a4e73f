"""``checkpoint`` (alias ``remat``): recompute on the backward pass instead of storing.

``checkpoint(f)`` stages ``f`` into a ``remat2`` equation (JAX's name; the
primitive and its rules are in minijax/primitives/calls.py). Its rules make
the saving visible in the jaxpr, as in JAX: under linearize the tangent side
records a ``remat2`` of the jvp of ``f`` whose only residuals are ``f``'s
inputs, and its transpose re-evaluates the primal equations first.

A ``policy`` (one of ``checkpoint_policies``) decides, equation by equation
of the primal computation (primitive, operand avals, params), which values
may be saved; the others are recomputed on the tangent side
(minijax/primitives/calls.py, ``_remat_linearize``). ``checkpoint_name``
binds the ``name`` primitive, which the name-based policies look for.
``print_saved_residuals`` lists what ``vjp`` would save, in JAX's words.

As in JAX, a checkpointed function's trace is cached on the function
(weakly), its argument structure and types and its static arguments: a
second ``checkpoint(f)`` of the same ``f`` reuses the first trace.

Offloading policies (``offload_dot_with_no_batch_dims``,
``save_and_offload_only_these_names``): JAX moves the offloaded values to
host memory. On the CPU, minijax's only platform, device and host memory are
one, so an offloaded value is simply saved -- the residuals are the same.
"""

from __future__ import annotations

import functools
import operator
import types
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from minijax import caching, source_info, tree_util
from minijax.api import make_jaxpr
from minijax.autodiff import vjp
from minijax.core import Primitive, ShapedArray, Tracer, get_aval
from minijax.interpreters.tracing import DebugInfo, arg_names_of, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from minijax.jaxpr_passes import consts_as_inputs
from minijax.primitives.autodiff import name_p
from minijax.primitives.calls import Offloadable, Recompute, Saveable, remat_p

__all__ = [
    "Offloadable",
    "Recompute",
    "Saveable",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
    "saved_residuals",
]


# ---------------------------------------------------------------------------
# Policies: (primitive, *operand avals, **params) -> may its outputs be saved?


def everything_saveable(*_: Any, **__: Any) -> bool:
    """Save every value, as without ``checkpoint``."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Save nothing: recompute everything (``checkpoint``'s default)."""
    return False


def _no_batch_dims(params: dict[str, Any]) -> bool:
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


@dataclass(frozen=True)
class DotsSaveable:
    only_if_no_batch_dims: bool

    def __call__(self, prim: Primitive, *_: Any, **params: Any) -> bool:
        if self.only_if_no_batch_dims:
            return prim.name == "dot_general" and _no_batch_dims(params)
        return prim.name in ("dot_general", "conv_general_dilated")


dots_saveable = checkpoint_dots = DotsSaveable(False)
dots_with_no_batch_dims_saveable = checkpoint_dots_with_no_batch_dims = DotsSaveable(True)


def offload_dot_with_no_batch_dims(offload_src: str, offload_dst: str) -> Callable[..., Any]:
    """``dots_with_no_batch_dims_saveable``, the saved values offloaded to ``offload_dst``."""

    def policy(prim: Primitive, *_: Any, **params: Any) -> Any:
        if prim.name == "dot_general" and _no_batch_dims(params):
            return Offloadable(offload_src, offload_dst)
        return Recompute

    return policy


def save_anything_except_these_names(*names_not_to_save: str) -> Callable[..., bool]:
    """Save any value except the named ones given (JAX's own answers True for every value too)."""
    return everything_saveable


# Named as JAX names them: a jaxpr prints the policy's repr (policy=SaveOnlyTheseNames(...)).
@dataclass(frozen=True)
class SaveOnlyTheseNames:
    saveable_names: frozenset[Hashable]

    def __call__(self, prim: Primitive, *_: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in self.saveable_names


@dataclass(frozen=True)
class SaveAnyNamesButThese:
    names: frozenset[Hashable]

    def __call__(self, prim: Primitive, *_: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in self.names


def save_any_names_but_these(*names_not_to_save: Hashable) -> Callable[..., bool]:
    """Save only values named with ``checkpoint_name``, except the names given."""
    return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_only_these_names(*names_which_can_be_saved: Hashable) -> Callable[..., bool]:
    """Save only the values named with ``checkpoint_name`` with one of the names given."""
    return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_and_offload_only_these_names(
    *, names_which_can_be_saved: Any, names_which_can_be_offloaded: Any, offload_src: str, offload_dst: str
) -> Callable[..., Any]:
    """``save_only_these_names``, with the second list of names offloaded to ``offload_dst``."""
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    both = saved & offloaded
    if both:
        raise ValueError(
            "The names should be exclusive and should not intersect in `names_which_can_be_saved` and "
            f"`names_which_can_be_offloaded`. Got names_which_can_be_saved={saved}, "
            f"names_which_can_be_offloaded={offloaded} and the intersection={both}"
        )

    def policy(prim: Primitive, *_: Any, **params: Any) -> Any:
        if prim is name_p and params["name"] in saved:
            return Saveable
        if prim is name_p and params["name"] in offloaded:
            return Offloadable(offload_src, offload_dst)
        return Recompute

    return policy


def save_from_both_policies(policy_1: Callable[..., Any], policy_2: Callable[..., Any]) -> Callable[..., bool]:
    """A value is saveable when either policy says so."""

    def policy(prim: Primitive, *args: Any, **params: Any) -> bool:
        out1, out2 = policy_1(prim, *args, **params), policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                f"The return value of the policies should be a boolean. Got: {out1} and {out2}. Please write a "
                "custom policy function directly, rather than using this helper function."
            )
        return out1 or out2

    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
)


def checkpoint_name(x: Any, name: Hashable) -> Any:
    """``x`` unchanged, each leaf tagged with ``name`` for the name-based policies."""
    return tree_util.tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


# ---------------------------------------------------------------------------
# print_saved_residuals


def saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> list[tuple[ShapedArray, str]]:
    """What ``vjp(f, *args)`` saves for the backward pass: (aval, where it comes from), in JAX's words."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))

    def flat_f(*xs: Any) -> Any:
        a, k = tree_util.tree_unflatten(in_tree, xs)
        return f(*a, **k)

    n_res_box: list[int] = []

    def forward(*xs: Any) -> Any:
        out, pullback = vjp(flat_f, *xs)
        n_res_box.append(len(tree_util.tree_leaves(pullback)))
        return out, pullback

    closed = make_jaxpr(forward)(*leaves)
    n_res = n_res_box[0]
    jaxpr = closed.jaxpr
    residuals = jaxpr.outvars[len(jaxpr.outvars) - n_res :]
    names = arg_names_of(f, args, kwargs)
    return _describe(jaxpr, residuals, names)


def _describe(jaxpr: Jaxpr, residuals: list[Any], arg_names: list[str]) -> list[tuple[ShapedArray, str]]:
    # A value checkpoint rounds before saving it is reported as what made it, as JAX does.
    rounded = {e.outvars[0]: e.invars[0] for e in jaxpr.eqns if e.primitive.name == "reduce_precision"}
    res_vars = {rounded.get(v, v) for v in residuals if isinstance(v, Var)}
    out: list[tuple[ShapedArray, str]] = [(lit.aval, "from a literal") for lit in residuals if isinstance(lit, Literal)]
    out += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
    for i, v in enumerate(jaxpr.invars):
        if v in res_vars:
            out.append((v.aval, f"from the argument {arg_names[i]}" if i < len(arg_names) and arg_names[i]
                        else f"from the argument at flattened index {i}"))
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            if v in res_vars:
                where = source_info.summarize(eqn.source_info)
                if eqn.primitive is name_p:
                    out.append((v.aval, f"named '{eqn.params['name']}' from {where}"))
                elif eqn.primitive.name == "jit":
                    out.append((v.aval, f"output of jitted function '{eqn.params['name']}' from {where}"))
                else:
                    out.append((v.aval, f"output of {eqn.primitive.name} from {where}"))
    return out


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print, one a line, the residuals ``vjp(f, *args)`` saves and where each comes from."""
    for aval, where in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {where}")


# ---------------------------------------------------------------------------
# checkpoint

# fun (weakly) -> {(argument structure, avals, static arguments): (jaxpr, consts, output structure)}
_TRACES: weakref.WeakKeyDictionary[Callable[..., Any], dict[Any, tuple[ClosedJaxpr, list[Any], Any]]] = (
    weakref.WeakKeyDictionary())
caching.on_clear_all(_TRACES.clear)  # jax.clear_caches() empties it


def checkpoint(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool = True,
    policy: Callable[..., bool] | None = None,
    static_argnums: int | tuple[int, ...] = (),
) -> Callable[..., Any]:
    """``fun`` whose intermediate values are recomputed, not stored, for its derivative."""
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

        avals = tuple(get_aval(x) for x in flat)
        key = _cache_key(in_tree, avals, static)
        per_fun = _cached_traces(fun)
        hit = per_fun.get(key) if per_fun is not None and key is not None else None
        if hit is None:
            closed, _ = trace_to_jaxpr(flat_fun, list(avals), DebugInfo(fun, [], "checkpoint"))
            moved, consts = consts_as_inputs(closed)
            hit = (moved, consts, out_tree_box[0])
            # A trace closing over another trace's values is that trace's alone.
            if per_fun is not None and key is not None and not any(isinstance(c, Tracer) for c in consts):
                per_fun[key] = hit
        moved, consts, out_tree = hit
        outs = remat_p.bind(*consts, *flat, jaxpr=moved, prevent_cse=prevent_cse, differentiated=False, policy=policy)
        return tree_util.tree_unflatten(out_tree, outs)

    return checkpointed


remat = checkpoint


def _cached_traces(fun: Callable[..., Any]) -> dict[Any, Any] | None:
    try:
        return _TRACES.setdefault(fun, {})
    except TypeError:  # not weakly referenceable: never cached
        return None


def _cache_key(in_tree: Any, avals: tuple[ShapedArray, ...], static: dict[int, Any]) -> Any:
    key = (in_tree, avals, tuple(sorted(static.items())))
    try:
        hash(key)
    except TypeError:  # an unhashable static argument: traced every time
        return None
    return key
