"""User-defined derivatives: ``custom_jvp`` and ``custom_vjp``.

A call of a decorated function is flattened into a ``CustomJVPCall`` (or
``CustomVJPCall``) and handed to the current trace
(``trace.process_custom_jvp_call``): with no transformation active the
function simply runs; a staging trace records a ``custom_jvp_call`` (or
``custom_vjp_call``) equation holding the function's jaxpr and the rule; the
JVP trace calls the user's rule instead of differentiating the function
(minijax/interpreters/ad.py). The primitives and their rules are in
minijax/primitives/calls.py.

custom_vjp under linearize runs ``fwd`` on the primal side and records a
``custom_lin`` equation on the tangent side; transposing ``custom_lin`` calls
``bwd``. Forward-mode (``jvp``) of a custom_vjp function runs ``fwd`` and then
raises, as JAX does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from minijax import core, dtypes, tree_util
from minijax.api import eval_shape
from minijax.array import Array, device_put_value
from minijax.core import ShapedArray, get_aval
from minijax.interpreters import ad
from minijax.interpreters.tracing import abstractify, fun_name, trace_to_jaxpr
from minijax.jaxpr import eval_jaxpr

# compat (issue 24): JAX's jax.custom_derivatives also names the primitives (Equinox reads them).
from minijax.primitives.calls import (
    CustomJVPCall,
    CustomVJPCall,
    NamedCallable,
    custom_jvp_call_p as custom_jvp_call_p,
    custom_vjp_call_p as custom_vjp_call_p,
)
from minijax.state import Ref

__all__ = [
    "SymbolicZero", "closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p", "custom_vjp",
    "custom_vjp_call_p", "zero_from_primal",
]

# compat (issue 24): the zero tangents a rule defined with ``symbolic_zeros=True`` receives are minijax's
# symbolic zeros; JAX names their type here (Equinox tests ``isinstance(t, SymbolicZero)`` and makes them).
SymbolicZero = ad.Zero


def zero_from_primal(x: Any, symbolic_zeros: bool = False) -> Any:
    """The zero tangent of ``x`` (a pytree): symbolic zeros, or materialised ones."""
    return tree_util.tree_map(lambda leaf: ad.Zero.from_primal(leaf) if symbolic_zeros else ad.zeros_like_aval(ad.tangent_aval(get_aval(leaf))), x)


# ---------------------------------------------------------------------------
# The public decorators


def _resolve_args(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], what: str) -> tuple[Any, ...]:
    """Keyword arguments become positional (the rules see positional arguments only)."""
    if not kwargs:
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"The function decorated with {what} was called with arguments that do not match its signature: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"keyword-only arguments are not supported by {what}-decorated functions: {sorted(bound.kwargs)}")
    return tuple(bound.args)


def _split_nondiff(args: tuple[Any, ...], nondiff_argnums: tuple[int, ...]) -> tuple[list[Any], list[Any]]:
    nondiff = [args[i] for i in nondiff_argnums]
    diff = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    return nondiff, diff


def _merge_nondiff(nondiff: Sequence[Any], diff: Sequence[Any], nondiff_argnums: tuple[int, ...]) -> list[Any]:
    it_nd, it_d = iter(nondiff), iter(diff)
    total = len(nondiff) + len(diff)
    return [next(it_nd) if i in nondiff_argnums else next(it_d) for i in range(total)]


def as_arrays(outs: Sequence[Any]) -> list[Any]:
    """Outputs as JAX returns them from a call it binds as a primitive
    (custom_vmap): Arrays, even where the function computed on Python scalars."""
    return [x if isinstance(x, (core.Tracer, Array)) else device_put_value(x) for x in outs]


class custom_jvp:  # noqa: N801  (JAX's name)
    """A function with a user-given JVP rule: ``@custom_jvp`` then ``@f.defjvp``."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(nondiff_argnums))
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *tangent_fns: Callable[..., Any] | None) -> None:
        """One function per differentiable argument: ``fn(tangent, primal_out, *primals)``."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
            out = self(*primals)
            total: Any = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                contribution = fn(t, out, *primals)
                total = contribution if total is None else tree_util.tree_map(lambda a, b: a + b, total, contribution)
            if total is None:
                total = tree_util.tree_map(lambda o: ad.zeros_like_aval(ad.tangent_aval(get_aval(o))), out)
            return out, total

        jvp.__name__ = "jvp"
        self.defjvp(jvp)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_args(self.fun, args, kwargs, "custom_jvp")
        nondiff, diff = _split_nondiff(args, self.nondiff_argnums)
        flat, in_tree = tree_util.tree_flatten(diff)
        out_tree_box: list[tree_util.PyTreeDef] = []
        fun, jvp_rule, nd_argnums = self.fun, self.jvp, self.nondiff_argnums

        def flat_fun(*xs: Any) -> list[Any]:
            out = fun(*_merge_nondiff(nondiff, tree_util.tree_unflatten(in_tree, xs), nd_argnums))
            leaves, tree = tree_util.tree_flatten(out)
            if not out_tree_box:
                out_tree_box.append(tree)
            return leaves

        def flat_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
            p_tree = tree_util.tree_unflatten(in_tree, primals)
            t_tree = tree_util.tree_unflatten(in_tree, tangents)
            result = jvp_rule(*nondiff, tuple(p_tree), tuple(t_tree))
            return _check_jvp_result(result, name, jvp_rule, out_tree_box)

        call = CustomJVPCall(flat_fun, NamedCallable(flat_jvp, fun_name(jvp_rule)), name, self.symbolic_zeros)
        outs = core.current_trace().process_custom_jvp_call(call, flat)  # type: ignore[attr-defined]
        if not out_tree_box:  # the rule ran instead of the function: trace the function's structure
            eval_shape(lambda *xs: flat_fun(*xs), *flat)
        return tree_util.tree_unflatten(out_tree_box[0], outs)


def _check_jvp_result(result: Any, name: str, rule: Callable[..., Any], out_tree_box: list[tree_util.PyTreeDef]) -> tuple[list[Any], list[Any]]:
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(
            f"Custom JVP rule {fun_name(rule)} for function {name} must produce a pair (list or tuple of "
            f"length two) representing primal and tangent outputs, but got {result}."
        )
    primal_out, tangent_out = result
    p_leaves, p_tree = tree_util.tree_flatten(primal_out)
    t_leaves, t_tree = tree_util.tree_flatten(tangent_out)
    if p_tree != t_tree:
        raise TypeError(
            f"Custom JVP rule {fun_name(rule)} for function {name} must produce primal and tangent "
            f"outputs with equal container (pytree) structures, but got {p_tree} and {t_tree} respectively."
        )
    if not out_tree_box:
        out_tree_box.append(p_tree)
    elif out_tree_box[0] != p_tree:
        raise TypeError(
            f"Custom JVP rule {fun_name(rule)} for function {name} must produce primal outputs with the same "
            f"container (pytree) structure as the function's output, but got {p_tree} and {out_tree_box[0]}."
        )
    checked: list[Any] = []
    for p, t in zip(p_leaves, t_leaves):
        p_aval = get_aval(p)
        expected = ad.tangent_aval(p_aval)
        if type(t) is ad.Zero:
            checked.append(t)
            continue
        t_aval = get_aval(t) if getattr(t, "dtype", None) != dtypes.float0 else ShapedArray(t.shape, t.dtype)
        if t_aval.shape != expected.shape:
            raise ValueError(
                f"Custom JVP rule {fun_name(rule)} for function {name} must produce primal and tangent outputs "
                f"with corresponding shapes. Got primal shape {p_aval.shape} and tangent shape {t_aval.shape}"
            )
        if t_aval.dtype != expected.dtype:
            raise TypeError(
                f"Custom JVP rule {fun_name(rule)} for function {name} must produce primal and tangent outputs "
                f"with corresponding dtypes. Got primal dtype {p_aval.dtype} and so expected tangent dtype "
                f"{expected.dtype}, but got tangent dtype {t_aval.dtype} instead."
            )
        checked.append(ad.Zero(expected) if t_aval.dtype == dtypes.float0 else t)
    return list(p_leaves), checked


class custom_vjp:  # noqa: N801  (JAX's name)
    """A function with a user-given VJP: ``@custom_vjp`` then ``f.defvjp(fwd, bwd)``."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(nondiff_argnums))
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any], symbolic_zeros: bool = False, optimize_remat: bool = False) -> None:
        if optimize_remat:
            raise NotImplementedError("custom_vjp.defvjp(optimize_remat=True) is not supported by minijax")
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = fun_name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_args(self.fun, args, kwargs, "custom_vjp")
        nondiff, diff = _split_nondiff(args, self.nondiff_argnums)
        flat, in_tree = tree_util.tree_flatten(diff)
        if any(isinstance(x, Ref) for x in flat):
            # refs (issue 24): a ref argument (plumbing, as the stash-gradients recipe passes one). Called
            # on concrete values, nothing differentiates it: the function itself runs. Differentiated,
            # the bwd rule would have to write the ref during the backward pass, which minijax's
            # trace-time refs cannot.
            if any(isinstance(x, core.Tracer) for x in flat):
                raise NotImplementedError(
                    f"custom_vjp function {name} takes a Ref and is called under a transformation: minijax "
                    "does not support Ref arguments of custom_vjp functions there yet (issue 24)"
                )
            return self.fun(*args)
        out_tree_box: list[tree_util.PyTreeDef] = []
        res_tree_box: list[tree_util.PyTreeDef] = []
        fun, fwd, bwd, nd = self.fun, self.fwd, self.bwd, self.nondiff_argnums
        in_avals = [ad.tangent_aval(get_aval(x)) for x in flat]

        def flat_fun(*xs: Any) -> list[Any]:
            out = fun(*_merge_nondiff(nondiff, tree_util.tree_unflatten(in_tree, xs), nd))
            leaves, tree = tree_util.tree_flatten(out)
            if not out_tree_box:
                out_tree_box.append(tree)
            return leaves

        def flat_fwd(*xs: Any) -> tuple[list[Any], list[Any]]:
            result = fwd(*_merge_nondiff(nondiff, tree_util.tree_unflatten(in_tree, xs), nd))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError(
                    f"Custom VJP fwd rule {fun_name(fwd)} for function {name} must produce a pair "
                    f"(list or tuple of length two) where the first element represents the primal output "
                    f"(equal to the output of the custom_vjp-decorated function {name}) and the second "
                    f"element represents residuals (i.e. values stored from the forward pass for use on the "
                    f"backward pass), but instead the fwd rule output's type was {type(result)}."
                )
            out, res = result
            leaves, tree = tree_util.tree_flatten(out)
            if not out_tree_box:
                out_tree_box.append(tree)
            elif out_tree_box[0] != tree:
                raise TypeError(
                    f"Custom VJP fwd rule {fun_name(fwd)} for function {name} must produce a pair whose "
                    f"first element has the same container (pytree) structure as the function's output, "
                    f"but got {tree} and {out_tree_box[0]}."
                )
            res_leaves, res_tree = tree_util.tree_flatten(res)
            res_tree_box[:] = [res_tree]
            return leaves, res_leaves

        def flat_bwd(res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
            res_tree = tree_util.tree_unflatten(res_tree_box[0], res)
            ct_tree = tree_util.tree_unflatten(out_tree_box[0], cts)
            result = bwd(*nondiff, res_tree, ct_tree)
            return _check_bwd_result(result, name, bwd, in_tree, in_avals)

        call = CustomVJPCall(flat_fun, NamedCallable(flat_fwd, fun_name(fwd)), NamedCallable(flat_bwd, fun_name(bwd)), name, self.symbolic_zeros)
        outs = core.current_trace().process_custom_vjp_call(call, flat)  # type: ignore[attr-defined]
        return tree_util.tree_unflatten(out_tree_box[0], outs)


def _check_bwd_result(result: Any, name: str, bwd: Callable[..., Any], in_tree: tree_util.PyTreeDef, in_avals: Sequence[ShapedArray]) -> list[Any]:
    n_args = len(tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves))
    if not isinstance(result, (tuple, list)):
        raise TypeError(
            f"Custom VJP bwd rule must produce a tuple of length equal to the number of primal "
            f"inputs ({n_args}), but got a value of type {type(result)}: {fun_name(bwd)} for {name}."
        )
    if len(result) != n_args:
        raise TypeError(
            f"Custom VJP bwd rule must produce a tuple of length equal to the number of primal inputs "
            f"({n_args}), but got length {len(result)}: {fun_name(bwd)} for {name}."
        )
    out: list[Any] = []
    expected_tree = tree_util.tree_structure(tuple(tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)))
    leaves, tree = tree_util.tree_flatten(tuple(result), is_leaf=lambda x: x is None)
    if tree != expected_tree and len(leaves) != in_tree.num_leaves:
        raise TypeError(
            f"Custom VJP bwd rule {fun_name(bwd)} for function {name} must produce an output with the same "
            f"container (pytree) structure as the args tuple of the primal function, and in particular must "
            f"produce a tuple of length equal to the number of arguments to the primal function, but got "
            f"bwd output structure {tree} for primal input structure {expected_tree}."
        )
    for leaf, aval in zip(leaves, in_avals):
        if leaf is None:
            out.append(ad.Zero(aval))
            continue
        got = get_aval(leaf) if getattr(leaf, "dtype", None) != dtypes.float0 else ShapedArray(leaf.shape, leaf.dtype)
        if got.shape != aval.shape:
            raise ValueError(
                f"Custom VJP bwd rule must produce an output with the same shape/dtypes as the args tuple "
                f"of the primal function, but at output[{len(out)}] the bwd rule produced an output of "
                f"shape/dtype {got.str_short()} corresponding to an input of shape/dtype {aval.str_short()}: "
                f"{fun_name(bwd)} for {name}."
            )
        out.append(ad.Zero(aval) if aval.dtype == dtypes.float0 else leaf)
    return out


