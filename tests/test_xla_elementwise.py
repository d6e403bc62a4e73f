"""The XLA backend's elementwise lowering rules against the NumPy reference backend.

For every primitive of ``minijax/primitives/elementwise.py``, hypothesis draws
shapes (rank 0, zero-size, size-1 broadcasting), every accepted dtype, values
rich in edge cases (±0, ±inf, NaN, subnormals, extreme integers, shift
amounts around the bit width) and params; the primitive runs eagerly on
arrays placed on the ``xla`` backend, and the result must equal the NumPy
backend's within the tolerance ``spec/tolerances.md`` gives for the primitive
and dtype: bit-exact unless listed, N ulps for the transcendental functions.

XLA on CPU flushes subnormal float32/float64/bfloat16 operands and results to
zero in arithmetic (``spec/primitives/elementwise.md``, "Where minijax differs
from XLA on CPU"), so for those dtypes an element also passes when it equals
the reference evaluated on flushed operands, or when the reference result is
subnormal and XLA's is ±0. Primitives that work on the bits (``BIT_EXACT``)
get no such allowance.
"""

from __future__ import annotations

import contextlib
import functools
import pathlib
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st

pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")

from minijax_numpy.table import IMPLS, load_all  # noqa: E402
from minijax_xla.backend import load_rules  # noqa: E402
from minijax_xla.lowering import LOWERINGS  # noqa: E402

import minijax  # noqa: E402
from minijax import backend as backends, dtypes  # noqa: E402
from minijax.config import config_context, enable_x64  # noqa: E402
from minijax.core import Primitive, ShapedArray  # noqa: E402
from minijax.primitives import elementwise as ew  # noqa: E402
from minijax.testing import tolerances  # noqa: E402

pytestmark = pytest.mark.single_backend  # compares the xla backend with numpy, by name

load_all()
load_rules()

ELEMENTWISE = sorted(p.name for p in vars(ew).values() if isinstance(p, Primitive))
PRIMITIVES = {p.name: p for p in vars(ew).values() if isinstance(p, Primitive)}

BF16 = np.dtype(ml_dtypes.bfloat16)
BOOL = np.dtype(np.bool_)
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)]
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
ALL_DTYPES = [BOOL, *INTS, *FLOATS]
WIDE = {np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.float64)}
# Dtypes whose arithmetic XLA's CPU code runs with subnormals flushed to zero
# (float16 is computed in float32, where its subnormals are normal numbers).
FLUSHED = {BF16, np.dtype(np.float32), np.dtype(np.float64)}
# Primitives computed on the bits, where XLA keeps subnormals.
# (nextafter is not one: its equality test sees flushed operands.)
BIT_EXACT = {"neg", "abs", "copy", "select_n", "reduce_precision", "bitcast_convert_type"}
# Primitives whose XLA result for subnormal operands is not the result for zeros
# either (atan2(1e-40, 1e-40) is NaN, cbrt(1e-40) is -5.6e-16, log(1e-45) is -inf
# or -103.97 depending on vectorisation, nextafter(0, 1e-40) is 1e-40, bfloat16
# pow(9.2e-41, 0.5) is 2.6e-23; JAX gives the same): elements with a subnormal
# operand are not compared.
SUBNORMAL_UNSPECIFIED = {"atan2", "cbrt", "log", "nextafter", "pow"}
# Primitives that return one of their operands: XLA compares the flushed
# operands, and when those are equal (0 and a subnormal) jaxlib 0.11+ may
# return either one (bfloat16 min(0, 9.2e-41) is 9.2e-41 there, in JAX 0.12
# too); the result must equal the reference's once both are flushed.
SELECTS_AN_OPERAND = {"min", "max", "clamp"}
# Within 1e-12 of a negative integer the reference's float64 reflection formula
# loses accuracy (sin(pi x) of x next to a pole): not compared there.
NEAR_POLE_REFERENCE_LOSS = {"lgamma", "digamma"}
# With flushing, results this close to the subnormal range may come out as ±0
# (intermediate values underflow first).
FLUSH_MARGIN = 8

UNSIGNED: dict[int, np.dtype[Any]] = {
    1: np.dtype(np.uint8),
    2: np.dtype(np.uint16),
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
}
SIGNED: dict[int, np.dtype[Any]] = {
    1: np.dtype(np.int8),
    2: np.dtype(np.int16),
    4: np.dtype(np.int32),
    8: np.dtype(np.int64),
}

Array = np.ndarray[Any, Any]

