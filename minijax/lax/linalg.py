"""``jax.lax.linalg``: the matrix decompositions, each one primitive.

The functions take leading batch dimensions and bind the primitives of
``minijax.primitives.linalg`` with JAX's params; ``cholesky`` and ``eigh``
symmetrize their input first by default, and ``cholesky`` zeroes the strict
upper triangle, as JAX's do (so the jaxprs print alike).

The private helpers at the end (triangles, identity matrices, products at
HIGHEST precision, diagonals, row permutations, LU solves) are shared with
the primitives' jvp rules and with ``minijax.numpy.linalg``.

Not provided (JAX has them): ``eig``, ``schur``, ``hessenberg``,
``householder_product``, ``ormqr``, ``cholesky_update``, ``symmetric_product``,
``tridiagonal``, ``tridiagonal_solve`` and ``qdwh``: each raises
NotImplementedError naming itself.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from minijax.core import get_aval
from minijax.lax import elementwise as ew, reductions as red, structural as st
from minijax.primitives.linalg import (
    EighImplementation as EighImplementation,
    SvdAlgorithm as SvdAlgorithm,
    cholesky_p as cholesky_p,
    eigh_p as eigh_p,
    lu_p as lu_p,
    lu_pivots_to_permutation_p as lu_pivots_to_permutation_p,
    qr_p as qr_p,
    svd_p as svd_p,
    triangular_solve_p as triangular_solve_p,
)
from minijax.primitives.reductions import Precision

ArrayLike = Any
Array = Any

__all__ = [
    "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p", "cholesky_update", "eig", "eigh", "eigh_p",
    "hessenberg", "householder_product", "lu", "lu_p", "lu_pivots_to_permutation", "lu_pivots_to_permutation_p",
    "ormqr", "qdwh", "qr", "qr_p", "schur", "svd", "svd_p", "symmetric_product", "triangular_solve",
    "triangular_solve_p", "tridiagonal", "tridiagonal_solve",
]  # fmt: skip


# ---------------------------------------------------------------------------
# The decompositions


def cholesky(x: ArrayLike, *, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor L of each matrix, A = L Lᵀ (NaN where A is not positive definite).

    With ``symmetrize_input`` the factor is of (A + Aᵀ)/2; without it only
    the lower triangle of A is read.
    """
    if symmetrize_input:
        x = symmetrize(x)
    return _tril(cholesky_p.bind(x))


