"""conv_general_dilated and the lax helpers around its dimension numbers.

Runs on every backend (tests/conftest.py). Values are checked against a
direct, loop-by-loop NumPy statement of the spec's semantics
(spec/primitives/convolution.md) over a grid of configurations (1-D, 2-D,
3-D, strides, negative and positive padding, lhs/rhs dilation, feature and
batch groups, layouts); derivatives against finite differences
(``check_grads``), including second order; vmap against a loop over the
examples; the jaxpr text against a parse of itself; and every constraint's
error. The generic laws run through the sampler in test_ad_laws and
test_vmap_laws; real JAX is compared in test_convolution_oracle.py.
"""

from __future__ import annotations

import itertools
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import minijax
from minijax import lax
from minijax.jaxpr import eval_closed_jaxpr
from minijax.jaxpr_check import check_jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.primitives.convolution import conv_general_dilated_p
from minijax.test_util import check_grads

F32 = np.float32


def naive_conv(x: np.ndarray, w: np.ndarray, strides, padding, lhs_dil, rhs_dil, dn, fgc=1, bgc=1) -> np.ndarray:
    """The spec's Semantics written out with loops, in float64."""
    lhs_spec, rhs_spec, out_spec = dn
    x = np.transpose(x, lhs_spec).astype(np.float64)
    w = np.transpose(w, rhs_spec).astype(np.float64)
    nsp = x.ndim - 2

    def dilate_and_pad(x: np.ndarray) -> np.ndarray:
        # 1. dilate
        dil_shape = [0 if n == 0 else (n - 1) * d + 1 for n, d in zip(x.shape[2:], lhs_dil)]
        xd = np.zeros(x.shape[:2] + tuple(dil_shape))
        for idx in itertools.product(*(range(n) for n in x.shape[2:])):
            xd[(slice(None), slice(None), *(i * d for i, d in zip(idx, lhs_dil)))] = x[(slice(None), slice(None), *idx)]
        # 2. pad (negative pads crop)
        for i, (lo, hi) in enumerate(padding):
            axis = 2 + i
            if lo > 0:
                xd = np.concatenate([np.zeros(xd.shape[:axis] + (lo,) + xd.shape[axis + 1 :]), xd], axis)
            elif lo < 0:
                xd = np.take(xd, range(-lo, xd.shape[axis]), axis)
            if hi > 0:
                xd = np.concatenate([xd, np.zeros(xd.shape[:axis] + (hi,) + xd.shape[axis + 1 :])], axis)
            elif hi < 0:
                xd = np.take(xd, range(0, xd.shape[axis] + hi), axis)
        return xd

    xd = dilate_and_pad(x)
    real = dilate_and_pad(np.ones(x.shape)) == 1  # the taps that read an lhs element, not a hole or padding
    n, c = x.shape[:2]
    o, i_feat = w.shape[:2]
    kernel = w.shape[2:]
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, rhs_dil)]
    out_sp = [max((p - e) // s + 1, 0) for p, e, s in zip(xd.shape[2:], extent, strides)]
    out_n = n // bgc
    out = np.zeros((out_n, o, *out_sp))
    groups = max(fgc, bgc)
    o_per = o // groups
    for b, oo in itertools.product(range(out_n), range(o)):
        g = oo // o_per
        row = g * out_n + b if bgc > 1 else b
        for pos in itertools.product(*(range(m) for m in out_sp)):
            total = 0.0
            for ci in range(i_feat):
                feat = g * i_feat + ci if fgc > 1 else ci
                for k in itertools.product(*(range(m) for m in kernel)):
                    at = tuple(p * s + kk * d for p, s, kk, d in zip(pos, strides, k, rhs_dil))
                    if real[(row, feat, *at)]:  # holes and padding add no product (0 * inf is not taken)
                        total += xd[(row, feat, *at)] * w[(oo, ci, *k)]
            out[(b, oo, *pos)] = total
    del nsp
    return np.transpose(out, np.argsort(out_spec))


# (lhs shape, rhs shape, keyword arguments of lax.conv_general_dilated)
CONFIGS: dict[str, tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = {
    "2d_same": ((2, 3, 6, 5), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="SAME")),
    "2d_same_lower_strided": ((1, 2, 7, 6), (3, 2, 2, 3), dict(window_strides=(2, 3), padding="SAME_LOWER")),
    "2d_valid_nhwc": ((2, 6, 5, 3), (3, 2, 3, 4), dict(window_strides=(1, 2), padding="VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "2d_dilated_explicit": (
        (2, 7, 6, 3), (2, 3, 3, 4),
        dict(window_strides=(2, 1), padding=[(1, 0), (2, 2)], lhs_dilation=(1, 2), rhs_dilation=(2, 1), dimension_numbers=("NHWC", "HWIO", "NHWC")),
    ),
    "1d_negative_pad": ((3, 2, 8), (2, 2, 3), dict(window_strides=(1,), padding=[(-2, 1)])),
    "1d_feature_groups": ((2, 4, 7), (6, 2, 3), dict(window_strides=(2,), padding="VALID", feature_group_count=2)),
    "1d_depthwise": ((2, 3, 5), (3, 1, 2), dict(window_strides=(1,), padding=[(1, 1)], feature_group_count=3)),
    "1d_batch_groups": ((4, 3, 7), (6, 3, 3), dict(window_strides=(1,), padding=[(2, -1)], batch_group_count=2)),
    "1d_batch_groups_3": ((6, 2, 5), (3, 2, 2), dict(window_strides=(2,), padding=[(0, 1)], batch_group_count=3, rhs_dilation=(2,))),
    "1d_lhs_dilation_odd_layout": ((3, 5, 4), (2, 3, 4), dict(window_strides=(3,), padding=[(-1, 2)], lhs_dilation=(3,), dimension_numbers=("NWC", "OWI", "CWN"))),
    "3d_grouped": (
        (1, 4, 5, 4, 4), (2, 3, 2, 2, 4),
        dict(window_strides=(1, 2, 1), padding="SAME", rhs_dilation=(1, 1, 2), dimension_numbers=("NDHWC", "DHWIO", "NDHWC"), feature_group_count=2),
    ),
    "0d": ((2, 3), (4, 3), dict(window_strides=(), padding=[])),
    "window_larger_than_input": ((1, 1, 2), (1, 1, 4), dict(window_strides=(1,), padding="VALID")),
}  # fmt: skip


def _operands(lhs_shape, rhs_shape, dtype=F32, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(lhs_shape).astype(dtype), rng.standard_normal(rhs_shape).astype(dtype)


def _explicit(lhs_shape, rhs_shape, kw):
    """The primitive's params for ``kw`` (string padding resolved), through a traced call."""
    lhs, rhs = np.zeros(lhs_shape, F32), np.zeros(rhs_shape, F32)
    jaxpr = minijax.make_jaxpr(lambda a, b: lax.conv_general_dilated(a, b, **kw))(lhs, rhs)
    (eqn,) = jaxpr.jaxpr.eqns
    return eqn.params


FILLED = ["2d_same", "2d_dilated_explicit", "1d_depthwise", "1d_batch_groups", "1d_negative_pad"]


@pytest.mark.parametrize("name", FILLED)
def test_holes_and_padding_add_no_product_with_an_infinite_or_nan_kernel(name):
    # Found by the deep conformance run: the reference multiplied the padding's
    # zeros by the kernel's inf (NaN) where XLA, and JAX, add nothing there.
    lhs_shape, rhs_shape, kw = CONFIGS[name]
    lhs, rhs = _operands(lhs_shape, rhs_shape, np.float64, seed=7)
    rhs.reshape(-1)[[0, 3, 5]] = [np.inf, -np.inf, np.nan]
    p = _explicit(lhs_shape, rhs_shape, kw)
    with np.errstate(invalid="ignore"):  # inf - inf in the naive sums
        want = naive_conv(
            lhs, rhs, p["window_strides"], p["padding"], p["lhs_dilation"], p["rhs_dilation"],
            p["dimension_numbers"], p["feature_group_count"], p["batch_group_count"],
        )  # fmt: skip
    with minijax.enable_x64(True):
        got = np.asarray(lax.conv_general_dilated(lhs, rhs, **kw))
    assert got.shape == want.shape
    assert np.isfinite(want).any() and not np.isfinite(want).all()  # both kinds are checked
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)  # NaNs where NaNs, infinities exactly


def test_the_deep_run_reproducer_a_window_over_padding_only_is_zero():
    lhs = np.array([[[0.0709297482015403], [2.702782177955612]]])
    rhs = np.array([[[-2.135042323682198]], [[np.inf]]])
    with minijax.enable_x64(True):
        got = np.asarray(lax.conv_general_dilated(lhs, rhs, (1,), [(0, 1)], feature_group_count=2))
    # Each group's second window covers only the padding: no product, 0 (not 0 * inf).
    np.testing.assert_array_equal(got, [[[lhs[0, 0, 0] * rhs[0, 0, 0], 0.0], [np.inf, 0.0]]])


@pytest.mark.parametrize("dtype", [np.float16, F32])
def test_an_lhs_dilation_beside_a_size_one_axis_a_wider_kernel_spans(dtype):
    # Found by the deep conformance run: XLA's CPU simplifier aborted the whole
    # process compiling this (so does JAX 0.10.2); the XLA lowering now spells
    # the dilation out.
    kw = dict(window_strides=(1, 2), padding=[(0, 0), (0, 2)], lhs_dilation=(2, 1))
    lhs, rhs = _operands((1, 2, 4, 1), (2, 2, 2, 2), dtype, seed=3)
    p = _explicit(lhs.shape, rhs.shape, kw)
    want = naive_conv(lhs, rhs, p["window_strides"], p["padding"], p["lhs_dilation"], p["rhs_dilation"], p["dimension_numbers"])
    got = np.asarray(minijax.jit(lambda a, b: lax.conv_general_dilated(a, b, **kw))(lhs, rhs))
    assert got.shape == want.shape == (1, 2, 6, 1)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", CONFIGS)
def test_values_match_the_spec_semantics(name):
    lhs_shape, rhs_shape, kw = CONFIGS[name]
    lhs, rhs = _operands(lhs_shape, rhs_shape)
    p = _explicit(lhs_shape, rhs_shape, kw)
    want = naive_conv(
        lhs, rhs, p["window_strides"], p["padding"], p["lhs_dilation"], p["rhs_dilation"],
        p["dimension_numbers"], p["feature_group_count"], p["batch_group_count"],
    )  # fmt: skip
    got = np.asarray(lax.conv_general_dilated(lhs, rhs, **kw))
    assert got.dtype == F32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    jitted = np.asarray(minijax.jit(lambda a, b: lax.conv_general_dilated(a, b, **kw))(lhs, rhs))
    np.testing.assert_allclose(jitted, want, rtol=1e-5, atol=1e-5)


def test_string_padding_gives_the_same_shapes_as_in_jax():
    x, w = np.ones((1, 1, 7), F32), np.ones((1, 1, 4), F32)
    assert _explicit(x.shape, w.shape, dict(window_strides=(2,), padding="SAME"))["padding"] == ((1, 2),)
    assert _explicit(x.shape, w.shape, dict(window_strides=(2,), padding="SAME_LOWER"))["padding"] == ((2, 1),)
    assert _explicit(x.shape, w.shape, dict(window_strides=(2,), padding="VALID"))["padding"] == ((0, 0),)
    # SAME pads for the dilated window.
    assert _explicit(x.shape, w.shape, dict(window_strides=(1,), padding="SAME", rhs_dilation=(2,)))["padding"] == ((3, 3),)
    assert lax.conv_general_dilated(x, w, (2,), "same").shape == (1, 1, 4)


def test_dimension_numbers_spellings_agree():
    x, w = _operands((2, 5, 6, 3), (3, 2, 3, 4))
    as_strings = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    numbers = lax.conv_dimension_numbers(x.shape, w.shape, ("NHWC", "HWIO", "NHWC"))
    assert numbers == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert isinstance(numbers, tuple) and numbers.lhs_spec == (0, 3, 1, 2)
    as_numbers = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=numbers)
    np.testing.assert_array_equal(np.asarray(as_strings), np.asarray(as_numbers))
    # None is the canonical layout: the same result from transposed operands.
    canonical = lax.conv_general_dilated(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1), "SAME")
    np.testing.assert_allclose(np.asarray(canonical).transpose(0, 2, 3, 1), np.asarray(as_strings), rtol=1e-6)
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))
    assert lax.conv_dimension_numbers((1, 2), (1, 2), numbers) is numbers  # passed through as is


