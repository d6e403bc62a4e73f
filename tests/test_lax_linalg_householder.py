"""lax.linalg's Householder family and solvers: householder_product, ormqr, hessenberg, tridiagonal,
schur, symmetric_product, cholesky_update, tridiagonal_solve (spec/primitives/linalg.md).

Every test runs on each backend (tests/conftest.py). They check the
reconstruction identities (A = Q H Qᵀ, A = Q T Qᵀ, Q orthogonal), values
against NumPy, tridiagonal_solve's derivatives (check_grads) and batching,
the errors JAX raises, and the jaxprs' text round trip.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
from minijax import lax
from minijax.jaxpr_parse import parse_jaxpr
from minijax.testing import check_grads

LL = lax.linalg


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def f64(x: Any) -> np.ndarray:
    return np.asarray(x, np.float64)


def close(got: Any, want: Any, tol: float = 1e-4) -> None:
    got, want = f64(got), f64(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def mT(x: Any) -> np.ndarray:
    return np.swapaxes(f64(x), -1, -2)


def hessenberg_q(h: Any, taus: Any) -> Any:
    """Q of a Hessenberg reduction: its reflectors shifted one column right, behind an identity one."""
    h, taus = np.asarray(h), np.asarray(taus)
    reflectors = np.pad(h[..., :, :-1], [(0, 0)] * (h.ndim - 1) + [(1, 0)])
    return LL.householder_product(reflectors, np.pad(taus, [(0, 0)] * (taus.ndim - 1) + [(1, 0)]))


# ---------------------------------------------------------------------------
# householder_product and ormqr


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 5, 2)])
def test_householder_product_of_geqrf_reflectors_is_qrs_q(shape):
    a = rng(0).standard_normal(shape).astype(np.float32)
    q_want, _ = LL.qr(a, full_matrices=False)
    # Build geqrf's output by hand from NumPy's raw QR (its reflectors are LAPACK's).
    flat = a.reshape((-1, *shape[-2:]))
    h = np.stack([np.linalg.qr(m, mode="raw")[0].T for m in flat]).reshape(shape).astype(np.float32)
    taus = np.stack([np.linalg.qr(m, mode="raw")[1] for m in flat]).reshape((*shape[:-2], min(shape[-2:]))).astype(np.float32)
    q = LL.householder_product(h, taus)
    assert q.shape == shape and q.dtype == np.float32
    close(q, q_want)
    close(mT(q) @ f64(q), np.broadcast_to(np.eye(shape[-1]), (*shape[:-2], shape[-1], shape[-1])))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_multiplies_by_q_without_forming_it(left, transpose):
    a = rng(1).standard_normal((4, 3))
    h_raw, taus = np.linalg.qr(a, mode="raw")
    h, taus = h_raw.T.astype(np.float32), taus.astype(np.float32)
    q = f64(LL.householder_product(np.pad(h, ((0, 0), (0, 1))), np.asarray(taus)))  # the full 4×4 Q
    c = rng(2).standard_normal((4, 2) if left else (2, 4)).astype(np.float32)
    op = q.T if transpose else q
    got = LL.ormqr(h, taus, c, left=left, transpose=transpose)
    close(got, op @ c if left else c @ op)


def test_householder_product_and_ormqr_errors():
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        LL.householder_product(np.ones((2, 3), np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="must not have more rows"):
        LL.householder_product(np.ones((3, 2), np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match="same dtypes, got float32, float16"):
        LL.householder_product(np.ones((3, 2), np.float32), np.ones(2, np.float16))
    with pytest.raises(TypeError, match="does not accept dtype int32 at position 1"):
        LL.householder_product(np.ones((3, 2), np.float32), np.ones(2, np.int32))
    with pytest.raises(ValueError, match="left=True expects c to have the same number of rows"):
        LL.ormqr(np.ones((3, 2), np.float32), np.ones(2, np.float32), np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="more than the 2 reflectors"):  # JAX crashes inside LAPACK here
        LL.ormqr(np.ones((3, 2), np.float32), np.ones(4, np.float32), np.ones((4, 3), np.float32), left=False)


# ---------------------------------------------------------------------------
# hessenberg, tridiagonal, schur


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (2, 4, 4)])
def test_hessenberg_reconstructs(shape):
    a = rng(3).standard_normal(shape).astype(np.float32)
    h, taus = LL.hessenberg(a)
    n = shape[-1]
    assert h.shape == shape and taus.shape == (*shape[:-2], n - 1)
    upper = np.triu(f64(h), -1)
    q = f64(hessenberg_q(h, taus))
    close(q @ upper @ mT(q), a)
    close(mT(q) @ q, np.broadcast_to(np.eye(n), q.shape))


def test_hessenberg_matches_lapacks_reflectors():
    # gehrd's values for this matrix (from JAX 0.10.2 on CPU): the reflectors are unique.
    a = np.arange(9.0, dtype=np.float32).reshape(3, 3) + np.eye(3, dtype=np.float32)
    h, taus = LL.hessenberg(a)
    beta = -np.hypot(3.0, 6.0)
    v = 6.0 / (3.0 - beta)
    close(taus, [(beta - 3.0) / beta, 0.0], 1e-5)
    close(f64(h)[:, 0], [1.0, beta, v], 1e-5)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_tridiagonal_reconstructs_from_the_triangle_it_reads(lower, batch):
    n = 5
    s = rng(4).standard_normal((*batch, n, n))
    s = (s + mT(s)) / 2
    junk = np.triu(np.full_like(s, 9.0), 1) if lower else np.tril(np.full_like(s, 9.0), -1)
    messy = (np.tril(s) if lower else np.triu(s)) + junk
    a, d, e, taus = LL.tridiagonal(messy.astype(np.float32), lower=lower)
    assert d.shape == (*batch, n) and e.shape == taus.shape == (*batch, n - 1)
    t = np.zeros((*batch, n, n))
    idx = np.arange(n)
    t[..., idx, idx] = f64(d)
    t[..., idx[1:], idx[:-1]] = f64(e)
    t[..., idx[:-1], idx[1:]] = f64(e)
    # The eigenvalues of T are those of the symmetric matrix read.
    close(np.linalg.eigvalsh(t), np.linalg.eigvalsh(s))
    if lower:  # Q from the reflectors (below the subdiagonal) reconstructs A = Q T Qᵀ
        q = f64(hessenberg_q(a, taus))
        close(q @ t @ mT(q), s)


def test_tridiagonal_values_match_lapack():
    # sytrd's values for this matrix, lower and upper (from JAX 0.10.2 on CPU).
    a = np.arange(9.0, dtype=np.float32).reshape(3, 3) + np.eye(3, dtype=np.float32)
    _, d, e, taus = LL.tridiagonal(a)
    close(d, [1.0, 13.8, 0.2], 1e-5)
    close(e, [-np.hypot(3, 6), 2.6], 1e-5)
    _, d, e, taus = LL.tridiagonal(a, lower=False)
    close(d, [0.862069, 5.137931, 9.0], 1e-5)
    close(e, [0.655172, -np.hypot(2, 5)], 1e-5)
    close(taus, [0.0, 1.928477], 1e-5)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
@pytest.mark.parametrize("seed", [0, 1])
def test_schur_is_a_real_schur_decomposition(n, seed):
    a = rng(seed).standard_normal((2, n, n)).astype(np.float32)
    t, q = LL.schur(a)
    t, q = f64(t), f64(q)
    close(q @ t @ mT(q), a)
    close(mT(q) @ q, np.broadcast_to(np.eye(n), q.shape))
    assert np.all(np.tril(t, -2) == 0)
    for tm, am in zip(t, a):
        sub = np.diagonal(tm, -1)
        assert not np.any((sub[1:] != 0) & (sub[:-1] != 0))  # 1×1 and 2×2 blocks only
        for i in np.flatnonzero(sub):  # a 2×2 block is a complex pair in standard form
            assert abs(tm[i, i] - tm[i + 1, i + 1]) < 1e-5 and tm[i, i + 1] * tm[i + 1, i] < 0
        want = np.sort_complex(np.linalg.eigvals(am.astype(np.float64)))
        np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(tm)), want, atol=1e-4)
    (t_only,) = LL.schur(a, compute_schur_vectors=False)
    close(t_only, t)


def test_schur_options_and_errors():
    a = np.eye(3, dtype=np.float32)
    with pytest.raises(NotImplementedError, match="sort feature"):
        LL.schur(a, sort_eig_vals=True)
    with pytest.raises(ValueError, match="must be a square matrix. Got shape"):
        LL.schur(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="schur does not accept dtype int32"):
        LL.schur(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="Hessenberg reduction must have shape"):
        LL.hessenberg(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="tridiagonal must be a square matrix"):
        LL.tridiagonal(np.ones((0, 0), np.float32))
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        jax.jvp(lambda x: LL.schur(x)[0], (a,), (a,))
    t, q = LL.schur(np.zeros((0, 0), np.float32))
    assert t.shape == q.shape == (0, 0)


def test_vmap_of_the_decompositions_is_the_batched_primitive():
    a = rng(5).standard_normal((3, 4, 4)).astype(np.float32)
    for f in (LL.hessenberg, LL.tridiagonal, LL.schur):
        for got, want in zip(jax.vmap(f)(a), f(a)):
            close(got, want, 1e-5)
    closed = jax.make_jaxpr(jax.vmap(LL.hessenberg))(a)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["hessenberg"]


# ---------------------------------------------------------------------------
# symmetric_product and cholesky_update


def test_symmetric_product_values_and_symmetrized_output():
    a = rng(6).standard_normal((2, 3, 4)).astype(np.float32)
    c = rng(7).standard_normal((2, 3, 3)).astype(np.float32)
    want = 2.0 * f64(a) @ mT(a) + 0.5 * f64(c)
    close(LL.symmetric_product(a, c, alpha=2.0, beta=0.5), want)
    sym = f64(LL.symmetric_product(a, c, alpha=2.0, beta=0.5, symmetrize_output=True))
    close(np.tril(sym), np.tril(want))
    close(sym, mT(sym))
    with pytest.raises(ValueError, match="symmetric_update expects"):
        LL.symmetric_product(np.ones((3, 2), np.float32), np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="Accepted dtypes at position 0 are subtypes of floating."):
        LL.symmetric_product(np.ones((3, 2), np.int32), np.ones((3, 3), np.int32))
    # A fuzz finding: alpha=None failed inside the NumPy backend (TypeError naming no operation) and gave
    # NaN on XLA.
    with pytest.raises(TypeError, match="symmetric_product: alpha must be a real number, got None"):
        LL.symmetric_product(np.ones((3, 2), np.float32), np.ones((3, 3), np.float32), alpha=None)


def test_cholesky_update_is_the_factor_of_the_updated_matrix():
    x = rng(8).standard_normal((4, 4))
    a = x @ x.T + 4 * np.eye(4)
    r = np.linalg.cholesky(a).T.astype(np.float32)
    w = rng(9).standard_normal(4).astype(np.float32)
    got = f64(LL.cholesky_update(r, w))
    assert np.all(np.abs(np.tril(got, -1)) < 1e-5)  # rounding remnants, as in JAX
    close(got.T @ got, a + np.outer(w, w))
    close(LL.cholesky_update(r, np.zeros(4, np.float32)), r, 1e-6)
    with pytest.raises(TypeError, match="must have a rank of exactly 2"):
        LL.cholesky_update(np.ones((2, 3, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="Batching rule for 'cholesky_update'"):
        jax.vmap(LL.cholesky_update)(np.ones((2, 3, 3), np.float32), np.ones((2, 3), np.float32))


# ---------------------------------------------------------------------------
# tridiagonal_solve


def tridiagonal_system(m: int, k: int, batch: tuple[int, ...] = (), seed: int = 0) -> tuple[np.ndarray, ...]:
    r = rng(seed)
    dl, d, du = (r.standard_normal((*batch, m)).astype(np.float32) for _ in range(3))
    d = d + np.where(d >= 0, 3.0, -3.0).astype(np.float32)
    return dl, d, du, r.standard_normal((*batch, m, k)).astype(np.float32)


def dense(dl: np.ndarray, d: np.ndarray, du: np.ndarray) -> np.ndarray:
    m = d.shape[-1]
    idx = np.arange(m)
    a = np.zeros((*d.shape, m))
    a[..., idx, idx] = d
    a[..., idx[1:], idx[:-1]] = dl[..., 1:]
    a[..., idx[:-1], idx[1:]] = du[..., :-1]
    return a


@pytest.mark.parametrize(("m", "batch"), [(1, ()), (2, ()), (5, ()), (4, (2, 3))])
def test_tridiagonal_solve_matches_a_dense_solve(m, batch):
    dl, d, du, b = tridiagonal_system(m, 2, batch)
    close(LL.tridiagonal_solve(dl, d, du, b), np.linalg.solve(dense(dl, d, du), f64(b)))


def test_tridiagonal_solve_pivots_on_a_zero_diagonal_and_gives_nan_when_singular():
    # d[0] = 0: only a row swap (partial pivoting) solves this one.
    dl, d, du = (np.array(v, np.float32) for v in ([0, 1, 1], [0, 2, 3], [1, 1, 0]))
    b = np.array([[1.0], [2.0], [3.0]], np.float32)
    close(LL.tridiagonal_solve(dl, d, du, b), np.linalg.solve(dense(dl, d, du), f64(b)))
    zeros = np.zeros(3, np.float32)
    assert np.isnan(f64(LL.tridiagonal_solve(zeros, zeros, zeros, b))).all()


def test_tridiagonal_solve_derivatives_and_transpose():
    dl, d, du, b = tridiagonal_system(4, 2, (), seed=1)
    check_grads(LL.tridiagonal_solve, (dl, d, du, b), order=1, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)

    # The transpose of b -> A⁻¹ b is c -> A⁻ᵀ c.
    def solve_b(x: Any) -> Any:
        return LL.tridiagonal_solve(dl, d, du, x)

    _, pullback = jax.vjp(solve_b, b)
    (ct,) = pullback(np.ones_like(b))
    close(ct, np.linalg.solve(dense(dl, d, du).T, np.ones_like(f64(b))))


@pytest.mark.parametrize("axes", [(None, None, None, 0), (0, 0, 0, 0), (0, None, None, 2)])
def test_tridiagonal_solve_vmap(axes):
    dl, d, du, b = tridiagonal_system(4, 2, (3,), seed=2)
    args = [dl, d, du, b]
    args = [x[0] if ax is None else x for x, ax in zip(args, axes)]
    if axes[3] == 2:
        args[3] = np.moveaxis(args[3], 0, 2)
    got = jax.vmap(LL.tridiagonal_solve, in_axes=axes)(*args)
    want = np.stack([
        LL.tridiagonal_solve(*[x if ax is None else np.take(x, i, axis=ax) for x, ax in zip(args, axes)]) for i in range(3)
    ])  # fmt: skip
    close(got, want, 1e-5)


def test_tridiagonal_solve_errors():
    one = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="all diagonal arguments have the same shape"):
        LL.tridiagonal_solve(one, one, one[:2], np.ones((3, 1), np.float32))
    with pytest.raises(TypeError, match="leading ndim-1 dimensions of b"):
        LL.tridiagonal_solve(one, one, one, np.ones((2, 1), np.float32))
    with pytest.raises(TypeError, match="Input 3 to tridiagonal_solve must have rank at least 2"):
        LL.tridiagonal_solve(one, one, one, one)
    with pytest.raises(TypeError, match="same dtypes, got float16, float32, float32, float32"):
        LL.tridiagonal_solve(one.astype(np.float16), one, one, np.ones((3, 1), np.float32))


# ---------------------------------------------------------------------------
# jit and the jaxprs' text


def test_jit_gives_the_eager_results():
    a = rng(10).standard_normal((4, 4)).astype(np.float32)
    dl, d, du, b = tridiagonal_system(4, 2)
    for f, args in (
        (LL.hessenberg, (a,)), (LL.tridiagonal, (a,)), (LL.schur, (a,)),
        (LL.tridiagonal_solve, (dl, d, du, b)), (lambda x: LL.symmetric_product(x, x, beta=2.0), (a,)),
    ):  # fmt: skip
        for got, want in zip(jax.tree_util.tree_leaves(jax.jit(f)(*args)), jax.tree_util.tree_leaves(f(*args))):
            close(got, want, 1e-5)


def test_jaxprs_print_and_parse_back():
    a = np.eye(3, dtype=np.float32)
    v = np.ones(3, np.float32)
    programs = [
        (LL.hessenberg, (a,)),
        (lambda x: LL.tridiagonal(x, lower=False), (a,)),
        (lambda x: LL.schur(x, compute_schur_vectors=False), (a,)),
        (lambda x, t: LL.householder_product(x, t[:2]), (a, v)),
        (lambda x, t: LL.ormqr(x, t[:2], x, left=False, transpose=True), (a, v)),
        (lambda x: LL.symmetric_product(x, x, alpha=2.0, beta=3.0, symmetrize_output=True), (a,)),
        (LL.cholesky_update, (a, v)),
        (lambda t, x: LL.tridiagonal_solve(t, t, t, x), (v, a)),
    ]
    for f, args in programs:
        text = str(jax.make_jaxpr(f)(*args))
        assert str(parse_jaxpr(text)) == text


# ---------------------------------------------------------------------------
# jax.scipy.linalg on the primitives


def test_scipy_schur_and_hessenberg():
    import minijax.scipy.linalg as sl

    a = rng(11).standard_normal((2, 4, 4)).astype(np.float32)
    t, z = sl.schur(a)
    close(f64(z) @ f64(t) @ mT(z), a)
    h = f64(sl.hessenberg(a))
    assert np.all(np.tril(h, -2) == 0)
    h, q = sl.hessenberg(a, calc_q=True)
    close(f64(q) @ f64(h) @ mT(q), a)
    close(mT(q) @ f64(q), np.broadcast_to(np.eye(4), (2, 4, 4)))
    empty_h, empty_q = sl.hessenberg(np.zeros((0, 0), np.float32), calc_q=True)
    assert empty_h.shape == empty_q.shape == (0, 0)


def test_eigh_tridiagonal_of_tridiagonals_output_gives_the_eigenvalues():
    import minijax.scipy.linalg as sl

    s = rng(12).standard_normal((5, 5))
    s = ((s + s.T) / 2).astype(np.float32)
    _, d, e, _ = LL.tridiagonal(s)
    close(sl.eigh_tridiagonal(d, e, eigvals_only=True), np.linalg.eigvalsh(f64(s)))


# ---------------------------------------------------------------------------
# Modules for the GPU (no GPU here: the lowered text only, as tests/test_gpu_plugin.py does)


@pytest.mark.single_backend
def test_gpu_modules_call_cusolver_and_cusparse_and_cpu_only_routines_say_so():
    from minijax_xla.lowering import lower_jaxpr, module_text

    def lowered(platform: str, f: Any, *args: Any) -> str:
        module, _ = lower_jaxpr(jax.make_jaxpr(f)(*args), "main", {}, [], platform)
        return module_text(module)

    a = np.eye(4, dtype=np.float32) + 0.5
    taus = np.ones(3, np.float32)
    v = np.ones(4, np.float32)
    cases = [
        (LL.householder_product, (a, taus), "lapack_sorgqr_ffi", "cusolver_orgqr_ffi"),
        (LL.ormqr, (a, taus, a), "lapack_sormqr_ffi", "cusolver_ormqr_ffi"),
        (LL.tridiagonal, (a,), "lapack_ssytrd_ffi", "cusolver_sytrd_ffi"),
        (LL.tridiagonal_solve, (v, v, v, a), "lapack_sgtsv_ffi", "cusparse_gtsv2_ffi"),
    ]
    for f, args, cpu_target, gpu_target in cases:
        cpu_text, gpu_text = lowered("cpu", f, *args), lowered("gpu", f, *args)
        assert cpu_target in cpu_text and "cusolver" not in cpu_text and "cusparse" not in cpu_text
        assert gpu_target in gpu_text and "lapack_" not in gpu_text
    for f, routine in ((LL.hessenberg, "gehrd"), (LL.schur, "gees")):
        assert f"lapack_s{routine}_ffi" in lowered("cpu", f, a)
        with pytest.raises(NotImplementedError, match=f"not implemented on the gpu platform.*{routine}"):
            lowered("gpu", f, a)
