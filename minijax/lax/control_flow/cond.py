"""``lax.cond`` and ``lax.switch``: apply one of several functions, chosen by a traced value.

Both trace every branch to a jaxpr on the operands' abstract values (so a
branch sees abstract tracers even when no transformation is active, as the
FAQ says), check that the branches return the same pytree of the same types,
and bind one ``cond`` equation (minijax/primitives/cond.py) on an int32 index:
``cond`` converts its predicate (branch 0 is ``false_fun``), ``switch`` clamps
its index into range. Constants the branches close over become leading
operands shared by all branches; an output that every branch merely passes
through from the same input is returned directly instead of through the cond.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import config as config_module, dtypes, tree_util
from minijax.core import ShapedArray, Tracer, get_aval, is_array_like
from minijax.interpreters.tracing import DebugInfo, arg_names_of, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, Var
from minijax.lax.control_flow.common import asarray, is_concrete, keep_outputs, listed, mismatch, operand_aval
from minijax.primitives import elementwise as ew
from minijax.primitives.cond import cond_p
from minijax.sharding_rules import explicit_spec

# ``operand=`` (the old single-operand calling convention) is told apart from
# "not given" by this sentinel.
_NO_OPERAND: Any = object()


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as one staged conditional.

    ``pred`` is a boolean (or numeric: nonzero is true) scalar. Both branches
    are traced, and must return the same pytree structure with the same
    shapes and dtypes. Under ``vmap`` with a batched predicate both branches
    run and the results are selected elementwise.
    """
    if not (callable(true_fun) and callable(false_fun)):
        # The deprecated form cond(pred, true_operand, true_fun, false_operand, false_fun).
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _with_operand_keyword(operands, operand)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        got = f"type {type(pred)}" if isinstance(pred, Sequence) else f"shape {np.shape(pred)}."
        raise TypeError(f"Pred must be a scalar, got {pred} of {got}")
    try:
        pred_dtype = dtypes.result_type(pred)
    except TypeError as e:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from e
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
        pred = pred != 0
    if config_module.read("jax_disable_jit") and is_concrete(pred):
        return true_fun(*operands) if pred else false_fun(*operands)
    index = _int32_index(pred)
    # Traced true_fun first (its output structure is the result's; its
    # constants come first), bound with false_fun as branch 0.
    (true_jaxpr, false_jaxpr), consts, out_tree, fwd = _trace_branches(
        "cond", [("true_fun", true_fun), ("false_fun", false_fun)], operands
    )
    return _bind(index, (false_jaxpr, true_jaxpr), consts, operands, out_tree, fwd)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """``branches[index](*operands)``, with ``index`` clamped into ``[0, len(branches) - 1]``.

    ``index`` is an integer scalar; every branch is traced and must return
    the same pytree structure with the same shapes and dtypes.
    """
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    operands = _with_operand_keyword(operands, operand)
    if np.ndim(index) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
    try:
        index_dtype = dtypes.result_type(index)
    except TypeError as e:
        raise TypeError(f"Index type must be an integer, got {index}.") from e
    if index_dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = ew.clamp_p.bind(np.int32(0), _int32_index(index), np.int32(len(branches) - 1))
    if config_module.read("jax_disable_jit") and is_concrete(index):
        return branches[int(index)](*operands)
    named = [("branch 0" if i == 0 else f"branch{i}", b) for i, b in enumerate(branches)]
    jaxprs, consts, out_tree, fwd = _trace_branches("switch", named, operands)
    return _bind(index, tuple(jaxprs), consts, operands, out_tree, fwd)


# ---------------------------------------------------------------------------
# Arguments


def _with_operand_keyword(operands: tuple[Any, ...], operand: Any) -> tuple[Any, ...]:
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(
            "if 'operand' keyword is passed then no positional operands can be passed, "
            f"got operand={operand!r} and positional operands {operands}"
        )
    return (operand,)


def _int32_index(x: Any) -> Any:
    """``x`` as an int32 scalar: on the host when it is a concrete value (so a
    literal in a jaxpr, as JAX folds it), else a ``convert_element_type``."""
    if isinstance(x, Tracer):
        return ew.convert_element_type(x, np.int32)
    return np.asarray(x).astype(np.int32)[()]


# ---------------------------------------------------------------------------
# Tracing the branches


def _trace_branches(
    api: str, named: Sequence[tuple[str, Callable[..., Any]]], operands: tuple[Any, ...]
) -> tuple[list[ClosedJaxpr], list[Any], tree_util.PyTreeDef, list[int | None]]:
    """Trace each branch on the operands' avals; check that their outputs agree.

    Returns the branch jaxprs (taking the shared constants, then the flat
    operands, in that order), the constants, the first branch's output tree,
    and for each output the operand index it passes through in every branch
    (None when it is computed): those outputs are left out of the jaxprs.
    """
    flat, in_tree = tree_util.tree_flatten((operands, {}))
    avals = [operand_aval(x) for x in flat]
    traced = [_trace_branch(api, fun, in_tree, avals, operands) for _, fun in named]
    (name0, fun0), (_, _, tree0, outs0) = named[0], traced[0]
    for (name, fun), (_, _, tree, outs) in zip(named[1:], traced[1:]):
        _check_branch_outputs(api, name0, name, fun0, fun, tree0, outs0, tree, outs)
    jaxprs, consts = _merge_consts([(closed, origins) for closed, origins, _, _ in traced])
    # Outputs every branch forwards from one and the same input are not outputs of the cond.
    fwds = [_forwarding(j.jaxpr) for j in jaxprs]
    fwd = [f[0] if len(set(f)) == 1 else None for f in zip(*fwds)]
    keep = [f is None for f in fwd]
    pruned = [ClosedJaxpr(keep_outputs(j.jaxpr, keep), j.consts) for j in jaxprs]
    return pruned, consts, tree0, fwd


