"""``lax.scan`` and ``lax.map``: loop a function over the leading axis of arrays, as one ``scan`` equation.

``scan(*consts, *init, *xs, jaxpr=body, length=n, num_consts=nc, num_carry=nk,
reverse=r, unroll=u)`` evaluates ``body(*consts, *carry, *x_i) -> (*carry, *y_i)``
for ``i = 0 .. n-1`` (``n-1 .. 0`` when reversed), threading ``carry`` from
``init`` and stacking the ``y_i`` into ``ys``; it returns ``(*carry, *ys)``.
``unroll`` only says how many iterations a backend may run per loop trip.

The rules, each as JAX 0.10.2 has them (``spec/primitives/control_flow.md``):

- jvp: one scan of the body's jvp, its tangent carries chosen by a fixpoint
  (a carry's tangent is nonzero when its initial tangent is, or when the
  body makes it so).
- linearize: a *known* scan computes the outputs and stacks each
  iteration's residuals; residuals that only depend on the constants are
  computed once before the loop (the body is partially evaluated with the
  constants known). A *tangent* scan, staged on the tangent side, applies the
  body's linear map, reading the loop-invariant residuals as constants and the
  stacked ones as ``xs``.
- transpose: a scan in the other direction of the transposed body; the
  cotangents of the linear constants are accumulated in its carry.
- batching: a scan of the batched body; a carry becomes batched from the start
  when the body batches it (fixpoint); ``xs`` and ``ys`` are batched along
  axis 1.

The jaxpr is the same size whatever the trip count. Both backends evaluate it
as a loop (``backends/minijax_numpy/scan.py``, ``backends/minijax_xla/rules_scan.py``).
"""

from __future__ import annotations

import collections
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import config as config_module, core, dtypes, tree_util
from minijax.array import Array
from minijax.core import Primitive, ShapedArray, Trace, Tracer, get_aval, is_array_like, set_current_trace
from minijax.dispatch import device_put_value, eager_rules
from minijax.errors import ConcretizationTypeError
from minijax.interpreters import ad, batching
from minijax.interpreters.ad import JVPTrace, UndefinedPrimal, Zero, is_undefined_primal
from minijax.interpreters.tracing import (
    DebugInfo,
    DynamicJaxprTracer,
    arg_names_of,
    hoist_tracer_consts,
    trace_to_jaxpr,
)
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, subjaxprs

# ---------------------------------------------------------------------------
# The primitive


def _typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Same type up to weak typing (JAX's ``typematch``)."""
    return a.shape == b.shape and a.dtype == b.dtype


def _avals_short(avals: Sequence[ShapedArray]) -> str:
    return " ".join(a.str_short() for a in avals)


def _split(xs: Sequence[Any], *sizes: int) -> list[list[Any]]:
    """``xs`` cut into consecutive pieces of ``sizes``, and the rest."""
    parts, start = [], 0
    for n in sizes:
        parts.append(list(xs[start : start + n]))
        start += n
    parts.append(list(xs[start:]))
    return parts


def _unmapped(length: int, aval: ShapedArray) -> ShapedArray:
    return aval.update(shape=(length, *aval.shape))


def _mapped(aval: ShapedArray) -> ShapedArray:
    return aval.update(shape=aval.shape[1:])


def _scan_abstract_eval(
    *avals: ShapedArray, reverse: bool, length: int, num_consts: int, num_carry: int, jaxpr: ClosedJaxpr, unroll: int
) -> list[ShapedArray]:
    if not isinstance(jaxpr, ClosedJaxpr):  # scan C1
        raise TypeError(f"scan param jaxpr must be a ClosedJaxpr, got {type(jaxpr).__name__}")
    for name, value in (("length", length), ("num_consts", num_consts), ("num_carry", num_carry), ("unroll", unroll)):
        if type(value) is not int or value < 0:  # scan C1
            raise TypeError(f"scan param {name} must be a non-negative int, got {value!r}")
    if type(reverse) is not bool:  # scan C1
        raise TypeError(f"scan param reverse must be a bool, got {reverse!r}")
    if len(avals) != len(jaxpr.in_avals) or num_consts + num_carry > len(avals):  # scan C2
        raise TypeError(
            f"scan called with {len(avals)} operands but its jaxpr takes {len(jaxpr.in_avals)} inputs "
            f"(num_consts={num_consts}, num_carry={num_carry})"
        )
    if len(jaxpr.out_avals) < num_carry:  # scan C2
        raise TypeError(f"scan jaxpr returns {len(jaxpr.out_avals)} values, fewer than num_carry={num_carry}")
    consts, init, xs = _split(avals, num_consts, num_carry)
    body_consts, body_init, body_xs = _split(jaxpr.in_avals, num_consts, num_carry)
    carry_out, ys = _split(jaxpr.out_avals, num_carry)
    if not all(_typematch(a, b) for a, b in zip(body_init, carry_out)):  # scan C3
        raise TypeError(
            f"scan input carry input and output types mismatch:\n{_avals_short(body_init)}\nvs\n{_avals_short(carry_out)}"
        )
    if not all(_typematch(a, b) for a, b in zip(body_consts, consts)):  # scan C4
        raise TypeError(
            f"scan jaxpr takes input const types\n{_avals_short(body_consts)},\ncalled with consts of type\n{_avals_short(consts)}"
        )
    if not all(_typematch(a, b) for a, b in zip(body_init, init)):  # scan C4
        raise TypeError(
            f"scan jaxpr takes input carry types\n{_avals_short(body_init)},\n"
            f"called with initial carry of type\n{_avals_short(init)}"
        )
    if not all(x.ndim >= 1 and x.shape[0] == length and _typematch(b, _mapped(x)) for b, x in zip(body_xs, xs)):  # scan C5
        raise TypeError(
            f"scan jaxpr takes input sequence types\n{_avals_short(body_xs)},\n"
            f"called with sequences of type\n{_avals_short(xs)} (each with leading axis of length {length})"
        )
    return [*carry_out, *(_unmapped(length, y) for y in ys)]  # scan C6


scan_p = Primitive("scan", multiple_results=True)
core.abstract_eval_rules[scan_p] = _scan_abstract_eval


def _bind(
    consts: Sequence[Any], init: Sequence[Any], xs: Sequence[Any], jaxpr: ClosedJaxpr, length: int, reverse: bool, unroll: int
) -> list[Any]:
    """Bind ``scan`` on the current trace. Constants of ``jaxpr`` that are tracers
    (of an enclosing transformation) become leading ``consts`` operands."""
    jaxpr, tracer_consts = hoist_tracer_consts(jaxpr)
    consts = [*tracer_consts, *consts]
    out: list[Any] = scan_p.bind(
        *consts, *init, *xs,
        reverse=reverse, length=length, num_consts=len(consts), num_carry=len(init), jaxpr=jaxpr, unroll=unroll,
    )  # fmt: skip
    return out


# ---------------------------------------------------------------------------
# Eager evaluation: compile the one equation (a loop) and run it

# Each lax.scan call traces a new body, so compiled scans are rarely reused;
# the few most recent are kept (the key holds the body, so its id stays its own).
_EAGER_CACHE_SIZE = 32
_eager_cache: collections.OrderedDict[tuple[Any, ...], tuple[ClosedJaxpr, Any]] = collections.OrderedDict()


def _scan_eager(backend: Any, arrays: Sequence[Array], params: dict[str, Any]) -> list[Array]:
    from minijax.backend import default_device_of

    device = arrays[0]._device if arrays else default_device_of(backend)
    committed = any(a._committed for a in arrays)
    in_avals = [a.aval for a in arrays]
    out_avals = _scan_abstract_eval(*in_avals, **params)
    key = (id(params["jaxpr"]), *sorted((k, v) for k, v in params.items() if k != "jaxpr"), *in_avals, device)
    entry = _eager_cache.get(key)
    if entry is None or entry[0] is not params["jaxpr"]:
        invars = [Var(a) for a in in_avals]
        outvars = [Var(a) for a in out_avals]
        closed = ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(list(invars), outvars, scan_p, dict(params))]), [])
        if device is backend.devices()[0]:
            executable = backend.compile(closed)
        else:
            executable = backend.compile(closed, device=device)  # type: ignore[call-arg]
        entry = _eager_cache[key] = (params["jaxpr"], executable)
        if len(_eager_cache) > _EAGER_CACHE_SIZE:
            _eager_cache.popitem(last=False)
    else:
        _eager_cache.move_to_end(key)
    bufs = entry[1]([a._buf for a in arrays])
    return [Array(b, aval, backend, device, committed) for b, aval in zip(bufs, out_avals)]


