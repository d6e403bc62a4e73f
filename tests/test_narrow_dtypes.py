"""The narrow dtypes JAX exports from ml_dtypes (float8_*, float6_*, float4_e2m1fn, int1/2/4, uint1/2/4).

Names, creation and conversion both ways, arithmetic and comparisons of two
arrays of one narrow dtype, JAX's promotion errors, finfo/iinfo, printing,
jaxpr text and parsing, jit and vmap; on both backends. The expected values
come from ml_dtypes' own casts (round to nearest even, as XLA converts) and
from exact float32/int64 arithmetic rounded or wrapped once, as XLA computes
on narrow types. float6_* and int1/uint1 have no XLA arrays (JAX fails inside
XLA on them): the xla backend refuses them with a TypeError, the NumPy
backend computes with them.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.jaxpr_parse import parse_jaxpr
from minijax.numpy import scalar_types

FLOAT8 = [
    "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
]  # fmt: skip
FLOAT6 = ["float6_e2m3fn", "float6_e3m2fn"]
FLOAT4 = ["float4_e2m1fn"]
SIGNED = ["int1", "int2", "int4"]
UNSIGNED = ["uint1", "uint2", "uint4"]
FLOATS = FLOAT8 + FLOAT6 + FLOAT4
INTS = SIGNED + UNSIGNED
ALL = FLOATS + INTS
# What XLA on CPU cannot hold (JAX 0.10.2 fails inside XLA on these too).
NO_XLA = set(FLOAT6) | {"int1", "uint1"}

SHORT = {
    "float8_e3m4": "f8_e3m4", "float8_e4m3": "f8_e4m3", "float8_e4m3b11fnuz": "f8_e4m3b11fnuz",
    "float8_e4m3fn": "f8_e4m3fn", "float8_e4m3fnuz": "f8_e4m3fnuz", "float8_e5m2": "f8_e5m2",
    "float8_e5m2fnuz": "f8_e5m2fnuz", "float8_e8m0fnu": "f8_e8m0fnu", "float6_e2m3fn": "f6_e2m3fn",
    "float6_e3m2fn": "f6_e3m2fn", "float4_e2m1fn": "f4_e2m1fn", "int1": "i1", "int2": "i2",
    "int4": "i4", "uint1": "u1", "uint2": "u2", "uint4": "u4",
}  # fmt: skip

F32 = np.float32
SRC_FLOATS = np.array([0.3, 1.5, -3.0, 2.5, 100.0, -100.0, np.inf, -np.inf, np.nan, -0.0, 0.0], F32)
SRC_INTS = np.array([0, 1, -1, 7, 8, -9, 100, -100, 3, 2], np.int32)


def refused_here(name: str, backend_name: str | None) -> bool:
    """On xla, the dtypes XLA cannot hold are refused with a TypeError naming them: check that instead."""
    if name in NO_XLA and backend_name == "xla":
        with pytest.raises(TypeError, match=f"the xla backend does not support dtype {name}"):
            jnp.asarray(np.zeros(2, F32)).astype(getattr(jnp, name))
        return True
    return False


def np_dtype(name: str) -> np.dtype[Any]:
    return np.dtype(getattr(ml_dtypes, name))


def same_values(got: Any, want: np.ndarray[Any, Any]) -> None:
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
    # -0.0 and +0.0 are different results too.
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert (np.signbit(g) == np.signbit(w))[(g == 0) & (w == 0)].all()


def saturate_to_int(x: np.ndarray[Any, Any], name: str) -> np.ndarray[Any, Any]:
    """XLA's float -> integer conversion: truncate, saturate, NaN -> 0."""
    info = ml_dtypes.iinfo(np_dtype(name))
    t = np.trunc(x.astype(np.float64))
    t = np.where(np.isnan(t), 0, np.clip(t, info.min, info.max))
    return t.astype(np.int64).astype(np_dtype(name))


def wrap(x: np.ndarray[Any, Any], name: str) -> np.ndarray[Any, Any]:
    """An exact integer result wrapped modulo 2**bits, as XLA's integer arithmetic wraps."""
    info = ml_dtypes.iinfo(np_dtype(name))
    span = 1 << info.bits
    w = (x.astype(np.int64) - info.min) % span + info.min
    return w.astype(np_dtype(name))


# ---------------------------------------------------------------------------
# Names and dtype facts (no computation)


