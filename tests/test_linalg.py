"""Linear algebra: the linalg primitives, ``lax.linalg`` and ``jnp.linalg`` (spec/primitives/linalg.md).

Every test runs on each backend (tests/conftest.py). They check values
against ``numpy.linalg``, the reconstruction identities (L Lᵀ = A, Q R = A,
U diag(s) Vh = A, A V = V diag(w), A[perm] = L U), derivatives against
finite differences (``check_grads``), vmap against stacking, the dtypes and
weak types JAX gives, the failure and edge cases the spec defines, and the
errors. The law suites (tests/test_ad_laws.py, tests/test_vmap_laws.py)
check the primitives' rules on the samplers' cases as well.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import enable_x64
from minijax.jaxpr_parse import parse_jaxpr
from minijax.testing import check_grads

L = jnp.linalg
LL = lax.linalg
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


@pytest.fixture
def x64():
    with enable_x64(True):
        yield


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def spd(n: int, batch: tuple[int, ...] = (), dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    a = rng(seed).standard_normal((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def general(shape: tuple[int, ...], dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    """A random matrix with a well-conditioned leading square block."""
    m, n = shape[-2:]
    return (rng(seed).standard_normal(shape) + 3 * np.eye(m, n)).astype(dtype)


def separated(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A matrix with distinct singular values 1, 2, 3, ... (square: also a symmetric one with eigenvalues 0.5 apart)."""
    r = rng(seed)
    *batch, m, n = shape
    k = min(m, n)
    u = np.linalg.qr(r.standard_normal((*batch, m, k)))[0]
    v = np.linalg.qr(r.standard_normal((*batch, n, k)))[0]
    s = 1.0 + np.arange(k)[::-1]
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def symmetric(n: int, batch: tuple[int, ...] = (), seed: int = 0) -> np.ndarray:
    q = np.linalg.qr(rng(seed).standard_normal((*batch, n, n)))[0]
    w = np.arange(n) - n / 2
    a = (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
    return (a + np.swapaxes(a, -1, -2)) / 2


def close(got: Any, want: Any, tol: float = 1e-4) -> None:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def mT(x: Any) -> np.ndarray:
    return np.swapaxes(np.asarray(x, np.float64), -1, -2)


# ---------------------------------------------------------------------------
# Decompositions: reconstruction identities and values against numpy.linalg

SHAPES = [(3, 3), (4, 2), (2, 4), (2, 3, 3), (2, 1, 4, 3)]


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_cholesky_reconstructs_and_matches_numpy(batch):
    a = spd(4, batch)
    factor = L.cholesky(a)
    assert factor.dtype == F32 and factor.shape == a.shape
    f = np.asarray(factor, np.float64)
    close(f @ mT(f), a)
    assert np.all(np.triu(f, 1) == 0)
    close(factor, np.linalg.cholesky(a))
    close(L.cholesky(a, upper=True), mT(factor))


def test_cholesky_reads_the_lower_triangle_without_symmetrizing():
    a = spd(3)
    messy = np.tril(a) + np.triu(np.full_like(a, 7.0), 1)  # garbage above the diagonal
    close(LL.cholesky(messy, symmetrize_input=False), np.linalg.cholesky(a))
    close(LL.cholesky_p.bind(messy), np.linalg.cholesky(a))


def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan():
    bad = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    batch = np.stack([spd(2), bad, np.array([[np.inf, 0], [0, 1]], np.float32)])
    out = np.asarray(LL.cholesky_p.bind(batch))
    assert np.isfinite(out[0]).all() and np.isnan(out[1]).all() and np.isnan(out[2]).all()
    lower = np.asarray(L.cholesky(bad))  # jnp zeroes the upper triangle again, as JAX
    assert np.isnan(lower[np.tril_indices(2)]).all() and (np.triu(lower, 1) == 0).all()


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_solves_with_the_triangle_it_reads(left_side, lower, transpose_a, unit_diagonal):
    a = general((2, 4, 4))
    b = rng(1).standard_normal((2, 4, 3) if left_side else (2, 3, 4)).astype(np.float32)
    x = np.asarray(
        LL.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal),
        np.float64,
    )
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.einsum("...ii->...i", t)[..., None] * np.eye(4) + np.eye(4)
    t = mT(t) if transpose_a else t.astype(np.float64)
    close(t @ x if left_side else x @ t, b)