eager_rules[scan_p] = _scan_eager


# ---------------------------------------------------------------------------
# lax.scan


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
) -> tuple[Any, Any]:
    """Loop ``f`` over the leading axis of ``xs`` while carrying state: ``(carry, ys)``.

    ``f(carry, x) -> (carry, y)``; ``init`` and ``xs`` (and what ``f``
    returns) may be pytrees. The carry must keep its pytree structure, shapes
    and dtypes across iterations. ``ys`` stacks the ``y`` of every iteration
    along a new leading axis. ``reverse=True`` runs from the last element to
    the first (``ys`` stays in element order); ``length`` is needed when
    ``xs`` is None. ``f`` is traced once, so the program has the same size
    for any trip count.
    """
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    init_flat, init_tree = tree_util.tree_flatten(init)
    xs_flat, xs_tree = tree_util.tree_flatten(xs)
    length = _infer_length(xs_flat, length)
    if config_module.read("jax_disable_jit"):
        return _scan_python(f, init, xs_flat, xs_tree, length, reverse)
    init_avals = [_operand_aval(x) for x in init_flat]
    x_avals = [_mapped(_operand_aval(x)) for x in xs_flat]
    debug = DebugInfo(f, arg_names_of(f, (init, xs), {}), "scan")

    traced = _trace_body(f, init_tree, xs_tree, init_avals, x_avals, debug)
    carry_avals, carry_tree = traced.out_avals[: traced.num_carry], traced.carry_tree
    if len(carry_avals) != len(init_avals):
        _check_carry_type(f, init_tree, init_avals, carry_tree, carry_avals)
    # A weakly typed initial carry (a Python scalar) takes the type the body
    # gives it, and the body is traced again (JAX's two passes).
    promoted = [_promote_weak(x, a, out) for x, a, out in zip(init_flat, init_avals, carry_avals)]
    if any(changed for _, changed in promoted):
        init_flat = [x for x, _ in promoted]
        init_avals = [_operand_aval(x) for x in init_flat]
        traced = _trace_body(f, init_tree, xs_tree, init_avals, x_avals, debug)
        carry_avals, carry_tree = traced.out_avals[: traced.num_carry], traced.carry_tree
    _check_carry_type(f, init_tree, init_avals, carry_tree, carry_avals)
    unroll = _check_unroll(unroll, length)

    jaxpr, consts = ad.consts_as_inputs(traced.closed)
    num_carry, num_ys = len(init_flat), len(traced.out_avals) - len(init_flat)
    # A carry the body returns unchanged is a constant: it moves to the consts.
    unchanged = _forwarded_carries(jaxpr.jaxpr, len(consts), num_carry)
    if any(unchanged):
        jaxpr = _drop_carries(jaxpr, len(consts), unchanged)
        consts = [*(x for x, u in zip(init_flat, unchanged) if u), *consts]
    carries = [x for x, u in zip(init_flat, unchanged) if not u]
    # An output that is just an input sequence is that sequence (not copied by the loop).
    ys_from_xs = _forwarded_xs(jaxpr.jaxpr, len(consts) + len(carries), len(carries))
    jaxpr = ClosedJaxpr(_keep_outputs(jaxpr.jaxpr, [True] * len(carries) + [i is None for i in ys_from_xs]), jaxpr.consts)
    outs = iter(_bind(consts, carries, xs_flat, jaxpr, length, reverse, unroll))
    carry_out = [x if u else next(outs) for x, u in zip(init_flat, unchanged)]
    ys = [next(outs) if i is None else _asarray(xs_flat[i]) for i in ys_from_xs]
    assert len(ys) == num_ys
    return tree_util.tree_unflatten(carry_tree, carry_out), tree_util.tree_unflatten(traced.ys_tree, ys)


class _TracedBody:
    """The body traced on the carry and ``x`` avals: its jaxpr and output structure."""

    def __init__(self, closed: ClosedJaxpr, carry_tree: tree_util.PyTreeDef, ys_tree: tree_util.PyTreeDef, num_carry: int) -> None:
        self.closed = closed
        self.carry_tree = carry_tree
        self.ys_tree = ys_tree
        self.num_carry = num_carry
        self.out_avals = closed.out_avals


