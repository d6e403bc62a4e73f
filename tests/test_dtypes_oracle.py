"""minijax.dtypes against real JAX: same promotion for every pair of inputs.

Run where JAX is installed (the oracle environment of README.md, "More"):
    .venv-oracle/bin/python -m pytest tests/test_dtypes_oracle.py
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip(
    "jax", reason="real JAX is not installed; these tests compare minijax against it"
)
jnp = pytest.importorskip("jax.numpy", reason="real JAX is not installed")

import minijax.dtypes as mdt  # noqa: E402
from minijax.config import config_context  # noqa: E402

pytestmark = pytest.mark.oracle

DTYPES = [
    np.dtype(t)
    for t in (
        np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16,
        np.int32, np.int64, mdt.bfloat16, np.float16, np.float32, np.float64,
        np.complex64, np.complex128,
    )
]

MODES = [
    pytest.param(x64, promotion, id=f"x64={x64}-{promotion}")
    for x64 in (False, True)
    for promotion in ("standard", "strict")
]


@contextlib.contextmanager
def both_configs(x64: bool, promotion: str) -> Iterator[None]:
    """Set the same flags in JAX (globally) and minijax (this thread)."""
    old = (jax.config.jax_enable_x64, str(jax.config.jax_numpy_dtype_promotion))
    jax.config.update("jax_enable_x64", x64)
    jax.config.update("jax_numpy_dtype_promotion", promotion)
    try:
        with config_context(jax_enable_x64=x64, jax_numpy_dtype_promotion=promotion):
            yield
    finally:
        jax.config.update("jax_enable_x64", old[0])
        jax.config.update("jax_numpy_dtype_promotion", old[1])


@dataclass(frozen=True)
class FakeAval:
    dtype: np.dtype[Any]
    weak_type: bool
    shape: tuple[int, ...] = ()


@dataclass(frozen=True)
class FakeArray:
    """Stands in for a minijax Array: result_type only looks at ``.aval``."""

    aval: FakeAval


def _weak_jax_array(dtype: np.dtype[Any]) -> Any:
    # JAX has no public way to make a weakly-typed array of a chosen dtype;
    # its internal convert_element_type takes the flag.
    from jax._src.lax import lax as lax_internal

    return lax_internal._convert_element_type(np.zeros((), dtype), dtype, weak_type=True)


def _inputs() -> list[tuple[str, Any, Any]]:
    """(label, value given to JAX, value given to minijax)."""
    out: list[tuple[str, Any, Any]] = []
    for value in (True, 1, 1.0, 1j, bool, int, float, complex, None):
        out.append((repr(value), value, value))
    out.append(("dtype float0", mdt.float0, mdt.float0))
    out.append(("np.ndarray float0", np.zeros((2,), mdt.float0), np.zeros((2,), mdt.float0)))
    for dt in DTYPES:
        out.append((f"dtype {dt}", dt, dt))
        out.append((f"str {dt}", dt.name, dt.name))
        out.append((f"type {dt}", dt.type, dt.type))
        out.append((f"np.ndarray {dt}", np.zeros((2,), dt), np.zeros((2,), dt)))
        out.append((f"np scalar {dt}", dt.type(0), dt.type(0)))
    # JAX arrays are made with x64 on, so that 64-bit values exist; then they
    # take part in promotions under both settings (their dtype is respected).
    with both_configs(True, "standard"):
        for dt in DTYPES:
            strong = jnp.zeros((), dt)
            out.append((f"array {dt}", strong, FakeArray(FakeAval(strong.dtype, False))))
            if dt != np.bool_:
                weak = _weak_jax_array(dt)
                assert weak.weak_type
                out.append((f"weak array {dt}", weak, FakeArray(FakeAval(weak.dtype, True))))
    return out


INPUTS = _inputs()


def _outcome(fn: Callable[[], Any]) -> tuple[str, Any, bool]:
    """("ok", value, warned) or ("raise", exception type name, warned)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn()
        except (TypeError, ValueError) as e:  # TypePromotionError is a ValueError
            return "raise", type(e).__name__, bool(caught)
    return "ok", value, any(issubclass(w.category, UserWarning) for w in caught)


def _compare(
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]],
) -> list[str]:
    mismatches = []
    for label, jax_fn, mini_fn in cases:
        expected, got = _outcome(jax_fn), _outcome(mini_fn)
        if expected != got:
            mismatches.append(f"{label}: jax={expected} minijax={got}")
    return mismatches


@pytest.mark.parametrize(("x64", "promotion"), MODES)
def test_result_type_single_argument(x64: bool, promotion: str) -> None:
    cases = [
        (
            label,
            lambda a=a: jax.dtypes.result_type(a, return_weak_type_flag=True),
            lambda m=m: mdt.result_type(m, return_weak_type_flag=True),
        )
        for label, a, m in INPUTS
    ]
    with both_configs(x64, promotion):
        mismatches = _compare(cases)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize(("x64", "promotion"), MODES)