def test_spatial_axes_follow_the_kernel_string():
    # Strides go with the kernel's spatial letters in its order: here W before H.
    assert lax.conv_general_permutations(("NCHW", "OIWH", "NCHW")) == ((0, 1, 3, 2), (0, 1, 2, 3), (0, 1, 3, 2))
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NHWC")) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))


def test_shape_helpers():
    assert lax.conv_shape_tuple((2, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME") == (2, 4, 8, 8)
    assert lax.conv_shape_tuple((2, 3, 8, 8), (4, 3, 3, 3), (2, 1), [(0, 0), (1, 1)]) == (2, 4, 3, 8)
    assert lax.conv_shape_tuple((4, 3, 8), (6, 3, 3), (1,), "VALID", batch_group_count=2) == (2, 6, 6)
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (2, 2), "SAME", dn) == (2, 4, 5, 5)
    assert lax.conv_transpose_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (2, 2), "SAME", dn) == (2, 16, 18, 5)
    assert lax.conv_transpose_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (2, 2), "VALID", dn) == (2, 17, 19, 5)
    assert lax.conv_transpose_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (1, 1), [(1, 1), (0, 2)], dn) == (2, 8, 9, 5)
    with pytest.raises(TypeError, match="Wrong number of explicit pads for convolution: expected 2, got 1."):
        lax.conv_shape_tuple((2, 3, 8, 8), (4, 3, 3, 3), (1, 1), [(0, 0)])
    with pytest.raises(ValueError, match="Invalid padding mode"):
        lax.conv_transpose_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (1, 1), "FULL", dn)


