"""lax.linalg's Householder family and solvers against real JAX 0.10.2 (the oracle).

The printed jaxprs must be identical; values agree to float32 rounding on the
xla backend (the same LAPACK routines as JAX: gehrd, sytrd, gees, orgqr,
ormqr, gtsv, whose results are deterministic, Schur form included); so do
tridiagonal_solve's jvp and vjp, the dtypes and the errors. Run where JAX is
installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_lax_linalg_householder_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

R = np.random.default_rng(0)
A = R.standard_normal((4, 4)).astype(np.float32)
BATCH = R.standard_normal((2, 3, 3)).astype(np.float32)
SYM = (A + A.T) / 2
RECT = R.standard_normal((4, 3)).astype(np.float32)
TAUS = np.array([1.2, 0.4, 1.9], np.float32)
C = R.standard_normal((4, 2)).astype(np.float32)
DL, DU = R.standard_normal(4).astype(np.float32), R.standard_normal(4).astype(np.float32)
D = (R.standard_normal(4) + 4).astype(np.float32)
B = R.standard_normal((4, 2)).astype(np.float32)
UPPER = np.triu(A) + np.eye(4, dtype=np.float32)

# name -> (program(lax.linalg) -> function, arguments)
PROGRAMS: dict[str, tuple[Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = {
    "hessenberg": (lambda L: L.hessenberg, (A,)),
    "hessenberg_batch": (lambda L: L.hessenberg, (BATCH,)),
    "tridiagonal": (lambda L: L.tridiagonal, (SYM,)),
    "tridiagonal_upper": (lambda L: lambda x: L.tridiagonal(x, lower=False), (A,)),
    "schur": (lambda L: L.schur, (A,)),
    "schur_batch": (lambda L: L.schur, (BATCH,)),
    "schur_t_only": (lambda L: lambda x: L.schur(x, compute_schur_vectors=False), (A,)),
    "householder_product": (lambda L: L.householder_product, (RECT, TAUS)),
    "ormqr": (lambda L: L.ormqr, (RECT, TAUS, C)),
    "ormqr_right_t": (lambda L: lambda a, t, c: L.ormqr(a, t, c.T, left=False, transpose=True), (RECT, TAUS, C)),
    "symmetric_product": (lambda L: lambda a, c: L.symmetric_product(a, c, alpha=2.0, beta=0.5), (RECT, SYM)),
    "symmetric_product_sym": (lambda L: lambda a, c: L.symmetric_product(a, c, symmetrize_output=True), (RECT, SYM)),
    "cholesky_update": (lambda L: L.cholesky_update, (np.triu(UPPER), DL)),
    "tridiagonal_solve": (lambda L: L.tridiagonal_solve, (DL, D, DU, B)),
}


def _run(lib: Any, name: str) -> tuple[Any, ...]:
    program, args = PROGRAMS[name]
    return program(lib.lax.linalg), args


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jaxprs_print_as_jax(name: str) -> None:
    jf, args = _run(jax, name)
    mf, _ = _run(minijax, name)
    assert str(minijax.make_jaxpr(mf)(*args)) == str(jax.make_jaxpr(jf)(*args))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_dtypes_are_jaxs(name: str) -> None:
    jf, args = _run(jax, name)
    mf, _ = _run(minijax, name)
    want = jax.tree_util.tree_leaves(jf(*args))
    got = minijax.tree_util.tree_leaves(mf(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        w64 = np.asarray(w, np.float64)
        scale = max(1.0, float(np.abs(w64).max(initial=0.0)))
        np.testing.assert_allclose(np.asarray(g, np.float64), w64, rtol=1e-4, atol=1e-4 * scale)


def test_tridiagonal_solve_derivatives_are_jaxs() -> None:
    args = (DL, D, DU, B)
    tangents = tuple(R.standard_normal(x.shape).astype(np.float32) for x in args)
    _, jt = jax.jvp(jax.lax.linalg.tridiagonal_solve, args, tangents)
    _, mt = minijax.jvp(minijax.lax.linalg.tridiagonal_solve, args, tangents)
    np.testing.assert_allclose(np.asarray(mt), np.asarray(jt), rtol=1e-4, atol=1e-4)
    ct = np.ones_like(B)
    jg = jax.vjp(jax.lax.linalg.tridiagonal_solve, *args)[1](ct)
    mg = minijax.vjp(minijax.lax.linalg.tridiagonal_solve, *args)[1](ct)
    for g, w in zip(mg, jg):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-4)


def test_scipy_schur_and_hessenberg_are_jaxs() -> None:
    for jf, mf in (
        (jax.scipy.linalg.schur, minijax.scipy.linalg.schur),
        (lambda x: jax.scipy.linalg.hessenberg(x, calc_q=True), lambda x: minijax.scipy.linalg.hessenberg(x, calc_q=True)),
    ):
        for g, w in zip(mf(A), jf(A)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-4)


CALLS: list[Callable[[Any], Any]] = [
    lambda L: L.hessenberg(np.ones((2, 3), np.float32)),
    lambda L: L.hessenberg(np.ones((2, 2), np.int32)),
    lambda L: L.tridiagonal(np.ones((0, 0), np.float32)),
    lambda L: L.schur(np.ones((2, 3), np.float32)),
    lambda L: L.schur(np.eye(2, dtype=np.float32), sort_eig_vals=True),
    lambda L: L.householder_product(np.ones((2, 3), np.float32), np.ones(2, np.float32)),
    lambda L: L.householder_product(np.ones((3, 2), np.float32), np.ones(3, np.float32)),
    lambda L: L.householder_product(np.ones((3, 2), np.float32), np.ones(2, np.float16)),
    lambda L: L.ormqr(np.ones((3, 2), np.float32), np.ones(2, np.float32), np.ones((2, 4), np.float32)),
    lambda L: L.symmetric_product(np.ones((3, 2), np.float32), np.ones((2, 2), np.float32)),
    lambda L: L.symmetric_product(np.ones((3, 2), np.int32), np.ones((3, 3), np.int32)),
    lambda L: L.cholesky_update(np.eye(3, dtype=np.float32), np.ones(2, np.float32)),
    lambda L: L.cholesky_update(np.ones((2, 3, 3), np.float32), np.ones((2, 3), np.float32)),
    lambda L: L.tridiagonal_solve(DL, D, DU[:3], B),
    lambda L: L.tridiagonal_solve(DL, D, DU, B[:3]),
    lambda L: L.tridiagonal_solve(DL, D, DU, B[:, 0]),
    lambda L: L.tridiagonal_solve(DL.astype(np.float16), D, DU, B),
]


@pytest.mark.parametrize("index", range(len(CALLS)))
def test_errors_are_jaxs(index: int) -> None:
    call = CALLS[index]
    with pytest.raises(Exception) as want:
        call(jax.lax.linalg)
    with pytest.raises(Exception) as got:
        call(minijax.lax.linalg)
    assert type(got.value) is type(want.value)
    # minijax names the primitive in front of a shape error and adds the equation a lowering failed in.
    assert str(want.value) in str(got.value)


@pytest.mark.parametrize("prim", ["hessenberg", "tridiagonal", "schur", "householder_product", "symmetric_product"])
def test_no_derivatives_as_in_jax(prim: str) -> None:
    args = {"householder_product": (RECT, TAUS), "symmetric_product": (RECT, SYM)}.get(prim, (SYM,))
    for lib in (jax, minijax):
        f = getattr(lib.lax.linalg, prim)
        with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{prim}' not implemented"):
            lib.jvp(f, args, args)
