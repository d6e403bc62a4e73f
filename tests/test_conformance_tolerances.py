"""The tolerance policy (minijax.testing.tolerances): the spec page states it, and each rule decides as it says."""

from __future__ import annotations

import pathlib
import re
from typing import Any

import numpy as np
import pytest

from minijax import dtypes
from minijax.testing.tolerances import (
    BIT_EXACT,
    LINALG,
    LINALG_RTOL,
    PROGRAM_RTOL,
    ULPS,
    compare_primitive,
    compare_program,
    documented_rows,
    tolerance,
    ulp_distance,
)

pytestmark = pytest.mark.single_backend  # pure NumPy comparisons: nothing runs on a backend

SPEC = (pathlib.Path(__file__).resolve().parent.parent / "spec" / "tolerances.md").read_text()
F32 = np.float32
BF16 = np.dtype(dtypes.bfloat16)


def f32(*values: float) -> np.ndarray[Any, Any]:
    return np.array(values, np.float32)


def up(x: np.ndarray[Any, Any], k: int) -> np.ndarray[Any, Any]:
    for _ in range(k):
        x = np.nextafter(x, np.array(np.inf, x.dtype))
    return x


# ---------------------------------------------------------------------------
# The spec page and the code state the same policy


def test_the_ulps_table_is_the_spec_pages_table() -> None:
    page_rows = {line for line in SPEC.splitlines() if re.match(r"\| `[a-z_0-9]+` \| \w+ \| \d+ \| \d+ \|$", line)}
    assert page_rows == set(documented_rows())


def test_program_and_linalg_tolerances_are_documented() -> None:
    for name, rtol in PROGRAM_RTOL.items():
        assert f"| {name} | {rtol:g} |" in SPEC, f"spec/tolerances.md lacks the program tolerance of {name}"
    for name, rtol in LINALG_RTOL.items():
        assert f"| {name} | {rtol:g} |" in SPEC, f"spec/tolerances.md lacks the linalg tolerance of {name}"
    for name in sorted(LINALG | BIT_EXACT):
        assert f"`{name}`" in SPEC, f"spec/tolerances.md does not name {name}"


def test_unlisted_primitives_and_integers_are_exact() -> None:
    assert tolerance("add", F32).exact and tolerance("sqrt", np.float64).exact
    assert tolerance("sin", np.int32).exact
    assert tolerance("sin", F32).ulps == ULPS["sin"]["float32"][0] == 2
    assert tolerance("reduce_sum", F32).bound == "sum" and tolerance("cholesky", F32).bound == "linalg"
    # The cumulative reductions (spec/primitives/sorting.md, "Accumulation"): floating sums and
    # products may reassociate; integer ones wrap (associative) and cummax/cummin pick an operand.
    assert tolerance("cumsum", F32).bound == "cumsum" and tolerance("cumprod", np.float64).bound == "cumprod"
    assert all(tolerance(name, dt).exact for name in ("cumsum", "cumprod") for dt in (np.int32, np.uint8, np.int64))
    assert all(tolerance(name, dt).exact for name in ("cummax", "cummin") for dt in (F32, np.float64, np.int32))


# ---------------------------------------------------------------------------
# Distances


def test_ulp_distance_counts_representable_values() -> None:
    x = f32(1.0, 0.0, -0.0, np.nan, np.nan, 3.4028235e38, -1e-45)
    y = f32(1.0, -0.0, 1e-45, np.nan, 1.0, np.inf, 1e-45)
    np.testing.assert_array_equal(ulp_distance(x, y), [0, 0, 1, 0, np.inf, 1, 2])
    np.testing.assert_array_equal(ulp_distance(up(f32(1.5), 3), f32(1.5)), 3)
    np.testing.assert_array_equal(ulp_distance(np.array([5, -3], np.int8), np.array([2, 4], np.int8)), [3, 7])
    assert ulp_distance(np.array(np.nan), np.array(1e300)).item() == np.inf  # rank 0, float64: Python-int sized


# ---------------------------------------------------------------------------
# compare_primitive, rule by rule


