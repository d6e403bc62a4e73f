"""lax.linalg.qdwh (the polar decomposition by the QR-based dynamically weighted Halley iteration, lax
operations as in JAX) and jax.scipy.linalg.polar(method='qdwh') on it, on both backends: the factors'
defining properties, the iteration count and convergence flag, jit and vmap, the errors.
tests/test_qdwh_oracle.py compares them with JAX."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.scipy.linalg as sl
from minijax.lax import linalg as lax_linalg

RNG = np.random.default_rng(0)


def _check_polar(x: np.ndarray, u: np.ndarray, h: np.ndarray, atol: float = 2e-5) -> None:
    n = x.shape[-1]
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(n), u.shape[:-2] + (n, n)), atol=atol)
    np.testing.assert_allclose(h, np.swapaxes(h, -1, -2), atol=atol)
    assert np.linalg.eigvalsh(h.astype(np.float64)).min() > -atol
    np.testing.assert_allclose(u @ h, x, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(5, 5), (7, 3), (1, 1)])
def test_qdwh_factors_and_convergence(shape: tuple[int, int]) -> None:
    x = RNG.normal(size=shape).astype(np.float32)
    u, h, num_iters, is_converged = lax_linalg.qdwh(x)
    assert (u.shape, h.shape, u.dtype, h.dtype) == (shape, shape[1:] * 2, np.float32, np.float32)
    _check_polar(x, np.asarray(u), np.asarray(h))
    assert num_iters.dtype == np.int32 and is_converged.dtype == np.bool_
    assert bool(is_converged) and 1 <= int(num_iters) <= 10
    # H is the positive square root of XᵀX
    w, v = np.linalg.eigh(x.T.astype(np.float64) @ x)
    np.testing.assert_allclose(np.asarray(h), (v * np.sqrt(np.maximum(w, 0))) @ v.T, rtol=1e-4, atol=1e-4)


def test_qdwh_iteration_limit_and_the_zero_matrix() -> None:
    x = RNG.normal(size=(4, 4)).astype(np.float32)
    _, _, num_iters, is_converged = lax_linalg.qdwh(x, max_iterations=1)
    assert (int(num_iters), bool(is_converged)) == (1, False)
    u, h, _, is_converged = lax_linalg.qdwh(np.zeros((3, 2), np.float32))
    assert not np.asarray(u).any() and not np.asarray(h).any() and bool(is_converged)
    # an ill-conditioned matrix (singular values 1 ... 1e-6) still converges within the 10 steps
    q1, _ = np.linalg.qr(RNG.normal(size=(6, 6)))
    q2, _ = np.linalg.qr(RNG.normal(size=(6, 6)))
    x = ((q1 * np.logspace(0, -6, 6)) @ q2.T).astype(np.float32)
    u, h, num_iters, is_converged = lax_linalg.qdwh(x)
    assert bool(is_converged)
    np.testing.assert_allclose(np.asarray(u).T @ np.asarray(u), np.eye(6), atol=1e-4)


def test_qdwh_under_jit_and_vmap() -> None:
    xs = RNG.normal(size=(3, 5, 4)).astype(np.float32)
    u, h, num_iters, is_converged = jax.jit(jax.vmap(lax_linalg.qdwh))(xs)
    assert u.shape == (3, 5, 4) and h.shape == (3, 4, 4) and num_iters.shape == (3,) and bool(is_converged.all())
    _check_polar(xs, np.asarray(u), np.asarray(h))
    u0, h0, n0, _ = lax_linalg.qdwh(xs[0])
    np.testing.assert_allclose(np.asarray(u[0]), np.asarray(u0), atol=1e-6)
    assert int(num_iters[0]) == int(n0)


def test_qdwh_errors() -> None:
    with pytest.raises(ValueError, match="M >= N"):
        lax_linalg.qdwh(np.ones((2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="dynamic_shape"):
        lax_linalg.qdwh(np.ones((3, 3), np.float32), dynamic_shape=(2, 2))


@pytest.mark.parametrize("side, shape", [("right", (2, 5, 3)), ("left", (3, 5))])
def test_polar_qdwh(side: str, shape: tuple[int, ...]) -> None:
    a = RNG.normal(size=shape).astype(np.float32)
    u, p = sl.polar(a, side=side)
    u, p = np.asarray(u), np.asarray(p)
    if side == "right":
        _check_polar(a, u, p)
    else:  # A = P U: Aᵀ = Uᵀ P
        _check_polar(np.swapaxes(a, -1, -2), np.swapaxes(u, -1, -2), p)
    u_svd, p_svd = sl.polar(a, side=side, method="svd")
    np.testing.assert_allclose(u, np.asarray(u_svd), atol=1e-4)
    np.testing.assert_allclose(p, np.asarray(p_svd), atol=1e-4)
