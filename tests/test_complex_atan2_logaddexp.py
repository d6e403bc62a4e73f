"""Complex operands of lax.atan2 and jnp.logaddexp/logaddexp2 (issue 21), on
each backend, under jit, vmap and grad; values against NumPy formulas in
complex128 (the oracle file test_complex_more_oracle.py compares with JAX)."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import enable_x64

RNG = np.random.default_rng(21)
X = (RNG.normal(size=12) + 1j * RNG.normal(size=12)) * 2
Y = (RNG.normal(size=12) + 1j * RNG.normal(size=12)) * 2


def ref_atan2(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return -1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))


def test_atan2_complex_values_jit_vmap() -> None:
    with enable_x64(True):
        want = ref_atan2(X, Y)
        for fn in (lax.atan2, jax.jit(lax.atan2), jax.vmap(lax.atan2)):
            got = np.asarray(fn(X, Y))
            assert got.dtype == np.complex128
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    got64 = np.asarray(lax.atan2(X.astype(np.complex64), Y.astype(np.complex64)))
    assert got64.dtype == np.complex64
    np.testing.assert_allclose(got64, want, rtol=2e-5, atol=2e-6)


def test_atan2_complex_grad_is_the_holomorphic_derivative() -> None:
    with enable_x64(True):
        x, y = 1.0 + 2.0j, 0.5 - 1.0j
        dx = jax.grad(lambda a: lax.atan2(a, y), holomorphic=True)(x)
        dy = jax.grad(lambda b: lax.atan2(x, b), holomorphic=True)(y)
        h = 1e-6
        num_dx = (ref_atan2(np.array(x + h), np.array(y)) - ref_atan2(np.array(x - h), np.array(y))) / (2 * h)
        num_dy = (ref_atan2(np.array(x), np.array(y + h)) - ref_atan2(np.array(x), np.array(y - h))) / (2 * h)
        np.testing.assert_allclose(complex(dx), complex(num_dx), rtol=1e-7)
        np.testing.assert_allclose(complex(dy), complex(num_dy), rtol=1e-7)


def test_atan2_still_refuses_integers() -> None:
    with pytest.raises(
        TypeError,
        match="atan2 does not accept dtype int32 at position 0. Accepted dtypes at position 0 are subtypes of floating, complexfloating",
    ):
        lax.atan2(np.int32(1), np.int32(2))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_complex_values(name: str) -> None:
    fn = getattr(jnp, name)
    with enable_x64(True):
        if name == "logaddexp":
            want = np.log(np.exp(X) + np.exp(Y))
        else:
            want = np.log2(np.exp2(X) + np.exp2(Y))
        for f in (fn, jax.jit(fn), jax.vmap(fn)):
            got = np.asarray(f(X, Y))
            assert got.dtype == np.complex128
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        # No overflow where exp does: the larger operand dominates.
        big = np.asarray(fn(np.array([1000 + 3j]), np.array([-1000 - 3j])))
        np.testing.assert_allclose(big, [1000 + 3j])
    assert np.asarray(fn(np.complex64(1 + 1j), 2.0)).dtype == np.complex64


def test_logaddexp_complex_grad_and_inf_operands() -> None:
    with enable_x64(True):
        x, y = 1.0 + 2.0j, 0.5 - 1.0j
        d = jax.grad(lambda a: jnp.logaddexp(a, y), holomorphic=True)(x)
        # d/dx log(e^x + e^y) = e^x / (e^x + e^y)
        np.testing.assert_allclose(complex(d), np.exp(x) / (np.exp(x) + np.exp(y)), rtol=1e-12)
        # grad of the real part is the derivative itself here, as JAX gives it.
        g = jax.grad(lambda a: jnp.real(jnp.logaddexp(a, y)))(x)
        np.testing.assert_allclose(complex(g), complex(d), rtol=1e-12)
        out = np.asarray(jnp.logaddexp(np.array([-np.inf + 0j, np.inf + 0j]), np.array([1.0 + 0j, 1.0 + 0j])))
        assert out[0] == 1.0 and np.isnan(out[1])  # JAX's values: +inf's delta is inf - inf
