"""What the conformance suite runs: units of checks, how they are drawn, and the hypothesis driver.

A ``Unit`` is one row of the conformance table: a kind of check (the
primitive against the reference, or one transformation law) for one
primitive and dtype, drawn ``examples`` times by hypothesis from the
primitive's sampler (``minijax.testing.samplers``). ``run_unit`` runs it on a
backend; when a check fails, hypothesis shrinks the drawn case (smaller
shapes, simpler params, seed 0 for the values) and the unit keeps the
smallest failing check for its reproducer.

Values: each drawn case is checked on two or three sets of operand values:
the sampler's own (inside the primitive's differentiable domain); the same
with about a third of the elements replaced by the dtype's edge values
(±0, ±inf, NaN, subnormals, the extremes; ``strategies.edge_values``), in
every floating operand and in the integer operands of elementwise
primitives (where every value is defined; the index operands of gathers,
slices and the like keep the sampler's values); and, for primitives with
integer operands after the first (indices), the same values with every
index equal to the first, so that scatters see colliding updates. The
linalg family gets no edge values: a decomposition of a matrix with NaN or
inf is unspecified.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hypothesis_seed, settings, strategies as st

from minijax.backend import Backend
from minijax.config import enable_x64
from minijax.core import Primitive
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from minijax.testing.cases import Case, Sampler, is_float
from minijax.testing.checks import Check, Outcome, families, family
from minijax.testing.runner import run_check
from minijax.testing.strategies import dtype_list, edge_values, seeds

NDArray = np.ndarray[Any, Any]

_WIDE = {np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.float64)}
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

# Share of elements replaced by edge values in the second value set.
EDGE_SHARE = 0.3


# ---------------------------------------------------------------------------
# Building checks from sampled cases


def needs_x64(dtype: np.dtype[Any]) -> bool:
    return np.dtype(dtype) in _WIDE


def one_equation(prim: Primitive, params: dict[str, Any], avals: Any) -> ClosedJaxpr:
    """The jaxpr ``outs = prim[params] ins`` over fresh inputs."""
    out = prim.abstract_eval(*avals, **params)
    outs = list(out) if prim.multiple_results else [out]
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in outs]
    return ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(list(invars), outvars, prim, dict(params))]), [])


def case_jaxpr(case: Case) -> ClosedJaxpr:
    return one_equation(case.prim, dict(case.params), case.avals)


def with_edges(case: Case, args: list[NDArray], rng: np.random.Generator) -> list[NDArray]:
    """``args`` with about EDGE_SHARE of the elements of the spiceable operands replaced by edge values."""
    fam = family(case.prim.name)
    if fam == "linalg":
        return args
    spiced = []
    for x in args:
        x = np.asarray(x)
        if x.size and (is_float(x.dtype) or (fam == "elementwise" and x.dtype.kind in "iu")):
            edges = np.asarray(edge_values(x.dtype), dtype=np.float64 if is_float(x.dtype) else object)
            with np.errstate(over="ignore", invalid="ignore"):
                pick = np.asarray(edges[rng.integers(0, len(edges), size=x.shape)]).astype(x.dtype)
            x = np.where(rng.random(size=x.shape) < EDGE_SHARE, pick, x).astype(x.dtype)
        spiced.append(np.asarray(x))
    return spiced


def with_repeated_indices(case: Case, args: list[NDArray]) -> list[NDArray] | None:
    """``args`` with every integer operand but the first of a non-elementwise primitive (the index
    operands of gathers, scatters, slices) set to its own first element: every index the same, so a
    scatter's updates all collide. None when there is no such operand, or when the params promise
    unique indices."""
    if family(case.prim.name) == "elementwise" or case.params.get("unique_indices"):
        return None
    changed = False
    repeated = []
    for i, x in enumerate(args):
        x = np.asarray(x)
        if i > 0 and x.dtype.kind in "iu" and x.size > 1:
            x = np.full_like(x, x.reshape(-1)[0])
            changed = True
        repeated.append(x)
    return repeated if changed else None


def primitive_checks(
    case: Case, rng: np.random.Generator, dtype: np.dtype[Any], x64: bool, kind: str = "primitive"
) -> list[Check]:
    """The case on the sampler's values, on the same values with edge values mixed in, and (for
    primitives that take indices) with every index the same."""
    closed = case_jaxpr(case)
    plain = [np.asarray(a) for a in case.args(rng)]
    value_sets = [plain, with_edges(case, plain, rng)]
    repeated = with_repeated_indices(case, plain)
    if repeated is not None:
        value_sets.append(repeated)
    return [Check(kind, case.prim.name, dtype.name, closed, args, x64) for args in value_sets]


# ---------------------------------------------------------------------------
# Units


Draw = Callable[[st.DataObject], list[Check]]


@dataclasses.dataclass
class Unit:
    """One row of the table: ``examples`` hypothesis draws of checks of one kind, subject and dtype."""

    section: str  # "primitives", "laws", "corpus", "programs"
    kind: str
    subject: str
    dtype: str
    examples: int
    x64: bool
    draw: Draw | None = None  # None: the unit is reported unsupported without running
    fixed: list[Check] | None = None  # checks that are not drawn (the case corpus)
    note: str = ""


@dataclasses.dataclass
class UnitResult:
    """What running a unit found."""

    unit: Unit
    passed: int = 0
    failed: int = 0
    unsupported: int = 0
    executions: int = 0  # checks run, shrinking included
    worst_ulps: float = 0.0
    failure: tuple[Check, Outcome] | None = None  # the smallest failing check
    note: str = ""
    seconds: float = 0.0

    @property
    def status(self) -> str:
        if self.failed:
            return "fail"
        if self.passed:
            return "pass"
        return "unsupported" if self.unsupported or self.unit.draw is None and self.unit.fixed is None else "pass"

    @property
    def checks(self) -> int:
        return self.passed + self.failed


class _Disagreement(Exception):
    pass


def _hypothesis_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
    )


def run_unit(unit: Unit, backend: Backend, reference: Backend, seed: int | None) -> UnitResult:
    """Run ``unit``'s checks on ``backend`` against ``reference``."""
    result = UnitResult(unit, note=unit.note)
    start = time.perf_counter()
    if unit.fixed is not None:
        for check in unit.fixed:
            _record(result, check, run_check(check, backend, reference), counting=True)
    elif unit.draw is not None:
        _run_drawn(unit, unit.draw, result, backend, reference, seed)
        if not result.executions and not result.note:
            result.note = "no drawn case had something to check (no differentiable or linear operand)"
    result.seconds = time.perf_counter() - start
    return result


