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


# --- the rest of jax.scipy.special (issue 21) ------------------------------------------------

A = np.array([0.5, 1.0, 2.5, 7.0, 30.0, 0.2], np.float32)
B = np.array([2.0, 0.5, 3.0, 1.0, 12.0, 40.0], np.float32)
P = np.array([1e-20, 1e-6, 0.02, 0.3, 0.5, 0.999], np.float32)
T = np.array([-30.0, -12.0, -3.0, 0.0, 4.0, 9.0], np.float32)


@pytest.mark.parametrize(
    ("name", "args", "rtol"),
    [
        ("gammainc", (A, B), 2e-5),
        ("gammaincc", (A, B), 2e-5),
        ("betainc", (A, B, P), 2e-5),
        ("betaln", (A, B), 2e-5),
        ("ndtr", (T,), 2e-5),
        ("ndtri", (P,), 2e-5),
        ("log_ndtr", (T,), 2e-5),
        ("gammasgn", (T - 0.5,), 0),
        ("zeta", (A + 1.5, B), 2e-5),
        ("i0e", (T,), 2e-5),
        ("i1e", (T,), 2e-5),
        ("i0", (A,), 2e-5),
        ("i1", (-A,), 2e-5),
        ("rel_entr", (A, B), 2e-5),
        ("kl_div", (A, B), 2e-5),
        ("boxcox", (B, A - 1), 2e-5),
        ("boxcox1p", (B, A - 1), 2e-5),
        ("loggamma", (A,), 2e-5),
        ("factorial", (np.array([0.0, 1.0, 4.0, 10.0, -1.0, 2.5], np.float32),), 2e-5),
        ("erfcx", (T / 4,), 2e-5),
        ("expi", (T + 0.5,), 2e-5),  # not 0, where JAX gives NaN and scipy -inf
        ("exp1", (A,), 2e-5),
    ],
)
def test_new_functions_match_scipy(name: str, args: tuple[np.ndarray, ...], rtol: float) -> None:
    got = np.asarray(getattr(special, name)(*args))
    assert got.dtype == np.float32
    want = getattr(scipy_special, name)(*(a.astype(np.float64) for a in args))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6 if rtol else 0)


def test_gamma_beta_comb_poch_polygamma_multigammaln_match_scipy() -> None:
    np.testing.assert_allclose(np.asarray(special.gamma(T[2:] + 0.5)), scipy_special.gamma(T[2:] + 0.5), rtol=1e-5)
    np.testing.assert_allclose(float(special.beta(2.0, 3.0)), 1 / 12, rtol=1e-5)
    np.testing.assert_allclose(float(special.comb(10.0, 3.0)), 120.0, rtol=1e-5)
    np.testing.assert_allclose(float(special.comb(10.0, 3.0, repetition=True)), 220.0, rtol=1e-5)
    np.testing.assert_allclose(float(special.poch(3.0, 2.0)), 12.0, rtol=1e-5)
    np.testing.assert_allclose(float(special.polygamma(2, 1.5)), scipy_special.polygamma(2, 1.5), rtol=1e-5)
    np.testing.assert_allclose(float(special.multigammaln(3.5, 3)), scipy_special.multigammaln(3.5, 3), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(special.bernoulli(8)), scipy_special.bernoulli(8), rtol=1e-6)


def test_custom_derivatives_of_the_new_functions() -> None:
    # log_ndtr's rule keeps the far tail finite: d/dx log ndtr(x) ~ -x there.
    np.testing.assert_allclose(float(jax.grad(special.log_ndtr)(-30.0)), 30.0333, rtol=1e-4)
    # ndtri's derivative is 1 / pdf(ndtri(p)).
    x = float(special.ndtri(0.2))
    np.testing.assert_allclose(float(jax.grad(special.ndtri)(0.2)), np.sqrt(2 * np.pi) * np.exp(x * x / 2), rtol=1e-4)
    # zeta is differentiable in both operands (d/dq = -x zeta(x + 1, q)).
    np.testing.assert_allclose(
        float(jax.grad(special.zeta, argnums=1)(3.0, 2.0)), -3 * scipy_special.zeta(4.0, 2.0), rtol=1e-4
    )
    # gammainc in x is the gamma density.
    np.testing.assert_allclose(float(jax.grad(special.gammainc, argnums=1)(2.0, 1.5)), 1.5 * np.exp(-1.5), rtol=1e-5)
    assert float(jax.jit(jax.vmap(special.gammainc))(A, B)[2]) == pytest.approx(
        scipy_special.gammainc(2.5, 3.0), rel=1e-5
    )
