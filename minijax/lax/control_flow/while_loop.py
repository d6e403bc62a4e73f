"""``lax.while_loop`` and ``lax.fori_loop``, and the ``while`` primitive they bind.

``while_loop(cond_fun, body_fun, init_val)`` traces both functions on the
carry's abstract values and binds one equation::

    outs = while[body_jaxpr body_nconsts cond_jaxpr cond_nconsts] *cond_consts *body_consts *carry

Constants the functions close over are leading operands: ``cond_nconsts`` of
them for ``cond_jaxpr``, then ``body_nconsts`` for ``body_jaxpr``. A carry the
body passes through unchanged and the predicate never reads is not carried:
it becomes a body constant and is returned as given (as JAX does).

The predicate is a boolean scalar, except after ``vmap`` with a batched
predicate: then ``cond_jaxpr`` returns a boolean array whose shape is a prefix
of every carry's shape, the loop runs while any element is true, and the body's
result is kept only where the predicate is true (finished lanes stay as they
are). The backends implement that meaning (``while`` C4 in
spec/primitives/control_flow.md), so the jaxprs stay JAX's.

The rules, as JAX has them:

- jvp: one ``while`` over (primal, tangent) carries; which carries have a
  nonzero tangent is a fixpoint over the body.
- linearize: a ``while`` of the primal computation on the primal side, and the
  whole jvp ``while`` staged on the tangent side (its primal operands become
  residuals): ``jax.linearize`` and forward evaluation work;
- transpose: the staged ``while`` cannot be transposed (its trip count is not
  known ahead), so ``grad`` raises JAX's ValueError;
- batching: a batched predicate batches every carry and keeps iterating while
  any lane is unfinished; an unbatched one keeps one loop of the batched body.

``fori_loop`` with a static trip count is a ``scan`` (so that ``grad`` works
through it); otherwise a ``while`` over ``(i, upper, x)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import config as config_module, core, dtypes, tree_util
from minijax.array import Array
from minijax.backend import Backend, default_device_of
from minijax.core import Primitive, ShapedArray, Tracer, get_aval, is_array_like, set_current_trace
from minijax.dispatch import device_put_value, eager_rules
from minijax.errors import ConcretizationTypeError
from minijax.interpreters import ad, batching
from minijax.interpreters.ad import JVPTrace, Zero
from minijax.interpreters.tracing import DebugInfo, arg_names_of, trace_to_jaxpr
from minijax.jaxpr import Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var

__all__ = ["fori_loop", "while_loop", "while_p"]

# ---------------------------------------------------------------------------
# The primitive


def _split3(xs: Sequence[Any], n1: int, n2: int) -> tuple[list[Any], list[Any], list[Any]]:
    """``xs`` as (the first ``n1``, the next ``n2``, the rest): cond constants, body constants, carry."""
    return list(xs[:n1]), list(xs[n1 : n1 + n2]), list(xs[n1 + n2 :])


def _typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Same type up to weak typing (JAX's ``typematch``)."""
    return a.shape == b.shape and a.dtype == b.dtype


def _short(avals: Sequence[ShapedArray]) -> str:
    return ", ".join(a.str_short() for a in avals)