def _record(result: UnitResult, check: Check, outcome: Outcome, counting: bool) -> None:
    result.executions += 1
    if outcome.status == "unsupported":
        if counting:
            result.unsupported += 1
            result.note = result.note or outcome.message
        return
    if counting:
        if outcome.failed:
            result.failed += 1
        else:
            result.passed += 1
        if np.isfinite(outcome.worst_ulps) or outcome.failed:
            result.worst_ulps = max(result.worst_ulps, outcome.worst_ulps)
    if outcome.failed and (result.failure is None or not counting):
        result.failure = (check, outcome)


def _run_drawn(unit: Unit, draw: Draw, result: UnitResult, backend: Backend, reference: Backend, seed: int | None) -> None:
    def body(data: st.DataObject) -> None:
        with enable_x64(unit.x64):
            checks = draw(data)
        for check in checks:
            outcome = run_check(check, backend, reference)
            # Once a failure is found hypothesis only shrinks it: those runs are not counted.
            _record(result, check, outcome, counting=result.failure is None)
            if outcome.failed:
                raise _Disagreement(outcome.message)

    test = given(data=st.data())(body)
    test = _hypothesis_settings(unit.examples)(test)
    if seed is not None:
        test = hypothesis_seed(seed)(test)
    try:
        test()
    except _Disagreement:
        pass  # the last failure recorded is the shrunk one, which hypothesis re-ran last
    except Exception as e:  # hypothesis gave up (flaky, unsatisfiable): say so in the row
        if result.failure is None:
            result.note = f"hypothesis: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


# ---------------------------------------------------------------------------
# The units of the primitive section and of the law section


def primitive_unit(sampler: Sampler, dtype: np.dtype[Any], examples: int, supported: bool, kind: str = "primitive") -> Unit:
    """``examples`` draws of ``sampler``'s cases; ``kind`` "jit" runs the backend's side compiled."""
    x64 = needs_x64(dtype)

    def draw(data: st.DataObject) -> list[Check]:
        case = data.draw(sampler.cases(dtype), label="case")
        rng = data.draw(seeds(), label="values")
        return primitive_checks(case, rng, dtype, x64, kind)

    return Unit("primitives", kind, sampler.name, dtype.name, examples, x64, draw if supported else None)