def judge(name: str, operands: list[Any], actual: Any, expected: Any, params: dict[str, Any] | None = None) -> Any:
    return compare_primitive(name, params or {}, operands, [np.asarray(actual)], [np.asarray(expected)])


def test_exact_primitives_reject_one_ulp() -> None:
    x = f32(2.0, 3.0)
    got = judge("sqrt", [x], up(np.sqrt(x), 1), np.sqrt(x))
    assert not got.ok and got.worst_ulps == 1
    assert "output 0 (f32[2]): 2 of 2 elements disagree; at index [0]" in got.detail and "allowed exact" in got.detail


def test_listed_primitives_accept_their_ulps_and_no_more() -> None:
    x = f32(0.5, 1.0)
    want = np.sin(x)
    assert judge("sin", [x], up(want, 2), want).ok
    got = judge("sin", [x], up(want, 3), want)
    assert not got.ok and "3 ulps apart, allowed 2 ulps" in got.detail


def test_nan_must_meet_nan_and_zero_signs_count() -> None:
    assert judge("add", [f32(np.nan)], f32(np.nan), f32(np.nan)).ok
    assert not judge("add", [f32(1.0)], f32(np.nan), f32(1.0)).ok
    assert not judge("neg", [f32(0.0)], f32(0.0), f32(-0.0)).ok


def test_integers_and_booleans_are_exact() -> None:
    got = judge("add", [np.int32(1)], np.array([1, 2], np.int32), np.array([1, 3], np.int32))
    assert not got.ok and got.worst_ulps == 1
    assert not judge("lt", [f32(1.0)], np.array([True]), np.array([False])).ok


def test_a_backend_may_flush_subnormals_except_where_it_moves_bits() -> None:
    sub = f32(1e-40)
    # XLA on CPU: exp of a subnormal operand is exp(0); a subnormal result may be 0.
    assert compare_primitive("mul", {}, [sub, f32(1.0)], [f32(0.0)], [sub]).ok
    reference = lambda ops: [np.asarray(ops[0] != 0)]  # noqa: E731  (a comparison with zero)
    assert compare_primitive("ne", {}, [sub, f32(0.0)], [np.array([False])], [np.array([True])], reference).ok
    assert not compare_primitive("ne", {}, [sub, f32(0.0)], [np.array([False])], [np.array([True])]).ok
    assert not judge("neg", [sub], f32(-0.0), -sub)  .ok  # neg only flips a bit
    assert not judge("mul", [np.array([1e-5], np.float16)], np.array([0.0], np.float16), np.array([6e-8], np.float16)).ok


def test_a_flushed_decomposition_matches_its_vectors_signs_to_the_flushed_reference() -> None:
    # svd of [[0, 0, tiny]]: the reference picks the vector of the tiny element;
    # XLA reads the operand as zero and picks another one, with a sign of its own.
    x = np.array([[0.0, 0.0, 1e-40]], np.float32)
    params = {"full_matrices": False, "compute_uv": True, "subset_by_index": None, "algorithm": None}

    def reference(ops: list[Any]) -> list[Any]:
        u, s, vt = np.linalg.svd(ops[0], full_matrices=False)
        return [s.astype(np.float32), u.astype(np.float32), vt.astype(np.float32)]  # the primitive's order

    expected = reference([x])
    flushed = reference([np.zeros_like(x)])
    negated = [flushed[0], -flushed[1], -flushed[2]]  # the same decomposition, both vectors flipped
    assert compare_primitive("svd", params, [x], negated, expected, reference).ok
    assert not compare_primitive("svd", params, [x], negated, expected).ok  # (no reference to re-run)


def test_a_flushing_sort_may_keep_subnormals_beside_zero_in_place() -> None:
    # XLA compares -1e-44 as -0 == 0: the unstable sort leaves the pair as it is.
    x = np.array([0.0, -1e-44], np.float32)
    params = {"dimension": 0, "is_stable": False, "num_keys": 1}
    reference = lambda ops: [np.sort(ops[0], kind="stable")]  # noqa: E731
    assert compare_primitive("sort", params, [x], [x], [np.sort(x)], reference).ok
    assert not compare_primitive("sort", params, [x], [x], [np.sort(x)]).ok  # (no reference to re-run)
    y = np.array([1.0, -1e-44], np.float32)  # out of order even with the subnormal flushed
    assert not compare_primitive("sort", params, [y], [y], [np.sort(y)], reference).ok


