"""User-defined derivatives: ``custom_jvp`` and ``custom_vjp``.

A call of a decorated function is handed to the current trace
(``trace.process_custom_jvp_call``): with no transformation active the
function simply runs; a staging trace records a ``custom_jvp_call`` (or
``custom_vjp_call``) equation holding the function's jaxpr and the rule; the
JVP trace calls the user's rule instead of differentiating the function.
When such an equation is replayed later (a jit's jaxpr under grad), the
primitive's jvp rule does the same from the equation's params.

custom_vjp under linearize runs ``fwd`` on the primal side and records a
``custom_lin`` equation on the tangent side; transposing ``custom_lin`` calls
``bwd``. Forward-mode (``jvp``) of a custom_vjp function is an error, as in JAX.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from minijax import core, dtypes, tree_util
from minijax.core import Primitive, ShapedArray, Trace, get_aval, set_current_trace
from minijax.interpreters import ad, batching
from minijax.interpreters.tracing import DebugInfo, fun_name, hoist_tracer_consts, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, eval_jaxpr


class NamedCallable:
    """A function stored in an equation's params: prints as its name, like JAX."""

    __slots__ = ("fun", "name")

    def __init__(self, fun: Callable[..., Any], name: str) -> None:
        self.fun = fun
        self.name = name

    def __call__(self, *args: Any) -> Any:
        return self.fun(*args)

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


def _trace_flat(fun: Callable[..., Sequence[Any]], args: Sequence[Any], name: str) -> tuple[ClosedJaxpr, list[Any]]:
    closed, _ = trace_to_jaxpr(lambda *xs: list(fun(*xs)), [get_aval(x) for x in args], DebugInfo(fun, [], name))
    return hoist_tracer_consts(closed)


# ---------------------------------------------------------------------------
# Primitives


def _call_abstract_eval(*avals: ShapedArray, call_jaxpr: ClosedJaxpr, **_: Any) -> list[ShapedArray]:
    return call_jaxpr.out_avals


custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
core.abstract_eval_rules[custom_jvp_call_p] = _call_abstract_eval
custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
core.abstract_eval_rules[custom_vjp_call_p] = _call_abstract_eval


def _custom_lin_abstract_eval(*avals: ShapedArray, out_avals: Sequence[ShapedArray], **_: Any) -> list[ShapedArray]:
    return list(out_avals)


# The tangent side of a custom_vjp function under linearize: (residuals,
# tangents) -> tangents. It is only ever transposed, never evaluated.
custom_lin_p = Primitive("custom_lin", multiple_results=True)
core.abstract_eval_rules[custom_lin_p] = _custom_lin_abstract_eval


def _jvp_call_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    shown = [("name", params["name"]), ("call_jaxpr", params["call_jaxpr"]), ("jvp", params["jvp"])]
    if params["num_consts"]:
        shown.append(("num_consts", params["num_consts"]))
    return [*shown, ("symbolic_zeros", params["symbolic_zeros"])]


def _vjp_call_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    shown = [("name", params["name"]), ("bwd", params["bwd"]), ("call_jaxpr", params["call_jaxpr"]), ("fwd", params["fwd"])]
    if params["num_consts"]:
        shown.append(("num_consts", params["num_consts"]))
    return [*shown, ("symbolic_zeros", params["symbolic_zeros"])]


def _custom_lin_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(k, params[k]) for k in ("bwd", "in_zeros", "num_res", "symbolic_zeros")]


def _register_printing() -> None:
    from minijax.jaxpr_text import param_filters

    param_filters["custom_jvp_call"] = _jvp_call_params
    param_filters["custom_vjp_call"] = _vjp_call_params
    param_filters["custom_lin"] = _custom_lin_params


_register_printing()


