"""``jax.scipy.sparse.linalg``: the Krylov solvers cg, gmres and bicgstab, on lax control flow.

``A`` (and the preconditioner ``M``) is a square matrix or a linear function;
``b`` and ``x0`` are arrays or any pytrees of arrays (the solvers only add,
scale and take inner products of them). Each solver is one
``lax.while_loop``, so it works under jit and vmap, and returns ``(x, info)``
as JAX's do: ``info`` is None for cg and bicgstab, and for gmres 0 (or -1
where x has NaNs).

Derivatives: as in JAX, each solve is a ``lax.custom_linear_solve`` whose
transpose_solve is the same method (cg: the same map, A being symmetric), so
jvp, grad and their compositions differentiate the solution x = A⁻¹ b
implicitly, with respect to b and to a matrix A or whatever a function A
closes over -- never through the iterations.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.array import Array as ArrayType
from minijax.numpy.util import convert_element_type
from minijax.scipy import linalg as sp_linalg
from minijax.tree_util import tree_leaves, tree_map, tree_structure

# Arrays and tracers alike: the annotations stay loose, as in minijax.lax.linalg.
Array = Any

__all__ = ["bicgstab", "cg", "gmres"]

_HIGHEST = lax.Precision.HIGHEST


def _dot(a: Array, b: Array) -> Array:
    return jnp.dot(a, b, precision=_HIGHEST)


def _vdot(x: Array, y: Array) -> Array:
    return jnp.vdot(x, y, precision=_HIGHEST)


def _vdot_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot, x, y)))


def _norm(x: Any) -> Array:
    return jnp.sqrt(sum(_vdot(v, v) for v in tree_leaves(x)))


def _mul(scalar: Any, tree: Any) -> Any:
    return tree_map(partial(operator.mul, scalar), tree)


def _add(x: Any, y: Any) -> Any:
    return tree_map(operator.add, x, y)


def _sub(x: Any, y: Any) -> Any:
    return tree_map(operator.sub, x, y)


def _identity(x: Any) -> Any:
    return x


def _normalize_matvec(f: Any) -> Callable[[Any], Any]:
    """A linear function from a function, a square matrix or an object with ``@``."""
    if callable(f):
        return f  # type: ignore[no-any-return]
    if isinstance(f, (np.ndarray, ArrayType)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(_dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and (len(f.shape) != 2 or f.shape[0] != f.shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _linear_solve(A: Any, b: Any, solve: Callable[..., Any], consts: tuple[Any, ...], symmetric: bool) -> Any:  # noqa: N803
    """``solve(matvec, b, *consts)`` as a ``lax.custom_linear_solve``, the
    same solver for the transposed system (as JAX's solvers do)."""

    def solve_with(matvec: Callable[[Any], Any], rhs: Any) -> Any:
        return solve(matvec, rhs, *consts)

    return lax.custom_linear_solve(_normalize_matvec(A), b, solve=solve_with, transpose_solve=solve_with, symmetric=symmetric)


def _check_x0(x0: Any, b: Any) -> None:
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    shapes_x0 = [np.shape(v) for v in tree_leaves(x0)]
    shapes_b = [np.shape(v) for v in tree_leaves(b)]
    if shapes_x0 != shapes_b:
        raise ValueError(f"arrays in x0 and b must have matching shapes: {shapes_x0} vs {shapes_b}")


def _prepare(A: Any, b: Any, x0: Any, maxiter: int | None, M: Any) -> tuple[Any, Any, int, Callable[[Any], Any], bool]:  # noqa: N803
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    if maxiter is None:
        maxiter = 10 * sum(int(np.size(v)) for v in tree_leaves(b))
    _normalize_matvec(A)  # the operator's errors come first, as in JAX
    precondition = M is not None
    m_fun = _normalize_matvec(M) if precondition else _identity
    _check_x0(x0, b)
    return b, x0, maxiter, m_fun, precondition


# ---------------------------------------------------------------------------
# cg: conjugate gradients, for symmetric positive definite A


def _cg_solve(
    matvec: Callable[[Any], Any], b: Any, x0: Any, tol: Any, atol: Any, *, maxiter: int, M: Any, precondition: bool
) -> Any:  # noqa: N803
    bs = _vdot_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))
    r0 = _sub(b, matvec(x0))
    p0 = z0 = M(r0)
    dtype = dtypes.result_type(*tree_leaves(p0))
    gamma0 = jnp.asarray(_vdot_tree(r0, z0)).astype(dtype)

    def cond(state: Any) -> Any:
        _, r, gamma, _, k = state
        rs = _vdot_tree(r, r) if precondition else gamma
        return (rs > atol2) & (k < maxiter)

    def body(state: Any) -> Any:
        x, r, gamma, p, k = state
        ap = matvec(p)
        alpha = gamma / jnp.asarray(_vdot_tree(p, ap)).astype(dtype)
        x = _add(x, _mul(alpha, p))
        r = _sub(r, _mul(alpha, ap))
        z = M(r)
        gamma_new = jnp.asarray(_vdot_tree(r, z)).astype(dtype)
        p = _add(z, _mul(gamma_new / gamma, p))
        return x, r, gamma_new, p, k + 1

    x, *_ = lax.while_loop(cond, body, (x0, r0, gamma0, p0, 0))
    return x