def test_sums_may_be_reordered_within_their_bound() -> None:
    x = np.array([1e8, 1.0, -1e8, 1.0], np.float32)
    params = {"axes": (0,)}
    exact = np.float32(2.0)
    assert judge("reduce_sum", [x], np.float32(0.0), exact, params).ok  # lost 1.0s: within n * eps * sum|x|
    assert not judge("reduce_sum", [f32(1.0, 2.0)], np.float32(3.001), np.float32(3.0), params).ok


def test_a_nan_or_infinite_source_leaves_the_scatter_bound_finite() -> None:
    # Found by the deep conformance run: one NaN in select_and_scatter_add's source
    # made every element's bound NaN, so equal results "disagreed" (0 ulps apart).
    params = {"window_dimensions": (1, 2), "window_strides": (1, 1), "padding": ((0, 0), (0, 0))}
    operand = np.array([[1.0, 2.0, 0.5]], np.float32)
    for bad in (np.nan, np.inf):
        source = np.array([[0.25, bad]], np.float32)
        want = np.array([[0.0, 0.25 + bad, 0.0]], np.float32)
        assert judge("select_and_scatter_add", [source, operand], want, want, params).ok
        off = want.copy()
        off[0, 0] = 1.0  # and a wrong finite element still fails (an infinite bound would let it pass)
        assert not judge("select_and_scatter_add", [source, operand], off, want, params).ok


def test_an_infinite_kernel_over_the_padding_leaves_the_conv_bound_finite() -> None:
    # Found by the deep conformance run: |inf| * the padding's 0 made the bound NaN,
    # so equal finite results "disagreed" (0 ulps apart).
    params = {
        "dimension_numbers": ((0, 1, 2), (0, 1, 2), (0, 1, 2)), "window_strides": (1,), "padding": ((0, 1),),
        "lhs_dilation": (1,), "rhs_dilation": (1,), "feature_group_count": 1, "batch_group_count": 1,
    }  # fmt: skip
    lhs, rhs = np.array([[[0.5, 2.0]]], np.float32), np.array([[[-2.0, np.inf]]], np.float32)
    want = np.array([[[np.inf, -4.0]]], np.float32)  # 0.5*-2 + 2*inf, then 2*-2 + (padding: nothing)
    assert judge("conv_general_dilated", [lhs, rhs], want, want, params).ok
    assert not judge("conv_general_dilated", [lhs, rhs], want + np.float32(0.01), want, params).ok


def test_batch_groups_may_leak_a_kernel_infinity_as_nan_into_other_groups() -> None:
    # Found by the deep conformance run: XLA on CPU (and JAX) gives NaN in batch
    # groups that never read the kernel's -inf; the spec leaves those unspecified.
    params = {
        "dimension_numbers": ((0, 1, 2), (0, 1, 2), (0, 1, 2)), "window_strides": (1,), "padding": ((0, 0),),
        "lhs_dilation": (1,), "rhs_dilation": (1,), "feature_group_count": 1, "batch_group_count": 2,
    }  # fmt: skip
    lhs = np.array([[[1.0]], [[2.0]]], np.float32)
    want = np.array([[[3.0], [-np.inf]]], np.float32)  # group 0: 1 * 3; group 1: 2 * -inf
    leaked = np.array([[[np.nan], [-np.inf]]], np.float32)
    assert judge("conv_general_dilated", [lhs, np.array([[[3.0]], [[-np.inf]]], np.float32)], leaked, want, params).ok
    finite = np.array([[[3.0]], [[-1.0]]], np.float32)  # a finite kernel: no excuse
    assert not judge("conv_general_dilated", [lhs, finite], leaked, np.array([[[3.0], [-2.0]]], np.float32), params).ok