def test_triangular_solve_with_a_vector_right_hand_side():
    a, b = general((3, 3)), np.arange(3.0, dtype=np.float32)
    x = LL.triangular_solve(a, b, left_side=True, lower=True)
    assert x.shape == (3,)
    close(np.tril(a) @ np.asarray(x), b)
    y = LL.triangular_solve(a, b, left_side=False, lower=False)
    close(np.asarray(y) @ np.triu(a), b)


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_reconstructs_with_partial_pivoting(shape):
    a = rng(2).standard_normal(shape).astype(np.float32)
    lu, pivots, perm = LL.lu(a)
    m, n = shape[-2:]
    k = min(m, n)
    assert (lu.dtype, pivots.dtype, perm.dtype) == (F32, np.int32, np.int32)
    assert pivots.shape == (*shape[:-2], k) and perm.shape == (*shape[:-2], m)
    lu = np.asarray(lu, np.float64)
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    upper = np.triu(lu)[..., :k, :]
    close(lower @ upper, np.take_along_axis(a, np.asarray(perm)[..., None], axis=-2))
    assert np.all(np.abs(lower) <= 1 + 1e-6)  # partial pivoting: multipliers at most 1
    np.testing.assert_array_equal(perm, LL.lu_pivots_to_permutation(pivots, m))


def test_lu_pivots_are_lapacks():
    # Ties go to the first row; pivots are 0-based row indices (scipy.linalg.lu_factor's).
    a = np.array([[1.0, 2.0, 0.0], [-3.0, 1.0, 1.0], [3.0, 0.0, 2.0]], np.float32)
    _, pivots, perm = LL.lu(a)
    assert pivots.tolist() == [1, 1, 2] and perm.tolist() == [1, 0, 2]


def test_lu_of_a_singular_matrix_has_zeros_on_us_diagonal():
    lu, pivots, perm = LL.lu(np.zeros((3, 3), np.float32))
    assert np.all(np.asarray(lu) == 0) and pivots.tolist() == [0, 1, 2] and perm.tolist() == [0, 1, 2]
    lu2, _, _ = LL.lu(np.array([[1.0, 2.0], [2.0, 4.0]], np.float32))
    np.testing.assert_allclose(np.asarray(lu2), [[2.0, 4.0], [0.5, 0.0]])


def test_lu_pivots_to_permutation_follows_jaxs_out_of_range_rules():
    pivots = np.array([[7, 0, 1], [-1, 0, 1], [2, 2, 3]], np.int32)  # values from real JAX 0.10.2
    assert LL.lu_pivots_to_permutation(pivots, 4).tolist() == [[1, 2, 3, 3], [1, 2, 3, 0], [2, 0, 3, 1]]
    assert LL.lu_pivots_to_permutation(np.zeros((2, 0), np.int32), 3).tolist() == [[0, 1, 2]] * 2


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_reconstructs_and_matches_numpy(shape, mode):
    a = general(shape)
    got = L.qr(a, mode=mode)
    want = np.linalg.qr(a.astype(np.float64), mode=mode)
    if mode == "r":
        close(got, want)
        return
    q, r = (np.asarray(x, np.float64) for x in got)
    close(q @ r, a)
    close(mT(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), (*shape[:-2], q.shape[-1], q.shape[-1])))
    assert np.all(np.tril(r, -1) == 0)
    close(q, want.Q)  # LAPACK's signs on both sides
    close(r, want.R)


@pytest.mark.parametrize("batch", [(), (3,)])
@pytest.mark.parametrize("uplo", [None, "U"])
def test_eigh_diagonalizes_and_matches_numpy(batch, uplo):
    a = spd(4, batch)
    w, v = L.eigh(a, UPLO=uplo)
    assert (w.shape, v.shape) == ((*batch, 4), a.shape)
    w64, v64 = np.asarray(w, np.float64), np.asarray(v, np.float64)
    close(a @ v64, v64 * w64[..., None, :], 1e-3)
    close(mT(v64) @ v64, np.broadcast_to(np.eye(4), a.shape), 1e-5)
    nw, nv = np.linalg.eigh(a)
    close(w, nw, 1e-4)
    close(np.abs(v64), np.abs(nv), 1e-3)
    close(L.eigvalsh(a), nw, 1e-4)


def test_eigh_reads_one_triangle_without_symmetrizing():
    a = symmetric(3).astype(np.float32)
    for uplo, messy in (("L", np.tril(a) + np.triu(np.ones_like(a), 1)), ("U", np.triu(a) - np.tril(np.ones_like(a), -1))):
        w, _ = L.eigh(messy, UPLO=uplo, symmetrize_input=False)
        close(w, np.linalg.eigvalsh(a))


