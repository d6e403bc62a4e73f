"""``cond``: apply one of several closed jaxprs, chosen by an int32 index; and ``empty2``.

``cond(index, *operands, branches=(b0, b1, ...))`` evaluates ``branches[index]``
on the operands. ``lax.cond`` and ``lax.switch`` (minijax/lax/control_flow/cond.py)
build it; for ``lax.cond`` branch 0 is the *false* branch. An index out of
range runs the last branch (what XLA's case does; ``lax.switch`` clamps first).

The rules, each as JAX has them (``spec/primitives/cond.md``):

- jvp: one cond of the branches' jvp jaxprs, all instantiating the same
  output tangents.
- linearize: a *known* cond on the primal side returns the primal outputs and
  every branch's residuals, merged by type into shared slots (a branch fills
  the slots it does not use with ``empty2`` values); a *tangent* cond, staged on
  the tangent side, takes (index, residual slots, tangents) and applies the
  selected branch's linear map.
- transpose: a cond of the transposed branches, after dropping the outputs
  whose cotangent is zero and the operands no branch then reads.
- batching: a batched index evaluates every branch on the whole batch and
  picks each element's result with ``select_n``; an unbatched index keeps one
  cond, of the batched branches.

``empty2`` is the filler JAX uses for residual slots: a scalar whose value is
unspecified (both backends give zero).
"""

from __future__ import annotations

import enum
import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax.array import Array, device_put_value
from minijax.core import ShapedArray, Tracer, get_aval, set_current_trace
from minijax.dispatch import eager_rules
from minijax.interpreters import ad, batching
from minijax.interpreters.ad import JVPTrace, UndefinedPrimal, Zero, is_undefined_primal
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, eval_closed_jaxpr, eval_jaxpr
from minijax.jaxpr_parse import param_constructors
from minijax.jaxpr_passes import dce_closed_jaxpr, dce_jaxpr, dce_rules, has_effects, typematch as _typematch
from minijax.primitives import elementwise as ew, structural as sp
from minijax.primitives.autodiff import stop_gradient_p
from minijax.primitives.checkify import refuse_staged_checks
from minijax.primitives.common import standard_primitive


def _avals_short(avals: Sequence[ShapedArray]) -> str:
    return " ".join(a.str_short() for a in avals)


def _cond_abstract_eval(index: ShapedArray, *operands: ShapedArray, branches: Any) -> list[ShapedArray]:
    if type(branches) is not tuple or not all(isinstance(b, ClosedJaxpr) for b in branches):  # cond C1
        raise TypeError(f"invalid cond param branches of type {type(branches).__name__}, tuple of ClosedJaxpr required")
    if not branches:  # cond C1
        raise TypeError("cond requires at least one branch function")
    first = branches[0]
    for i, b in enumerate(branches[1:], 1):  # cond C2
        if len(b.in_avals) != len(first.in_avals):
            raise TypeError(f"cond branch 0 takes {len(first.in_avals)} inputs, branch {i} takes {len(b.in_avals)}")
        if len(b.out_avals) != len(first.out_avals):
            raise TypeError(f"cond branch 0 outputs {len(first.out_avals)} values, branch {i} outputs {len(b.out_avals)}")
        if not all(map(_typematch, first.in_avals, b.in_avals)):
            raise TypeError(
                f"cond branches 0 and {i} have mismatching input types: "
                f"{_avals_short(first.in_avals)} vs {_avals_short(b.in_avals)}"
            )
        if not all(map(_typematch, first.out_avals, b.out_avals)):
            raise TypeError(
                f"cond branches 0 and {i} have mismatching output types: "
                f"{_avals_short(first.out_avals)} vs {_avals_short(b.out_avals)}"
            )
    if len(operands) != len(first.in_avals):  # cond C3
        raise TypeError(
            f"cond called with {len(operands)} non-predicate operands, but branches take {len(first.in_avals)} inputs"
        )
    if index.dtype != np.int32 or index.shape:  # cond C4
        raise TypeError(
            f"cond called with index of type {index.str_short()} instead of int32[]: "
            "convert the predicate with lax.convert_element_type(pred, np.int32)"
        )
    if not all(map(_typematch, first.in_avals, operands)):  # cond C3
        raise TypeError(
            f"cond branches take input types {_avals_short(first.in_avals)}, "
            f"called with operands of type {_avals_short(operands)}"
        )
    out: list[ShapedArray] = first.out_avals
    return out  # cond C5: the types (weak types too) of branch 0's outputs


