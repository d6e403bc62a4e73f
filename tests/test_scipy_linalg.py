"""``jax.scipy.linalg`` and ``jax.scipy.sparse.linalg`` on each backend: values, jit, grad, vmap, errors.

Values are checked against NumPy (reconstruction identities and
``numpy.linalg``), derivatives against finite differences (``check_grads``),
vmap against stacking. tests/test_scipy_linalg_oracle.py compares with real
JAX.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.scipy import linalg as sl
from minijax.scipy.sparse import linalg as ssl
from minijax.testing import check_grads


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def spd(n: int, batch: tuple[int, ...] = (), seed: int = 0) -> np.ndarray:
    a = rng(seed).standard_normal((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def general(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    m, n = shape[-2:]
    return (rng(seed).standard_normal(shape) + 3 * np.eye(m, n)).astype(np.float32)


def vec(shape: tuple[int, ...], seed: int = 1) -> np.ndarray:
    return rng(seed).standard_normal(shape).astype(np.float32)


def _expm_reference(a: np.ndarray) -> np.ndarray:
    """exp(A) by its Taylor series after scaling (float64)."""
    a = a.astype(np.float64)
    s = max(0, int(np.ceil(np.log2(max(np.abs(a).sum(0).max(), 1e-300)))) + 1)
    scaled = a / 2**s
    term, total = np.eye(len(a)), np.eye(len(a))
    for k in range(1, 30):
        term = term @ scaled / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


# ---------------------------------------------------------------------------
# Factorizations and solves


def test_cholesky_upper_and_lower_reconstruct():
    a = spd(4)
    u = sl.cholesky(a)
    lo = sl.cholesky(a, lower=True)
    np.testing.assert_allclose(np.asarray(u).T @ np.asarray(u), a, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.asarray(lo), np.linalg.cholesky(a.astype(np.float64)), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.triu(np.asarray(u)), np.asarray(u))


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("rhs", [(4,), (4, 2), (3, 4, 2)])
def test_cho_solve_lu_solve_solve_triangular_match_numpy(lower, rhs):
    a, g = spd(4, (3,)), general((3, 4, 4))
    b = vec(rhs)
    full = lambda m: np.broadcast_to(m, (3, 4, 4)).astype(np.float64)  # noqa: E731
    b_mat = b[..., None] if len(rhs) == 1 else b

    def want(m: np.ndarray) -> np.ndarray:
        x = np.linalg.solve(full(m), np.broadcast_to(b_mat, (3, *b_mat.shape[-2:])))
        return x[..., 0] if len(rhs) == 1 else x

    np.testing.assert_allclose(sl.cho_solve(sl.cho_factor(a, lower=lower), b), want(a), rtol=2e-4, atol=2e-4)
    np.testing.assert_allclose(sl.lu_solve(sl.lu_factor(g), b), want(g), rtol=2e-4, atol=2e-4)
    t = np.tril(g) if lower else np.triu(g)
    np.testing.assert_allclose(sl.solve_triangular(t, b, lower=lower), want(t), rtol=2e-4, atol=2e-4)
    b_pos = b if len(rhs) == 3 else np.broadcast_to(b, (3, *b.shape))  # JAX's 'pos' solve wants b with a's batch axes
    np.testing.assert_allclose(sl.solve(a, b_pos, assume_a="pos", lower=lower), want(a), rtol=2e-4, atol=2e-4)


def test_lu_solve_trans_and_solve_triangular_trans():
    g, b = general((4, 4)), vec((4,))
    np.testing.assert_allclose(sl.lu_solve(sl.lu_factor(g), b, trans=1), np.linalg.solve(g.T, b), rtol=2e-4, atol=2e-4)
    t = np.triu(g)
    for trans in (1, "T", 2, "C"):
        np.testing.assert_allclose(
            sl.solve_triangular(t, b, trans=trans), np.linalg.solve(t.T, b), rtol=2e-4, atol=2e-4
        )
    unit = np.triu(g, 1) + np.eye(4, dtype=np.float32)
    np.testing.assert_allclose(sl.solve_triangular(np.triu(g, 1) + 7 * np.eye(4, dtype=np.float32), b, unit_diagonal=True),
                               np.linalg.solve(unit, b), rtol=2e-4, atol=2e-4)  # fmt: skip


def test_deprecated_batched_vector_solve_warns_as_jax():
    a, b = spd(3, (2,)), vec((2, 3))
    with pytest.warns(FutureWarning, match="batched 1D solves"):
        x = sl.solve_triangular(np.triu(a), b)
    assert x.shape == (2, 3)


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3)])
def test_lu_reconstructs(shape):
    a = general(shape)
    p, lo, u = sl.lu(a)
    np.testing.assert_allclose(np.asarray(p) @ np.asarray(lo) @ np.asarray(u), a, rtol=1e-5, atol=1e-5)
    pl, u2 = sl.lu(a, permute_l=True)
    np.testing.assert_allclose(np.asarray(pl) @ np.asarray(u2), a, rtol=1e-5, atol=1e-5)


def test_qr_modes_and_qr_multiply():
    a, c = general((5, 3)), vec((2, 5))
    q, r = sl.qr(a)
    assert (q.shape, r.shape) == ((5, 5), (5, 3))
    (r_only,) = sl.qr(a, mode="r")
    np.testing.assert_allclose(r_only, r, atol=1e-6)
    qe, re_ = sl.qr(a, mode="economic")
    np.testing.assert_allclose(np.asarray(qe) @ np.asarray(re_), a, rtol=1e-5, atol=1e-5)
    cq, r2 = sl.qr_multiply(a, c)
    np.testing.assert_allclose(cq, c @ np.asarray(qe), rtol=1e-5, atol=1e-5)
    qc, _ = sl.qr_multiply(a, vec((3,)), mode="left")
    np.testing.assert_allclose(qc, np.asarray(qe) @ vec((3,)), rtol=1e-5, atol=1e-5)
    assert r2.shape == (3, 3)


def test_det_inv_svd_eigh_wrappers():
    a, s = general((3, 3)), spd(3)
    np.testing.assert_allclose(sl.det(a), np.linalg.det(a), rtol=1e-5)
    np.testing.assert_allclose(sl.inv(a), np.linalg.inv(a), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(sl.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False), rtol=1e-5)
    w, v = sl.eigh(s)
    np.testing.assert_allclose(np.asarray(v) @ np.diag(np.asarray(w)) @ np.asarray(v).T, s, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(sl.eigh(s, eigvals_only=True), np.linalg.eigvalsh(s), rtol=1e-5)


# ---------------------------------------------------------------------------
# expm, expm_frechet, polar


@pytest.mark.parametrize("scale", [0.01, 0.3, 1.0, 5.0, 40.0])
def test_expm_matches_taylor(scale):
    a = (scale * vec((4, 4), seed=3) / 2).astype(np.float32)
    np.testing.assert_allclose(sl.expm(a), _expm_reference(a), rtol=2e-4, atol=2e-4 * np.abs(_expm_reference(a)).max())


def test_expm_batched_upper_triangular_and_too_many_squarings():
    a = 0.4 * vec((2, 3, 3))
    out = sl.expm(a)
    np.testing.assert_allclose(out[1], _expm_reference(a[1]), rtol=1e-4, atol=1e-4)
    t = np.triu(a[0])
    np.testing.assert_allclose(sl.expm(t, upper_triangular=True), _expm_reference(t), rtol=1e-4, atol=1e-4)
    assert np.isnan(np.asarray(sl.expm(200 * a[0], max_squarings=2))).all()


def test_expm_jit_vmap_grad_and_frechet():
    a, e = 0.3 * vec((3, 3)), vec((3, 3), seed=5)
    np.testing.assert_allclose(jax.jit(sl.expm)(a), sl.expm(a), rtol=1e-6)
    stack = np.stack([a, 2 * a])
    np.testing.assert_allclose(jax.vmap(sl.expm)(stack), np.stack([sl.expm(a), sl.expm(2 * a)]), rtol=1e-5, atol=1e-6)
    expm_a, frechet = sl.expm_frechet(a, e)
    # reverse mode agrees with forward mode: <grad of sum(expm), E> = sum(L(A, E))
    g = jax.grad(lambda x: sl.expm(x).sum())(a)
    np.testing.assert_allclose(np.sum(np.asarray(g) * e), np.asarray(frechet).sum(), rtol=1e-4)
    eps = 1e-3
    fd = (_expm_reference(a + eps * e) - _expm_reference(a - eps * e)) / (2 * eps)
    np.testing.assert_allclose(frechet, fd, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(sl.expm_frechet(a, e, compute_expm=False), frechet, rtol=1e-6)
    np.testing.assert_allclose(expm_a, sl.expm(a), rtol=1e-6)


@pytest.mark.parametrize("side", ["right", "left"])
def test_polar_factors(side):
    a = general((3, 3))
    u, p = sl.polar(a, side=side, method="svd" if side == "left" else "qdwh")
    u, p = np.asarray(u), np.asarray(p)
    np.testing.assert_allclose(u.T @ u, np.eye(3), atol=1e-5)
    np.testing.assert_allclose(p, p.T, atol=1e-5)
    assert np.linalg.eigvalsh(p.astype(np.float64)).min() > -1e-5
    np.testing.assert_allclose(u @ p if side == "right" else p @ u, a, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# Derivatives and vmap of the solves


def test_solves_grad_and_vmap():
    a, t, b = spd(3), np.triu(general((3, 3))), vec((3,))
    a64, t64, b64 = a.astype(np.float64), t.astype(np.float64), b.astype(np.float64)
    check_grads(lambda bb: sl.cho_solve(sl.cho_factor(a64), bb), (b64,), order=1, modes=("rev",))
    check_grads(lambda tt, bb: sl.solve_triangular(jnp.triu(tt), bb), (t64, b64), order=1, modes=("fwd", "rev"))
    # The value reads one triangle, the derivative (JAX's: A⁻¹(ḃ - Ȧx)) the whole Ȧ: they agree along symmetric Ȧ.
    check_grads(lambda aa, bb: sl.solve((aa + aa.T) / 2, bb, assume_a="pos"), (a64, b64), order=1, modes=("fwd", "rev"))
    check_grads(
        lambda aa, bb: sl.lu_solve(sl.lu_factor(aa), bb),
        (general((3, 3)).astype(np.float64), b64),
        order=1,
        modes=("rev",),
    )
    bs = vec((4, 3))
    got = jax.vmap(lambda bb: sl.lu_solve(sl.lu_factor(a), bb))(bs)
    np.testing.assert_allclose(got, np.linalg.solve(a, bs.T).T, rtol=2e-4, atol=2e-4)
    got = jax.jit(jax.vmap(lambda aa: sl.solve_triangular(aa, b), in_axes=0))(np.stack([t, 2 * t]))
    np.testing.assert_allclose(got[1], np.linalg.solve(2 * t, b), rtol=2e-4, atol=2e-4)


# ---------------------------------------------------------------------------
# Special matrices


def test_block_diag():
    out = sl.block_diag(np.ones((2, 2), np.float32), np.arange(3, dtype=np.int32), np.float32(5))
    want = np.zeros((4, 6), np.float32)
    want[:2, :2], want[2, 2:5], want[3, 5] = 1, np.arange(3), 5
    np.testing.assert_array_equal(out, want)
    assert out.dtype == np.float32
    assert sl.block_diag().shape == (1, 0)


def test_toeplitz_hankel_circulant():
    c, r = np.array([1, 2, 3], np.int32), np.array([9, 5, 6, 7], np.int32)
    want_t = np.array([[1, 5, 6, 7], [2, 1, 5, 6], [3, 2, 1, 5]])
    np.testing.assert_array_equal(sl.toeplitz(c, r), want_t)
    assert sl.toeplitz(c).dtype == np.int32
    np.testing.assert_array_equal(sl.toeplitz(c), [[1, 2, 3], [2, 1, 2], [3, 2, 1]])
    np.testing.assert_array_equal(sl.hankel(c, r), [[1, 2, 3, 5], [2, 3, 5, 6], [3, 5, 6, 7]])
    np.testing.assert_array_equal(sl.hankel(c), [[1, 2, 3], [2, 3, 0], [3, 0, 0]])
    np.testing.assert_array_equal(sl.circulant(c), [[1, 3, 2], [2, 1, 3], [3, 2, 1]])
    batched = sl.toeplitz(np.stack([c, 2 * c]), r)
    assert batched.shape == (2, 3, 4)
    np.testing.assert_array_equal(batched[1], sl.toeplitz(2 * c, r))


def test_companion_leslie_fiedler_convolution_matrix():
    coeffs = np.array([1.0, -6.0, 11.0, -6.0], np.float32)  # roots 1, 2, 3
    np.testing.assert_allclose(np.sort(np.linalg.eigvals(np.asarray(sl.companion(coeffs))).real), [1, 2, 3], atol=1e-4)
    np.testing.assert_allclose(
        np.sort(np.linalg.eigvals(np.asarray(sl.fiedler_companion(coeffs))).real), [1, 2, 3], atol=1e-4
    )
    np.testing.assert_allclose(
        sl.leslie(np.array([1.0, 2, 3]), np.array([0.5, 0.6])), [[1, 2, 3], [0.5, 0, 0], [0, 0.6, 0]], rtol=1e-6
    )
    np.testing.assert_array_equal(sl.fiedler(np.array([1, 4, 2])), [[0, 3, 1], [3, 0, 2], [1, 2, 0]])
    a, v = np.array([1.0, 2, 3], np.float32), np.array([1.0, -1, 2, 0.5], np.float32)
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(
            np.asarray(sl.convolution_matrix(a, 4, mode)) @ v, np.convolve(a, v, mode), rtol=1e-6
        )


def test_hilbert_pascal_helmert_hadamard():
    n = 4
    h = np.asarray(sl.hilbert(n), np.float64)
    np.testing.assert_allclose(h, 1 / (np.arange(n)[:, None] + np.arange(n) + 1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(sl.invhilbert(n)) @ h, np.eye(n), atol=2e-2)
    lower = np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], np.float64)
    np.testing.assert_allclose(sl.pascal(n, "lower"), lower, rtol=1e-5)
    np.testing.assert_allclose(sl.pascal(n), lower @ lower.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(sl.invpascal(n)) @ np.asarray(sl.pascal(n)), np.eye(n), atol=1e-3)
    hf = np.asarray(sl.helmert(n, full=True))
    np.testing.assert_allclose(hf @ hf.T, np.eye(n), atol=1e-6)
    assert sl.helmert(n).shape == (n - 1, n)
    had = np.asarray(sl.hadamard(8))
    np.testing.assert_array_equal(had @ had.T, 8 * np.eye(8))
    assert had.dtype == np.int32


def test_special_matrices_under_jit_and_vmap():
    c = vec((3, 4))
    np.testing.assert_allclose(jax.vmap(sl.circulant)(c), sl.circulant(c), rtol=0)
    np.testing.assert_allclose(jax.jit(sl.toeplitz)(c[0], c[1]), sl.toeplitz(c[0], c[1]), rtol=0)
    np.testing.assert_allclose(jax.vmap(sl.companion)(c), sl.companion(c), rtol=1e-6)


# ---------------------------------------------------------------------------
# eigh_tridiagonal


def test_eigh_tridiagonal_values_select_and_vectors():
    d, e = vec((6,), seed=7), vec((5,), seed=8)
    dense = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    want = np.linalg.eigvalsh(dense.astype(np.float64))
    np.testing.assert_allclose(sl.eigh_tridiagonal(d, e, eigvals_only=True), want, atol=1e-5)
    np.testing.assert_allclose(
        sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(2, 4)), want[2:5], atol=1e-5
    )
    w, v = sl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(dense @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-4)
    np.testing.assert_allclose(
        jax.jit(lambda a, b: sl.eigh_tridiagonal(a, b, eigvals_only=True))(d, e), want, atol=1e-5
    )


# ---------------------------------------------------------------------------
# Krylov solvers


@pytest.mark.parametrize("solver", ["cg", "gmres_batched", "gmres_incremental", "bicgstab"])
def test_krylov_solvers_solve(solver):
    a = spd(5) if solver == "cg" else general((5, 5))
    b = vec((5,))
    fn = {
        "cg": lambda A, bb, **kw: ssl.cg(A, bb, **kw),
        "gmres_batched": lambda A, bb, **kw: ssl.gmres(A, bb, **kw),
        "gmres_incremental": lambda A, bb, **kw: ssl.gmres(A, bb, solve_method="incremental", restart=3, **kw),
        "bicgstab": lambda A, bb, **kw: ssl.bicgstab(A, bb, **kw),
    }[solver]
    want = np.linalg.solve(a.astype(np.float64), b)

    @jax.jit
    def both(bb):
        x_matrix, info = fn(a, bb, tol=1e-6)
        x_function, _ = fn(lambda v: jnp.dot(a, v), bb, x0=jnp.ones(5), M=lambda v: v, tol=1e-6)
        return x_matrix, x_function, info

    x, x_fn, info = both(b)
    np.testing.assert_allclose(x, want, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(x_fn, want, rtol=1e-3, atol=1e-4)
    if solver.startswith("gmres"):
        assert int(info) == 0
    else:
        assert info is None
    xs = jax.jit(jax.vmap(lambda bb: fn(a, bb)[0]))(np.stack([b, 2 * b]))
    np.testing.assert_allclose(xs[1], 2 * want, rtol=1e-3, atol=1e-3)


def test_krylov_pytree_and_gradients():
    a, b = spd(3), vec((3,))
    x, _ = ssl.cg(lambda t: {"u": a @ t["u"], "w": 2.0 * t["w"]}, {"u": b, "w": jnp.ones(2)})
    np.testing.assert_allclose(x["u"], np.linalg.solve(a, b), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x["w"], 0.5 * np.ones(2), rtol=1e-5)
    a_inv = np.linalg.inv(a.astype(np.float64))
    g_b = jax.grad(lambda bb: ssl.cg(a, bb)[0].sum())(b)
    np.testing.assert_allclose(g_b, a_inv.T @ np.ones(3), rtol=1e-3, atol=1e-4)
    g_a = jax.grad(lambda aa: ssl.gmres(aa, b)[0].sum())(a)
    np.testing.assert_allclose(g_a, -np.outer(a_inv.T @ np.ones(3), a_inv @ b), rtol=1e-3, atol=1e-4)
    g_fn = jax.grad(lambda bb: ssl.bicgstab(lambda v: a @ v, bb)[0].sum())(b)
    np.testing.assert_allclose(g_fn, a_inv.T @ np.ones(3), rtol=1e-3, atol=1e-4)


# ---------------------------------------------------------------------------
# Errors and the names not available yet


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: sl.solve(np.eye(2), np.ones(2), assume_a="banana"), ValueError, "assume_a"),
        (lambda: sl.solve_triangular(np.eye(2), np.ones(2), trans=3), ValueError, "trans"),
        (lambda: sl.qr(np.eye(2), mode="reduced"), ValueError, "mode"),
        (lambda: sl.expm(np.ones((2, 3))), ValueError, "square"),
        (lambda: sl.block_diag(np.ones((1, 1, 1))), ValueError, "at most 2 dimensions"),
        (lambda: sl.toeplitz([1, 2]), TypeError, "ndarray or scalar"),
        (lambda: sl.hadamard(6), ValueError, "power of 2"),
        (lambda: sl.polar(np.ones((2, 3))), NotImplementedError, "qdwh"),
        (lambda: sl.eigh_tridiagonal(np.ones(3), np.ones(2), select="v"), NotImplementedError, "select='v'"),
        (lambda: ssl.cg(np.ones((2, 3)), np.ones(2)), ValueError, "square matrix"),
        (lambda: ssl.gmres(np.eye(2), np.ones(2), solve_method="nope"), ValueError, "solve_method"),
        (lambda: sl.schur(np.eye(2), output="qz"), ValueError, "either 'real' or 'complex'"),
        (lambda: sl.sqrtm(np.eye(2), blocksize=2), NotImplementedError, "Blocked version"),
        (lambda: sl.funm(np.ones(2), jnp.exp), ValueError, "expected square array_like input"),
        (lambda: sl.solve_sylvester(np.eye(2), np.eye(2), np.eye(3)), ValueError, "Incompatible shapes"),
        (lambda: sl.dft(3, scale="N"), ValueError, "scale must be None"),
        (lambda: sl.rsf2csf(np.eye(2), np.eye(3)), ValueError, "Input array shapes must match"),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_every_jax_name_is_defined():
    # JAX 0.10.2's jax.scipy.linalg has 40 public names (the coordinator's names test checks them by name).
    assert len(set(sl.__all__)) == 40
    assert all(callable(getattr(sl, name)) for name in sl.__all__)
    assert sorted(ssl.__all__) == ["bicgstab", "cg", "gmres"]
