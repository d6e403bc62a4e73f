"""lax.linalg.tridiagonal_solve(perturb_singular=True) on both backends: jaxlib's perturbed elimination
(the NumPy reference written from its description; XLA calls the kernel, as JAX on CPU). A singular
system gets a finite solution where gtsv gives NaN; a regular one the same solution as without the
option; batches, jit, vmap and grad. tests/test_tridiagonal_solve_perturbed_oracle.py compares with JAX."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
from minijax.lax import linalg as lax_linalg

RNG = np.random.default_rng(0)


def _solve(dl, d, du, b, perturb=True):
    return np.asarray(lax_linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=perturb))


def test_regular_systems_are_solved_as_without_the_option() -> None:
    m = 6
    dl, du = RNG.normal(size=(2, 3, m)).astype(np.float32)
    d = (RNG.normal(size=(3, m)) + 4).astype(np.float32)
    b = RNG.normal(size=(3, m, 2)).astype(np.float32)
    got = _solve(dl, d, du, b)
    np.testing.assert_allclose(got, _solve(dl, d, du, b, perturb=False), rtol=1e-5, atol=1e-6)
    a = np.zeros((3, m, m), np.float32)
    idx = np.arange(m)
    a[:, idx, idx], a[:, idx[1:], idx[:-1]], a[:, idx[:-1], idx[1:]] = d, dl[:, 1:], du[:, :-1]
    np.testing.assert_allclose(a @ got, b, atol=1e-5)


def test_singular_systems_get_a_finite_solution() -> None:
    # rows 0 and 1 equal: singular; gtsv stops at the zero pivot (NaN), the perturbed solve does not
    dl = np.array([0, 1, 1], np.float32)
    d = np.array([1, 1, 1], np.float32)
    du = np.array([1, 1, 0], np.float32)
    du[1] = 0
    b = np.array([[1.0], [1.0], [2.0]], np.float32)
    assert np.isnan(_solve(dl, d, du, b, perturb=False)).all()
    x = _solve(dl, d, du, b)
    assert np.isfinite(x).all()
    # the equations the perturbation does not touch still hold: row 2 is x1 + x2 = 2
    assert float(x[1, 0] + x[2, 0]) == pytest.approx(2.0, abs=1e-3 * max(1.0, float(abs(x).max())))
    # the zero matrix: each pivot is pushed up from 0 until b / pivot no longer overflows
    z = _solve(np.zeros(3, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32), np.ones((3, 1), np.float32))
    assert np.isfinite(z).all() and (z > 1e30).all()
    one = _solve(np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.float32), np.ones((1, 1), np.float32))
    assert np.isfinite(one).all()


def test_under_jit_vmap_and_grad() -> None:
    m = 5
    dl, d, du = RNG.normal(size=(3, 4, m)).astype(np.float32)
    d = d + 3
    d[1, 2] = 0.0  # one batch element with a zero on the diagonal
    b = RNG.normal(size=(4, m, 1)).astype(np.float32)
    f = lambda *args: lax_linalg.tridiagonal_solve(*args, perturb_singular=True)  # noqa: E731
    direct = np.asarray(f(dl, d, du, b))
    np.testing.assert_allclose(np.asarray(jax.jit(f)(dl, d, du, b)), direct, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(dl, d, du, b)), direct, rtol=1e-6)
    # d/db of sum(x) is A^-T 1, the solution of the transposed system
    g = np.asarray(jax.grad(lambda rhs: f(dl[0], d[0], du[0], rhs).sum())(b[0]))
    shifted_dl = np.concatenate([[0], du[0, :-1]]).astype(np.float32)
    shifted_du = np.concatenate([dl[0, 1:], [0]]).astype(np.float32)
    np.testing.assert_allclose(g, _solve(shifted_dl, d[0], shifted_du, np.ones((m, 1), np.float32)), rtol=1e-4, atol=1e-5)