def _trace_branch(
    api: str, fun: Callable[..., Any], in_tree: tree_util.PyTreeDef, avals: Sequence[ShapedArray], operands: tuple[Any, ...]
) -> tuple[ClosedJaxpr, list[Any], tree_util.PyTreeDef, list[ShapedArray]]:
    trees: list[tree_util.PyTreeDef] = []
    origins: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        args, _ = tree_util.tree_unflatten(in_tree, xs)
        leaves, tree = tree_util.tree_flatten(fun(*args))
        for leaf in leaves:
            if not is_array_like(leaf):
                raise TypeError(
                    f"{api} branch {_source_info(fun)} returned a value of type {type(leaf).__name__}, "
                    "which is not a valid JAX type: branches must return arrays or pytrees of arrays."
                )
        trees.append(tree)
        return leaves

    info = DebugInfo(fun, arg_names_of(fun, operands, {}), api)
    closed, _ = trace_to_jaxpr(flat_fun, avals, info, const_origins=origins)
    return closed, origins, trees[0], closed.out_avals


def _merge_consts(closeds: Sequence[tuple[ClosedJaxpr, list[Any]]]) -> tuple[list[ClosedJaxpr], list[Any]]:
    """The branches with their constants turned into leading inputs, shared by all.

    Each branch comes with the objects its constants were captured from. All
    branches take the union of the constants, each once, in order of first
    appearance, so that they keep one signature. A constant is shared when
    the branches closed over one and the same object (as in JAX): identity,
    not contents, so two distinct arrays that happen to be equal stay two
    operands, each bound in the branch that reads it.
    """
    consts: list[Any] = []
    position: dict[int, int] = {}
    for closed, origins in closeds:
        for c, origin in zip(closed.consts, origins):
            if id(origin) not in position:
                position[id(origin)] = len(consts)
                consts.append(c)
    merged = []
    for closed, origins in closeds:
        jaxpr = closed.jaxpr
        leading: list[Var] = [Var(get_aval(c)) for c in consts]
        for v, origin in zip(jaxpr.constvars, origins):
            leading[position[id(origin)]] = v
        merged.append(ClosedJaxpr(Jaxpr([], [*leading, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns), []))
    return merged, consts


def _forwarding(jaxpr: Jaxpr) -> list[int | None]:
    """For each output, the index of the input it is (None if it is computed)."""
    where = {v: i for i, v in enumerate(jaxpr.invars)}
    return [where.get(v) if isinstance(v, Var) else None for v in jaxpr.outvars]


def _bind(
    index: Any,
    branches: tuple[ClosedJaxpr, ...],
    consts: Sequence[Any],
    operands: tuple[Any, ...],
    out_tree: tree_util.PyTreeDef,
    fwd: Sequence[int | None],
) -> Any:
    flat = tree_util.tree_leaves((operands, {}))
    outs = iter(cond_p.bind(index, *consts, *flat, branches=branches))
    inputs = [*consts, *flat]
    results = [next(outs) if f is None else asarray(inputs[f]) for f in fwd]
    return tree_util.tree_unflatten(out_tree, results)


# ---------------------------------------------------------------------------
# Errors: branches that disagree


def _source_info(fun: Any) -> str:
    """``name at file:line``, how JAX names a branch in its errors."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, "__code__", None)
    if code is None:
        return str(getattr(fun, "__name__", "<unknown>"))
    return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"


def _check_branch_outputs(
    api: str,
    name1: str,
    name2: str,
    f1: Any,
    f2: Any,
    tree1: tree_util.PyTreeDef,
    avals1: Sequence[ShapedArray],
    tree2: tree_util.PyTreeDef,
    avals2: Sequence[ShapedArray],
) -> None:
    """Raise JAX's TypeError when two branches return different structures or types."""
    heading = f"{name1} is {_source_info(f1)}\n{name2} is {_source_info(f2)}\n\n"
    if tree1 != tree2:
        diffs = [
            f"{name1} output{_at(path)} is a {thing1} but {name2} output{_at(path)} is a {thing2}, so {why}"
            for path, thing1, thing2, why in tree_util.equality_errors_pytreedef(tree1, tree2)
        ]
        if diffs:  # (JAX's layout, blank lines between bullets included)
            raise TypeError(
                f"{api} branch outputs must have the same pytree structure, but they differ:\n\n{heading}{listed(diffs, capitalize=False)}\n"
                f"Revise {name1} and/or {name2} so that they have the same pytree structure."
            )
    paths = [p for p, _ in tree_util.tree_flatten_with_path(tree_util.tree_unflatten(tree1, avals1))[0]]
    diffs = [
        f"the output of {name1}{_at(p)} has type {a1.str_short(short_dtypes=False)} but the corresponding "
        f"output of {name2} has type {a2.str_short(short_dtypes=False)}{mismatch(a1, a2)}"
        for p, a1, a2 in zip(paths, avals1, avals2)
        if (a1.shape, a1.dtype, explicit_spec(a1)) != (a2.shape, a2.dtype, explicit_spec(a2))  # shtypes: layouts too
    ]
    if diffs:
        # (JAX's layout: here without blank lines between bullets)
        bullets = listed(diffs) if len(diffs) == 1 else "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"
        raise TypeError(
            f"{api} branches must have equal output types but they differ.\n\n{heading}{bullets}\n"
            f"Revise {name1} and/or {name2} so that all output types match."
        )


def _at(path: tuple[Any, ...]) -> str:
    return f" at path {tree_util.keystr(path)}" if path else ""


__all__ = ["cond", "switch"]
