"""``lax.scan`` and ``lax.map``: loop a function over the leading axis of arrays, as one ``scan`` equation.

``scan`` traces the body once on the carry's and one slice's abstract values,
checks that the carry keeps its structure and types, and binds the ``scan``
primitive (minijax/primitives/scan.py, where its rules are). A carry the body
returns unchanged is passed as a constant instead, and an output that is just
an input slice is that input, as in JAX. ``map`` is a scan with no carry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import config as config_module, dtypes, tree_util
from minijax.core import ShapedArray, Tracer, get_aval, is_array_like
from minijax.errors import ConcretizationTypeError
from minijax.interpreters.tracing import DebugInfo, arg_names_of, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, Var
from minijax.jaxpr_passes import consts_as_inputs, typematch
from minijax.lax.control_flow.common import asarray, check_carry_type, keep_outputs, operand_aval
from minijax.primitives import elementwise as ew, slicing, structural as sp
from minijax.primitives.scan import bind_scan, mapped_aval, split_list
from minijax.sharding_rules import scan_slice_aval
from minijax.state import Ref, closed_refs, lending, lent, values_of, write_back
from minijax.vectorization import vmap

__all__ = ["map", "scan"]


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
    refs = closed_refs(f)
    if refs and not config_module.read("jax_disable_jit"):
        return _scan_with_refs(f, refs, init, xs, length, reverse, unroll)
    init_flat, init_tree = tree_util.tree_flatten(init)
    xs_flat, xs_tree = tree_util.tree_flatten(xs)
    length = _infer_length(xs_flat, length)
    if config_module.read("jax_disable_jit"):
        return _scan_python(f, init, xs_flat, xs_tree, length, reverse)
    init_avals = [operand_aval(x) for x in init_flat]
    x_avals = [scan_slice_aval(a, mapped_aval(a)) for a in (operand_aval(x) for x in xs_flat)]
    debug = DebugInfo(f, arg_names_of(f, (init, xs), {}), "scan")

    traced = _trace_body(f, init_tree, xs_tree, init_avals, x_avals, debug)
    carry_avals, carry_tree = traced.out_avals[: traced.num_carry], traced.carry_tree
    if len(carry_avals) != len(init_avals):
        check_carry_type("scan body", f, init_tree, init_avals, carry_tree, carry_avals)
    # A weakly typed initial carry (a Python scalar) takes the type the body
    # gives it, and the body is traced again (JAX's two passes).
    promoted = [_promote_weak(x, a, out) for x, a, out in zip(init_flat, init_avals, carry_avals)]
    if any(changed for _, changed in promoted):
        init_flat = [x for x, _ in promoted]
        init_avals = [operand_aval(x) for x in init_flat]
        traced = _trace_body(f, init_tree, xs_tree, init_avals, x_avals, debug)
        carry_avals, carry_tree = traced.out_avals[: traced.num_carry], traced.carry_tree
    check_carry_type("scan body", f, init_tree, init_avals, carry_tree, carry_avals)
    unroll = _check_unroll(unroll, length)

    jaxpr, consts = consts_as_inputs(traced.closed)
    num_carry, num_ys = len(init_flat), len(traced.out_avals) - len(init_flat)
    # A carry the body returns unchanged is a constant: it moves to the consts.
    unchanged = _forwarded_carries(jaxpr.jaxpr, len(consts), num_carry)
    if any(unchanged):
        jaxpr = _drop_carries(jaxpr, len(consts), unchanged)
        consts = [*(x for x, u in zip(init_flat, unchanged) if u), *consts]
    carries = [x for x, u in zip(init_flat, unchanged) if not u]
    # An output that is just an input sequence is that sequence (not copied by the loop).
    ys_from_xs = _forwarded_xs(jaxpr.jaxpr, len(consts) + len(carries), len(carries))
    jaxpr = ClosedJaxpr(keep_outputs(jaxpr.jaxpr, [True] * len(carries) + [i is None for i in ys_from_xs]), jaxpr.consts)
    outs = iter(bind_scan(consts, carries, xs_flat, jaxpr, length, reverse, unroll))
    carry_out = [x if u else next(outs) for x, u in zip(init_flat, unchanged)]
    ys = [next(outs) if i is None else asarray(xs_flat[i]) for i in ys_from_xs]
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
    if aval.weak_type and not typematch(aval, out):
        return ew.convert_element_type(x, dtypes.result_type(x, out)), True
    return x, False


def _forwarded_carries(jaxpr: Jaxpr, num_consts: int, num_carry: int) -> list[bool]:
    """For each carry: does the body return its input carry unchanged?"""
    return [jaxpr.outvars[i] is jaxpr.invars[num_consts + i] for i in range(num_carry)]


def _drop_carries(closed: ClosedJaxpr, num_consts: int, unchanged: Sequence[bool]) -> ClosedJaxpr:
    """The body with the unchanged carries turned into its leading constants."""
    jaxpr = closed.jaxpr
    consts, carry, xs = split_list(jaxpr.invars, num_consts, len(unchanged))
    moved = [v for v, u in zip(carry, unchanged) if u]
    kept = [v for v, u in zip(carry, unchanged) if not u]
    outs = [v for v, u in zip(jaxpr.outvars, unchanged) if not u] + jaxpr.outvars[len(unchanged) :]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, [*moved, *consts, *kept, *xs], outs, jaxpr.eqns), closed.consts)


def _forwarded_xs(jaxpr: Jaxpr, first_x: int, num_carry: int) -> list[int | None]:
    """For each ``y``: the index of the ``x`` it is (None when computed)."""
    where = {v: i for i, v in enumerate(jaxpr.invars[first_x:])}
    return [where.get(v) if isinstance(v, Var) else None for v in jaxpr.outvars[num_carry:]]


def _scan_python(f: Callable[..., Any], init: Any, xs_flat: list[Any], xs_tree: tree_util.PyTreeDef, length: int, reverse: bool) -> tuple[Any, Any]:
    """Under ``disable_jit``: a Python loop calling ``f`` on each slice."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because the output type is unknown.")
    carry, ys = init, []
    order = reversed(range(length)) if reverse else range(length)
    for i in order:
        x = tree_util.tree_unflatten(xs_tree, [slicing.index_in_dim(x, i, keepdims=False) for x in xs_flat])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = tree_util.tree_map(lambda *leaves: sp.concatenate([sp.expand_dims(y, (0,)) for y in leaves], 0), *ys)
    return carry, stacked


