"""Linear algebra on complex matrices, and the nonsymmetric eigenproblem (``eig``), issue 19.

Every test runs on each backend (tests/conftest.py): values against
``numpy.linalg`` and the defining identities (L Lᴴ = A, A V = V diag(w),
U diag(s) Vh = A, ...), derivatives in complex directions against finite
differences (``check_grads``), vmap against stacking, JAX's dtypes (real
eigenvalues of Hermitian matrices, real singular values, complex results of
``eig``) and JAX's errors. Eigenvectors are defined up to a phase, so they are
compared through phase-free quantities.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import enable_x64
from minijax.testing import check_grads

L = jnp.linalg
LL = lax.linalg
C64, C128, F32 = np.dtype(np.complex64), np.dtype(np.complex128), np.dtype(np.float32)


@pytest.fixture
def x64():
    with enable_x64(True):
        yield


def cgeneral(n: int, m: int | None = None, batch: tuple[int, ...] = (), dtype: Any = np.complex64, seed: int = 0) -> np.ndarray:
    r = np.random.default_rng(seed)
    m = n if m is None else m
    shape = (*batch, n, m)
    return (r.standard_normal(shape) + 1j * r.standard_normal(shape) + 3 * np.eye(n, m)).astype(dtype)


def hermitian_pd(n: int, batch: tuple[int, ...] = (), dtype: Any = np.complex64, seed: int = 0) -> np.ndarray:
    a = cgeneral(n, batch=batch, dtype=np.complex128, seed=seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def mH(x: Any) -> np.ndarray:
    return np.conj(np.swapaxes(np.asarray(x), -1, -2))


def close(x: Any, y: Any, tol: float) -> None:
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# Values and dtypes


def test_cholesky_of_a_hermitian_matrix():
    a = hermitian_pd(4, batch=(2,))
    factor = L.cholesky(a)
    assert factor.dtype == C64
    close(np.asarray(factor) @ mH(factor), a, 1e-4)
    close(np.triu(np.asarray(factor), 1), 0, 0)
    close(L.cholesky(a, upper=True), mH(factor), 0)  # the conjugate transpose, as JAX


def test_eigh_of_a_hermitian_matrix_has_real_eigenvalues():
    a = hermitian_pd(4)
    w, v = L.eigh(a)
    assert w.dtype == F32 and v.dtype == C64
    close(w, np.linalg.eigvalsh(a), 1e-3)
    close(a @ np.asarray(v), np.asarray(v) * np.asarray(w), 1e-3)
    assert L.eigvalsh(a).dtype == F32


def test_svd_of_a_complex_matrix_has_real_singular_values():
    for shape in ((4, 3), (3, 4), (3, 3)):
        a = cgeneral(*shape)
        u, s, vh = L.svd(a, full_matrices=False)
        assert s.dtype == F32 and u.dtype == C64
        close(s, np.linalg.svd(a, compute_uv=False), 1e-4)
        close((np.asarray(u) * np.asarray(s)[None]) @ np.asarray(vh), a, 1e-4)
        close(L.svd(a, compute_uv=False), np.asarray(s), 1e-5)


def test_qr_and_lu_of_complex_matrices():
    for shape in ((4, 3), (3, 4), (3, 3)):
        a = cgeneral(*shape)
        q, r = L.qr(a)
        close(np.asarray(q) @ np.asarray(r), a, 1e-4)
        close(mH(q) @ np.asarray(q), np.eye(q.shape[-1]), 1e-5)
        lu, pivots, perm = LL.lu(a)
        m, n = shape
        k = min(m, n)
        lower = np.tril(np.asarray(lu), -1)[:, :k] + np.eye(m, k)
        upper = np.triu(np.asarray(lu))[:k]
        close(lower @ upper, a[np.asarray(perm)], 1e-4)


def test_lu_pivots_on_re_plus_im_magnitudes_as_lapack():
    # |re| + |im| (LAPACK's izamax) picks row 1 (3 + 3j: 6 > 5); |z| would pick row 0 (5 > 4.24).
    a = np.array([[5, 1], [3 + 3j, 2]], np.complex64)
    _, pivots, perm = LL.lu(a)
    assert list(np.asarray(pivots)) == [1, 1] and list(np.asarray(perm)) == [1, 0]


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("conjugate_a", [True, False])
def test_triangular_solve_conjugates_as_asked(left_side, transpose_a, conjugate_a):
    a = np.tril(cgeneral(3, seed=1))
    b = cgeneral(3, 2, seed=2) if left_side else cgeneral(2, 3, seed=2)
    out = LL.triangular_solve(a, b, left_side=left_side, lower=True, transpose_a=transpose_a, conjugate_a=conjugate_a)
    op = a.T if transpose_a else a
    op = np.conj(op) if conjugate_a else op
    expect = np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T
    close(out, expect, 1e-4)


def test_solve_inv_det_slogdet_pinv_on_complex():
    a = cgeneral(3)
    b = cgeneral(3, 2, seed=3)
    close(L.solve(a, b), np.linalg.solve(a, b), 1e-4)
    close(L.inv(a), np.linalg.inv(a), 1e-4)
    close(L.det(a), np.linalg.det(a), 1e-3)
    for m in (a, a[:2, :2]):  # LU, and the closed form of 2×2 matrices
        for method in (None, "qr"):
            sign, logdet = L.slogdet(m, method=method)
            sign_np, logdet_np = np.linalg.slogdet(m)
            assert logdet.dtype == F32
            close(sign, sign_np, 1e-4)
            close(logdet, logdet_np, 1e-4)
    close(L.pinv(cgeneral(4, 3)), np.linalg.pinv(cgeneral(4, 3)), 1e-4)


# ---------------------------------------------------------------------------
# eig


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eig_values_and_vectors(dtype):
    r = np.random.default_rng(4)
    a = r.standard_normal((2, 4, 4)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * r.standard_normal((2, 4, 4)).astype(np.float32)
    w, vl, vr = LL.eig(a)
    assert w.dtype == vl.dtype == vr.dtype == C64
    w, vl, vr = np.asarray(w), np.asarray(vl), np.asarray(vr)
    close(np.sort_complex(w.reshape(-1)), np.sort_complex(np.linalg.eigvals(a).reshape(-1)), 1e-4)
    close(a @ vr, vr * w[..., None, :], 1e-4)  # A v = λ v
    close(mH(vl) @ a, w[..., :, None] * mH(vl), 1e-4)  # uᴴ A = λ uᴴ
    for v in (vl, vr):  # LAPACK's normalisation: unit 2-norm, largest component real
        close(np.linalg.norm(v, axis=-2), 1, 1e-5)
        largest = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
        close(largest.imag, 0, 1e-6)


def test_eig_options_and_jnp_functions():
    a = np.array([[0.0, -1.0], [1.0, 0.0]], np.float32)  # a rotation: eigenvalues ±i
    (w,) = LL.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    close(np.sort_complex(np.asarray(w)), [-1j, 1j], 1e-6)
    w2, v = L.eig(a)
    assert L.eig(a)._fields == ("eigenvalues", "eigenvectors")
    close(a @ np.asarray(v), np.asarray(v) * np.asarray(w2), 1e-6)
    assert L.eigvals(np.eye(2, dtype=np.int32)).dtype == C64  # integers promote to float first
    assert len(LL.eig(a, compute_left_eigenvectors=False)) == 2


def test_eig_under_jit_and_vmap():
    a = cgeneral(3, batch=(3,))
    expect = np.asarray(L.eigvals(a))
    close(jax.jit(L.eigvals)(a), expect, 1e-5)
    close(jax.vmap(L.eigvals)(a), expect, 1e-5)
    close(jax.vmap(L.eigvals, in_axes=1, out_axes=1)(np.swapaxes(a, 0, 1)), np.swapaxes(expect, 0, 1), 1e-5)


def test_eig_of_a_non_finite_matrix_is_nan():
    a = np.array([[[1.0, 2.0], [3.0, 4.0]], [[np.nan, 0.0], [0.0, 1.0]]], np.float32)
    w = np.asarray(L.eigvals(a))
    assert np.isfinite(w[0]).all() and np.isnan(w[1]).all()


def test_eig_errors_are_jaxs():
    with pytest.raises(ValueError, match=r"The input to eig must be a square matrix. Got shape \(2, 3\)"):
        LL.eig(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="eig does not accept dtype int32 at position 0"):
        LL.eig(np.ones((2, 2), np.int32))
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        jax.grad(lambda x: L.eig(x)[1].real.sum())(np.eye(2, dtype=np.float32))


def test_eig_jaxpr_prints_and_parses_as_jax():
    from minijax.jaxpr_parse import parse_jaxpr

    text = str(jax.make_jaxpr(lambda x: LL.eig(x, compute_left_eigenvectors=False))(np.eye(2, dtype=np.float32)))
    assert "compute_left_eigenvectors=False" in text and "enable_eigvec_derivs=False" in text
    assert "implementation=None" in text and "c64[2,2] = eig[" in text
    assert str(parse_jaxpr(text)) == text


# ---------------------------------------------------------------------------
# Derivatives in complex directions (complex128: finite differences need the digits)


def _check(f: Any, *args: Any) -> None:
    check_grads(jax.jit(f), args, 1, modes=("fwd", "rev"))


def test_cholesky_derivatives(x64):
    def f(x):
        return L.cholesky(x @ jnp.conj(x.T) + 3 * jnp.eye(3))

    _check(f, cgeneral(3, dtype=np.complex128))


def test_eigh_derivatives_phase_free(x64):
    def f(x):
        w, v = L.eigh(x + jnp.conj(x.T))
        return w, v * jnp.conj(v)  # |v|²: free of each eigenvector's phase

    _check(f, cgeneral(3, dtype=np.complex128, seed=5))


def test_svd_derivatives_phase_free(x64):
    for shape in ((3, 3), (4, 3), (3, 4)):

        def f(x):
            u, s, vh = L.svd(x, full_matrices=False)
            return s, u * jnp.conj(u), vh * jnp.conj(vh), (u[:, :1] * vh[:1, :])  # u_j vh_j: phases cancel

        _check(f, cgeneral(*shape, dtype=np.complex128, seed=6))


def test_qr_lu_triangular_solve_derivatives(x64):
    for shape in ((3, 3), (4, 3), (3, 4)):
        _check(lambda x: L.qr(x), cgeneral(*shape, dtype=np.complex128, seed=7))
    _check(lambda x: LL.lu(x)[0], cgeneral(3, dtype=np.complex128, seed=8))
    a, b = np.tril(cgeneral(3, dtype=np.complex128, seed=9)), cgeneral(3, 2, dtype=np.complex128, seed=10)
    for transpose_a in (False, True):
        for conjugate_a in (False, True):

            def solve(a, b, transpose_a=transpose_a, conjugate_a=conjugate_a):
                return LL.triangular_solve(a, b, left_side=True, lower=True, transpose_a=transpose_a, conjugate_a=conjugate_a)

            _check(solve, a, b)


def test_solve_det_inv_derivatives(x64):
    a, b = cgeneral(3, dtype=np.complex128, seed=11), cgeneral(3, 2, dtype=np.complex128, seed=12)
    _check(L.solve, a, b)
    _check(L.det, a)
    _check(L.inv, a)
    _check(L.slogdet, a)
    _check(L.slogdet, a[:2, :2])


def test_eig_derivatives(x64):
    r = np.random.default_rng(13)
    real = r.standard_normal((3, 3))
    _check(L.eigvals, real)  # real matrix, complex eigenvalues
    _check(L.eigvals, cgeneral(3, dtype=np.complex128, seed=14))

    def vectors(x):
        w, vl, vr = LL.eig(x, enable_eigvec_derivs=True)
        return w, vl, vr

    _check(vectors, cgeneral(3, dtype=np.complex128, seed=15))
    _check(vectors, real)


def _tridiagonal_system(seed: int, dtype: Any) -> tuple[np.ndarray, ...]:
    r = np.random.default_rng(seed)

    def c(*shape: int) -> np.ndarray:
        return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)

    dl, d, du, b = c(4), c(4) * 0.1, c(4), c(4, 2)  # a small diagonal: rows are swapped
    dl[0] = du[-1] = 0
    return dl, d, du, b


def test_tridiagonal_solve_of_complex_systems():
    dl, d, du, b = _tridiagonal_system(16, np.complex64)
    dense = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    close(LL.tridiagonal_solve(dl, d, du, b), np.linalg.solve(dense, b), 1e-4)
    # jaxlib's perturbing kernel takes complex systems too: a regular one gets the same solution ...
    close(LL.tridiagonal_solve(dl, d, du, b, perturb_singular=True), np.linalg.solve(dense, b), 1e-4)
    # ... a singular one (a zero row) a finite one, whose nonsingular equations still hold.
    dl2, d2, du2 = dl.copy(), d.copy(), du.copy()
    dl2[1] = d2[1] = du2[1] = 0
    x = np.asarray(LL.tridiagonal_solve(dl2, d2, du2, b, perturb_singular=True))
    assert x.dtype == C64 and np.isfinite(x).all()
    assert np.isnan(np.asarray(LL.tridiagonal_solve(dl2, d2, du2, b))).all()


def test_tridiagonal_solve_perturbed_of_empty_systems():
    # An empty system (m = 0) with a right-hand side: the NumPy kernel inferred its batch size from 0 elements.
    z = np.zeros((0,), np.float32)
    out = LL.tridiagonal_solve(z, z, z, np.zeros((0, 1), np.float32), perturb_singular=True)
    assert out.shape == (0, 1)
    out = LL.tridiagonal_solve(np.ones(1, np.float32), np.ones(1, np.float32), np.ones(1, np.float32),
                               np.zeros((1, 0), np.float32), perturb_singular=True)  # fmt: skip
    assert out.shape == (1, 0)


def test_tridiagonal_solve_derivatives(x64):
    _check(LL.tridiagonal_solve, *_tridiagonal_system(17, np.complex128))


# ---------------------------------------------------------------------------
# The Householder family of complex matrices (LAPACK's ungqr, unmqr, gehrd, hetrd)


def _reflectors(a: Any, taus: Any, below: int) -> list[np.ndarray]:
    """The matrices H(i) = I - tau_i v_i v_iᴴ whose vectors a stores below its ``below``-th subdiagonal."""
    a, taus = np.asarray(a), np.asarray(taus)
    m = a.shape[0]
    out = []
    for i, tau in enumerate(taus):
        v = np.zeros(m, a.dtype)
        v[i + below] = 1
        v[i + below + 1 :] = a[i + below + 1 :, i]
        out.append(np.eye(m) - tau * np.outer(v, v.conj()))
    return out


def _product(ms: list[np.ndarray], m: int) -> np.ndarray:
    out = np.eye(m, dtype=np.complex128)
    for h in ms:
        out = out @ h
    return out


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_hessenberg_of_a_complex_matrix(dtype):
    with enable_x64(True):
        a = cgeneral(5, dtype=dtype, seed=3)
        h, taus = LL.hessenberg(a)
        assert h.dtype == a.dtype and taus.dtype == a.dtype and taus.shape == (4,)
        tol = 1e-4 if dtype == np.complex64 else 1e-10
        q = _product(_reflectors(h, taus, 1), 5)
        close(q @ mH(q), np.eye(5), tol)  # Q is unitary
        upper = np.triu(np.asarray(h), -1)
        close(q @ upper @ mH(q), a, tol * 10)  # A = Q H Qᴴ
        # LAPACK's subdiagonal is real (zlarfg's beta) and the taus lie in LAPACK's range |tau - 1| <= 1
        assert np.all(np.diag(np.asarray(h), -1).imag == 0)
        assert np.all(np.abs(np.asarray(taus) - 1) <= 1 + tol)


@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_of_a_hermitian_matrix_is_real(lower):
    a = hermitian_pd(5, seed=4)
    out, d, e, taus = LL.tridiagonal(a, lower=lower)
    assert (out.dtype, d.dtype, e.dtype, taus.dtype) == (C64, F32, F32, C64)
    assert d.shape == (5,) and e.shape == (4,) and taus.shape == (4,)
    t = np.diag(np.asarray(d)) + np.diag(np.asarray(e), 1) + np.diag(np.asarray(e), -1)
    # The eigenvalues survive the reduction: T = Qᴴ A Q is similar to A.
    close(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a), 1e-3)
    if lower:
        q = _product(_reflectors(out, taus, 1), 5)
        close(mH(q) @ a @ q, t, 1e-3)
        close(np.triu(np.asarray(out), 1), np.triu(a, 1), 0)  # the upper triangle is left alone


def test_householder_product_and_ormqr_of_complex_reflectors():
    a = cgeneral(5, 3, seed=5)
    _, taus = LL.hessenberg(cgeneral(5, seed=6))
    taus = taus[:3]
    q = np.asarray(LL.householder_product(a, taus))
    want = _product(_reflectors(a, taus, 0), 5)[:, :3]
    close(q, want, 1e-4)
    full = _product(_reflectors(a, taus, 0), 5)
    c = cgeneral(5, 2, seed=7)
    close(LL.ormqr(a, taus, c, left=True, transpose=False), full @ c, 1e-4)
    close(LL.ormqr(a, taus, c, left=True, transpose=True), mH(full) @ c, 1e-4)  # the conjugate transpose
    ct = np.ascontiguousarray(c.T)
    close(LL.ormqr(a, taus, ct, left=False, transpose=False), ct @ full, 1e-4)
    close(LL.ormqr(a, taus, ct, left=False, transpose=True), ct @ mH(full), 1e-4)


def test_the_complex_householder_family_under_jit_and_vmap():
    a = cgeneral(4, batch=(3,), seed=8)
    h, taus = jax.jit(jax.vmap(LL.hessenberg))(a)
    for i in range(3):
        hi, ti = LL.hessenberg(a[i])
        close(h[i], hi, 1e-5)
        close(taus[i], ti, 1e-5)
    herm = a + mH(a)
    outs = jax.vmap(lambda x: LL.tridiagonal(x, lower=False))(herm)
    assert [o.dtype for o in outs] == [C64, F32, F32, C64]
    close(outs[1][2], LL.tridiagonal(herm[2], lower=False)[1], 1e-5)
    q = jax.vmap(LL.householder_product)(h, taus)
    close(q[1], LL.householder_product(h[1], taus[1]), 1e-5)
    c = cgeneral(4, 2, batch=(3,), seed=9)
    out = jax.vmap(lambda x, t, y: LL.ormqr(x, t, y, left=True, transpose=True))(h, taus, c)
    close(out[0], LL.ormqr(h[0], taus[0], c[0], left=True, transpose=True), 1e-5)


def test_the_complex_householder_family_has_no_derivative_as_in_jax():
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'hessenberg' not implemented"):
        jax.jvp(lambda x: LL.hessenberg(x)[0], (cgeneral(3),), (cgeneral(3),))
