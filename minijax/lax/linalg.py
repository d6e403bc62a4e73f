"""``jax.lax.linalg``: the matrix decompositions, each one primitive.

The functions take leading batch dimensions and bind the primitives of
``minijax.primitives.linalg`` with JAX's params; ``cholesky`` and ``eigh``
symmetrize their input first by default, and ``cholesky`` zeroes the strict
upper triangle, as JAX's do (so the jaxprs print alike).

The matrix helpers (triangles, identity matrices, products at HIGHEST
precision, diagonals, row permutations, LU solves) live with the primitives
(minijax/primitives/linalg.py), whose jvp rules and ``minijax.numpy.linalg``
share them.

Not provided (JAX has them): ``eig``, ``schur``, ``hessenberg``,
``householder_product``, ``ormqr``, ``cholesky_update``, ``symmetric_product``,
``tridiagonal``, ``tridiagonal_solve`` and ``qdwh``: each raises
NotImplementedError naming itself.
"""

from __future__ import annotations

from typing import Any, NoReturn

from minijax.primitives.linalg import (
    EighImplementation as EighImplementation,
    SvdAlgorithm as SvdAlgorithm,
    cholesky_p as cholesky_p,
    eigh_p as eigh_p,
    lu_p as lu_p,
    lu_pivots_to_permutation_p as lu_pivots_to_permutation_p,
    qr_p as qr_p,
    svd_p as svd_p,
    symmetrize as symmetrize,
    triangular_solve as triangular_solve,
    triangular_solve_p as triangular_solve_p,
    tril,
)

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