# ---------------------------------------------------------------------------
# dtypes


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.float16, ml_dtypes.bfloat16])
def test_dtypes_and_accumulation(dtype):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, (2, 4, 6)).astype(dtype)
    w = rng.integers(0, 4, (4, 2, 3)).astype(dtype)
    out = lax.conv_general_dilated(x, w, (1,), "SAME", feature_group_count=2)
    want = naive_conv(x, w, (1,), [(1, 1)], (1,), (1,), ((0, 1, 2),) * 3, fgc=2)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out).astype(np.float64), want.astype(np.dtype(dtype)).astype(np.float64))


def test_integer_results_wrap_and_preferred_element_type_widens():
    x = np.full((1, 2, 3), 100, np.int8)
    w = np.full((1, 2, 3), 100, np.int8)
    total = 100 * 100 * 6  # 60000
    assert int(np.asarray(lax.conv_general_dilated(x, w, (1,), "VALID"))[0, 0, 0]) == np.int8(total % 256 - 256 if total % 256 > 127 else total % 256)
    wide = lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.int32)
    assert wide.dtype == np.int32 and int(np.asarray(wide)[0, 0, 0]) == total
    as_float = lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.float32)
    assert as_float.dtype == F32 and float(np.asarray(as_float)[0, 0, 0]) == total