def _trace_body(
    f: Callable[..., Any],
    init_tree: tree_util.PyTreeDef,
    xs_tree: tree_util.PyTreeDef,
    init_avals: Sequence[ShapedArray],
    x_avals: Sequence[ShapedArray],
    debug: DebugInfo,
) -> _TracedBody:
    trees: list[tuple[tree_util.PyTreeDef, tree_util.PyTreeDef, int]] = []
    n_carry = len(init_avals)

    def flat_body(*args: Any) -> list[Any]:
        carry = tree_util.tree_unflatten(init_tree, args[:n_carry])
        x = tree_util.tree_unflatten(xs_tree, args[n_carry:])
        out = f(carry, x)
        for path, leaf in tree_util.tree_flatten_with_path(out)[0]:
            if not is_array_like(leaf):
                raise TypeError(
                    f"function {debug.func_src} traced for scan returned a value of type {type(leaf)} "
                    f"at output component {tree_util.keystr(path)}, which is not a valid JAX type"
                )
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"scan body output must be a pair, got {_describe_output(out)}.")
        carry_leaves, carry_tree = tree_util.tree_flatten(out[0])
        y_leaves, ys_tree = tree_util.tree_flatten(out[1])
        trees.append((carry_tree, ys_tree, len(carry_leaves)))
        return [*carry_leaves, *y_leaves]

    closed, _ = trace_to_jaxpr(flat_body, [*init_avals, *x_avals], debug)
    carry_tree, ys_tree, num_carry = trees[0]
    return _TracedBody(closed, carry_tree, ys_tree, num_carry)


def _describe_output(out: Any) -> str:
    # JAX shows the output's abstract values: a lone array as ``~float32[]``.
    if is_array_like(out):
        aval = get_aval(out)
        return ("~" if aval.weak_type else "") + aval.str_short(short_dtypes=False)
    return str(tree_util.tree_map(lambda x: get_aval(x) if is_array_like(x) else x, out))


def _operand_aval(x: Any) -> ShapedArray:
    if not is_array_like(x):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
    return get_aval(x)


def _infer_length(xs_flat: Sequence[Any], length: Any) -> int:
    if not all(hasattr(x, "shape") for x in xs_flat):
        listed = ", ".join(str(x) for x in xs_flat if not hasattr(x, "shape"))
        raise ValueError(f"scan got value with no leading axis to scan over: {listed}.")
    for x in xs_flat:
        if not x.shape:  # JAX's IndexError, with a message
            raise IndexError(
                f"scan got a value with no leading axis to scan over: {x} has shape (); every leaf of xs "
                "needs a leading axis, of the scan's length."
            )
    lengths = [x.shape[0] for x in xs_flat]
    if length is not None:
        if isinstance(length, Tracer) and length.to_concrete_value() is None:
            raise ConcretizationTypeError(
                length,
                "The `length` argument to `scan` expects a concrete `int` value. For scan-like "
                "iteration with a dynamic length, use `while_loop` or `fori_loop`.",
            )
        n = int(length)
        if not all(n == m for m in lengths):
            raise ValueError(f"scan got `length` argument of {n} which disagrees with leading axis sizes {lengths}.")
        return n
    if len(set(lengths)) > 1:
        raise ValueError(f"scan got values with different leading axis sizes: {', '.join(str(n) for n in lengths)}.")
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return int(lengths[0])


def _check_unroll(unroll: Any, length: int) -> int:
    if isinstance(unroll, Tracer) and unroll.to_concrete_value() is None:
        raise ConcretizationTypeError(unroll, "The `unroll` argument to `scan` expects a concrete `int` or `bool` value.")
    if isinstance(unroll, (bool, np.bool_)):
        return max(length, 1) if unroll else 1
    n = int(unroll)
    if n < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return n


def _promote_weak(x: Any, aval: ShapedArray, out: ShapedArray) -> tuple[Any, bool]:
    if aval.weak_type and not _typematch(aval, out):
        from minijax import lax

        return lax.convert_element_type(x, dtypes.result_type(x, out)), True
    return x, False


def _forwarded_carries(jaxpr: Jaxpr, num_consts: int, num_carry: int) -> list[bool]:
    """For each carry: does the body return its input carry unchanged?"""
    return [jaxpr.outvars[i] is jaxpr.invars[num_consts + i] for i in range(num_carry)]


def _drop_carries(closed: ClosedJaxpr, num_consts: int, unchanged: Sequence[bool]) -> ClosedJaxpr:
    """The body with the unchanged carries turned into its leading constants."""
    jaxpr = closed.jaxpr
    consts, carry, xs = _split(jaxpr.invars, num_consts, len(unchanged))
    moved = [v for v, u in zip(carry, unchanged) if u]
    kept = [v for v, u in zip(carry, unchanged) if not u]
    outs = [v for v, u in zip(jaxpr.outvars, unchanged) if not u] + jaxpr.outvars[len(unchanged) :]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, [*moved, *consts, *kept, *xs], outs, jaxpr.eqns), closed.consts)


def _forwarded_xs(jaxpr: Jaxpr, first_x: int, num_carry: int) -> list[int | None]:
    """For each ``y``: the index of the ``x`` it is (None when computed)."""
    where = {v: i for i, v in enumerate(jaxpr.invars[first_x:])}
    return [where.get(v) if isinstance(v, Var) else None for v in jaxpr.outvars[num_carry:]]


def _keep_outputs(jaxpr: Jaxpr, keep: Sequence[bool]) -> Jaxpr:
    if all(keep):
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, [v for v, k in zip(jaxpr.outvars, keep) if k], jaxpr.eqns)


def _asarray(x: Any) -> Any:
    """An input sequence returned as an output: as an array."""
    if isinstance(x, (Array, Tracer)):
        return x
    return device_put_value(np.asarray(x, dtype=get_aval(x).dtype))


def _scan_python(f: Callable[..., Any], init: Any, xs_flat: list[Any], xs_tree: tree_util.PyTreeDef, length: int, reverse: bool) -> tuple[Any, Any]:
    """Under ``disable_jit``: a Python loop calling ``f`` on each slice."""
    from minijax import lax

    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because the output type is unknown.")
    carry, ys = init, []
    order = reversed(range(length)) if reverse else range(length)
    for i in order:
        x = tree_util.tree_unflatten(xs_tree, [lax.index_in_dim(x, i, keepdims=False) for x in xs_flat])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = tree_util.tree_map(lambda *leaves: lax.concatenate([lax.expand_dims(y, (0,)) for y in leaves], 0), *ys)
    return carry, stacked


# --- the carry-type error ---------------------------------------------------------