def cg(
    A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5, atol: Any = 0.0, maxiter: int | None = None, M: Any = None
) -> tuple[Any, None]:  # noqa: N803
    """Conjugate gradients for A x = b, A symmetric positive definite: ``(x, None)``.

    Stops when ‖r‖ ≤ max(tol·‖b‖, atol) or after ``maxiter`` steps (10·size
    by default); ``M`` approximates A⁻¹ (a preconditioner).
    """
    b, x0, maxiter, m_fun, precondition = _prepare(A, b, x0, maxiter, M)
    solve = partial(_cg_solve, maxiter=maxiter, M=m_fun, precondition=precondition)
    real = all(not dtypes.issubdtype(v.dtype, np.complexfloating) for v in tree_leaves(b))
    return _linear_solve(A, b, solve, (x0, tol, atol), symmetric=real), None


# ---------------------------------------------------------------------------
# bicgstab: biconjugate gradients, stabilized, for general A


def _bicgstab_solve(matvec: Callable[[Any], Any], b: Any, x0: Any, tol: Any, atol: Any, *, maxiter: int, M: Any) -> Any:  # noqa: N803
    bs = _vdot_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond(state: Any) -> Any:
        _, r, *_, k = state
        return (_vdot_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body(state: Any) -> Any:
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_new = _vdot_tree(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p)
        q = matvec(phat)
        alpha = rho_new / _vdot_tree(rhat, q)
        s = _sub(r, _mul(alpha, q))
        # Converged half way: take the half step only.
        done = _vdot_tree(s, s) < atol2
        shat = M(s)
        t = matvec(shat)
        omega = _vdot_tree(t, s) / _vdot_tree(t, t)
        x = tree_map(
            partial(jnp.where, done), _add(x, _mul(alpha, phat)), _add(x, _add(_mul(alpha, phat), _mul(omega, shat)))
        )
        r = tree_map(partial(jnp.where, done), s, _sub(s, _mul(omega, t)))
        # A breakdown (rho, alpha or omega zero) stops the loop with a negative count, as in JAX.
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_new == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_new, p, q, k

    r0 = _sub(b, matvec(x0))
    dtype, weak = dtypes.result_type(*tree_leaves(b), return_weak_type_flag=True)
    one = convert_element_type(1, dtype, weak)
    x, *_ = lax.while_loop(cond, body, (x0, r0, r0, one, one, one, r0, r0, 0))
    return x


def bicgstab(
    A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5, atol: Any = 0.0, maxiter: int | None = None, M: Any = None
) -> tuple[Any, None]:  # noqa: N803
    """BiCGSTAB for A x = b, A any nonsingular linear operator: ``(x, None)``."""
    b, x0, maxiter, m_fun, _ = _prepare(A, b, x0, maxiter, M)
    solve = partial(_bicgstab_solve, maxiter=maxiter, M=m_fun)
    return _linear_solve(A, b, solve, (x0, tol, atol), symmetric=False), None


# ---------------------------------------------------------------------------
# gmres: restarted GMRES; 'batched' solves each restart's least-squares
# problem at its end, 'incremental' keeps it triangular with Givens rotations.


def _safe_normalize(x: Any, thresh: Any = None) -> tuple[Any, Array]:
    norm = _norm(x)
    dtype = dtypes.result_type(*tree_leaves(x))
    if thresh is None:
        thresh = jnp.finfo(norm.dtype).eps
    thresh = jnp.asarray(thresh).astype(dtype)
    use = norm > thresh
    normalized = tree_map(lambda y: jnp.where(use, y / norm.astype(dtype), 0.0), x)
    return normalized, jnp.where(use, norm, 0.0)


def _project_on_columns(basis: Any, v: Any) -> Array:
    parts = tree_map(lambda X, y: jnp.einsum("...n,...->n", X, y, precision=_HIGHEST), basis, v)
    return sum(tree_leaves(parts))


def _gram_schmidt(basis: Any, x: Any, xnorm: Array, max_iterations: int = 2) -> tuple[Any, Array]:
    """x orthogonalized against the columns of ``basis`` (classical Gram-Schmidt, repeated while it loses norm)."""
    first = tree_leaves(basis)[0]
    r = jnp.zeros(first.shape[-1], dtype=first.dtype)

    def body(carry: Any) -> Any:
        k, q, r, _ = carry
        h = _project_on_columns(basis, q)
        q = _sub(q, tree_map(lambda X: _dot(X, h), basis))
        _, qnorm = _safe_normalize(q)
        return k + 1, q, r + h, qnorm / np.sqrt(2.0)

    def cond(carry: Any) -> Any:
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < max_iterations - 1, rnorm < qnorm_scaled)

    carry = body((0, x, r, xnorm / np.sqrt(2.0)))
    _, q, r, _ = lax.while_loop(cond, body, carry)
    return q, r


