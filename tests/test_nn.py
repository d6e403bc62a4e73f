"""minijax.nn: activations, softmax and friends, one_hot, standardize, initializers.

Each function is checked against a NumPy reference formula in float64 on
hypothesis inputs, for its stable numerics at extreme inputs (softmax of
1000, logsumexp of -inf), for JAX's custom derivatives (relu' (0) = 0,
relu6' (6) = 0, finite softplus' at inf), and for composing with jit, vmap and
grad. Initializers: shapes, dtypes, the variance each one promises, and the
fan computation. (The bit-for-bit and jaxpr comparisons with JAX are in
test_nn_oracle.py.)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import nn, random
from minijax.nn import initializers
from minijax.nn.initializers import _compute_fans
from minijax.testing import check_grads

NDArray = np.ndarray[Any, Any]


def _erf(x: NDArray) -> NDArray:
    return np.asarray(np.vectorize(math.erf)(x), np.float64)


def _softplus(x: NDArray) -> NDArray:
    return np.logaddexp(x, 0.0)


def _sigmoid(x: NDArray) -> NDArray:
    return 1 / (1 + np.exp(-x))


# name -> (reference on float64 values, the tolerance for float32 results)
REFERENCES: dict[str, Callable[[NDArray], NDArray]] = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": _sigmoid,
    "log_sigmoid": lambda x: -_softplus(-x),
    "softplus": _softplus,
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "silu": lambda x: x * _sigmoid(x),
    "swish": lambda x: x * _sigmoid(x),
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0))),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "identity": lambda x: x,
    "tanh": np.tanh,
    "gelu": lambda x: x / 2 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
}

# A fixed length: every example reuses the compiled function (the XLA backend compiles per shape).
values = st.lists(st.floats(-30, 30, width=32), min_size=6, max_size=6)


@pytest.mark.parametrize("name", sorted(REFERENCES))
@given(xs=values)
def test_activation_matches_its_formula(name: str, xs: list[float]) -> None:
    x = np.asarray(xs, np.float32)
    out = getattr(nn, name)(jnp.asarray(x))
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(np.asarray(out), REFERENCES[name](x.astype(np.float64)), rtol=2e-5, atol=2e-6)


@given(xs=values)
def test_gelu_exact_is_x_times_the_normal_cdf(xs: list[float]) -> None:
    x = np.asarray(xs, np.float32)
    expected = x.astype(np.float64) / 2 * (1 + _erf(x.astype(np.float64) / np.sqrt(2)))
    np.testing.assert_allclose(np.asarray(nn.gelu(x, approximate=False)), expected, rtol=2e-5, atol=2e-6)


def test_log1mexp_is_accurate_on_both_sides_of_log2() -> None:
    x = np.array([1e-6, 0.1, 0.69, 0.7, 5.0, 40.0], np.float32)
    x64 = x.astype(np.float64)
    # float64, each formula where it is exact: the float32 results must be relatively accurate everywhere.
    reference = np.where(x64 < np.log(2), np.log(-np.expm1(-x64)), np.log1p(-np.exp(-x64)))
    np.testing.assert_allclose(np.asarray(nn.log1mexp(x)), reference, rtol=1e-5)
    # The custom derivative g / expm1(x).
    np.testing.assert_allclose(float(jax.grad(nn.log1mexp)(0.5)), 1 / np.expm1(0.5), rtol=1e-6)


def test_glu_gates_the_first_half_by_the_second() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    np.testing.assert_allclose(np.asarray(nn.glu(x)), x[:, :2] * _sigmoid(x[:, 2:]), rtol=1e-6)
    y = x.reshape(4, 3)
    np.testing.assert_allclose(np.asarray(nn.glu(y, axis=0)), y[:2] * _sigmoid(y[2:]), rtol=1e-6)
    with pytest.raises(ValueError, match="divisible by 2"):
        nn.glu(jnp.ones(3))


def test_activations_accept_alpha_and_slope() -> None:
    x = jnp.array([-2.0, 0.5])
    np.testing.assert_allclose(np.asarray(nn.elu(x, alpha=2.0)), [2 * np.expm1(-2.0), 0.5], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.celu(x, alpha=0.5)), [0.5 * np.expm1(-4.0), 0.5], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.leaky_relu(x, negative_slope=0.2)), [-0.4, 0.5], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.squareplus(x, b=0.0)), [0.0, 0.5], atol=1e-7)


def test_activation_dtypes_follow_the_input() -> None:
    for dt, names in ((jnp.bfloat16, ("relu", "gelu", "softplus")), (jnp.float16, ("silu", "elu", "selu", "mish"))):
        x = jnp.ones(3, dt)
        for name in names:
            assert getattr(nn, name)(x).dtype == dt, name
    # Integers: relu keeps them, gelu promotes to the default float.
    assert nn.relu(jnp.arange(3)).dtype == np.int32
    assert nn.gelu(jnp.arange(3)).dtype == np.float32
    assert nn.relu(2.0).weak_type
    with pytest.raises(TypeError):
        nn.silu(jnp.arange(3))  # logistic rejects integers, as in JAX
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        nn.soft_sign([1.0, 2.0])


# ---------------------------------------------------------------------------
# Custom derivatives


def test_relu_derivative_at_zero_is_zero() -> None:
    assert float(jax.grad(nn.relu)(0.0)) == 0.0
    np.testing.assert_array_equal(np.asarray(jax.vmap(jax.grad(nn.relu))(jnp.array([-1.0, 0.0, 2.0]))), [0.0, 0.0, 1.0])


def test_relu6_derivative_is_zero_at_both_kinks() -> None:
    grads = jax.vmap(jax.grad(nn.relu6))(jnp.array([-1.0, 0.0, 3.0, 6.0, 7.0]))
    np.testing.assert_array_equal(np.asarray(grads), [0.0, 0.0, 1.0, 0.0, 0.0])


def test_gradients_stay_finite_at_extreme_inputs() -> None:
    assert float(jax.grad(nn.softplus)(jnp.inf)) == 1.0
    assert float(jax.grad(nn.softplus)(-1000.0)) == 0.0
    assert float(jax.grad(nn.elu)(100.0)) == 1.0  # expm1 never sees the large input
    assert float(jax.grad(nn.log_sigmoid)(-1000.0)) == 1.0
    assert float(jax.grad(nn.silu)(-1000.0)) == 0.0


@pytest.mark.parametrize("name", ["sigmoid", "softplus", "silu", "mish", "elu", "gelu", "soft_sign", "squareplus", "log_sigmoid", "celu", "selu"])
def test_smooth_activation_gradients_match_finite_differences(name: str) -> None:
    x = jnp.array([-2.5, -0.7, 0.3, 1.9], jnp.float32)
    check_grads(jax.jit(getattr(nn, name)), (x,), order=1, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)


# ---------------------------------------------------------------------------
# softmax, log_softmax, logsumexp


matrices = st.integers(0, 2**31 - 1).map(lambda s: np.random.default_rng(s).normal(0, 10, (3, 4)).astype(np.float32))


def _np_softmax(x: NDArray, axis: Any) -> NDArray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return np.asarray(e / e.sum(axis=axis, keepdims=True))


@given(x=matrices, axis=st.sampled_from([-1, 0, (0, 1), None]))
def test_softmax_matches_its_formula_and_sums_to_one(x: NDArray, axis: Any) -> None:
    out = np.asarray(nn.softmax(x, axis=axis))
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out, _np_softmax(x64, axis), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out.sum(axis=axis), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(nn.log_softmax(x, axis=axis)), np.log(_np_softmax(x64, axis)), rtol=1e-4, atol=1e-4)


def test_softmax_is_stable_for_large_inputs() -> None:
    np.testing.assert_allclose(np.asarray(nn.softmax(jnp.array([1000.0, 0.0, -1000.0]))), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(np.asarray(nn.log_softmax(jnp.array([1000.0, 1000.0]))), [-np.log(2)] * 2, rtol=1e-6)
    np.testing.assert_allclose(float(nn.logsumexp(jnp.array([1000.0, 1000.0]))), 1000 + np.log(2), rtol=1e-6)


def test_softmax_where_masks_elements() -> None:
    x = jnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = jnp.array([[True, False, True], [False, False, True]])
    out = np.asarray(nn.softmax(x, where=mask))
    np.testing.assert_allclose(out[0], [np.exp(-2) / (1 + np.exp(-2)), 0, 1 / (1 + np.exp(-2))], rtol=1e-6)
    np.testing.assert_allclose(out[1], [0, 0, 1])
    log_out = np.asarray(nn.log_softmax(x, where=mask))
    assert np.isneginf(log_out[0, 1]) and np.isneginf(log_out[1, 0])
    np.testing.assert_allclose(log_out[0, 2], np.log(out[0, 2]), rtol=1e-6)


def test_softmax_gradient_is_jacobian_vector_product() -> None:
    x = jnp.array([0.1, -2.0, 1.5])
    y = np.asarray(nn.softmax(x))
    jac = np.asarray(jax.jit(jax.jacobian(nn.softmax))(x))
    np.testing.assert_allclose(jac, np.diag(y) - np.outer(y, y), rtol=1e-5, atol=1e-7)
    check_grads(jax.jit(lambda v: nn.log_softmax(v)[1]), (x,), order=1, atol=1e-2, rtol=1e-2)


@given(x=matrices, axis=st.sampled_from([None, 0, 1, (0, 1), -1]), keepdims=st.booleans())
def test_logsumexp_matches_its_formula(x: NDArray, axis: Any, keepdims: bool) -> None:
    x64 = x.astype(np.float64)
    m = x64.max(axis=axis, keepdims=True)
    expected = np.log(np.exp(x64 - m).sum(axis=axis, keepdims=True)) + m
    if not keepdims:
        expected = expected.squeeze(axis=axis) if axis is not None else expected.reshape(())
    out = nn.logsumexp(x, axis=axis, keepdims=keepdims)
    assert out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


def test_logsumexp_with_b_and_signs() -> None:
    a = jnp.array([0.0, 1.0, 2.0])
    b = jnp.array([1.0, -1.0, 0.5])
    expected = np.sum(np.array([1.0, -1.0, 0.5]) * np.exp([0.0, 1.0, 2.0]))
    out, sign = nn.logsumexp(a, b=b, return_sign=True)
    np.testing.assert_allclose(float(out), np.log(abs(expected)), rtol=1e-6)
    assert float(sign) == np.sign(expected)
    # A negative sum without return_sign is NaN.
    assert np.isnan(float(nn.logsumexp(a, b=jnp.array([-1.0, 0.0, 0.0]))))
    # b == 0 removes an element entirely, even an infinite one.
    assert float(nn.logsumexp(jnp.array([jnp.inf, 0.0]), b=jnp.array([0.0, 1.0]))) == 0.0


def test_logsumexp_of_all_minus_infinity_is_minus_infinity() -> None:
    assert np.isneginf(float(nn.logsumexp(jnp.array([-jnp.inf, -jnp.inf]))))
    out = nn.logsumexp(jnp.array([[-jnp.inf, 1.0], [-jnp.inf, -jnp.inf]]), axis=1)
    np.testing.assert_allclose(np.asarray(out), [1.0, -np.inf])
    assert float(nn.logsumexp(jnp.array([jnp.inf, 1.0]))) == np.inf


def test_logsumexp_where_and_its_gradient() -> None:
    x = jnp.array([1.0, 50.0, 2.0])
    mask = jnp.array([True, False, True])
    np.testing.assert_allclose(float(nn.logsumexp(x, where=mask)), np.logaddexp(1.0, 2.0), rtol=1e-6)
    g = np.asarray(jax.grad(lambda v: nn.logsumexp(v))(x))
    np.testing.assert_allclose(g, np.asarray(nn.softmax(x)), rtol=1e-6)
    np.testing.assert_allclose(float(nn.logmeanexp(x, where=mask)), np.logaddexp(1.0, 2.0) - np.log(2), rtol=1e-6)
    assert nn.logsumexp(jnp.arange(3)).dtype == np.float32  # integers promote to float
    with pytest.raises(ValueError, match="duplicate value"):
        nn.logsumexp(x, axis=(0, 0))


# ---------------------------------------------------------------------------
# one_hot and standardize


def test_one_hot_values_axes_and_dtypes() -> None:
    np.testing.assert_array_equal(np.asarray(nn.one_hot(jnp.array([0, 2, -1, 3]), 3)), np.eye(3)[[0, 2]].tolist() + [[0, 0, 0]] * 2)
    out = nn.one_hot(jnp.array([[0, 1], [2, 0]]), 3, axis=0, dtype=jnp.int32)
    assert out.shape == (3, 2, 2) and out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out)[:, 1, 0], [0, 0, 1])
    assert nn.one_hot(jnp.arange(2), 4, axis=-2).shape == (4, 2)
    assert nn.one_hot(jnp.arange(2), 4).dtype == np.float32
    with pytest.warns(DeprecationWarning, match="integer-typed"):
        np.testing.assert_array_equal(np.asarray(nn.one_hot(jnp.array([1.0]), 2)), [[0.0, 1.0]])


def test_one_hot_under_jit_and_over_a_named_axis() -> None:
    out = jax.jit(lambda x: nn.one_hot(x, 3))(jnp.array([2, 0]))
    np.testing.assert_array_equal(np.asarray(out), [[0, 0, 1], [1, 0, 0]])
    named = jax.vmap(lambda x: nn.one_hot(x, 3, axis="i"), axis_name="i")(jnp.array([0, 2, 1]))
    np.testing.assert_array_equal(np.asarray(named), [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="num_classes to match"):
        jax.vmap(lambda x: nn.one_hot(x, 2, axis="i"), axis_name="i")(jnp.array([0, 2, 1]))


def test_standardize_gives_zero_mean_unit_variance() -> None:
    x = np.random.default_rng(0).normal(3, 5, (4, 6)).astype(np.float32)
    for algorithm in ("fast", "stable"):
        out = np.asarray(nn.standardize(x, algorithm=algorithm))
        np.testing.assert_allclose(out.mean(-1), 0, atol=1e-5)
        np.testing.assert_allclose(out.var(-1), 1, rtol=1e-3)
    out = np.asarray(nn.standardize(x, axis=0, mean=0.0, variance=1.0, epsilon=0.0))
    np.testing.assert_allclose(out, x, rtol=1e-6)
    mask = np.ones((4, 6), bool)
    mask[:, 0] = False
    masked = np.asarray(nn.standardize(x, where=mask))
    np.testing.assert_allclose(masked[:, 1:].mean(-1), 0, atol=1e-5)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        nn.standardize(x, algorithm="slow")


# ---------------------------------------------------------------------------
# Transformations


def test_nn_functions_compose_with_jit_vmap_and_grad() -> None:
    x = jnp.array([[0.5, -1.0, 2.0], [3.0, 0.0, -0.25]])

    def loss(v: Any) -> Any:
        return jnp.sum(nn.log_softmax(nn.gelu(v) + nn.relu(v)) * nn.one_hot(jnp.array([0, 2]), 3))

    g = jax.grad(loss)(x)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(x)), np.asarray(g), rtol=1e-6)
    per_row = jax.jit(jax.vmap(lambda r: nn.softmax(r)))(x)
    np.testing.assert_allclose(np.asarray(per_row), np.asarray(nn.softmax(x)), rtol=1e-6)
    hess = jax.jit(jax.hessian(lambda v: nn.logsumexp(v)))(jnp.array([0.0, 1.0]))
    p = np.asarray(nn.softmax(jnp.array([0.0, 1.0])))
    np.testing.assert_allclose(np.asarray(hess), np.diag(p) - np.outer(p, p), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------------------
# Initializers


KEY = random.PRNGKey(0)


@pytest.mark.parametrize(
    ("builder", "variance"),
    [
        (initializers.glorot_normal(), 2 / (200 + 300)),
        (initializers.glorot_uniform(), 2 / (200 + 300)),
        (initializers.he_normal(), 2 / 200),
        (initializers.he_uniform(), 2 / 200),
        (initializers.lecun_normal(), 1 / 200),
        (initializers.lecun_uniform(), 1 / 200),
        (initializers.variance_scaling(3.0, "fan_out", "normal"), 3 / 300),
        (initializers.variance_scaling(1.0, "fan_geo_avg", "uniform"), 1 / np.sqrt(200 * 300)),
        (initializers.normal(0.5), 0.25),
    ],
)
def test_initializer_has_the_promised_variance(builder: Any, variance: float) -> None:
    w = builder(KEY, (200, 300))
    assert w.shape == (200, 300) and w.dtype == np.float32 and not w.weak_type
    arr = np.asarray(w, np.float64)
    assert abs(arr.mean()) < 0.05 * math.sqrt(variance) + 1e-3
    np.testing.assert_allclose(arr.var(), variance, rtol=0.05)


def test_uniform_and_truncated_ranges() -> None:
    u = np.asarray(initializers.uniform(2.0)(KEY, (1000,)))
    assert u.min() >= 0 and u.max() < 2.0 and u.max() > 1.9
    t = np.asarray(initializers.truncated_normal(1.0, lower=-1.0, upper=0.5)(KEY, (1000,)))
    assert t.min() >= -1.0 and t.max() <= 0.5
    vs = np.asarray(initializers.variance_scaling(1.0, "fan_in", "truncated_normal")(KEY, (100, 50)))
    bound = 2 * math.sqrt(1 / 100) / 0.87962566103423978
    assert np.abs(vs).max() <= bound * (1 + 1e-6)


def test_constant_zeros_ones_and_dtypes() -> None:
    np.testing.assert_array_equal(np.asarray(initializers.zeros(KEY, (2, 3))), np.zeros((2, 3)))
    ones = initializers.ones(KEY, (2,), jnp.int32)
    assert ones.dtype == np.int32 and np.asarray(ones).tolist() == [1, 1]
    c = initializers.constant(3.5, jnp.float16)(KEY, (2, 2))
    assert c.dtype == np.float16 and float(c[0, 0]) == 3.5
    assert initializers.constant(2)(KEY, (1,)).dtype == np.float32
    assert initializers.he_normal(dtype=jnp.bfloat16)(KEY, (4, 4)).dtype == jnp.bfloat16
    assert initializers.normal()(KEY, (3,), jnp.float16).dtype == np.float16
    assert isinstance(initializers.he_uniform(), initializers.Initializer)


def test_initializers_are_deterministic_and_jittable() -> None:
    init = initializers.glorot_uniform()
    np.testing.assert_array_equal(np.asarray(init(KEY, (3, 4))), np.asarray(jax.jit(lambda k: init(k, (3, 4)))(KEY)))
    assert not np.array_equal(np.asarray(init(KEY, (3, 4))), np.asarray(init(random.PRNGKey(1), (3, 4))))


def test_compute_fans() -> None:
    assert _compute_fans((3, 4)) == (3.0, 4.0)
    # A conv kernel (H, W, in, out): the spatial axes multiply both fans.
    assert _compute_fans((5, 5, 3, 8)) == (75.0, 200.0)
    assert _compute_fans((2, 3, 4, 5), in_axis=1, out_axis=(2, 3), batch_axis=0) == (3.0, 20.0)
    with pytest.raises(ValueError, match="default in_axis"):
        initializers.glorot_normal()(KEY, (3,))
    with pytest.raises(ValueError, match="invalid mode"):
        initializers.variance_scaling(1.0, "fan_mid", "normal")(KEY, (3, 3))
    with pytest.raises(ValueError, match="invalid distribution"):
        initializers.variance_scaling(1.0, "fan_in", "cauchy")(KEY, (3, 3))


def test_orthogonal_initializers() -> None:
    q = np.asarray(initializers.orthogonal(scale=2.0)(KEY, (3, 5)), np.float64)
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(3), atol=1e-5)
    k = np.asarray(initializers.delta_orthogonal()(KEY, (3, 3, 4)), np.float64)
    np.testing.assert_allclose(k[1] @ k[1].T, np.eye(3), atol=1e-5)
    assert not k[0].any() and not k[2].any()


def test_orthogonal_argument_errors() -> None:
    with pytest.raises(ValueError, match="at least a 2D"):
        initializers.orthogonal()(KEY, (3,))
    np.testing.assert_array_equal(np.asarray(initializers.orthogonal()(KEY, (0, 3))), np.zeros((0, 3)))
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        initializers.delta_orthogonal()(KEY, (3, 3))
    with pytest.raises(ValueError, match="fan_in"):
        initializers.delta_orthogonal()(KEY, (3, 5, 4))
    with pytest.raises(TypeError, match="`out_sharding` argument of constant only supports"):
        initializers.constant(1.0)(KEY, (2,), out_sharding="x")


def test_no_warnings_from_ordinary_calls() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.one_hot(jnp.arange(3), 3)
        nn.softmax(jnp.ones(3))
        nn.logsumexp(jnp.ones(3), b=jnp.ones(3))