def test_an_infinite_kernel_over_the_padding_may_give_nan() -> None:
    # Found by the deep conformance run: XLA does a 1x1 convolution as a dot over
    # the materialised padding, 0 * -inf = NaN, where other convolutions skip it.
    params = {
        "dimension_numbers": ((0, 1, 2), (0, 1, 2), (0, 1, 2)), "window_strides": (1,), "padding": ((0, 1),),
        "lhs_dilation": (1,), "rhs_dilation": (1,), "feature_group_count": 1, "batch_group_count": 1,
    }  # fmt: skip
    lhs = np.array([[[1.0]]], np.float32)
    want = np.array([[[-np.inf, 0.0]]], np.float32)
    got = np.array([[[-np.inf, np.nan]]], np.float32)
    assert judge("conv_general_dilated", [lhs, np.array([[[-np.inf]]], np.float32)], got, want, params).ok
    unpadded = dict(params, padding=((0, 0),))  # no fill: nothing excuses a NaN
    nan = np.array([[[np.nan]]], np.float32)
    assert not judge("conv_general_dilated", [lhs, np.array([[[-np.inf]]], np.float32)], nan, want[..., :1], unpadded).ok


def test_dot_general_bound_follows_the_contraction() -> None:
    lhs, rhs = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    params = {"dimension_numbers": (((1,), (0,)), ((), ()))}
    want = lhs @ rhs
    assert judge("dot_general", [lhs, rhs], up(want, 1), want, params).ok
    assert not judge("dot_general", [lhs, rhs], want + 0.01, want, params).ok


def test_broadcast_division_gets_one_ulp() -> None:
    x, y = f32(1.5, 3.0), np.float32(0.875)
    want = x / y
    assert judge("div", [x, np.asarray(y)], up(want, 1), want).ok
    assert not judge("div", [x, np.full(2, y, np.float32)], up(want, 1), want).ok


def test_linalg_results_agree_normwise() -> None:
    want = np.array([[2.0, 0.0], [1.0, 3.0]], np.float32)
    assert judge("cholesky", [want], want + 1e-4, want).ok  # 1e-4 * 3 allowed
    assert not judge("cholesky", [want], want + 1e-3, want).ok


def test_type_mismatches_fail_with_both_types() -> None:
    got = compare_primitive("add", {}, [], [np.zeros(2, np.float32)], [np.zeros(3, np.float32)])
    assert not got.ok and got.detail == "output 0 is float32[2], expected float32[3]"


# ---------------------------------------------------------------------------
# compare_program


def test_programs_agree_normwise_by_dtype() -> None:
    want = f32(1.0, 1e-6, -100.0)
    assert compare_program([want + 1e-3], [want]).ok  # 2e-5 * (|e| + 100)
    assert not compare_program([want + 1e-2], [want]).ok
    assert compare_program([f32(np.inf, np.nan)], [f32(np.inf, np.nan)]).ok
    assert not compare_program([f32(np.inf)], [f32(3.4e38)]).ok
    assert not compare_program([np.array([1, 2])], [np.array([1, 3])]).ok
    assert compare_program([want + 0.5], [want], rtol=1e-2).ok


def test_cumulative_sums_and_products_are_bounded_per_prefix() -> None:
    # A reverse scan as XLA computes it, each suffix in index order (the reference starts from the end).
    x = f32(0.82177013, -1.3812797, -2.754159)
    want = np.cumsum(x[::-1])[::-1]
    as_xla = f32(*[np.sum(x[i:], dtype=np.float32) if i else (x[0] + x[1]) + x[2] for i in range(3)])
    params = {"axis": 0, "reverse": True}
    assert ulp_distance(as_xla, want).max() >= 1
    assert judge("cumsum", [x], as_xla, want, params).ok
    assert not judge("cumsum", [x], up(want, 64), want, params).ok
    p = f32(0.51652765, -1.3132702, -1.4127556)
    want = np.cumprod(p[::-1])[::-1]
    assert judge("cumprod", [p], up(want, 2), want, params).ok
    assert not judge("cumprod", [p], up(want, 64), want, params).ok
    # The bound counts the operands of each prefix: an error the last of 200 may have, the first may not.
    ones = np.ones(200, np.float32)
    want, forward = np.cumsum(ones), {"axis": 0, "reverse": False}
    off_last, off_first = want.copy(), want.copy()
    off_last[-1] += 2e-3  # within 200 eps(float32) * 200
    off_first[0] += 1e-4
    assert judge("cumsum", [ones], off_last, want, forward).ok
    assert not judge("cumsum", [ones], off_first, want, forward).ok