def test_float16_accumulates_in_float32():
    # 2048 + 1 + 1 + ... is exact in float32 but not in float16 step by step.
    x = np.array([[[2048.0] + [1.0] * 8]], np.float16)
    w = np.ones((1, 1, 9), np.float16)
    out = lax.conv_general_dilated(x, w, (1,), "VALID")
    assert out.dtype == np.float16 and float(np.asarray(out)[0, 0, 0]) == 2056.0


def test_bool_convolution_is_any_product():
    x = np.array([[[True, False, False, True, False]]])
    w = np.array([[[True, True]]])
    out = lax.conv_general_dilated(x, w, (1,), "VALID")
    assert out.dtype == np.bool_ and np.asarray(out).tolist() == [[[True, False, True, True]]]


def test_weak_type_only_when_both_operands_are_weak():
    rule = minijax.core.abstract_eval_rules[conv_general_dilated_p]
    params = _explicit((1, 1, 3), (1, 1, 2), dict(window_strides=(1,), padding="VALID"))
    weak, strong = minijax.core.ShapedArray((1, 1, 3), F32, weak_type=True), minijax.core.ShapedArray((1, 1, 2), F32)
    assert not rule(weak, strong, **params).weak_type
    assert rule(weak, strong.update(weak_type=True), **params).weak_type
    # preferred_element_type keeps the weak type, as in JAX.
    assert rule(weak, strong.update(weak_type=True), **{**params, "preferred_element_type": np.dtype(F32)}).weak_type


