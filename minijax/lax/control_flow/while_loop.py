"""``lax.while_loop`` and ``lax.fori_loop``: loops as one ``while`` (or ``scan``) equation.

``while_loop(cond_fun, body_fun, init_val)`` traces both functions on the
carry's abstract values and binds one ``while`` equation
(minijax/primitives/while_loop.py, where its rules are). Constants the
functions close over are leading operands. A carry the body passes through
unchanged and the predicate never reads is not carried: it becomes a body
constant and is returned as given (as JAX does).

``fori_loop`` with a static trip count is a ``scan`` (so that ``grad`` works
through it); otherwise a ``while`` over ``(i, upper, x)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import config as config_module, dtypes, tree_util
from minijax.core import ShapedArray, Tracer, get_aval, is_array_like
from minijax.errors import ConcretizationTypeError
from minijax.interpreters.tracing import DebugInfo, arg_names_of, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, Var
from minijax.jaxpr_passes import consts_as_inputs, dce_jaxpr, typematch
from minijax.lax.control_flow.common import asarray, check_carry_type, is_concrete, operand_aval
from minijax.lax.control_flow.scan import scan
from minijax.primitives import elementwise as ew
from minijax.primitives.while_loop import while_p
from minijax.state import Ref, closed_refs, lending, lent, values_of, write_back

__all__ = ["fori_loop", "while_loop"]

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
    refs = [*closed_refs(cond_fun), *(r for r in closed_refs(body_fun) if r not in closed_refs(cond_fun))]
    if refs and not config_module.read("jax_disable_jit"):
        return _while_with_refs(cond_fun, body_fun, init_val, body_for, body_info, refs)
    if config_module.read("jax_disable_jit"):
        try:
            val = tree_util.tree_map(asarray, init_val)
            while cond_fun(val):
                val = tree_util.tree_map(asarray, body_fun(val))
            return val
        except ConcretizationTypeError:
            pass  # a transformation's tracer decides the loop: stage it after all
    flat, in_tree = tree_util.tree_flatten(init_val)
    avals = [operand_aval(x) for x in flat]
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
    cond_closed, cond_consts = consts_as_inputs(traced.cond)
    body_closed, body_consts = consts_as_inputs(traced.body)
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


def _promote_weak(x: Any, in_aval: ShapedArray, out_aval: ShapedArray) -> Any:
    if not in_aval.weak_type or typematch(in_aval, out_aval):
        return x
    dtype = dtypes.result_type(x, out_aval)
    if isinstance(x, Tracer):
        return ew.convert_element_type(x, dtype)
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
    live_cond, _ = dce_jaxpr(cond.jaxpr, [True])
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
# fori_loop


def _while_with_refs(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any, body_for: str,
    body_info: DebugInfo | None, refs: list[Ref],
) -> Any:
    """A while loop whose functions close over Refs (issue 24): their values are carried
    along, lent to both functions in each step, and written back after the loop."""

    def cond(carry: tuple[Any, list[Any]]) -> Any:
        with lent(refs, carry[1]):
            return cond_fun(carry[0])

    def body(carry: tuple[Any, list[Any]]) -> tuple[Any, list[Any]]:
        with lent(refs, carry[1]):
            return body_fun(carry[0]), values_of(refs)

    val, finals = _while_loop(lending(cond, cond_fun), lending(body, body_fun), (init_val, values_of(refs)), body_for)
    write_back(refs, finals)
    return val


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
    if is_concrete(lower) and is_concrete(upper):
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
        i, stop, x = loop_carry
        return ew.add_p.bind(i, np.ones((), get_aval(i).dtype)[()]), stop, body_fun(i, x)

    # Errors inside the body name body_fun and its arguments (the bound is unnamed).
    names = arg_names_of(body_fun, (0, init_val), {})
    info = DebugInfo(body_fun, [names[0], "", *names[1:]], "fori_loop")
    _, _, result = _while_loop(_fori_cond, while_body, (lower, upper, init_val), "fori_loop", info)
    return result


def _fori_cond(loop_carry: tuple[Any, Any, Any]) -> Any:
    i, stop, _ = loop_carry
    return ew.lt_p.bind(i, stop)


def _fori_scan(
    start: int, stop: int, body_fun: Callable[[Any, Any], Any], init_val: Any, unroll: int | bool | None
) -> Any:
    """The static-trip-count form: ``scan`` over ``(i, val)`` for ``max(stop - start, 0)`` steps."""
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
        return ew.convert_element_type(x, dtype)
    return np.asarray(x, dtype=dtype)[()]