def _arnoldi_step(k: Any, matvec: Callable[[Any], Any], M: Any, V: Any, H: Array) -> tuple[Any, Array, Array]:  # noqa: N803
    """Column k+1 of the Krylov basis V and row k of the Hessenberg matrix H."""
    dtype = dtypes.result_type(*tree_leaves(V))
    eps = jnp.finfo(dtype).eps
    v = M(matvec(tree_map(lambda X: X[..., k], V)))
    _, norm0 = _safe_normalize(v)
    v, h = _gram_schmidt(V, v, norm0)
    unit, norm1 = _safe_normalize(v, thresh=eps * norm0)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit)
    h = h.at[k + 1].set(norm1.astype(dtype))
    return V, H.at[k, :].set(h), norm1 == 0.0


def _rotate(H: Array, i: Any, cs: Array, sn: Array) -> Array:
    x1, y1 = H[i], H[i + 1]
    return H.at[i].set(cs * x1 - sn * y1).at[i + 1].set(sn * x1 + cs * y1)


def _givens(a: Array, b: Array) -> tuple[Array, Array]:
    b_zero = jnp.abs(b) == 0
    a_lt_b = jnp.abs(a) < jnp.abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + jnp.abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _krylov_basis(unit_residual: Any, restart: int) -> Any:
    return tree_map(
        lambda x: lax.pad(x[..., None], jnp.zeros((), x.dtype), [(0, 0, 0)] * x.ndim + [(0, restart, 0)]), unit_residual
    )


def _finish_restart(matvec: Callable[[Any], Any], M: Any, b: Any, x0: Any, V: Any, y: Array) -> tuple[Any, Any, Array]:  # noqa: N803
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
    unit, norm = _safe_normalize(M(_sub(b, matvec(x))))
    return x, unit, norm