def _eval_call(args: Sequence[Any], call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


# ---------------------------------------------------------------------------
# One application of a custom function, flattened


class CustomJVPCall:
    """``fun``: flat primals -> flat outputs; ``jvp``: (primals, tangents) -> (outs, tangent outs)."""

    def __init__(self, fun: Callable[..., Sequence[Any]], jvp: NamedCallable, name: str, symbolic_zeros: bool, num_consts: int = 0) -> None:
        self.fun = fun  # takes the num_consts constants first, then the arguments
        self.jvp = jvp  # sees the arguments only
        self.name = name
        self.symbolic_zeros = symbolic_zeros
        self.num_consts = num_consts

    def run(self, args: Sequence[Any]) -> list[Any]:
        return list(self.fun(*args))

    def bind(self, args: Sequence[Any]) -> list[Any]:
        closed, consts = _trace_flat(self.fun, args, "custom_jvp")
        return custom_jvp_call_p.bind(  # type: ignore[no-any-return]
            *consts, *args, call_jaxpr=closed, jvp=self.jvp, name=self.name,
            num_consts=len(consts) + self.num_consts, symbolic_zeros=self.symbolic_zeros,
        )


class CustomVJPCall:
    """``fwd``: flat primals -> (flat outs, flat residuals); ``bwd``: (residuals, cts) -> cts."""

    def __init__(self, fun: Callable[..., Sequence[Any]], fwd: NamedCallable, bwd: NamedCallable, name: str, symbolic_zeros: bool, num_consts: int = 0) -> None:
        self.fun = fun  # takes the num_consts constants first, then the arguments
        self.fwd = fwd  # fwd and bwd see the arguments only
        self.bwd = bwd
        self.name = name
        self.symbolic_zeros = symbolic_zeros
        self.num_consts = num_consts

    def run(self, args: Sequence[Any]) -> list[Any]:
        return list(self.fun(*args))

    def bind(self, args: Sequence[Any]) -> list[Any]:
        closed, consts = _trace_flat(self.fun, args, "custom_vjp")
        return custom_vjp_call_p.bind(  # type: ignore[no-any-return]
            *consts, *args, call_jaxpr=closed, fwd=self.fwd, bwd=self.bwd, name=self.name,
            num_consts=len(consts) + self.num_consts, symbolic_zeros=self.symbolic_zeros,
        )


def _call_from_params(prim: Primitive, params: dict[str, Any]) -> CustomJVPCall | CustomVJPCall:
    """The call an equation describes (its leading num_consts inputs are constants)."""
    closed: ClosedJaxpr = params["call_jaxpr"]

    def fun(*args: Any) -> list[Any]:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    if prim is custom_jvp_call_p:
        return CustomJVPCall(fun, params["jvp"], params["name"], params["symbolic_zeros"], params["num_consts"])
    return CustomVJPCall(fun, params["fwd"], params["bwd"], params["name"], params["symbolic_zeros"], params["num_consts"])


# ---------------------------------------------------------------------------
# The JVP trace's handling (called from ad.JVPTrace)


def jvp_of_custom_jvp(trace: ad.JVPTrace, call: CustomJVPCall, args: Sequence[Any]) -> list[Any]:
    n = call.num_consts
    pairs = [trace.to_primal_tangent(x) for x in args]
    primals = [p for p, _ in pairs]
    tangents = [t for _, t in pairs][n:]
    if all(type(t) is ad.Zero for t in tangents):
        with set_current_trace(trace.parent):
            return trace.parent.process_custom_jvp_call(call, primals)  # type: ignore[attr-defined,no-any-return]
    if not call.symbolic_zeros:
        tangents = [ad.instantiate_zeros(t) for t in tangents]
    with set_current_trace(trace.rule_trace):
        outs, out_tangents = call.jvp(primals[n:], tangents)
    return [trace.wrap(p, t) for p, t in zip(outs, out_tangents)]


def jvp_of_custom_vjp(trace: ad.JVPTrace, call: CustomVJPCall, args: Sequence[Any]) -> list[Any]:
    n = call.num_consts
    pairs = [trace.to_primal_tangent(x) for x in args]
    primals = [p for p, _ in pairs]
    tangents = [t for _, t in pairs][n:]
    if all(type(t) is ad.Zero for t in tangents):
        with set_current_trace(trace.parent):
            return trace.parent.process_custom_vjp_call(call, primals)  # type: ignore[attr-defined,no-any-return]
    if trace.tangent_trace is None:
        raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")
    with set_current_trace(trace.parent):
        outs, residuals = call.fwd(*primals[n:])
    in_zeros = [type(t) is ad.Zero for t in tangents]
    out_avals = tuple(ad.tangent_aval(get_aval(o)) for o in outs)
    if call.symbolic_zeros:
        lin_in = [t for t in tangents if type(t) is not ad.Zero]
    else:
        lin_in = [ad.instantiate_zeros(t) for t in tangents]
    with set_current_trace(trace.tangent_side):
        out_tangents = custom_lin_p.bind(
            *residuals, *lin_in, bwd=call.bwd, in_zeros=in_zeros, num_res=len(residuals),
            out_avals=out_avals, symbolic_zeros=call.symbolic_zeros,
        )
    return [trace.wrap(p, t) for p, t in zip(outs, out_tangents)]


def _custom_jvp_call_trace_rule(trace: ad.JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    call = _call_from_params(custom_jvp_call_p, params)
    assert isinstance(call, CustomJVPCall)
    args = [trace.wrap(p, t) for p, t in zip(primals, tangents)]
    return jvp_of_custom_jvp(trace, call, args)


def _custom_vjp_call_trace_rule(trace: ad.JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    call = _call_from_params(custom_vjp_call_p, params)
    assert isinstance(call, CustomVJPCall)
    args = [trace.wrap(p, t) for p, t in zip(primals, tangents)]
    return jvp_of_custom_vjp(trace, call, args)


ad.trace_jvp_rules[custom_jvp_call_p] = _custom_jvp_call_trace_rule
ad.trace_jvp_rules[custom_vjp_call_p] = _custom_vjp_call_trace_rule


def _custom_lin_transpose(cts: Sequence[Any], *args: Any, bwd: NamedCallable, in_zeros: Sequence[bool], num_res: int, symbolic_zeros: bool, **_: Any) -> list[Any]:
    residuals = args[:num_res]
    if not symbolic_zeros:
        cts = [ad.instantiate_zeros(ct) for ct in cts]
    cts_in = list(bwd(list(residuals), list(cts)))
    linear_args = args[num_res:]
    # Inputs whose tangent was a symbolic zero were not passed when symbolic_zeros is on.
    if symbolic_zeros:
        cts_in = [ct for ct, z in zip(cts_in, in_zeros) if not z]
    return [None] * num_res + cts_in[: len(linear_args)]


ad.transpose_rules[custom_lin_p] = _custom_lin_transpose


def _custom_lin_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


ad.primitive_jvps[custom_lin_p] = _custom_lin_jvp


# ---------------------------------------------------------------------------
# Batching: the function's jaxpr is batched, and the rules are wrapped so
# that they run batched too (outputs, residuals and cotangents at axis 0).


def _custom_jvp_call_batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    size, axis_name = trace.axis_size, trace.axis_name
    closed: ClosedJaxpr = params["call_jaxpr"]
    n_out = len(closed.out_avals)
    batched, _ = batching.batch_jaxpr(closed, size, dims, out_dims=[0] * n_out, axis_name=axis_name)
    old_jvp: NamedCallable = params["jvp"]
    arg_dims = list(dims[params["num_consts"]:])

    def jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        n = len(primals)

        def one(*xs: Any) -> list[Any]:
            outs, out_tangents = old_jvp(list(xs[:n]), list(xs[n:]))
            return list(outs) + [ad.instantiate_zeros(t) for t in out_tangents]

        args = list(primals) + [ad.instantiate_zeros(t) for t in tangents]
        res = batching.vmap_flat(one, args, arg_dims * 2, size, axis_name, [0] * (2 * n_out))
        return res[:n_out], res[n_out:]

    new_params = {**params, "call_jaxpr": batched, "jvp": NamedCallable(jvp, old_jvp.name)}
    return custom_jvp_call_p.bind(*vals, **new_params), [0] * n_out


def _custom_vjp_call_batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    from minijax import lax

    size, axis_name = trace.axis_size, trace.axis_name
    closed: ClosedJaxpr = params["call_jaxpr"]
    n_out = len(closed.out_avals)
    batched, _ = batching.batch_jaxpr(closed, size, dims, out_dims=[0] * n_out, axis_name=axis_name)
    old_fwd: NamedCallable = params["fwd"]
    old_bwd: NamedCallable = params["bwd"]
    arg_dims = list(dims[params["num_consts"]:])
    n_res_box: list[int] = []

    def fwd(*primals: Any) -> tuple[list[Any], list[Any]]:
        def one(*xs: Any) -> list[Any]:
            outs, res = old_fwd(*xs)
            n_res_box[:] = [len(res)]
            return list(outs) + list(res)

        res = batching.vmap_flat(one, list(primals), arg_dims, size, axis_name, lambda n: [0] * n)
        return res[:n_out], res[n_out:]

    def bwd(res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        n_res = len(res)

        def one(*xs: Any) -> list[Any]:
            return [ad.instantiate_zeros(c) for c in old_bwd(list(xs[:n_res]), list(xs[n_res:]))]

        cts = [ad.instantiate_zeros(c) for c in cts]
        cts_in = batching.vmap_flat(one, list(res) + cts, [0] * (n_res + len(cts)), size, axis_name, lambda n: [0] * n)
        # An argument that was not batched receives the sum over the batch.
        return [
            lax.reduce_sum(c, (0,)) if d is None else batching.moveaxis(c, 0, d)
            for c, d in zip(cts_in, arg_dims)
        ]

    new_params = {**params, "call_jaxpr": batched, "fwd": NamedCallable(fwd, old_fwd.name), "bwd": NamedCallable(bwd, old_bwd.name)}
    return custom_vjp_call_p.bind(*vals, **new_params), [0] * n_out


def _custom_lin_batch(vals: Sequence[Any], dims: Sequence[batching.BatchDim], **params: Any) -> tuple[Any, Any]:
    # custom_lin is only ever transposed; batching it means evaluating the
    # tangent map of a custom_vjp function, which is forward mode.
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


batching.primitive_batchers[custom_lin_p] = _custom_lin_batch
batching.axis_rules[custom_jvp_call_p] = _custom_jvp_call_batch
batching.axis_rules[custom_vjp_call_p] = _custom_vjp_call_batch


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
            from minijax.api import eval_shape

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
    if not isinstance(result, (tuple, list)):
        raise TypeError(
            f"Custom VJP bwd rule must produce a tuple of length equal to the number of primal "
            f"inputs ({in_tree.num_leaves if False else len(tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves))}), "
            f"but got a value of type {type(result)}: {fun_name(bwd)} for {name}."
        )
    n_args = len(tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves))
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


__all__ = ["custom_jvp", "custom_vjp", "custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p", "Trace"]
