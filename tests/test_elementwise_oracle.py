"""Elementwise lax wrappers against real JAX: values, dtypes, weak types, errors, jaxpr text.

One known difference is allowed for: XLA on CPU flushes subnormal float32,
float64 and bfloat16 values to zero in most arithmetic (FTZ/DAZ), while the
NumPy reference keeps IEEE subnormals. The operands here are normal numbers
and results are compared after flushing subnormals on both sides.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from test_elementwise import BF16, CASES, FLOAT32, Case, case_inputs, is_float

import minijax
from minijax import lax
from minijax.config import enable_x64

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
jlax = jax.lax

pytestmark = pytest.mark.oracle

# minijax primitive name -> the jax.lax function that binds it
JAX_CALL: dict[str, Any] = {
    "and": jlax.bitwise_and,
    "or": jlax.bitwise_or,
    "xor": jlax.bitwise_xor,
    "not": jlax.bitwise_not,
    "copy": lambda x: jlax.copy_p.bind(x),
}


def jax_call(name: str) -> Any:
    return JAX_CALL.get(name) or getattr(jlax, name)


@contextlib.contextmanager
def both_x64(flag: bool) -> Iterator[None]:
    if flag:
        with enable_x64(True), jax.enable_x64(True):
            yield
    else:
        yield


def flushes(dtype: np.dtype) -> bool:
    return dtype in (np.dtype(np.float32), np.dtype(np.float64), BF16)


def flush_subnormals(x: np.ndarray) -> np.ndarray:
    """Subnormal values of float32/float64/bfloat16 replaced by zeros of the same sign (XLA's FTZ)."""
    if not flushes(x.dtype):
        return x
    tiny = float(ml_dtypes.finfo(x.dtype).tiny)
    wide = x.astype(np.float64)
    return np.where(np.abs(wide) < tiny, np.copysign(0.0, wide), wide).astype(x.dtype)


# (rtol, atol) in units of the dtype's eps for the approximate primitives, where
# XLA's own approximations are looser than a few ulps; measured on JAX 0.10.2.
ULPS = {"sinh": 16, "cosh": 16, "erf_inv": 64, "lgamma": 64, "digamma": 32, "pow": 8, "erfc": 64}
ULPS_F64 = {"sinh": 512, "cosh": 512, "log1p": 256, "atanh": 256, "digamma": 1024, "lgamma": 256, "erf_inv": 2**20}
ATOL_ULPS = {"lgamma": 64, "digamma": 32}


def assert_matches_jax(name: str, case: Case, got: Any, want: Any, *, exact: bool | None = None) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, f"{name}: dtype {g.dtype} != JAX's {w.dtype}"
    assert g.shape == w.shape, f"{name}: shape {g.shape} != JAX's {w.shape}"
    assert got.weak_type == want.aval.weak_type, f"{name}: weak_type differs from JAX"
    if not is_float(g.dtype):
        np.testing.assert_array_equal(g, w)
        return
    g, w = flush_subnormals(g), flush_subnormals(w)
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g64), np.isnan(w64))
    if case.exact if exact is None else exact:
        np.testing.assert_array_equal(g64, w64)
        numbers = ~np.isnan(g64)
        np.testing.assert_array_equal(np.signbit(g64)[numbers], np.signbit(w64)[numbers])
        return
    eps = float(ml_dtypes.finfo(g.dtype).eps)
    ulps = (ULPS_F64 if g.dtype == np.float64 else ULPS).get(name, 4 if not case.exact else 1)
    # XLA composes some functions (asin, ...) of rounded steps whose intermediates may underflow
    # (to a subnormal step in float16; flushed to zero below the normal range in the others).
    info = ml_dtypes.finfo(g.dtype)
    atol = ATOL_ULPS.get(name, 0) * eps + float(info.tiny if flushes(g.dtype) else info.smallest_subnormal)
    np.testing.assert_allclose(g64, w64, rtol=ulps * eps, atol=atol, equal_nan=True)


# ---------------------------------------------------------------------------
# Values, dtypes and weak types on random operands


# Each new shape/dtype costs JAX a compilation: a quarter of the profile's examples.
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(data=st.data())
def test_lax_wrapper_matches_jax(name, data):
    case = CASES[name]
    drawn = data.draw(case_inputs(case))
    operands = [flush_subnormals(o) for o in drawn.operands]
    with both_x64(drawn.x64):
        got = case.call(*operands, **drawn.params)
        want = jax_call(name)(*operands, **drawn.params)
    # XLA divides by an operand it broadcasts (a 1-sized dimension) by multiplying with its
    # reciprocal, which can be 1 ulp off the correctly rounded quotient.
    broadcast_div = name == "div" and len({o.shape for o in operands if o.shape}) > 1
    assert_matches_jax(name, case, got, want, exact=False if broadcast_div else None)