cond_p = standard_primitive("cond", _cond_abstract_eval, multiple_results=True)


class MemorySpace(enum.Enum):
    """Where a value lives; minijax knows only device memory (JAX's param value)."""

    Device = "device"

    def __str__(self) -> str:
        return f"MemorySpace.{self.name}"


def _empty2_abstract_eval(*, dtype: Any, memory_space: MemorySpace) -> ShapedArray:
    return ShapedArray((), dtype)  # empty2 C1


empty2_p = standard_primitive("empty2", _empty2_abstract_eval)


def empty_like(aval: ShapedArray) -> Any:
    """A value of ``aval`` whose contents do not matter: ``empty2`` broadcast to the shape."""
    value = empty2_p.bind(dtype=aval.dtype, memory_space=MemorySpace.Device)
    return sp.broadcast(value, aval.shape)


param_constructors["MemorySpace"] = MemorySpace  # memory_space=MemorySpace.Device reads back


# ---------------------------------------------------------------------------
# Eager evaluation: run the selected branch (no compilation per call)


def _cond_eager(backend: Any, arrays: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    # Each lax.cond call traces new branch jaxprs; compiling the whole cond for
    # every eager call would cost a compilation per call (and keep every
    # program alive in the caches). The selected branch runs op by op instead.
    branches: tuple[ClosedJaxpr, ...] = params["branches"]
    refuse_staged_checks(b.jaxpr for b in branches)  # checkify (issue 20): JAX's compilation refuses them
    index, *ops = arrays
    chosen = branches[_branch_number(int(np.asarray(index)), len(branches))]
    outs = eval_jaxpr(chosen.jaxpr, chosen.consts, *ops)
    results = []
    for x, aval in zip(outs, branches[0].out_avals):  # cond C5: the avals of branch 0
        if not isinstance(x, Array):  # a literal or constant output: a host value
            x = device_put_value(np.asarray(x, aval.dtype), aval.weak_type, device=index._device)
        elif x.aval != aval:  # op-by-op evaluation reads literals strongly typed
            x = Array(x._buf, aval, x._backend, x._device, x._committed)
        results.append(x)
    return results


def _branch_number(index: int, n: int) -> int:
    """XLA's case: an index out of [0, n) selects the last branch."""
    return index if 0 <= index < n else n - 1


eager_rules[cond_p] = _cond_eager


# ---------------------------------------------------------------------------
# Dead code: a cond equation keeps only the outputs used, and its branches
# only what those need (recursively); then only the operands some branch
# still reads. Its effects keep it alive.


def _dce_cond(eqn: JaxprEqn, used_outs: list[bool]) -> JaxprEqn | None:
    if not any(used_outs) and not has_effects(eqn):
        return None
    branches: tuple[ClosedJaxpr, ...] = eqn.params["branches"]
    reads = [dce_jaxpr(b.jaxpr, used_outs, keep_inputs=False)[1] for b in branches]
    used_ins = [any(r) for r in zip(*reads)]
    new = tuple(ClosedJaxpr(dce_jaxpr(b.jaxpr, used_outs, keep_inputs=used_ins)[0], b.consts) for b in branches)
    index, *ops = eqn.invars
    return JaxprEqn(
        [index, *(x for x, u in zip(ops, used_ins) if u)],
        [v for v, u in zip(eqn.outvars, used_outs) if u],
        cond_p,
        {**eqn.params, "branches": new},
    )


dce_rules[cond_p] = _dce_cond


# ---------------------------------------------------------------------------
# Autodiff rules


def _cond_jvp(trace: JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    branches: tuple[ClosedJaxpr, ...] = params["branches"]
    index, *ops = primals
    op_tangents = list(tangents[1:])  # the index is an integer: its tangent is always zero
    nonzeros = [type(t) is not Zero for t in op_tangents]
    if trace.linearizing:
        return _cond_linearize(trace, index, ops, op_tangents, nonzeros, branches)
    # An output tangent is nonzero when it is in any branch; every branch then
    # instantiates exactly those, so that the branches keep one signature.
    out_nz = [any(nzs) for nzs in zip(*(ad.jvp_jaxpr(b, nonzeros)[1] for b in branches))]
    jvp_branches = tuple(ad.jvp_jaxpr(b, nonzeros, instantiate=out_nz)[0] for b in branches)
    with set_current_trace(trace.parent):
        outs = cond_p.bind(index, *ops, *(t for t in op_tangents if type(t) is not Zero), branches=jvp_branches)
    n_out = len(out_nz)
    out_tangents = iter(outs[n_out:])
    return [
        trace.wrap(p, next(out_tangents) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip(outs[:n_out], branches[0].out_avals, out_nz)
    ]


class _LinearizedBranch:
    """One branch split in two: ``known`` maps operands to (outputs, residuals);
    ``tangent`` maps (residuals, nonzero tangents) to the output tangents that
    are nonzero in this branch or asked for by ``instantiate``.

    As in JAX, a zero tangent that must be instantiated is made on the primal
    side, so an array of zeros is a residual (a scalar zero is a literal); and
    both jaxprs are stripped of dead code: a tangent equation that reaches no
    output is dropped, then the residuals only it read, then the primal work
    that only computed those.
    """

    def __init__(self, branch: ClosedJaxpr, nonzeros: Sequence[bool], instantiate: Sequence[bool] | None = None) -> None:
        n_out = len(branch.out_avals)
        inst = [False] * n_out if instantiate is None else list(instantiate)
        box: list[tuple[ad.LinearFunction, ClosedJaxpr, list[Any]]] = []

        def known(*xs: Any) -> list[Any]:
            outs, lin = ad.linearize_flat(functools.partial(eval_closed_jaxpr, branch), xs, linear=nonzeros)
            tangent = dce_closed_jaxpr(lin.jaxpr)
            zeros = ad.instantiated_zeros(lin, inst)
            box.append((lin, tangent, zeros))
            # Every residual is an output, even one that is just an input
            # (JAX's branches forward nothing).
            return [*outs, *tangent.consts, *(z for z in zeros if isinstance(z, Tracer))]

        known_closed, _ = trace_to_jaxpr(known, branch.in_avals)
        self.known = dce_closed_jaxpr(known_closed)
        self.lin, self.tangent, self.zeros = box[0]
        self.res_avals = self.known.out_avals[n_out:]
        self.out_nz = [not z or i for z, i in zip(self.lin.out_zeros, inst)]


def _merge_residuals(per_branch: Sequence[Sequence[ShapedArray]]) -> tuple[list[ShapedArray], list[list[int]]]:
    """Shared residual slots for all branches, and each branch's slot per residual.

    A slot is a type together with its occurrence number within a branch, so
    that branches reuse each other's slots rather than concatenating them:
    ``[x], [y], [x, x] -> [x, y, x]`` with slots ``[0], [1], [0, 2]``.
    """
    tagged = []
    for avals in per_branch:
        counts: dict[ShapedArray, itertools.count[int]] = {}
        tagged.append([(a, next(counts.setdefault(a, itertools.count()))) for a in avals])
    slots = list(dict.fromkeys(t for branch in tagged for t in branch))
    where = {t: i for i, t in enumerate(slots)}
    return [a for a, _ in slots], [[where[t] for t in branch] for branch in tagged]


def _known_branch(part: _LinearizedBranch, n_out: int, all_res: Sequence[ShapedArray], mine: Sequence[int]) -> ClosedJaxpr:
    """``part.known`` returning every residual slot: its own residuals in their slots, empties elsewhere."""

    def augmented(*xs: Any) -> list[Any]:
        outs = eval_jaxpr(part.known.jaxpr, part.known.consts, *xs)
        slots = [empty_like(a) for a in all_res]
        for slot, res in zip(mine, outs[n_out:]):
            slots[slot] = res
        return list(outs[:n_out]) + slots

    closed, _ = trace_to_jaxpr(augmented, part.known.in_avals)
    return closed


def _tangent_branch(part: _LinearizedBranch, all_res: Sequence[ShapedArray], mine: Sequence[int], tangent_avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """``part.tangent`` taking every residual slot (the ones it reads in its own slots)."""
    jaxpr, n_res = part.tangent.jaxpr, len(all_res)
    n_consts = len(jaxpr.constvars)

    def tangent(*args: Any) -> list[Any]:
        res = [args[slot] for slot in mine]
        computed = iter(eval_jaxpr(jaxpr, res[:n_consts], *args[n_res:]))
        return ad.tangent_outputs(part.lin.out_zeros, part.zeros, computed, iter(res[n_consts:]))

    closed, _ = trace_to_jaxpr(tangent, [*all_res, *tangent_avals])
    return closed


def _cond_linearize(
    trace: JVPTrace, index: Any, ops: Sequence[Any], op_tangents: Sequence[Any], nonzeros: list[bool], branches: Sequence[ClosedJaxpr]
) -> list[Any]:
    # Which output tangents are nonzero in some branch; then every branch is
    # linearized again instantiating exactly those (as JAX does).
    out_nz = [any(nzs) for nzs in zip(*(_LinearizedBranch(b, nonzeros).out_nz for b in branches))]
    parts = [_LinearizedBranch(b, nonzeros, out_nz) for b in branches]
    all_res, slots = _merge_residuals([p.res_avals for p in parts])
    n_out = len(out_nz)
    known = tuple(_known_branch(p, n_out, all_res, mine) for p, mine in zip(parts, slots))
    tangent_avals = [ad.tangent_aval(a) for a, nz in zip(branches[0].in_avals, nonzeros) if nz]
    tangent = tuple(_tangent_branch(p, all_res, mine, tangent_avals) for p, mine in zip(parts, slots))
    with set_current_trace(trace.parent):
        outs_and_res = cond_p.bind(index, *ops, branches=known)
    primal_outs, residuals = outs_and_res[:n_out], outs_and_res[n_out:]
    nz_tangents = [t for t in op_tangents if type(t) is not Zero]
    with set_current_trace(trace.tangent_side):
        tangent_outs = iter(cond_p.bind(index, *residuals, *nz_tangents, branches=tangent))
    return [
        trace.wrap(p, next(tangent_outs) if nz else Zero(ad.tangent_aval(a)))
        for p, a, nz in zip(primal_outs, branches[0].out_avals, out_nz)
    ]


ad.trace_jvp_rules[cond_p] = _cond_jvp


def _cond_transpose(cts: Sequence[Any], index: Any, *args: Any, branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    if is_undefined_primal(index):
        raise TypeError("cond: cannot transpose with respect to the branch index (it is an integer)")
    linear = [is_undefined_primal(a) for a in args]
    # Outputs whose cotangent is zero are dropped, then every operand that no
    # branch reads any more (as JAX's dead-code elimination does before it
    # transposes): the transposed branches take only what they use.
    ct_nz = [type(ct) is not Zero for ct in cts]
    reads = [dce_jaxpr(b.jaxpr, ct_nz)[1] for b in branches]
    used = [any(r) for r in zip(*reads)]
    pruned = [dce_jaxpr(b.jaxpr, ct_nz)[0] for b in branches]
    residuals = [a for a, lin, u in zip(args, linear, used) if u and not lin]
    cts_in = [ct for ct, nz in zip(cts, ct_nz) if nz]
    wanted = [lin and u for lin, u in zip(linear, used)]
    arg_avals = branches[0].in_avals
    in_avals = [get_aval(r) for r in residuals] + [get_aval(ct) for ct in cts_in]

    def transposer(jaxpr: Jaxpr, consts: Sequence[Any], instantiate: Sequence[bool] | None, nz_out: list[list[bool]]) -> Any:
        def transposed(*xs: Any) -> list[Any]:
            res = iter(xs[: len(residuals)])
            full = [
                UndefinedPrimal(a) if lin else (next(res) if u else None)
                for a, lin, u in zip(arg_avals, linear, used)
            ]
            grads = ad.backward_pass(jaxpr, consts, full, xs[len(residuals) :])
            grads = [g for g, w in zip(grads, wanted) if w]
            nz_out.append([type(g) is not Zero for g in grads])
            if instantiate is None:
                return []
            return [ad.instantiate_zeros(g) for g, inst in zip(grads, instantiate) if inst]

        return transposed

    # First find which cotangents any branch produces, then build every branch
    # to return exactly those (JAX traces each branch twice the same way).
    found: list[list[bool]] = []
    for j, b in zip(pruned, branches):
        trace_to_jaxpr(transposer(j, b.consts, None, found), in_avals)
    out_nz = [any(nzs) for nzs in zip(*found)]
    if not any(out_nz):
        return [None] + [Zero(ad.tangent_aval(a)) if lin else None for a, lin in zip(arg_avals, linear)]
    t_branches = tuple(trace_to_jaxpr(transposer(j, b.consts, out_nz, []), in_avals)[0] for j, b in zip(pruned, branches))
    outs = iter(cond_p.bind(index, *residuals, *cts_in, branches=t_branches))
    results: list[Any] = [None]
    nz_iter = iter(out_nz)
    for a, lin, w in zip(arg_avals, linear, wanted):
        if not lin:
            results.append(None)
        elif w and next(nz_iter):
            results.append(next(outs))
        else:
            results.append(Zero(ad.tangent_aval(a)))
    return results


ad.transpose_rules[cond_p] = _cond_transpose


def _empty2_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    out = empty2_p.bind(**params)
    return out, Zero.from_primal(out)


ad.primitive_jvps[empty2_p] = _empty2_jvp  # no operands: never differentiated, but registered


# ---------------------------------------------------------------------------
# Batching


def _stop_gradient(x: Any) -> Any:
    # Only inexact values carry derivatives (JAX binds nothing for the others).
    return stop_gradient_p.bind(x) if np.issubdtype(get_aval(x).dtype, np.inexact) else x


def _select_n_batched(which: Any, *cases: Any) -> Any:
    """``select_n`` with a batch-shaped ``which`` broadcast over the cases' trailing axes."""
    which_aval, case_aval = get_aval(which), get_aval(cases[0])
    if which_aval.ndim != case_aval.ndim:
        which = sp.broadcast_in_dim(which, case_aval.shape, tuple(range(which_aval.ndim)))
    return ew.select_n_p.bind(which, *cases)


def _cond_batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    branches: tuple[ClosedJaxpr, ...] = params["branches"]
    size, name = trace.axis_size, trace.axis_name
    n_in, n_out = len(branches[0].in_avals), len(branches[0].out_avals)
    index_dim, *op_dims = dims
    if index_dim is not None:
        # Each element may take a different branch: run all of them on the
        # whole batch and select per element. Each branch sees its operands
        # only where it is selected (elsewhere through stop_gradient), so
        # that the gradient of an unselected branch cannot reach them (a NaN
        # from it would survive a multiplication by zero).
        index, *ops = (batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims))
        batched = [batching.batch_jaxpr(b, size, [0] * n_in, [0] * n_out, axis_name=name)[0] for b in branches]
        results = []
        for i, b in enumerate(batched):
            selected = ew.eq_p.bind(index, np.int32(i))
            inputs = [_select_n_batched(selected, _stop_gradient(x), x) for x in ops]
            results.append(eval_jaxpr(b.jaxpr, b.consts, *inputs))
        return [_select_n_batched(index, *outs) for outs in zip(*results)], [0] * n_out
    index, *ops = vals
    ops = [batching.moveaxis(x, d, 0) if d is not None else x for x, d in zip(ops, op_dims)]
    in_dims: list[batching.BatchDim] = [None if d is None else 0 for d in op_dims]
    found = [batching.batch_jaxpr(b, size, in_dims, axis_name=name)[1] for b in branches]
    out_batched = [any(d is not None for d in ds) for ds in zip(*found)]
    if not any(out_batched) and all(d is None for d in in_dims):
        # Nothing is batched, not even through a collective inside: unchanged.
        return cond_p.bind(index, *ops, **params), [None] * n_out
    out_dims: list[batching.BatchDim] = [0 if b else None for b in out_batched]
    new = tuple(batching.batch_jaxpr(b, size, in_dims, out_dims, axis_name=name)[0] for b in branches)
    return cond_p.bind(index, *ops, branches=new), out_dims


batching.trace_batch_rules[cond_p] = _cond_batch


def _empty2_batch(vals: Sequence[Any], dims: Sequence[batching.BatchDim], **params: Any) -> tuple[Any, Any]:
    return empty2_p.bind(**params), None  # no operands, so never batched; registered for completeness


batching.primitive_batchers[empty2_p] = _empty2_batch


__all__ = ["MemorySpace", "cond_p", "empty2_p", "empty_like"]