def _while_abstract_eval(
    *avals: ShapedArray, cond_jaxpr: Any, body_jaxpr: Any, cond_nconsts: Any, body_nconsts: Any
) -> list[ShapedArray]:
    if not (isinstance(cond_jaxpr, ClosedJaxpr) and isinstance(body_jaxpr, ClosedJaxpr)):  # while C1
        raise TypeError("while: cond_jaxpr and body_jaxpr must be ClosedJaxprs")
    counts_ok = all(type(n) is int and n >= 0 for n in (cond_nconsts, body_nconsts))
    if not counts_ok or cond_nconsts + body_nconsts > len(avals):
        raise TypeError(  # while C1
            f"while: cond_nconsts={cond_nconsts} and body_nconsts={body_nconsts} must be non-negative "
            f"ints counting leading operands, of which there are {len(avals)}"
        )
    cconsts, bconsts, carry = _split3(avals, cond_nconsts, body_nconsts)
    for name, jaxpr, consts in (("cond_jaxpr", cond_jaxpr, cconsts), ("body_jaxpr", body_jaxpr, bconsts)):
        expected = [*consts, *carry]
        if len(jaxpr.in_avals) != len(expected) or not all(map(_typematch, jaxpr.in_avals, expected)):  # while C2
            raise TypeError(
                f"while: {name} takes ({_short(jaxpr.in_avals)}) but is given its constants and the carry "
                f"({_short(expected)})"
            )
    outs: list[ShapedArray] = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(map(_typematch, outs, carry)):  # while C3
        raise TypeError(f"while: body_jaxpr returns ({_short(outs)}) but the carry is ({_short(carry)})")
    preds = cond_jaxpr.out_avals
    prefix = preds[0].shape if preds else ()
    if len(preds) != 1 or preds[0].dtype != np.bool_ or any(c.shape[: len(prefix)] != prefix for c in carry):
        raise TypeError(  # while C4
            f"while: cond_jaxpr must return one boolean whose shape is a prefix of every carry's shape "
            f"(a scalar unless batched), got ({_short(preds)}) for a carry ({_short(carry)})"
        )
    return outs  # while C5: the body's output types, weak types included


while_p = Primitive("while", multiple_results=True)
core.abstract_eval_rules[while_p] = _while_abstract_eval


def _while_eager(backend: Backend, arrays: Sequence[Array], params: dict[str, Any]) -> list[Array]:
    # Each while_loop call traces new jaxprs, so a compiled program would
    # never be reused: compile this one equation for this call, and keep
    # nothing (the dispatch caches would hold every call's program alive).
    in_avals = [a.aval for a in arrays]
    out_avals = _while_abstract_eval(*in_avals, **params)
    invars, outvars = [Var(a) for a in in_avals], [Var(a) for a in out_avals]
    closed = ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(list(invars), outvars, while_p, dict(params))]), [])
    device = arrays[0]._device if arrays else default_device_of(backend)
    if device is backend.devices()[0]:
        run = backend.compile(closed)
    else:
        run = backend.compile(closed, device=device)  # type: ignore[call-arg]
    committed = any(a._committed for a in arrays)
    bufs = run([a._buf for a in arrays])
    return [Array(b, aval, backend, device, committed) for b, aval in zip(bufs, out_avals)]


eager_rules[while_p] = _while_eager


# ---------------------------------------------------------------------------
# while_loop


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """Apply ``body_fun`` to the carry while ``cond_fun`` of it is true; return the final carry.

    The meaning is the Python loop ``while cond_fun(val): val = body_fun(val)``,
    staged as one ``while`` equation: both functions are traced on the
    carry's abstract values, ``cond_fun`` must return a boolean scalar and
    ``body_fun`` a carry of the same pytree structure, shapes and dtypes.
    Forward-mode differentiable; reverse mode raises (use ``scan``, or
    ``fori_loop`` with static bounds).
    """
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    return _while_loop(cond_fun, body_fun, init_val, "while_body")


