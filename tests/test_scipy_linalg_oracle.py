"""``jax.scipy.linalg`` and ``jax.scipy.sparse.linalg`` against real JAX 0.10.2 (the oracle).

Each case is a program written once against a ``(jax, scipy.linalg,
scipy.sparse.linalg)`` triple; it runs under JAX and under minijax on the same
inputs and the results must agree in dtype, shape and weak type exactly and in
value within float32 accuracy (sign-free quantities for eigenvectors and the
Krylov solvers' answers, whose iterates may round differently). Hypothesis
draws shapes, batch axes and options; errors must have JAX's type.
Run where JAX is installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_scipy_linalg_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.scipy.linalg as jsl  # noqa: E402
import jax.scipy.sparse.linalg as jssl  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.scipy.linalg as msl  # noqa: E402
import minijax.scipy.sparse.linalg as mssl  # noqa: E402
from minijax.config import enable_x64  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

Libs = tuple[Any, Any, Any]
JAX: Libs = (jax, jsl, jssl)
MINI: Libs = (minijax, msl, mssl)


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _leaves(item)]
    if isinstance(x, dict):
        return [leaf for key in sorted(x) for leaf in _leaves(x[key])]
    return [x]


def _assert_like_jax(got: Any, want: Any, tol: float = 2e-4, what: str = "") -> None:
    got_l, want_l = _leaves(got), _leaves(want)
    assert len(got_l) == len(want_l), what
    for g, w in zip(got_l, want_l):
        if isinstance(w, bool) or w is None:
            assert g == w, what
            continue
        assert (g.dtype, g.shape, g.aval.weak_type) == (w.dtype, w.shape, w.aval.weak_type), what
        g64, w64 = np.asarray(g, np.float64), np.asarray(w, np.float64)
        scale = max(1.0, float(np.max(np.abs(np.nan_to_num(w64)), initial=0.0)))
        np.testing.assert_allclose(g64, w64, rtol=tol, atol=tol * scale, err_msg=what)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _spd(seed: int, n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    a = _rng(seed).standard_normal((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def _general(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    m, n = shape[-2:]
    return (_rng(seed).standard_normal(shape) + 3 * np.eye(m, n)).astype(np.float32)


def _vec(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return _rng(seed + 1).standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------------------
# Fixed programs: name -> (program(jax, sl, ssl) -> function, arguments)

A3, SPD3, B3, BM = _general(0, (3, 3)), _spd(1, 3), _vec(2, (3,)), _vec(3, (3, 2))
UPPER3 = np.triu(A3) + 2 * np.eye(3, dtype=np.float32)
I32 = np.array([1, 2, 3], np.int32)

PROGRAMS: dict[str, tuple[Callable[[Any, Any, Any], Callable[..., Any]], tuple[Any, ...]]] = {
    "cholesky_upper": (lambda j, s, p: s.cholesky, (SPD3,)),
    "cholesky_lower": (lambda j, s, p: lambda a: s.cholesky(a, lower=True), (SPD3,)),
    "cho_solve_vec": (lambda j, s, p: lambda a, b: s.cho_solve(s.cho_factor(a), b), (SPD3, B3)),
    "cho_solve_lower_mat": (lambda j, s, p: lambda a, b: s.cho_solve(s.cho_factor(a, lower=True), b), (SPD3, BM)),
    "lu_factor": (lambda j, s, p: s.lu_factor, (A3,)),
    "lu_solve": (lambda j, s, p: lambda a, b: s.lu_solve(s.lu_factor(a), b), (A3, B3)),
    "lu_solve_t": (lambda j, s, p: lambda a, b: s.lu_solve(s.lu_factor(a), b, trans=1), (A3, BM)),
    "lu": (lambda j, s, p: s.lu, (_general(4, (3, 4)),)),
    "lu_tall_permute_l": (lambda j, s, p: lambda a: s.lu(a, permute_l=True), (_general(4, (4, 2)),)),
    "solve_triangular": (lambda j, s, p: s.solve_triangular, (UPPER3, B3)),
    "solve_triangular_t_lower_unit": (
        lambda j, s, p: lambda a, b: s.solve_triangular(a.T, b, trans="T", lower=True, unit_diagonal=True), (UPPER3, BM)
    ),
    "solve_triangular_int": (lambda j, s, p: s.solve_triangular, (np.triu(np.ones((2, 2), np.int32)), np.ones(2, np.int32))),
    "solve_gen": (lambda j, s, p: s.solve, (A3, BM)),
    "solve_pos": (lambda j, s, p: lambda a, b: s.solve(a, b, assume_a="pos"), (SPD3, B3)),
    "solve_pos_lower": (lambda j, s, p: lambda a, b: s.solve(a, b, assume_a="pos", lower=True), (SPD3, BM)),
    "det": (lambda j, s, p: s.det, (A3,)),
    "inv": (lambda j, s, p: s.inv, (A3,)),
    "svd_values": (lambda j, s, p: lambda a: s.svd(a, compute_uv=False), (_general(5, (2, 3)),)),
    "eigh_values": (lambda j, s, p: lambda a: s.eigh(a, eigvals_only=True), (SPD3,)),
    "qr_r": (lambda j, s, p: lambda a: s.qr(a, mode="r"), (_general(6, (4, 3)),)),
    "qr_multiply_right": (lambda j, s, p: lambda a, c: s.qr_multiply(a, c), (_general(6, (4, 3)), _vec(7, (2, 4)))),
    "qr_multiply_left_1d": (lambda j, s, p: lambda a, c: s.qr_multiply(a, c, mode="left"), (_general(6, (4, 3)), _vec(7, (3,)))),
    "expm_small": (lambda j, s, p: s.expm, (0.1 * A3,)),
    "expm_mid": (lambda j, s, p: s.expm, (0.5 * A3,)),
    "expm_large": (lambda j, s, p: s.expm, (2.0 * A3,)),
    "expm_batched": (lambda j, s, p: s.expm, (0.3 * _general(8, (2, 3, 3)),)),
    "expm_upper": (lambda j, s, p: lambda a: s.expm(a, upper_triangular=True), (0.3 * UPPER3,)),
    "expm_too_many_squarings": (lambda j, s, p: lambda a: s.expm(a, max_squarings=1), (50.0 * A3,)),
    "expm_frechet": (lambda j, s, p: s.expm_frechet, (0.3 * A3, _general(9, (3, 3)))),
    "expm_frechet_only": (lambda j, s, p: lambda a, e: s.expm_frechet(a, e, compute_expm=False), (0.3 * A3, A3)),
    "expm_grad": (lambda j, s, p: j.grad(lambda a: s.expm(a).sum()), (0.3 * A3,)),
    "expm_vmap": (lambda j, s, p: j.vmap(s.expm), (0.3 * _general(8, (2, 3, 3)),)),
    "polar_right": (lambda j, s, p: s.polar, (_general(10, (4, 3)),)),
    "polar_left_svd": (lambda j, s, p: lambda a: s.polar(a, side="left", method="svd"), (_general(10, (3, 3)),)),
    "block_diag": (lambda j, s, p: s.block_diag, (np.ones((2, 2), np.float32), np.arange(3, dtype=np.int32), np.float32(5))),
    "block_diag_weak": (lambda j, s, p: lambda: s.block_diag(1.0, 2.0), ()),
    "block_diag_empty": (lambda j, s, p: lambda: s.block_diag(), ()),
    "toeplitz": (lambda j, s, p: s.toeplitz, (I32,)),
    "toeplitz_cr": (lambda j, s, p: s.toeplitz, (np.arange(3, dtype=np.float32), np.arange(5, dtype=np.float32))),
    "toeplitz_batched": (lambda j, s, p: s.toeplitz, (np.ones((2, 3), np.float32), np.arange(4, dtype=np.float32))),
    "hankel": (lambda j, s, p: s.hankel, (I32,)),
    "hankel_cr": (lambda j, s, p: s.hankel, (np.arange(3, dtype=np.float32), np.arange(9, 13, dtype=np.int32))),
    "circulant": (lambda j, s, p: s.circulant, (I32,)),
    "circulant_batched": (lambda j, s, p: s.circulant, (np.arange(6, dtype=np.float32).reshape(2, 3),)),
    "leslie": (lambda j, s, p: s.leslie, (np.array([1.0, 2, 3], np.float32), np.array([0.5, 0.6], np.float32))),
    "companion": (lambda j, s, p: s.companion, (I32,)),
    "fiedler": (lambda j, s, p: s.fiedler, (np.array([1, 4, 2, 7], np.int32),)),
    "fiedler_companion": (lambda j, s, p: s.fiedler_companion, (np.arange(1, 7, dtype=np.float32),)),
    "fiedler_companion_2": (lambda j, s, p: s.fiedler_companion, (np.array([2.0, 3.0], np.float32),)),
    "convolution_matrix_full": (lambda j, s, p: lambda a: s.convolution_matrix(a, 4), (np.array([1.0, 2, 3], np.float32),)),
    "convolution_matrix_same": (lambda j, s, p: lambda a: s.convolution_matrix(a, 5, "same"), (np.arange(1, 5, dtype=np.float32),)),
    "convolution_matrix_valid": (lambda j, s, p: lambda a: s.convolution_matrix(a, 2, "valid"), (np.arange(1, 5, dtype=np.float32),)),
    "hilbert": (lambda j, s, p: lambda: s.hilbert(4), ()),
    "invhilbert": (lambda j, s, p: lambda: s.invhilbert(4), ()),
    "pascal": (lambda j, s, p: lambda: s.pascal(4), ()),
    "pascal_lower": (lambda j, s, p: lambda: s.pascal(4, "lower"), ()),
    "invpascal_upper": (lambda j, s, p: lambda: s.invpascal(4, "upper"), ()),
    "invpascal": (lambda j, s, p: lambda: s.invpascal(4), ()),
    "helmert": (lambda j, s, p: lambda: s.helmert(4), ()),
    "helmert_full": (lambda j, s, p: lambda: s.helmert(4, full=True), ()),
    "hadamard": (lambda j, s, p: lambda: s.hadamard(8), ()),
    "hadamard_float": (lambda j, s, p: lambda: s.hadamard(4, np.float32), ()),
    "eigh_tridiagonal_values": (lambda j, s, p: lambda d, e: s.eigh_tridiagonal(d, e, eigvals_only=True), (_vec(11, (6,)), _vec(12, (5,)))),
    "eigh_tridiagonal_select_i": (
        lambda j, s, p: lambda d, e: s.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)), (_vec(11, (6,)), _vec(12, (5,)))
    ),
    "cg": (lambda j, s, p: lambda a, b: p.cg(a, b, tol=1e-6), (SPD3, B3)),
    "cg_function_precond": (lambda j, s, p: lambda a, b: p.cg(lambda x: a @ x, b, M=lambda x: x / 3.0, maxiter=50), (SPD3, B3)),
    "cg_pytree": (lambda j, s, p: lambda a, b: p.cg(lambda t: {"u": a @ t["u"]}, {"u": b}), (SPD3, B3)),
    "bicgstab": (lambda j, s, p: lambda a, b: p.bicgstab(a, b, tol=1e-6), (A3, B3)),
    "gmres_batched": (lambda j, s, p: lambda a, b: p.gmres(a, b, tol=1e-6), (A3, B3)),
    "gmres_incremental": (lambda j, s, p: lambda a, b: p.gmres(a, b, tol=1e-6, solve_method="incremental", restart=2), (A3, B3)),
    "cg_grad_b": (lambda j, s, p: j.grad(lambda b, a: p.cg(a, b)[0].sum()), (B3, SPD3)),
    "cg_grad_a": (lambda j, s, p: j.grad(lambda a, b: p.cg(a, b)[0].sum()), (SPD3, B3)),
    "gmres_grad_b": (lambda j, s, p: j.grad(lambda b, a: p.gmres(a, b)[0].sum()), (B3, A3)),
    "bicgstab_grad_a": (lambda j, s, p: j.grad(lambda a, b: p.bicgstab(a, b)[0].sum()), (A3, B3)),
    "cg_vmap": (lambda j, s, p: j.vmap(lambda b, a: p.cg(a, b)[0], in_axes=(0, None)), (_vec(13, (2, 3)), SPD3)),
    "cg_jit": (lambda j, s, p: j.jit(lambda a, b: p.cg(a, b)[0]), (SPD3, B3)),
    "solve_triangular_grad": (lambda j, s, p: j.grad(lambda a, b: s.solve_triangular(a, b).sum()), (UPPER3, B3)),
    # cholesky reads one triangle: minijax's gradient differs from JAX's off the symmetric matrices, so compare G + Gᵀ.
    "cho_solve_grad": (lambda j, s, p: lambda a, b: (lambda g: g + g.T)(j.grad(lambda a: s.cho_solve(s.cho_factor(a), b).sum())(a)), (SPD3, B3)),
    "solve_pos_grad": (lambda j, s, p: j.grad(lambda a, b: s.solve(a, b, assume_a="pos").sum()), (SPD3, B3)),
    "lu_solve_vmap": (lambda j, s, p: j.vmap(lambda a, b: s.lu_solve(s.lu_factor(a), b)), (_general(14, (2, 3, 3)), _vec(15, (2, 3)))),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_agrees_with_jax(name: str) -> None:
    program, args = PROGRAMS[name]
    want = program(*JAX)(*args)
    got = program(*MINI)(*args)
    _assert_like_jax(got, want, what=name)


def test_eigh_tridiagonal_vectors_agree_up_to_sign() -> None:
    d, e = _vec(11, (5,)), _vec(12, (4,))
    w_want, v_want = jsl.eigh_tridiagonal(d, e)
    w_got, v_got = msl.eigh_tridiagonal(d, e)
    _assert_like_jax(w_got, w_want)
    assert v_got.dtype == v_want.dtype and v_got.shape == v_want.shape
    np.testing.assert_allclose(np.abs(np.asarray(v_got)), np.abs(np.asarray(v_want)), atol=2e-4)


def test_svd_eigh_qr_wrappers_agree_in_sign_free_form() -> None:
    a = _general(16, (4, 3))
    for got, want in zip(msl.svd(a), jsl.svd(a)):
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_allclose(msl.svd(a)[1], jsl.svd(a)[1], rtol=1e-5)
    w_got, v_got = msl.eigh(SPD3)
    w_want, v_want = jsl.eigh(SPD3)
    np.testing.assert_allclose(w_got, w_want, rtol=1e-5)
    np.testing.assert_allclose(np.abs(v_got), np.abs(v_want), atol=1e-5)
    q_got, r_got = msl.qr(a, mode="economic")
    q_want, r_want = jsl.qr(a, mode="economic")
    np.testing.assert_allclose(np.abs(r_got), np.abs(r_want), atol=1e-5)
    assert q_got.shape == q_want.shape


# ---------------------------------------------------------------------------
# Hypothesis over shapes and options


@settings(max_examples=12, deadline=None)
@given(
    n=st.sampled_from((1, 2, 4)),
    batch=st.sampled_from(((), (2,))),
    k=st.sampled_from((None, 1, 3)),
    lower=st.booleans(),
    trans=st.sampled_from((0, 1, "N", "T")),
    unit=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_solves_over_shapes(
    n: int, batch: tuple[int, ...], k: int | None, lower: bool, trans: Any, unit: bool, seed: int
) -> None:
    a = _general(seed, (*batch, n, n))
    a = np.tril(a) if lower else np.triu(a)
    b = _vec(seed, (n,) if k is None else (*batch, n, k))
    for program in (
        lambda s: s.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit),
        lambda s: s.cho_solve(s.cho_factor(_spd(seed, n, batch), lower=lower), b),
        lambda s: s.lu_solve(s.lu_factor(_general(seed, (*batch, n, n))), b, trans=0 if trans in (0, "N") else 1),
        # (JAX's solve(assume_a='pos') rejects a 1-D b with a batch of matrices: test_errors_have_jax_type)
        lambda s: s.solve(
            _spd(seed, n, batch), b if k is not None else np.broadcast_to(b, (*batch, n)), assume_a="pos", lower=lower
        ),
    ):
        _assert_like_jax(program(msl), program(jsl), tol=2e-3)


@settings(max_examples=12, deadline=None)
@given(
    n=st.sampled_from((1, 2, 3, 5)),
    scale=st.sampled_from((0.01, 0.3, 1.0, 4.0, 20.0)),
    x64=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_expm_over_norms(n: int, scale: float, x64: bool, seed: int) -> None:
    dtype = np.float64 if x64 else np.float32
    a = (scale * _rng(seed).standard_normal((n, n)) / n).astype(dtype)
    with jax.enable_x64(x64), enable_x64(x64):
        _assert_like_jax(msl.expm(a), jsl.expm(a), tol=1e-3)


@settings(max_examples=10, deadline=None)
@given(m=st.integers(0, 4), n=st.integers(0, 4), batch=st.sampled_from(((), (2,), (1, 2))), seed=st.integers(0, 99))
def test_structured_matrices_over_shapes(m: int, n: int, batch: tuple[int, ...], seed: int) -> None:
    c, r = _vec(seed, (*batch, max(m, 1))), _vec(seed + 5, (max(n, 1),))
    for program in (
        lambda s: s.toeplitz(c, r),
        lambda s: s.toeplitz(c),
        lambda s: s.hankel(c, r),
        lambda s: s.circulant(c),
        lambda s: s.fiedler(c),
        lambda s: s.companion(c) if c.shape[-1] >= 2 else s.fiedler(c),
        lambda s: s.convolution_matrix(c, max(n, 1), "same"),
    ):
        _assert_like_jax(program(msl), program(jsl))


# ---------------------------------------------------------------------------
# Errors: JAX's types


ERRORS: dict[str, Callable[[Any, Any], Any]] = {
    "solve_bad_assume_a": lambda s, p: s.solve(A3, B3, assume_a="banana"),
    "solve_triangular_bad_trans": lambda s, p: s.solve_triangular(UPPER3, B3, trans=3),
    "qr_bad_mode": lambda s, p: s.qr(A3, mode="reduced"),
    "qr_multiply_bad_mode": lambda s, p: s.qr_multiply(A3, B3, mode="up"),
    "qr_multiply_bad_shape": lambda s, p: s.qr_multiply(A3, np.ones((2, 2), np.float32)),
    "eigh_b": lambda s, p: s.eigh(SPD3, SPD3),
    "eigh_type": lambda s, p: s.eigh(SPD3, type=2),
    "expm_not_square": lambda s, p: s.expm(np.ones((2, 3), np.float32)),
    "expm_frechet_shapes": lambda s, p: s.expm_frechet(A3, np.ones((2, 2), np.float32)),
    "block_diag_3d": lambda s, p: s.block_diag(np.ones((1, 1, 1), np.float32)),
    "hankel_scalar": lambda s, p: s.hankel(np.float32(1)),
    "toeplitz_list": lambda s, p: s.toeplitz([1, 2]),
    "leslie_short": lambda s, p: s.leslie(np.ones(1, np.float32), np.ones(0, np.float32)),
    "leslie_mismatch": lambda s, p: s.leslie(np.ones(3, np.float32), np.ones(3, np.float32)),
    "companion_short": lambda s, p: s.companion(np.ones(1, np.float32)),
    "fiedler_companion_empty": lambda s, p: s.fiedler_companion(np.ones(0, np.float32)),
    "convolution_matrix_n": lambda s, p: s.convolution_matrix(np.ones(3, np.float32), 0),
    "convolution_matrix_mode": lambda s, p: s.convolution_matrix(np.ones(3, np.float32), 2, "nope"),
    "pascal_kind": lambda s, p: s.pascal(3, "middle"),
    "invpascal_kind": lambda s, p: s.invpascal(3, "middle"),
    "helmert_n": lambda s, p: s.helmert(0),
    "hadamard_n": lambda s, p: s.hadamard(6),
    "polar_side": lambda s, p: s.polar(A3, side="up"),
    "polar_1d": lambda s, p: s.polar(B3),
    "polar_qdwh_shape": lambda s, p: s.polar(np.ones((2, 3), np.float32)),
    "polar_method": lambda s, p: s.polar(A3, method="nope"),
    "schur_output": lambda s, p: s.schur(A3, output="imaginary"),
    "eigh_tridiagonal_dtypes": lambda s, p: s.eigh_tridiagonal(np.ones(3, np.float32), np.ones(2, np.float16)),
    "eigh_tridiagonal_float16": lambda s, p: s.eigh_tridiagonal(np.ones(3, np.float16), np.ones(2, np.float16)),
    "solve_pos_shapes": lambda s, p: s.solve(np.ones((2, 1, 1), np.float32), np.ones(1, np.float32), assume_a="pos"),
    "eigh_tridiagonal_select_v": lambda s, p: s.eigh_tridiagonal(
        np.ones(3, np.float32), np.ones(2, np.float32), select="v"
    ),
    "eigh_tridiagonal_select_range": lambda s, p: s.eigh_tridiagonal(
        np.ones(3, np.float32), np.ones(2, np.float32), select="i"
    ),
    "eigh_tridiagonal_select": lambda s, p: s.eigh_tridiagonal(
        np.ones(3, np.float32), np.ones(2, np.float32), select="x"
    ),
    "cg_not_square": lambda s, p: p.cg(np.ones((2, 3), np.float32), np.ones(2, np.float32)),
    "cg_bad_operator": lambda s, p: p.cg("A", np.ones(2, np.float32)),
    "cg_x0_tree": lambda s, p: p.cg(A3, B3, x0=(B3,)),
    "cg_x0_shape": lambda s, p: p.cg(A3, B3, x0=np.ones(2, np.float32)),
    "gmres_method": lambda s, p: p.gmres(A3, B3, solve_method="nope"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_jax_type(name: str) -> None:
    with pytest.raises(Exception) as want:
        ERRORS[name](jsl, jssl)
    with pytest.raises(type(want.value)):
        ERRORS[name](msl, mssl)
