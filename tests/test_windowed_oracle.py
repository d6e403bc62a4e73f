"""Windowed reductions (pooling) and their derivatives against real JAX 0.10.2 (the oracle).

The same program, written once against a (jax, lax, jnp) triple, runs under
JAX and under minijax: the printed jaxprs must be identical, and the values
(forward, jvp, grad) agree on the same inputs, on both minijax backends --
max, average and sum pooling on 2-D NHWC, 1-D and 3-D inputs, strided,
padded (by name and explicitly) and dilated; the generic reduce_window,
variadic too. Errors: the same type and message. Run where JAX is installed:
    /work/venv-oracle/bin/python -m pytest -m oracle tests/test_windowed_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy  # noqa: E402, F811  (jax.numpy as an attribute of jax)

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402
from minijax.config import config  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")


class Lib(NamedTuple):
    jax: Any
    lax: Any
    jnp: Any


JAX = Lib(jax, jax.lax, jax.numpy)
MINI = Lib(minijax, minijax.lax, minijax.numpy)

Program = Callable[..., Any]
F32 = np.float32


def _max_pool(m: Lib, x: Any, window: Any, strides: Any, padding: Any, **dil: Any) -> Any:
    return m.lax.reduce_window(x, -np.inf, m.lax.max, window, strides, padding, **dil)


def _avg_pool(m: Lib, x: Any, window: Any, strides: Any, padding: Any, **dil: Any) -> Any:
    return m.lax.reduce_window(x, 0.0, m.lax.add, window, strides, padding, **dil) / float(np.prod(window))


NHWC = (2, 6, 6, 3)
W2 = (1, 2, 2, 1)

# name -> (program of (lib, x), shape of x)
POOLS: dict[str, tuple[Program, tuple[int, ...]]] = {
    "max_2d_nhwc_2x2_s2": (lambda m, x: _max_pool(m, x, W2, W2, "VALID"), NHWC),
    "max_2d_nhwc_3x3_s2_same": (lambda m, x: _max_pool(m, x, (1, 3, 3, 1), W2, "SAME"), (2, 7, 5, 3)),
    "max_2d_nhwc_same_lower": (lambda m, x: _max_pool(m, x, (1, 2, 3, 1), (1, 1, 2, 1), "SAME_LOWER"), NHWC),
    "max_2d_explicit_pad_base_dilation": (lambda m, x: _max_pool(m, x, (1, 2, 2, 1), (1, 1, 1, 1),
                                                                ((0, 0), (1, 0), (0, 2), (0, 0)),
                                                                base_dilation=(1, 2, 1, 1)), NHWC),
    "max_1d_strided": (lambda m, x: _max_pool(m, x, (3,), (2,), "SAME"), (9,)),
    "max_3d": (lambda m, x: _max_pool(m, x, (1, 2, 2, 2, 1), (1, 2, 2, 2, 1), "VALID"), (2, 4, 4, 4, 2)),
    "min_2d": (lambda m, x: m.lax.reduce_window(x, np.inf, m.lax.min, W2, (1, 1, 1, 1), "SAME"), NHWC),
    "avg_2d_nhwc_2x2_s2": (lambda m, x: _avg_pool(m, x, W2, W2, "VALID"), NHWC),
    "avg_2d_same_window_dilation": (lambda m, x: _avg_pool(m, x, (1, 2, 2, 1), (1, 1, 1, 1), "SAME",
                                                          window_dilation=(1, 2, 2, 1)), NHWC),
    "avg_1d_base_dilation": (lambda m, x: _avg_pool(m, x, (3,), (1,), ((2, 1),), base_dilation=(2,)), (6,)),
    "avg_3d_strided_padded": (lambda m, x: _avg_pool(m, x, (2, 3, 2), (2, 1, 2), ((1, 0), (1, 1), (0, 1))), (4, 5, 4)),
    "sum_2d": (lambda m, x: m.lax.reduce_window(x, 0.0, m.lax.add, (2, 2), (1, 2), "SAME"), (5, 6)),
    "generic_prod": (lambda m, x: m.lax.reduce_window(x, 1.0, m.lax.mul, (2, 2), (1, 1), "SAME"), (4, 5)),
    "generic_add_with_a_non_identity_init": (lambda m, x: m.lax.reduce_window(x, 0.5, m.lax.add, (3,), (2,),
                                                                               ((1, 2),), base_dilation=(2,)), (5,)),
    "generic_variadic": (lambda m, x: m.lax.reduce_window((x, x * 2.0), (-np.inf, 0.0),
                                                          lambda a, b: (m.lax.max(a[0], b[0]), a[1] + b[1]),
                                                          (2, 2), (1, 1), "VALID")[1], (4, 5)),
}

# Programs whose gradient JAX has (not the generic reduce_window's).
DIFFERENTIABLE = [n for n in POOLS if not n.startswith("generic")]


def _input(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Pairwise distinct values (no ties: max pooling's derivative is defined) and moderate ones."""
    n = int(np.prod(shape))
    return ((np.random.default_rng(seed).permutation(n) - n / 2) * 0.25).reshape(shape).astype(F32)