def _while_loop(
    cond_fun: Callable[[Any], Any],
    body_fun: Callable[[Any], Any],
    init_val: Any,
    body_for: str,
    body_info: DebugInfo | None = None,
) -> Any:
    """``while_loop``; errors in the body say it was traced for ``body_for``
    (or as ``body_info`` says: fori_loop names its own body function)."""
    if config_module.read("jax_disable_jit"):
        try:
            val = tree_util.tree_map(_asarray, init_val)
            while cond_fun(val):
                val = tree_util.tree_map(_asarray, body_fun(val))
            return val
        except ConcretizationTypeError:
            pass  # a transformation's tracer decides the loop: stage it after all
    flat, in_tree = tree_util.tree_flatten(init_val)
    avals = [_carry_aval(x) for x in flat]
    cond_info = DebugInfo(cond_fun, arg_names_of(cond_fun, (init_val,), {}), "while_cond")
    if body_info is None:
        body_info = DebugInfo(body_fun, arg_names_of(body_fun, (init_val,), {}), body_for)
    traced = _Traced(cond_fun, body_fun, in_tree, avals, cond_info, body_info)
    if len(traced.body_avals) != len(avals):
        check_carry_type("while_loop body", body_fun, in_tree, avals, traced.body_tree, traced.body_avals)
    # A weakly typed initial value (a Python scalar) takes the type the body
    # gives it, as in JAX; the functions are then traced again on that type.
    promoted = [_promote_weak(x, a, b) for x, a, b in zip(flat, avals, traced.body_avals)]
    if any(p is not x for p, x in zip(promoted, flat)):
        flat, avals = promoted, [get_aval(x) for x in promoted]
        traced = _Traced(cond_fun, body_fun, in_tree, avals, cond_info, body_info)
    check_carry_type("while_loop body", body_fun, in_tree, avals, traced.body_tree, traced.body_avals)
    cond_closed, cond_consts = ad.consts_as_inputs(traced.cond)
    body_closed, body_consts = ad.consts_as_inputs(traced.body)
    cond_closed, body_closed, moved = _move_forwarded_to_consts(
        cond_closed, body_closed, len(cond_consts), len(body_consts)
    )
    outs = iter(
        while_p.bind(
            *cond_consts,
            *(x for x, m in zip(flat, moved) if m),  # the moved carries lead the body's constants
            *body_consts,
            *(x for x, m in zip(flat, moved) if not m),
            cond_jaxpr=cond_closed,
            body_jaxpr=body_closed,
            cond_nconsts=len(cond_consts),
            body_nconsts=len(body_consts) + sum(moved),
        )
    )
    # A carry moved to the constants is returned as it was given (JAX does so too).
    results = [x if m else next(outs) for x, m in zip(flat, moved)]
    return tree_util.tree_unflatten(traced.body_tree, results)


def _asarray(x: Any) -> Any:
    if isinstance(x, (Array, Tracer)):
        return x
    aval = _carry_aval(x)
    return device_put_value(np.asarray(x, dtype=aval.dtype), weak_type=aval.weak_type)


def _carry_aval(x: Any) -> ShapedArray:
    if not is_array_like(x):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
    return get_aval(x)


def _promote_weak(x: Any, in_aval: ShapedArray, out_aval: ShapedArray) -> Any:
    if not in_aval.weak_type or _typematch(in_aval, out_aval):
        return x
    dtype = dtypes.result_type(x, out_aval)
    if isinstance(x, Tracer):
        from minijax import lax

        return lax.convert_element_type(x, dtype)
    return np.asarray(x, dtype=dtype)[()]  # a concrete value converts now (a literal when traced)


class _Traced:
    """``cond_fun`` and ``body_fun`` traced on the carry's avals (flat in, flat out)."""

    def __init__(
        self,
        cond_fun: Callable[[Any], Any],
        body_fun: Callable[[Any], Any],
        in_tree: tree_util.PyTreeDef,
        avals: Sequence[ShapedArray],
        cond_info: DebugInfo,
        body_info: DebugInfo,
    ) -> None:
        trees: dict[str, tree_util.PyTreeDef] = {}

        def flat_cond(*xs: Any) -> list[Any]:
            leaves, trees["cond"] = tree_util.tree_flatten(cond_fun(tree_util.tree_unflatten(in_tree, xs)))
            return leaves

        def flat_body(*xs: Any) -> list[Any]:
            leaves, trees["body"] = tree_util.tree_flatten(body_fun(tree_util.tree_unflatten(in_tree, xs)))
            for leaf in leaves:
                if not is_array_like(leaf):
                    raise TypeError(
                        f"function {body_info.func_src} traced for {body_info.traced_for} returned a value "
                        f"of type {type(leaf)}, which is not a valid JAX type"
                    )
            return leaves

        self.cond, _ = trace_to_jaxpr(flat_cond, avals, cond_info)
        self.body, _ = trace_to_jaxpr(flat_body, avals, body_info)
        if not tree_util.treedef_is_leaf(trees["cond"]) or len(self.cond.out_avals) != 1:
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {trees['cond']}.")
        pred = self.cond.out_avals[0]
        if pred.shape != () or pred.dtype != np.bool_:
            raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) [{_aval_repr(pred)}].")
        self.body_tree = trees["body"]
        self.body_avals = self.body.out_avals


