"""What every fuzz case checks, and how a case runs everywhere (tests/test_fuzz.py uses it).

A *case* is a callable and its arguments. It runs four ways -- eagerly and
under ``jit``, on the NumPy reference backend and on XLA -- and must end, all
four ways, in the same outcome:

* a result: the same types everywhere, values agreeing with the reference
  run (``minijax.testing.tolerances``: primitives by their documented ulps,
  programs normwise), and with NumPy where the case names a NumPy reference;
* or an error: of one of JAX's exception types (``JAX_ERRORS``), the same
  type everywhere, whose message names the operation (one of the case's
  names). Anything else -- an AssertionError, a KeyError from inside
  minijax, a RuntimeError from XLA, a result on one backend and an error on
  the other -- is a failure, reported with the case and every outcome.

``FUZZ_SCALE`` multiplies every fuzz test's example count: 1 by default (the
CI run, at least 2,000 cases), 5 with ``MINIJAX_FUZZ=long`` (at least
10,000). ``COUNTS`` counts the cases run and how they ended; with
``MINIJAX_FUZZ_REPORT=path`` the totals are written there as JSON when the
fuzz module finishes.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import traceback
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
from hypothesis import settings

import minijax as jax
from minijax import tree_util
from minijax.config import config_context
from minijax.testing import tolerances

NDArray = np.ndarray[Any, Any]

FUZZ_SCALE = 5 if os.environ.get("MINIJAX_FUZZ", "").lower() == "long" else 1
BACKENDS = ("numpy", "xla")
MODES = ("eager", "jit")

# The exception types JAX raises for bad input. NotImplementedError: what
# minijax does not support yet (complex dtypes, ...), said so in the message.
JAX_ERRORS: tuple[type[BaseException], ...] = (
    TypeError,
    ValueError,
    IndexError,
    OverflowError,
    ZeroDivisionError,
    NotImplementedError,
    FloatingPointError,
)

COUNTS: Counter[str] = Counter()


def fuzz_settings(examples: int) -> settings:
    """``examples`` (times FUZZ_SCALE) examples, derandomized when the profile is (CI)."""
    return settings(
        settings.default,
        max_examples=examples * FUZZ_SCALE,
        deadline=None,
        derandomize=bool(settings.default is not None and settings.default.derandomize) and FUZZ_SCALE == 1,
        print_blob=True,
    )


@dataclasses.dataclass
class Outcome:
    """How one run of a case ended: ``values`` (host arrays) or ``error``."""

    where: str
    values: list[NDArray] | None = None
    error: BaseException | None = None
    trace: str = ""

    def describe(self) -> str:
        if self.error is not None:
            return f"{self.where}: {type(self.error).__name__}: {str(self.error)[:300]}"
        assert self.values is not None
        shown = ", ".join(f"{v.dtype}{list(v.shape)} {np.array2string(v, threshold=8)}" for v in self.values)
        return f"{self.where}: {shown}"


def _family(error: BaseException) -> type[BaseException] | None:
    for family in JAX_ERRORS:
        if isinstance(error, family):
            return family
    return None


def _to_host(out: Any) -> list[NDArray]:
    # A Python scalar returned as is (JAX's switch calls a lone branch directly)
    # compares as the weakly typed array jit would return.
    leaves = tree_util.tree_leaves(out)
    return [np.asarray(jax.numpy.asarray(x) if isinstance(x, (bool, int, float)) else x) for x in leaves]


# jit wrappers are kept per case key: a fresh jit per example would retrace
# and recompile even when the signature was seen before.
_jitted: dict[Hashable, Any] = {}


def _jit(key: Hashable, fn: Callable[..., Any]) -> Any:
    try:
        wrapped = _jitted.get(key)
    except TypeError:
        return jax.jit(fn)
    if wrapped is None:
        if len(_jitted) > 2000:
            _jitted.clear()
        wrapped = _jitted[key] = jax.jit(fn)
    return wrapped


def run_one(fn: Callable[..., Any], args: Sequence[Any], backend: str, mode: str, key: Hashable | None) -> Outcome:
    where = f"{backend}/{mode}"
    with config_context(minijax_backend=backend):
        try:
            f = fn if mode == "eager" else (_jit(key, fn) if key is not None else jax.jit(fn))
            return Outcome(where, values=_to_host(f(*args)))
        except Exception as e:  # every outcome is judged by check_outcomes
            return Outcome(where, error=e, trace=traceback.format_exc(limit=-6))


class FuzzFailure(AssertionError):
    """A case ended badly: the message shows the case and every outcome."""


def check_outcomes(
    case: str,
    outcomes: Sequence[Outcome],
    names: Sequence[str],
    compare: Callable[[list[NDArray], list[NDArray]], tolerances.Agreement] | None = None,
    require_name: bool = True,
    across_modes: bool = True,
) -> str:
    """Judge the runs of one case; returns "ok" or the error family's name. Raises FuzzFailure.

    With ``across_modes`` False, only the runs of one mode must agree (the
    backends with each other): JAX itself treats a concrete scalar argument
    differently from a traced one (``jnp.power(x, np.int8(2))`` is
    ``integer_pow`` eagerly, ``pow`` under jit; ``fori_loop`` with a float
    bound), so eager and jit may differ when a case has one.
    """
    COUNTS["cases"] += 1
    try:
        if across_modes:
            verdict = _judge(case, outcomes, outcomes, names, compare, require_name)
        else:
            modes = sorted({o.where.split("/")[1] for o in outcomes})
            verdicts = [
                _judge(case, [o for o in outcomes if o.where.endswith("/" + m)], outcomes, names, compare, require_name)
                for m in modes
            ]
            verdict = verdicts[0] if len(set(verdicts)) == 1 else "mixed"
    except FuzzFailure:
        COUNTS["failed"] += 1
        raise
    COUNTS["ok" if verdict == "ok" else f"error:{verdict}"] += 1
    return verdict


def _judge(
    case: str,
    group: Sequence[Outcome],
    shown: Sequence[Outcome],
    names: Sequence[str],
    compare: Callable[[list[NDArray], list[NDArray]], tolerances.Agreement] | None,
    require_name: bool,
) -> str:
    """The checks on runs that must agree (``shown``: every run, for the message)."""

    def fail(why: str, culprit: Outcome | None = None) -> FuzzFailure:
        lines = [f"fuzz case {case}: {why}", *("  " + o.describe() for o in shown)]
        if culprit is not None and culprit.trace:
            lines.append(culprit.trace)
        return FuzzFailure("\n".join(lines))

    errors = [o for o in group if o.error is not None]
    for o in errors:
        assert o.error is not None
        if _family(o.error) is None:
            raise fail(f"{type(o.error).__name__} is not one of JAX's exception types for bad input", o)
        message = str(o.error).lower()
        if require_name and not any(re.search(rf"\b{re.escape(n.lower())}\b", message) for n in names):
            raise fail(f"the message does not name the operation (one of {list(names)})", o)
    if errors and len(errors) != len(group):
        raise fail("some runs raised and others returned", errors[0])
    if errors:
        families = {_family(o.error) for o in errors if o.error is not None}
        if len(families) != 1:
            raise fail(f"the runs raised different exception types: {sorted(f.__name__ for f in families if f)}")
        family = families.pop()
        assert family is not None
        return family.__name__
    reference = group[0]
    assert reference.values is not None
    for o in group[1:]:
        assert o.values is not None
        agreement = (compare or compare_programs)(o.values, reference.values)
        if not agreement.ok:
            raise fail(f"{o.where} disagrees with {reference.where}: {agreement.detail}")
    return "ok"


def _flushed(values: Sequence[NDArray], margin: float = 1.0) -> list[NDArray]:
    """Floats below ``margin`` times the smallest normal number as zeros: XLA on CPU
    flushes subnormals (spec/tolerances.md, rule 4), in operands, results and every
    intermediate value, so a program's results that small may come out as zero."""
    out = []
    for v in values:
        if v.dtype.kind == "f" or v.dtype == np.dtype(jax.numpy.bfloat16):
            tiny = margin * float(jax.numpy.finfo(v.dtype).tiny)
            with np.errstate(invalid="ignore"):
                v = np.where(np.abs(v.astype(np.float64)) < tiny, v * 0, v).astype(v.dtype)  # v * 0 keeps the sign
        out.append(v)
    return out


