"""(Re)write the case corpus of spec/cases/ from the minijax programs below.

    python spec/cases/generate.py          # write every case
    python spec/cases/generate.py --check  # exit 1 if a file differs from what would be written

Each case is a function returning ``(f, inputs)``: a program and the
descriptions of its inputs (``minijax.testing.corpus`` explains the
format). The generator draws the inputs, traces ``make_jaxpr(f)`` and
writes ``GROUP/NAME.jaxpr`` and ``GROUP/NAME.json``. Programs take every
array as an argument, so the jaxprs have no constants. Expected outputs are
never stored: the reference backend computes them when a check runs.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import minijax
import minijax.numpy as jnp
from minijax import lax, nn
from minijax.config import enable_x64
from minijax.testing.corpus import make_input

HERE = pathlib.Path(__file__).resolve().parent

Spec = dict[str, Any]
Builder = Callable[[], tuple[Callable[..., Any], list[Spec]]]
CASES: dict[str, tuple[str, bool, Builder]] = {}  # "group/name" -> (about, x64, builder)


def case(name: str, about: str, x64: bool = False) -> Callable[[Builder], Builder]:
    def register(build: Builder) -> Builder:
        CASES[name] = (about, x64, build)
        return build

    return register


def normal(shape: tuple[int, ...], dtype: str = "float32", scale: float = 1.0) -> Spec:
    return {"shape": list(shape), "dtype": dtype, "values": "normal", "scale": scale}


def uniform(shape: tuple[int, ...], low: float, high: float, dtype: str = "float32") -> Spec:
    return {"shape": list(shape), "dtype": dtype, "values": "uniform", "low": low, "high": high}


def integers(shape: tuple[int, ...], low: int, high: int, dtype: str = "int32") -> Spec:
    return {"shape": list(shape), "dtype": dtype, "values": "integers", "low": low, "high": high}


def given(data: Any, dtype: str) -> Spec:
    shape = np.shape(np.array(data, dtype=object))
    return {"shape": list(shape), "dtype": dtype, "values": "given", "data": data}


NAN, INF, NEG_INF, NEG_ZERO = "nan", "inf", "-inf", "-0.0"
F32_EDGES = [0.0, NEG_ZERO, 1.0, -1.0, 0.5, 2.5, -2.5, INF, NEG_INF, NAN, 3.4028234663852886e38, 1e-45, 1.1754943508222875e-38]


# ---------------------------------------------------------------------------
# Single primitives with edge-case params or values


@case("primitives/dot_general_batch", "dot_general with a batch axis and contracting axes in the middle")
def _dot_batch() -> Any:
    dims = (((2,), (1,)), ((0,), (0,)))
    return (lambda a, b: lax.dot_general(a, b, dims)), [normal((2, 3, 4)), normal((2, 4, 5))]


@case("primitives/dot_general_int8_to_int32", "int8 operands accumulated in int32 (preferred_element_type)")
def _dot_int8() -> Any:
    dims = (((1,), (0,)), ((), ()))
    f = lambda a, b: lax.dot_general(a, b, dims, preferred_element_type=np.int32)  # noqa: E731
    return f, [integers((3, 4), -128, 127, "int8"), integers((4, 2), -128, 127, "int8")]


@case("primitives/conv_grouped_dilated_nhwc", "conv_general_dilated: NHWC/HWIO, feature groups, strides, lhs and rhs dilation, a negative pad")
def _conv_grouped() -> Any:
    def f(x: Any, w: Any) -> Any:
        return lax.conv_general_dilated(
            x, w, (2, 1), [(1, -1), (2, 0)], lhs_dilation=(1, 2), rhs_dilation=(2, 1),
            dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2,
        )  # fmt: skip

    return f, [normal((2, 7, 5, 4)), normal((2, 3, 2, 6))]


@case("primitives/conv_batch_groups", "conv_general_dilated with batch groups (the kernel gradient of a grouped convolution)")
def _conv_batch_groups() -> Any:
    return (lambda x, w: lax.conv_general_dilated(x, w, (1,), [(1, 1)], batch_group_count=3)), [normal((6, 2, 5)), normal((6, 2, 3))]


@case("primitives/pad_negative_interior", "pad with negative low padding and interior padding")
def _pad() -> Any:
    return (lambda x, v: lax.pad(x, v, [(-1, 2, 1), (1, -1, 0)])), [normal((4, 3)), given(-7.5, "float32")]


@case("primitives/slice_strides", "slice with strides that do not divide the size")
def _slice() -> Any:
    return (lambda x: lax.slice(x, (1, 0), (6, 5), (2, 3))), [normal((7, 5))]


@case("primitives/dynamic_slice_clamped", "dynamic_slice whose start indices lie outside the operand (clamped)")
def _dynamic_slice() -> Any:
    f = lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3))  # noqa: E731
    return f, [normal((4, 5)), given(7, "int32"), given(-9, "int32")]


@case("primitives/dynamic_update_slice_clamped", "dynamic_update_slice past the end (clamped)")
def _dynamic_update_slice() -> Any:
    f = lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0))  # noqa: E731
    return f, [normal((4, 3)), normal((2, 3)), given(3, "int32")]


@case("primitives/convert_float_to_int_saturating", "float32 to int32: truncation, saturation, NaN to 0")
def _convert_saturating() -> Any:
    data = [NAN, INF, NEG_INF, 1e10, -1e10, -1.9, 2.5, NEG_ZERO, 2147483520.0]
    return (lambda x: lax.convert_element_type(x, np.int32)), [given(data, "float32")]


@case("primitives/convert_float_to_bfloat16", "float32 to bfloat16: round to nearest even, edge values kept")
def _convert_bf16() -> Any:
    data = [1.00390625, 1.01171875, -3.0078125, *F32_EDGES]
    return (lambda x: lax.convert_element_type(x, minijax.dtypes.bfloat16)), [given(data, "float32")]


@case("primitives/bitcast_float32_to_uint8", "bitcast_convert_type to a narrower type adds a minor axis")
def _bitcast() -> Any:
    return (lambda x: lax.bitcast_convert_type(x, np.uint8)), [given([1.0, -2.0, NAN, NEG_ZERO], "float32")]


@case("primitives/reduce_precision_e5m2", "reduce_precision to 5 exponent and 2 mantissa bits (overflow, underflow)")
def _reduce_precision() -> Any:
    data = [1.0, 1.1, 1.9, 65504.0, 57344.0, 6e-5, 1e-8, *F32_EDGES]
    return (lambda x: lax.reduce_precision(x, 5, 2)), [given(data, "float32")]


@case("primitives/integer_pow_negative", "integer_pow with a negative exponent")
def _integer_pow() -> Any:
    return (lambda x: lax.integer_pow(x, -3)), [given([0.5, -2.0, 0.0, NEG_ZERO, INF, 3.0], "float32")]


@case("primitives/rem_int_signs", "integer rem: C's sign rule, division by zero and INT_MIN % -1")
def _rem_int() -> Any:
    x = given([7, -7, 7, -7, -2147483648, 5], "int32")
    y = given([2, 2, -2, -2, -1, 0], "int32")
    return lax.rem, [x, y]


@case("primitives/div_int_edges", "integer division: truncation toward zero, by zero, INT_MIN / -1")
def _div_int() -> Any:
    x = given([7, -7, 7, -2147483648, 5, 0], "int32")
    y = given([2, 2, 0, -1, -5, 0], "int32")
    return lax.div, [x, y]


@case("primitives/shift_left_past_width", "shift_left by the bit width and beyond, and by negative amounts")
def _shift_left() -> Any:
    return lax.shift_left, [given([1, 1, 1, -1, 3], "int32"), given([31, 32, 33, -1, 0], "int32")]


@case("primitives/shift_right_arithmetic_int8", "arithmetic right shift of negative int8 past the width")
def _shift_right() -> Any:
    return lax.shift_right_arithmetic, [given([-8, -8, 127, -128], "int8"), given([2, 100, 7, 8], "int8")]


@case("primitives/max_nan_signed_zero", "max propagates NaN and orders -0.0 below +0.0")
def _max() -> Any:
    return lax.max, [given([NAN, 1.0, NEG_ZERO, 0.0, INF], "float32"), given([1.0, NAN, 0.0, NEG_ZERO, NAN], "float32")]


@case("primitives/argmax_nan_ties", "argmax: NaN wins, ties pick the first index")
def _argmax() -> Any:
    data = [[1.0, 3.0, 3.0, 2.0], [1.0, NAN, 5.0, NAN], [NEG_INF, NEG_INF, NEG_INF, NEG_INF]]
    return (lambda x: lax.argmax(x, 1, np.int32)), [given(data, "float32")]


@case("primitives/reduce_max_empty_axis", "a reduction over an empty axis gives the identity (-inf)")
def _reduce_max_empty() -> Any:
    return (lambda x: lax.reduce_max(x, (1,))), [normal((3, 0))]


@case("primitives/reduce_sum_float16_accumulates_in_float32", "1024 float16 values summed: accumulated in float32")
def _reduce_sum_f16() -> Any:
    return (lambda x: lax.reduce_sum(x, (0,))), [uniform((1024,), 0.9, 1.1, "float16")]


@case("primitives/iota_2d", "iota along the second axis of a 2-D shape")
def _iota() -> Any:
    return (lambda: lax.broadcasted_iota(np.int16, (3, 5), 1)), []


@case("primitives/select_n_int32_cases", "select_n with an int32 selector over three cases")
def _select_n() -> Any:
    return lax.select_n, [given([0, 1, 2, 1, 0], "int32"), normal((5,)), normal((5,)), normal((5,))]


@case("primitives/clamp_scalar_bounds", "clamp with scalar bounds and NaN operands")
def _clamp() -> Any:
    return lax.clamp, [given(-1.0, "float32"), given([NAN, -3.0, 0.5, 2.0, NEG_ZERO], "float32"), given(1.0, "float32")]


@case("primitives/round_both_methods", "round half away from zero and half to even")
def _round() -> Any:
    data = [0.5, 1.5, 2.5, -0.5, -1.5, 0.49999997, NAN, INF]
    f = lambda x: (lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))  # noqa: E731
    return f, [given(data, "float32")]


@case("primitives/nextafter_edges", "nextafter toward infinities, NaN and across zero")
def _nextafter() -> Any:
    return lax.nextafter, [given([0.0, 1.0, -1.0, NAN, 3.4028234663852886e38], "float32"), given([1.0, INF, NEG_INF, 0.0, INF], "float32")]


@case("primitives/population_count_and_clz", "population_count and clz of int16 edge values")
def _bits() -> Any:
    return (lambda x: (lax.population_count(x), lax.clz(x))), [given([-1, 0, 1, 7, -32768, 32767], "int16")]


@case("primitives/transcendental_special_points", "erf_inv near ±1, lgamma at its zeros, log1p and expm1 near 0")
def _special() -> Any:
    x = given([0.999, -0.999, 0.5, 0.0], "float32")
    y = given([1.0, 2.0, 0.5, 3.5], "float32")
    z = given([1e-7, -1e-7, 1e-3, 0.0], "float32")
    return (lambda a, b, c: (lax.erf_inv(a), lax.lgamma(b), lax.log1p(c), lax.expm1(c))), [x, y, z]


@case("primitives/concatenate_with_empty", "concatenate an empty operand between two others")
def _concatenate() -> Any:
    return (lambda a, b, c: lax.concatenate([a, b, c], 1)), [normal((2, 3)), normal((2, 0)), normal((2, 1))]


@case("primitives/transpose_rev_squeeze", "transpose with a permutation, rev of two axes, squeeze of a size-1 axis")
def _transpose() -> Any:
    f = lambda x: lax.squeeze(lax.rev(lax.transpose(x, (2, 0, 1, 3)), (0, 3)), (3,))  # noqa: E731
    return f, [normal((2, 3, 4, 1))]


@case("primitives/cumsum_reverse", "cumsum and cummax along an axis, reversed")
def _cumulative() -> Any:
    return (lambda x: (lax.cumsum(x, axis=1, reverse=True), lax.cummax(x, axis=0))), [normal((3, 4))]


@case("primitives/reduce_window_product", "the generic reduce_window (a product): SAME padding, base dilation")
def _reduce_window_product() -> Any:
    f = lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 3), (1, 2), "SAME", base_dilation=(2, 1))  # noqa: E731
    return f, [uniform((3, 5), 0.5, 1.5)]


@case("primitives/reduce_window_variadic", "reduce_window over two operands: a running (max, sum) per window")
def _reduce_window_variadic() -> Any:
    def f(x: Any, y: Any) -> Any:
        return lax.reduce_window((x, y), (-np.inf, 0.0), lambda a, b: (lax.max(a[0], b[0]), a[1] + b[1] * 2.0),
                                 (2, 2), (1, 1), ((1, 0), (0, 1)), window_dilation=(1, 2))

    return f, [normal((4, 5)), normal((4, 5))]


@case("primitives/reduce_window_max_edges", "max pooling over NaN, ±0 and ±inf with padding and window dilation")
def _reduce_window_max_edges() -> Any:
    x = given([[1.0, NAN, -1.0, 2.0], [NEG_ZERO, 0.0, INF, NEG_INF], [0.0, NEG_ZERO, -3.0, NEG_INF]], "float32")
    f = lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "SAME", window_dilation=(1, 2))  # noqa: E731
    return f, [x]


@case("primitives/sort_two_operands_nan", "sort of keys with NaN and ±0 carrying values (num_keys=1, stable)")
def _sort() -> Any:
    keys = given([3.0, NAN, NEG_ZERO, 0.0, -1.0, 3.0, NEG_INF], "float32")
    values = given([0, 1, 2, 3, 4, 5, 6], "int32")
    return (lambda k, v: tuple(lax.sort((k, v), num_keys=1))), [keys, values]


@case("primitives/scatter_out_of_range_dropped", "scatter (x.at[i].set) with unique indices, out-of-range ones dropped")
def _scatter() -> Any:
    indices = given([1, 3, 9, 0, -7], "int32")
    f = lambda x, i, u: x.at[i].set(u, mode="drop", unique_indices=True)  # noqa: E731
    return f, [normal((5,)), indices, normal((5,))]


@case("primitives/scatter_add_duplicates", "scatter-add with duplicate indices (summed) and out-of-range ones (dropped)")
def _scatter_add() -> Any:
    indices = given([1, 3, 1, 9, 1], "int32")
    return (lambda x, i, u: x.at[i].add(u, mode="drop")), [normal((5,)), indices, normal((5,))]


@case("primitives/gather_clamped", "x[i] gather with out-of-range indices (clamped, as JAX's default does)")
def _gather() -> Any:
    return (lambda x, i: x[i]), [normal((4, 3)), given([0, 3, -1, 7], "int32")]


@case("primitives/threefry_normal", "random.normal from a raw PRNGKey: threefry2x32 and erf_inv, bit for bit")
def _random() -> Any:
    return (lambda k: minijax.random.normal(k, (4,))), [given([0, 42], "uint32")]


@case("primitives/cholesky_and_triangular_solve", "cholesky of an SPD matrix, then a triangular solve")
def _cholesky() -> Any:
    def f(a: Any, b: Any) -> Any:
        spd = a @ a.T + 3.0 * jnp.eye(3)
        c = lax.linalg.cholesky(spd)
        return c, lax.linalg.triangular_solve(c, b, left_side=True, lower=True)

    return f, [normal((3, 3)), normal((3, 2))]


@case("primitives/eigh_svd_qr", "eigh of a symmetric matrix, svd and qr of a square one")
def _decompositions() -> Any:
    def f(a: Any) -> Any:
        sym = a + a.T + jnp.diag(jnp.arange(3.0) * 4.0)
        w_v = lax.linalg.eigh(sym)
        s = lax.linalg.svd(a + 4.0 * jnp.eye(3), compute_uv=False)
        q_r = lax.linalg.qr(a + 2.0 * jnp.eye(3))
        return (*w_v, s, *q_r)

    return f, [normal((3, 3))]


@case("primitives/float64_arithmetic", "float64 arithmetic and conversions under x64", x64=True)
def _f64() -> Any:
    return (lambda x, y: (x / y, lax.sqrt(lax.abs(x)), lax.convert_element_type(x, np.float32))), [normal((4,), "float64"), uniform((4,), 0.5, 2.0, "float64")]


# ---------------------------------------------------------------------------
# Control flow


@case("control_flow/switch_three_branches", "lax.switch with an index clamped into range")
def _switch() -> Any:
    branches = [lambda x: x * 2.0, lambda x: jnp.sin(x), lambda x: -x]
    return (lambda i, x: lax.switch(i, branches, x)), [given(5, "int32"), normal((3,))]


@case("control_flow/cond_with_operands", "lax.cond on a computed predicate with two operands")
def _cond() -> Any:
    f = lambda x, y: lax.cond(jnp.sum(x) > 0, lambda a, b: a * b, lambda a, b: a - b, x, y)  # noqa: E731
    return f, [normal((4,)), normal((4,))]


@case("control_flow/fori_loop_newton", "fori_loop: eight Newton steps towards sqrt(a)")
def _fori() -> Any:
    def f(a: Any) -> Any:
        return lax.fori_loop(0, 8, lambda i, x: 0.5 * (x + a / x), a)

    return f, [uniform((5,), 0.5, 4.0)]


@case("control_flow/while_collatz", "while_loop with an integer carry and a data-dependent trip count")
def _while() -> Any:
    def f(n: Any) -> Any:
        def body(state: Any) -> Any:
            k, steps = state
            return jnp.where(k % 2 == 0, k // 2, 3 * k + 1), steps + 1

        return lax.while_loop(lambda s: s[0] != 1, body, (n, 0))

    return f, [given(27, "int32")]


@case("control_flow/scan_cumulative", "scan with a carry and stacked outputs")
def _scan() -> Any:
    def f(xs: Any) -> Any:
        return lax.scan(lambda c, x: (c * 0.9 + x, jnp.tanh(c)), jnp.zeros(3), xs)

    return f, [normal((6, 3))]


@case("control_flow/scan_reverse_cond", "scan in reverse whose body contains a cond")
def _scan_cond() -> Any:
    def body(c: Any, x: Any) -> Any:
        c = lax.cond(x > 0, lambda v: v + x, lambda v: v * 0.5, c)
        return c, c

    return (lambda xs: lax.scan(body, 1.0, xs, reverse=True)), [normal((5,))]


# ---------------------------------------------------------------------------
# Transformed programs: grad, vmap, jit and jvp of small real models


def _mlp(params: Any, x: Any) -> Any:
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    return h @ w2 + b2


def _mse(params: Any, x: Any, y: Any) -> Any:
    return jnp.mean((_mlp(params, x) - y) ** 2)


def _mlp_inputs() -> list[Spec]:
    return [normal((3, 8), scale=0.5), normal((8,), scale=0.1), normal((8, 2), scale=0.5), normal((2,), scale=0.1),
            normal((4, 3)), normal((4, 2))]  # fmt: skip


@case("programs/mlp_sgd_step", "jit of one SGD step of a two-layer MLP on a mean squared error")
def _mlp_step() -> Any:
    @minijax.jit
    def step(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
        params = ((w1, b1), (w2, b2))
        grads = minijax.grad(_mse)(params, x, y)
        return minijax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    return step, _mlp_inputs()


@case("programs/mlp_value_and_grad", "value_and_grad of the MLP's loss")
def _mlp_grad() -> Any:
    def f(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
        return minijax.value_and_grad(_mse)(((w1, b1), (w2, b2)), x, y)

    return f, _mlp_inputs()


@case("programs/mlp_per_example_grads", "vmap of grad: per-example gradients of the MLP")
def _mlp_vmap_grad() -> Any:
    def f(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
        params = ((w1, b1), (w2, b2))
        one = lambda xi, yi: minijax.grad(_mse)(params, xi[None], yi[None])  # noqa: E731
        return minijax.vmap(one)(x, y)

    return f, _mlp_inputs()


def _conv_loss(w: Any, x: Any) -> Any:
    out = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2)
    return jnp.mean(jnp.tanh(out) ** 2)


@case("programs/conv_grad", "grad of a grouped 2-D convolution layer's loss with respect to kernel and input")
def _conv_grad() -> Any:
    return minijax.grad(_conv_loss, (0, 1)), [normal((3, 3, 2, 4), scale=0.5), normal((2, 5, 5, 4))]


@case("programs/conv_per_example_grads", "vmap of grad: per-example kernel gradients of the convolution layer")
def _conv_vmap_grad() -> Any:
    def f(w: Any, x: Any) -> Any:
        return minijax.vmap(lambda xi: minijax.grad(_conv_loss)(w, xi[None]))(x)

    return f, [normal((3, 3, 2, 4), scale=0.5), normal((3, 5, 5, 4))]


@case("programs/mlp_hessian_vector_product", "jvp of grad: a Hessian-vector product of the MLP's loss")
def _mlp_hvp() -> Any:
    def f(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any, v: Any) -> Any:
        g = lambda w: minijax.grad(_mse)(((w, b1), (w2, b2)), x, y)[0][0]  # noqa: E731
        return minijax.jvp(g, (w1,), (v,))

    return f, [*_mlp_inputs(), normal((3, 8))]


def _rnn(w: Any, u: Any, h0: Any, xs: Any) -> Any:
    def cell(h: Any, x: Any) -> Any:
        h = jnp.tanh(h @ w + x @ u)
        return h, h

    return lax.scan(cell, h0, xs)


def _rnn_inputs() -> list[Spec]:
    return [normal((4, 4), scale=0.4), normal((3, 4), scale=0.4), normal((4,), scale=0.1), normal((7, 3))]


@case("programs/rnn_scan_forward", "an RNN over 7 steps with lax.scan")
def _rnn_forward() -> Any:
    return _rnn, _rnn_inputs()


@case("programs/rnn_scan_grad", "grad of a loss through the RNN's scan (reverse-mode scan)")
def _rnn_grad() -> Any:
    def loss(w: Any, u: Any, h0: Any, xs: Any) -> Any:
        h, hs = _rnn(w, u, h0, xs)
        return jnp.sum(hs**2) + jnp.sum(h)

    return minijax.grad(loss, argnums=(0, 1, 2)), _rnn_inputs()


@case("programs/softmax_cross_entropy", "value_and_grad of softmax cross-entropy over a batch of logits")
def _softmax_xent() -> Any:
    def loss(logits: Any, labels: Any) -> Any:
        one_hot = nn.one_hot(labels, 5)
        return -jnp.mean(jnp.sum(one_hot * nn.log_softmax(logits), axis=-1))

    return minijax.value_and_grad(loss), [normal((4, 5), scale=3.0), integers((4,), 0, 4)]


@case("programs/max_pool_grad", "grad of 2x2/stride-2 max pooling on NHWC with SAME padding (select_and_scatter_add)")
def _max_pool_grad() -> Any:
    def loss(x: Any) -> Any:
        pooled = lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")
        return jnp.sum(jnp.sin(pooled))

    return minijax.grad(loss), [normal((2, 5, 5, 3))]


@case("programs/avg_pool_jvp_and_vmap", "jvp of average pooling with base dilation, and max pooling's jvp under vmap")
def _avg_pool_jvp() -> Any:
    def avg(x: Any) -> Any:
        return lax.reduce_window(x, 0.0, lax.add, (3, 3), (2, 1), ((1, 1), (0, 2)), base_dilation=(1, 2)) / 9.0

    def max_jvp(x: Any, t: Any) -> Any:
        return minijax.jvp(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), "VALID"), (x,), (t,))[1]

    return (lambda x, t: (minijax.jvp(avg, (x,), (t,)), minijax.vmap(max_jvp)(x, t))), [normal((4, 5)), normal((4, 5))]


@case("programs/jit_inside_grad_inside_vmap", "vmap of grad of a function that calls a jitted function")
def _nested() -> Any:
    inner = minijax.jit(lambda x: jnp.sin(x) * jnp.exp(-(x**2)))
    f = minijax.vmap(minijax.grad(lambda x: jnp.sum(inner(x) * x)))
    return f, [normal((3, 4))]


# ---------------------------------------------------------------------------


def generate(name: str) -> tuple[str, str]:
    """The two files' texts of case ``name``: (jaxpr, json)."""
    about, x64, build = CASES[name]
    with enable_x64(x64):
        f, specs = build()
        seed = 0
        args = [make_input(s, np.random.default_rng([seed, i])) for i, s in enumerate(specs)]
        closed = minijax.make_jaxpr(f)(*args)
    if closed.jaxpr.constvars:
        raise ValueError(f"case {name}: the program closes over arrays ({len(closed.jaxpr.constvars)} constvars); "
                         "make them arguments")  # fmt: skip
    meta = {"about": about, "x64": x64, "seed": seed, "inputs": specs}
    return str(closed.jaxpr) + "\n", json.dumps(meta, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale files instead of writing")
    parser.add_argument("--out", default=str(HERE), help="the corpus directory (default: this script's)")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    stale = []
    for name in CASES:
        texts = generate(name)
        for suffix, text in zip((".jaxpr", ".json"), texts):
            path = out / f"{name}{suffix}"
            if args.check:
                if not path.exists() or path.read_text() != text:
                    stale.append(str(path))
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    if args.check and stale:
        print("stale corpus files (run python spec/cases/generate.py):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    if not args.check:
        print(f"wrote {len(CASES)} cases to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
