"""Reductions, argmax/argmin and dot_general (spec/primitives/reductions.md).

Properties: eager == jit == a NumPy reference expression, on random shapes
(rank 0 and zero-sized dimensions included), dtypes and params.
"""

from __future__ import annotations

import re
import string
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from test_structural import (
    ALL_DTYPES,
    BOOL,
    FLOATS,
    INTS,
    SPEC,
    assert_same,
    check,
    random_array,
    seeds,
    shapes,
    spec_examples,
)

import minijax as jax
import minijax.lax.structural  # noqa: F401  (the module under test, before the lead registers it)
import minijax.primitives.common as common
import minijax.primitives.reductions as rp
from minijax import lax

BF16 = np.dtype(ml_dtypes.bfloat16)


def _tolerance(dtype: np.dtype[Any], x: np.ndarray) -> tuple[float, float]:
    """(rtol, atol) for a float reduction against a float64 reference: the
    rounding of the result, plus float32 accumulation errors, which scale
    with the sum of the magnitudes (cancellation can leave a small result)."""
    if dtype.kind in "iub":
        return 0.0, 0.0
    eps = float(ml_dtypes.finfo(dtype).eps)
    magnitudes = np.abs(x.astype(np.float64))
    total = float(np.sum(magnitudes[np.isfinite(magnitudes)]))
    return 2 * eps + 1e-6 * x.size, 1e-6 * total