def _check_carry_type(
    f: Any,
    in_tree: tree_util.PyTreeDef,
    in_avals: Sequence[ShapedArray],
    out_tree: tree_util.PyTreeDef,
    out_avals: Sequence[ShapedArray],
) -> None:
    """Raise JAX's TypeError when the body changes the carry's structure or types, showing both."""
    try:
        name: str | None = next(iter(inspect.signature(f).parameters))
    except (ValueError, TypeError, StopIteration):
        name = None

    def component(path: tuple[Any, ...]) -> str:
        if name:
            return f"the input carry component {name}{tree_util.keystr(path)}" if path else f"the input carry {name}"
        return f"the input carry at path {tree_util.keystr(path)}" if path else "the input carry"

    if in_tree != out_tree:
        diffs = [
            f"{component(path)} is a {thing1} but the corresponding component of the carry output is a {thing2}, so {why}"
            for path, thing1, thing2, why in _structure_differences(
                tree_util.tree_unflatten(in_tree, in_avals), tree_util.tree_unflatten(out_tree, out_avals)
            )
        ]
        if diffs:
            raise TypeError(
                "scan body function carry input and carry output must have the same pytree structure, "
                f"but they differ:\n\n{_listed(diffs)}\n"
                "Revise the function so that the carry output has the same pytree structure as the carry input."
            )
        return
    paths = [p for p, _ in tree_util.tree_flatten_with_path(tree_util.tree_unflatten(in_tree, in_avals))[0]]
    diffs = [
        f"{component(path)} has type {a.str_short(short_dtypes=False)} but the corresponding output carry "
        f"component has type {b.str_short(short_dtypes=False)}{_mismatch(a, b)}"
        for path, a, b in zip(paths, in_avals, out_avals)
        if not _typematch(a, b)
    ]
    if diffs:
        raise TypeError(
            "scan body function carry input and carry output must have equal types, but they differ:\n\n"
            f"{_listed(diffs)}\nRevise the function so that all output types match the corresponding input types."
        )


def _listed(diffs: Sequence[str]) -> str:
    if len(diffs) == 1:
        return f"{diffs[0][0].upper()}{diffs[0][1:]}.\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def _mismatch(a: ShapedArray, b: ShapedArray) -> str:
    problems = [p for p, bad in (("the dtypes do not match", a.dtype != b.dtype), ("the shapes do not match", a.shape != b.shape)) if bad]
    if len(problems) == 2:
        return f", so {problems[0]}, and {problems[1]}"
    return f", so {problems[0]}" if problems else ""