def _gmres_incremental(
    matvec: Any, b: Any, x0: Any, unit_residual: Any, residual_norm: Array, ptol: Any, restart: int, M: Any
) -> Any:  # noqa: N803
    V = _krylov_basis(unit_residual, restart)
    dtype = dtypes.result_type(*tree_leaves(b))
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def cond(carry: Any) -> Any:
        k, err, *_ = carry
        return jnp.logical_and(k < restart, err > ptol)

    def body(carry: Any) -> Any:
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi_step(k, matvec, M, V, R)
        row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, givens[i, 0], givens[i, 1]), H[k, :])
        cs, sn = _givens(row[k], row[k + 1])
        givens = givens.at[k, :].set(jnp.stack([cs, sn]))
        R = R.at[k, :].set(_rotate(row, k, cs, sn))
        beta = _rotate(beta, k, cs, sn)
        return k + 1, jnp.abs(beta[k + 1]), V, R, beta, givens

    _, _, V, R, beta, _ = lax.while_loop(cond, body, (0, residual_norm, V, R, beta, givens))
    y = sp_linalg.solve_triangular(R[:, :-1].T, beta[:-1])
    return _finish_restart(matvec, M, b, x0, V, y)


def _gmres_batched(
    matvec: Any, b: Any, x0: Any, unit_residual: Any, residual_norm: Array, ptol: Any, restart: int, M: Any
) -> Any:  # noqa: N803
    V = _krylov_basis(unit_residual, restart)
    dtype = dtypes.result_type(*tree_leaves(b))
    H = jnp.eye(restart, restart + 1, dtype=dtype)

    def cond(carry: Any) -> Any:
        _, _, breakdown, k = carry
        return jnp.logical_and(k < restart, jnp.logical_not(breakdown))

    def body(carry: Any) -> Any:
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, matvec, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(cond, body, (V, H, jnp.asarray(False), 0))
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    # The least-squares problem min ‖Hᵀ y - β‖ through its normal equations, as JAX does.
    ht = H.T
    y = sp_linalg.solve(_dot(ht.T, ht), _dot(ht.T, beta), assume_a="pos")
    return _finish_restart(matvec, M, b, x0, V, y)


def gmres(
    A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5, atol: Any = 0.0, restart: int = 20,  # noqa: N803
    maxiter: int | None = None, M: Any = None, solve_method: str = "batched",  # noqa: N803
) -> tuple[Any, Array]:  # fmt: skip
    """Restarted GMRES for A x = b, A any nonsingular linear operator: ``(x, info)``.

    ``restart`` is the Krylov subspace size per restart, ``maxiter`` the
    number of restarts; ``solve_method`` 'batched' or 'incremental'.
    """
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    m_fun = _identity if M is None else _normalize_matvec(M)
    _normalize_matvec(A)
    size = sum(int(np.size(v)) for v in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    b_norm = _norm(b)
    atol_ = jnp.maximum(tol * b_norm, atol)
    ptol = _norm(m_fun(b)) * jnp.minimum(1.0, atol_ / b_norm)
    if solve_method == "incremental":
        restart_fun = _gmres_incremental
    elif solve_method == "batched":
        restart_fun = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'")

    def solve(matvec: Callable[[Any], Any], rhs: Any, x0: Any, atol_: Any, ptol: Any) -> Any:
        unit, norm = _safe_normalize(m_fun(_sub(rhs, matvec(x0))))

        def cond(state: Any) -> Any:
            _, k, _, err = state
            return jnp.logical_and(k < maxiter, err > atol_)

        def body(state: Any) -> Any:
            x, k, unit, norm = state
            x, unit, norm = restart_fun(matvec, rhs, x, unit, norm, ptol, restart, m_fun)
            return x, k + 1, unit, norm

        x, *_ = lax.while_loop(cond, body, (x0, 0, unit, norm))
        return x

    x = _linear_solve(A, b, solve, (x0, atol_, ptol), symmetric=False)
    info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
    return x, info