# ---------------------------------------------------------------------------
# custom_gradient and closure_convert (both built on the tracing above)


class _GradientRule:
    """custom_gradient's residuals: the vjp function traced to a jaxpr, its
    constants the pytree leaves (so that values it closes over travel as
    residuals, and tracers of the forward pass never leak into bwd)."""

    def __init__(self, closed: Any, consts: list[Any], in_tree: tree_util.PyTreeDef, out_tree: tree_util.PyTreeDef) -> None:
        self.closed, self.consts, self.in_tree, self.out_tree = closed, consts, in_tree, out_tree


tree_util.register_pytree_node(
    _GradientRule,
    lambda r: (r.consts, (r.closed, r.in_tree, r.out_tree)),
    lambda aux, consts: _GradientRule(aux[0], list(consts), aux[1], aux[2]),
)


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun(*args) -> (value, vjp_fn)`` as a function whose VJP is ``vjp_fn``.

    ``vjp_fn(g)`` takes the output cotangent and returns one cotangent per
    argument (a tuple when there are several, or a single value for one).
    """
    @custom_vjp
    def wrapped(*args: Any) -> Any:
        ans, _ = fun(*args)
        return ans

    def fwd(*args: Any) -> tuple[Any, _GradientRule]:
        ans, rule = fun(*args)
        ans_flat, out_tree = tree_util.tree_flatten((ans,))
        in_tree_box: list[tree_util.PyTreeDef] = []

        def flat_rule(*cts: Any) -> list[Any]:
            (ct,) = tree_util.tree_unflatten(out_tree, cts)
            leaves, tree = tree_util.tree_flatten(rule(ct))
            in_tree_box.append(tree)
            return leaves

        avals = [ad.tangent_aval(get_aval(a)) for a in ans_flat]
        closed, _ = trace_to_jaxpr(flat_rule, avals)
        consts = list(closed.consts)
        return ans, _GradientRule(closed.jaxpr, consts, in_tree_box[0], out_tree)

    def bwd(res: _GradientRule, cts: Any) -> Any:
        cts_flat, tree = tree_util.tree_flatten((cts,))
        if tree != res.out_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{tree}")
        out = tree_util.tree_unflatten(res.in_tree, eval_jaxpr(res.closed, res.consts, *cts_flat))
        return (out,) if tree_util.treedef_is_leaf(res.in_tree) else out

    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun)
    return wrapped


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list[Any]]:
    """``(converted, consts)``: ``converted(*args, *consts)`` computes ``fun(*args)``
    with the values ``fun`` closes over that may carry derivatives (tracers of
    an enclosing transformation, JAX's ``_maybe_perturbed``) as explicit arguments."""
    flat, in_tree = tree_util.tree_flatten(example_args)
    out_tree_box: list[tree_util.PyTreeDef] = []

    def flat_fun(*xs: Any) -> list[Any]:
        leaves, tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, xs)))
        out_tree_box.append(tree)
        return leaves

    closed, _ = trace_to_jaxpr(flat_fun, [abstractify(x) for x in flat])
    jaxpr, consts = closed.jaxpr, list(closed.consts)
    perturbed = [_maybe_perturbed(c) for c in consts]
    kept = [c for c, p in zip(consts, perturbed) if not p]
    hoisted = [c for c, p in zip(consts, perturbed) if p]
    out_tree = out_tree_box[0]

    def converted_fun(*args_hconsts: Any) -> Any:
        n_args = len(args_hconsts) - len(hoisted)
        args, const_args = args_hconsts[:n_args], args_hconsts[n_args:]
        it_k, it_h = iter(kept), iter(const_args)
        all_consts = [next(it_h) if p else next(it_k) for p in perturbed]
        all_args, in_tree2 = tree_util.tree_flatten(tuple(args))
        if in_tree != in_tree2:
            raise TypeError(
                "The inputs to the closure produced by closure_convert must have "
                "the same Pytree structure as the example arguments passed when "
                f"closure_convert was called. Expected {in_tree}, but got "
                f"{in_tree2}"
            )
        return tree_util.tree_unflatten(out_tree, eval_jaxpr(jaxpr, all_consts, *all_args))

    return converted_fun, hoisted


def _maybe_perturbed(x: Any) -> bool:
    """Whether ``x`` may carry a tangent: a tracer whose tangent space is not float0."""
    if not isinstance(x, core.Tracer):
        return False
    return ad.tangent_aval(x.aval).dtype != dtypes.float0