def test_eigh_subset_by_index_keeps_a_range_of_eigenvalues():
    a = symmetric(5).astype(np.float32)
    v, w = LL.eigh(a, subset_by_index=(1, 4))
    nw, nv = np.linalg.eigh(a)
    close(w, nw[1:4])
    close(np.abs(np.asarray(v)), np.abs(nv[:, 1:4]), 1e-3)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_reconstructs_and_matches_numpy(shape, full_matrices):
    a = general(shape)
    u, s, vh = (np.asarray(x, np.float64) for x in L.svd(a, full_matrices=full_matrices))
    k = min(shape[-2:])
    nu, ns, nvh = np.linalg.svd(a.astype(np.float64), full_matrices=full_matrices)
    assert (u.shape, s.shape, vh.shape) == (nu.shape, ns.shape, nvh.shape)
    close(s, ns)
    close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a)
    close(mT(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2))
    close(L.svdvals(a), ns)
    close(L.svd(a, compute_uv=False), ns)


def test_svd_algorithms_and_subsets_agree():
    a = separated((4, 3)).astype(np.float32)
    ns = np.linalg.svd(a, compute_uv=False)
    for algorithm in (None, LL.SvdAlgorithm.DEFAULT, LL.SvdAlgorithm.QR, LL.SvdAlgorithm.DIVIDE_AND_CONQUER):
        close(LL.svd(a, compute_uv=False, algorithm=algorithm), ns)
    u, s, vh = LL.svd(a, full_matrices=False, subset_by_index=(1, 3))
    close(s, ns[1:3])
    full_u, _, full_vh = np.linalg.svd(a, full_matrices=False)
    close(np.abs(np.asarray(u)), np.abs(full_u[:, 1:3]), 1e-3)
    close(np.abs(np.asarray(vh)), np.abs(full_vh[1:3]), 1e-3)


def test_svd_hermitian_decomposes_the_symmetric_part():
    a = symmetric(4).astype(np.float32)
    u, s, vh = L.svd(a, hermitian=True)
    close(s, np.linalg.svd(a, compute_uv=False, hermitian=True))
    close((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), a)


@pytest.mark.parametrize(
    "name", ["cholesky", "lu", "qr", "qr_full", "eigh", "svd", "svd_full", "svd_s", "triangular_solve"]
)
@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3), (0, 2, 2)])
def test_empty_matrices(name, shape):
    x = np.zeros(shape, np.float32)
    square = shape[-1] == shape[-2]
    run: dict[str, Callable[[], Any]] = {
        "cholesky": lambda: LL.cholesky(x),
        "lu": lambda: LL.lu(x),
        "qr": lambda: LL.qr(x, full_matrices=False),
        "qr_full": lambda: LL.qr(x),
        "eigh": lambda: LL.eigh(x),
        "svd": lambda: LL.svd(x, full_matrices=False),
        "svd_full": lambda: LL.svd(x),
        "svd_s": lambda: LL.svd(x, compute_uv=False),
        "triangular_solve": lambda: LL.triangular_solve(x, np.zeros((*shape[:-1], 2), np.float32), left_side=True),
    }
    if name in ("cholesky", "eigh", "triangular_solve") and not square:
        return
    outs = run[name]()
    if name == "lu":
        assert outs[2].tolist() == np.broadcast_to(np.arange(shape[-2]), (*shape[:-2], shape[-2])).tolist()
    if name == "qr_full":
        close(outs[0], np.broadcast_to(np.eye(shape[-2]), (*shape[:-2], shape[-2], shape[-2])))
    if name == "svd_full":
        close(outs[0], np.broadcast_to(np.eye(shape[-2]), (*shape[:-2], shape[-2], shape[-2])))
        close(outs[2], np.broadcast_to(np.eye(shape[-1]), (*shape[:-2], shape[-1], shape[-1])))
    for o, want in zip(outs if isinstance(outs, (tuple, list)) else [outs], _empty_shapes(name, shape)):
        assert o.shape == want


