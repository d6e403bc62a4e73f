"""Complex linear algebra and the nonsymmetric eigenproblem against real JAX 0.10.2 (the oracle).

Each program is written once against a ``(jax, jnp)`` pair and runs under JAX
and under minijax (both backends) on complex (and, for ``eig``, real) matrices
drawn by hypothesis: the values agree within the decompositions' accuracy,
dtypes and shapes exactly. Eigenvectors and singular vectors are defined up to
a phase, so they are compared through phase-free quantities (|v|², u_j vh_j,
the residual of A v = λ v), and eigenvalues of ``eig`` as sorted sets.
Gradients of real-valued functions of complex matrices are JAX's (the conjugate
convention). Run where JAX is installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_linalg_complex_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy as jjnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402
import minijax.scipy.linalg as msl  # noqa: E402
from minijax.config import config_context  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

Libs = tuple[Any, Any, Any]
JAX: Libs = (jax, jjnp, jsl)
MINI: Libs = (minijax, mjnp, msl)
BACKENDS = ("numpy", "xla")


def cmatrix(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    r = np.random.default_rng(seed)
    m, n = shape[-2:]
    return (r.standard_normal(shape) + 1j * r.standard_normal(shape) + 2 * np.eye(m, n)).astype(np.complex64)


def hpd(seed: int, n: int) -> np.ndarray:
    a = cmatrix(seed, (n, n)).astype(np.complex128)
    return (a @ a.conj().T + n * np.eye(n)).astype(np.complex64)


def phase_free(v: Any) -> np.ndarray:
    v = np.asarray(v)
    return np.abs(v) ** 2


def _sorted(w: Any) -> np.ndarray:
    w = np.asarray(w)
    return np.sort_complex(np.round(w, 3) + 0j) if w.ndim == 1 else w


# name -> (program(jax, jnp, jsl) -> function of one square complex matrix a and one b, needs a Hermitian a)
Program = Callable[[Any, Any, Any], Callable[..., Any]]
PROGRAMS: dict[str, tuple[Program, str]] = {
    "cholesky": (lambda j, n, s: n.linalg.cholesky, "hpd"),
    "cholesky_upper": (lambda j, n, s: lambda a: n.linalg.cholesky(a, upper=True), "hpd"),
    "eigvalsh": (lambda j, n, s: n.linalg.eigvalsh, "hpd"),
    "eigh_vectors": (lambda j, n, s: lambda a: n.abs(n.linalg.eigh(a)[1]) ** 2, "hpd"),
    "svdvals": (lambda j, n, s: n.linalg.svdvals, "general"),
    "svd_pairs": (lambda j, n, s: lambda a: (lambda u, _, vh: u[:, :1] * vh[:1, :])(*n.linalg.svd(a)), "general"),
    "qr": (lambda j, n, s: n.linalg.qr, "general"),
    "qr_complete": (lambda j, n, s: lambda a: n.linalg.qr(a, mode="complete"), "general"),
    "lu": (lambda j, n, s: j.lax.linalg.lu, "general"),
    "inv": (lambda j, n, s: n.linalg.inv, "general"),
    "solve": (lambda j, n, s: lambda a: n.linalg.solve(a, a[:, :2] + 1), "general"),
    "det": (lambda j, n, s: n.linalg.det, "general"),
    "slogdet": (lambda j, n, s: n.linalg.slogdet, "general"),
    "pinv": (lambda j, n, s: n.linalg.pinv, "general"),
    "lstsq": (lambda j, n, s: lambda a: n.linalg.lstsq(a, a[:, :1] + 1)[0], "general"),
    "matrix_power": (lambda j, n, s: lambda a: n.linalg.matrix_power(a, -2), "general"),
    "norms": (
        lambda j, n, s: lambda a: [n.linalg.norm(a, o) for o in (None, "fro", "nuc", 1, -1, 2, -2, np.inf)],
        "general",
    ),
    "cond": (lambda j, n, s: lambda a: [n.linalg.cond(a), n.linalg.cond(a, "fro")], "general"),
    "matrix_rank": (lambda j, n, s: n.linalg.matrix_rank, "general"),
    "tensorsolve": (lambda j, n, s: lambda a: n.linalg.tensorsolve(a, a[0] + 1), "general"),
    "eigvals_sorted": (lambda j, n, s: lambda a: n.sort_complex(n.linalg.eigvals(a)), "general"),
    "eig_residual": (
        lambda j, n, s: lambda a: (lambda w, v: n.linalg.norm(a @ v - v * w[None, :]) < 1e-3)(*n.linalg.eig(a)),
        "general",
    ),
    "roots": (lambda j, n, s: lambda a: n.sort_complex(n.roots(a[0])), "general"),
    "poly_of_matrix": (lambda j, n, s: n.poly, "general"),
    # jax.scipy.linalg on complex matrices
    "lu_factor": (lambda j, n, s: s.lu_factor, "general"),
    "lu_solve": (lambda j, n, s: lambda a: s.lu_solve(s.lu_factor(a), a[:, :1]), "general"),
    "cho_solve": (lambda j, n, s: lambda a: s.cho_solve(s.cho_factor(a, lower=True), a[:, :2]), "hpd"),
    "solve_triangular": (lambda j, n, s: lambda a: s.solve_triangular(a, a[:, :2], lower=True, trans="C"), "general"),
    "scipy_lu": (lambda j, n, s: s.lu, "general"),
    "scipy_solve": (lambda j, n, s: lambda a: s.solve(a, a[:, :1], assume_a="her"), "hpd"),
    "scipy_inv_det": (lambda j, n, s: lambda a: (s.inv(a), s.det(a)), "general"),
    "expm": (lambda j, n, s: lambda a: s.expm(a / 4), "general"),
    "scipy_eigh_values": (lambda j, n, s: lambda a: s.eigh(a, eigvals_only=True), "hpd"),
    # The Householder family (LAPACK's gehrd, hetrd, ungqr, unmqr)
    "hessenberg": (lambda j, n, s: j.lax.linalg.hessenberg, "general"),
    "tridiagonal_lower": (lambda j, n, s: lambda a: j.lax.linalg.tridiagonal(a, lower=True), "hpd"),
    "tridiagonal_upper": (lambda j, n, s: lambda a: j.lax.linalg.tridiagonal(a, lower=False), "hpd"),
    "householder_product": (
        lambda j, n, s: lambda a: j.lax.linalg.householder_product(a, j.lax.linalg.hessenberg(a)[1]), "general",
    ),
    "ormqr": (
        lambda j, n, s: lambda a: [
            j.lax.linalg.ormqr(a, j.lax.linalg.hessenberg(a)[1], c, left=left, transpose=transpose)
            for left, c in ((True, a[:, :2]), (False, a[:2, :])) for transpose in (False, True)
        ],
        "general",
    ),
    "tridiagonal_solve_perturbed": (
        lambda j, n, s: lambda a: [
            j.lax.linalg.tridiagonal_solve(
                a[0] * (n.arange(len(a)) > 0), diagonal * a[1], a[:, 0] * (n.arange(len(a)) < len(a) - 1), a[:, :2],
                perturb_singular=True,
            )
            for diagonal in (1, 0)  # (a zero diagonal: singular for odd sizes)
        ],
        "general",
    ),
}

GRADS: dict[str, tuple[Program, str]] = {
    "cholesky": (lambda j, n, s: lambda a: n.sum(n.abs(n.linalg.cholesky(a @ n.conj(a.T) + 3 * n.eye(3))) ** 2), "general"),
    "eigvalsh": (lambda j, n, s: lambda a: n.sum(n.linalg.eigvalsh(a + n.conj(a.T)) ** 3), "general"),
    "eigh_vectors": (lambda j, n, s: lambda a: n.sum(n.abs(n.linalg.eigh(a + n.conj(a.T))[1][:, 0]) ** 4), "general"),
    "svdvals": (lambda j, n, s: lambda a: n.sum(n.linalg.svdvals(a) ** 3), "general"),
    "qr": (lambda j, n, s: lambda a: n.sum(n.abs(n.linalg.qr(a)[1]) ** 2 + n.real(n.linalg.qr(a)[0])), "general"),
    "det": (lambda j, n, s: lambda a: n.abs(n.linalg.det(a)), "general"),
    "slogdet": (lambda j, n, s: lambda a: n.linalg.slogdet(a)[1] + n.real(n.linalg.slogdet(a)[0]), "general"),
    "inv": (lambda j, n, s: lambda a: n.sum(n.real(n.linalg.inv(a)) + n.imag(n.linalg.inv(a))), "general"),
    "solve_triangular": (
        lambda j, n, s: lambda a: n.sum(n.abs(j.lax.linalg.triangular_solve(
            n.tril(a), a, left_side=True, lower=True, transpose_a=True, conjugate_a=True)) ** 2),
        "general",
    ),  # fmt: skip
    "eigvals": (lambda j, n, s: lambda a: n.sum(n.real(n.linalg.eigvals(a) ** 2)), "general"),
    "eig_vectors": (
        lambda j, n, s: lambda a: n.sum(n.abs(j.lax.linalg.eig(a, enable_eigvec_derivs=True)[2]) ** 4),
        "general",
    ),
    "pinv": (lambda j, n, s: lambda a: n.sum(n.abs(n.linalg.pinv(a)) ** 2), "general"),
}


def _operand(kind: str, seed: int, n: int) -> np.ndarray:
    return hpd(seed, n) if kind == "hpd" else cmatrix(seed, (n, n))


def _run(libs: Libs, program: Program, arg: np.ndarray) -> list[np.ndarray]:
    out = program(*libs)(arg)
    leaves = jax.tree_util.tree_leaves(out) if libs is JAX else minijax.tree_util.tree_leaves(out)
    return [np.asarray(x) for x in leaves]


def _compare(got: list[np.ndarray], want: list[np.ndarray], rtol: float, name: str) -> None:
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (name, g.dtype, w.dtype, g.shape, w.shape)
        scale = max(1.0, float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0)))
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale, err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 4))
def test_values_match_jax(name: str, backend: str, seed: int, n: int) -> None:
    program, kind = PROGRAMS[name]
    arg = _operand(kind, seed, n)
    want = _run(JAX, program, arg)
    with config_context(minijax_backend=backend):
        got = _run(MINI, program, arg)
    _compare(got, want, 2e-3, name)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(GRADS))
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_gradients_match_jax(name: str, backend: str, seed: int) -> None:
    program, kind = GRADS[name]
    arg = _operand(kind, seed, 3)
    want = [np.asarray(jax.grad(program(*JAX))(arg))]
    with config_context(minijax_backend=backend):
        got = [np.asarray(minijax.grad(program(*MINI))(arg))]
    _compare(got, want, 5e-3, name)


def test_eig_jaxprs_print_as_jax() -> None:
    x = np.eye(2, dtype=np.float32)
    for f in (
        lambda j, n: n.linalg.eigvals,
        lambda j, n: n.linalg.eig,
        lambda j, n: lambda a: j.lax.linalg.eig(a, compute_right_eigenvectors=False),
    ):
        assert str(minijax.make_jaxpr(f(minijax, mjnp))(x)) == str(jax.make_jaxpr(f(jax, jjnp))(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_eig_of_real_matrices_matches_jax(backend: str) -> None:
    r = np.random.default_rng(3)
    a = r.standard_normal((2, 4, 4)).astype(np.float32)
    w_j, vl_j, vr_j = (np.asarray(x) for x in jax.lax.linalg.eig(a))
    with config_context(minijax_backend=backend):
        w_m, vl_m, vr_m = (np.asarray(x) for x in minijax.lax.linalg.eig(a))
    assert w_m.dtype == w_j.dtype == np.complex64
    # Same LAPACK routine: same order; vectors equal up to each column's phase.
    np.testing.assert_allclose(w_m, w_j, rtol=1e-4, atol=1e-4)
    for got, want in ((vl_m, vl_j), (vr_m, vr_j)):
        overlap = np.sum(np.conj(got) * want, axis=-2)
        np.testing.assert_allclose(np.abs(overlap), 1, atol=1e-4)


def test_eig_errors_match_jax() -> None:
    for bad in (np.ones((2, 3), np.float32), np.ones((2, 2), np.int32)):
        with pytest.raises(Exception) as want:
            jax.lax.linalg.eig(bad)
        with pytest.raises(type(want.value)) as got:
            minijax.lax.linalg.eig(bad)
        assert str(got.value) == str(want.value)


def test_complex_tridiagonal_jaxpr_prints_as_jax() -> None:
    x = hpd(0, 3)
    got = str(minijax.make_jaxpr(lambda a: minijax.lax.linalg.tridiagonal(a))(x))
    assert got == str(jax.make_jaxpr(lambda a: jax.lax.linalg.tridiagonal(a))(x))
    assert "f32[3]" in got  # the real diagonal of a Hermitian matrix
