"""Tests for minijax.dtypes (promotion, weak types, canonicalization) and minijax.config."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minijax.dtypes as dtypes
from minijax.config import (
    config,
    config_context,
    enable_x64,
    numpy_dtype_promotion,
    register_listener,
    x64_enabled,
)

pytestmark = pytest.mark.single_backend  # dtype rules and flags; computes nothing on a backend

# ---------------------------------------------------------------------------
# JAX's documented binary promotion table (x64 enabled), copied out of
# https://docs.jax.dev/en/latest/type_promotion.html with the complex rows
# and columns left out. The page's names: b1=bool, uN/iN/fN = N *bytes*
# (u1=uint8, i8=int64, f2=float16), bf=bfloat16, i*/f* = Python int/float or
# a weakly-typed value of that kind.

_TABLE_TEXT = """
     b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 i* f*
b1   b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 i* f*
u1   u1 u1 u2 u4 u8 i2 i2 i4 i8 bf f2 f4 f8 u1 f*
u2   u2 u2 u2 u4 u8 i4 i4 i4 i8 bf f2 f4 f8 u2 f*
u4   u4 u4 u4 u4 u8 i8 i8 i8 i8 bf f2 f4 f8 u4 f*
u8   u8 u8 u8 u8 u8 f* f* f* f* bf f2 f4 f8 u8 f*
i1   i1 i2 i4 i8 f* i1 i2 i4 i8 bf f2 f4 f8 i1 f*
i2   i2 i2 i4 i8 f* i2 i2 i4 i8 bf f2 f4 f8 i2 f*
i4   i4 i4 i4 i8 f* i4 i4 i4 i8 bf f2 f4 f8 i4 f*
i8   i8 i8 i8 i8 f* i8 i8 i8 i8 bf f2 f4 f8 i8 f*
bf   bf bf bf bf bf bf bf bf bf bf f4 f4 f8 bf bf
f2   f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f2 f4 f8 f2 f2
f4   f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 f4 f4
f8   f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8
i*   i* u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 i* f*
f*   f* f* f* f* f* f* f* f* f* bf f2 f4 f8 f* f*
"""


def _parse_table(text: str) -> dict[tuple[str, str], str]:
    header, *rows = [line.split() for line in text.strip().splitlines()]
    table = {}
    for row in rows:
        for col, entry in zip(header, row[1:], strict=True):
            table[row[0], col] = entry
    return table


TABLE = _parse_table(_TABLE_TEXT)
NAMES = ["b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "i*", "f*"]
STRONG = NAMES[:-2]

DOC_DTYPE: dict[str, np.dtype[Any]] = {
    "b1": np.dtype(np.bool_),
    "u1": np.dtype(np.uint8), "u2": np.dtype(np.uint16),
    "u4": np.dtype(np.uint32), "u8": np.dtype(np.uint64),
    "i1": np.dtype(np.int8), "i2": np.dtype(np.int16),
    "i4": np.dtype(np.int32), "i8": np.dtype(np.int64),
    "bf": np.dtype(dtypes.bfloat16), "f2": np.dtype(np.float16),
    "f4": np.dtype(np.float32), "f8": np.dtype(np.float64),
}
TO_32 = {"u8": "u4", "i8": "i4", "f8": "f4"}


@dataclass(frozen=True)
class FakeAval:
    dtype: np.dtype[Any]
    weak_type: bool
    shape: tuple[int, ...] = ()


@dataclass(frozen=True)
class FakeArray:
    """What result_type sees of a minijax Array or Tracer: an ``aval``."""

    aval: FakeAval


def fake(dtype: Any, weak: bool = False) -> FakeArray:
    return FakeArray(FakeAval(np.dtype(dtype), weak))


def expected(name: str, x64: bool) -> tuple[np.dtype[Any], bool]:
    """(dtype, weak) that a table entry stands for under the x64 setting."""
    if name == "i*":
        return np.dtype(np.int64 if x64 else np.int32), True
    if name == "f*":
        return np.dtype(np.float64 if x64 else np.float32), True
    return DOC_DTYPE[name if x64 else TO_32.get(name, name)], False


def representatives(name: str, x64: bool) -> list[Any]:
    """Different ways a user or the core can hand result_type this node."""
    if name == "i*":
        return [1, int, fake(np.int64 if x64 else np.int32, weak=True)]
    if name == "f*":
        return [2.5, float, fake(np.float64 if x64 else np.float32, weak=True)]
    dt = DOC_DTYPE[name]
    reps: list[Any] = [dt, dt.name, dt.type, np.zeros((2,), dt), fake(dt)]
    if name == "b1":
        reps.append(True)
    return reps


@pytest.fixture(params=[True, False], ids=["x64", "x32"])
def x64(request: pytest.FixtureRequest) -> Any:
    with config_context(jax_enable_x64=request.param):
        yield request.param


# ---------------------------------------------------------------------------
# The promotion table


def test_table_is_symmetric() -> None:
    for a, b in itertools.product(NAMES, repeat=2):
        assert TABLE[a, b] == TABLE[b, a], (a, b)


@pytest.mark.parametrize("a", NAMES)
@pytest.mark.parametrize("b", NAMES)
def test_result_type_matches_documented_table_x64(a: str, b: str) -> None:
    with enable_x64(True):
        want = expected(TABLE[a, b], x64=True)
        for ra, rb in itertools.product(representatives(a, True), representatives(b, True)):
            got = dtypes.result_type(ra, rb, return_weak_type_flag=True)
            assert got == want, (ra, rb)
            assert dtypes.result_type(ra, rb) == want[0]


@pytest.mark.parametrize("a", NAMES)
@pytest.mark.parametrize("b", NAMES)
def test_result_type_x32_canonicalizes_inputs_then_output(a: str, b: str) -> None:
    # With x64 off, dtype specifiers and NumPy values are first narrowed to
    # 32 bits, then promoted, then the result is canonicalized (weak results
    # take the default 32-bit dtype of their kind).
    want = expected(TABLE[TO_32.get(a, a), TO_32.get(b, b)], x64=False)
    with enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # explicit 64-bit dtypes warn; tested below
        for ra, rb in itertools.product(representatives(a, False), representatives(b, False)):
            if isinstance(ra, FakeArray) or isinstance(rb, FakeArray):
                continue  # existing 64-bit values are not narrowed; next test
            assert dtypes.result_type(ra, rb, return_weak_type_flag=True) == want, (ra, rb)


@pytest.mark.parametrize("a", STRONG)
@pytest.mark.parametrize("b", STRONG)
def test_existing_64_bit_values_keep_their_dtype_until_the_result(a: str, b: str) -> None:
    # An array that already is int64 (made while x64 was on) takes part with
    # its real dtype; only a promoted result is canonicalized. Operands of
    # one dtype need no promotion and keep it, as in JAX.
    want = (DOC_DTYPE[a], False) if a == b else expected(TABLE[a, b], x64=False)
    with enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = dtypes.result_type(fake(DOC_DTYPE[a]), fake(DOC_DTYPE[b]), return_weak_type_flag=True)
    assert got == want


def test_result_type_is_symmetric(x64: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reps = [r for name in NAMES for r in representatives(name, x64)]
        for ra, rb in itertools.product(reps, repeat=2):
            assert dtypes.result_type(ra, rb, return_weak_type_flag=True) == dtypes.result_type(
                rb, ra, return_weak_type_flag=True
            ), (ra, rb)


def test_lattice_joins_are_associative() -> None:
    # Promotion is a join on a lattice, so grouping never matters.
    for table in dtypes._JOINS.values():
        nodes = sorted({a for a, _ in table})
        for a, b, c in itertools.product(nodes, repeat=3):
            ab, bc = table[a, b], table[b, c]
            left = None if ab is None else table[ab, c]
            right = None if bc is None else table[a, bc]
            assert left == right, (a, b, c)


def test_result_type_is_associative_and_order_free(x64: bool) -> None:
    reps = [representatives(name, x64)[0] for name in NAMES]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b, c in itertools.product(reps, repeat=3):
            whole = dtypes.result_type(a, b, c, return_weak_type_flag=True)
            ab = fake(*dtypes.result_type(a, b, return_weak_type_flag=True))
            bc = fake(*dtypes.result_type(b, c, return_weak_type_flag=True))
            assert dtypes.result_type(ab, c, return_weak_type_flag=True) == whole, (a, b, c)
            assert dtypes.result_type(a, bc, return_weak_type_flag=True) == whole, (a, b, c)
            assert dtypes.result_type(c, a, b, return_weak_type_flag=True) == whole, (a, b, c)


def test_promote_types_is_the_table_without_weak_results(x64: bool) -> None:
    # jnp.promote_types: int/float stand for i*/f*, a weak answer is int64 or
    # float64, and nothing is canonicalized.
    specs = {**DOC_DTYPE, "i*": int, "f*": float}
    as_dtype = {**DOC_DTYPE, "i*": np.dtype(np.int64), "f*": np.dtype(np.float64)}
    for a, b in itertools.product(NAMES, repeat=2):
        got = dtypes.promote_types(specs[a], specs[b])
        want = as_dtype[TABLE[a, b]]
        if x64:
            assert got == want, (a, b)
        else:
            # The 32-bit lattice stops u32 x signed at i32 instead of i64;
            # that is the only difference, and canonicalization hides it.
            assert dtypes.canonicalize_dtype(got) == dtypes.canonicalize_dtype(want), (a, b)


def test_promote_types_32_bit_lattice() -> None:
    with enable_x64(False):
        assert dtypes.promote_types(np.uint32, np.int8) == np.int32
        assert dtypes.promote_types(np.int64, np.int8) == np.int64  # not canonicalized
        assert dtypes.promote_types(int, float) == np.float64
    with enable_x64(True):
        assert dtypes.promote_types(np.uint32, np.int8) == np.int64


# ---------------------------------------------------------------------------
# Weak types: the cases users meet


def test_weak_python_scalar_does_not_widen(x64: bool) -> None:
    # jnp.float16(1) + 1.0 stays float16; jnp.int8(1) + 1 stays int8.
    assert dtypes.result_type(np.float16, 1.0, return_weak_type_flag=True) == (
        np.dtype(np.float16), False)
    assert dtypes.result_type(fake(np.int8), 1, return_weak_type_flag=True) == (
        np.dtype(np.int8), False)
    assert dtypes.result_type(fake(dtypes.bfloat16), 3.0) == dtypes.bfloat16
    assert dtypes.result_type(np.uint8, 300) == np.uint8


def test_weak_int_array_with_python_float_is_weak_float() -> None:
    with enable_x64(False):
        assert dtypes.result_type(fake(np.int32, weak=True), 2.5, return_weak_type_flag=True) == (
            np.dtype(np.float32), True)
    with enable_x64(True):
        assert dtypes.result_type(fake(np.int64, weak=True), 2.5, return_weak_type_flag=True) == (
            np.dtype(np.float64), True)


def test_numpy_scalars_and_arrays_are_strong(x64: bool) -> None:
    # Only Python scalars are weak; np.int16(1) + jnp.int8 promotes fully.
    assert dtypes.result_type(np.int16(1), fake(np.int8)) == np.int16
    assert dtypes.result_type(np.array(1, np.int64), fake(np.int16)) == dtypes.canonicalize_dtype(
        np.int64)
    assert dtypes.result_type(np.float64(1.0), return_weak_type_flag=True)[1] is False


def test_all_weak_inputs_promote_their_strong_dtypes() -> None:
    with enable_x64(True):
        # Two weak uint8 values: the strong join is u8, then the weak result
        # takes the default unsigned dtype (joining i* nodes would give int).
        pair = (fake(np.uint8, weak=True), fake(np.uint8, weak=True))
        assert dtypes.result_type(*pair, return_weak_type_flag=True) == (np.dtype(np.uint64), True)
        assert dtypes.result_type(1, 2.0, return_weak_type_flag=True) == (np.dtype(np.float64), True)
        assert dtypes.result_type(fake(np.float16, weak=True), return_weak_type_flag=True) == (
            np.dtype(np.float64), True)


def test_bool_is_never_weak(x64: bool) -> None:
    assert dtypes.result_type(True, return_weak_type_flag=True) == (np.dtype(bool), False)
    assert dtypes.result_type(True, False, return_weak_type_flag=True) == (np.dtype(bool), False)
    assert dtypes.result_type(bool, return_weak_type_flag=True) == (np.dtype(bool), False)
    assert dtypes.result_type(fake(bool, weak=True), return_weak_type_flag=True)[1] is False
    assert dtypes.result_type(True, 1, return_weak_type_flag=True) == (
        dtypes.default_int_dtype(), True)


def test_single_argument_and_none(x64: bool) -> None:
    assert dtypes.result_type(1, return_weak_type_flag=True) == (dtypes.default_int_dtype(), True)
    assert dtypes.result_type(None) == dtypes.default_float_dtype()
    assert dtypes.result_type(None, np.int8) == dtypes.default_float_dtype()
    with pytest.raises(ValueError, match="at least one"):
        dtypes.result_type()


def test_is_weakly_typed() -> None:
    assert dtypes.is_weakly_typed(1) and dtypes.is_weakly_typed(1.5)
    assert not dtypes.is_weakly_typed(True)
    assert not dtypes.is_weakly_typed(np.float32(1))
    assert not dtypes.is_weakly_typed(np.ones(3))
    assert not dtypes.is_weakly_typed(int)
    assert dtypes.is_weakly_typed(fake(np.int32, weak=True))
    assert not dtypes.is_weakly_typed(fake(np.int32))
    assert dtypes.is_weakly_typed(FakeAval(np.dtype(np.float32), True))


# ---------------------------------------------------------------------------
# Strict promotion


def test_strict_mode() -> None:
    with numpy_dtype_promotion("strict"):
        for a, b in [(np.int32, np.int8), (np.float32, np.float16), (np.int8, np.uint8),
                     (np.bool_, 1), (np.int32, 1.0), (fake(np.float32), fake(dtypes.bfloat16))]:
            with pytest.raises(dtypes.TypePromotionError, match="strict"):
                dtypes.result_type(a, b)
        with pytest.raises(dtypes.TypePromotionError):
            dtypes.promote_types(np.int32, np.int64)
        # Weak Python scalars still adopt the array's dtype.
        assert dtypes.result_type(np.int8, 1) == np.int8
        assert dtypes.result_type(np.float16, 1.0) == np.float16
        assert dtypes.result_type(dtypes.bfloat16, 1) == dtypes.bfloat16
        assert dtypes.result_type(np.int16, np.int16) == np.int16
        assert dtypes.result_type(1, 1.0, return_weak_type_flag=True) == (
            dtypes.default_float_dtype(), True)
    assert issubclass(dtypes.TypePromotionError, ValueError)


# ---------------------------------------------------------------------------
# Canonicalization and the explicit-x64 warning


def test_canonicalize_dtype() -> None:
    with enable_x64(False):
        assert dtypes.canonicalize_dtype(np.int64) == np.int32
        assert dtypes.canonicalize_dtype("uint64") == np.uint32
        assert dtypes.canonicalize_dtype(np.float64) == np.float32
        assert dtypes.canonicalize_dtype(int) == np.int32
        assert dtypes.canonicalize_dtype(float) == np.float32
        assert dtypes.canonicalize_dtype(bool) == np.bool_
        assert dtypes.canonicalize_dtype(np.int16) == np.int16
        assert dtypes.canonicalize_dtype(dtypes.bfloat16) == dtypes.bfloat16
        assert dtypes.canonicalize_dtype(dtypes.float0) == dtypes.float0
        assert dtypes.default_int_dtype() == np.int32
        assert dtypes.default_uint_dtype() == np.uint32
        assert dtypes.default_float_dtype() == np.float32
    with enable_x64(True):
        for dt in dtypes.supported_dtypes():
            assert dtypes.canonicalize_dtype(dt) == dt
        assert dtypes.canonicalize_dtype(int) == np.int64
        assert dtypes.default_int_dtype() == np.int64
        assert dtypes.default_uint_dtype() == np.uint64
        assert dtypes.default_float_dtype() == np.float64
    assert isinstance(dtypes.canonicalize_dtype("float32"), np.dtype)


@pytest.mark.parametrize("bad", ["S3", object, np.str_, "U", np.dtype("M8[s]")])
def test_invalid_dtypes_raise_type_error(bad: Any) -> None:
    with pytest.raises(TypeError, match="not a valid JAX array type"):
        dtypes.canonicalize_dtype(bad)
    with pytest.raises(TypeError, match="not a valid JAX array type"):
        dtypes.result_type(bad)


def test_unparseable_dtype() -> None:
    with pytest.raises(TypeError, match="not understood"):
        dtypes.canonicalize_dtype("not-a-dtype")


def test_explicit_64_bit_request_warns_with_x64_off() -> None:
    with enable_x64(False):
        with pytest.warns(UserWarning, match=r"Explicitly requested dtype float64 requested in "
                          r"zeros is not available, and will be truncated to dtype float32\. "
                          r"To enable more dtypes, set the jax_enable_x64"):
            assert dtypes.check_user_dtype_supported(np.float64, "zeros") == np.float32
        with pytest.warns(UserWarning, match="int64"):
            assert dtypes.result_type(np.int64, np.int8) == np.int32
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # Python types, NumPy values and 32-bit dtypes are not explicit requests.
            assert dtypes.check_user_dtype_supported(float, "zeros") == np.float32
            assert dtypes.check_user_dtype_supported(int) == np.int32
            assert dtypes.check_user_dtype_supported("float32") == np.float32
            assert dtypes.result_type(np.ones(2), 1) == np.float32
        with config_context(jax_explicit_x64_dtypes="error"):
            with pytest.raises(ValueError, match="not available"):
                dtypes.check_user_dtype_supported(np.int64, "ones")
        with config_context(jax_explicit_x64_dtypes="allow"), warnings.catch_warnings():
            warnings.simplefilter("error")
            assert dtypes.check_user_dtype_supported(np.int64) == np.int64
            assert dtypes.result_type(np.int64, np.int8) == np.int64
    with enable_x64(True), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dtypes.check_user_dtype_supported(np.float64, "zeros") == np.float64


def test_warning_points_at_the_caller() -> None:
    with enable_x64(False), pytest.warns(UserWarning) as record:
        dtypes.result_type(np.float64, 1)
    assert record[0].filename == __file__


def test_check_user_dtype_supported_rejects() -> None:
    with pytest.raises(TypeError):
        dtypes.check_user_dtype_supported("S3", "zeros")
    with pytest.raises(ValueError, match="dtype=arr.dtype"):
        dtypes.check_user_dtype_supported(np.ones(3))
    with pytest.raises(ValueError):
        dtypes.check_user_dtype_supported(None)


# ---------------------------------------------------------------------------
# Complex dtypes are refused clearly


def test_complex_dtypes_canonicalize_and_promote() -> None:
    # complex128 exists only with x64; a Python complex is weak (the node c*).
    c64, c128 = np.dtype(np.complex64), np.dtype(np.complex128)
    with config_context(jax_enable_x64=False):
        assert dtypes.canonicalize_dtype(c128) == c64
        assert dtypes.canonicalize_dtype(complex) == c64
        assert dtypes.result_type(1j, return_weak_type_flag=True) == (c64, True)
        assert dtypes.result_type(1j, np.float16) == c64
    with config_context(jax_enable_x64=True):
        assert dtypes.canonicalize_dtype(complex) == c128
        assert dtypes.result_type(np.float64, c64) == c128
        assert dtypes.result_type(1j, np.float32) == c64
        assert dtypes.result_type(1.0, 1j, return_weak_type_flag=True) == (c128, True)
    assert dtypes.promote_types(c64, np.float32) == c64
    assert dtypes.promote_types(complex, np.float16) == c64
    assert dtypes.promote_types(complex, int) == c128
    assert dtypes.dtype_from_short_name("c64") == c64 and dtypes.short_dtype_name(c128) == "c128"
    assert dtypes.scalar_type_of(np.zeros(2, c64)) is complex
    assert dtypes.is_weakly_typed(1j)


def test_issubdtype_on_complex_is_a_query_not_a_request() -> None:
    assert dtypes.issubdtype(np.complex64, np.complexfloating)
    assert not dtypes.issubdtype(np.float32, np.complexfloating)


# ---------------------------------------------------------------------------
# dtype(), names, hierarchy, limits


def test_dtype_of_values(x64: bool) -> None:
    assert dtypes.dtype(1) == dtypes.default_int_dtype()
    assert dtypes.dtype(1.0) == dtypes.default_float_dtype()
    assert dtypes.dtype(True) == np.bool_
    assert dtypes.dtype(int) == dtypes.default_int_dtype()
    assert dtypes.dtype("float16") == np.float16
    assert dtypes.dtype(np.ones(2, np.int64)) == np.int64
    assert dtypes.dtype(np.ones(2, np.int64), canonicalize=True) == dtypes.canonicalize_dtype(
        np.int64)
    assert dtypes.dtype(fake(np.int64, weak=True)) == np.int64
    assert dtypes.dtype(np.float32(1)) == np.float32
    for bad in ([1, 2], (1.0,)):
        with pytest.raises(TypeError, match="Cannot determine dtype"):
            dtypes.dtype(bad)
    with pytest.raises(TypeError):
        dtypes.dtype(object())
    with pytest.raises(ValueError):
        dtypes.dtype(None)


def test_python_scalar_helpers() -> None:
    assert dtypes.is_python_scalar(1) and dtypes.is_python_scalar(1.0)
    assert dtypes.is_python_scalar(True)
    assert not dtypes.is_python_scalar(np.float32(1)) and dtypes.is_python_scalar(1j)
    assert dtypes.python_scalar_dtypes[complex] == np.complex128
    assert dtypes.python_scalar_dtypes[int] == np.int64
    assert dtypes.python_scalar_dtypes[float] == np.float64
    assert dtypes.python_scalar_dtypes[bool] == np.bool_
    for dt in dtypes.supported_dtypes():
        want = bool if dt == np.bool_ else int if dt.kind in "iu" else complex if dt.kind == "c" else float
        assert dtypes.scalar_type_of(dt) is want
        assert dtypes.scalar_type_of(np.zeros((), dt)) is want
    with pytest.raises(TypeError):
        dtypes.scalar_type_of(dtypes.float0)


SHORT_NAMES = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "bf16": dtypes.bfloat16, "f32": np.float32, "f64": np.float64,
    "float0": dtypes.float0,
}


@pytest.mark.parametrize(("short", "dt"), SHORT_NAMES.items())
def test_short_names_round_trip(short: str, dt: Any) -> None:
    assert dtypes.short_dtype_name(np.dtype(dt)) == short
    assert dtypes.short_dtype_name(dt) == short
    assert dtypes.dtype_from_short_name(short) == np.dtype(dt)


def test_unknown_short_name() -> None:
    with pytest.raises(ValueError, match="Unknown dtype short name"):
        dtypes.dtype_from_short_name("f8")


def test_float0() -> None:
    assert dtypes.float0 == np.dtype([("float0", np.void, 0)])
    assert dtypes.float0.itemsize == 0
    assert dtypes.result_type(dtypes.float0) == dtypes.float0
    assert dtypes.result_type(dtypes.float0, dtypes.float0) == dtypes.float0
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        dtypes.result_type(dtypes.float0, np.float32)


def test_issubdtype() -> None:
    bf = dtypes.bfloat16
    for parent in (np.floating, np.inexact, np.number, np.generic, bf):
        assert dtypes.issubdtype(bf, parent)
        assert dtypes.issubdtype(np.dtype(bf), parent)
    for other in (np.integer, np.signedinteger, np.bool_, np.complexfloating):
        assert not dtypes.issubdtype(bf, other)
    assert not dtypes.issubdtype(np.float32, bf)
    assert dtypes.issubdtype(np.int8, np.signedinteger)
    assert dtypes.issubdtype("uint16", np.unsignedinteger)
    assert not dtypes.issubdtype(np.uint16, np.signedinteger)
    assert dtypes.issubdtype(np.bool_, np.bool_) and not dtypes.issubdtype(np.bool_, np.number)
    assert dtypes.issubdtype(np.float16, np.inexact)
    assert dtypes.issubdtype(float, np.floating) and dtypes.issubdtype(int, np.integer)
    assert not dtypes.issubdtype(dtypes.float0, np.number)


def test_finfo_and_iinfo() -> None:
    info = dtypes.finfo(dtypes.bfloat16)
    assert info.bits == 16 and info.eps == 2.0**-7 and info.nmant == 7
    assert dtypes.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert dtypes.finfo("float16").max == 65504
    assert dtypes.iinfo(np.int8).min == -128
    assert dtypes.iinfo("uint16").max == 65535


# ---------------------------------------------------------------------------
# minijax.config


def test_config_update_and_read() -> None:
    before = config.jax_enable_x64
    try:
        config.update("jax_enable_x64", True)
        assert config.jax_enable_x64 is True and x64_enabled() and config.x64_enabled
        config.update("jax_enable_x64", "0")
        assert config.jax_enable_x64 is False and not x64_enabled()
    finally:
        config.update("jax_enable_x64", before)


def test_config_defaults() -> None:
    assert config.jax_numpy_dtype_promotion == "standard"
    assert config.jax_numpy_rank_promotion == "allow"
    assert config.jax_default_device is None
    assert config.jax_debug_nans is False and config.jax_debug_infs is False
    assert config.jax_check_tracer_leaks is False
    assert config.jax_explicit_x64_dtypes == "warn"
    assert set(config.values) >= {
        "jax_enable_x64", "jax_platforms", "jax_platform_name", "jax_default_device",
        "jax_disable_jit", "jax_numpy_dtype_promotion", "jax_debug_nans", "jax_debug_infs",
        "jax_check_tracer_leaks", "jax_numpy_rank_promotion",
    }


def test_unknown_flag() -> None:
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_bogus"):
        config.update("jax_bogus", 1)
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_bogus"):
        _ = config.jax_bogus
    with pytest.raises(AttributeError, match="Unrecognized config option"), config_context(
        jax_bogus=1
    ):
        pass


def test_invalid_flag_values() -> None:
    with pytest.raises(ValueError, match="allow"):
        config.update("jax_numpy_rank_promotion", "sometimes")
    with pytest.raises(ValueError):
        config.update("jax_enable_x64", "maybe")
    with pytest.raises(ValueError), config_context(jax_numpy_dtype_promotion="loose"):
        pass
    assert config.jax_numpy_rank_promotion == "allow"
    with pytest.raises(AttributeError):
        config.jax_enable_x64 = True


def test_context_managers_nest_and_restore() -> None:
    outer = x64_enabled()
    with enable_x64(not outer):
        assert x64_enabled() is (not outer)
        with enable_x64(outer):
            assert x64_enabled() is outer
        assert x64_enabled() is (not outer)
    assert x64_enabled() is outer
    with config_context(jax_debug_nans=True, jax_numpy_rank_promotion="raise"):
        assert config.jax_debug_nans and config.jax_numpy_rank_promotion == "raise"
    assert not config.jax_debug_nans and config.jax_numpy_rank_promotion == "allow"
    with pytest.raises(RuntimeError), enable_x64(True):
        raise RuntimeError
    assert x64_enabled() is outer


def test_overrides_are_per_thread() -> None:
    seen: list[bool] = []
    global_value = config.jax_enable_x64
    with enable_x64(not global_value):
        worker = threading.Thread(target=lambda: seen.append(x64_enabled()))
        worker.start()
        worker.join()
        assert x64_enabled() is (not global_value)
    assert seen == [global_value]


def test_listeners_hear_changes() -> None:
    heard: list[tuple[str, Any]] = []
    register_listener(lambda name, value: heard.append((name, value)))
    with enable_x64(True):
        pass
    assert heard[-2:] == [("jax_enable_x64", True), ("jax_enable_x64", False)]


@pytest.mark.parametrize(("value", "want"), [("1", True), ("true", True), ("YES", True),
                                             ("on", True), ("0", False), ("false", False)])
def test_env_var_sets_default(value: str, want: bool) -> None:
    # (minijax/__init__.py rebinds ``minijax.config`` to the Config object, as
    # ``jax.config`` is; the module's names are reached with from-imports.)
    code = "from minijax.config import config as c; print(c.jax_enable_x64, c.jax_disable_jit)"
    env = {**os.environ, "JAX_ENABLE_X64": value, "JAX_DISABLE_JIT": value,
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [str(want), str(want)]