# ---------------------------------------------------------------------------
# Python scalars: weak types, and dtype errors when lax does not promote

SCALARS = [2.0, 3, True]


def _scalar_operand_sets(case: Case) -> list[list[Any]]:
    arrays = [np.array([1.5, -2.0, 0.25], np.float32), np.array([3, -4, 0], np.int32)]
    if case.kind == "unary":
        return [[s] for s in SCALARS]
    pairs = [[2.0, 3.0], [2, 3], [2.0, 3], [True, False]]
    return [[a, s] for a in arrays for s in SCALARS] + pairs


def _outcome(fn: Any, operands: list[Any], params: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", fn(*operands, **params)
    except (TypeError, ValueError) as e:
        return type(e).__name__, e


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.kind in ("unary", "binary")))
def test_python_scalar_operands_like_jax(name):
    case = CASES[name]
    params = {"round": {}, "integer_pow": {"y": 2}, "reduce_precision": {"exponent_bits": 5, "mantissa_bits": 10}}
    for operands in _scalar_operand_sets(case):
        got_kind, got = _outcome(case.call, operands, params.get(name, {}))
        want_kind, want = _outcome(jax_call(name), operands, params.get(name, {}))
        assert got_kind == want_kind, f"{name}{tuple(operands)}: minijax {got_kind} ({got}), JAX {want_kind} ({want})"
        if got_kind == "ok":
            assert_matches_jax(name, case, got, want)


def test_select_n_clamp_and_conversions_with_scalars_like_jax():
    f = np.array([1.0, 2.0, 3.0], np.float32)
    calls = [
        ("select_n", (True, 1.0, 2.0)), ("select_n", (np.int32(1), 1, 2)), ("select_n", (True, f, 2.0)),
        ("select_n", (np.array([True, False, True]), f, f)), ("clamp", (0.0, 2.0, 1.0)), ("clamp", (0.0, f, 1.0)),
        ("clamp", (0, f, 1.0)), ("clamp", (np.float32(0), 2.0, 1.0)), ("convert_element_type", (2.0, np.int32)),
        ("convert_element_type", (3, float)), ("bitcast_convert_type", (2.0, np.int32)),
    ]  # fmt: skip
    for name, operands in calls:
        got_kind, got = _outcome(CASES[name].call, list(operands), {})
        want_kind, want = _outcome(jax_call(name), list(operands), {})
        assert got_kind == want_kind, f"{name}{operands}: minijax {got_kind} ({got}), JAX {want_kind} ({want})"
        if got_kind == "ok":
            assert_matches_jax(name, CASES[name], got, want)


# ---------------------------------------------------------------------------
# Errors: same type, same message (JAX lists complexfloating, which minijax does not have)


def _normalize(message: str) -> str:
    return message.replace(", complexfloating", "").replace("complexfloating, ", "")


def _assert_same_error(fn_mini: Any, fn_jax: Any, *operands: Any, **params: Any) -> None:
    with pytest.raises(Exception) as mini:
        fn_mini(*operands, **params)
    with pytest.raises(Exception) as real:
        fn_jax(*operands, **params)
    assert type(mini.value) is type(real.value)
    mine, theirs = _normalize(str(mini.value)), _normalize(str(real.value).split("\n")[0])
    # Where JAX's message does not name the operation, minijax puts its name in
    # front ("select_n: select `which` must be ..."): bad input must say which
    # operation refused it. The rest is JAX's text.
    assert theirs in (mine, re.sub(r"^[a-z_]+: ", "", mine))


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.reject))
def test_dtype_class_errors_like_jax(name):
    case = CASES[name]
    params = {"integer_pow": {"y": 2}, "reduce_precision": {"exponent_bits": 5, "mantissa_bits": 10}}.get(name, {})
    for dtype in case.reject:
        x = np.ones(3, dtype)
        operands = [x] if case.kind == "unary" else [x, x]
        _assert_same_error(case.call, jax_call(name), *operands, **params)


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.kind == "binary"))
def test_dtype_mismatch_and_shape_errors_like_jax(name):
    case = CASES[name]
    accepted = [d for d in case.dtypes if d in FLOAT32 or d.kind in "iub" and d.itemsize < 8]
    a, b = accepted[0], accepted[-1]
    _assert_same_error(case.call, jax_call(name), np.ones(3, a), np.ones(3, b))
    _assert_same_error(case.call, jax_call(name), np.ones(3, a), np.ones(2, a))
    _assert_same_error(case.call, jax_call(name), np.ones((2, 3), a), np.ones(3, a))