def _structure_differences(t1: Any, t2: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str, str, str]]:
    """Where two pytrees (with abstract values as leaves) differ in structure, as JAX words it."""
    leaf1, leaf2 = isinstance(t1, ShapedArray), isinstance(t2, ShapedArray)
    if leaf1 and leaf2:
        return []
    if type(t1) is not type(t2):
        return [(path, str(type(t1)), str(type(t2)), "their Python types differ")]
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        return [(path, f"{type(t1).__name__} of length {len(t1)}", f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")]
    kids1 = tree_util.tree_flatten_with_path(t1, is_leaf=lambda x: x is not t1)[0]
    kids2 = tree_util.tree_flatten_with_path(t2, is_leaf=lambda x: x is not t2)[0]
    if len(kids1) != len(kids2):
        keys = {p[0] for p, _ in kids1} ^ {p[0] for p, _ in kids2}
        extra = " ".join(sorted(repr(k.key) for k in keys if hasattr(k, "key")))

        def children(n: int) -> str:
            return f"{n} child{'ren' if n > 1 else ''}"

        why = "the numbers of children do not match" + (f", with the symmetric difference of key sets: {{{extra}}}" if extra else "")
        return [(path, f"{type(t1)} with {children(len(kids1))}", f"{type(t2)} with {children(len(kids2))}", why)]
    found = []
    for (p1, k1), (_, k2) in zip(kids1, kids2):
        found += _structure_differences(k1, k2, (*path, *p1))
    return found


# ---------------------------------------------------------------------------
# lax.map


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001 (JAX's name)
    """``f`` applied to each slice of ``xs`` along its leading axis, results stacked.

    A ``scan`` with no carry. With ``batch_size`` the slices are taken in
    groups of that size, each group vmapped (the remainder, if any, in one
    more vmapped call); ``batch_size=0`` vmaps the whole axis at once.
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    from minijax import lax
    from minijax.vectorization import vmap

    scan_xs, rest_xs = _batch_and_remainder(xs, batch_size)
    scan_ys = scan(lambda _, x: ((), vmap(f)(x)), (), scan_xs)[1] if scan_xs is not None else None

    def flatten(y: Any) -> Any:
        return y.reshape(-1, *y.shape[2:])

    if scan_ys is None:
        return vmap(f)(rest_xs)
    if rest_xs is None:
        return tree_util.tree_map(flatten, scan_ys)
    rest_ys = vmap(f)(rest_xs)
    return tree_util.tree_map(lambda y, r: lax.concatenate([flatten(y), r], 0), scan_ys, rest_ys)


def _batch_and_remainder(xs: Any, batch_size: int) -> tuple[Any, Any]:
    """``xs`` as (groups of ``batch_size`` stacked, or None; the leftover slices, or None)."""
    leaves, tree = tree_util.tree_flatten(xs)
    if not leaves:
        return xs, None
    n = int(leaves[0].shape[0])
    num_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    used = num_batches * batch_size
    scanned = None
    if num_batches:
        scanned = tree.unflatten([x[:used].reshape(num_batches, batch_size, *x.shape[1:]) for x in leaves])
    rest = tree.unflatten([x[used:] for x in leaves]) if remainder else None
    return scanned, rest


# ---------------------------------------------------------------------------
# Jaxpr utilities the rules share


def _has_effects(eqn: JaxprEqn) -> bool:
    if eqn.primitive in ad.effectful_primitives:
        return True
    return any(_has_effects(e) for sub in subjaxprs(eqn.params) for e in sub.eqns)


def _dce(jaxpr: Jaxpr, used_outputs: Sequence[bool]) -> tuple[Jaxpr, list[bool]]:
    """``jaxpr`` keeping only the used outputs and the equations they (or effects)
    need, and which of its inputs it still reads (all inputs stay binders).
    An equation holding jaxprs is kept or dropped whole."""
    outvars = [v for v, used in zip(jaxpr.outvars, used_outputs) if used]
    live = {v for v in outvars if isinstance(v, Var)}
    kept: list[JaxprEqn] = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars) or _has_effects(eqn):
            kept.append(eqn)
            live.update(a for a in eqn.invars if isinstance(a, Var))
    kept.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, kept), [v in live for v in jaxpr.invars]


def _dce_closed(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` without dead equations and unused constants (inputs and outputs kept)."""
    jaxpr, _ = _dce(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
    live = {a for e in jaxpr.eqns for a in e.invars if isinstance(a, Var)} | {v for v in jaxpr.outvars if isinstance(v, Var)}
    used = [v in live for v in jaxpr.constvars]
    return ClosedJaxpr(
        Jaxpr([v for v, u in zip(jaxpr.constvars, used) if u], jaxpr.invars, jaxpr.outvars, jaxpr.eqns),
        [c for c, u in zip(closed.consts, used) if u],
    )


def _dce_scan(
    closed: ClosedJaxpr, num_consts: int, num_carry: int, used_outputs: Sequence[bool]
) -> tuple[ClosedJaxpr, list[bool], list[bool]]:
    """A scan body keeping only what the used outputs need: (body, used inputs, used outputs).

    A carry is kept when its output is used or when its value flows into a
    kept output (a fixpoint: keeping one carry may need another).
    """
    used_carry, used_ys = _split(used_outputs, num_carry)
    jaxpr = closed.jaxpr
    for _ in range(1 + num_carry):
        pruned, used_in = _dce(jaxpr, [*used_carry, *used_ys])
        reads_carry = _split(used_in, num_consts, num_carry)[1]
        if all(u or not r for u, r in zip(used_carry, reads_carry)):
            break
        used_carry = [u or r for u, r in zip(used_carry, reads_carry)]
    used_consts, _, used_xs = _split(used_in, num_consts, num_carry)
    used_inputs = [*used_consts, *used_carry, *used_xs]
    new = Jaxpr(pruned.constvars, [v for v, u in zip(jaxpr.invars, used_inputs) if u], pruned.outvars, pruned.eqns)
    return ClosedJaxpr(new, closed.consts), used_inputs, [*used_carry, *used_ys]


def _permuted(closed: ClosedJaxpr, in_order: Sequence[int], out_order: Sequence[int]) -> ClosedJaxpr:
    """``closed`` with its inputs and outputs taken in the given orders."""
    jaxpr = closed.jaxpr
    new = Jaxpr(jaxpr.constvars, [jaxpr.invars[i] for i in in_order], [jaxpr.outvars[i] for i in out_order], jaxpr.eqns)
    return ClosedJaxpr(new, closed.consts)


def _retyped_inputs(jaxpr: Jaxpr, avals: Sequence[ShapedArray | None]) -> Jaxpr:
    """``jaxpr`` whose inputs have the given types (None: unchanged), read by its equations."""
    subst: dict[Var, Var] = {}
    for v, a in zip(jaxpr.invars, avals):
        if a is not None and a != v.aval:
            subst[v] = Var(a)
    if not subst:
        return jaxpr

    def sub(x: Any) -> Any:
        return subst.get(x, x) if isinstance(x, Var) else x

    eqns = [e.replace(invars=[sub(a) for a in e.invars]) for e in jaxpr.eqns]
    return Jaxpr(jaxpr.constvars, [sub(v) for v in jaxpr.invars], [sub(v) for v in jaxpr.outvars], eqns)


def _groups(*sizes: int) -> list[list[int]]:
    """Consecutive index ranges of the given sizes: ``(2, 1) -> [[0, 1], [2]]``."""
    out, start = [], 0
    for n in sizes:
        out.append(list(range(start, start + n)))
        start += n
    return out


def _literal(atom: Literal) -> Any:
    """A literal's value, weakly typed when the literal is (a Python scalar then).

    ``minijax.jaxpr.eval_jaxpr`` reads literals as NumPy scalars, so a weak
    ``2.0`` replayed through it makes ``mul x 2.0`` strongly typed; JAX keeps
    it weak. The rules here replay bodies through ``_eval_jaxpr`` below.
    """
    if atom.aval.weak_type:
        value = np.asarray(atom.val).item()
        if get_aval(value) == atom.aval:
            return value
    return atom.val


def _eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """``eval_jaxpr`` keeping weakly typed literals weak (see ``_literal``)."""
    env: dict[Var, Any] = dict(zip([*jaxpr.constvars, *jaxpr.invars], [*consts, *args]))

    def read(a: Any) -> Any:
        return _literal(a) if isinstance(a, Literal) else env[a]

    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*(read(a) for a in eqn.invars), **eqn.params)
        for v, x in zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]):
            if not isinstance(v, DropVar):
                env[v] = x
    return [read(v) for v in jaxpr.outvars]


def _zeros_like(aval: ShapedArray) -> Any:
    """Zeros of ``aval``, weakly typed when ``aval`` is, as JAX makes them
    (``ad.zeros_like_aval`` makes strongly typed zeros)."""
    if aval.weak_type and aval.dtype != dtypes.float0:
        zero = np.zeros((), aval.dtype).item()  # a Python scalar: weakly typed
        if get_aval(zero) == aval.update(shape=()):
            from minijax import lax

            return lax.full(aval.shape, zero)
    return ad.zeros_like_aval(aval)


def _instantiate(t: Any) -> Any:
    return _zeros_like(t.aval) if type(t) is Zero else t


def _or(a: Sequence[bool], b: Sequence[bool]) -> list[bool]:
    return [x or y for x, y in zip(a, b)]


# ---------------------------------------------------------------------------
# jvp


def _scan_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    nonzeros = [type(t) is not Zero for t in tangents]
    const_nz, init_nz, xs_nz = _split(nonzeros, num_consts, num_carry)
    if trace.linearizing:
        return _scan_linearize(trace, primals, tangents, const_nz, init_nz, xs_nz, params)
    num_ys = len(jaxpr.out_avals) - num_carry
    carry_nz = init_nz
    for _ in range(1 + num_carry):
        jvp_closed, out_nz = ad.jvp_jaxpr(jaxpr, [*const_nz, *carry_nz, *xs_nz], instantiate=[*carry_nz, *[False] * num_ys])
        if out_nz[:num_carry] == carry_nz:
            break
        carry_nz = _or(carry_nz, out_nz[:num_carry])
    num_xs = len(jaxpr.in_avals) - num_consts - num_carry
    # jvp_jaxpr takes (primals, nonzero tangents): reorder to (consts, their
    # tangents, carry, its tangents, xs, their tangents), and likewise the outputs.
    c, k, x, dc, dk, dx = _groups(num_consts, num_carry, num_xs, sum(const_nz), sum(carry_nz), sum(xs_nz))
    n_dk_out = sum(carry_nz)
    k_out, y_out, dk_out, dy_out = _groups(num_carry, num_ys, n_dk_out, sum(out_nz) - n_dk_out)
    body = _permuted(jvp_closed, [*c, *dc, *k, *dk, *x, *dx], [*k_out, *dk_out, *y_out, *dy_out])
    consts, init, xs = _split(primals, num_consts, num_carry)
    consts_dot, init_dot, xs_dot = _split(tangents, num_consts, num_carry)
    with set_current_trace(trace.parent):
        init_dot = [_instantiate(t) for t, nz in zip(init_dot, carry_nz) if nz]
        outs = _bind(
            [*consts, *(t for t in consts_dot if type(t) is not Zero)],
            [*init, *init_dot],
            [*xs, *(t for t in xs_dot if type(t) is not Zero)],
            body, params["length"], params["reverse"], params["unroll"],
        )  # fmt: skip
    carry, carry_dot, ys, ys_dot = _split(outs, num_carry, n_dk_out, num_ys)
    out_tangents = iter([*carry_dot, *ys_dot])
    return [
        trace.wrap(p, next(out_tangents) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip([*carry, *ys], jaxpr.out_avals, out_nz)
    ]


ad.trace_jvp_rules[scan_p] = _scan_jvp


# ---------------------------------------------------------------------------
# Linearize


class _LinearizedBody:
    """The body split in two by linearization (JAX's ``linearize_jaxpr``).

    ``known`` maps (consts, carry, x) to (outputs, the residuals it computes);
    ``tangent`` maps (residuals, nonzero tangents) to the nonzero output
    tangents, those that ``instantiate`` asks for included. ``sources`` says
    where each residual comes from: ``("input", i)`` a ``forwardable`` input
    of the body (not stored again), ``("computed", k)`` the k-th residual
    output of ``known`` (other inputs included), or ``("value", v)`` a
    constant the rules made.

    A zero tangent that must be instantiated is made on the primal side (an
    array of zeros is then a residual, hoisted out of the loop; a scalar zero
    is a literal), and the tangent jaxpr keeps no dead code, as in JAX.
    """

    def __init__(self, body: ClosedJaxpr, forwardable: Sequence[bool], nonzeros: Sequence[bool], instantiate: Sequence[bool]) -> None:
        box: list[tuple[ad.LinearFunction, ClosedJaxpr, list[Any], list[Any], list[tuple[str, Any]]]] = []

        def known(*xs: Any) -> list[Any]:
            known_trace = core.current_trace()
            outs, lin = ad.linearize_flat(lambda *a: _eval_jaxpr(body.jaxpr, body.consts, *a), xs, linear=nonzeros)
            tangent = _dce_closed(lin.jaxpr)
            zeros = [_zeros_like(a) if z and i else None for a, z, i in zip(lin.out_avals, lin.out_zeros, instantiate)]
            residuals = [*tangent.consts, *(z for z in zeros if isinstance(z, Tracer))]
            position = {id(x): i for i, x in enumerate(xs)}
            sources: list[tuple[str, Any]] = []
            computed: list[Any] = []
            for r in residuals:
                i = position.get(id(r))
                if i is not None and forwardable[i]:
                    sources.append(("input", i))
                elif isinstance(r, DynamicJaxprTracer) and r._trace is known_trace:
                    sources.append(("computed", len(computed)))
                    computed.append(r)
                else:
                    sources.append(("value", r))
            box.append((lin, tangent, zeros, residuals, sources))
            return [*outs, *computed]

        self.known, _ = trace_to_jaxpr(known, body.in_avals)
        lin, self.tangent, self.zeros, residuals, self.sources = box[0]
        self.res_avals = [get_aval(r) for r in residuals]
        self.out_zeros = lin.out_zeros
        self.out_nz = [not z or i for z, i in zip(lin.out_zeros, instantiate)]
        self.num_out = len(body.out_avals)

    def tangent_body(self, in_order: Sequence[tuple[str, int]], tangent_avals: Sequence[ShapedArray]) -> ClosedJaxpr:
        """The tangent map as one jaxpr taking its arguments in ``in_order``:
        ``("res", i)`` for residual i, ``("tangent", j)`` for nonzero tangent j."""
        lin_jaxpr, n_lin_res = self.tangent.jaxpr, len(self.tangent.consts)
        avals = [self.res_avals[i] if kind == "res" else tangent_avals[i] for kind, i in in_order]

        def tangent(*args: Any) -> list[Any]:
            res: list[Any] = [None] * len(self.res_avals)
            tangents: list[Any] = [None] * len(tangent_avals)
            for (kind, i), x in zip(in_order, args):
                (res if kind == "res" else tangents)[i] = x
            computed = iter(_eval_jaxpr(lin_jaxpr, res[:n_lin_res], *tangents))
            zero_residuals = iter(res[n_lin_res:])
            outs = []
            for zero, made in zip(self.out_zeros, self.zeros):
                if not zero:
                    outs.append(next(computed))
                elif isinstance(made, Tracer):
                    outs.append(next(zero_residuals))
                elif made is not None:
                    outs.append(made)
            return outs

        closed, _ = trace_to_jaxpr(tangent, avals)
        return closed


def _hoist_invariants(
    known: ClosedJaxpr, consts: Sequence[Any], num_primal_out: int, parent: Trace
) -> tuple[ClosedJaxpr, list[Any], list[bool], list[Any]]:
    """Move what depends only on the constants out of the loop (JAX's known-scan hoisting).

    ``known`` takes (consts, carry, x) and returns (outputs, residuals). Its
    equations that read only constants run once, now, on ``parent``; the
    others are staged into the loop body. Returns that body, taking
    (its new constants, carry, x) and returning (outputs, the residuals
    that vary per iteration); the new constants; which residuals were
    hoisted; and the hoisted residuals' values.
    """
    jaxpr, num_consts = known.jaxpr, len(consts)
    box: list[tuple[list[bool], list[Any]]] = []

    def loop(*carry_x: Any) -> list[Any]:
        env: dict[Var, Any] = {}
        outside: set[Var] = set()  # variables whose value is computed before the loop

        def read(a: Any) -> Any:
            return _literal(a) if isinstance(a, Literal) else env[a]

        def invariant(a: Any) -> bool:
            return isinstance(a, Literal) or a in outside

        for v, x in zip([*jaxpr.constvars, *jaxpr.invars], [*known.consts, *consts, *carry_x]):
            env[v] = x
        outside.update(jaxpr.constvars, jaxpr.invars[:num_consts])
        for eqn in jaxpr.eqns:
            args = [read(a) for a in eqn.invars]
            hoist = all(invariant(a) for a in eqn.invars) and not _has_effects(eqn)
            if hoist:
                with set_current_trace(parent):
                    outs = eqn.primitive.bind(*args, **eqn.params)
            else:
                outs = eqn.primitive.bind(*args, **eqn.params)
            for v, x in zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]):
                if not isinstance(v, DropVar):
                    env[v] = x
                    if hoist:
                        outside.add(v)
        residuals = jaxpr.outvars[num_primal_out:]
        hoisted = [invariant(v) for v in residuals]
        box.append((hoisted, [read(v) for v, h in zip(residuals, hoisted) if h]))
        return [read(v) for v in jaxpr.outvars[:num_primal_out]] + [read(v) for v, h in zip(residuals, hoisted) if not h]

    closed, _ = trace_to_jaxpr(loop, known.in_avals[num_consts:])
    body, new_consts = ad.consts_as_inputs(_dce_closed(closed))
    hoisted, values = box[0]
    return body, new_consts, hoisted, values