def _empty_shapes(name: str, shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    *b, m, n = shape
    k = min(m, n)
    return {
        "cholesky": [shape],
        "lu": [shape, (*b, k), (*b, m)],
        "qr": [(*b, m, k), (*b, k, n)],
        "qr_full": [(*b, m, m), (*b, m, n)],
        "eigh": [(*b, m, m), (*b, m)],
        "svd": [(*b, m, k), (*b, k), (*b, k, n)],
        "svd_full": [(*b, m, m), (*b, k), (*b, n, n)],
        "svd_s": [(*b, k)],
        "triangular_solve": [(*b, m, 2)],
    }[name]


def test_half_precision_is_computed_in_float32():
    a = spd(3)
    for dtype in (np.float16, ml_dtypes.bfloat16):
        x = a.astype(dtype)
        factor = L.cholesky(x)
        assert factor.dtype == np.dtype(dtype)
        close(np.asarray(factor, np.float32), np.linalg.cholesky(x.astype(np.float32)), 2e-2)
        w, _ = L.eigh(x)
        assert w.dtype == np.dtype(dtype)
        close(np.asarray(w, np.float32), np.linalg.eigvalsh(x.astype(np.float32)), 2e-2)


# ---------------------------------------------------------------------------
# jnp.linalg functions


def test_solve_and_inv_match_numpy_with_broadcasting():
    a = general((2, 3, 3))
    b = rng(3).standard_normal((4, 1, 3, 2)).astype(np.float32)
    close(L.solve(a, b), np.linalg.solve(a, b), 1e-3)
    close(L.solve(a[0], b[0, 0, :, 0]), np.linalg.solve(a[0], b[0, 0, :, 0]), 1e-3)
    close(L.solve(a, b[0, 0, :, 0]), np.linalg.solve(a, b[0, 0, :, 0]), 1e-3)
    close(L.inv(a), np.linalg.inv(a), 1e-3)
    with pytest.raises(ValueError, match="batched 1-dimensional solve"):
        L.solve(np.ones((2, 3, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="at least two dimensional"):
        L.solve(np.ones(3), np.ones(3))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_det_and_slogdet_match_numpy(n):
    a = general((2, n, n), seed=n) - 2 * np.eye(n, dtype=np.float32)  # some negative determinants
    close(L.det(a), np.linalg.det(a), 1e-3)
    for method in (None, "lu", "qr"):
        sign, logdet = L.slogdet(a, method=method)
        nsign, nlogdet = np.linalg.slogdet(a)
        close(sign, nsign)
        close(logdet, nlogdet, 1e-3)


def test_det_and_slogdet_of_singular_matrices():
    sing = np.array([[1.0, 2.0, 3.0, 0], [2.0, 4.0, 6.0, 0], [1.0, 0.0, 1.0, 0], [0, 0, 0, 1]], np.float32)
    assert abs(float(L.det(sing))) < 1e-5
    sign, logdet = L.slogdet(np.zeros((4, 4), np.float32))
    assert float(sign) == 0 and float(logdet) == -np.inf


@pytest.mark.parametrize("ord", [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2])
def test_matrix_norms_match_numpy(ord):
    a = general((2, 3, 4))
    close(L.norm(a, ord=ord, axis=(1, 2)), np.linalg.norm(a, ord=ord, axis=(1, 2)))
    close(L.norm(a, ord=ord, axis=(2, 1), keepdims=True), np.linalg.norm(a, ord=ord, axis=(2, 1), keepdims=True))
    close(L.matrix_norm(a, ord="fro" if ord is None else ord), np.linalg.matrix_norm(a, ord="fro" if ord is None else ord))


@pytest.mark.parametrize("ord", [None, np.inf, -np.inf, 0, 1, -1, 2, 3, 0.5])
@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # NumPy's own norm, for negative orders
def test_vector_norms_match_numpy(ord):
    x = rng(4).standard_normal((3, 5)).astype(np.float32)
    x[0, 1] = 0
    close(L.norm(x[0], ord=ord), np.linalg.norm(x[0], ord=ord))
    close(L.norm(x, ord=ord, axis=1), np.linalg.norm(x, ord=ord, axis=1))
    close(L.vector_norm(x, ord=2 if ord is None else ord, axis=(0, 1)), np.linalg.vector_norm(x, ord=2 if ord is None else ord, axis=(0, 1)))
    close(L.norm(x), np.linalg.norm(x))


def test_norm_errors():
    with pytest.raises(ValueError, match="Invalid order"):
        L.norm(np.ones((2, 2)), ord="bad")
    with pytest.raises(ValueError, match="Improper number of axes"):
        L.norm(np.ones((2, 2, 2)), ord=1)
    with pytest.raises(ValueError, match="Use 'jax.numpy.inf'"):
        L.vector_norm(np.ones(3), ord="inf")


def test_pinv_lstsq_matrix_rank_cond_match_numpy(backend_name):
    a = general((5, 3))
    b = rng(5).standard_normal((5, 2)).astype(np.float32)
    close(L.pinv(a), np.linalg.pinv(a), 1e-3)
    close(L.pinv(a, rcond=0.1), np.linalg.pinv(a, rcond=0.1), 1e-3)
    close(L.pinv(spd(3), hermitian=True), np.linalg.pinv(spd(3), hermitian=True), 1e-3)
    x, resid, rank, s = L.lstsq(a, b)
    nx, nresid, nrank, ns = np.linalg.lstsq(a, b)
    close(x, nx, 1e-3)
    close(resid, nresid, 1e-3)
    assert int(rank) == nrank and rank.dtype == np.int32
    close(s, ns)
    low_rank = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 4.0)).astype(np.float32)
    assert int(L.matrix_rank(low_rank)) == 1 and int(L.matrix_rank(a)) == 3
    orders = (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf) if backend_name == "numpy" else (None, -2, 1)
    for p in orders:  # (each order compiles its own program on xla)
        close(L.cond(general((3, 3)), p), np.linalg.cond(general((3, 3)), p), 1e-3)
    assert float(L.cond(np.zeros((2, 2), np.float32), 1)) == np.inf


def test_matrix_power_and_products():
    a = general((3, 3))
    for n in (-2, 0, 1, 3, 6):
        close(L.matrix_power(a, n), np.linalg.matrix_power(a.astype(np.float64), n), 1e-3)
    with pytest.raises(TypeError, match="exponent must be an integer"):
        L.matrix_power(a, 1.5)
    with pytest.raises(TypeError, match="square"):
        L.matrix_power(np.ones((2, 3)), 2)
    mats = [rng(i).standard_normal(s).astype(np.float32) for i, s in enumerate([(4,), (4, 2), (2, 6), (6, 3), (3,)])]
    close(L.multi_dot(mats), np.linalg.multi_dot(mats), 1e-3)
    close(L.multi_dot(mats[1:4]), np.linalg.multi_dot(mats[1:4]), 1e-3)
    v, w = mats[0], rng(9).standard_normal(3).astype(np.float32)
    close(L.outer(v, w), np.outer(v, w))
    c = rng(8).standard_normal((2, 3)).astype(np.float32)
    close(L.cross(c[0], c[1]), np.cross(c[0], c[1]))
    close(L.cross(c.T, c[::-1].T, axis=0), np.cross(c.T, c[::-1].T, axis=0))
    close(L.vecdot(c, c[1]), np.linalg.vecdot(c, c[1]))
    close(L.matmul(mats[1], mats[2]), mats[1] @ mats[2], 1e-5)
    close(L.tensordot(mats[1], mats[1], axes=2), np.tensordot(mats[1], mats[1], axes=2), 1e-5)
    close(L.matrix_transpose(np.ones((2, 3, 4))), np.ones((2, 4, 3)))
    for offset in (-2, -1, 0, 1, 3, 9):
        close(L.diagonal(general((2, 3, 4)), offset=offset), np.linalg.diagonal(general((2, 3, 4)), offset=offset))
        close(L.trace(general((2, 3, 4)), offset=offset), np.linalg.trace(general((2, 3, 4)), offset=offset), 1e-5)


def test_tensorinv_and_tensorsolve_match_numpy():
    a = (np.eye(6).reshape(6, 2, 3) + 0.1 * rng(6).standard_normal((6, 2, 3))).astype(np.float32)
    close(L.tensorinv(a, ind=1), np.linalg.tensorinv(a, ind=1), 1e-3)
    big = (np.eye(6).reshape(2, 3, 6) + 0.1 * rng(7).standard_normal((2, 3, 6))).astype(np.float32)
    b = rng(8).standard_normal((2, 3)).astype(np.float32)
    close(L.tensorsolve(big, b), np.linalg.tensorsolve(big, b), 1e-3)


def test_integer_inputs_promote_to_the_default_float():
    a = np.array([[2, 1], [1, 2]], np.int32)
    assert L.cholesky(a).dtype == F32 and L.det(a).dtype == F32 and L.inv(a).dtype == F32
    assert L.eigh(a).eigenvalues.dtype == F32 and L.norm(a).dtype == F32


def test_float64_under_x64(x64):
    a = spd(4, dtype=np.float64)
    factor = L.cholesky(a)
    assert factor.dtype == F64
    close(np.asarray(factor) @ mT(factor), a, 1e-12)
    w, v = L.eigh(a)
    assert w.dtype == F64
    close(np.asarray(w), np.linalg.eigvalsh(a), 1e-10)
    close(L.solve(a, np.ones(4)), np.linalg.solve(a, np.ones(4)), 1e-10)
    close(L.det(a), np.linalg.det(a), 1e-10)


def test_result_types_are_named_tuples_as_in_jax():
    a = spd(2)
    assert L.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert L.qr(a)._fields == ("Q", "R")
    assert L.slogdet(a)._fields == ("sign", "logabsdet")
    assert L.svd(a)._fields == ("U", "S", "Vh")


# ---------------------------------------------------------------------------
# Derivatives


# The derivative rules are backend-independent code: numpy runs every case,
# xla (where each new program compiles) the cases that reach each primitive.
XLA_DERIVATIVE_CASES = ("det4", "solve", "eigh", "svd")


def _derivative_cases(backend_name: str | None, cases: dict[str, Any]) -> dict[str, Any]:
    return cases if backend_name == "numpy" else {k: v for k, v in cases.items() if k in XLA_DERIVATIVE_CASES}


def _check_all(cases: dict[str, Any]) -> None:
    for name, (f, args) in cases.items():
        try:
            check_grads(jax.jit(f), args, 1, modes=("fwd", "rev"))  # jit: one compilation per function on xla
        except AssertionError as e:
            e.add_note(f"derivative case {name!r}")
            raise


def test_primitive_jvps_match_finite_differences(backend_name, x64):
    a, sym, b = spd(3, (2,), np.float64), symmetric(3, (2,)), rng(1).standard_normal((2, 3, 2))

    def eighs(x: Any) -> Any:
        return [LL.eigh_p.bind(x, lower=lower, sort_eigenvalues=True, subset_by_index=None, algorithm=None) for lower in (True, False)]

    cases = {
        "cholesky": (lambda x: LL.cholesky_p.bind(x), (a,)),
        "eigh": (eighs, (sym,)),
        "triangular_solve": (lambda a_, b_: LL.triangular_solve(a_, b_, left_side=True, lower=True, transpose_a=True), (a, b)),
    }
    for shape in ((4, 3), (2, 4), (3, 3)):
        x = separated(shape)
        cases[f"svd{shape}"] = (lambda x: (LL.svd(x, full_matrices=False), LL.svd(x, full_matrices=False, compute_uv=False, subset_by_index=(0, 1))), (x,))
        cases[f"qr_lu{shape}"] = (lambda x: (LL.qr(x, full_matrices=True), LL.lu(x)[0]), (x + 3 * np.eye(*shape),))
    if backend_name != "numpy":
        cases = {k: v for k, v in cases.items() if k in ("cholesky", "triangular_solve", "qr_lu(4, 3)")}
    _check_all(cases)


def test_jnp_linalg_derivatives_match_finite_differences(backend_name, x64):
    a3, a4, sym = general((3, 3), np.float64), general((2, 4, 4), np.float64, seed=1), symmetric(3)
    tall = separated((4, 3))
    b = rng(2).standard_normal((4, 2))
    cases = {
        "det": (L.det, (a3,)),
        "det4": (L.det, (a4,)),
        "slogdet": (lambda x: L.slogdet(x).logabsdet, (a4,)),
        "slogdet_qr": (lambda x: L.slogdet(x, method="qr").logabsdet, (a4,)),
        "inv": (L.inv, (a4,)),
        "solve": (L.solve, (a4, b)),
        "solve_vec": (L.solve, (a4[0], b[:, 0])),
        "cholesky": (L.cholesky, (spd(3, dtype=np.float64),)),
        "eigh": (L.eigh, (sym,)),
        "eigvalsh": (L.eigvalsh, (sym,)),
        "svd": (lambda x: L.svd(x, full_matrices=False), (tall,)),
        "qr": (L.qr, (tall,)),
        "lu": (lambda x: LL.lu(x)[0], (a3,)),
        "pinv": (L.pinv, (tall,)),
        "pinv_wide": (L.pinv, (tall.T,)),
        "lstsq": (lambda x, y: L.lstsq(x, y)[0], (tall, b)),
        "norm_nuc": (lambda x: L.norm(x, ord="nuc"), (tall,)),
        "norm_2": (lambda x: L.norm(x, ord=2), (tall,)),
        "matrix_power": (lambda x: L.matrix_power(x, -2), (a3,)),
    }
    _check_all(_derivative_cases(backend_name, cases))


def test_grad_of_det_at_a_singular_matrix_is_the_adjugate(x64):
    sing = np.array([[1.0, 2.0, 3.0, 1.0], [2.0, 4.0, 6.0, 2.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    assert abs(np.linalg.det(sing)) < 1e-12
    # d det / dA = adj(A)ᵀ, computed here by cofactors.
    cof = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(sing, i, 0), j, 1)) for j in range(4)] for i in range(4)])
    grad_det = jax.jit(jax.grad(L.det))
    close(grad_det(sing), cof, 1e-8)
    close(grad_det(np.zeros((3, 3))), np.zeros((3, 3)))