def _aval_repr(a: ShapedArray) -> str:
    """An aval as JAX shows it in messages: ``ShapedArray(float32[], weak_type=True)``."""
    return f"ShapedArray({a.str_short(short_dtypes=False)}{', weak_type=True' if a.weak_type else ''})"


def _move_forwarded_to_consts(
    cond: ClosedJaxpr, body: ClosedJaxpr, n_cconsts: int, n_bconsts: int
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool]]:
    """Turn the carries the body forwards and the predicate never reads into body constants.

    Such a carry is the same in every iteration, so carrying it is wasted
    work (and under vmap it would be batched needlessly). Returns the new
    jaxprs, whose moved binders lead the body's inputs, and which carries
    moved. As in JAX, the predicate's dead code goes too when any carry moves.
    """
    position = {v: i for i, v in enumerate(body.jaxpr.invars)}
    forwarded = [isinstance(v, Var) and position.get(v) == n_bconsts + i for i, v in enumerate(body.jaxpr.outvars)]
    live_cond = ad.dce_jaxpr(cond.jaxpr, [True])
    reads = {a for e in live_cond.eqns for a in e.invars} | set(live_cond.outvars)
    cond_carry = cond.jaxpr.invars[n_cconsts:]
    moved = [f and v not in reads for f, v in zip(forwarded, cond_carry)]
    if not any(moved):
        return cond, body, moved

    def kept(xs: Sequence[Any]) -> list[Any]:
        return [x for x, m in zip(xs, moved) if not m]

    new_cond = Jaxpr([], [*cond.jaxpr.invars[:n_cconsts], *kept(cond_carry)], live_cond.outvars, live_cond.eqns)
    bconst_vars, body_carry = body.jaxpr.invars[:n_bconsts], body.jaxpr.invars[n_bconsts:]
    moved_vars = [v for v, m in zip(body_carry, moved) if m]
    new_body = Jaxpr([], [*moved_vars, *bconst_vars, *kept(body_carry)], kept(body.jaxpr.outvars), body.jaxpr.eqns)
    return ClosedJaxpr(new_cond, cond.consts), ClosedJaxpr(new_body, body.consts), moved


# ---------------------------------------------------------------------------
# The carry-type check (JAX's messages, shared by the loop constructs)


def check_carry_type(
    name: str,
    body_fun: Callable[..., Any],
    in_tree: tree_util.PyTreeDef,
    in_avals: Sequence[ShapedArray],
    out_tree: tree_util.PyTreeDef,
    out_avals: Sequence[ShapedArray],
) -> None:
    """Raise JAX's TypeError when a loop body changes its carry's structure or types.

    ``name`` is the loop's body as JAX names it ("while_loop body", "scan
    body"); components are named after the body's first parameter.
    """
    try:
        params = list(inspect.signature(body_fun).parameters)
    except (TypeError, ValueError):
        params = []
    carry_name = params[0] if params else None

    def component(path: tuple[Any, ...]) -> str:
        where = tree_util.keystr(path)
        if carry_name:
            return f"the input carry component {carry_name}{where}" if path else f"the input carry {carry_name}"
        return f"the input carry at path {where}" if path else "the input carry"

    if in_tree != out_tree:
        in_carry = tree_util.tree_unflatten(in_tree, in_avals)
        out_carry = tree_util.tree_unflatten(out_tree, out_avals)
        diffs = [
            f"{component(path)} is a {thing1} but the corresponding component of the carry output is a {thing2}, so {why}"
            for path, thing1, thing2, why in _structure_differences(in_carry, out_carry)
        ]
        if not diffs:
            return  # same structure up to node metadata JAX does not compare
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree structure, but they differ:\n\n"
            f"{_listed(diffs)}\n"
            "Revise the function so that the carry output has the same pytree structure as the carry input."
        )
    paths = [p for p, _ in tree_util.tree_flatten_with_path(tree_util.tree_unflatten(in_tree, in_avals))[0]]
    diffs = [
        f"{component(path)} has type {a.str_short(short_dtypes=False)} but the corresponding output carry "
        f"component has type {b.str_short(short_dtypes=False)}{_mismatch(a, b)}"
        for path, a, b in zip(paths, in_avals, out_avals)
        if not _typematch(a, b)
    ]
    if diffs:
        raise TypeError(
            f"{name} function carry input and carry output must have equal types, but they differ:\n\n"
            f"{_listed(diffs)}\n"
            "Revise the function so that all output types match the corresponding input types."
        )


