"""The numerical jnp functions of issue 21 (pad, quantiles, cov, gradient, interp,
polynomials, windows, frexp/ldexp/..., i0, histogramdd) against real JAX 0.10.2.

Every case runs the same program on JAX and on minijax: the leaves must agree in
shape, dtype, weak type and value (float32 tolerance); the gradient cases compare
``grad``; the error cases compare the exception type and message. Hypothesis
draws shapes and options for pad and the quantile family. Run in the oracle venv:
    /work/venv-oracle/bin/python -m pytest -q -m oracle tests/test_jnp_math_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy  # noqa: E402, F811
import jax.scipy.integrate  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402
import minijax.scipy.integrate  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

JNP: Any = jax.numpy
MNP: Any = minijax.numpy

rng = np.random.default_rng(0)
F = rng.standard_normal((4, 5)).astype(np.float32)
V = rng.standard_normal(7).astype(np.float32)
INTS = rng.integers(-5, 9, (4, 5)).astype(np.int32)
NANS = F.copy()
NANS[0, 1] = NANS[2, 3] = NANS[2, 4] = np.nan
NANS[3] = np.nan
INFS = np.array([1.0, np.nan, np.inf, -np.inf, -2.0], np.float32)
XP = np.array([0.0, 1.0, 2.5, 4.0, 7.0], np.float32)
FP = np.array([1.0, -1.0, 3.0, 0.5, 2.0], np.float32)
POSF = np.abs(F) + 0.1
Q = np.array([0.0, 0.1, 0.25, 0.5, 0.77, 1.0], np.float32)
SAMPLE = rng.standard_normal((50, 3)).astype(np.float32)
BITS = np.array([0.0, -0.0, 1.0, -3.5, 1e-40, -1e-42, 3e38, np.inf, -np.inf, np.nan, 0.1], np.float32)

Case = tuple[Callable[[Any], Any], tuple[Any, ...]]
METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile_program(fname: str, axis: int, method: str) -> Callable[[Any], Any]:
    return lambda m: lambda x, q: getattr(m, fname)(x, q, axis=axis, method=method)


def _window_program(name: str, n: int) -> Callable[[Any], Any]:
    return lambda m: lambda: getattr(m, name)(n)


def _pad_program(width: Any, mode: str) -> Callable[[Any], Any]:
    return lambda m: lambda x: m.pad(x, width, mode=mode)


CASES: dict[str, Case] = {
    # nan_to_num / nanprod / average / cov / corrcoef
    "nan_to_num": (lambda m: m.nan_to_num, (INFS,)),
    "nan_to_num_values": (lambda m: lambda x: m.nan_to_num(x, nan=7.0, posinf=9.0, neginf=-9.0), (INFS,)),
    "nan_to_num_int": (lambda m: m.nan_to_num, (INTS,)),
    "nan_to_num_weak": (lambda m: m.nan_to_num, (2.5,)),
    "nanprod": (lambda m: lambda x: m.nanprod(x, axis=1), (NANS,)),
    "nanprod_keepdims_int": (lambda m: lambda x: m.nanprod(x, axis=0, keepdims=True), (INTS,)),
    "nanprod_where_initial": (lambda m: lambda x: m.nanprod(x, axis=1, where=x > 0, initial=2.0), (NANS,)),
    "average": (lambda m: m.average, (F,)),
    "average_axis_weights": (lambda m: lambda x, w: m.average(x, axis=1, weights=w), (F, POSF[0])),
    "average_axes_weights": (lambda m: lambda x, w: m.average(x, axis=(1, 0), weights=w), (F, POSF.T)),
    "average_returned": (lambda m: lambda x, w: m.average(x, axis=0, weights=w, returned=True), (F, POSF)),
    "average_returned_noweights": (lambda m: lambda x: m.average(x, axis=1, returned=True, keepdims=True), (INTS,)),
    "cov": (lambda m: m.cov, (F,)),
    "cov_y_rowvar": (lambda m: lambda x, y: m.cov(x, y, rowvar=False), (F, F[:, :2])),
    "cov_bias_ddof": (lambda m: lambda x: m.cov(x, bias=True), (F,)),
    "cov_ddof": (lambda m: lambda x: m.cov(x, ddof=2), (F,)),
    "cov_fweights": (lambda m: lambda x, f: m.cov(x, fweights=f), (F, np.array([1, 2, 0, 3, 1], np.int32))),
    "cov_aweights": (lambda m: lambda x, a: m.cov(x, aweights=a), (F, POSF[0])),
    "cov_both": (lambda m: lambda x, f, a: m.cov(x, fweights=f, aweights=a),
                 (F, np.array([1, 2, 1, 3, 1], np.int32), POSF[1])),
    "cov_1d_int": (lambda m: m.cov, (INTS[0],)),
    "corrcoef": (lambda m: m.corrcoef, (F,)),
    "corrcoef_xy": (lambda m: m.corrcoef, (V, V[::-1])),
    "corrcoef_1d": (lambda m: m.corrcoef, (V,)),
    # diff / ediff1d / gradient / trapezoid / unwrap / interp
    "diff": (lambda m: m.diff, (F,)),
    "diff_n2_axis0": (lambda m: lambda x: m.diff(x, n=2, axis=0), (F,)),
    "diff_prepend_append": (lambda m: lambda x: m.diff(x, prepend=0.5, append=x[:, :2]), (F,)),
    "diff_bool": (lambda m: lambda x: m.diff(x > 0), (F,)),
    "diff_int8": (lambda m: m.diff, (INTS.astype(np.int8),)),
    "diff_n0": (lambda m: lambda x: m.diff(x, n=0), (F,)),
    "ediff1d": (lambda m: m.ediff1d, (F,)),
    "ediff1d_ends": (lambda m: lambda x: m.ediff1d(x, to_end=np.array([9, 8]), to_begin=-1.5), (INTS,)),
    "gradient": (lambda m: m.gradient, (F,)),
    "gradient_axis_spacing": (lambda m: lambda x: m.gradient(x, 0.5, axis=1), (F,)),
    "gradient_coords": (lambda m: lambda x, c: m.gradient(x, c, axis=-1), (F, np.cumsum(POSF[0]))),
    "gradient_two_spacings": (lambda m: lambda x: m.gradient(x, 2.0, np.arange(5.0) ** 2), (F,)),
    "gradient_int": (lambda m: m.gradient, (INTS,)),
    "trapezoid": (lambda m: m.trapezoid, (F,)),
    "trapezoid_x": (lambda m: lambda y, x: m.trapezoid(y, x), (F, np.cumsum(POSF[0]))),
    "trapezoid_x2d_axis0": (lambda m: lambda y, x: m.trapezoid(y, x, axis=0), (F, np.cumsum(POSF, axis=0))),
    "trapezoid_dx": (lambda m: lambda y: m.trapezoid(y, dx=0.3, axis=0), (F,)),
    "trapezoid_int": (lambda m: m.trapezoid, (INTS,)),
    "unwrap": (lambda m: m.unwrap, (np.cumsum(F * 3, axis=1),)),
    "unwrap_period_axis": (lambda m: lambda p: m.unwrap(p, period=4.0, axis=0), (np.cumsum(F * 3, axis=0),)),
    "unwrap_discont": (lambda m: lambda p: m.unwrap(p, discont=4.0), (np.cumsum(F * 3, axis=1),)),
    "unwrap_int": (lambda m: lambda p: m.unwrap(p, period=6), (np.array([0, 5, 9, 2, 14], np.int32),)),
    "interp": (lambda m: m.interp, (np.linspace(-1, 8, 13).astype(np.float32), XP, FP)),
    "interp_left_right": (lambda m: lambda x, xp, fp: m.interp(x, xp, fp, left=-5.0, right=5.0),
                          (np.linspace(-1, 8, 13).astype(np.float32), XP, FP)),
    "interp_extrapolate": (lambda m: lambda x, xp, fp: m.interp(x, xp, fp, left="extrapolate", right="extrapolate"),
                           (np.linspace(-1, 8, 13).astype(np.float32), XP, FP)),
    "interp_period": (lambda m: lambda x, xp, fp: m.interp(x, xp, fp, period=5.0),
                      (np.linspace(-6, 8, 13).astype(np.float32), XP, FP)),
    "interp_int": (lambda m: m.interp, (np.array([1, 2, 3]), np.array([0, 2, 4]), np.array([0, 10, 5]))),
    "scipy_trapezoid": (lambda m: m.trapezoid, (F,)),
    # order statistics
    "median": (lambda m: m.median, (F,)),
    "median_axis_keepdims": (lambda m: lambda x: m.median(x, axis=0, keepdims=True), (F,)),
    "median_axes": (lambda m: lambda x: m.median(x, axis=(0, 2)), (rng.standard_normal((3, 4, 5)).astype(np.float32),)),
    "median_axes_keepdims": (lambda m: lambda x: m.median(x, axis=(2, 0), keepdims=True),
                             (rng.standard_normal((3, 4, 5)).astype(np.float32),)),
    "median_int": (lambda m: m.median, (INTS,)),
    "median_nan": (lambda m: lambda x: m.median(x, axis=1), (NANS,)),
    "nanmedian": (lambda m: lambda x: m.nanmedian(x, axis=1), (NANS,)),
    "nanmedian_all": (lambda m: m.nanmedian, (NANS,)),
    "percentile": (lambda m: lambda x: m.percentile(x, 30.0, axis=1), (F,)),
    "percentile_vec_keepdims": (lambda m: lambda x: m.percentile(x, np.array([5, 50, 95]), axis=1, keepdims=True), (F,)),
    "nanpercentile": (lambda m: lambda x: m.nanpercentile(x, np.array([5.0, 50, 95]), axis=1), (NANS,)),
    "i0_bool": (lambda m: m.i0, (np.array([True, False]),)),
    "quantile_bf16": (lambda m: lambda x: m.quantile(x, 0.3), (F.astype(jax.numpy.bfloat16),)),
    **{f"quantile_{meth}": (_quantile_program("quantile", 1, meth), (F, Q)) for meth in METHODS},
    **{f"nanquantile_{meth}": (_quantile_program("nanquantile", 0, meth), (NANS, Q)) for meth in METHODS},
    "quantile_weights": (lambda m: lambda x, w: m.quantile(x, 0.4, axis=1, method="inverted_cdf", weights=w),
                         (F, POSF)),
    "quantile_weights_axis": (lambda m: lambda x, w: m.quantile(x, np.array([0.2, 0.9]), axis=1, method="inverted_cdf",
                                                                weights=w, keepdims=True), (F, POSF[0])),
    "nanquantile_weights": (lambda m: lambda x, w: m.nanquantile(x, 0.5, axis=1, method="inverted_cdf", weights=w),
                            (NANS, POSF)),
    # histograms
    "histogramdd": (lambda m: m.histogramdd, (SAMPLE,)),
    "histogramdd_bins_range_weights": (
        lambda m: lambda s, w: m.histogramdd(s, bins=[3, 4, 2], range=[(-1, 1), None, (0, 2)], weights=w),
        (SAMPLE, np.abs(SAMPLE[:, 0]))),
    "histogramdd_density": (lambda m: lambda s: m.histogramdd(s, bins=4, density=True), (SAMPLE,)),
    "histogramdd_edges": (lambda m: lambda s: m.histogramdd(s, bins=[np.array([-2.0, 0, 1, 3])] * 3), (SAMPLE,)),
    "histogram2d": (lambda m: m.histogram2d, (SAMPLE[:, 0], SAMPLE[:, 1])),
    "histogram2d_bins": (lambda m: lambda x, y: m.histogram2d(x, y, bins=(3, 5), density=True),
                         (SAMPLE[:, 0], SAMPLE[:, 1])),
    "histogram2d_edge_array": (lambda m: lambda x, y: m.histogram2d(x, y, bins=np.array([-2.0, -1, 0, 1, 2])),
                               (SAMPLE[:, 0], SAMPLE[:, 1])),
    # float decomposition, gcd/lcm, i0
    "frexp": (lambda m: m.frexp, (BITS,)),
    "frexp_int": (lambda m: m.frexp, (INTS,)),
    "frexp_f16": (lambda m: m.frexp, (np.array([0.0, 1.5, -6e-6, 6e-8, 300.0, np.inf], np.float16),)),
    "ldexp": (lambda m: m.ldexp, (BITS, np.arange(11, dtype=np.int32) - 5)),
    "ldexp_overflow": (lambda m: m.ldexp, (np.array([1e-30, 0.75, 3.0], np.float32), np.array([200, 128, -150]))),
    "ldexp_int": (lambda m: m.ldexp, (INTS, np.int32(3))),
    "modf": (lambda m: m.modf, (np.array([-2.5, -0.5, 0.0, 1.75, np.inf, -np.inf, np.nan], np.float32),)),
    "modf_int": (lambda m: m.modf, (INTS,)),
    "spacing": (lambda m: m.spacing, (BITS,)),
    "spacing_f16": (lambda m: m.spacing, (np.array([0.0, -1.0, 2.0, 6e-8], np.float16),)),
    "spacing_weak": (lambda m: m.spacing, (1.0,)),
    "gcd": (lambda m: m.gcd, (INTS, INTS.T[:1].T * 3)),
    "gcd_scalar_weak": (lambda m: m.gcd, (12, 18)),
    "gcd_uint8": (lambda m: m.gcd, (np.array([0, 12, 255, 7], np.uint8), np.array([0, 8, 15, 0], np.uint8))),
    "lcm": (lambda m: m.lcm, (INTS, np.int32(6))),
    "lcm_zero": (lambda m: m.lcm, (np.array([0, 4, -6]), np.array([5, 0, 4]))),
    "i0": (lambda m: m.i0, (np.linspace(-12, 12, 25).astype(np.float32),)),
    "i0_int": (lambda m: m.i0, (INTS,)),
    "i0_f16": (lambda m: m.i0, (np.array([0.0, 1.0, 3.0], np.float16),)),
    # windows
    **{f"{w}_{n}": (_window_program(w, n), ()) for w in ("bartlett", "blackman", "hamming", "hanning")
       for n in (0, 1, 2, 7, 10)},
    "kaiser": (lambda m: lambda: m.kaiser(9, 4.0), ()),
    "kaiser_1": (lambda m: lambda: m.kaiser(1, 4.0), ()),
    # polynomials
    "poly": (lambda m: m.poly, (np.array([1.0, -2.0, 3.5], np.float32),)),
    "poly_int": (lambda m: m.poly, (np.array([1, 2]),)),
    "poly_empty": (lambda m: m.poly, (np.zeros(0, np.float32),)),
    "polyadd": (lambda m: m.polyadd, (V[:3], V)),
    "polyadd_int": (lambda m: m.polyadd, (INTS[0], INTS[1, :2])),
    "polysub": (lambda m: m.polysub, (V, V[:2])),
    "polymul": (lambda m: m.polymul, (V[:3], V[:4])),
    "polymul_trim": (lambda m: lambda a, b: m.polymul(a, b, trim_leading_zeros=True),
                     (np.array([0.0, 0.0, 1.0, 2.0], np.float32), np.array([0, 3, 1]))),
    "polydiv": (lambda m: m.polydiv, (V, np.array([2.0, 1.0, -1.0], np.float32))),
    "polydiv_trim": (lambda m: lambda u, v: m.polydiv(u, v, trim_leading_zeros=True),
                     (np.array([1.0, 3.0, 3.0, 1.0], np.float32), np.array([1.0, 1.0], np.float32))),
    "polyder": (lambda m: m.polyder, (V,)),
    "polyder_m3": (lambda m: lambda p: m.polyder(p, 3), (V,)),
    "polyder_int": (lambda m: m.polyder, (INTS[0],)),
    "polyint": (lambda m: m.polyint, (V,)),
    "polyint_m2_k": (lambda m: lambda p: m.polyint(p, m=2, k=np.array([1.0, -2.0])), (V,)),
    "polyint_k_scalar": (lambda m: lambda p: m.polyint(p, 3, 2.5), (INTS[0],)),
    "polyfit": (lambda m: lambda x, y: m.polyfit(x, y, 2), (np.linspace(0, 1, 9).astype(np.float32),
                                                            np.linspace(0, 1, 9).astype(np.float32) ** 2 - 1)),
    "polyfit_w_2d": (lambda m: lambda x, y, w: m.polyfit(x, y, 1, w=w),
                     (np.arange(6.0, dtype=np.float32), F.T[:, :2].repeat(2, 0)[:6], POSF[0, :3].repeat(2))),
    "polyfit_full": (lambda m: lambda x, y: m.polyfit(x, y, 2, full=True)[:2] + m.polyfit(x, y, 2, full=True)[3:],
                     (np.arange(7.0, dtype=np.float32), V)),
    "polyfit_cov": (lambda m: lambda x, y: m.polyfit(x, y, 1, cov=True), (np.arange(7.0, dtype=np.float32), V)),
    "polyfit_cov_unscaled": (lambda m: lambda x, y: m.polyfit(x, y, 2, cov="unscaled"),
                             (np.arange(7.0, dtype=np.float32), V)),
}

# Functions that live only in jax.scipy.integrate.
SCIPY = {"scipy_trapezoid"}

PAD_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum", "reflect", "symmetric",
             "wrap", "empty")


def _pad_cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    A = rng.standard_normal((3, 4)).astype(np.float32)  # noqa: N806
    for mode in PAD_MODES:
        cases[f"pad_{mode}"] = (_pad_program(((2, 5), (6, 1)), mode), (A,))
        cases[f"pad_{mode}_int"] = (_pad_program(3, mode), (INTS[:3, :2],))
    cases["pad_constant_values"] = (lambda m: lambda x: m.pad(x, (1, 2), constant_values=((1, 2), (3, 4))), (A,))
    cases["pad_constant_one_pair"] = (lambda m: lambda x: m.pad(x, [[1, 2]], constant_values=(7, 8)), (A,))
    cases["pad_constant_weak"] = (lambda m: lambda x: m.pad(x, 1, constant_values=2.5), (2.0,))
    cases["pad_constant_int_with_float"] = (lambda m: lambda x: m.pad(x, 1, constant_values=2.7), (INTS,))
    cases["pad_reflect_odd"] = (lambda m: lambda x: m.pad(x, ((7, 2), (0, 9)), mode="reflect", reflect_type="odd"), (A,))
    cases["pad_symmetric_odd"] = (lambda m: lambda x: m.pad(x, 9, mode="symmetric", reflect_type="odd"), (A,))
    cases["pad_reflect_size1"] = (lambda m: lambda x: m.pad(x, 3, mode="reflect"), (A[:1],))
    cases["pad_reflect_odd_size1"] = (lambda m: lambda x: m.pad(x, 3, mode="reflect", reflect_type="odd"), (A[:1],))
    cases["pad_stat_length"] = (lambda m: lambda x: m.pad(x, (2, 3), mode="mean", stat_length=((1, 2), (3, 9))), (A,))
    cases["pad_median_stat_length_int"] = (lambda m: lambda x: m.pad(x, 2, mode="median", stat_length=2), (INTS,))
    cases["pad_maximum_stat_length"] = (lambda m: lambda x: m.pad(x, 2, mode="maximum", stat_length=(1,)), (A,))
    cases["pad_linear_ramp_end_values"] = (lambda m: lambda x: m.pad(x, ((2, 3), (1, 4)), mode="linear_ramp",
                                                                      end_values=((1, -1), (5, 2))), (A,))
    cases["pad_linear_ramp_int"] = (lambda m: lambda x: m.pad(x, 4, mode="linear_ramp", end_values=20), (INTS,))
    cases["pad_symmetric_short_axis"] = (lambda m: lambda x: m.pad(x, ((1, 4),), mode="symmetric"), (V[:2],))
    cases["pad_reflect_short_axis_odd"] = (lambda m: lambda x: m.pad(x, ((5, 4),), mode="reflect", reflect_type="odd"),
                                           (V[:3],))
    cases["pad_wrap_long"] = (lambda m: lambda x: m.pad(x, ((7, 10), (1, 0)), mode="wrap"), (A,))
    cases["pad_empty_axis_constant"] = (lambda m: lambda x: m.pad(x, 2), (np.zeros((0, 2), np.float32),))
    cases["pad_scalar"] = (lambda m: lambda x: m.pad(x, 3, mode="edge"), (np.float32(2.0),))
    cases["pad_bool"] = (lambda m: lambda x: m.pad(x, 1, constant_values=True), (A > 0,))
    cases["pad_array_width"] = (lambda m: lambda x: m.pad(x, np.array([[1, 0], [2, 3]])), (A,))

    def cumulative(vector: Any, pad_width: Any, iaxis: int, kwargs: dict[str, Any]) -> Any:
        lo, hi = pad_width
        base = vector[lo:vector.shape[0] - hi] if hi else vector[lo:]
        scale = kwargs.get("scale", 1.0)
        return vector.at[:lo].set(base[0] * scale).at[vector.shape[0] - hi:].set(base[-1] * scale + iaxis)

    cases["pad_callable"] = (lambda m: lambda x: m.pad(x, ((1, 2), (3, 1)), mode=cumulative, scale=-2.0), (A,))
    return cases


CASES.update(_pad_cases())


def _fn(lib: Any, name: str) -> Callable[..., Any]:
    program, _ = CASES[name]
    if name in SCIPY:
        return program(jax.scipy.integrate if lib is JNP else minijax.scipy.integrate)  # type: ignore[no-any-return]
    return program(lib)  # type: ignore[no-any-return]


def _compare(ours: Any, theirs: Any, rtol: float = 2e-5, atol: float = 2e-6) -> None:
    ours_leaves = minijax.tree_util.tree_leaves(ours)
    their_leaves = jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(their_leaves), (ours, theirs)
    for o, t in zip(ours_leaves, their_leaves):
        assert (tuple(np.shape(o)), np.dtype(o.dtype)) == (tuple(np.shape(t)), np.dtype(t.dtype)), (o, t)
        assert bool(getattr(o, "weak_type", False)) == bool(getattr(t, "weak_type", False)), (o, t)
        want = np.asarray(t).astype(np.float64) if np.dtype(t.dtype).kind == "V" or t.dtype == jax.numpy.bfloat16 \
            else np.asarray(t)
        got = np.asarray(o).astype(want.dtype)
        tol = 1e-2 if np.dtype(t.dtype) in (np.float16, jax.numpy.bfloat16) else rtol
        np.testing.assert_allclose(got, want, rtol=tol, atol=atol if tol == rtol else tol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str) -> None:
    args = CASES[name][1]
    theirs = _fn(JNP, name)(*args)
    ours = _fn(MNP, name)(*args)
    _compare(ours, theirs)


@pytest.mark.parametrize("name", ["median_axes", "percentile_vec_keepdims", "nanquantile_linear", "cov_aweights",
                                  "gradient_coords", "interp_period", "pad_reflect_odd", "pad_callable", "polyfit",
                                  "histogramdd_density", "frexp", "i0", "unwrap"])
def test_matches_jax_under_jit(name: str) -> None:
    args = CASES[name][1]
    _compare(minijax.jit(_fn(MNP, name))(*args), jax.jit(_fn(JNP, name))(*args))


def _sum_of(lib: Any, fun: Callable[..., Any]) -> Callable[..., Any]:
    def total(*args: Any) -> Any:
        leaves = (minijax.tree_util if lib is MNP else jax.tree_util).tree_leaves(fun(*args))
        return sum(lib.sum(leaf * (k + 1)) for k, leaf in enumerate(leaves) if lib.issubdtype(leaf.dtype, lib.floating))
    return total


GRAD_CASES = ["median_axes", "percentile", "nanmedian", "quantile_linear", "quantile_midpoint", "average_axis_weights",
              "cov_aweights", "corrcoef", "gradient_coords", "trapezoid_x", "interp", "interp_period", "unwrap",
              "pad_linear_ramp", "pad_reflect_odd", "pad_mean", "pad_median", "pad_wrap", "pad_edge", "frexp", "ldexp",
              "modf", "i0", "polyfit", "polyint_m2_k", "polydiv", "poly", "nan_to_num"]


@pytest.mark.parametrize("name", GRAD_CASES)
def test_grad_matches_jax(name: str) -> None:
    args = CASES[name][1]
    theirs = jax.grad(_sum_of(JNP, _fn(JNP, name)))(*args)
    ours = minijax.grad(_sum_of(MNP, _fn(MNP, name)))(*args)
    _compare(ours, theirs, rtol=2e-4, atol=2e-5)


def test_i0_grad_at_zero_and_second_order() -> None:
    xs = np.array([0.0, 0.5, -3.0, 9.0], np.float32)
    theirs = jax.vmap(jax.grad(jax.grad(jax.numpy.i0)))(xs)
    ours = minijax.vmap(minijax.grad(minijax.grad(minijax.numpy.i0)))(xs)
    _compare(ours, theirs, rtol=1e-4)
    assert float(minijax.grad(minijax.numpy.i0)(0.0)) == 0.0


# ---------------------------------------------------------------------------
# Errors: the same exception type, and the same message

ERRORS: dict[str, Case] = {
    "quantile_bad_method": (lambda m: lambda x: m.quantile(x, 0.5, method="hazen"), (F,)),
    "quantile_weights_linear": (lambda m: lambda x: m.quantile(x, 0.5, weights=x), (F,)),
    "quantile_q_2d": (lambda m: lambda x: m.quantile(x, np.ones((2, 2)) / 2), (F,)),
    "quantile_out": (lambda m: lambda x: m.quantile(x, 0.5, overwrite_input=True), (F,)),
    "quantile_repeated_axis": (lambda m: lambda x: m.quantile(x, 0.5, axis=(0, 0)), (F,)),
    "quantile_weights_shape": (lambda m: lambda x: m.quantile(x, 0.5, axis=1, method="inverted_cdf",
                                                              weights=np.ones(3, np.float32)), (F,)),
    "quantile_weights_axis_none": (lambda m: lambda x: m.quantile(x, 0.5, method="inverted_cdf",
                                                                  weights=np.ones(5, np.float32)), (F,)),
    "median_list": (lambda m: lambda: m.median([1.0, 2.0]), ()),
    "pad_mode": (lambda m: lambda x: m.pad(x, 1, mode="bogus"), (F,)),
    "pad_kwarg": (lambda m: lambda x: m.pad(x, 1, mode="edge", constant_values=1), (F,)),
    "pad_negative": (lambda m: lambda x: m.pad(x, -1), (F,)),
    "pad_float_width": (lambda m: lambda x: m.pad(x, 1.5), (F,)),
    "pad_width_shape": (lambda m: lambda x: m.pad(x, ((1, 2, 3),)), (F,)),
    "pad_empty_axis": (lambda m: lambda x: m.pad(x, 1, mode="wrap"), (np.zeros((0, 2), np.float32),)),
    "pad_stat_zero": (lambda m: lambda x: m.pad(x, 1, mode="mean", stat_length=0), (F,)),
    "pad_constant_values_shape": (lambda m: lambda x: m.pad(x, 1, constant_values=np.ones(3)), (F,)),
    "diff_negative": (lambda m: lambda x: m.diff(x, n=-1), (F,)),
    "diff_scalar": (lambda m: lambda: m.diff(np.float32(1)), ()),
    "gradient_edge_order": (lambda m: lambda x: m.gradient(x, edge_order=1), (F,)),
    "gradient_small": (lambda m: lambda x: m.gradient(x), (F[:1],)),
    "gradient_spacing_count": (lambda m: lambda x: m.gradient(x, 1.0, 2.0, 3.0), (F,)),
    "gradient_spacing_len": (lambda m: lambda x: m.gradient(x, np.ones(3), axis=1), (F,)),
    "interp_shapes": (lambda m: lambda: m.interp(V, XP, FP[:3]), ()),
    "interp_left_str": (lambda m: lambda: m.interp(V, XP, FP, left="wrap"), ()),
    "cov_3d": (lambda m: lambda: m.cov(np.ones((2, 2, 2))), ()),
    "cov_dtype_int": (lambda m: lambda: m.cov(F, dtype=np.int32), ()),
    "cov_fweights_float": (lambda m: lambda: m.cov(F, fweights=np.ones(5, np.float32)), ()),
    "cov_fweights_len": (lambda m: lambda: m.cov(F, fweights=np.ones(3, np.int32)), ()),
    "average_weights_shape": (lambda m: lambda: m.average(F, weights=POSF[0]), ()),
    "average_weights_axis_shape": (lambda m: lambda: m.average(F, axis=0, weights=POSF[0]), ()),
    "ldexp_float_exponent": (lambda m: lambda: m.ldexp(F, F), ()),
    "gcd_float": (lambda m: lambda: m.gcd(F, F), ()),
    "lcm_float": (lambda m: lambda: m.lcm(F, 2), ()),
    "modf_out": (lambda m: lambda: m.modf(F, out=F), ()),
    "quantile_int_q": (lambda m: lambda x: m.quantile(x, np.array([0, 1])), (F,)),
    "corrcoef_dtype_int": (lambda m: lambda: m.corrcoef(F, dtype=np.int32), ()),
    "polyfit_deg": (lambda m: lambda: m.polyfit(V, V, -1), ()),
    "polyfit_x_2d": (lambda m: lambda: m.polyfit(F, F, 1), ()),
    "polyfit_len": (lambda m: lambda: m.polyfit(V, V[:3], 1), ()),
    "polyfit_cov_too_few": (lambda m: lambda: m.polyfit(V[:2], V[:2], 1, cov=True), ()),
    "polyder_negative": (lambda m: lambda: m.polyder(V, -1), ()),
    "polyint_negative": (lambda m: lambda: m.polyint(V, -1), ()),
    "polyint_k_len": (lambda m: lambda: m.polyint(V, 2, np.ones(3)), ()),
    "poly_3d": (lambda m: lambda: m.poly(np.ones((2, 3))), ()),
    "histogramdd_weights": (lambda m: lambda: m.histogramdd(SAMPLE, weights=np.ones(3)), ()),
    "histogramdd_bins_len": (lambda m: lambda: m.histogramdd(SAMPLE, bins=[2, 3]), ()),
    "histogramdd_range": (lambda m: lambda: m.histogramdd(SAMPLE, range=[(0, 1)]), ()),
}


def _message(e: BaseException) -> str:
    return str(e).split("\n")[0].replace("jax.numpy", "").replace("minijax.numpy", "")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name: str) -> None:
    program, args = ERRORS[name]
    with pytest.raises(Exception) as theirs:
        program(JNP)(*args)
    with pytest.raises(Exception) as ours:
        program(MNP)(*args)
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    assert _message(ours.value) == _message(theirs.value)


# ---------------------------------------------------------------------------
# Hypothesis: shapes and options


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    mode=st.sampled_from(PAD_MODES),
    widths=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=3, max_size=3),
    odd=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_pad_hypothesis(shape: tuple[int, ...], mode: str, widths: list[tuple[int, int]], odd: bool,
                        seed: int) -> None:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    kwargs: dict[str, Any] = {}
    if mode in ("reflect", "symmetric") and odd:
        kwargs["reflect_type"] = "odd"
    if mode in ("maximum", "mean", "median", "minimum") and odd:
        kwargs["stat_length"] = tuple((1 + w[1] % 3, 1 + w[0] % 2) for w in widths[:len(shape)])
    if mode == "linear_ramp" and odd:
        kwargs["end_values"] = (-1.5, 2.0)
    pw = tuple(widths[:len(shape)])
    _compare(MNP.pad(x, pw, mode=mode, **kwargs), JNP.pad(x, pw, mode=mode, **kwargs))


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
    method=st.sampled_from(("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")),
    nan=st.booleans(),
    keepdims=st.booleans(),
    axis_pick=st.integers(0, 6),
    qs=st.lists(st.floats(0, 1, width=32), min_size=0, max_size=3),
    seed=st.integers(0, 2**16),
)
def test_quantile_hypothesis(shape: tuple[int, ...], method: str, nan: bool, keepdims: bool, axis_pick: int,
                             qs: list[float], seed: int) -> None:
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape).astype(np.float32)
    x[r.random(shape) < 0.2] = np.nan
    options: list[Any] = [None, 0, -1, tuple(range(len(shape))), (0,), tuple(range(len(shape)))[::-1], None]
    axis = options[axis_pick]
    q = np.float32(0.3) if not qs else np.array(qs, np.float32)
    fname = "nanquantile" if nan else "quantile"
    ours = getattr(MNP, fname)(x, q, axis=axis, method=method, keepdims=keepdims)
    theirs = getattr(JNP, fname)(x, q, axis=axis, method=method, keepdims=keepdims)
    _compare(ours, theirs)