@pytest.fixture(params=["numpy", "xla"])
def mini_backend(request: pytest.FixtureRequest) -> Any:
    previous = config.read("minijax_backend")
    config.update("minijax_backend", request.param)
    yield request.param
    config.update("minijax_backend", previous)


@pytest.mark.parametrize("name", list(POOLS))
def test_values_agree_with_jax(name, mini_backend):
    f, shape = POOLS[name]
    x = _input(shape)
    want = np.asarray(f(JAX, x))
    got = np.asarray(f(MINI, x))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(minijax.jit(lambda x: f(MINI, x))(x)), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", list(POOLS))
def test_jaxprs_are_printed_as_jax_prints_them(name):
    f, shape = POOLS[name]
    x = _input(shape)
    assert str(minijax.make_jaxpr(lambda x: f(MINI, x))(x)) == str(jax.make_jaxpr(lambda x: f(JAX, x))(x))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_and_their_jaxprs_agree_with_jax(name, mini_backend):
    f, shape = POOLS[name]
    x = _input(shape)

    def loss(m: Lib) -> Program:
        return lambda x: m.jnp.sum(m.jnp.sin(f(m, x)))

    want = np.asarray(jax.grad(loss(JAX))(x))
    np.testing.assert_allclose(np.asarray(minijax.grad(loss(MINI))(x)), want, rtol=1e-5, atol=1e-6)
    assert str(minijax.make_jaxpr(minijax.grad(loss(MINI)))(x)) == str(jax.make_jaxpr(jax.grad(loss(JAX)))(x))