def test_grads_of_det_slogdet_solve_inv_have_closed_forms(x64):
    a = general((4, 4), np.float64)
    b = rng(3).standard_normal(4)
    grads = jax.jit(lambda a, b: (
        jax.grad(L.det)(a),
        jax.grad(lambda x: L.slogdet(x)[1])(a),
        jax.grad(lambda y: L.solve(a, y).sum())(b),
        jax.grad(lambda m: L.solve(m, b).sum())(a),
        jax.grad(lambda m: L.inv(m).sum())(a),
    ))(a, b)  # fmt: skip
    inv_t = np.linalg.inv(a).T
    x = np.linalg.solve(a, b)
    g = np.linalg.solve(a.T, np.ones(4))  # d/db sum(solve(a, b)) = a⁻ᵀ 1; d/da = -(a⁻ᵀ 1) xᵀ
    want = (np.linalg.det(a) * inv_t, inv_t, g, -np.outer(g, x), -inv_t @ np.ones((4, 4)) @ inv_t)
    for got, w in zip(grads, want):
        close(got, w, 1e-8)


def test_derivatives_jit_and_vmap_compose(x64):
    a = general((3, 4, 4), np.float64)
    g = jax.jit(jax.vmap(jax.grad(L.det)))(a)
    one = jax.jit(jax.grad(L.det))
    for i in range(3):
        close(g[i], one(a[i]), 1e-10)
        close(g[i], np.linalg.det(a[i]) * np.linalg.inv(a[i]).T, 1e-8)
    close(jax.jit(jax.vmap(jax.grad(lambda x: L.slogdet(x)[1])))(a), np.linalg.inv(a).swapaxes(-1, -2), 1e-8)