def _without_float0(actual: list[NDArray], expected: list[NDArray]) -> tuple[list[NDArray], list[NDArray], str]:
    """float0 values (tangents of integers) hold no data: only their shapes must agree."""
    kept_a, kept_e, problem = [], [], ""
    for k, (a, e) in enumerate(zip(actual, expected)):
        if a.dtype == jax.dtypes.float0 or e.dtype == jax.dtypes.float0:
            if (a.dtype, a.shape) != (e.dtype, e.shape):
                problem = f"output {k}: {a.dtype}{list(a.shape)} where {e.dtype}{list(e.shape)} was expected"
            continue
        kept_a.append(a)
        kept_e.append(e)
    return kept_a, kept_e, problem


def compare_programs(actual: list[NDArray], expected: list[NDArray]) -> tolerances.Agreement:
    """``tolerances.compare_program``, where a flushed subnormal also agrees."""
    if len(actual) != len(expected):
        return tolerances.Agreement(False, 0.0, f"{len(actual)} outputs where {len(expected)} were expected")
    actual, expected, problem = _without_float0(actual, expected)
    if problem:
        return tolerances.Agreement(False, 0.0, problem)
    agreement = tolerances.compare_program(actual, expected)
    if agreement.ok:
        return agreement
    # A few subnormal intermediates may add up to a little more than the smallest normal.
    flushed = tolerances.compare_program(_flushed(actual, 16.0), _flushed(expected, 16.0))
    return flushed if flushed.ok else agreement