def _scan_linearize(
    trace: JVPTrace,
    primals: Sequence[Any],
    tangents: Sequence[Any],
    const_nz: list[bool],
    init_nz: list[bool],
    xs_nz: list[bool],
    params: dict[str, Any],
) -> list[Any]:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    length, reverse, unroll = params["length"], params["reverse"], params["unroll"]
    num_ys = len(jaxpr.out_avals) - num_carry
    num_out = num_carry + num_ys
    # A residual that is a constant or an ``x`` is read from the operand, not
    # stored again -- unless the operand is a NumPy array (as in JAX); a carry
    # changes every iteration, so it is always stored.
    forwardable = [
        not num_consts <= i < num_consts + num_carry and not isinstance(p, np.ndarray) for i, p in enumerate(primals)
    ]
    carry_nz = init_nz
    for _ in range(1 + num_carry):
        body = _LinearizedBody(jaxpr, forwardable, [*const_nz, *carry_nz, *xs_nz], [*carry_nz, *[False] * num_ys])
        if body.out_nz[:num_carry] == carry_nz:
            break
        carry_nz = _or(carry_nz, body.out_nz[:num_carry])
    consts, init, xs = _split(primals, num_consts, num_carry)

    # The known scan: loop-invariant work hoisted before it, residuals that
    # vary per iteration stacked as extra ``ys``.
    loop, loop_consts, hoisted, hoisted_values = _hoist_invariants(body.known, consts, num_out, trace.parent)
    with set_current_trace(trace.parent):
        outs = _bind(loop_consts, init, xs, loop, length, reverse, unroll) if loop.out_avals else []
    primal_outs, stacked = outs[:num_out], iter(outs[num_out:])
    hoisted_iter, hoisted_values_iter = iter(hoisted), iter(hoisted_values)

    # Each residual is loop-invariant (a constant of the tangent scan) or one
    # value per iteration (an ``x`` of the tangent scan).
    res_values: list[Any] = []
    res_extensive: list[bool] = []
    for kind, where in body.sources:
        if kind == "input":
            extensive = where >= num_consts + num_carry
            res_values.append(xs[where - num_consts - num_carry] if extensive else consts[where])
        elif kind == "computed":
            extensive = not next(hoisted_iter)
            res_values.append(next(stacked) if extensive else next(hoisted_values_iter))
        else:
            extensive = False
            res_values.append(where)
        res_extensive.append(extensive)

    nzs = [*const_nz, *carry_nz, *xs_nz]
    tangent_avals = [ad.tangent_aval(a) for a, nz in zip(jaxpr.in_avals, nzs) if nz]
    n_dc, n_dk = sum(const_nz), sum(carry_nz)
    intensive = [("res", i) for i, e in enumerate(res_extensive) if not e]
    extensive = [("res", i) for i, e in enumerate(res_extensive) if e]
    tangent_order = [("tangent", j) for j in range(len(tangent_avals))]
    tangent_body = body.tangent_body([*intensive, *tangent_order, *extensive], tangent_avals)
    if not tangent_body.out_avals:
        return [trace.wrap(p, Zero(ad.tangent_aval(a))) for p, a in zip(primal_outs, jaxpr.out_avals)]

    with set_current_trace(trace.tangent_side):
        nz_tangents = [_instantiate(t) for t, nz in zip(tangents, nzs) if nz]
        dc, dk, dx = _split(nz_tangents, n_dc, n_dk)
        tangent_outs = iter(
            _bind(
                [*(res_values[i] for _, i in intensive), *dc],
                dk,
                [*dx, *(res_values[i] for _, i in extensive)],
                tangent_body, length, reverse, unroll,
            )  # fmt: skip
        )
    return [
        trace.wrap(p, next(tangent_outs) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip(primal_outs, jaxpr.out_avals, body.out_nz)
    ]


# ---------------------------------------------------------------------------
# Transpose


def _scan_transpose(
    cts: Sequence[Any], *args: Any, reverse: bool, length: int, num_consts: int, num_carry: int, jaxpr: ClosedJaxpr, unroll: int
) -> list[Any]:
    # What no nonzero cotangent needs is dropped first (JAX removes it as dead
    # code before transposing): a y with a zero cotangent, a carry that
    # reaches none of the rest, and the operands they alone read.
    body, used_in, used_out = _dce_scan(jaxpr, num_consts, num_carry, [type(ct) is not Zero for ct in cts])
    consts, init, xs = _split(args, num_consts, num_carry)
    used_consts, used_init, used_xs = _split(used_in, num_consts, num_carry)
    used_carry, used_ys = _split(used_out, num_carry)
    consts = [c for c, u in zip(consts, used_consts) if u]
    init = [c for c, u in zip(init, used_init) if u]
    xs = [x for x, u in zip(xs, used_xs) if u]
    ct_carry = [ct for ct, u in zip(cts[:num_carry], used_carry) if u]
    ct_ys = [ct for ct, u in zip(cts[num_carry:], used_ys) if u]
    n_c, n_k = len(consts), len(init)

    # Constants split into residuals and linear ones, xs into linear ones and
    # residuals; every carry is linear (a known carry is an instantiated zero
    # tangent, whose cotangent is not wanted).
    const_lin = [is_undefined_primal(c) for c in consts]
    xs_lin = [is_undefined_primal(x) for x in xs]
    ires = [c for c, lin in zip(consts, const_lin) if not lin]
    eres = [x for x, lin in zip(xs, xs_lin) if not lin]
    # The cotangents carried around the loop: those of the linear constants
    # (accumulated from zero), then those of the carries. As in JAX, their
    # types are those of these initial values.
    ct_carry = [_instantiate(ct) for ct in ct_carry]
    acc_init = [_zeros_like(c.aval) for c, lin in zip(consts, const_lin) if lin]
    acc_avals = [get_aval(z) for z in acc_init]
    ct_carry_avals = [get_aval(ct) for ct in ct_carry]
    lin_xs_avals = [_mapped(x.aval) for x, lin in zip(xs, xs_lin) if lin]
    # Each accumulator starts the backward pass as the cotangent of its
    # constant, so every contribution is added to it where it arises.
    # The linear inputs take those types too (the transpose rules read them).
    acc_it, xs_it = iter(acc_avals), iter(lin_xs_avals)
    retyped = _retyped_inputs(body.jaxpr, [
        *(next(acc_it) if lin else None for lin in const_lin), *ct_carry_avals,
        *(next(xs_it) if lin else None for lin in xs_lin),
    ])  # fmt: skip
    const_vars = [v for v, lin in zip(retyped.invars[:n_c], const_lin) if lin]
    seeded = Jaxpr(retyped.constvars, retyped.invars, [*retyped.outvars, *const_vars], retyped.eqns)

    def transposed(*targs: Any) -> list[Any]:
        res, acc, ct_k, ct_y, eres_x = _split(targs, len(ires), len(acc_init), n_k, len(ct_ys))
        res_it, eres_it, acc_it, xs_it = iter(res), iter(eres_x), iter(acc_avals), iter(lin_xs_avals)
        primals = [
            *(UndefinedPrimal(next(acc_it)) if lin else next(res_it) for lin in const_lin),
            *(UndefinedPrimal(a) for a in ct_carry_avals),
            *(UndefinedPrimal(next(xs_it)) if lin else next(eres_it) for lin in xs_lin),
        ]
        cts_in = ad.backward_pass(seeded, body.consts, primals, [*ct_k, *ct_y, *acc])
        ct_consts, ct_init, ct_xs = _split(cts_in, n_c, n_k)
        new_acc = [ct for ct, lin in zip(ct_consts, const_lin) if lin]
        ct_xs = [ct for ct, lin in zip(ct_xs, xs_lin) if lin]
        return [*new_acc, *(_instantiate(ct) for ct in [*ct_init, *ct_xs])]

    in_avals = [
        *(get_aval(r) for r in ires), *acc_avals, *ct_carry_avals, *(_mapped(get_aval(ct)) for ct in ct_ys),
        *(_mapped(get_aval(x)) for x in eres),
    ]  # fmt: skip
    t_body, _ = trace_to_jaxpr(transposed, in_avals)
    outs = _bind(ires, [*acc_init, *ct_carry], [*ct_ys, *eres], t_body, length, not reverse, unroll)
    ct_consts_out, ct_init_out, ct_xs_out = _split(outs, len(acc_init), n_k)

    # One cotangent per operand: None for residuals (and known carries), Zero
    # for linear operands nothing reached.
    results: list[Any] = []
    it_consts, it_init, it_xs = iter(ct_consts_out), iter(ct_init_out), iter(ct_xs_out)
    for a, u in zip(args[:num_consts], used_consts):
        results.append(None if not is_undefined_primal(a) else next(it_consts) if u else Zero(a.aval))
    for a, u in zip(args[num_consts : num_consts + num_carry], used_init):
        ct = next(it_init) if u else Zero(get_aval(a) if not is_undefined_primal(a) else a.aval)
        results.append(ct if is_undefined_primal(a) else None)
    for a, u in zip(args[num_consts + num_carry :], used_xs):
        results.append(None if not is_undefined_primal(a) else next(it_xs) if u else Zero(a.aval))
    return results


ad.transpose_rules[scan_p] = _scan_transpose


# ---------------------------------------------------------------------------
# Batching


def _scan_batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    size, name = trace.axis_size, trace.axis_name
    num_ys = len(jaxpr.out_avals) - num_carry
    const_b, init_b, xs_b = _split([d is not None for d in dims], num_consts, num_carry)
    # Inside the body every batched value has its batch axis first.
    carry_b = init_b
    for _ in range(1 + num_carry):
        in_dims: list[batching.BatchDim] = [0 if b else None for b in [*const_b, *carry_b, *xs_b]]
        _, found = batching.batch_jaxpr(jaxpr, size, in_dims, axis_name=name)
        carry_b_out = [d is not None for d in found[:num_carry]]
        if all(b or not o for b, o in zip(carry_b, carry_b_out)):
            break
        carry_b = _or(carry_b, carry_b_out)
    ys_b = [d is not None for d in found[num_carry:]]
    if not any([*const_b, *carry_b, *xs_b, *ys_b]):
        # Nothing is batched, not even through a collective in the body.
        return scan_p.bind(*vals, **params), [None] * (num_carry + num_ys)
    out_dims: list[batching.BatchDim] = [0 if b else None for b in [*carry_b, *ys_b]]
    body, _ = batching.batch_jaxpr(jaxpr, size, in_dims, out_dims, axis_name=name)
    consts, init, xs = _split(vals, num_consts, num_carry)
    consts_d, init_d, xs_d = _split(dims, num_consts, num_carry)
    consts = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(consts, consts_d)]
    init = [_broadcast_batched(x, size) if b and d is None else x if d is None else batching.moveaxis(x, d, 0) for x, d, b in zip(init, init_d, carry_b)]
    xs = [x if d is None else batching.moveaxis(x, d, 1) for x, d in zip(xs, xs_d)]
    outs = _bind(consts, init, xs, body, params["length"], params["reverse"], params["unroll"])
    return outs, [*(0 if b else None for b in carry_b), *(1 if b else None for b in ys_b)]


batching.axis_rules[scan_p] = _scan_batch


def _broadcast_batched(x: Any, size: int) -> Any:
    """``x`` repeated ``size`` times along a new leading axis (a carry that becomes batched)."""
    from minijax import lax

    shape = (size, *get_aval(x).shape)
    # JAX's batching computes these dimensions with NumPy: its jaxprs show np.int64 values.
    return lax.broadcast_in_dim(x, shape, tuple(np.delete(np.arange(len(shape)), 0)))


__all__ = ["map", "scan", "scan_p"]