def _listed(diffs: Sequence[str]) -> str:
    if len(diffs) == 1:
        return f"{diffs[0][0].upper()}{diffs[0][1:]}.\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def _mismatch(a: ShapedArray, b: ShapedArray) -> str:
    checks = (("the dtypes do not match", a.dtype != b.dtype), ("the shapes do not match", a.shape != b.shape))
    found = [what for what, differs in checks if differs]
    if not found:
        return ""
    return ", so " + (found[0] if len(found) == 1 else ", ".join(found[:-1]) + ", and " + found[-1])


Difference = tuple[tuple[Any, ...], str, str, str]


def _structure_differences(t1: Any, t2: Any, path: tuple[Any, ...] = ()) -> list[Difference]:
    """Where two pytrees (of avals) differ in structure: (path, what 1 is, what 2 is, why), as JAX words it."""
    if isinstance(t1, ShapedArray) and isinstance(t2, ShapedArray):
        return []
    if type(t1) is not type(t2):
        return [(path, str(type(t1)), str(type(t2)), "their Python types differ")]
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        what1, what2 = f"{type(t1).__name__} of length {len(t1)}", f"{type(t2).__name__} of length {len(t2)}"
        return [(path, what1, what2, "the lengths do not match")]
    kids1, meta1 = tree_util.flatten_one_level(t1)
    kids2, meta2 = tree_util.flatten_one_level(t2)
    kids1, kids2 = list(kids1), list(kids2)
    keys1, keys2 = _child_keys(t1), _child_keys(t2)
    if len(kids1) != len(kids2):
        extra = " ".join(repr(getattr(k, "key", k)) for k in set(keys1) ^ set(keys2))
        why = "the numbers of children do not match"
        if extra:
            why += f", with the symmetric difference of key sets: {{{extra}}}"
        return [(path, f"{type(t1)} with {_children(len(kids1))}", f"{type(t2)} with {_children(len(kids2))}", why)]
    if meta1 != meta2:
        what1 = f"{type(t1)} with pytree metadata {_meta(meta1)}"
        what2 = f"{type(t2)} with pytree metadata {_meta(meta2)}"
        return [(path, what1, what2, "the pytree node metadata does not match")]
    found = []
    for key, k1, k2 in zip(keys1, kids1, kids2):
        found += _structure_differences(k1, k2, (*path, key))
    return found


def _children(n: int) -> str:
    return f"{n} child{'ren' if n > 1 else ''}"


def _meta(meta: Any) -> str:
    return str(tuple(meta)) if isinstance(meta, list) else str(meta)  # a dict's keys, shown as JAX's tuple


def _child_keys(tree: Any) -> list[Any]:
    pairs = tree_util.tree_flatten_with_path(tree, is_leaf=lambda x: x is not tree)[0]
    return [p[0] for p, _ in pairs]


# ---------------------------------------------------------------------------
# fori_loop