def _law_check(kind: str, case: Case, args: list[NDArray], dtype: np.dtype[Any], x64: bool, options: dict[str, Any]) -> Check:
    return Check(kind, case.prim.name, dtype.name, case_jaxpr(case), [np.asarray(a) for a in args], x64, options)


def _float_outputs(case: Case) -> bool:
    out = case.prim.abstract_eval(*case.avals, **case.params)
    return any(is_float(a.dtype) for a in (out if case.prim.multiple_results else [out]))


def law_unit(kind: str, sampler: Sampler, dtype: np.dtype[Any], examples: int, supported: bool) -> Unit:
    """A unit of one law: ``jvp``/``vjp`` on the differentiable operands, ``transpose`` on a linear
    group, ``vmap`` with random batch axes."""
    x64 = needs_x64(dtype)

    def draw(data: st.DataObject) -> list[Check]:
        case = data.draw(sampler.cases(dtype), label="case")
        args = [np.asarray(a) for a in case.args(data.draw(seeds(), label="values"))]
        if kind in ("jvp", "vjp"):
            if not case.differentiable or not _float_outputs(case):
                return []
            return [_law_check(kind, case, args, dtype, x64, {"positions": list(case.differentiable)})]
        if kind == "transpose":
            if not case.linear:
                return []
            group = data.draw(st.sampled_from(case.linear), label="linear operands")
            return [_law_check(kind, case, args, dtype, x64, {"positions": list(group)})]
        return [_vmap_check(case, data, dtype, x64)]

    return Unit("laws", kind, sampler.name, dtype.name, examples, x64, draw if supported else None)


def _vmap_check(case: Case, data: st.DataObject, dtype: np.dtype[Any], x64: bool) -> Check:
    """in_axes (None for some operands, negative ones too, at least one batched), out_axes and a batch."""
    dims: list[int | None] = []
    for aval in case.avals:
        dims.append(data.draw(st.one_of(st.none(), st.integers(-aval.ndim - 1, aval.ndim)), label="in_axis"))
    if case.avals and all(d is None for d in dims):
        i = data.draw(st.integers(0, len(dims) - 1), label="batched operand")
        dims[i] = data.draw(st.integers(-case.avals[i].ndim - 1, case.avals[i].ndim), label="in_axis")
    out = case.prim.abstract_eval(*case.avals, **case.params)
    # One out_axes serves every result, so the lowest-ranked one bounds it (eigh's eigenvalues
    # and lu's pivots have a lower rank than the first result); the loader checks the same.
    out_rank = min(a.ndim for a in (list(out) if case.prim.multiple_results else [out]))
    out_axes = data.draw(st.integers(-out_rank - 1, out_rank), label="out_axes")
    size = data.draw(st.integers(1, 3), label="batch size")
    rng = data.draw(seeds(), label="values")
    examples = [[np.asarray(a) for a in case.args(rng)] for _ in range(size)]
    stacked = [
        examples[0][i] if d is None else np.stack([ex[i] for ex in examples], axis=d) for i, d in enumerate(dims)
    ]
    options = {"in_axes": dims, "out_axes": out_axes, "axis_size": size}
    return Check("vmap", case.prim.name, dtype.name, case_jaxpr(case), stacked, x64, options)


def law_dtypes(kind: str, sampler: Sampler) -> list[np.dtype[Any]]:
    """The dtypes a law is checked in: float32 and float64 for the derivative laws; for vmap one
    dtype of each kind the primitive takes (float32, int32, uint32, bool)."""
    if kind in ("jvp", "vjp", "transpose"):
        return [d for d in (F32, F64) if sampler.accepts(d)]
    return [np.dtype(d) for d in (np.float32, np.int32, np.uint32, np.bool_) if sampler.accepts(d)]


def all_dtypes(sampler: Sampler) -> list[np.dtype[Any]]:
    with enable_x64(True):
        return [d for d in dtype_list(sampler.kinds)]


__all__ = [
    "EDGE_SHARE",
    "Unit",
    "UnitResult",
    "all_dtypes",
    "case_jaxpr",
    "families",
    "family",
    "law_dtypes",
    "law_unit",
    "needs_x64",
    "one_equation",
    "primitive_checks",
    "primitive_unit",
    "run_unit",
    "with_edges",
    "with_repeated_indices",
]