# ---------------------------------------------------------------------------
# derivatives


GRAD_CONFIGS = ["2d_dilated_explicit", "1d_feature_groups", "1d_batch_groups_3", "1d_lhs_dilation_odd_layout", "3d_grouped", "0d"]


@pytest.mark.parametrize("name", GRAD_CONFIGS)
def test_derivatives_match_finite_differences(name):
    lhs_shape, rhs_shape, kw = CONFIGS[name]
    lhs, rhs = _operands(lhs_shape, rhs_shape)

    def f(a, b):
        return lax.conv_general_dilated(a, b, **kw)

    check_grads(f, (lhs, rhs), order=1, modes=("fwd", "rev"))


def test_second_derivatives():
    lhs_shape, rhs_shape, kw = CONFIGS["1d_feature_groups"]
    lhs, rhs = _operands(lhs_shape, rhs_shape)
    check_grads(lambda a, b: lax.conv_general_dilated(a, b, **kw), (lhs, rhs), order=2, modes=("rev",))


def test_transposes_are_convolutions():
    lhs_shape, rhs_shape, kw = CONFIGS["1d_batch_groups"]
    lhs, rhs = _operands(lhs_shape, rhs_shape)
    grad = minijax.grad(lambda a, b: lax.conv_general_dilated(a, b, **kw).sum(), (0, 1))
    jaxpr = minijax.make_jaxpr(grad)(lhs, rhs)
    convs = [e for e in jaxpr.jaxpr.eqns if e.primitive is conv_general_dilated_p]
    assert len(convs) == 3  # the forward one and one per operand
    # Batch groups of the forward convolution become feature groups of both transposes.
    assert [(e.params["feature_group_count"], e.params["batch_group_count"]) for e in convs] == [(1, 2), (2, 1), (2, 1)]