def test_partial_decompositions_have_no_derivative():
    a = symmetric(3).astype(np.float32)
    with pytest.raises(NotImplementedError, match="partial eigen"):
        jax.jvp(lambda x: LL.eigh(x, subset_by_index=(0, 2)), (a,), (a,))
    with pytest.raises(NotImplementedError, match="full matrices"):
        jax.jvp(lambda x: LL.svd(x), (np.ones((3, 2), np.float32),), (np.ones((3, 2), np.float32),))
    r = separated((3, 2)).astype(np.float32)
    with pytest.raises(NotImplementedError, match="partial SVD"):
        jax.jvp(lambda x: LL.svd(x, full_matrices=False, subset_by_index=(0, 1)), (r,), (r,))
    # The singular values alone have a derivative: ds_i = u_iᵀ da v_i.
    _, ds = jax.jvp(lambda x: LL.svd(x, full_matrices=False, compute_uv=False, subset_by_index=(0, 1)), (r,), (r,))
    close(ds, np.linalg.svd(r, compute_uv=False)[:1], 1e-5)  # along a itself: ds = s


# ---------------------------------------------------------------------------
# vmap and jit


@pytest.mark.parametrize(
    "name", ["cholesky", "qr", "eigh", "svd", "lu", "det", "slogdet", "inv", "solve", "solve_b_only", "ts_b_only", "pinv", "norm"]
)
def test_vmap_equals_stacking(name):
    xs = np.stack([spd(3, seed=i) for i in range(3)])
    bs = rng(4).standard_normal((3, 3, 2)).astype(np.float32)
    f, in_axes, args = {
        "cholesky": (L.cholesky, 0, (xs,)),
        "qr": (L.qr, 0, (xs,)),
        "eigh": (L.eigh, 0, (xs,)),
        "svd": (L.svd, 0, (xs,)),
        "lu": (LL.lu, 0, (xs,)),
        "det": (L.det, 0, (np.swapaxes(xs, 0, 1),)),
        "slogdet": (L.slogdet, 0, (xs,)),
        "inv": (L.inv, 0, (xs,)),
        "solve": (L.solve, (0, 2), (xs, np.moveaxis(bs, 0, 2))),
        "solve_b_only": (L.solve, (None, 0), (xs[0], bs)),
        "ts_b_only": (lambda a, b: LL.triangular_solve(a, b, left_side=False, lower=True), (None, 1), (xs[0], bs.reshape(2, 3, 3))),
        "pinv": (L.pinv, 0, (xs,)),
        "norm": (lambda x: L.norm(x, ord=2), 0, (xs,)),
    }[name]
    batched = jax.vmap(f, in_axes=in_axes)(*args)
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    for i in range(3):
        one = f(*[x if d is None else np.take(x, i, axis=d) for x, d in zip(args, axes)])
        for got, want in zip(jax.tree_util.tree_leaves(batched), jax.tree_util.tree_leaves(one)):
            close(np.asarray(got)[i], want, 1e-5)
    for got, want in zip(jax.tree_util.tree_leaves(jax.jit(jax.vmap(f, in_axes=in_axes))(*args)), jax.tree_util.tree_leaves(batched)):
        close(got, want, 1e-5)