# ---------------------------------------------------------------------------
# lax.map


def _scan_with_refs(
    f: Callable[[Any, Any], tuple[Any, Any]], refs: list[Ref], init: Any, xs: Any, length: int | None, reverse: bool,
    unroll: int | bool,
) -> tuple[Any, Any]:
    """``scan`` of a body that closes over Refs (issue 24): their values are carried along,
    lent to the body in each step, and written back after the loop."""

    def body(carry: tuple[Any, list[Any]], x: Any) -> tuple[tuple[Any, list[Any]], Any]:
        inner, values = carry
        with lent(refs, values):
            inner, y = f(inner, x)
            return (inner, values_of(refs)), y

    (carry, finals), ys = scan(lending(body, f), (init, values_of(refs)), xs, length, reverse, unroll)
    write_back(refs, finals)
    return carry, ys


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001 (JAX's name)
    """``f`` applied to each slice of ``xs`` along its leading axis, results stacked.

    A ``scan`` with no carry. With ``batch_size`` the slices are taken in
    groups of that size, each group vmapped (the remainder, if any, in one
    more vmapped call); ``batch_size=0`` vmaps the whole axis at once.
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    scan_xs, rest_xs = _batch_and_remainder(xs, batch_size)
    scan_ys = scan(lambda _, x: ((), vmap(f)(x)), (), scan_xs)[1] if scan_xs is not None else None

    def flatten(y: Any) -> Any:
        return y.reshape(-1, *y.shape[2:])

    if scan_ys is None:
        return vmap(f)(rest_xs)
    if rest_xs is None:
        return tree_util.tree_map(flatten, scan_ys)
    rest_ys = vmap(f)(rest_xs)
    return tree_util.tree_map(lambda y, r: sp.concatenate([flatten(y), r], 0), scan_ys, rest_ys)


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