def test_empty_cotangent_gives_zero_gradients():
    x, w = np.ones((2, 1, 2), F32), np.ones((1, 1, 3), F32)  # the window never fits: empty result
    gx, gw = minijax.grad(lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID").sum(), (0, 1))(x, w)
    assert np.asarray(gx).shape == x.shape and not np.asarray(gx).any()
    assert np.asarray(gw).shape == w.shape and not np.asarray(gw).any()


# ---------------------------------------------------------------------------
# vmap


VMAP_CASES = [
    (name, in_axes)
    for name in ("2d_dilated_explicit", "1d_feature_groups", "1d_batch_groups", "0d")
    for in_axes in ((0, None), (None, 0), (0, 0), (2, 1) if name != "0d" else (1, 2))
]


@pytest.mark.parametrize(("name", "in_axes"), VMAP_CASES)
def test_vmap_matches_a_loop_over_examples(name, in_axes):
    lhs_shape, rhs_shape, kw = CONFIGS[name]
    rng = np.random.default_rng(3)
    size = 3
    lhs = rng.standard_normal(lhs_shape).astype(F32)
    rhs = rng.standard_normal(rhs_shape).astype(F32)
    lhs_b = np.stack([lhs * (i + 1) for i in range(size)], in_axes[0]) if in_axes[0] is not None else lhs
    rhs_b = np.stack([rhs - i for i in range(size)], in_axes[1]) if in_axes[1] is not None else rhs

    def f(a, b):
        return lax.conv_general_dilated(a, b, **kw)

    got = np.asarray(minijax.vmap(f, in_axes)(lhs_b, rhs_b))
    for i in range(size):
        a = np.take(lhs_b, i, in_axes[0]) if in_axes[0] is not None else lhs
        b = np.take(rhs_b, i, in_axes[1]) if in_axes[1] is not None else rhs
        np.testing.assert_allclose(got[i], np.asarray(f(a, b)), rtol=1e-5, atol=1e-5)


def test_vmap_folds_the_batch_without_a_loop():
    lhs_shape, rhs_shape, kw = CONFIGS["1d_feature_groups"]
    lhs, rhs = _operands(lhs_shape, rhs_shape)
    jaxpr = minijax.make_jaxpr(minijax.vmap(lambda a, b: lax.conv_general_dilated(a, b, **kw)))(
        np.stack([lhs] * 5), np.stack([rhs] * 5)
    )
    convs = [e for e in jaxpr.jaxpr.eqns if e.primitive is conv_general_dilated_p]
    assert len(convs) == 1 and convs[0].params["feature_group_count"] == 2 * 5


def test_vmap_of_an_empty_batch():
    out = minijax.vmap(lambda a, b: lax.conv_general_dilated(a, b, (1,), "SAME"))(
        np.ones((0, 2, 3, 5), F32), np.ones((0, 4, 3, 2), F32)
    )
    assert out.shape == (0, 2, 4, 5) and out.dtype == F32


# ---------------------------------------------------------------------------
# jaxpr text


def test_jaxpr_text_round_trips():
    lhs_shape, rhs_shape, kw = CONFIGS["2d_dilated_explicit"]
    lhs, rhs = _operands(lhs_shape, rhs_shape)

    def f(a, b):
        out = lax.conv_general_dilated(a, b, **kw, precision="highest", preferred_element_type=F32)
        return minijax.grad(lambda a: lax.conv_general_dilated(a, b, **kw).sum())(a), out

    closed = minijax.make_jaxpr(f)(lhs, rhs)
    text = str(closed)
    assert "dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))" in text
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text
    back = parse_jaxpr(text)
    assert str(back) == text
    for mine, theirs in zip(closed.jaxpr.eqns, back.jaxpr.eqns):
        assert mine.params == theirs.params
    want = [np.asarray(v) for v in eval_closed_jaxpr(closed, lhs, rhs)]
    got = [np.asarray(v) for v in eval_closed_jaxpr(back, lhs, rhs)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_parsed_dimension_numbers_are_checked():
    text = str(minijax.make_jaxpr(lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID"))(np.ones((1, 1, 3), F32), np.ones((1, 1, 2), F32)))
    bad = parse_jaxpr(text.replace("lhs_spec=(0, 1, 2)", "lhs_spec=(0, 1, 1)"))
    with pytest.raises(TypeError, match="lhs_spec must list each of the 3 axes once"):
        check_jaxpr(bad)
    with pytest.raises(TypeError, match="lhs_spec must list each of the 3 axes once"):
        eval_closed_jaxpr(bad, np.ones((1, 1, 3), F32), np.ones((1, 1, 2), F32))


# ---------------------------------------------------------------------------
# errors

X4, W4 = np.ones((2, 3, 8, 8), F32), np.ones((4, 3, 3, 3), F32)

ERRORS = [
    (lambda: lax.conv_general_dilated(X4, W4.astype(np.int32), (1, 1), "SAME"), TypeError,
     "lax.conv_general_dilated requires arguments to have the same dtypes, got float32, int32."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "VALID", feature_group_count=2), ValueError,
     "feature_group_count must divide lhs feature dimension size, but 2 does not divide 3."),
    (lambda: lax.conv_general_dilated(X4, np.ones((4, 2, 3, 3), F32), (1, 1), "VALID"), ValueError,
     r"lhs feature dimension size divided by feature_group_count must equal the rhs input feature dimension size, but 3 // 1 != 2."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), [(0, 0), (0, 0)], feature_group_count=0), ValueError,
     "feature_group_count must be a positive integer, got 0."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "VALID", batch_group_count=3), ValueError,
     "batch_group_count must divide lhs batch dimension size, but 3 does not divide 2."),
    (lambda: lax.conv_general_dilated(np.ones((4, 4, 5), F32), np.ones((4, 2, 2), F32), (1,), "VALID", batch_group_count=2, feature_group_count=2),
     ValueError, "At most one of batch_group_count and feature_group_count may be > 1"),
    (lambda: lax.conv_general_dilated(np.ones((4, 4, 5), F32), np.ones((3, 2, 2), F32), (1,), "VALID", feature_group_count=2),
     ValueError, "rhs output feature dimension size must be a multiple of feature_group_count, but 3 is not a multiple of 2."),
    (lambda: lax.conv_general_dilated(X4, W4, (1,), "VALID"), ValueError,
     "window and window_strides must have the same number of dimensions, but got 2 and 1"),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), [(0, 0)]), TypeError,
     "Wrong number of explicit pads for convolution: expected 2, got 1."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), [(-9, 0), (0, 0)]), ValueError,
     "Negative padding is larger than the size of the corresponding dimension"),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "FOO"), RuntimeError,
     "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FOO."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), [(0, 0, 1), (0, 0)]), ValueError,
     r"padding argument to conv_general_dilated should be a string or a sequence of \(low, high\) pairs"),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "VALID", rhs_dilation=(0, 1)), TypeError,
     r"All dilations must be positive, got \(0, 1\)."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "SAME", lhs_dilation=(2, 1)), ValueError,
     "String padding is not implemented for transposed convolution"),
    (lambda: lax.conv_general_dilated(X4, W4[0], (1, 1), "SAME"), TypeError,
     "convolution requires lhs and rhs ndim to be equal, got 4 and 3."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW")), TypeError,
     "convolution dimension_numbers list/tuple must be length 3, got 2."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCH")), TypeError,
     r"convolution dimension_numbers\[2\] must have len equal to the ndim of lhs and rhs, got 3"),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCXW")), TypeError,
     "convolution dimension_numbers elements must each have the same set of spatial characters"),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHH", "OIHW", "NCHW")), TypeError,
     r"convolution dimension_numbers\[0\] cannot have duplicate characters, got NCHH."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NXHW", "OIHW", "NCHW")), TypeError,
     r"convolution dimension_numbers\[0\] must contain the characters 'N' and 'C' exactly once, got NXHW."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHW", 1, "NCHW")), TypeError,
     "convolution dimension_numbers elements must be strings"),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers="NCHW"), TypeError,
     "convolution dimension_numbers must be tuple/list or None, got <class 'str'>."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "VALID", preferred_element_type=np.float16), TypeError,
     "`preferred_element_type` must not be narrower than the original type."),
    (lambda: lax.conv_general_dilated(X4.astype(np.int32), W4.astype(np.int32), (1, 1), "VALID", preferred_element_type=np.uint32), TypeError,
     "`preferred_element_type` must have the same signedness as the original type."),
    (lambda: lax.conv_general_dilated(X4, W4, (1, 1), "VALID", preferred_element_type=np.int32), TypeError,
     "Input type is incompatible with `preferred_element_type`."),
    # JAX hands these to XLA, which fails to compile; minijax says what is wrong.
    (lambda: lax.conv_general_dilated(X4, W4, (0, 1), "VALID"), ValueError,
     r"conv_general_dilated window_strides must be positive, got \(0, 1\)."),
    (lambda: lax.conv_general_dilated(np.ones((1, 4, 5), F32), np.ones((4, 4, 0), F32), (1,), "VALID"), ValueError,
     "window \\(the rhs spatial dimensions\\) must not be empty"),
]  # fmt: skip


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index):
    call, kind, message = ERRORS[index]
    with pytest.raises(kind, match=message):
        call()


