"""``lax.linalg.qdwh``: the polar decomposition X = U H by the QR-based dynamically weighted Halley
iteration (Nakatsukasa, Bai & Gygi 2010), written with lax operations as JAX 0.10.2 writes it (no
primitive of its own).

The iteration's weights depend only on the lower bound l of the scaled matrix's smallest singular
value, which starts at eps: so they are computed here in Python, ahead of the loop. While a weight c is
large (> 100) a step is taken through a QR factorization of [sqrt(c) U; I], which stays accurate; after
that through a Cholesky factorization of c UᵀU + I, which is cheaper, with a convergence test on the
change of U; then Halley steps with the limit weights (3, 1, 3) until U settles or ``max_iterations``
steps have been taken. A final Newton-Schulz step polishes U's orthogonality, and H = (UᵀX + XᵀU)/2.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax.core import concrete_or_error
from minijax.lax import elementwise as el, reductions as red, structural as st
from minijax.lax.control_flow import fori_loop, while_loop
from minijax.primitives.linalg import cholesky_p, qr_p, triangular_solve, tril

_CHOLESKY_CUTOFF = 100


def _matmul(a: Any, b: Any) -> Any:
    return red.dot_general(a, b, (((1,), (0,)), ((), ())))


def _t(a: Any) -> Any:
    return st.transpose(a, (1, 0))


def _eye(n: int, dtype: Any) -> Any:
    rows = st.broadcasted_iota(np.int32, (n, n), 0)
    cols = st.broadcasted_iota(np.int32, (n, n), 1)
    return el.convert_element_type(el.eq(rows, cols), dtype)


def _scalar(value: Any, dtype: Any) -> Any:
    return el.convert_element_type(value, dtype)


def _frobenius(a: Any) -> Any:
    return el.sqrt(red.reduce_sum(el.mul(a, a), (0, 1)))


def _qr_step(u: Any, params: tuple[Any, Any, Any]) -> Any:
    """e U + (a - e)/sqrt(c) Q1 Q2ᵀ, with [sqrt(c) U; I] = [Q1; Q2] R."""
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    m, n = u.shape
    y = st.concatenate([el.mul(sqrt_c, u), _eye(n, u.dtype)], 0)
    q, _ = qr_p.bind(y, pivoting=False, full_matrices=False, use_magma=None)
    q1 = st.slice(q, (0, 0), (m, n))
    q2 = st.slice(q, (m, 0), (m + n, n))
    return el.add(el.mul(e, u), el.mul(a_minus_e_by_sqrt_c, _matmul(q1, _t(q2))))


def _cholesky_step(u: Any, params: tuple[Any, Any, Any]) -> Any:
    """e U + (a - e) U (c UᵀU + I)^-1, the inverse applied through the Cholesky factor L."""
    a_minus_e, c, e = params
    n = u.shape[1]
    x = el.add(el.mul(c, _matmul(_t(u), u)), _eye(n, u.dtype))
    lower = tril(cholesky_p.bind(x))
    z = triangular_solve(lower, _t(u), left_side=True, lower=True)
    z = _t(triangular_solve(lower, z, left_side=True, lower=True, transpose_a=True))
    return el.add(el.mul(e, u), el.mul(a_minus_e, z))


def _weights(eps: float, max_iterations: int) -> tuple[list[tuple[float, float, float]], list[tuple[float, float, float]]]:
    """The (a, b, c) of each step, split into the QR steps and the Cholesky steps, each step's as the
    parameters its update takes: ((a - e)/sqrt(c), sqrt(c), e) and (a - e, c, e) with e = b/c."""
    lower = eps
    tol_l = 10.0 * eps / 2.0
    qr_steps: list[tuple[float, float, float]] = []
    cholesky_steps: list[tuple[float, float, float]] = []
    k = 0
    while lower + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = lower * lower
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        lower = lower * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            qr_steps.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
        else:
            cholesky_steps.append((a - e, c, e))
    return qr_steps, cholesky_steps


def qdwh(
    x: Any,
    *,
    is_hermitian: bool = False,
    max_iterations: int | None = None,
    eps: float | None = None,
    dynamic_shape: tuple[int, int] | None = None,
) -> tuple[Any, Any, Any, Any]:
    """The polar decomposition ``x = u @ h`` of a full-rank M x N matrix (M >= N) by QDWH:
    ``(u, h, num_iters, is_converged)``. ``is_hermitian`` is unused (as in JAX); ``eps`` sets the
    convergence tolerance (the dtype's epsilon by default); ``max_iterations`` defaults to 10."""
    concrete_or_error(is_hermitian, "The `is_hermitian` argument must be statically specified to use `qdwh` "
                      "within JAX transformations.")
    if max_iterations is None:
        max_iterations = 10
    else:
        max_iterations = int(concrete_or_error(  # int(), not an index: JAX takes 2.5 as 2
            max_iterations, "The `max_iterations` argument must be statically specified to use `qdwh` within JAX "
            "transformations."))
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh(dynamic_shape=...) (a matrix padded from a smaller true shape) is not "
                                  "implemented in minijax; pass the unpadded matrix.")
    if np.ndim(x) != 2:
        raise ValueError(f"qdwh takes a single M x N matrix; got an array of shape {np.shape(x)}.")
    m, n = np.shape(x)
    if m < n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    dtype = np.dtype(x.dtype)
    if eps is None:
        eps = float(np.finfo(dtype).eps)
    eps = float(concrete_or_error(eps, "The `eps` argument of qdwh must be static."))

    # Scale by 1/sqrt(|X|_1 |X|_inf) >= 1/|X|_2, so that every singular value is at most 1.
    abs_x = el.abs(x)
    one_norm = red.reduce_max(red.reduce_sum(abs_x, (0,)), (0,))
    inf_norm = red.reduce_max(red.reduce_sum(abs_x, (1,)), (0,))
    alpha_inverse = el.mul(el.rsqrt(one_norm), el.rsqrt(inf_norm))
    alpha_inverse = el.select(el.eq(one_norm, _scalar(0, dtype)), _scalar(1, dtype), alpha_inverse)
    u = el.mul(x, alpha_inverse)
    tol_norm = _scalar(np.cbrt(10.0 * eps / 2.0), dtype)

    qr_steps, cholesky_steps = _weights(eps, max_iterations)

    def stepping(update: Any, table: Any, test: bool) -> Any:
        def body(k: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
            u, not_converged = state
            params = tuple(st.dynamic_index_in_dim(table[:, j], k, keepdims=False) for j in range(3))
            new = update(u, params)
            if test:
                not_converged = el.gt(_frobenius(el.sub(new, u)), tol_norm)
            return new, not_converged

        return body

    not_converged: Any = np.True_
    for steps, update, test in ((qr_steps, _qr_step, False), (cholesky_steps, _cholesky_step, True)):
        if steps:
            table = np.asarray(steps, dtype)
            u, not_converged = fori_loop(0, len(steps), stepping(update, table, test), (u, not_converged))

    limit = tuple(_scalar(v, dtype) for v in (3.0 - 1.0 / 3.0, 3.0, 1.0 / 3.0))

    def keep_going(state: tuple[Any, Any, Any]) -> Any:
        k, _, not_converged = state
        return el.bitwise_and(not_converged, el.lt(k, max_iterations))

    def halley(state: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        k, u, _ = state
        new = _cholesky_step(u, limit)
        return el.add(k, 1), new, el.gt(_frobenius(el.sub(new, u)), tol_norm)

    start = len(qr_steps) + len(cholesky_steps)  # a Python int: num_iters is weakly typed, as JAX's
    num_iters, u, not_converged = while_loop(keep_going, halley, (start, u, not_converged))

    # One Newton-Schulz step: U (3 I - UᵀU) / 2.
    u = el.sub(el.mul(_scalar(1.5, dtype), u), el.mul(_scalar(0.5, dtype), _matmul(u, _matmul(_t(u), u))))
    h = _matmul(_t(u), x)
    h = el.div(el.add(h, _t(h)), _scalar(2, dtype))
    return u, h, num_iters, el.bitwise_not(not_converged)