# ---------------------------------------------------------------------------
# Tolerances: the table of spec/tolerances.md, in ulps of the result dtype.
# A primitive missing here is exact for every dtype.

Tolerance = tuple[int, int]  # (ulps of the result, absolute error in eps of the dtype)


# The table lives in minijax.testing.tolerances (the conformance suite's policy),
# keyed there by dtype name; here by dtype.
TOLERANCES: dict[str, dict[np.dtype[Any], Tolerance]] = {
    name: {dt: per_dtype[dt.name] for dt in FLOATS if dt.name in per_dtype} for name, per_dtype in tolerances.ULPS.items()
}


def tolerance(name: str, dtype: np.dtype[Any]) -> Tolerance:
    return TOLERANCES.get(name, {}).get(dtype, (0, 0))


# ---------------------------------------------------------------------------
# Values: bit patterns drawn from edge cases, moderate values and all patterns


def _as_bits(values: list[Any], dtype: np.dtype[Any]) -> list[int]:
    """The bit patterns (as unsigned ints) of ``values`` in ``dtype``; integers wrap around."""
    if dtype.kind in "iu":
        return [v % 2 ** (8 * dtype.itemsize) for v in values]
    with np.errstate(over="ignore", invalid="ignore"):
        arr = np.array(values, dtype=np.float64).astype(dtype)
    return [int(b) for b in arr.view(UNSIGNED[dtype.itemsize])]


@functools.cache
def element_bits(dtype: np.dtype[Any]) -> st.SearchStrategy[int]:
    """One element's bit pattern: an edge value, a moderate value, or any pattern."""
    if dtype == BOOL:
        return st.integers(0, 1)
    nbits = 8 * dtype.itemsize
    any_pattern = st.integers(0, 2**nbits - 1)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        edges = [
            0,
            1,
            -1,
            2,
            int(info.min),
            int(info.max),
            int(info.min) + 1,
            int(info.max) - 1,
            nbits - 1,
            nbits,
            nbits + 1,
        ]
        small = st.integers(-3, 70).map(lambda v: v % 2**nbits)
        return st.one_of(st.sampled_from(_as_bits(edges, dtype)), small, any_pattern)
    fi = dtypes.finfo(dtype)
    tiny, sub, big, eps = float(fi.tiny), float(fi.smallest_subnormal), float(fi.max), float(fi.eps)
    float_edges: list[float] = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.0, 10.0, np.inf, -np.inf, np.nan,
             big, -big, tiny, -tiny, sub, -sub, 3 * sub, -3 * sub, eps, 1 - eps / 2, -(1 - eps / 2)]  # fmt: skip
    moderate = st.one_of(st.floats(-12, 12), st.floats(-1, 1))
    return st.one_of(
        st.sampled_from(_as_bits(float_edges, dtype)),
        moderate.map(lambda v: _as_bits([v], dtype)[0]),
        any_pattern,
    )


def draw_array(data: st.DataObject, dtype: np.dtype[Any], shape: tuple[int, ...]) -> Array:
    n = int(np.prod(shape, dtype=np.int64))
    bits = data.draw(st.lists(element_bits(dtype), min_size=n, max_size=n))
    carrier = np.dtype(np.uint8) if dtype == BOOL else UNSIGNED[dtype.itemsize]
    return np.asarray(np.array(bits, dtype=carrier).view(dtype).reshape(shape))


RESULT_SHAPES: list[tuple[int, ...]] = [(), (0,), (7,), (3, 4), (2, 0, 3)]