def test_errors_under_jit_are_the_same():
    with pytest.raises(ValueError, match="feature_group_count must divide"):
        minijax.jit(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID", feature_group_count=2))(X4, W4)


def test_a_bad_dimension_numbers_param_is_refused_by_the_primitive():
    with pytest.raises(TypeError, match="dimension_numbers must be a ConvDimensionNumbers"):
        conv_general_dilated_p.bind(
            X4, W4, window_strides=(1, 1), padding=((0, 0), (0, 0)), lhs_dilation=(1, 1), rhs_dilation=(1, 1),
            dimension_numbers=((0, 1, 2, 3),) * 3, feature_group_count=1, batch_group_count=1,
            precision=None, preferred_element_type=None, out_sharding=None,
        )  # fmt: skip


def test_the_conformance_bound_uses_the_convolution_of_magnitudes():
    from minijax.testing.tolerances import _conv_magnitude

    for name in ("2d_dilated_explicit", "1d_batch_groups_3", "1d_lhs_dilation_odd_layout", "3d_grouped", "0d"):
        lhs_shape, rhs_shape, kw = CONFIGS[name]
        lhs, rhs = _operands(lhs_shape, rhs_shape)
        p = _explicit(lhs_shape, rhs_shape, kw)
        want = naive_conv(
            np.abs(lhs), np.abs(rhs), p["window_strides"], p["padding"], p["lhs_dilation"], p["rhs_dilation"],
            p["dimension_numbers"], p["feature_group_count"], p["batch_group_count"],
        )  # fmt: skip
        np.testing.assert_allclose(_conv_magnitude(lhs, rhs, p), want, rtol=1e-12)