def fori_loop(
    lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, *, unroll: int | bool | None = None
) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``, staged; returns ``val``.

    With a static trip count (``lower`` and ``upper`` concrete) this is a
    ``scan`` over ``upper - lower`` steps, so ``grad`` works through it;
    otherwise a ``while_loop`` over ``(i, upper, val)``, which is forward-mode
    differentiable only. ``unroll`` applies to the scan form only.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    dtype = _bounds_dtype(lower, upper)
    if _is_concrete(lower) and _is_concrete(upper):
        try:
            start, stop = int(lower), int(upper)
        except TypeError:
            pass
        else:
            return _fori_scan(start, stop, body_fun, init_val, unroll)
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    lower, upper = _with_dtype(lower, dtype), _with_dtype(upper, dtype)

    def while_body(loop_carry: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        from minijax import lax

        i, stop, x = loop_carry
        return lax.add(i, np.ones((), get_aval(i).dtype)[()]), stop, body_fun(i, x)

    # Errors inside the body name body_fun and its arguments (the bound is unnamed).
    names = arg_names_of(body_fun, (0, init_val), {})
    info = DebugInfo(body_fun, [names[0], "", *names[1:]], "fori_loop")
    _, _, result = _while_loop(_fori_cond, while_body, (lower, upper, init_val), "fori_loop", info)
    return result


def _fori_cond(loop_carry: tuple[Any, Any, Any]) -> Any:
    from minijax import lax

    i, stop, _ = loop_carry
    return lax.lt(i, stop)


def _fori_scan(
    start: int, stop: int, body_fun: Callable[[Any, Any], Any], init_val: Any, unroll: int | bool | None
) -> Any:
    """The static-trip-count form: ``scan`` over ``(i, val)`` for ``max(stop - start, 0)`` steps."""
    from minijax.lax.control_flow.scan import scan  # (imported when used: the scan module may use loops too)

    length = max(stop - start, 0)
    if config_module.read("jax_disable_jit") and length == 0:
        return init_val

    def scanned(loop_carry: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], None]:
        i, x = loop_carry
        return (i + 1, body_fun(i, x)), None

    # Errors name body_fun and where it is defined, and the carry as
    # ``loop_carry`` (scan reads the name and source through __wrapped__, the
    # parameters from __signature__), as JAX's do.
    signature = inspect.signature(scanned)
    scanned.__wrapped__ = body_fun  # type: ignore[attr-defined]
    scanned.__signature__ = signature  # type: ignore[attr-defined]
    scanned.__name__ = getattr(body_fun, "__name__", scanned.__name__)
    (_, result), _ = scan(scanned, (start, init_val), None, length=length, unroll=False if unroll is None else unroll)
    return result


def _bounds_dtype(lower: Any, upper: Any) -> np.dtype[Any]:
    """The loop index's dtype: the bounds' (a weak Python int takes the other bound's)."""
    lo, hi = dtypes.dtype(lower, canonicalize=True), dtypes.dtype(upper, canonicalize=True)
    if lo == hi:
        return lo
    if dtypes.issubdtype(lo, np.signedinteger) and dtypes.issubdtype(hi, np.signedinteger):
        lo_weak, hi_weak = dtypes.is_weakly_typed(lower), dtypes.is_weakly_typed(upper)
        if lo_weak and not hi_weak:
            return hi
        if hi_weak and not lo_weak:
            return lo
    raise TypeError(f"lower and upper arguments to fori_loop must have equal types, got {lo.name} and {hi.name}")


def _with_dtype(x: Any, dtype: np.dtype[Any]) -> Any:
    if dtypes.dtype(x, canonicalize=True) == dtype:
        return x
    if isinstance(x, Tracer):
        from minijax import lax

        return lax.convert_element_type(x, dtype)
    return np.asarray(x, dtype=dtype)[()]


def _is_concrete(x: Any) -> bool:
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


# ---------------------------------------------------------------------------
# Autodiff


def _carry_nonzeros(body: ClosedJaxpr, bconst_nz: list[bool], init_nz: list[bool]) -> list[bool]:
    """Which carries have a nonzero tangent in some iteration: the least fixpoint over the body."""
    carry_nz = list(init_nz)
    for _ in range(len(carry_nz) + 1):
        _, out_nz = ad.jvp_jaxpr(body, bconst_nz + carry_nz, instantiate=carry_nz)
        grown = [a or b for a, b in zip(carry_nz, out_nz)]
        if grown == carry_nz:
            return carry_nz
        carry_nz = grown
    raise RuntimeError("while jvp: the nonzero-tangent fixpoint did not converge")  # each round grows the set


