"""Linear algebra against real JAX 0.10.2 (the oracle): jaxpr text, values, dtypes, weak types, gradients.

Each program is written once against a ``(jax, jnp)`` pair and runs under JAX
and under minijax. For the fixed list ``JAXPR_PROGRAMS`` the printed jaxprs
must be identical; over hypothesis inputs the values must agree within the
decompositions' accuracy (LAPACK on both sides; eigenvector and singular
vector signs are compared through sign-free quantities), and dtypes, shapes
and weak types exactly. Run where JAX is installed:
    .venv-oracle/bin/python -m pytest tests/test_linalg_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy as jjnp  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

Libs = tuple[Any, Any]
JAX: Libs = (jax, jjnp)
MINI: Libs = (minijax, mjnp)


def _a(seed: int = 0, shape: tuple[int, ...] = (3, 3)) -> np.ndarray:
    m, n = shape[-2:]
    return (np.random.default_rng(seed).standard_normal(shape) + 2 * np.eye(m, n)).astype(np.float32)


SPD = (_a(1) @ _a(1).T + np.eye(3)).astype(np.float32)
RECT = _a(2, (2, 3))
B = np.ones((3, 2), np.float32)

# name -> (program(jax, jnp) -> function, arguments)
JAXPR_PROGRAMS: dict[str, tuple[Callable[[Any, Any], Callable[..., Any]], tuple[Any, ...]]] = {
    "cholesky": (lambda j, n: n.linalg.cholesky, (SPD,)),
    "cholesky_upper": (lambda j, n: lambda x: n.linalg.cholesky(x, upper=True), (SPD,)),
    "lax_cholesky_nosym": (lambda j, n: lambda x: j.lax.linalg.cholesky(x, symmetrize_input=False), (SPD,)),
    "triangular_solve": (lambda j, n: lambda a, b: j.lax.linalg.triangular_solve(a, b, left_side=True, lower=True), (SPD, B)),
    "triangular_solve_vector": (
        lambda j, n: lambda a, b: j.lax.linalg.triangular_solve(a, b, lower=False, transpose_a=True, unit_diagonal=True),
        (SPD, B[:, 0]),
    ),
    "lu": (lambda j, n: j.lax.linalg.lu, (SPD,)),
    "lu_pivots_to_permutation": (lambda j, n: lambda p: j.lax.linalg.lu_pivots_to_permutation(p, 4), (np.array([1, 2, 2], np.int32),)),
    "qr": (lambda j, n: n.linalg.qr, (RECT,)),
    "qr_complete": (lambda j, n: lambda x: n.linalg.qr(x, mode="complete"), (RECT,)),
    "qr_r": (lambda j, n: lambda x: n.linalg.qr(x, mode="r"), (RECT,)),
    "lax_qr": (lambda j, n: j.lax.linalg.qr, (RECT,)),
    "eigh": (lambda j, n: n.linalg.eigh, (SPD,)),
    "eigh_upper_unsymmetrized": (lambda j, n: lambda x: n.linalg.eigh(x, UPLO="U", symmetrize_input=False), (SPD,)),
    "eigvalsh": (lambda j, n: n.linalg.eigvalsh, (SPD,)),
    "lax_eigh_qr": (lambda j, n: lambda x: j.lax.linalg.eigh(x, implementation=j.lax.linalg.EighImplementation.QR), (SPD,)),
    "svd": (lambda j, n: n.linalg.svd, (RECT,)),
    "svd_reduced": (lambda j, n: lambda x: n.linalg.svd(x, full_matrices=False), (RECT,)),
    "svdvals": (lambda j, n: n.linalg.svdvals, (RECT,)),
    "lax_svd_gesvd": (lambda j, n: lambda x: j.lax.linalg.svd(x, algorithm=j.lax.linalg.SvdAlgorithm.QR), (RECT,)),
    "lax_svd_values": (lambda j, n: lambda x: j.lax.linalg.svd(x, compute_uv=False), (RECT,)),
    "det2": (lambda j, n: n.linalg.det, (SPD[:2, :2],)),
    "det3": (lambda j, n: n.linalg.det, (SPD,)),
    "norm": (lambda j, n: n.linalg.norm, (SPD,)),
    "norm_vector": (lambda j, n: n.linalg.norm, (SPD[0],)),
    "norm_axis": (lambda j, n: lambda x: n.linalg.norm(x, axis=1), (SPD,)),
    "norm_1": (lambda j, n: lambda x: n.linalg.norm(x, ord=1), (SPD,)),
    "norm_inf": (lambda j, n: lambda x: n.linalg.norm(x, ord=np.inf), (SPD,)),
    "norm_2": (lambda j, n: lambda x: n.linalg.norm(x, ord=2), (SPD,)),
    "norm_nuc": (lambda j, n: lambda x: n.linalg.norm(x, ord="nuc"), (SPD,)),
    "vector_norm_inf": (lambda j, n: lambda x: n.linalg.vector_norm(x, ord=np.inf), (SPD[0],)),
    "matrix_power_3": (lambda j, n: lambda x: n.linalg.matrix_power(x, 3), (SPD,)),
    "matrix_power_5": (lambda j, n: lambda x: n.linalg.matrix_power(x, 5), (SPD,)),
    "matrix_transpose": (lambda j, n: n.linalg.matrix_transpose, (RECT,)),
    "vmap_cholesky": (lambda j, n: j.vmap(j.lax.linalg.cholesky), (np.stack([SPD, SPD]),)),
    "vmap_eigh": (lambda j, n: j.vmap(n.linalg.eigh), (np.stack([SPD, SPD]),)),
    "vmap_svd_axis1": (lambda j, n: j.vmap(n.linalg.svd, in_axes=1), (np.stack([RECT, RECT], axis=1),)),
    "vmap_triangular_solve_b": (
        lambda j, n: lambda a, b: j.vmap(lambda y: j.lax.linalg.triangular_solve(a, y, left_side=True, lower=True))(b),
        (SPD, np.ones((4, 3, 2), np.float32)),
    ),
    "vmap_triangular_solve_both": (
        lambda j, n: j.vmap(lambda a, y: j.lax.linalg.triangular_solve(a, y, left_side=False), in_axes=(0, 1)),
        (np.stack([SPD, SPD]), np.ones((2, 2, 3), np.float32)),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(JAXPR_PROGRAMS))
def test_printed_jaxpr_equals_jax(name: str) -> None:
    program, args = JAXPR_PROGRAMS[name]
    want = jax.make_jaxpr(program(*JAX))(*args)
    got = minijax.make_jaxpr(program(*MINI))(*args)
    assert str(got) == str(want)


# ---------------------------------------------------------------------------
# Values, dtypes and weak types over hypothesis inputs


def _leaves(x: Any) -> list[Any]:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _assert_like_jax(got: Any, want: Any, tol: float, what: str) -> None:
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        assert (g.dtype, g.shape, g.aval.weak_type) == (w.dtype, w.shape, w.aval.weak_type), what
        g64, w64 = np.asarray(g, np.float64), np.asarray(w, np.float64)
        scale = max(1.0, float(np.max(np.abs(np.nan_to_num(w64)), initial=0.0)))
        np.testing.assert_allclose(g64, w64, rtol=tol, atol=tol * scale, err_msg=what)


@st.composite
def _matrices(draw: st.DrawFn, square: bool = False, kind: str = "general") -> np.ndarray:
    # A few shapes only: each new shape compiles anew, in JAX and in minijax.
    batch = draw(st.sampled_from(((), (2,))))
    n = draw(st.sampled_from((1, 3)))
    m = n if square else draw(st.sampled_from((n, 2)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((*batch, m, n))
    if kind == "spd":
        x = x @ np.swapaxes(x, -1, -2) + n * np.eye(n)
    elif kind == "symmetric":  # eigenvalues at least 0.5 apart: eigenvectors are well defined
        q = np.linalg.qr(rng.standard_normal((*batch, n, n)))[0]
        x = (q * (np.arange(n) * 0.5 + rng.uniform(0, 0.1, (*batch, n)))[..., None, :]) @ np.swapaxes(q, -1, -2)
        x = (x + np.swapaxes(x, -1, -2)) / 2
    elif kind == "invertible":
        x = x + 3 * np.eye(m, n)
    return x.astype(np.float32)


def _sign_free(x: Any) -> np.ndarray:
    """|x|: eigenvectors and singular vectors are defined up to sign."""
    return np.abs(np.asarray(x))


# name -> (strategy, program(jax, jnp) -> function of one matrix, post-processing of the results, tolerance)
VALUE_PROGRAMS: dict[str, tuple[Any, Callable[[Any, Any], Callable[..., Any]], Callable[[Any], Any] | None, float]] = {
    "cholesky": (_matrices(True, "spd"), lambda j, n: n.linalg.cholesky, None, 1e-4),
    "cholesky_upper": (_matrices(True, "spd"), lambda j, n: lambda x: n.linalg.cholesky(x, upper=True), None, 1e-4),
    "inv": (_matrices(True, "invertible"), lambda j, n: n.linalg.inv, None, 1e-3),
    "solve": (_matrices(True, "invertible"), lambda j, n: lambda x: n.linalg.solve(x, x[..., :1] * 2 + 1), None, 1e-3),
    "det": (_matrices(True, "invertible"), lambda j, n: n.linalg.det, None, 1e-3),
    "slogdet": (_matrices(True), lambda j, n: n.linalg.slogdet, None, 1e-3),
    "slogdet_qr": (_matrices(True, "invertible"), lambda j, n: lambda x: n.linalg.slogdet(x, method="qr"), None, 1e-3),
    "eigh": (_matrices(True, "symmetric"), lambda j, n: n.linalg.eigh, lambda r: (r[0], _sign_free(r[1])), 1e-3),
    "eigvalsh": (_matrices(True, "spd"), lambda j, n: n.linalg.eigvalsh, None, 1e-4),
    "svd": (_matrices(), lambda j, n: n.linalg.svd, lambda r: (_sign_free(r[0]), r[1], _sign_free(r[2])), 1e-3),
    "svd_reduced": (_matrices(), lambda j, n: lambda x: n.linalg.svd(x, full_matrices=False)[1], None, 1e-4),
    "svdvals": (_matrices(), lambda j, n: n.linalg.svdvals, None, 1e-4),
    "qr": (_matrices(kind="invertible"), lambda j, n: n.linalg.qr, None, 1e-4),  # LAPACK's signs on both sides
    "qr_complete": (_matrices(kind="invertible"), lambda j, n: lambda x: n.linalg.qr(x, mode="complete")[1], None, 1e-4),
    "lu": (_matrices(), lambda j, n: j.lax.linalg.lu, None, 1e-4),  # pivots and permutations exactly
    "triangular_solve": (
        _matrices(True, "invertible"),
        lambda j, n: lambda x: j.lax.linalg.triangular_solve(x, x * 0.5 + 1, left_side=True, lower=False, transpose_a=True),
        None, 1e-3,
    ),
    "norm_fro": (_matrices(), lambda j, n: n.linalg.norm, None, 1e-5),
    "norm_orders": (
        _matrices(),
        lambda j, n: lambda x: [n.linalg.norm(x, ord=o, axis=(-2, -1)) for o in (1, -1, 2, -2, np.inf, -np.inf, "nuc")],
        None, 1e-4,
    ),
    "vector_norms": (
        _matrices(),
        lambda j, n: lambda x: [n.linalg.vector_norm(x, ord=o, axis=-1) for o in (0, 1, 2, 3, np.inf, -np.inf)],
        None, 1e-4,
    ),
    "pinv": (_matrices(kind="invertible"), lambda j, n: n.linalg.pinv, None, 1e-3),
    "matrix_rank": (_matrices(), lambda j, n: n.linalg.matrix_rank, None, 0.0),
    "matrix_power": (_matrices(True, "invertible"), lambda j, n: lambda x: [n.linalg.matrix_power(x, k) for k in (-2, 0, 1, 4)], None, 1e-3),
    "cond": (_matrices(True, "invertible"), lambda j, n: lambda x: [n.linalg.cond(x, p) for p in (None, 1, "fro")], None, 1e-3),
    "trace_diagonal": (_matrices(), lambda j, n: lambda x: [n.linalg.trace(x), n.linalg.diagonal(x, offset=1)], None, 1e-5),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(VALUE_PROGRAMS))
def test_values_dtypes_and_weak_types_equal_jax(name: str) -> None:
    strategy, program, post, tol = VALUE_PROGRAMS[name]

    # Under jit on both sides: one compilation per shape rather than one per operation.
    want_f, got_f = jax.jit(program(*JAX)), minijax.jit(program(*MINI))

    @settings(max_examples=6)
    @given(strategy)
    def check(x: np.ndarray) -> None:
        want = want_f(x)
        got = got_f(x)
        if post is not None:
            want, got = post(want), post(got)
        # post-processing makes NumPy arrays: compare those without the aval check
        if post is not None:
            for g, w in zip(_leaves(got), _leaves(want), strict=True):
                np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=tol, atol=tol, err_msg=name)
            return
        _assert_like_jax(got, want, tol, name)

    check()


def test_lstsq_and_small_products_equal_jax() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    for got, want in zip(mjnp.linalg.lstsq(a, b), jjnp.linalg.lstsq(a, b), strict=True):
        _assert_like_jax(got, want, 1e-3, "lstsq")
    mats = [rng.standard_normal(s).astype(np.float32) for s in [(4,), (4, 2), (2, 6), (6,)]]
    _assert_like_jax(mjnp.linalg.multi_dot(mats), jjnp.linalg.multi_dot(mats), 1e-4, "multi_dot")
    v, w = mats[0], rng.standard_normal(3).astype(np.float32)
    _assert_like_jax(mjnp.linalg.outer(v, w), jjnp.linalg.outer(v, w), 1e-6, "outer")
    c = rng.standard_normal((2, 3)).astype(np.float32)
    _assert_like_jax(mjnp.linalg.cross(c[0], c[1]), jjnp.linalg.cross(c[0], c[1]), 1e-6, "cross")
    _assert_like_jax(mjnp.linalg.vecdot(c, c[1]), jjnp.linalg.vecdot(c, c[1]), 1e-5, "vecdot")
    ints = np.array([[2, 1], [1, 3]], np.int32)
    for name in ("inv", "det", "cholesky", "eigvalsh", "norm", "pinv", "svdvals"):
        _assert_like_jax(getattr(mjnp.linalg, name)(ints), getattr(jjnp.linalg, name)(ints), 1e-4, f"{name} of int32")


def test_lu_pivots_to_permutation_equals_jax_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    for size in (1, 3, 5):
        pivots = rng.integers(-size - 2, size + 2, (4, size)).astype(np.int32)
        want = jax.lax.linalg.lu_pivots_to_permutation(pivots, size + 1)
        got = minijax.lax.linalg.lu_pivots_to_permutation(pivots, size + 1)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_failures_give_nans_as_in_jax() -> None:
    bad = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    np.testing.assert_array_equal(np.isnan(mjnp.linalg.cholesky(bad)), np.isnan(jjnp.linalg.cholesky(bad)))
    nan = np.array([[1.0, np.nan], [np.nan, 1.0]], np.float32)
    for f in ("eigvalsh", "svdvals"):
        np.testing.assert_array_equal(np.isnan(getattr(mjnp.linalg, f)(nan)), np.isnan(getattr(jjnp.linalg, f)(nan)))
    assert float(mjnp.linalg.det(np.zeros((4, 4), np.float32))) == float(jjnp.linalg.det(np.zeros((4, 4), np.float32)))
    for got, want in zip(mjnp.linalg.slogdet(np.zeros((4, 4), np.float32)), jjnp.linalg.slogdet(np.zeros((4, 4), np.float32))):
        assert float(got) == float(want)


# ---------------------------------------------------------------------------
# Gradients


def _grad_programs() -> dict[str, tuple[Callable[[Any, Any], Callable[..., Any]], np.ndarray]]:
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
    w = (rng.standard_normal((4, 4)) + 4 * np.eye(4)).astype(np.float32)
    spd = (a @ a.T + np.eye(3)).astype(np.float32)
    r = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    weights = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    singular = np.array([[1, 2, 3, 0], [2, 4, 6, 0], [1, 0, 1, 0], [0, 0, 0, 1]], np.float32)
    return {
        "det3": (lambda j, n: n.linalg.det, a),
        "det4": (lambda j, n: n.linalg.det, w),
        "det_singular": (lambda j, n: n.linalg.det, singular),
        "slogdet": (lambda j, n: lambda x: n.linalg.slogdet(x)[1], w),
        "slogdet_2x2": (lambda j, n: lambda x: n.linalg.slogdet(x)[1], a[:2, :2]),
        "inv": (lambda j, n: lambda x: n.linalg.inv(x).sum(), a),
        "solve_a": (lambda j, n: lambda x: (n.linalg.solve(x, b) ** 2).sum(), a),
        "solve_b": (lambda j, n: lambda y: (n.linalg.solve(a, y) ** 2).sum(), b),
        "cholesky": (lambda j, n: lambda x: (n.linalg.cholesky(x) * weights).sum(), spd),
        "eigh_values": (lambda j, n: lambda x: (n.linalg.eigh(x)[0] * np.arange(3.0)).sum(), spd),
        "eigh_vectors": (lambda j, n: lambda x: (n.linalg.eigh(x)[1][:, 0] ** 4).sum(), spd),
        "svd_values": (lambda j, n: lambda x: (n.linalg.svd(x, compute_uv=False) * np.arange(3.0)).sum(), r),
        "svd_u": (lambda j, n: lambda x: (n.linalg.svd(x, full_matrices=False)[0] ** 3).sum(), r),
        "svd_vh": (lambda j, n: lambda x: (n.linalg.svd(x, full_matrices=False)[2] ** 3).sum(), r),
        "qr_tall": (lambda j, n: lambda x: (n.linalg.qr(x)[0] ** 3).sum() + (n.linalg.qr(x)[1] ** 3).sum(), r),
        "qr_wide": (lambda j, n: lambda x: (n.linalg.qr(x)[0] ** 3).sum() + (n.linalg.qr(x)[1] ** 3).sum(), r.T),
        "qr_complete": (lambda j, n: lambda x: (n.linalg.qr(x, mode="complete")[0] ** 3).sum(), r),
        "lu": (lambda j, n: lambda x: (j.lax.linalg.lu(x)[0] ** 3).sum(), a),
        "lu_rectangular": (lambda j, n: lambda x: (j.lax.linalg.lu(x)[0] ** 3).sum(), r),
        "triangular_solve_a": (lambda j, n: lambda x: (j.lax.linalg.triangular_solve(x, r[:3], left_side=True, lower=True) ** 2).sum(), a),
        "pinv": (lambda j, n: lambda x: (n.linalg.pinv(x) ** 2).sum(), r),
        "norm_nuc": (lambda j, n: lambda x: n.linalg.norm(x, ord="nuc"), r),
        "norm_2": (lambda j, n: lambda x: n.linalg.norm(x, ord=2), r),
        "lstsq": (lambda j, n: lambda x: (n.linalg.lstsq(x, r[:, 0])[0] ** 2).sum(), r),
        "matrix_power": (lambda j, n: lambda x: n.linalg.matrix_power(x, -2).sum(), a),
        "cond": (lambda j, n: n.linalg.cond, a),
    }  # fmt: skip


GRAD_PROGRAMS = _grad_programs()


@pytest.mark.parametrize("name", sorted(GRAD_PROGRAMS))
def test_grad_equals_jax(name: str) -> None:
    program, x = GRAD_PROGRAMS[name]
    want = jax.jit(jax.grad(program(*JAX)))(x)
    got = minijax.jit(minijax.grad(program(*MINI)))(x)
    _assert_like_jax(got, want, 2e-3, name)


# Derivatives and batches whose jaxprs are JAX's equation for equation. (The
# rules of cholesky and eigh add a projection of the tangent, and the rules
# that read diagonals or permute rows use slices and products where JAX
# gathers: those jaxprs differ, their values are checked above.)
TRANSFORMED_PROGRAMS: dict[str, tuple[Callable[[Any, Any], Callable[..., Any]], tuple[Any, ...]]] = {
    "grad_triangular_solve_b": (
        lambda j, n: j.grad(lambda b: (j.lax.linalg.triangular_solve(SPD, b, left_side=True, lower=True) ** 2).sum()), (B,)),
    "grad_triangular_solve_a": (
        lambda j, n: j.grad(lambda a: (j.lax.linalg.triangular_solve(a, B, left_side=True, lower=True) ** 2).sum()), (SPD,)),
    "jvp_triangular_solve_a": (
        lambda j, n: lambda a, t: j.jvp(
            lambda y: j.lax.linalg.triangular_solve(y, B.T, lower=False, transpose_a=True, unit_diagonal=True), (a,), (t,)),
        (SPD, SPD)),
    "grad_det2": (lambda j, n: j.grad(n.linalg.det), (SPD[:2, :2],)),
    "vmap_grad_det3": (lambda j, n: j.vmap(j.grad(n.linalg.det)), (np.stack([SPD, SPD]),)),
    "grad_norm": (lambda j, n: j.grad(n.linalg.norm), (SPD,)),
    "grad_vector_norm_3": (lambda j, n: j.grad(lambda x: n.linalg.norm(x, ord=3)), (SPD[0],)),
    "grad_matrix_power": (lambda j, n: j.grad(lambda x: n.linalg.matrix_power(x, 3).sum()), (SPD,)),
    "jvp_qr": (lambda j, n: lambda x: j.jvp(n.linalg.qr, (x,), (x,)), (SPD,)),
    "jvp_qr_wide": (lambda j, n: lambda x: j.jvp(n.linalg.qr, (x,), (x,)), (RECT,)),
    "vmap_jvp_qr": (lambda j, n: j.vmap(lambda x: j.jvp(n.linalg.qr, (x,), (x,))), (np.stack([SPD, SPD]),)),
    "vmap_lu": (lambda j, n: j.vmap(j.lax.linalg.lu), (np.stack([SPD, SPD]),)),
    "vmap_qr_axis2": (lambda j, n: j.vmap(n.linalg.qr, in_axes=2), (np.stack([SPD, SPD], 2),)),
    "vmap_svd_values": (lambda j, n: j.vmap(lambda x: j.lax.linalg.svd(x, compute_uv=False)), (np.stack([RECT, RECT]),)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(TRANSFORMED_PROGRAMS))
def test_printed_jaxpr_of_transformed_program_equals_jax(name: str) -> None:
    program, args = TRANSFORMED_PROGRAMS[name]
    assert str(minijax.make_jaxpr(program(*MINI))(*args)) == str(jax.make_jaxpr(program(*JAX))(*args))