def test_other_errors_like_jax():
    f = np.ones(3, np.float32)
    cases = [
        ("integer_pow", (np.ones(3, np.int32),), {"y": -1}),
        ("reduce_precision", (f,), {"exponent_bits": 0, "mantissa_bits": 10}),
        ("reduce_precision", (f,), {"exponent_bits": 5, "mantissa_bits": -1}),
        ("round", (f, 2), {}),
        ("pow", (np.ones(3, np.float16), f), {}),
        ("select_n", (np.ones(3, bool),), {}),
        ("select_n", (f, f, f), {}),
        ("select_n", (np.ones(2, bool), f, f), {}),
        ("select_n", (np.ones(3, bool), f, f, f), {}),
        ("select_n", (True, f, np.ones(1, np.float32)), {}),
        ("select_n", (True, f, np.ones(3, np.int32)), {}),
        ("clamp", (np.ones(2, np.float32), f, 1.0), {}),
        ("clamp", (f, f, np.ones(2, np.float32)), {}),
        ("clamp", (0, f, 1.0), {}),
        ("bitcast_convert_type", (np.ones(3, bool), np.int8), {}),
        ("bitcast_convert_type", (np.ones((3, 4), np.int16), np.float32), {}),
        ("bitcast_convert_type", (np.ones((), np.int16), np.float32), {}),
    ]
    for name, operands, params in cases:
        _assert_same_error(CASES[name].call, jax_call(name), *operands, **params)


# ---------------------------------------------------------------------------
# jaxpr text, for every primitive


def _jaxpr_programs() -> list[tuple[str, Any, Any, tuple[Any, ...]]]:
    """(id, minijax function, jax function, args): one or more programs per primitive."""
    f32 = np.ones(3, np.float32)
    out = []
    for name, case in sorted(CASES.items()):
        mini, real = case.call, jax_call(name)
        if case.kind in ("unary", "binary"):
            dtype = np.dtype(np.float32) if np.dtype(np.float32) in case.dtypes else np.dtype(np.int32)
            x = np.ones(3, dtype)
            args = (x,) if case.kind == "unary" else (x, x)
            params: dict[str, Any] = {
                "round": {"rounding_method": 1}, "integer_pow": {"y": 3},
                "reduce_precision": {"exponent_bits": 5, "mantissa_bits": 10},
            }.get(name, {})  # fmt: skip
            out.append((name, _bound(mini, params), _bound(real, params), args))
            if case.kind == "binary":  # with a literal operand
                scalar = 2.0 if dtype == np.float32 else 2
                out.append((f"{name}-literal", lambda x, f=mini, s=scalar: f(x, s), lambda x, f=real, s=scalar: f(x, s), (x,)))
    out += [
        ("select_n-bool", lax.select_n, jlax.select_n, (np.ones(3, bool), f32, f32)),
        ("select_n-int", lax.select_n, jlax.select_n, (np.ones(3, np.int32), f32, f32, f32)),
        ("select-literal", lambda x: lax.select(True, x, x), lambda x: jlax.select(True, x, x), (f32,)),
        ("clamp", lambda x: lax.clamp(0.0, x, 1.0), lambda x: jlax.clamp(0.0, x, 1.0), (f32,)),
        ("clamp-arrays", lax.clamp, jlax.clamp, (f32, f32, f32)),
        ("convert_element_type", lambda x: lax.convert_element_type(x, np.int32), lambda x: jlax.convert_element_type(x, np.int32), (f32,)),
        ("convert_element_type-same", lambda x: lax.convert_element_type(x, np.float32), lambda x: jlax.convert_element_type(x, np.float32), (f32,)),
        ("convert_element_type-weak", lambda x: lax.convert_element_type(x, np.float32), lambda x: jlax.convert_element_type(x, np.float32), (2.0,)),
        ("bitcast_convert_type", lambda x: lax.bitcast_convert_type(x, np.uint8), lambda x: jlax.bitcast_convert_type(x, np.uint8), (f32,)),
        ("bitcast_convert_type-wide", lambda x: lax.bitcast_convert_type(x, np.float32), lambda x: jlax.bitcast_convert_type(x, np.float32), (np.ones((3, 2), np.int16),)),
    ]  # fmt: skip
    return out


def _bound(fn: Any, params: dict[str, Any]) -> Any:
    return lambda *xs: fn(*xs, **params)


PROGRAMS = _jaxpr_programs()


def test_every_primitive_has_a_jaxpr_text_program():
    named = {p[0].split("-")[0] for p in PROGRAMS}
    assert set(CASES) <= named


@pytest.mark.parametrize(("mini", "real", "args"), [p[1:] for p in PROGRAMS], ids=[p[0] for p in PROGRAMS])
def test_jaxpr_text_like_jax(mini, real, args):
    assert str(minijax.make_jaxpr(mini)(*args)) == str(jax.make_jaxpr(real)(*args))