def _while_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    cond_jaxpr: ClosedJaxpr = params["cond_jaxpr"]
    body_jaxpr: ClosedJaxpr = params["body_jaxpr"]
    n_cc, n_bc = params["cond_nconsts"], params["body_nconsts"]
    nonzeros = [type(t) is not Zero for t in tangents]
    _, bconst_nz, init_nz = _split3(nonzeros, n_cc, n_bc)
    carry_nz = _carry_nonzeros(body_jaxpr, bconst_nz, init_nz)
    cconsts, bconsts, init = _split3(primals, n_cc, n_bc)
    n_carry = len(init)
    if not any(bconst_nz) and not any(carry_nz):  # only the predicate's constants vary
        with set_current_trace(trace.parent):
            return list(while_p.bind(*primals, **params))
    body_jvp, _ = ad.jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, instantiate=carry_nz)
    n_bdot = sum(bconst_nz)
    # jvp_jaxpr takes (consts, carry, const tangents, carry tangents); the
    # while needs the constants first: (consts, const tangents, carry, carry tangents).
    jvp = body_jvp.jaxpr
    bconsts_in = jvp.invars[:n_bc]
    carry_in, bconst_dots_in, carry_dots_in = _split3(jvp.invars[n_bc:], n_carry, n_bdot)
    reordered = [*bconsts_in, *bconst_dots_in, *carry_in, *carry_dots_in]
    body_jvp = ClosedJaxpr(Jaxpr(jvp.constvars, reordered, jvp.outvars, jvp.eqns), body_jvp.consts)
    carry_avals = body_jaxpr.out_avals
    # The predicate reads only the primal carry; it takes the tangents and ignores them.
    extra = [ad.tangent_aval(a) for a, nz in zip(carry_avals, carry_nz) if nz]
    cond_jvp = ClosedJaxpr(_renamed(cond_jaxpr.jaxpr, extra), cond_jaxpr.consts)
    _, bconst_t, init_t = _split3(tangents, n_cc, n_bc)
    bconst_dot = [t for t in bconst_t if type(t) is not Zero]
    with set_current_trace(trace.parent):  # a zero tangent that must be carried is made on the primal side
        init_dot = [ad.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz) if nz]
    jvp_params = dict(cond_jaxpr=cond_jvp, body_jaxpr=body_jvp, cond_nconsts=n_cc, body_nconsts=n_bc + n_bdot)
    operands = [*cconsts, *bconsts, *bconst_dot, *init, *init_dot]
    if not trace.linearizing:
        with set_current_trace(trace.parent):
            outs = while_p.bind(*operands, **jvp_params)
        primal_outs = outs[:n_carry]
    else:
        # The primal loop runs on the primal side; the tangent side stages the
        # whole jvp loop, recomputing the primal carry (JAX's partial
        # evaluation of a while does the same: a loop saves no residuals).
        known = _primal_body(body_jaxpr, bconst_nz + carry_nz, carry_nz)
        with set_current_trace(trace.parent):
            primal_outs = while_p.bind(*cconsts, *bconsts, *init, **{**params, "body_jaxpr": known})
        with set_current_trace(trace.tangent_side):
            outs = while_p.bind(*operands, **jvp_params)
    out_tangents = iter(outs[n_carry:])
    return [
        trace.wrap(p, next(out_tangents) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip(primal_outs, carry_avals, carry_nz)
    ]


def _renamed(jaxpr: Jaxpr, extra_inputs: Sequence[ShapedArray]) -> Jaxpr:
    """A copy of ``jaxpr`` with variables of its own, taking ``extra_inputs`` more (unused) inputs.

    Its own variables print with names of their own, as JAX's copy does,
    when the original is printed in the same program.
    """
    env: dict[Var, Var] = {}

    def bind(v: Var) -> Var:
        new = env[v] = DropVar(v.aval) if isinstance(v, DropVar) else Var(v.aval)
        return new

    def read(a: Atom) -> Atom:
        return a if isinstance(a, Literal) else env[a]

    constvars = [bind(v) for v in jaxpr.constvars]
    invars = [*(bind(v) for v in jaxpr.invars), *(Var(a) for a in extra_inputs)]
    eqns = [JaxprEqn([read(a) for a in e.invars], [bind(v) for v in e.outvars], e.primitive, e.params)
            for e in jaxpr.eqns]  # fmt: skip
    return Jaxpr(constvars, invars, [read(a) for a in jaxpr.outvars], eqns)


def _primal_body(body: ClosedJaxpr, nonzeros: list[bool], instantiate: list[bool]) -> ClosedJaxpr:
    """The primal side of the linearized body: the primal outputs, computed with
    everything the tangents would read (JAX's known part of the jvp body)."""

    def known(*xs: Any) -> list[Any]:
        outs, lin = ad.linearize_flat(ad.closed_call(body), xs, linear=nonzeros)
        for a, zero, inst in zip(lin.out_avals, lin.out_zeros, instantiate):
            if zero and inst:
                ad.zeros_like_aval(a)  # the instantiated zero tangent is primal-side work in JAX too
        return outs

    closed, _ = trace_to_jaxpr(known, body.in_avals)
    return closed


ad.trace_jvp_rules[while_p] = _while_jvp


def _while_transpose(cts: Any, *args: Any, **params: Any) -> list[Any]:
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
        "start/stop values. Try using lax.scan, or using fori_loop with static start/stop."
    )