def test_a_sum_that_may_overflow_on_the_way_is_unspecified() -> None:
    # --examples 50 found dot_general 1 x 3 contractions of [0.944598, 0.373594, -2.0996263] with three
    # -max(float32): XLA gives -inf, the reference inf; the exact value is finite (2.6e38), and which
    # partial sum overflows first depends on the order, so no order's answer is the right one.
    big = float(np.finfo(np.float32).max)
    lhs, rhs = f32(0.94459808, 0.37359399, -2.0996263), f32(-big, -big, -big)
    dot = {"dimension_numbers": (((0,), (0,)), ((), ()))}
    assert judge("dot_general", [lhs, rhs], np.float32(-np.inf), np.float32(np.inf), dot).ok
    assert judge("dot_general", [lhs, rhs], np.float32(np.nan), np.float32(np.inf), dot).ok
    # An infinity given as an operand propagates the same in every order: still exact.
    lhs, rhs = f32(np.inf, 1.0, 2.0), f32(1.0, -1.0, 1.0)
    assert not judge("dot_general", [lhs, rhs], np.float32(-np.inf), np.float32(np.inf), dot).ok
    assert not judge("dot_general", [lhs, rhs], np.float32(np.nan), np.float32(np.inf), dot).ok
    # Sums, cumulative sums and products likewise: only where some order can overflow.
    axes = {"axes": (0,)}
    x = f32(big, big, -big)
    assert judge("reduce_sum", [x], np.float32(big), np.float32(np.inf), axes).ok
    assert not judge("reduce_sum", [f32(1.0, np.inf)], np.float32(-np.inf), np.float32(np.inf), axes).ok
    forward = {"axis": 0, "reverse": False}
    got, want = f32(big, np.inf, big), f32(big, np.inf, np.inf)
    assert judge("cumsum", [x], got, want, forward).ok  # the third: (big + big) - big or big + (big - big)
    assert not judge("cumsum", [x], f32(np.inf, np.inf, big), want, forward).ok  # the first has one term
    p = f32(1e30, 1e30, 1e-30)
    assert judge("reduce_prod", [p], np.float32(1e30), np.float32(np.inf), axes).ok
    assert judge("cumprod", [p], f32(1e30, np.inf, 1e30), f32(1e30, np.inf, np.inf), forward).ok
    assert not judge("reduce_prod", [f32(2.0, 3.0)], np.float32(np.inf), np.float32(6.0), axes).ok


def test_complex_results_are_judged_part_by_part() -> None:
    c = np.complex64
    nan_re = np.array([complex(np.nan, 0.0)], c)
    assert compare_primitive("conj", {}, [f32(np.nan)], [nan_re], [nan_re.copy()]).ok
    assert compare_program([nan_re], [nan_re.copy()]).ok
    # An exact primitive: one ulp in the imaginary part is a disagreement, and the message says where.
    one = np.array([complex(1.0, 2.0)], c)
    off = np.array([complex(1.0, float(up(f32(2.0), 1)[0]))], c)
    got = compare_primitive("conj", {}, [one], [off], [one])
    assert not got.ok and "output 0 (c64[1]), imaginary part" in got.detail, got.detail
    # A NaN part against a number is still a disagreement.
    assert not compare_primitive("conj", {}, [one], [nan_re], [one]).ok
    # A listed primitive keeps its ulps on each part (mul: 0 in float32, so exact).
    assert compare_primitive("mul", {}, [one, one], [one * one], [one * one]).ok