def _nans_where_either(actual: list[NDArray], expected: list[NDArray]) -> tuple[list[NDArray], list[NDArray]]:
    """Both lists with NaN written wherever either has a NaN (floats only)."""
    out_a, out_e = [], []
    for a, e in zip(actual, expected):
        if a.shape == e.shape and a.dtype == e.dtype and (a.dtype.kind == "f" or a.dtype == np.dtype(jax.numpy.bfloat16)):
            either = np.isnan(a.astype(np.float64)) | np.isnan(e.astype(np.float64))
            nan = np.asarray(np.nan, a.dtype)
            a, e = np.where(either, nan, a).astype(a.dtype), np.where(either, nan, e).astype(e.dtype)
        out_a.append(a)
        out_e.append(e)
    return out_a, out_e


def _flushed_arguments(args: Sequence[Any]) -> list[Any] | None:
    """``args`` with subnormal floats flushed to zero, or None when there are none to flush."""
    flushed = [(_flushed([np.asarray(a)])[0] if isinstance(a, (np.ndarray, np.generic)) else a) for a in args]
    changed = any(
        isinstance(a, (np.ndarray, np.generic)) and not np.array_equal(np.asarray(a), np.asarray(f), equal_nan=True)
        for a, f in zip(args, flushed)
    )
    return flushed if changed else None


def _allowing_flushed_inputs(
    fn: Callable[..., Any], args_of_case: Sequence[Any], flushed_args: list[Any]
) -> Callable[[list[NDArray], list[NDArray]], tolerances.Agreement]:
    """A comparison that also accepts the reference's result on flushed inputs: XLA on CPU
    reads subnormal operands as zero (x / x is 0 / 0 there), the NumPy reference does not."""
    cache: list[list[NDArray]] = []

    def compare(actual: list[NDArray], expected: list[NDArray]) -> tolerances.Agreement:
        agreement = compare_programs(actual, expected)
        if agreement.ok:
            return agreement
        if not cache:
            outcome = run_one(fn, flushed_args, "numpy", "eager", None)
            cache.append(outcome.values if outcome.values is not None else [])
        if len(cache[0]) == len(actual):
            flushed = compare_programs(actual, cache[0])
            if flushed.ok:
                return flushed
        # What XLA computes from subnormal operands is unspecified beyond that (atan2 of two
        # subnormals is NaN there: spec/tolerances.md): a NaN against a number may differ.
        relaxed = compare_programs(*_nans_where_either(actual, expected))
        if relaxed.ok:
            return relaxed
        # Element by element (the outputs have the operands' broadcast shape), an
        # element with a subnormal operand is not compared at all (rule 4).
        masked = _masking_subnormal_operands(args_of_case, actual, expected)
        if masked is not None:
            relaxed = compare_programs(*_nans_where_either(*masked))
            if relaxed.ok:
                return relaxed
        return agreement

    return compare


def _by_equation_rules(
    program: Any, args: Sequence[Any], compare: Callable[[list[NDArray], list[NDArray]], tolerances.Agreement]
) -> Callable[[list[NDArray], list[NDArray]], tolerances.Agreement]:
    """``compare``, or else each output by the rule of the primitive that computes it."""
    from minijax.backend import get_backend
    from minijax.testing.checks import compare_program_outputs

    def by_rules(actual: list[NDArray], expected: list[NDArray]) -> tolerances.Agreement:
        agreement = compare(actual, expected)
        if agreement.ok or len(actual) != len(expected):
            return agreement
        try:
            by_rule = compare_program_outputs(program, [np.asarray(a) for a in args], actual, expected, get_backend("numpy"))
        except Exception:  # the program does not run on the reference as a whole: no second opinion
            return agreement
        return by_rule if by_rule.ok else agreement

    return by_rules