def triangular_solve(
    a: ArrayLike,
    b: ArrayLike,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Array:
    """X with op(A) X = B (``left_side``) or X op(A) = B, A triangular, op(A) = A or Aᵀ.

    Only the triangle of A that ``lower`` names is read (and not its
    diagonal with ``unit_diagonal``). ``b`` may have one axis fewer than
    ``a``: a single right-hand side.
    """
    conjugate_a = False  # no complex dtypes in minijax: conjugation is the identity
    singleton = np.ndim(b) == np.ndim(a) - 1
    if singleton:
        b = st.expand_dims(b, (-1 if left_side else -2,))
    out = triangular_solve_p.bind(
        a, b, left_side=bool(left_side), lower=bool(lower), transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
        unit_diagonal=bool(unit_diagonal),
    )  # fmt: skip
    if singleton:
        out = st.squeeze(out, (-1 if left_side else -2,))
    return out


def lu(x: ArrayLike) -> tuple[Array, Array, Array]:
    """LU decomposition with partial pivoting: (lu, pivots, permutation) with A[permutation] = L U.

    ``lu`` holds U in its upper triangle and the unit-diagonal L below it;
    ``pivots[i]`` is the row swapped with row i at step i (0-based, int32).
    """
    lu_, pivots, permutation = lu_p.bind(x)
    return lu_, pivots, permutation


def lu_pivots_to_permutation(pivots: ArrayLike, permutation_size: int) -> Array:
    """The permutation of ``range(permutation_size)`` that the row swaps ``pivots`` perform."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def qr(x: ArrayLike, *, pivoting: bool = False, full_matrices: bool = True, use_magma: bool | None = None) -> Any:
    """(q, r) with A = Q R, Q orthonormal columns, R upper triangular.

    ``full_matrices``: Q is m×m and R m×n; otherwise m×k and k×n with
    k = min(m, n). ``pivoting=True`` raises NotImplementedError;
    ``use_magma`` (GPU only in JAX) is accepted and ignored.
    """
    q, r = qr_p.bind(x, pivoting=bool(pivoting), full_matrices=bool(full_matrices), use_magma=use_magma)
    return q, r


def eigh(
    x: ArrayLike,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index: tuple[int, int] | None = None,
    implementation: EighImplementation | None = None,
) -> tuple[Array, Array]:
    """(v, w): eigenvectors (columns of v) and ascending eigenvalues of a symmetric matrix.

    ``subset_by_index=(start, end)`` keeps eigenvalues start..end-1 (in
    ascending order) and their vectors.
    """
    if symmetrize_input:
        x = symmetrize(x)
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    v, w = eigh_p.bind(
        x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues), subset_by_index=subset, algorithm=implementation
    )
    return v, w


def svd(
    x: ArrayLike,
    *,
    full_matrices: bool = True,
    compute_uv: bool = True,
    subset_by_index: tuple[int, int] | None = None,
    algorithm: SvdAlgorithm | None = None,
) -> Any:
    """(u, s, vh) with A = U diag(s) Vh and s descending, or s alone without ``compute_uv``."""
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    result = svd_p.bind(
        x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv), subset_by_index=subset, algorithm=algorithm
    )
    if compute_uv:
        s, u, vt = result
        return u, s, vt
    (s,) = result
    return s


def _not_implemented(name: str) -> NoReturn:
    raise NotImplementedError(f"jax.lax.linalg.{name} is not implemented in minijax.")


def eig(x: ArrayLike, **kwargs: Any) -> NoReturn:
    """Not implemented in minijax (general, nonsymmetric eigendecomposition)."""
    _not_implemented("eig")


def schur(x: ArrayLike, **kwargs: Any) -> NoReturn:
    """Not implemented in minijax."""
    _not_implemented("schur")


def hessenberg(a: ArrayLike) -> NoReturn:
    """Not implemented in minijax."""
    _not_implemented("hessenberg")


def householder_product(a: ArrayLike, taus: ArrayLike) -> NoReturn:
    """Not implemented in minijax."""
    _not_implemented("householder_product")


def ormqr(a: ArrayLike, taus: ArrayLike, c: ArrayLike, **kwargs: Any) -> NoReturn:
    """Not implemented in minijax."""
    _not_implemented("ormqr")


def cholesky_update(r_matrix: ArrayLike, w_vector: ArrayLike) -> NoReturn:
    """Not implemented in minijax."""
    _not_implemented("cholesky_update")


def symmetric_product(a_matrix: ArrayLike, c_matrix: ArrayLike, **kwargs: Any) -> NoReturn:
    """Not implemented in minijax."""
    _not_implemented("symmetric_product")


def tridiagonal(a: ArrayLike, **kwargs: Any) -> NoReturn:
    """Not implemented in minijax."""
    _not_implemented("tridiagonal")


def tridiagonal_solve(dl: ArrayLike, d: ArrayLike, du: ArrayLike, b: ArrayLike, **kwargs: Any) -> NoReturn:
    """Not implemented in minijax."""
    _not_implemented("tridiagonal_solve")


def qdwh(x: ArrayLike, **kwargs: Any) -> NoReturn:
    """Not implemented in minijax."""
    _not_implemented("qdwh")


# ---------------------------------------------------------------------------
# Matrix helpers (shared with the jvp rules and jnp.linalg). They work on the
# last two axes and keep the leading ones, and emit JAX's equations where
# JAX has the same helper (_T, _tril, _triu, symmetrize).


def _T(x: ArrayLike) -> Array:
    """The transpose of each matrix (the last two axes swapped)."""
    nd = np.ndim(x)
    return st.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def symmetrize(x: ArrayLike) -> Array:
    """(x + xᵀ) / 2."""
    return (x + _T(x)) / 2


def _tri(shape: tuple[int, int], k: int) -> Array:
    """The bool mask of ``numpy.tri``: True where column <= row + k."""
    rows = st.broadcasted_iota(np.int32, shape, 0)
    return ew.ge(ew.add(rows, np.int32(k)), st.broadcasted_iota(np.int32, shape, 1))


def _tril(x: ArrayLike, k: int = 0) -> Array:
    """x with the elements above diagonal ``k`` zeroed."""
    *batch, n, m = np.shape(x)
    mask = st.broadcast(_tri((n, m), k), tuple(batch))
    return ew.select(mask, x, st.full_like(x, 0))


def _triu(x: ArrayLike, k: int = 0) -> Array:
    """x with the elements below diagonal ``k`` zeroed."""
    *batch, n, m = np.shape(x)
    mask = st.broadcast(_tri((n, m), k - 1), tuple(batch))
    return ew.select(mask, st.full_like(x, 0), x)


def _eye(dtype: Any, shape: tuple[int, int]) -> Array:
    """A (rectangular) identity matrix of ``dtype``."""
    rows = ew.add(st.broadcasted_iota(np.int32, shape, 0), np.int32(0))  # (JAX's equations: an offset of 0)
    return ew.convert_element_type(ew.eq(rows, st.broadcasted_iota(np.int32, shape, 1)), dtype)


def _matmul(a: ArrayLike, b: ArrayLike) -> Array:
    """Matrix products over the last two axes, batched over the (equal) leading ones, at HIGHEST precision."""
    nd = np.ndim(a)
    batch = tuple(range(nd - 2))
    return red.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)), precision=Precision.HIGHEST)


def _diagonal(x: ArrayLike) -> Array:
    """The main diagonal of each matrix, read as a strided slice of the flattened matrix (exact and linear)."""
    *batch, n, m = np.shape(x)
    k = min(n, m)
    if k == 0:
        return st.full((*batch, 0), 0, get_aval(x).dtype)
    flat = st.reshape(x, (*batch, n * m))
    nb = len(batch)
    return st.slice(flat, (0,) * (nb + 1), (*batch, (k - 1) * (m + 1) + 1), (1,) * nb + (m + 1,))


def _diagonal_matrix(d: ArrayLike) -> Array:
    """The square matrices with diagonal ``d`` (last axis) and zeros elsewhere (exact and linear).

    Each row of length k+1 starts with its diagonal element: padding d
    with k zeros per element and cutting the flattened result to k·k gives
    the matrix in row-major order.
    """
    *batch, k = np.shape(d)
    nb = len(batch)
    dtype = get_aval(d).dtype
    if k == 0:
        return st.full((*batch, 0, 0), 0, dtype)
    column = st.reshape(d, (*batch, k, 1))
    rows = st.pad(column, np.zeros((), dtype), [(0, 0, 0)] * nb + [(0, 0, 0), (0, k, 0)])
    flat = st.slice(st.reshape(rows, (*batch, k * (k + 1))), (0,) * (nb + 1), (*batch, k * k))
    return st.reshape(flat, (*batch, k, k))


def _permutation_matrix(permutation: ArrayLike, n: int, dtype: Any) -> Array:
    """P with P[..., i, j] = (permutation[..., i] == j), so P @ x is x[..., permutation, :]."""
    perm = get_aval(permutation)
    nb = perm.ndim - 1
    m = perm.shape[-1]
    rows = st.broadcast_in_dim(permutation, (*perm.shape, n), tuple(range(nb + 1)))
    cols = st.broadcasted_iota(perm.dtype, (*perm.shape[:-1], m, n), nb + 1)
    return ew.convert_element_type(ew.eq(rows, cols), dtype)


def _permute_rows(x: ArrayLike, permutation: ArrayLike) -> Array:
    """x[..., permutation, :], as a product with a permutation matrix.

    JAX gathers here; minijax multiplies by the 0/1 matrix, which is exact
    for finite values (an inf or NaN in x spreads NaN along its column).
    """
    aval = get_aval(x)
    return _matmul(_permutation_matrix(permutation, aval.shape[-2], aval.dtype), x)


def _unpermute_rows(x: ArrayLike, permutation: ArrayLike) -> Array:
    """y with y[..., permutation, :] = x: the inverse of ``_permute_rows``."""
    aval = get_aval(x)
    p = _permutation_matrix(permutation, aval.shape[-2], aval.dtype)
    return _matmul(_T(p), x)


def _lu_solve(lu_: ArrayLike, permutation: ArrayLike, b: ArrayLike, trans: int = 0) -> Array:
    """Solve A x = b (``trans=0``) or Aᵀ x = b (``trans=1``) from A's LU factors.

    ``b`` has the matrix axes (..., m, k) with the batch axes of ``lu_``.
    """
    if trans == 0:
        x = _permute_rows(b, permutation)
        x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        return triangular_solve(lu_, x, left_side=True, lower=False)
    if trans == 1:
        x = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True)
        x = triangular_solve(lu_, x, left_side=True, lower=True, transpose_a=True, unit_diagonal=True)
        return _unpermute_rows(x, permutation)
    raise ValueError(f"'trans' value must be 0 or 1, got {trans}")