ad.transpose_rules[while_p] = _while_transpose


# ---------------------------------------------------------------------------
# Batching


def _while_batch(
    trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]
) -> tuple[Any, Any]:
    cond_jaxpr: ClosedJaxpr = params["cond_jaxpr"]
    body_jaxpr: ClosedJaxpr = params["body_jaxpr"]
    n_cc, n_bc = params["cond_nconsts"], params["body_nconsts"]
    size, name = trace.axis_size, trace.axis_name
    cconst_dims, bconst_dims, init_dims = _split3(dims, n_cc, n_bc)
    # Which carries are batched: those batched initially, and those the body
    # makes batched (from batched constants or other carries): a fixpoint.
    carry_bat = [d is not None for d in init_dims]
    for _ in range(len(carry_bat) + 1):
        _, out_dims = batching.batch_jaxpr(body_jaxpr, size, bconst_dims + _at(carry_bat, 0), axis_name=name)
        grown = [b or d is not None for b, d in zip(carry_bat, out_dims)]
        if grown == carry_bat:
            break
        carry_bat = grown
    _, (pred_dim,) = batching.batch_jaxpr(cond_jaxpr, size, cconst_dims + _at(carry_bat, 0), axis_name=name)
    if pred_dim is not None:
        # Lanes may finish at different iterations: every carry is batched
        # (leading), the loop runs while any lane's predicate holds, and a
        # finished lane keeps its value (the while primitive's batched predicate).
        carry_dims = _at([True] * len(carry_bat), 0)
        pred_out: list[batching.BatchDim] = [0]
    else:
        # One predicate for all lanes. After an enclosing vmap the predicate
        # may itself be an array: batched carries keep its shape as a prefix.
        carry_dims = _at(carry_bat, cond_jaxpr.out_avals[0].ndim)
        pred_out = [None]
    if all(d is None for d in (*dims, *carry_dims, *pred_out)):
        return while_p.bind(*vals, **params), [None] * len(init_dims)  # nothing batched, not even inside
    body_b, _ = batching.batch_jaxpr(body_jaxpr, size, bconst_dims + carry_dims, carry_dims, axis_name=name)
    cond_b, _ = batching.batch_jaxpr(cond_jaxpr, size, cconst_dims + carry_dims, pred_out, axis_name=name)
    consts = vals[: n_cc + n_bc]
    init = [_moved(x, d, want, size) for x, d, want in zip(vals[n_cc + n_bc :], init_dims, carry_dims)]
    outs = while_p.bind(*consts, *init, **{**params, "cond_jaxpr": cond_b, "body_jaxpr": body_b})
    return outs, carry_dims


def _moved(x: Any, dim: batching.BatchDim, want: batching.BatchDim, size: int) -> Any:
    """``x`` batched at ``want``: moved there, or broadcast when it was not batched."""
    if want is None or dim is not None:
        return x if want is None else batching.moveaxis(x, dim, want)  # type: ignore[arg-type]
    from minijax import lax

    shape = list(get_aval(x).shape)
    shape.insert(want, size)
    # JAX's batching.broadcast: the dimension numbers are NumPy ints (printed np.int64(..)).
    return lax.broadcast_in_dim(x, tuple(shape), tuple(np.delete(np.arange(len(shape)), want)))


def _at(batched: Sequence[bool], dim: int) -> list[batching.BatchDim]:
    return [dim if b else None for b in batched]


batching.axis_rules[while_p] = _while_batch