def _masking_subnormal_operands(
    args: Sequence[Any], actual: list[NDArray], expected: list[NDArray]
) -> tuple[list[NDArray], list[NDArray]] | None:
    """Both outputs with NaN wherever a broadcast operand is subnormal, when every
    float output has the operands' broadcast shape (an elementwise case); else None."""
    arrays = [np.asarray(a) for a in args if isinstance(a, (np.ndarray, np.generic))]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return None
    subnormal = np.zeros(shape, bool)
    for a in arrays:
        if a.dtype.kind == "f" or a.dtype == np.dtype(jax.numpy.bfloat16):
            wide = np.abs(a.astype(np.float64))
            subnormal |= np.broadcast_to((wide > 0) & (wide < float(jax.numpy.finfo(a.dtype).tiny)), shape)
    if not subnormal.any():
        return None
    out_a, out_e = [], []
    for a, e in zip(actual, expected):
        if a.dtype.kind == "f" or a.dtype == np.dtype(jax.numpy.bfloat16):
            if a.shape != shape or e.shape != shape:
                return None
            nan = np.asarray(np.nan, a.dtype)
            a, e = np.where(subnormal, nan, a).astype(a.dtype), np.where(subnormal, nan, e).astype(e.dtype)
        out_a.append(a)
        out_e.append(e)
    return out_a, out_e


# Results bigger than this many elements are not computed: an argument such as
# jnp.arange(0, 2**31) asks for gigabytes, which is legal, only not a test.
MAX_RESULT_SIZE = 2**22


def _too_large(fn: Callable[..., Any], args: Sequence[Any]) -> bool:
    """Whether ``fn(*args)`` would make a result too big to run here (by ``eval_shape``)."""
    try:
        with config_context(minijax_backend="numpy"):
            shapes = jax.eval_shape(fn, *args)
    except Exception:  # the case raises (or needs concrete values): running it is cheap
        return False
    return any(math.prod(getattr(s, "shape", ())) > MAX_RESULT_SIZE for s in tree_util.tree_leaves(shapes))


def run_case(
    case: str,
    fn: Callable[..., Any],
    args: Sequence[Any],
    names: Sequence[str],
    key: Hashable | None = None,
    compare: Callable[[list[NDArray], list[NDArray]], tolerances.Agreement] | None = None,
    modes: Sequence[str] = MODES,
    require_name: bool = True,
    reference: Callable[..., Any] | None = None,
    may_be_large: bool = False,
    program: Any = None,
) -> str:
    """Run ``fn(*args)`` on every backend in every mode and judge the outcomes (see the module doc).

    ``reference(*args)``, when given, is a NumPy computation the results must
    also agree with (normwise) when the runs succeed. ``may_be_large``: the
    case's parameters may ask for a huge result (checked first, by eval_shape).
    ``program``: the ClosedJaxpr the case evaluates, when it is one: an output that
    one primitive computes from exactly computed values may also agree by that
    primitive's own rule (``checks.compare_program_outputs``).
    """
    if may_be_large and _too_large(fn, args):
        COUNTS["too large to run"] += 1
        return "too large"
    outcomes = [run_one(fn, args, b, m, key) for b in BACKENDS for m in modes]
    scalar_argument = any(np.ndim(a) == 0 for a in args)
    flushed_args = _flushed_arguments(args)
    if compare is None and flushed_args is not None:
        compare = _allowing_flushed_inputs(fn, args, flushed_args)
    if program is not None:
        compare = _by_equation_rules(program, args, compare or compare_programs)
    verdict = check_outcomes(case, outcomes, names, compare, require_name, across_modes=not scalar_argument)
    if verdict == "ok" and reference is not None:
        values = outcomes[0].values
        assert values is not None
        with np.errstate(all="ignore"):
            want = [np.asarray(w) for w in tree_util.tree_leaves(reference(*args))]
        want = [w.astype(v.dtype) if w.shape == v.shape else w for w, v in zip(want, values)]
        agreement = tolerances.compare_program(_flushed(values), _flushed(want), rtol=1e-4)
        if not agreement.ok:
            COUNTS["failed"] += 1
            raise FuzzFailure(f"fuzz case {case}: the result disagrees with NumPy: {agreement.detail}")
    return verdict
