"""``custom_linear_solve``: a linear solve whose derivatives come from the linear map, not the solver.

``custom_linear_solve(*consts, *b, const_lengths, jaxprs)`` evaluates
``jaxprs.solve`` on (its consts, b). ``jaxprs`` holds four closed jaxprs,
``matvec`` (the linear map A), ``vecmat`` (Aᵀ), ``solve`` (b -> A⁻¹ b) and
``transpose_solve`` (b -> A⁻ᵀ b); the last two may be None. None of them
has constants of its own: every constant is an operand, ``const_lengths``
counting them per jaxpr, in that order, ahead of b's leaves. ``lax.custom_linear_solve``
(minijax/lax/control_flow/solves.py) builds it.

The rules, each as JAX has them (``spec/primitives/solves.md``):

- jvp: from A x = b, ẋ = A⁻¹ (ḃ - Ȧ x): one more ``custom_linear_solve`` of
  the same jaxprs, whose right side is ḃ minus the jvp of ``matvec`` in its
  constants at x. The solver itself is never differentiated.
- transpose (linear in b only): the cotangent of b is a ``custom_linear_solve``
  of the transposed system: matvec and vecmat swap, solve and
  transpose_solve swap (TypeError when transpose_solve is None).
- batching: the four jaxprs are batched together, iterating to the fixed
  point where b's and x's batched leaves agree between all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from minijax.array import Array, device_put_value
from minijax.core import ShapedArray
from minijax.dispatch import eager_rules
from minijax.interpreters import ad, batching
from minijax.interpreters.ad import Zero, is_undefined_primal
from minijax.jaxpr import ClosedJaxpr, eval_closed_jaxpr
from minijax.jaxpr_parse import param_constructors
from minijax.primitives.checkify import refuse_staged_checks
from minijax.primitives.common import standard_primitive
from minijax.primitives.elementwise import neg_p

__all__ = ["LinearSolveTuple", "linear_solve_p", "split_linear_solve_args"]


class _LinearSolveTuple(NamedTuple):
    """One value per jaxpr of the solve (a jaxpr, or its const count). JAX's
    class name, so that a param prints as ``_LinearSolveTuple(matvec=..., ...)``."""

    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> _LinearSolveTuple:
        return _LinearSolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


LinearSolveTuple = _LinearSolveTuple
param_constructors["_LinearSolveTuple"] = _LinearSolveTuple  # the printed params read back


def split_linear_solve_args(args: Sequence[Any], const_lengths: LinearSolveTuple) -> tuple[LinearSolveTuple, list[Any]]:
    """The operands split into (the four const lists, b's leaves)."""
    parts: list[list[Any]] = []
    start = 0
    for n in const_lengths:
        parts.append(list(args[start : start + n]))
        start += n
    return _LinearSolveTuple(*parts), list(args[start:])


def _num_aux(jaxprs: LinearSolveTuple) -> int:
    # solve returns x (b's structure) and then its aux values.
    return len(jaxprs.solve.out_avals) - len(jaxprs.matvec.out_avals)


def _abstract_eval(*avals: ShapedArray, const_lengths: Any, jaxprs: Any) -> list[ShapedArray]:
    if not isinstance(jaxprs, _LinearSolveTuple) or not isinstance(const_lengths, _LinearSolveTuple):  # solves C1
        raise TypeError("custom_linear_solve requires const_lengths and jaxprs given as _LinearSolveTuple")
    if jaxprs.matvec is None or jaxprs.solve is None:  # solves C1
        raise TypeError("custom_linear_solve requires matvec and solve jaxprs")
    n_consts = sum(const_lengths)
    b_avals = list(avals[n_consts:])
    if len(b_avals) != len(jaxprs.matvec.out_avals):  # solves C2
        raise TypeError(
            f"custom_linear_solve called with {len(b_avals)} right-hand-side operands, "
            f"but matvec returns {len(jaxprs.matvec.out_avals)} values"
        )
    n_aux = _num_aux(jaxprs)
    aux = list(jaxprs.solve.out_avals[len(b_avals) :]) if n_aux > 0 else []
    return b_avals + aux  # solves C3: x has b's types (weak types too), then solve's aux values


linear_solve_p = standard_primitive("custom_linear_solve", _abstract_eval, multiple_results=True)


def _eager(backend: Any, arrays: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    # Each call traces new jaxprs: run the solve op by op rather than
    # compiling a program per call (as eager cond does).
    const_lengths, jaxprs = params["const_lengths"], params["jaxprs"]
    refuse_staged_checks(j.jaxpr for j in jaxprs if j is not None)  # checkify (issue 20): as compiling would
    consts, b = split_linear_solve_args(arrays, const_lengths)
    outs = eval_closed_jaxpr(jaxprs.solve, *consts.solve, *b)
    avals = _abstract_eval(*(x.aval for x in arrays), const_lengths=const_lengths, jaxprs=jaxprs)
    results = []
    for x, aval in zip(outs, avals):
        if not isinstance(x, Array):  # an input literal or constant returned as is
            x = device_put_value(np.asarray(x, aval.dtype), aval.weak_type)
        elif x.aval != aval:
            x = Array(x._buf, aval, x._backend, x._device, x._committed)
        results.append(x)
    return results


eager_rules[linear_solve_p] = _eager


# ---------------------------------------------------------------------------
# Autodiff


def _flatten(lists: Sequence[Sequence[Any]]) -> list[Any]:
    return [x for xs in lists for x in xs]


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, const_lengths: LinearSolveTuple, jaxprs: LinearSolveTuple) -> tuple[Any, Any]:
    # A x = b  =>  Ȧ x + A ẋ = ḃ  =>  ẋ = A⁻¹ (ḃ - Ȧ x)
    params = {"const_lengths": const_lengths, "jaxprs": jaxprs}
    x = linear_solve_p.bind(*primals, **params)
    consts, _ = split_linear_solve_args(primals, const_lengths)
    consts_dot, b_dot = split_linear_solve_args(tangents, const_lengths)
    x_leaves = x[: len(b_dot)]
    if all(type(t) is Zero for t in consts_dot.matvec):
        rhs = list(b_dot)
    else:
        x_zeros = [Zero(ad.tangent_aval(a)) for a in jaxprs.matvec.out_avals]
        _, a_dot_x = ad.jvp_flat(
            lambda *xs: eval_closed_jaxpr(jaxprs.matvec, *xs), [*consts.matvec, *x_leaves], [*consts_dot.matvec, *x_zeros]
        )
        rhs = [ad.add_tangents(bd, t if type(t) is Zero else neg_p.bind(t)) for bd, t in zip(b_dot, a_dot_x)]
    if all(type(t) is Zero for t in rhs):
        x_dot: list[Any] = [Zero(ad.tangent_aval(a)) for a in jaxprs.solve.out_avals]
        return x, x_dot
    rhs = [ad.instantiate_zeros(t) for t in rhs]
    solved = linear_solve_p.bind(*_flatten(consts), *rhs, **params)
    # The aux values have no tangents (JAX makes them symbolic zeros).
    x_dot = list(solved[: len(b_dot)]) + [Zero(ad.tangent_aval(a)) for a in jaxprs.solve.out_avals[len(b_dot) :]]
    return x, x_dot


ad.primitive_jvps[linear_solve_p] = _jvp


def _transpose(cts: Sequence[Any], *args: Any, const_lengths: LinearSolveTuple, jaxprs: LinearSolveTuple) -> list[Any]:
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation of custom_linear_solve")
    consts, b = split_linear_solve_args(args, const_lengths)
    if any(is_undefined_primal(c) for c in _flatten(consts)):
        raise NotImplementedError(
            "custom_linear_solve is linear in b only: it cannot be transposed with respect to the constants "
            "of its matvec or solve functions (JAX does not either)"
        )
    x_cts, aux_cts = list(cts[: len(b)]), cts[len(b) :]
    if any(type(ct) is not Zero for ct in aux_cts):
        raise NotImplementedError("custom_linear_solve: cannot transpose with a nonzero cotangent for solve's aux outputs")
    if not any(is_undefined_primal(x) for x in b):
        return [None] * len(args)
    x_cts = [ad.instantiate_zeros(ct) for ct in x_cts]
    ct_b = linear_solve_p.bind(
        *_flatten(consts.transpose()), *x_cts, const_lengths=const_lengths.transpose(), jaxprs=jaxprs.transpose()
    )
    return [None] * sum(const_lengths) + [ct if is_undefined_primal(x) else None for ct, x in zip(ct_b[: len(b)], b)]


ad.transpose_rules[linear_solve_p] = _transpose


# ---------------------------------------------------------------------------
# Batching


_BatchCache = dict[tuple[int, tuple[bool, ...], tuple[bool, ...]], tuple[ClosedJaxpr, list[bool]]]


def _batch_one(
    closed: ClosedJaxpr, trace: batching.BatchTrace, in_bat: Sequence[bool], instantiate: Sequence[bool], cache: _BatchCache
) -> tuple[ClosedJaxpr, list[bool]]:
    """``closed`` batched at axis 0 where ``in_bat``; an output is batched
    where its rules make it so or ``instantiate`` asks (JAX's batch_jaxpr).
    Memoised as JAX's is: a jaxpr used twice (symmetric's matvec and vecmat)
    stays one jaxpr."""
    key = (id(closed), tuple(in_bat), tuple(instantiate))
    if key not in cache:
        cache[key] = _batch_uncached(closed, trace, in_bat, instantiate)
    return cache[key]


def _batch_uncached(closed: ClosedJaxpr, trace: batching.BatchTrace, in_bat: Sequence[bool], instantiate: Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    in_dims: list[batching.BatchDim] = [0 if b else None for b in in_bat]
    _, natural = batching.batch_jaxpr(closed, trace.axis_size, in_dims, axis_name=trace.axis_name)
    out_bat = [d is not None or inst for d, inst in zip(natural, instantiate)]
    out_dims: list[batching.BatchDim] = [0 if b else None for b in out_bat]
    batched, _ = batching.batch_jaxpr(closed, trace.axis_size, in_dims, out_dims, axis_name=trace.axis_name)
    return batched, out_bat


def _batch(trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]) -> tuple[Any, Any]:
    const_lengths: LinearSolveTuple = params["const_lengths"]
    jaxprs: LinearSolveTuple = params["jaxprs"]
    consts, b = split_linear_solve_args(vals, const_lengths)
    const_dims, b_dims = split_linear_solve_args(dims, const_lengths)
    c_bat = _LinearSolveTuple(*([d is not None for d in ds] for ds in const_dims))
    orig_b_bat = [d is not None for d in b_dims]
    n_b, n_aux = len(b), _num_aux(jaxprs)
    # Which leaves of b and of x are batched must agree between all four
    # jaxprs (x = solve(b), b = matvec(x), ...): grow both until nothing changes.
    b_bat, x_bat = list(orig_b_bat), [False] * (n_b + n_aux)
    cache: _BatchCache = {}
    for _ in range(2 + len(b_bat) + len(x_bat)):
        solve_b, solve_x_bat = _batch_one(jaxprs.solve, trace, c_bat.solve + b_bat, x_bat, cache)
        if jaxprs.vecmat is None:
            vecmat_b = None
            x_bat_out = solve_x_bat
        else:
            vecmat_b, vecmat_x_bat = _batch_one(jaxprs.vecmat, trace, c_bat.vecmat + b_bat, b_bat, cache)
            x_bat_out = [a or s for a, s in zip(vecmat_x_bat + [True] * n_aux, solve_x_bat)]
        x_noaux = x_bat_out[:n_b]
        matvec_b, matvec_b_bat = _batch_one(jaxprs.matvec, trace, c_bat.matvec + x_noaux, b_bat, cache)
        if jaxprs.transpose_solve is None:
            tsolve_b = None
            b_bat_out = [m or o for m, o in zip(matvec_b_bat, orig_b_bat)]
        else:
            tsolve_b, tsolve_bat = _batch_one(jaxprs.transpose_solve, trace, c_bat.transpose_solve + x_noaux, x_bat_out, cache)
            b_bat_out = [m or s or o for m, s, o in zip(matvec_b_bat, tsolve_bat[:n_b], orig_b_bat)]
        if x_bat_out == x_bat and b_bat_out == b_bat:
            break
        x_bat, b_bat = x_bat_out, b_bat_out
    else:  # pragma: no cover - each round only sets flags, so the loop ends within its bound
        raise AssertionError("custom_linear_solve batching: no fixed point")
    new_consts = [batching.moveaxis(x, d, 0) if d is not None and d != 0 else x for x, d in zip(_flatten(consts), _flatten(const_dims))]
    new_b = [
        batching.broadcast(x, trace.axis_size, 0) if now and d is None else (batching.moveaxis(x, d, 0) if now and d != 0 else x)
        for x, d, now in zip(b, b_dims, b_bat)
    ]
    new_jaxprs = _LinearSolveTuple(matvec_b, vecmat_b, solve_b, tsolve_b)
    outs = linear_solve_p.bind(*new_consts, *new_b, const_lengths=const_lengths, jaxprs=new_jaxprs)
    return outs, [0 if bat else None for bat in solve_x_bat]


batching.trace_batch_rules[linear_solve_p] = _batch
