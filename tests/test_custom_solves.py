"""``lax.custom_linear_solve`` and ``lax.custom_root`` on each backend, and the
sparse solvers built on them: values, jit, jvp/grad (implicit derivatives,
never through the solver), vmap, the linearity laws, jaxpr text, errors."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.jaxpr import eval_closed_jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.scipy.sparse import linalg as ssl

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.0], [0.5, 0.0, 2.0]], np.float32)  # symmetric positive definite
N = np.array([[3.0, 1.0, 0.0], [-1.0, 2.0, 0.5], [0.0, 1.0, 4.0]], np.float32)  # not symmetric
B = np.array([1.0, 2.0, -1.0], np.float32)


def _while_solver(matvec, b):
    """Richardson iteration x <- x + (b - A x) / 4 in a while_loop: not differentiable in reverse mode."""

    def body(state):
        x, k = state
        return x + (b - matvec(x)) / 5.0, k + 1

    x, _ = lax.while_loop(lambda s: s[1] < 200, body, (jnp.zeros_like(b), 0))
    return x


def solve_a(a, b):
    return lax.custom_linear_solve(lambda x: a @ x, b, _while_solver, symmetric=True)


def solve_n(a, b):
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, r: jnp.linalg.solve(a, r), lambda vm, r: jnp.linalg.solve(a.T, r))


def test_value_eager_and_jit():
    want = np.linalg.solve(A, B)
    np.testing.assert_allclose(solve_a(A, B), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(solve_a)(A, B), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(solve_n)(N, B), np.linalg.solve(N, B), rtol=1e-5)


def test_derivatives_are_implicit():
    # dx/db = A⁻¹ both ways; dx/dA = -A⁻¹ ⊗ x (the while_loop solver is never differentiated in reverse).
    inv = np.linalg.inv(N)
    x = np.linalg.solve(N, B)
    np.testing.assert_allclose(jax.jit(jax.jacfwd(solve_n, argnums=1))(N, B), inv, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.jacrev(solve_n, argnums=1))(N, B), inv, rtol=1e-4, atol=1e-6)
    want_da = -np.einsum("ij,k->ijk", inv, x)
    np.testing.assert_allclose(jax.jit(jax.jacfwd(solve_n))(N, B), want_da, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.jacrev(solve_n))(N, B), want_da, rtol=1e-4, atol=1e-5)
    g = jax.jit(jax.grad(lambda a, b: solve_a(a, b).sum(), argnums=(0, 1)))(A, B)
    ainv = np.linalg.inv(A)
    np.testing.assert_allclose(g[1], ainv.sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g[0], -np.outer(ainv.sum(0), np.linalg.solve(A, B)), rtol=1e-4, atol=1e-5)
    # Second order: the jvp rule's solves are custom_linear_solves again.
    hess = jax.jit(jax.hessian(lambda b: (solve_n(N, b) ** 2).sum()))(B)
    np.testing.assert_allclose(hess, 2 * inv.T @ inv, rtol=1e-4, atol=1e-5)


def test_transpose_law_and_linearity_in_b():
    # <vjp(ct), db> == <ct, jvp(db)> for the map b -> x.
    rng = np.random.default_rng(0)
    db, ct = rng.normal(size=3).astype(np.float32), rng.normal(size=3).astype(np.float32)
    _, tangent = jax.jvp(lambda b: solve_n(N, b), (B,), (db,))
    _, pullback = jax.vjp(lambda b: solve_n(N, b), B)
    (cot,) = pullback(ct)
    np.testing.assert_allclose(np.dot(cot, db), np.dot(ct, tangent), rtol=1e-4)
    np.testing.assert_allclose(solve_n(N, 2 * B + db), 2 * np.asarray(solve_n(N, B)) + solve_n(N, db), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, None), (0, 0), (None, 1)])
def test_vmap(in_axes):
    a_batch = np.stack([N, N + np.eye(3, dtype=np.float32)])
    b_batch = np.stack([B, 2 * B])
    a_arg = a_batch if in_axes[0] == 0 else N
    b_arg = b_batch if in_axes[1] == 0 else (b_batch.T if in_axes[1] == 1 else B)
    got = jax.vmap(solve_n, in_axes)(a_arg, b_arg)
    for i in range(2):
        a_i = a_batch[i] if in_axes[0] == 0 else N
        b_i = b_batch[i] if in_axes[1] is not None else B
        np.testing.assert_allclose(got[i], np.linalg.solve(a_i, b_i), rtol=1e-5, atol=1e-6)
    # vmap of grad, grad of vmap
    g = jax.vmap(jax.grad(lambda b: solve_n(N, b).sum()))(b_batch)
    np.testing.assert_allclose(g, np.broadcast_to(np.linalg.inv(N).sum(0), (2, 3)), rtol=1e-4, atol=1e-6)


def test_vmap_batches_a_pytree_partially():
    # Only one leaf of b is batched; the solution's leaves follow the fixed point of the batching rule.
    def f(u, w):
        return lax.custom_linear_solve(
            lambda t: {"u": 2.0 * t["u"], "w": 4.0 * t["w"]},
            {"u": u, "w": w},
            lambda mv, r: {"u": r["u"] / 2.0, "w": r["w"] / 4.0},
            symmetric=True,
        )

    out = jax.vmap(f, (0, None))(jnp.array([[1.0, 2.0], [3.0, 4.0]]), jnp.array([8.0]))
    np.testing.assert_allclose(out["u"], [[0.5, 1.0], [1.5, 2.0]])
    np.testing.assert_allclose(out["w"], [[2.0], [2.0]])


def test_has_aux():
    def solve(mv, b):
        return jnp.linalg.solve(N, b), {"iters": jnp.int32(1)}

    x, aux = lax.custom_linear_solve(lambda x: N @ x, B, solve, solve, has_aux=True)
    np.testing.assert_allclose(x, np.linalg.solve(N, B), rtol=1e-5)
    assert int(aux["iters"]) == 1
    g = jax.grad(lambda b: lax.custom_linear_solve(lambda x: N @ x, b, solve, lambda vm, r: (jnp.linalg.solve(N.T, r), 0), has_aux=True)[0].sum())(B)
    np.testing.assert_allclose(g, np.linalg.inv(N).sum(0), rtol=1e-4)


def test_jaxpr_text_reads_back():
    def h(b, c):
        return lax.custom_linear_solve(lambda x: c * x, b, lambda mv, b: b / c, lambda vm, b: b / c)

    closed = jax.make_jaxpr(h)(jnp.ones(2), 3.0)
    text = str(closed)
    assert "const_lengths=_LinearSolveTuple(matvec=1, vecmat=1, solve=1, transpose_solve=1)" in text
    # The transposed map closes over the converted scalar, computed outside it (as JAX's linear_transpose does).
    assert "vecmat={ lambda ; a:f32[] b:f32[2]. let c:f32[2] = mul a b in (c,) }" in text
    back = parse_jaxpr(text)
    assert str(back) == text
    np.testing.assert_allclose(eval_closed_jaxpr(back, jnp.ones(2), 3.0)[0], [1 / 3, 1 / 3], rtol=1e-6)


def test_errors():
    b = jnp.ones(2)
    with pytest.raises(ValueError, match=r"matvec\(\) output shapes must match b, got \[\(1,\)\] and \[\(2,\)\]"):
        lax.custom_linear_solve(lambda x: x[:1], b, lambda mv, b: b)
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: x, b, lambda mv, b: (b, b))
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode automatic differentiation"):
        jax.grad(lambda b: lax.custom_linear_solve(lambda x: 2 * x, b, lambda mv, b: b / 2).sum())(b)
    with pytest.raises(TypeError, match=r"f\(\) output pytree structure must match initial_guess"):
        lax.custom_root(lambda x: (x, x), 1.0, lambda f, x: x, lambda g, y: y)
    with pytest.raises(TypeError, match=r"tangent_solve\(\) output pytree structure must match x"):
        lax.custom_root(lambda x: x, 1.0, lambda f, x: x, lambda g, y: (y, y))


# ---------------------------------------------------------------------------
# custom_root


def _newton(f, x0):
    return lax.fori_loop(0, 30, lambda i, x: x - f(x) / jax.grad(f)(x), x0)


def root_sqrt(c):
    return lax.custom_root(lambda x: x**2 - c, 1.0, _newton, lambda g, y: y / g(1.0))


def test_custom_root():
    assert float(root_sqrt(2.0)) == pytest.approx(2**0.5, rel=1e-6)
    assert float(jax.grad(root_sqrt)(2.0)) == pytest.approx(0.5 / 2**0.5, rel=1e-5)
    assert float(jax.jit(jax.grad(root_sqrt))(9.0)) == pytest.approx(1 / 6, rel=1e-5)
    np.testing.assert_allclose(jax.vmap(jax.grad(root_sqrt))(jnp.array([1.0, 4.0])), [0.5, 0.25], rtol=1e-5)
    # second derivative: d²/dc² sqrt(c) = -c^(-3/2)/4
    assert float(jax.grad(jax.grad(root_sqrt))(4.0)) == pytest.approx(-1 / 32, rel=1e-4)


def test_custom_root_vector_and_aux():
    m = jnp.asarray(N)

    def solve(f, x0):
        x = jnp.linalg.solve(m, -f(jnp.zeros_like(x0)))  # f is affine
        return x, jnp.float32(7.0)

    def x_of(c):
        return lax.custom_root(lambda x: m @ x - c, jnp.zeros(3), solve, lambda g, y: jnp.linalg.solve(jax.jacfwd(g)(y), y), has_aux=True)

    x, aux = x_of(jnp.asarray(B))
    np.testing.assert_allclose(x, np.linalg.solve(N, B), rtol=1e-5)
    assert float(aux) == 7.0
    np.testing.assert_allclose(jax.jacfwd(lambda c: x_of(c)[0])(jnp.asarray(B)), np.linalg.inv(N), rtol=1e-4, atol=1e-6)
    # Reverse mode transposes tangent_solve, whose jnp.linalg.solve is a custom_jvp function.
    np.testing.assert_allclose(jax.jit(jax.jacrev(lambda c: x_of(c)[0]))(jnp.asarray(B)), np.linalg.inv(N), rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------
# The sparse solvers


SOLVERS = {
    "cg": lambda a, b: ssl.cg(a, b, tol=1e-6)[0],
    "gmres": lambda a, b: ssl.gmres(a, b, tol=1e-6)[0],
    "bicgstab": lambda a, b: ssl.bicgstab(a, b, tol=1e-6)[0],
}


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_sparse_solvers_forward_and_reverse(name):
    solver = SOLVERS[name]
    a = A if name == "cg" else N
    inv, x = np.linalg.inv(a), np.linalg.solve(a, B)
    # Forward mode raised before the solvers were custom_linear_solves (a
    # custom_vjp cannot be jvp'd), and derivatives did not reach what a
    # function A closes over. All under one jit: eager XLA would compile
    # every op of the loops, and each jit of gmres takes seconds to compile.

    @jax.jit
    def everything(a, b):
        jac_b = jax.jacfwd(solver, argnums=1)(a, b)
        _, t = jax.jvp(lambda a: solver(a, b), (a,), (jnp.eye(3),))
        g_s = jax.grad(lambda s: solver(lambda v: s * (a @ v), b).sum())(1.0)
        return jac_b, t, g_s

    # (grad with respect to b and vmap: tests/test_scipy_linalg.py)
    jac_b, t, g_s = everything(a, B)
    np.testing.assert_allclose(jac_b, inv, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(t, -inv @ x, rtol=1e-3, atol=1e-5)
    assert float(g_s) == pytest.approx(-x.sum(), rel=1e-3)
