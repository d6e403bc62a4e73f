"""NumPy implementations of the linear-algebra primitives (spec/primitives/linalg.md).

``numpy.linalg`` computes cholesky, qr, eigh and svd (LAPACK underneath, the
same routines XLA's CPU kernels call). NumPy has no triangular solve and no
LU factorization, so those, and ``lu_pivots_to_permutation``, are plain NumPy
loops over the matrix rows or columns, vectorized over the batch (and the
right-hand sides). No SciPy is needed.

Every implementation maps over the leading batch axes. float16 and bfloat16
operands are computed in float32 and rounded at the end. Where LAPACK would
report a failure (a matrix that is not positive definite, a non-finite
matrix for cholesky/eigh/svd), that matrix's results are NaN, as on XLA.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax.core import shape_size
from minijax_numpy.table import impl

Array = np.ndarray[Any, Any]
_F32 = np.dtype(np.float32)


def _working(x: Array) -> Array:
    """x in the dtype LAPACK computes it in: float32 or float64."""
    return x if x.dtype in (np.float32, np.float64) else x.astype(_F32)


def _read_triangle(x: Array, lower: bool) -> Array:
    """The symmetric matrices built from the triangle of x a routine reads."""
    if lower:
        return np.tril(x) + np.swapaxes(np.tril(x, -1), -1, -2)
    return np.triu(x) + np.swapaxes(np.triu(x, 1), -1, -2)


def _nan_where_failed(results: Sequence[Array], failed: Array) -> list[Array]:
    """Each result with every element of the failed batch elements set to NaN."""
    out = []
    for r in results:
        r = np.array(r)
        r[failed] = np.nan
        out.append(r)
    return out


def _per_matrix(fn: Callable[[Array], Sequence[Array]], x: Array, n_out: int) -> tuple[list[Array], Array]:
    """fn over the whole batch at once, or matrix by matrix when LAPACK fails on some of them.

    Returns the results and a bool mask (over the batch) of the matrices
    that failed (their results hold zeros, to be replaced by NaN).
    """
    batch = x.shape[:-2]
    try:
        return list(fn(x)), np.zeros(batch, np.bool_)
    except np.linalg.LinAlgError:
        pass
    flat = x.reshape((-1, *x.shape[-2:]))
    failed = np.zeros(flat.shape[0], np.bool_)
    template = [np.asarray(r) for r in fn(np.eye(x.shape[-2], x.shape[-1], dtype=x.dtype))]
    parts: list[list[Array]] = [[] for _ in range(n_out)]
    for i, matrix in enumerate(flat):
        try:
            results = [np.asarray(r) for r in fn(matrix)]
        except np.linalg.LinAlgError:
            failed[i] = True
            results = [np.zeros_like(t) for t in template]
        for part, r in zip(parts, results):
            part.append(r)
    return [np.stack(p).reshape(batch + p[0].shape) for p in parts], failed.reshape(batch)


def _finite_matrices(x: Array) -> Array:
    """Per batch element: whether every element of the matrix is finite."""
    return np.asarray(np.isfinite(x).all(axis=(-2, -1)))


# ---------------------------------------------------------------------------
# cholesky


@impl("cholesky")
def cholesky(x: Array) -> Array:
    work = _read_triangle(_working(x), lower=True)
    bad = ~_finite_matrices(work)
    work = np.where(bad[..., None, None], np.eye(work.shape[-1], dtype=work.dtype), work)
    (factor,), failed = _per_matrix(lambda m: (np.linalg.cholesky(m),), work, 1)
    (factor,) = _nan_where_failed([factor], failed | bad)
    return factor.astype(x.dtype)


# ---------------------------------------------------------------------------
# triangular_solve: substitution, one row of the unknowns at a time


def _solve_left(t: Array, b: Array, lower: bool, unit_diagonal: bool) -> Array:
    """X with T X = B, T lower or upper triangular (only that triangle is read)."""
    n = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:], b.dtype)
    rows = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in rows:
            known = slice(0, i) if lower else slice(i + 1, n)
            acc = b[..., i, :] - (t[..., i : i + 1, known] @ x[..., known, :])[..., 0, :]
            x[..., i, :] = acc if unit_diagonal else acc / t[..., i, i][..., None]
    return x


@impl("triangular_solve")
def triangular_solve(
    a: Array, b: Array, *, left_side: bool, lower: bool, transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
) -> Array:
    t, rhs = _working(a), _working(b)
    # op(A) = Aᵀ turns a lower triangle into an upper one.
    if transpose_a:
        t, lower = np.swapaxes(t, -1, -2), not lower
    if left_side:  # op(A) X = B
        x = _solve_left(t, rhs, lower, unit_diagonal)
    else:  # X op(A) = B  <=>  op(A)ᵀ Xᵀ = Bᵀ
        x = np.swapaxes(_solve_left(np.swapaxes(t, -1, -2), np.swapaxes(rhs, -1, -2), not lower, unit_diagonal), -1, -2)
    return np.asarray(x, dtype=b.dtype)


# ---------------------------------------------------------------------------
# lu: Gaussian elimination with partial pivoting (LAPACK's getrf), column by column


@impl("lu")
def lu(x: Array) -> list[Array]:
    *batch, m, n = x.shape
    k = min(m, n)
    count = shape_size(batch)
    a = np.array(_working(x)).reshape((count, m, n))
    every = np.arange(count)
    pivots = np.zeros((count, k), np.int32)
    permutation = np.tile(np.arange(m, dtype=np.int32), (count, 1))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j in range(k):
            # The pivot: the first row (from j down) with the largest magnitude in column j.
            p = j + np.argmax(np.abs(a[:, j:, j]), axis=1)
            pivots[:, j] = p
            a[every, j], a[every, p] = a[every, p], a[every, j].copy()
            permutation[every, j], permutation[every, p] = permutation[every, p], permutation[every, j].copy()
            pivot = a[:, j, j]
            # Like LAPACK: scale by the reciprocal; a zero pivot (singular matrix) leaves the column as it is.
            scale = np.where(pivot != 0, 1 / np.where(pivot != 0, pivot, 1), 1)
            a[:, j + 1 :, j] *= scale[:, None]
            a[:, j + 1 :, j + 1 :] -= a[:, j + 1 :, j : j + 1] * a[:, j : j + 1, j + 1 :]
    shape = tuple(batch)
    return [a.reshape(x.shape).astype(x.dtype), pivots.reshape(shape + (k,)), permutation.reshape(shape + (m,))]


@impl("lu_pivots_to_permutation")
def lu_pivots_to_permutation(pivots: Array, *, permutation_size: int) -> Array:
    *batch, k = pivots.shape
    size = permutation_size
    count = shape_size(batch)
    swaps = pivots.reshape((count, k)).astype(np.int64)
    permutation = np.tile(np.arange(size, dtype=np.int32), (count, 1))
    if size == 0:
        return permutation.reshape((*batch, size))
    every = np.arange(count)
    for i in range(k):
        # As JAX's loop does it: a negative pivot counts from the end; reading
        # clamps into range, writing out of range is dropped.
        j = np.where(swaps[:, i] < 0, swaps[:, i] + size, swaps[:, i])
        x = permutation[:, i].copy()
        y = permutation[every, np.clip(j, 0, size - 1)]
        permutation[:, i] = y
        inside = (j >= 0) & (j < size)
        permutation[every[inside], j[inside]] = x[inside]
    return permutation.reshape((*batch, size))


# ---------------------------------------------------------------------------
# qr, eigh, svd


@impl("qr")
def qr(x: Array, *, pivoting: bool, full_matrices: bool, use_magma: Any) -> list[Array]:
    q, r = np.linalg.qr(_working(x), mode="complete" if full_matrices else "reduced")
    return [q.astype(x.dtype), r.astype(x.dtype)]


def _columns(x: Array, subset: Any) -> Array:
    """The last axis of x restricted to ``subset_by_index`` (all of it for None)."""
    return x if subset is None else x[..., subset[0] : subset[1]]


@impl("eigh")
def eigh(x: Array, *, lower: bool, sort_eigenvalues: bool, subset_by_index: Any, algorithm: Any) -> list[Array]:
    work = _working(x)
    bad = ~_finite_matrices(_read_triangle(work, lower))
    work = np.where(bad[..., None, None], 0, work)
    (w, v), failed = _per_matrix(lambda m: np.linalg.eigh(m, UPLO="L" if lower else "U"), work, 2)
    w, v = _nan_where_failed([w, v], failed | bad)
    return [_columns(v, subset_by_index).astype(x.dtype), _columns(w, subset_by_index).astype(x.dtype)]


@impl("svd")
def svd(x: Array, *, full_matrices: bool, compute_uv: bool, subset_by_index: Any, algorithm: Any) -> list[Array]:
    work = _working(x)
    bad = ~_finite_matrices(work)
    work = np.where(bad[..., None, None], 0, work)
    if not compute_uv:
        (s,), failed = _per_matrix(lambda m: (np.linalg.svd(m, compute_uv=False),), work, 1)
        (s,) = _nan_where_failed([s], failed | bad)
        return [_columns(s, subset_by_index).astype(x.dtype)]
    (u, s, vt), failed = _per_matrix(lambda m: np.linalg.svd(m, full_matrices=full_matrices), work, 3)
    u, s, vt = _nan_where_failed([u, s, vt], failed | bad)
    if subset_by_index is not None:
        start, end = subset_by_index
        s, u, vt = s[..., start:end], u[..., start:end], vt[..., start:end, :]
    return [s.astype(x.dtype), u.astype(x.dtype), vt.astype(x.dtype)]