def test_result_type_every_pair(x64: bool, promotion: str) -> None:
    cases = [
        (
            f"({la}, {lb})",
            lambda a=a, b=b: jax.dtypes.result_type(a, b, return_weak_type_flag=True),
            lambda ma=ma, mb=mb: mdt.result_type(ma, mb, return_weak_type_flag=True),
        )
        for (la, a, ma), (lb, b, mb) in itertools.product(INPUTS, repeat=2)
    ]
    with both_configs(x64, promotion):
        mismatches = _compare(cases)
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:50])


@pytest.mark.parametrize(("x64", "promotion"), MODES)
def test_jnp_result_type_matches(x64: bool, promotion: str) -> None:
    # jnp.result_type is the user-facing spelling; it drops the weak flag.
    cases = [
        (f"({la}, {lb})", lambda a=a, b=b: jnp.result_type(a, b),
         lambda ma=ma, mb=mb: mdt.result_type(ma, mb))
        for (la, a, ma), (lb, b, mb) in itertools.product(INPUTS[:9] + INPUTS[9::5], repeat=2)
    ]
    with both_configs(x64, promotion):
        mismatches = _compare(cases)
    assert not mismatches, "\n".join(mismatches[:50])


@pytest.mark.parametrize(("x64", "promotion"), MODES)
def test_result_type_triples(x64: bool, promotion: str) -> None:
    # Python scalars, dtypes and weak/strong arrays, three at a time.
    pool = [i for i in INPUTS if i[0].startswith(("dtype", "weak array"))]
    pool += INPUTS[:3] + INPUTS[7:8]
    cases = [
        (
            f"({la}, {lb}, {lc})",
            lambda a=a, b=b, c=c: jax.dtypes.result_type(a, b, c, return_weak_type_flag=True),
            lambda ma=ma, mb=mb, mc=mc: mdt.result_type(ma, mb, mc, return_weak_type_flag=True),
        )
        for (la, a, ma), (lb, b, mb), (lc, c, mc) in itertools.combinations(pool, 3)
    ]
    with both_configs(x64, promotion):
        mismatches = _compare(cases)
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:50])


@pytest.mark.parametrize(("x64", "promotion"), MODES)
def test_promote_types_every_pair(x64: bool, promotion: str) -> None:
    specs: list[Any] = [*DTYPES, int, float, bool]
    cases = [
        (f"({a}, {b})", lambda a=a, b=b: jnp.promote_types(a, b),
         lambda a=a, b=b: mdt.promote_types(a, b))
        for a, b in itertools.product(specs, repeat=2)
    ]
    with both_configs(x64, promotion):
        mismatches = _compare(cases)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("x64", [False, True])
def test_canonicalize_dtype(x64: bool) -> None:
    specs: list[Any] = [*DTYPES, int, float, bool, "int64", "float32", np.float64, None]
    cases = [
        (repr(s), lambda s=s: jax.dtypes.canonicalize_dtype(s),
         lambda s=s: mdt.canonicalize_dtype(s))
        for s in specs
    ]
    with both_configs(x64, "standard"):
        mismatches = _compare(cases)
    assert not mismatches, "\n".join(mismatches)


def test_issubdtype() -> None:
    abstract = [np.generic, np.number, np.inexact, np.floating, np.integer,
                np.signedinteger, np.unsignedinteger, np.bool_]
    specs: list[Any] = [*DTYPES, *(d.type for d in DTYPES), mdt.bfloat16, mdt.float0]
    for a, b in itertools.product(specs, abstract + specs):
        assert mdt.issubdtype(a, b) == jax.dtypes.issubdtype(a, b), (a, b)


def test_finfo_and_iinfo() -> None:
    for dt in DTYPES:
        if dt.kind in "iu":
            assert mdt.iinfo(dt).min == jax.dtypes.iinfo(dt).min
            assert mdt.iinfo(dt).max == jax.dtypes.iinfo(dt).max
        elif dt != np.bool_:
            mine, theirs = mdt.finfo(dt), jax.dtypes.finfo(dt)
            assert (mine.eps, mine.max, mine.tiny, mine.bits) == (
                theirs.eps, theirs.max, theirs.tiny, theirs.bits
            ), dt


def test_scalar_type_of() -> None:
    for dt in DTYPES:
        value = np.zeros((), dt)
        assert mdt.scalar_type_of(value) is jax.dtypes.scalar_type_of(value), dt


def test_is_weakly_typed() -> None:
    from jax._src import dtypes as jax_internal_dtypes

    for label, a, m in INPUTS:
        if a is None or isinstance(a, type):
            continue
        assert mdt.is_weakly_typed(m) == jax_internal_dtypes.is_weakly_typed(a), label


def test_short_names_match_jaxpr_printing() -> None:
    for dt in [*DTYPES, mdt.float0]:
        shown = jax.core.ShapedArray((3,), dt).str_short(short_dtypes=True)
        assert shown == f"{mdt.short_dtype_name(dt)}[3]"


def test_explicit_x64_warning_text() -> None:
    with both_configs(False, "standard"):
        for dt in (np.float64, np.int64, np.uint64):
            with pytest.warns(UserWarning) as theirs:
                jnp.zeros(3, dt)
            with pytest.warns(UserWarning) as mine:
                mdt.check_user_dtype_supported(dt, "zeros")
            assert str(mine[0].message) == str(theirs[0].message)
