"""``jax.lax.linalg``: the matrix decompositions, each one primitive.

The functions take leading batch dimensions and bind the primitives of
``minijax.primitives.linalg`` with JAX's params; ``cholesky`` and ``eigh``
symmetrize their input first by default, and ``cholesky`` zeroes the strict
upper triangle, as JAX's do (so the jaxprs print alike).

The matrix helpers (triangles, identity matrices, products at HIGHEST
precision, diagonals, row permutations, LU solves) live with the primitives
(minijax/primitives/linalg.py), whose jvp rules and ``minijax.numpy.linalg``
share them.

``qdwh`` is not a primitive, in JAX either: lax operations, in
``minijax.lax._qdwh``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from minijax.lax._qdwh import qdwh as qdwh  # ext21 (issue 21): written with lax operations, as JAX's
from minijax.primitives import elementwise as ew
from minijax.primitives.linalg import (
    EighImplementation as EighImplementation,
    EigImplementation as EigImplementation,
    SvdAlgorithm as SvdAlgorithm,
    cholesky_p as cholesky_p,
    cholesky_update_p as cholesky_update_p,
    eig_p as eig_p,
    eigh_p as eigh_p,
    hessenberg_p as hessenberg_p,
    householder_product_p as householder_product_p,
    lu_p as lu_p,
    lu_pivots_to_permutation_p as lu_pivots_to_permutation_p,
    matrix_transpose,
    ormqr_p as ormqr_p,
    qr_p as qr_p,
    schur_p as schur_p,
    svd_p as svd_p,
    symmetric_product_p as symmetric_product_p,
    symmetrize as symmetrize,
    triangular_solve as triangular_solve,
    triangular_solve_p as triangular_solve_p,
    tridiagonal_p as tridiagonal_p,
    tridiagonal_solve_p as tridiagonal_solve_p,
    tril,
)

ArrayLike = Any
Array = Any

__all__ = [
    "EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p", "cholesky_update",
    "cholesky_update_p", "eig", "eig_p",
    "eigh", "eigh_p", "hessenberg", "hessenberg_p", "householder_product", "householder_product_p", "lu", "lu_p",
    "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "ormqr", "ormqr_p", "qdwh", "qr", "qr_p", "schur",
    "schur_p", "svd", "svd_p", "symmetric_product", "symmetric_product_p", "triangular_solve", "triangular_solve_p",
    "tridiagonal", "tridiagonal_p", "tridiagonal_solve", "tridiagonal_solve_p",
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
    return tril(cholesky_p.bind(x))


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


def eig(
    x: ArrayLike,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
    implementation: EigImplementation | None = None,
    use_magma: bool | None = None,
) -> list[Array]:
    """[w, vl, vr]: eigenvalues and left/right eigenvectors (columns) of general square matrices, all complex.

    vl and vr are there only when asked for. Each eigenvector has unit
    2-norm and its largest-magnitude component real (LAPACK's geev).
    Eigenvector derivatives need ``enable_eigvec_derivs=True`` (they assume
    distinct eigenvalues). ``use_magma`` is deprecated (a GPU option in JAX).
    """
    if use_magma is not None:
        warnings.warn(
            "use_magma is deprecated, please use implementation=EigImplementation.MAGMA instead.",
            DeprecationWarning, stacklevel=2,
        )  # fmt: skip
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    out: list[Array] = eig_p.bind(
        x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors), enable_eigvec_derivs=bool(enable_eigvec_derivs),
        implementation=implementation,
    )  # fmt: skip
    return out


def schur(
    x: ArrayLike,
    *,
    compute_schur_vectors: bool = True,
    sort_eig_vals: bool = False,
    select_callable: Callable[..., Any] | None = None,
) -> Any:
    """The real Schur decomposition A = Q T Qᵀ: [T, Q], or [T] without ``compute_schur_vectors``.

    T is quasi upper triangular (1×1 and 2×2 diagonal blocks, the 2×2 ones
    for complex conjugate eigenvalue pairs), Q orthogonal. ``sort_eig_vals``
    raises NotImplementedError when computed (as in JAX); ``select_callable``
    is unused.
    """
    out = schur_p.bind(
        x, compute_schur_vectors=bool(compute_schur_vectors), sort_eig_vals=bool(sort_eig_vals),
        select_callable=select_callable,
    )  # fmt: skip
    return list(out)  # a list, as JAX's (of one array without the vectors)


def hessenberg(a: ArrayLike) -> tuple[Array, Array]:
    """Householder reduction to upper Hessenberg form (LAPACK's gehrd): (a, taus).

    The upper triangle and first subdiagonal of ``a`` hold H; below the
    subdiagonal are the reflectors' vectors, and ``taus`` their scale
    factors, so ``householder_product`` of them (shifted one row down) is Q
    with A = Q H Qᵀ.
    """
    h, taus = hessenberg_p.bind(a)
    return h, taus


def householder_product(a: ArrayLike, taus: ArrayLike) -> Array:
    """The first n columns of H(0) H(1) ... H(k-1), H(i) = I - taus[i] v_i v_iᵀ (LAPACK's orgqr).

    v_i is 1 at row i, column i of ``a`` below it, and zero above.
    """
    return householder_product_p.bind(a, taus)


def ormqr(a: ArrayLike, taus: ArrayLike, c: ArrayLike, *, left: bool = True, transpose: bool = False) -> Array:
    """Q C, Qᵀ C, C Q or C Qᵀ for the Q of the reflectors (a, taus), without forming Q (LAPACK's ormqr)."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


def cholesky_update(r_matrix: ArrayLike, w_vector: ArrayLike) -> Array:
    """The upper Cholesky factor of A + w wᵀ from that of A = Rᵀ R, by Givens rotations (one matrix, no batch)."""
    return cholesky_update_p.bind(r_matrix, w_vector)


def symmetric_product(
    a_matrix: ArrayLike, c_matrix: ArrayLike, *, alpha: float = 1.0, beta: float = 0.0, symmetrize_output: bool = False
) -> Array:
    """alpha A Aᵀ + beta C; with ``symmetrize_output`` the upper triangle is the lower one's mirror."""
    result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if symmetrize_output:
        upper = matrix_transpose(tril(result, -1))  # built first, as JAX's (the jaxprs match)
        result = ew.add_p.bind(tril(result), upper)
    return result


def tridiagonal(a: ArrayLike, *, lower: bool = True) -> tuple[Array, Array, Array, Array]:
    """Householder reduction of a symmetric matrix to tridiagonal form (LAPACK's sytrd): (a, d, e, taus).

    Only the ``lower`` (or upper) triangle is read. ``d`` is the diagonal
    and ``e`` the off-diagonal of the tridiagonal T, and the reflectors
    (vectors in ``a`` beyond that off-diagonal, factors in ``taus``) give Q
    with A = Q T Qᵀ.
    """
    x, d, e, taus = tridiagonal_p.bind(a, lower=bool(lower))
    return x, d, e, taus


def tridiagonal_solve(dl: ArrayLike, d: ArrayLike, du: ArrayLike, b: ArrayLike, *, perturb_singular: bool = False) -> Array:
    """X with A X = B for the tridiagonal A: ``dl[i] = A[i, i-1]``, ``d[i] = A[i, i]``, ``du[i] = A[i, i+1]``.

    ``dl[0]`` and ``du[-1]`` are not read. Gaussian elimination with
    partial pivoting (LAPACK's gtsv); a singular matrix gives NaN. With
    ``perturb_singular=True`` (jaxlib's own kernel, as JAX on CPU) pivots
    small enough to overflow are perturbed by about eps * max|U| instead, so
    a singular system gets a finite solution.
    """
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