def _reference_arithmetic(ufunc: np.ufunc, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if x.dtype.kind in "iu":
        return np.asarray(ufunc.reduce(x, axis=axes, dtype=x.dtype))  # wraps around
    return np.asarray(ufunc.reduce(x.astype(np.float64), axis=axes)).astype(x.dtype)


def _identity(name: str, dtype: np.dtype[Any]) -> Any:
    if dtype == np.bool_:
        return name in ("reduce_min", "reduce_and")
    if name == "reduce_and":
        return np.array(-1).astype(dtype)
    if name in ("reduce_or", "reduce_xor"):
        return 0
    if dtype.kind in "iu":
        return np.iinfo(dtype).min if name == "reduce_max" else np.iinfo(dtype).max
    return -np.inf if name == "reduce_max" else np.inf


REFERENCES: dict[str, tuple[list[np.dtype[Any]], Callable[[np.ndarray, tuple[int, ...]], np.ndarray]]] = {
    "reduce_sum": (INTS + FLOATS, lambda x, a: _reference_arithmetic(np.add, x, a)),
    "reduce_prod": (INTS + FLOATS, lambda x, a: _reference_arithmetic(np.multiply, x, a)),
    "reduce_max": (ALL_DTYPES, lambda x, a: np.asarray(np.max(x, axis=a, initial=_identity("reduce_max", x.dtype)))),
    "reduce_min": (ALL_DTYPES, lambda x, a: np.asarray(np.min(x, axis=a, initial=_identity("reduce_min", x.dtype)))),
    "reduce_and": (BOOL + INTS, lambda x, a: np.asarray(np.bitwise_and.reduce(x, axis=a, initial=_identity("reduce_and", x.dtype)))),
    "reduce_or": (BOOL + INTS, lambda x, a: np.asarray(np.bitwise_or.reduce(x, axis=a))),
    "reduce_xor": (BOOL + INTS, lambda x, a: np.asarray(np.bitwise_xor.reduce(x, axis=a))),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
@given(shape=shapes, seed=seeds, data=st.data())
def test_reductions(name: str, shape: tuple[int, ...], seed: int, data: Any) -> None:
    accepted, reference = REFERENCES[name]
    dtype = data.draw(st.sampled_from(accepted))
    axes = tuple(data.draw(st.permutations(range(len(shape)))))[: data.draw(st.integers(0, len(shape)))]
    # Products of many large values only test overflow to inf; keep them moderate.
    x = random_array(np.random.default_rng(seed), shape, dtype, specials=name != "reduce_prod")
    if name == "reduce_prod" and (dtype.kind == "f" or dtype == BF16):
        x = (x.astype(np.float32) % 3).astype(dtype)
    params = {"axes": axes, **({"out_sharding": None} if name == "reduce_sum" else {})}
    prim = rp.REDUCTION_PRIMITIVES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = reference(x, axes)
    rtol, atol = _tolerance(dtype, x)
    check(lambda x: prim.bind(x, **params), [x], want, rtol=rtol, atol=atol)


def test_narrow_float_sums_accumulate_in_float32() -> None:
    # 2048 + 1 + 1 + ... in float16 would stay at 2048 when added one at a time.
    x = np.ones(33, np.float16)
    x[0] = 2048
    assert_same(lax.reduce_sum(x, (0,)), np.array(2080, np.float16))
    assert_same(lax.reduce_sum(x.astype(ml_dtypes.bfloat16), (0,)), np.array(2080, ml_dtypes.bfloat16))


def test_max_min_of_signed_zeros_and_nan() -> None:
    assert np.signbit(np.asarray(lax.reduce_min(np.array([0.0, -0.0], np.float32), (0,))))
    assert not np.signbit(np.asarray(lax.reduce_max(np.array([-0.0, 0.0], np.float32), (0,))))
    assert not np.signbit(np.asarray(lax.reduce_max(np.array([0.0, -0.0], np.float16), (0,))))
    assert np.signbit(np.asarray(lax.reduce_max(np.array([-0.0], np.float32), (0,))))
    assert np.isnan(np.asarray(lax.reduce_max(np.array([1.0, np.nan], np.float32), (0,))))


def test_empty_reductions_give_the_identity() -> None:
    empty = np.zeros((0, 2), np.int8)
    assert_same(lax.reduce_max(empty, (0,)), np.full(2, -128, np.int8))
    assert_same(lax.reduce_and(np.zeros((0,), np.uint8), (0,)), np.array(255, np.uint8))
    assert_same(lax.reduce_min(np.zeros((0,), np.float32), (0,)), np.array(np.inf, np.float32))
    assert_same(lax.reduce_min(np.zeros((0,), np.bool_), (0,)), np.array(True))
    assert_same(lax.reduce_prod(np.zeros((0,), np.float16), (0,)), np.array(1, np.float16))


# ---------------------------------------------------------------------------
# argmax, argmin


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(shape=shapes, seed=seeds, data=st.data())
def test_arg_reductions(name: str, shape: tuple[int, ...], seed: int, data: Any) -> None:
    if not shape or 0 in shape:
        shape = (*[n or 1 for n in shape], 2)
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    index_dtype = data.draw(st.sampled_from([np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.int16)]))
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = random_array(np.random.default_rng(seed), shape, dtype)
    # Ties and NaN: the first index wins, NaN counts as the extreme (NumPy agrees).
    want = getattr(np, name)(x.astype(np.float32) if dtype == BF16 else x, axis=axis).astype(index_dtype)
    prim = rp.argmax_p if name == "argmax" else rp.argmin_p
    check(lambda x: prim.bind(x, axes=(axis,), index_dtype=index_dtype), [x], want)


def test_arg_reductions_nan_ties_and_zeros() -> None:
    x = np.array([1.0, np.nan, 3.0, np.nan], np.float32)
    assert int(lax.argmax(x, 0, np.int32)) == 1 and int(lax.argmin(x, 0, np.int32)) == 1
    assert int(lax.argmax(np.array([1.0, 3.0, 3.0], np.float32), 0, np.int32)) == 1
    assert int(lax.argmax(np.array([-0.0, 0.0], np.float32), 0, np.int32)) == 0
    assert int(lax.argmin(np.array([True, False, False]), 0, np.int32)) == 1
    assert lax.argmax(lax.full((3,), 1.0), 0, np.int32).aval.weak_type is False


# ---------------------------------------------------------------------------
# dot_general


@st.composite
def dot_cases(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...], Any]:
    """Random shapes and dimension numbers: batch, contracting and free axes in any order."""
    size = st.integers(0, 3)
    batch = [draw(size) for _ in range(draw(st.integers(0, 2)))]
    contract = [draw(size) for _ in range(draw(st.integers(0, 2)))]
    lhs_free = [draw(size) for _ in range(draw(st.integers(0, 2)))]
    rhs_free = [draw(size) for _ in range(draw(st.integers(0, 2)))]

    def place(free: list[int]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        roles = [("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))] + [("f", i) for i in range(len(free))]
        order = draw(st.permutations(roles))
        sizes = {"b": batch, "c": contract, "f": free}
        shape = tuple(sizes[r][i] for r, i in order)
        return shape, tuple(order.index(("c", i)) for i in range(len(contract))), tuple(order.index(("b", i)) for i in range(len(batch)))

    lhs_shape, lc, lb = place(lhs_free)
    rhs_shape, rc, rb = place(rhs_free)
    return lhs_shape, rhs_shape, ((lc, rc), (lb, rb))


def dot_reference(lhs: np.ndarray, rhs: np.ndarray, dims: Any, out_dtype: np.dtype[Any]) -> np.ndarray:
    """np.einsum in float64 (floats) or int64 (integers, wrapped into the result afterwards)."""
    (lc, rc), (lb, rb) = dims
    letters = iter(string.ascii_letters)
    lhs_sub = [next(letters) for _ in range(lhs.ndim)]
    rhs_sub = [next(letters) for _ in range(rhs.ndim)]
    for a, b in zip(lc + lb, rc + rb):
        rhs_sub[b] = lhs_sub[a]
    out = [lhs_sub[i] for i in lb] + [lhs_sub[i] for i in range(lhs.ndim) if i not in lb + lc]
    out += [rhs_sub[i] for i in range(rhs.ndim) if i not in rb + rc]
    wide = np.float64 if out_dtype.kind == "f" or out_dtype == BF16 else np.int64
    spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(out)}"
    return np.asarray(np.einsum(spec, lhs.astype(out_dtype).astype(wide), rhs.astype(out_dtype).astype(wide))).astype(out_dtype)


@given(dot_cases(), st.sampled_from(INTS + FLOATS), seeds)
def test_dot_general(case: Any, dtype: np.dtype[Any], seed: int) -> None:
    lhs_shape, rhs_shape, dims = case
    rng = np.random.default_rng(seed)
    lhs, rhs = random_array(rng, lhs_shape, dtype, specials=False), random_array(rng, rhs_shape, dtype, specials=False)
    f = lambda a, b: rp.dot_general_p.bind(a, b, dimension_numbers=dims, precision=None, preferred_element_type=None)  # noqa: E731
    rtol = {np.dtype(np.float16): 1e-2, BF16: 5e-2, np.dtype(np.float32): 1e-4}.get(dtype, 0.0)
    check(f, [lhs, rhs], dot_reference(lhs, rhs, dims, dtype), rtol=rtol)


@given(dot_cases(), st.sampled_from(ALL_DTYPES), st.sampled_from(ALL_DTYPES), seeds)
def test_dot_general_mixed_dtypes(case: Any, lhs_dtype: np.dtype[Any], rhs_dtype: np.dtype[Any], seed: int) -> None:
    lhs_shape, rhs_shape, dims = case
    rng = np.random.default_rng(seed)
    # Small integers keep float results exact, so the comparison can be exact too.
    lhs = np.asarray(rng.integers(0, 3, lhs_shape)).astype(lhs_dtype)
    rhs = np.asarray(rng.integers(0, 3, rhs_shape)).astype(rhs_dtype)
    out = rp.dot_input_dtype(lhs_dtype, rhs_dtype)
    f = lambda a, b: lax.dot_general(a, b, dims)  # noqa: E731
    want = dot_reference(lhs, rhs, dims, np.dtype(np.int32) if out == np.bool_ else out)
    check(f, [lhs, rhs], want.astype(bool) if out == np.bool_ else want)


def test_dot_general_dtype_rule_matches_jax_table() -> None:
    # Rows checked against JAX 0.10.2 (tests/test_structural_oracle.py checks all pairs).
    table = {
        (np.int8, np.uint8): np.int8, (np.uint16, np.int8): np.uint16, (np.float16, ml_dtypes.bfloat16): ml_dtypes.bfloat16,
        (np.int32, np.float16): np.float16, (np.bool_, np.uint8): np.uint8, (np.float32, np.int32): np.float32,
    }
    for (a, b), want in table.items():
        assert rp.dot_input_dtype(np.dtype(a), np.dtype(b)) == np.dtype(want)


def test_dot_general_accumulates_narrow_floats_in_float32_and_wraps_integers() -> None:
    x = np.ones(3, np.float16)
    x[0] = 2048
    assert_same(lax.dot(x, np.ones(3, np.float16)), np.array(2050, np.float16))
    assert_same(lax.dot(np.array([100, 100], np.int8), np.array([2, 1], np.int8)), np.array(44, np.int8))
    assert_same(lax.dot(np.array([100, 100], np.int8), np.array([2, 1], np.int8), preferred_element_type=np.int32), np.array(300, np.int32))
    # Float results converted to integers saturate; NaN becomes 0; integer operands round to a float result first.
    assert_same(lax.dot(np.array([100.5, 100.0], np.float32), np.ones(2, np.float32), preferred_element_type=np.int8), np.array(127, np.int8))
    assert_same(lax.dot(np.array([np.nan], np.float32), np.ones(1, np.float32), preferred_element_type=np.int32), np.array(0, np.int32))
    big = np.array([2**24 + 1, -(2**24)], np.int32)
    assert_same(lax.dot(big, np.ones(2, np.int32), preferred_element_type=np.float32), np.array(0, np.float32))
    assert_same(lax.dot(np.array([True, False]), np.array([True, True])), np.array(True))


def test_dot_general_weak_type_and_preferred_element_type() -> None:
    w = lax.full((3,), 1.0)
    assert lax.dot(w, w).aval.weak_type
    assert not lax.dot(w, np.ones(3, np.float32)).aval.weak_type
    assert lax.dot(w, w, preferred_element_type=np.float32).aval.weak_type
    assert lax.dot(np.ones(3, np.int8), np.ones(3, np.int8), preferred_element_type=np.float32).dtype == np.float32


def test_dot_wrappers() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(lax.batch_matmul(a, b), a @ b, rtol=1e-5)
    np.testing.assert_allclose(lax.dot(a[0], b[0]), a[0] @ b[0], rtol=1e-5)
    np.testing.assert_allclose(lax.dot(a[0, 0], b[0]), a[0, 0] @ b[0], rtol=1e-5)
    np.testing.assert_allclose(lax.dot(a, a, dimension_numbers=(((2,), (2,)), ((0,), (0,)))), np.einsum("bij,bkj->bik", a, a), rtol=1e-5)
    jaxpr = jax.make_jaxpr(lambda x: lax.dot(x, x, precision="highest"))(a[0, 0])
    assert jaxpr.eqns[0].params["precision"] == (lax.Precision.HIGHEST, lax.Precision.HIGHEST)
    assert lax.Precision("bfloat16_3x") is lax.Precision.HIGH and repr(lax.Precision.HIGH) == "Precision.HIGH"


# ---------------------------------------------------------------------------
# lax.reduce: the monoids JAX turns into primitives


def test_reduce_recognizes_monoids() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases = [(0.0, lax.add, "reduce_sum"), (-np.inf, lax.max, "reduce_max"), (np.inf, lax.min, "reduce_min"), (1.0, lax.mul, "reduce_prod")]
    for init, op, prim in cases:
        jaxpr = jax.make_jaxpr(lambda x, init=init, op=op: lax.reduce(x, init, op, (0,)))(x)
        assert [e.primitive.name for e in jaxpr.eqns] == [prim]
    b = np.array([[True, False], [True, True]])
    assert_same(lax.reduce(b, True, lax.bitwise_and, (1,)), np.array([False, True]))
    assert_same(lax.reduce(b, False, lax.bitwise_xor, (0,)), np.array([False, True]))
    assert_same(lax.reduce((x,), (0.0,), lax.add, (1,))[0], np.array([3, 12], np.float32))
    # A weak operand with a strong init value gives a strong result, as in JAX.
    assert not lax.reduce(lax.full((2,), 1.0), np.float32(0), lax.add, (0,)).aval.weak_type
    with pytest.raises(NotImplementedError, match="lax.reduce"):
        lax.reduce(x, 2.0, lax.add, (0,))
    with pytest.raises(NotImplementedError, match="lax.reduce"):
        lax.reduce(x, 0.0, lambda a, b: a, (0,))


# ---------------------------------------------------------------------------
# Errors


F32 = np.ones((2, 3), np.float32)
DN = (((1,), (1,)), ((), ()))

ERRORS: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("axes range", lambda: lax.reduce_sum(F32, (2,)), ValueError, "reduce_sum: reduction axes (2,) contains out-of-bounds indices for float32[2,3]."),
    ("axes negative", lambda: lax.reduce_max(F32, (-1,)), ValueError, "reduce_max: reduction axes (-1,)"),
    ("axes dups", lambda: lax.reduce_min(F32, (0, 0)), ValueError, "reduce_min: duplicate value in 'axes' of reduction: (0, 0)"),
    ("sum bool", lambda: lax.reduce_sum(np.ones(3, bool), (0,)), TypeError, "reduce_sum does not accept dtype bool"),
    ("prod bool", lambda: lax.reduce_prod(np.ones(3, bool), (0,)), TypeError, "reduce_prod does not accept dtype bool"),
    ("and float", lambda: lax.reduce_and(F32, (0,)), TypeError, "reduce_and: logical reduction requires operand dtype bool or int, got float32."),
    ("xor float", lambda: lax.reduce_xor(F32, (0,)), TypeError, "reduce_xor: logical reduction requires"),
    ("argmax axis", lambda: lax.argmax(F32, 2, np.int32), ValueError, "argmax: Invalid axis 2 for operand shape (2, 3)"),
    ("argmin negative", lambda: lax.argmin(F32, -1, np.int32), ValueError, "argmin: Invalid axis -1"),
    ("argmax index dtype", lambda: lax.argmax(F32, 0, np.float32), TypeError, "index_dtype must be an integer type, but got float32"),
    ("argmax empty", lambda: lax.argmax(np.ones((0, 3)), 0, np.int32), ValueError, "argmin and argmax require non-empty reduced dimension"),
    ("argmax axes", lambda: rp.argmax_p.bind(F32, axes=(0, 1), index_dtype=np.int32), ValueError, "argmax reduces exactly one axis"),
    ("dot contract", lambda: lax.dot_general(F32, F32, (((1,), (0,)), ((), ()))), TypeError, "dot_general requires contracting dimensions to have the same shape, got (3,) and (2,)."),
    ("dot batch", lambda: lax.dot_general(F32, np.ones((4, 3)), (((1,), (1,)), ((0,), (0,)))), TypeError, "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape"),
    ("dot batch count", lambda: lax.dot_general(F32, F32, (((1,), (1,)), ((0,), ()))), TypeError, "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions"),
    ("dot range", lambda: lax.dot_general(F32, F32, (((2,), (1,)), ((), ()))), TypeError, "dot_general requires lhs dimension numbers to be nonnegative and less than"),
    ("dot rhs range", lambda: lax.dot_general(F32, F32, (((1,), (-1,)), ((), ()))), TypeError, "dot_general requires rhs dimension numbers"),
    ("dot overlap", lambda: lax.dot_general(F32, F32, (((0,), (0,)), ((0,), (0,)))), TypeError, "dot_general requires lhs batch dimensions to be disjoint from contracting dimensions"),
    ("dot dups", lambda: lax.dot_general(F32, F32, (((1, 1), (1, 1)), ((), ()))), TypeError, "dot_general requires lhs contracting dimensions to be distinct"),
    ("dot narrow", lambda: lax.dot_general(F32.astype(np.int32), F32.astype(np.int32), DN, preferred_element_type=np.int8), TypeError, "`preferred_element_type` must not be narrower than the original type"),
    ("dot numbers", lambda: lax.dot_general(F32, F32, ((1,), (1,))), TypeError, "dot_general dimension_numbers must be"),
    ("dot precision", lambda: lax.dot_general(F32, F32, DN, precision=(lax.Precision.HIGH, None)), ValueError, "Precision argument must be one of"),
    ("dot precision prim", lambda: rp.dot_general_p.bind(F32, F32, dimension_numbers=DN, precision="high", preferred_element_type=None), TypeError, "dot_general precision must be None or a pair"),
    ("lax.dot shapes", lambda: lax.dot(np.ones((2, 3, 4)), np.ones(4)), ValueError, "jax.lax.dot: dimension_numbers must be specified"),
    ("batch_matmul rank", lambda: lax.batch_matmul(np.ones(4), np.ones(4)), ValueError, "Arguments to batch_matmul must be at least 2D"),
    ("batch_matmul ndim", lambda: lax.batch_matmul(np.ones((2, 3, 4)), np.ones((4, 5))), ValueError, "Arguments to batch_matmul must have same ndim"),
]


@pytest.mark.parametrize("name, f, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name: str, f: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        f()


# ---------------------------------------------------------------------------
# The spec


@pytest.mark.parametrize("name, code", spec_examples("reductions.md"), ids=[n for n, _ in spec_examples("reductions.md")])
def test_spec_example_runs(name: str, code: str) -> None:
    exec(compile(code, f"reductions.md:{name}", "exec"), {})


def test_every_section_of_the_page_has_an_example() -> None:
    documented = {name for name, _ in spec_examples("reductions.md")}
    assert documented == set(re.findall(r"^## (\w+)$", (SPEC / "reductions.md").read_text(), flags=re.M))


def test_rules_cite_spec_constraints() -> None:
    # The monoid reductions' shared rule is in primitives/common.py; reduce_sum is specified on structural.md.
    source = Path(str(rp.__file__)).read_text() + Path(str(common.__file__)).read_text()
    text = (SPEC / "reductions.md").read_text() + (SPEC / "structural.md").read_text()
    sections = dict(re.findall(r"^## (\w+)\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S))
    cited = set(re.findall(r"# (\w+) (C\d+)", source))
    assert ("reduce", "C1") in cited and ("argmax", "C1") in cited
    # "reduce C1" cites the rule every monoid reduction shares; the argmax rule serves argmin too.
    shared = {"reduce": sorted(rp.REDUCTION_PRIMITIVES), "argmax": ["argmax", "argmin"]}
    for prim, label in cited:
        for name in shared.get(prim, [prim]):
            assert f"({label})" in sections[name], f"{name} {label} is cited but not in the spec"


# What JAX 0.10.2 answers (run on real JAX): a complex max/min does not let a NaN win,
# and the answer depends on where the NaN sits (XLA folds with the lexicographic max).
COMPLEX_NAN_CASES = [
    ("reduce_max", [complex("nan"), 1, 3], 3),
    ("reduce_max", [1, complex("nan"), 3], 3),
    ("reduce_max", [1, 3, complex("nan")], complex("nan")),
    ("reduce_max", [complex(1, float("nan")), 3], 3),
    ("reduce_max", [complex(float("nan"), 1), 2], 2),
    ("reduce_min", [complex("nan"), 3, 1], 1),
    ("reduce_min", [3, 1, complex("nan")], complex("nan")),
]


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize(("name", "values", "want"), COMPLEX_NAN_CASES)
def test_complex_max_min_fold_as_xla_does(backend: str, name: str, values: list[complex], want: complex) -> None:
    x = jax.device_put(np.array(values, np.complex64), jax.devices(backend)[0])
    got = complex(getattr(lax, name)(x, (0,)))
    assert got == want or (np.isnan(got.real) and np.isnan(complex(want).real)), (got, want)


def test_complex_max_folds_in_row_major_order_over_several_axes() -> None:
    rng = np.random.default_rng(1)
    x = (rng.integers(-2, 3, (3, 4, 5)) + 1j * rng.integers(-2, 3, (3, 4, 5))).astype(np.complex64)
    x[rng.random(x.shape) < 0.2] = complex("nan")
    for axes in [(0,), (1, 2), (0, 2), (0, 1, 2)]:
        for name in ("reduce_max", "reduce_min"):
            want = getattr(lax, name)(jax.device_put(x, jax.devices("xla")[0]), axes)
            got = getattr(lax, name)(jax.device_put(x, jax.devices("numpy")[0]), axes)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