@settings(max_examples=10)
@given(st.integers(0, 2), st.integers(1, 4), st.booleans())
def test_vmap_of_triangular_solve_over_any_axis(bdim, n, left_side):
    a = general((n, n))
    b = rng(n).standard_normal((3, n, 2) if left_side else (3, 2, n)).astype(np.float32)
    bb = np.moveaxis(b, 0, bdim)
    out = jax.vmap(lambda y: LL.triangular_solve(a, y, left_side=left_side, lower=True), in_axes=bdim)(bb)
    want = np.stack([np.asarray(LL.triangular_solve(a, b[i], left_side=left_side, lower=True)) for i in range(3)])
    close(out, want, 1e-5)


# ---------------------------------------------------------------------------
# Errors, NotImplementedError, jaxprs


def test_bad_operands_raise_jaxs_errors():
    with pytest.raises(TypeError, match="does not accept dtype int32 at position 0"):
        LL.cholesky_p.bind(np.eye(2, dtype=np.int32))
    with pytest.raises(ValueError, match="must be a square matrix"):
        LL.cholesky_p.bind(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="rank at least 2"):
        LL.lu(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="Incompatible shapes for arguments to triangular_solve"):
        LL.triangular_solve(np.eye(3, dtype=np.float32), np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="same number of batch dimensions"):
        LL.triangular_solve(np.eye(3, dtype=np.float32), np.ones((2, 3, 2), np.float32), left_side=True)
    with pytest.raises(ValueError, match="same batch dimensions"):
        LL.triangular_solve(np.ones((2, 3, 3), np.float32), np.ones((4, 3, 2), np.float32), left_side=True)
    with pytest.raises(TypeError, match="same dtypes"):
        LL.triangular_solve(np.eye(3, dtype=np.float32), np.ones((3, 2), np.float16), left_side=True)
    with pytest.raises(ValueError, match="symmetric eigendecomposition"):
        LL.eigh(np.ones((2, 3), np.float32), symmetrize_input=False)
    with pytest.raises(TypeError, match="add got incompatible shapes"):  # symmetrizing first fails, as in JAX
        LL.eigh(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="full_matrices and subset_by_index"):
        LL.svd(np.ones((3, 2), np.float32), subset_by_index=(0, 1))
    with pytest.raises(ValueError, match="has to exceed"):
        LL.lu_pivots_to_permutation(np.zeros(3, np.int32), 2)
    with pytest.raises(TypeError, match="subtypes of int32"):
        LL.lu_pivots_to_permutation(np.zeros(3, np.int16), 3)
    with pytest.raises(ValueError, match="Argument to _det"):
        L.det(np.ones((2, 3)))
    with pytest.raises(ValueError, match="UPLO"):
        L.eigh(np.eye(2), UPLO="X")
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        L.qr(np.eye(2), mode="nope")
    with pytest.raises(ValueError, match="Unknown slogdet method"):
        L.slogdet(np.eye(2), method="nope")
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        L.inv([[1.0, 0.0], [0.0, 1.0]])


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda: L.qr(np.eye(2), mode="raw"), "mode='raw'"),
        (lambda: LL.qr(np.eye(2, dtype=np.float32), pivoting=True), "pivoting=True"),
        (lambda: LL.eigh(np.eye(2, dtype=np.float32), implementation=LL.EighImplementation.JACOBI), "JACOBI"),
        (lambda: LL.svd(np.eye(2, dtype=np.float32), algorithm=LL.SvdAlgorithm.POLAR), "POLAR"),
        (lambda: LL.qdwh(np.eye(2, dtype=np.float32), dynamic_shape=(1, 1)), "dynamic_shape"),
        (lambda: LL.schur(np.eye(2, dtype=np.float32), sort_eig_vals=True), "sort feature"),
    ],
)  # fmt: skip
def test_unsupported_options_raise_not_implemented_naming_them(call, what):
    with pytest.raises(NotImplementedError, match=what):
        call()


def test_jaxprs_print_and_parse_back():
    a, r = spd(3), general((4, 3))
    programs = [
        (lambda x: LL.eigh(x, subset_by_index=(0, 2), implementation=LL.EighImplementation.QR), a),
        (lambda x: LL.svd(x, full_matrices=False, algorithm=LL.SvdAlgorithm.QR), r),
        (lambda x: LL.lu(x), r),
        (lambda x: LL.lu_pivots_to_permutation(LL.lu(x)[1], 5), r),
        (lambda x: LL.qr(x), r),
        (lambda x: LL.triangular_solve(x, x, left_side=True, unit_diagonal=True), a),
        (lambda x: LL.cholesky(x), a),
    ]
    for f, x in programs:
        closed = jax.make_jaxpr(f)(x)
        text = str(closed)
        parsed = parse_jaxpr(text)
        assert str(parsed) == text


def test_jit_gives_the_eager_results():
    a = spd(4, (2,))
    for f in (L.eigh, L.svd, LL.lu, L.det, lambda x: L.solve(x, x[..., :1])):
        for got, want in zip(jax.tree_util.tree_leaves(jax.jit(f)(a)), jax.tree_util.tree_leaves(f(a))):
            close(got, want, 1e-5)