def draw_operand_shape(data: st.DataObject, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape``, rank 0, or ``shape`` with some dims 1 (lax broadcasting)."""
    kind = data.draw(st.sampled_from(["same", "same", "scalar", "ones"]))
    if kind == "scalar" or not shape:
        return () if kind == "scalar" else shape
    if kind == "same":
        return shape
    return tuple(1 if data.draw(st.booleans()) else d for d in shape)


# ---------------------------------------------------------------------------
# Cases: operands and params for each primitive

UNARY = [n for n in ELEMENTWISE if n in {
    "neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh",
    "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
    "atanh", "sqrt", "rsqrt", "cbrt", "abs", "erf", "erfc", "erf_inv", "lgamma", "digamma",
    "not", "population_count", "clz", "square", "copy",
}]  # fmt: skip
BINARY = [n for n in ELEMENTWISE if n in {
    "add", "sub", "mul", "div", "rem", "max", "min", "atan2", "nextafter", "and", "or", "xor",
    "shift_left", "shift_right_logical", "shift_right_arithmetic", "eq", "ne", "lt", "le", "gt", "ge",
}]  # fmt: skip
ACCURACY = {p.name for p in ew.ACCURACY_PRIMITIVES}


def _accepts(name: str, avals: list[ShapedArray], params: dict[str, Any]) -> bool:
    try:
        PRIMITIVES[name].abstract_eval(*avals, **params)
    except (TypeError, ValueError):
        return False
    return True


@functools.cache
def accepted_dtypes(name: str, arity: int) -> list[np.dtype[Any]]:
    params: dict[str, Any] = {"accuracy": None} if name in ACCURACY else {}
    extra: dict[str, dict[str, Any]] = {"round": {"rounding_method": ew.RoundingMethod.TO_NEAREST_EVEN},
               "integer_pow": {"y": 2},
               "reduce_precision": {"exponent_bits": 5, "mantissa_bits": 2}}  # fmt: skip
    params |= extra.get(name, {})
    return [d for d in ALL_DTYPES if _accepts(name, [ShapedArray((), d)] * arity, params)]


def draw_case(data: st.DataObject, name: str) -> tuple[list[Array], dict[str, Any]]:
    """Operands (NumPy arrays) and params for one application of ``name``."""
    shape = data.draw(st.sampled_from(RESULT_SHAPES))
    if name in UNARY:
        dtype = data.draw(st.sampled_from(accepted_dtypes(name, 1)))
        return [draw_array(data, dtype, shape)], {"accuracy": None} if name in ACCURACY else {}
    if name in BINARY:
        dtype = data.draw(st.sampled_from(accepted_dtypes(name, 2)))
        return [draw_array(data, dtype, draw_operand_shape(data, shape)) for _ in range(2)], {}
    return SPECIAL_CASES[name](data, shape)


def _float_operand(data: st.DataObject, shape: tuple[int, ...]) -> Array:
    return draw_array(data, data.draw(st.sampled_from(FLOATS)), shape)


def _case_round(data: st.DataObject, shape: tuple[int, ...]) -> tuple[list[Array], dict[str, Any]]:
    return [_float_operand(data, shape)], {"rounding_method": data.draw(st.sampled_from(list(ew.RoundingMethod)))}


def _case_integer_pow(data: st.DataObject, shape: tuple[int, ...]) -> tuple[list[Array], dict[str, Any]]:
    dtype = data.draw(st.sampled_from(accepted_dtypes("integer_pow", 1)))
    low = -9 if dtype in FLOATS else 0
    return [draw_array(data, dtype, shape)], {"y": data.draw(st.integers(low, 17))}


def _case_reduce_precision(data: st.DataObject, shape: tuple[int, ...]) -> tuple[list[Array], dict[str, Any]]:
    x = _float_operand(data, shape)
    fi = dtypes.finfo(x.dtype)
    exponent = 8 * x.dtype.itemsize - 1 - fi.nmant
    params = {
        "exponent_bits": data.draw(st.integers(1, exponent + 2)),
        "mantissa_bits": data.draw(st.integers(0, fi.nmant + 2)),
    }
    return [x], params


def _case_pow(data: st.DataObject, shape: tuple[int, ...]) -> tuple[list[Array], dict[str, Any]]:
    x_dtype = data.draw(st.sampled_from(FLOATS))
    y_dtype = data.draw(st.sampled_from([x_dtype, *INTS]))
    return [draw_array(data, x_dtype, draw_operand_shape(data, shape)),
            draw_array(data, y_dtype, draw_operand_shape(data, shape))], {}  # fmt: skip


def _case_select_n(data: st.DataObject, shape: tuple[int, ...]) -> tuple[list[Array], dict[str, Any]]:
    which_dtype = data.draw(st.sampled_from([BOOL, np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.uint8)]))
    n = data.draw(st.integers(1, 2 if which_dtype == BOOL else 5))
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    which_shape = data.draw(st.sampled_from([(), shape]))
    if which_dtype == BOOL:
        which = draw_array(data, BOOL, which_shape)
    else:  # mostly in range, sometimes past either end (XLA clamps)
        indices = data.draw(
            st.lists(st.integers(-2, n + 1), min_size=int(np.prod(which_shape)), max_size=int(np.prod(which_shape)))
        )
        which = np.array(indices).astype(which_dtype).reshape(which_shape)
    return [which, *(draw_array(data, dtype, shape) for _ in range(n))], {}


def _case_clamp(data: st.DataObject, shape: tuple[int, ...]) -> tuple[list[Array], dict[str, Any]]:
    dtype = data.draw(st.sampled_from(accepted_dtypes("clamp", 3)))
    lo, hi = (draw_array(data, dtype, data.draw(st.sampled_from([(), shape]))) for _ in range(2))
    return [lo, draw_array(data, dtype, shape), hi], {}


def _case_convert(data: st.DataObject, shape: tuple[int, ...]) -> tuple[list[Array], dict[str, Any]]:
    src, new = data.draw(st.sampled_from(ALL_DTYPES)), data.draw(st.sampled_from(ALL_DTYPES))
    return [draw_array(data, src, shape)], {"new_dtype": new, "weak_type": data.draw(st.booleans()), "sharding": None}


def _case_bitcast(data: st.DataObject, shape: tuple[int, ...]) -> tuple[list[Array], dict[str, Any]]:
    src, new = (data.draw(st.sampled_from([*INTS, *FLOATS])) for _ in range(2))
    if new.itemsize > src.itemsize:  # the minor dimension is consumed: it must hold exactly one result
        shape = (*shape, new.itemsize // src.itemsize)
    return [draw_array(data, src, shape)], {"new_dtype": new}


SPECIAL_CASES = {
    "round": _case_round,
    "integer_pow": _case_integer_pow,
    "reduce_precision": _case_reduce_precision,
    "pow": _case_pow,
    "select_n": _case_select_n,
    "clamp": _case_clamp,
    "convert_element_type": _case_convert,
    "bitcast_convert_type": _case_bitcast,
}


# ---------------------------------------------------------------------------
# Running on both backends and comparing


@contextlib.contextmanager
def x64_if_needed(args: list[Array], params: dict[str, Any]) -> Iterator[None]:
    wide = any(a.dtype in WIDE for a in args) or np.dtype(params.get("new_dtype", BOOL)) in WIDE
    with enable_x64(True) if wide else contextlib.nullcontext():
        yield


def xla_device() -> Any:
    return backends.get_backend("xla").devices()[0]


def run_xla(name: str, args: list[Array], params: dict[str, Any]) -> Array:
    """The primitive applied eagerly to arrays on the xla backend."""
    with x64_if_needed(args, params):
        arrays = [minijax.device_put(a, device=xla_device()) for a in args]
        out = PRIMITIVES[name].bind(*arrays, **params)
        assert out._backend.name == "xla"
        return np.asarray(out)


def run_numpy(name: str, args: list[Array], params: dict[str, Any]) -> Array:
    with np.errstate(all="ignore"), x64_if_needed(args, params):
        return np.asarray(IMPLS[name](*args, **params))


def is_subnormal(x: Array) -> Array:
    if x.dtype not in FLUSHED:
        return np.zeros(x.shape, bool)
    with np.errstate(invalid="ignore"):
        return np.asarray((x != 0) & (np.abs(x) < dtypes.finfo(x.dtype).tiny))


def flush_subnormals(x: Array) -> Array:
    if x.dtype not in FLUSHED:
        return x
    tiny = dtypes.finfo(x.dtype).tiny
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x) < tiny, np.zeros_like(x) * np.sign(x), x).astype(x.dtype)


def _ordered(x: Array) -> Array:
    """Float bits mapped to integers that count ulps monotonically (±0 both map to 0)."""
    i = x.view(SIGNED[x.dtype.itemsize]).astype(object)
    low = -(2 ** (8 * x.dtype.itemsize - 1))
    return np.asarray(np.where(i < 0, low - i, i))


def agree(actual: Array, expected: Array, tol: Tolerance, flushed: bool) -> Array:
    """Elementwise: ``actual`` equals ``expected`` (bits; any NaN equals any NaN), or is
    within the tolerance; with ``flushed``, a (nearly) subnormal expected value accepts ±0."""
    ulps, atol_eps = tol
    if actual.dtype not in FLOATS:
        return np.asarray(actual == expected)
    u = UNSIGNED[actual.dtype.itemsize]
    ok = (actual.view(u) == expected.view(u)) | (np.isnan(actual) & np.isnan(expected))
    if ulps:
        both_finite_or_inf = ~np.isnan(actual) & ~np.isnan(expected)
        distance = np.abs(_ordered(actual) - _ordered(expected))
        ok |= both_finite_or_inf & np.asarray(distance <= ulps)
    if atol_eps:
        with np.errstate(invalid="ignore"):
            error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
            ok |= error <= atol_eps * float(dtypes.finfo(actual.dtype).eps)
    if flushed:
        with np.errstate(invalid="ignore"):
            ok |= (actual == 0) & (np.abs(expected) < FLUSH_MARGIN * float(dtypes.finfo(actual.dtype).tiny))
    return np.asarray(ok)


def check(name: str, args: list[Array], params: dict[str, Any]) -> None:
    check_result(name, args, params, run_xla(name, args, params), lambda ops: run_numpy(name, ops, params))


def check_result(
    name: str, args: list[Array], params: dict[str, Any], actual: Array, reference: Callable[[list[Array]], Array]
) -> None:
    """``actual``, XLA's result of ``name`` on ``args``, agrees with the reference
    (``reference(operands)``, the NumPy backend's result) as spec/tolerances.md says.

    Also used by the backend-parametrised suites (``tests/test_elementwise.py``)
    for their runs on xla.
    """
    expected = reference(args)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, (actual, expected)
    ulps = tolerance(name, actual.dtype) if actual.dtype in FLOATS else (0, 0)
    if name == "div" and actual.dtype in FLOATS and any(a.shape != actual.shape for a in args):
        ulps = (1, 0)  # XLA divides by a broadcast operand as a multiplication by its reciprocal
    flushes = name not in BIT_EXACT and any(a.dtype in FLUSHED for a in [*args, actual])
    ok = agree(actual, expected, ulps, flushes)
    if flushes and not ok.all():
        flushed_expected = reference([flush_subnormals(a) for a in args])
        ok |= agree(actual, flushed_expected, ulps, True)
    if name == "div" and actual.dtype in FLOATS and any(a.shape != actual.shape for a in args):
        # XLA's x * (1 / y) also where the reciprocal itself over- or underflows
        # (float16 0 / 6e-08 is 0 * inf = nan there, as in JAX).
        work = np.float64 if actual.dtype == np.dtype(np.float64) else np.float32
        with np.errstate(all="ignore"):
            reciprocal = flush_subnormals((work(1) / args[1].astype(work)).astype(actual.dtype))
            as_xla = (args[0].astype(work) * reciprocal.astype(work)).astype(actual.dtype)
        ok |= agree(actual, np.broadcast_to(as_xla, actual.shape), (1, 0), flushes)
    if name in SELECTS_AN_OPERAND and flushes and actual.dtype in FLOATS:
        with np.errstate(invalid="ignore"):
            ok |= np.asarray(flush_subnormals(actual) == flush_subnormals(expected))
    if name in NEAR_POLE_REFERENCE_LOSS and args[0].dtype == np.dtype(np.float64):
        x = args[0]
        with np.errstate(invalid="ignore"):
            ok |= (x < 0) & (np.abs(x - np.round(x)) < 1e-12)
    if name in SUBNORMAL_UNSPECIFIED:
        ok |= functools.reduce(np.logical_or, [is_subnormal(np.broadcast_to(a, ok.shape)) for a in args])
    if not ok.all():
        bad = np.argwhere(~ok)[:5].tolist() if ok.ndim else [[]]
        operands = [np.broadcast_to(a, ok.shape)[tuple(i)] if ok.ndim else a for a in args for i in bad[:1]]
        raise AssertionError(
            f"{name}{params}: xla != numpy at {len(np.argwhere(~ok)) if ok.ndim else 1} elements, e.g. at {bad[0]}: "
            f"operands {operands}, xla {actual[tuple(bad[0])]!r}, numpy {expected[tuple(bad[0])]!r} "
            f"(tolerance (ulps, eps) {ulps}); dtypes {[a.dtype.name for a in args]}, shapes {[a.shape for a in args]}"
        )


# ---------------------------------------------------------------------------
# Tests


def test_there_are_66_elementwise_primitives() -> None:
    assert len(ELEMENTWISE) == 66, ELEMENTWISE


def test_every_elementwise_primitive_has_a_lowering() -> None:
    missing = [n for n in ELEMENTWISE if n not in LOWERINGS]
    assert not missing, f"no XLA lowering rule for {missing}"


def test_every_elementwise_primitive_has_cases() -> None:
    uncovered = [n for n in ELEMENTWISE if n not in UNARY and n not in BINARY and n not in SPECIAL_CASES]
    assert not uncovered, uncovered


@pytest.mark.parametrize("name", ELEMENTWISE)
@given(data=st.data())
def test_xla_matches_numpy(name: str, data: st.DataObject) -> None:
    args, params = draw_case(data, name)
    check(name, args, params)


# A few exact cases stated outright (the differential test explores; these pin down).
EXACT_CASES: list[tuple[str, list[Array], dict[str, Any], list[Any]]] = [
    ("div", [np.array([7, -7, 7, -2147483648, 5], np.int32), np.array([2, 2, 0, -1, -5], np.int32)], {}, [3, -3, -1, -2147483648, -1]),
    ("rem", [np.array([7, -7, 7, -2147483648], np.int32), np.array([2, 2, 0, -1], np.int32)], {}, [1, -1, 7, 0]),
    ("shift_left", [np.array([1, 1, 1], np.int32), np.array([31, 32, -1], np.int32)], {}, [-2147483648, 0, 0]),
    ("shift_right_arithmetic", [np.array([-8, -8], np.int8), np.array([2, 100], np.int8)], {}, [-2, -1]),
    ("max", [np.array([np.nan, 1.0, -0.0], np.float32), np.array([1.0, np.nan, 0.0], np.float32)], {}, [np.nan, np.nan, 0.0]),
    ("convert_element_type", [np.array([np.nan, 1e10, -1e10, -1.9], np.float32)],
     {"new_dtype": np.dtype(np.int32), "weak_type": False, "sharding": None}, [0, 2147483647, -2147483648, -1]),
    ("round", [np.array([0.5, 1.5, 2.5, -0.5], np.float32)], {"rounding_method": ew.RoundingMethod.AWAY_FROM_ZERO}, [1, 2, 3, -1]),
    ("round", [np.array([0.5, 1.5, 2.5, -0.5], np.float32)], {"rounding_method": ew.RoundingMethod.TO_NEAREST_EVEN}, [0, 2, 2, -0.0]),
    ("select_n", [np.array([-1, 0, 1, 2, 9], np.int32), *(np.full(5, k, np.float32) for k in range(3))], {}, [0, 0, 1, 2, 2]),
    ("population_count", [np.array([-1, 0, 7], np.int16)], {}, [16, 0, 3]),
    ("clz", [np.array([0, 1, -1], np.int32)], {}, [32, 31, 0]),
]  # fmt: skip


@pytest.mark.parametrize("name, args, params, want", EXACT_CASES, ids=[c[0] for c in EXACT_CASES])
def test_exact_cases(name: str, args: list[Array], params: dict[str, Any], want: list[Any]) -> None:
    got = run_xla(name, args, params)
    np.testing.assert_array_equal(got, np.array(want, got.dtype))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.array(want, got.dtype)))


def test_bitcast_width_changes() -> None:
    x = np.array([1.0, -2.0], np.float32)
    pieces = run_xla("bitcast_convert_type", [x], {"new_dtype": np.dtype(np.uint8)})
    assert pieces.shape == (2, 4)
    np.testing.assert_array_equal(pieces, x.view(np.uint8).reshape(2, 4))
    whole = run_xla("bitcast_convert_type", [pieces], {"new_dtype": np.dtype(np.float32)})
    np.testing.assert_array_equal(whole, x)


def test_jit_on_xla_matches_eager() -> None:
    """A jitted chain of elementwise ops (broadcast scalars included) on the xla backend."""

    def f(x: Any, y: Any) -> Any:
        z = minijax.lax.mul(minijax.lax.add(x, 1.5), y)
        w = minijax.lax.select_n(minijax.lax.gt(z, 0.0), minijax.lax.neg(z), minijax.lax.exp(z))
        return minijax.lax.convert_element_type(minijax.lax.integer_pow(w, 3), np.int32)

    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    y = np.array([[1.0, -1.0, 2.0, 0.5]], np.float32)
    got = np.asarray(minijax.jit(f, backend="xla")(x, y))
    with config_context(minijax_backend="numpy"):
        want = np.asarray(minijax.jit(f)(x, y))
    np.testing.assert_array_equal(got, want)


def test_tolerances_are_documented() -> None:
    text = (pathlib.Path(__file__).resolve().parent.parent / "spec" / "tolerances.md").read_text()
    for name, per_dtype in TOLERANCES.items():
        for dtype, (ulps, atol_eps) in per_dtype.items():
            row = f"| `{name}` | {dtype.name} | {ulps} | {atol_eps} |"
            assert row in text, f"spec/tolerances.md lacks the row {row!r}"