@pytest.mark.single_backend
@pytest.mark.parametrize("name", ALL)
def test_names_are_scalar_types(name: str) -> None:
    t = getattr(jnp, name)
    assert name in scalar_types.__all__  # so `from minijax.numpy.scalar_types import *` exports it
    assert np.dtype(t) == np_dtype(name)
    assert jnp.dtype(t) == np_dtype(name) == jnp.dtype(name)
    assert t == np_dtype(name).type and hash(t) == hash(np_dtype(name).type)
    assert dtypes.short_dtype_name(t) == SHORT[name]
    assert dtypes.dtype_from_short_name(SHORT[name]) == np_dtype(name)
    kind = np.floating if name in FLOATS else np.signedinteger if name in SIGNED else np.unsignedinteger
    assert jnp.issubdtype(t, kind) and jnp.issubdtype(t, np.number)
    assert not jnp.issubdtype(t, np.integer if name in FLOATS else np.floating)


@pytest.mark.single_backend
@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name: str) -> None:
    got, want = jnp.finfo(getattr(jnp, name)), ml_dtypes.finfo(np_dtype(name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_subnormal", "nmant", "nexp", "machep"):
        assert getattr(got, field) == getattr(want, field), field
    assert got.dtype == np_dtype(name)


@pytest.mark.single_backend
@pytest.mark.parametrize("name", INTS)
def test_iinfo(name: str) -> None:
    info = jnp.iinfo(getattr(jnp, name))
    bits = int(name[-1])
    signed = name in SIGNED
    assert (info.bits, info.min, info.max) == (bits, -(1 << (bits - 1)) if signed else 0, (1 << (bits - signed)) - 1)


@pytest.mark.single_backend
def test_promotion_with_weak_scalars_and_through_float_star() -> None:
    for name in ALL:
        dt = np_dtype(name)
        # A Python scalar adopts the narrow dtype.
        assert dtypes.result_type(dt, int) == dt
        if name in FLOATS:
            assert dtypes.result_type(dt, float) == dt
            # Any integer reaches f* (the weak float), which is below every float: as in JAX.
            assert dtypes.result_type(dt, np.int8) == dt
            assert dtypes.result_type(dt, np.uint32) == dt
        assert dtypes.promote_types(dt, dt) == dt


PROMOTION_ERRORS = [
    ("float8_e4m3fn", np.float32, "8-bit floats", "float32"),
    ("float8_e5m2", "bfloat16", "8-bit floats", "float32"),
    ("float8_e4m3fn", "float8_e5m2", "8-bit floats", "float32"),
    ("float6_e2m3fn", np.float16, "6-bit floats", "float32"),
    ("float4_e2m1fn", np.float32, "4-bit floats", "float32"),
    ("float4_e2m1fn", "int4", "4-bit floats", "float32"),  # JAX names the float first
    ("int4", np.int8, "1-bit, 2-bit and 4-bit integers", "int32"),
    ("int4", "uint4", "1-bit, 2-bit and 4-bit integers", "int32"),
    ("uint2", np.float32, "1-bit, 2-bit and 4-bit integers", "int32"),
    ("int1", "int2", "1-bit, 2-bit and 4-bit integers", "int32"),
]


@pytest.mark.single_backend
@pytest.mark.parametrize(("a", "b", "what", "target"), PROMOTION_ERRORS)
def test_promotion_errors(a: str, b: Any, what: str, target: str) -> None:
    da = np_dtype(a)
    db = np.dtype(getattr(ml_dtypes, b)) if isinstance(b, str) and hasattr(ml_dtypes, b) else np.dtype(b)
    for x, y in ((da, db), (db, da)):
        with pytest.raises(dtypes.TypePromotionError) as info:
            dtypes.promote_types(x, y)
        msg = str(info.value)
        assert f"Input dtypes {(x.name, y.name)!r} have no available implicit dtype promotion path." in msg
        assert f"To avoid unintended promotion, {what} do not support implicit promotion." in msg
        assert f"explicitly using e.g. x.astype('{target}')" in msg


# ---------------------------------------------------------------------------
# Values, on each backend


@pytest.mark.parametrize("name", ALL)
def test_creation_and_conversion_from_float32(name: str, backend_name: str | None) -> None:
    if refused_here(name, backend_name):
        return
    t, dt = getattr(jnp, name), np_dtype(name)
    x = jnp.asarray(SRC_FLOATS)
    want = SRC_FLOATS.astype(dt) if name in FLOATS else saturate_to_int(SRC_FLOATS, name)
    same_values(x.astype(t), want)
    same_values(lax.convert_element_type(x, t), want)
    # jnp.array casts host data on the host, as NumPy does (JAX too: it wraps narrow ints).
    host = SRC_FLOATS[:4] if name in FLOATS else np.array([0.0, 1.0], F32)
    same_values(jnp.array(host, dtype=t), host.astype(dt))
    scalar = t(1.5 if name in FLOATS else 1)
    assert scalar.shape == () and scalar.dtype == dt and not scalar.weak_type
    # 0.0 converted (NaN for float8_e8m0fnu, as in JAX), not ml_dtypes' all-zero bits.
    same_values(jnp.zeros(3, t), np.zeros(3, F32).astype(dt))


@pytest.mark.parametrize("name", ALL)
def test_conversion_from_int32_and_back(name: str, backend_name: str | None) -> None:
    if refused_here(name, backend_name):
        return
    t, dt = getattr(jnp, name), np_dtype(name)
    want = SRC_INTS.astype(F32).astype(dt) if name in FLOATS else wrap(SRC_INTS, name)
    y = jnp.asarray(SRC_INTS).astype(t)
    same_values(y, want)
    same_values(y.astype(jnp.float32), want.astype(F32))
    same_values(y.astype(jnp.bfloat16), want.astype(F32).astype(dtypes.bfloat16))
    if name in INTS:  # exact: every narrow integer fits int32
        same_values(y.astype(jnp.int32), want.astype(np.int32))
        same_values(y.astype(jnp.uint8), want.astype(np.int64).astype(np.uint8))


ARITH = {
    "add": (jnp.add, np.add),
    "subtract": (jnp.subtract, np.subtract),
    "multiply": (jnp.multiply, np.multiply),
    "maximum": (jnp.maximum, np.maximum),
    "minimum": (jnp.minimum, np.minimum),
}


def _operands(name: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    dt = np_dtype(name)
    if name in FLOATS:
        a = np.array([0.5, 1.5, -3.0, 2.0, 6.0, -0.25, 1.0], F32).astype(dt)
        return a, a[::-1].copy()
    info = ml_dtypes.iinfo(dt)
    a = np.arange(info.min, info.max + 1).astype(dt)
    b = np.roll(a, 1)
    return a, b


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("op", sorted(ARITH))
def test_arithmetic_of_one_narrow_dtype(name: str, op: str, backend_name: str | None) -> None:
    if refused_here(name, backend_name):
        return
    a, b = _operands(name)
    fn, ref = ARITH[op]
    if name in FLOATS:  # exact in float32, rounded once to the narrow type
        with np.errstate(invalid="ignore", over="ignore"):
            want = ref(a.astype(F32), b.astype(F32)).astype(a.dtype)
    else:
        want = wrap(ref(a.astype(np.int64), b.astype(np.int64)), name)
    same_values(fn(jnp.asarray(a), jnp.asarray(b)), want)


@pytest.mark.parametrize("name", [n for n in ALL if n != "float8_e8m0fnu"])
def test_negation_and_comparisons(name: str, backend_name: str | None) -> None:
    if refused_here(name, backend_name):
        return
    a, b = _operands(name)
    x, y = jnp.asarray(a), jnp.asarray(b)
    neg = (-a.astype(F32)).astype(a.dtype) if name in FLOATS else wrap(-a.astype(np.int64), name)
    same_values(-x, neg)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    for got, want in ((x < y, fa < fb), (x == y, fa == fb), (x >= y, fa >= fb), (x != y, fa != fb)):
        same_values(got, want)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4", "uint2"])
def test_python_scalars_adopt_the_narrow_dtype_and_jit_vmap(name: str, backend_name: str | None) -> None:
    a, _ = _operands(name)
    x = jnp.asarray(a)
    want = (a.astype(F32) * 2 + 1).astype(a.dtype) if name in FLOATS else wrap(a.astype(np.int64) * 2 + 1, name)
    out = minijax.jit(lambda v: v * 2 + 1)(x)
    assert out.dtype == a.dtype and not out.weak_type
    same_values(out, want)
    same_values(minijax.vmap(lambda v: v * 2 + 1)(x), want)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "int4"])
def test_mixing_dtypes_raises(name: str, backend_name: str | None) -> None:
    x = jnp.asarray(_operands(name)[0])
    with pytest.raises(dtypes.TypePromotionError, match="do not support implicit promotion"):
        x + jnp.float32(1)
    with pytest.raises(dtypes.TypePromotionError, match="do not support implicit promotion"):
        jnp.asarray(np.ones(2, np_dtype("uint4"))) + jnp.ones(2, jnp.int4)


def test_float8_meets_integers_through_weak_float(backend_name: str | None) -> None:
    x = jnp.array([1.5, 2.0], jnp.float8_e4m3fn)
    out = x + jnp.int8(3)
    assert out.dtype == np_dtype("float8_e4m3fn")
    same_values(out, np.array([4.5, 5.0], F32).astype(np_dtype("float8_e4m3fn")))


def test_reductions_start_from_finite_identities(backend_name: str | None) -> None:
    # float8_e4m3fn has no infinities: -inf would become NaN as max's identity.
    x = jnp.array([-3.0, -1.5, -2.0], jnp.float8_e4m3fn)
    same_values(jnp.max(x), np.array(-1.5, np_dtype("float8_e4m3fn")))
    same_values(jnp.min(-x), np.array(1.5, np_dtype("float8_e4m3fn")))
    same_values(jnp.max(jnp.array([-8, -3, -5], jnp.int4)), np.array(-3, np_dtype("int4")))
    same_values(jnp.min(jnp.array([15, 3, 9], jnp.uint4)), np.array(3, np_dtype("uint4")))


def test_narrow_width_integer_restrictions(backend_name: str | None) -> None:
    with pytest.raises(TypeError, match="abs does not accept dtype int4. Support for narrow-width integers"):
        jnp.abs(jnp.array([1, -2], jnp.int4))
    # As in JAX 0.10.2: int4 divides in float32, int2/uint2 stay integers.
    assert jnp.divide(jnp.array([3], jnp.int4), jnp.array([2], jnp.int4)).dtype == np.float32
    same_values(jnp.divide(jnp.array([1, -2], jnp.int2), jnp.array([1, 1], jnp.int2)), np.array([1, -2], np_dtype("int2")))


def test_xla_refuses_what_it_cannot_hold(backend_name: str | None) -> None:
    if backend_name != "xla":
        x = jnp.array([1.5, -2.0], jnp.float6_e2m3fn)  # the NumPy backend holds them
        same_values(x * 2, np.array([3.0, -4.0], F32).astype(np_dtype("float6_e2m3fn")))
        same_values(jnp.array([1, 0], jnp.uint1) + jnp.array([1, 1], jnp.uint1), np.array([0, 1], np_dtype("uint1")))
        return
    for name in sorted(NO_XLA):
        with pytest.raises(TypeError, match=f"the xla backend does not support dtype {name}"):
            jnp.zeros(2, getattr(jnp, name))


# ---------------------------------------------------------------------------
# Printing and jaxpr text


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4", "uint2"])
def test_repr(name: str, backend_name: str | None) -> None:
    t = getattr(jnp, name)
    assert repr(jnp.array([1, 2], t)) == f"Array([1, 2], dtype={name})"
    assert repr(t(1)) == f"Array(1, dtype={name})"
    if name in FLOATS:
        assert repr(jnp.array([1.5, 2.0], t)) == f"Array([1.5, 2], dtype={name})"


@pytest.mark.single_backend
@pytest.mark.parametrize("name", ALL)
def test_jaxpr_text_round_trips(name: str) -> None:
    t = getattr(jnp, name)
    closed = minijax.make_jaxpr(lambda v: (lambda w: w + w)(lax.convert_element_type(v, t)))(jnp.ones(3))
    text = str(closed)
    assert f"b:{SHORT[name]}[3] = convert_element_type[" in text and f"new_dtype={name}" in text
    assert "add b b" in text
    assert str(parse_jaxpr(text)) == text


def test_issubdtype_of_an_abstract_numpy_type_is_numpys_answer() -> None:
    # The narrow-dtype branch of issubdtype must not ask np.dtype() of np.generic
    # (a TypeError in NumPy 2), which jax.random's dtype checks do.
    import numpy as np

    import minijax.numpy as jnp

    assert jnp.issubdtype(np.floating, np.generic) and not jnp.issubdtype(np.generic, np.floating)
