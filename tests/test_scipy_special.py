"""minijax.scipy.special: values as scipy.special's, derivatives as JAX's custom rules give them."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
import minijax.scipy.special as special

scipy_special = pytest.importorskip("scipy.special", reason="scipy (the reference for these values) is not installed")

X = np.array([0.0, 0.25, 0.5, 1.0, 2.5], np.float32)
Y = np.array([0.0, 0.5, 2.0, 3.0, 1e-3], np.float32)


@pytest.mark.parametrize("name", ["expit", "logit", "erf", "erfc", "erfinv", "gammaln", "digamma", "entr"])
def test_unary_values_match_scipy(name: str) -> None:
    x = {"logit": X[1:4], "erfinv": X[:3], "gammaln": X[1:], "digamma": X[1:]}.get(name, X)
    got = np.asarray(getattr(special, name)(x))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, getattr(scipy_special, name)(x.astype(np.float64)), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_binary_values_match_scipy_including_the_zero_convention(name: str) -> None:
    got = np.asarray(getattr(special, name)(X, Y))
    np.testing.assert_allclose(got, getattr(scipy_special, name)(X.astype(np.float64), Y.astype(np.float64)), rtol=2e-6)
    assert float(getattr(special, name)(0.0, float("nan"))) != float(getattr(special, name)(0.0, float("nan")))  # NaN


def test_custom_derivatives() -> None:
    np.testing.assert_allclose(float(jax.grad(special.logit)(0.3)), 1 / (0.3 * 0.7), rtol=1e-6)
    np.testing.assert_allclose(float(jax.grad(special.entr)(0.5)), -(np.log(0.5) + 1), rtol=1e-6)
    dx, dy = jax.grad(special.xlogy, argnums=(0, 1))(2.0, 3.0)
    np.testing.assert_allclose([float(dx), float(dy)], [np.log(3.0), 2 / 3], rtol=1e-6)
    np.testing.assert_allclose(float(jax.grad(special.xlog1py, argnums=1)(2.0, 1.0)), 1.0, rtol=1e-6)


def test_logsumexp_and_softmax_are_nn_s() -> None:
    x = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(float(special.logsumexp(x)), scipy_special.logsumexp([1.0, 2.0, 3.0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(special.softmax(x)), np.asarray(jax.nn.softmax(x)))
    assert jax.scipy.special.log_softmax is jax.nn.log_softmax