@pytest.mark.parametrize("name", list(POOLS))
def test_jvps_agree_with_jax(name, mini_backend):
    f, shape = POOLS[name]
    x, t = _input(shape), _input(shape, seed=1)
    want = jax.jvp(lambda x: f(JAX, x), (x,), (t,))
    got = minijax.jvp(lambda x: f(MINI, x), (x,), (t,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    text = str(minijax.make_jaxpr(lambda x, t: minijax.jvp(lambda x: f(MINI, x), (x,), (t,)))(x, t))
    assert text == str(jax.make_jaxpr(lambda x, t: jax.jvp(lambda x: f(JAX, x), (x,), (t,)))(x, t))


@pytest.mark.parametrize("window,strides,padding", [(W2, W2, "SAME"), (W2, (1, 1, 1, 1), "VALID"), ((1, 3, 3, 1), W2, "SAME")])
def test_max_pooling_ties_send_the_gradient_where_jax_does(window, strides, padding, mini_backend):
    x = np.array([[[[1.0], [3.0], [3.0], [0.0]], [[3.0], [3.0], [2.0], [2.0]], [[0.0], [0.0], [2.0], [2.0]]]], F32)

    def pool(m: Lib) -> Program:
        return lambda x: _max_pool(m, x, window, strides, padding)

    want = jax.grad(lambda x: pool(JAX)(x).sum())(x)
    got = minijax.grad(lambda x: pool(MINI)(x).sum())(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    t = np.arange(x.size, dtype=F32).reshape(x.shape)
    want_t = jax.jvp(pool(JAX), (x,), (t,))[1]
    got_t = minijax.jvp(pool(MINI), (x,), (t,))[1]
    np.testing.assert_array_equal(np.asarray(got_t), np.asarray(want_t))


def test_vmap_of_pooling_gradients_agrees_with_jax(mini_backend):
    x = _input((3, 6, 5))

    def per_example(m: Lib) -> Program:
        return m.jax.vmap(m.jax.grad(lambda x: m.jnp.sum(_max_pool(m, x, (2, 2), (2, 1), "SAME") ** 2)))

    np.testing.assert_allclose(np.asarray(per_example(MINI)(x)), np.asarray(per_example(JAX)(x)), rtol=1e-6)
    assert str(minijax.make_jaxpr(per_example(MINI))(x)) == str(jax.make_jaxpr(per_example(JAX))(x))


X = np.ones((4, 4), F32)
ERRORS: list[Program] = [
    lambda m: m.lax.reduce_window(X, 0.0, m.lax.add, (2,), (1,), "VALID"),
    lambda m: m.lax.reduce_window(X, 0.0, m.lax.add, (2, 2), (0, 1), "VALID"),
    lambda m: m.lax.reduce_window(X, 0.0, m.lax.add, (0, 2), (1, 1), "VALID"),
    lambda m: m.lax.reduce_window(X, 0.0, m.lax.add, (2, 2), (1,), "VALID"),
    lambda m: m.lax.reduce_window(X, 0.0, m.lax.add, (2, 2), (1, 1), "VALID", base_dilation=(0, 1)),
    lambda m: m.lax.reduce_window(X, 0.0, m.lax.add, (2, 2), (1, 1), "VALID", window_dilation=(1,)),
    lambda m: m.lax.reduce_window(X, 0.0, m.lax.add, (2, 2), (1.5, 1), "VALID"),
    lambda m: m.lax.reduce_window(X, 0.0, m.lax.add, (2, 2), (1, 1), "FOO"),
    lambda m: m.lax.reduce_window(X, np.ones(2, F32), m.lax.max, (2, 2), (1, 1), "VALID"),
    lambda m: m.lax.reduce_window((X, X), (0.0,), m.lax.max, (2, 2), (1, 1), "VALID"),
    lambda m: m.lax.reduce_window(np.ones((4, 4), bool), False, m.lax.add, (2, 2), (1, 1), "VALID"),
    lambda m: m.lax.reduce_window(X, 0.0, lambda a, b: (a + b, a), (2, 2), (1, 1), "VALID"),
    lambda m: m.lax.reduce_window(X, np.int32(1), m.lax.mul, (2, 2), (1, 1), "VALID"),
    lambda m: m.jax.grad(lambda x: m.lax.reduce_window(x, -np.inf, m.lax.max, (2, 2), (1, 1), "VALID",
                                                       window_dilation=(2, 1)).sum())(X),
    lambda m: m.jax.vmap(lambda i: m.lax.reduce_window(X[0], i, m.lax.mul, (2,), (1,), "VALID"))(X[0]),
]


def _error(call: Callable[[], Any]) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_are_jaxs(i):
    want_type, want_msg = _error(lambda: ERRORS[i](JAX))
    got_type, got_msg = _error(lambda: ERRORS[i](MINI))
    assert got_type.__name__ == want_type.__name__, (got_type, got_msg, want_type, want_msg)
    assert got_msg.rstrip() == want_msg.rstrip()


def test_a_window_larger_than_the_padded_input_is_empty_as_in_jax():
    for m in (JAX, MINI):
        out = m.lax.reduce_window(X, 0.0, m.lax.add, (5, 5), (1, 1), "VALID")
        assert out.shape == (0, 0)
    assert MINI.lax.reduce_window_shape_tuple((4, 4), (5, 2), (1, 1), ((0, 0), (0, 0))) == jax.lax.reduce_window_shape_tuple(
        (4, 4), (5, 2), (1, 1), ((0, 0), (0, 0)))
