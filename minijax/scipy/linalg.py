"""``jax.scipy.linalg``: SciPy's dense linear algebra on ``lax.linalg`` and ``jnp.linalg``.

Decompositions and solves are thin wrappers over the linalg primitives
(cholesky, triangular_solve, lu, qr, eigh, svd); ``expm`` is JAX's
scaling-and-squaring Padé algorithm written on ``lax.switch``/``lax.cond``/
``lax.scan``, so its derivative (and ``expm_frechet``, its jvp) is what
differentiating those gives, as in JAX. The special matrices (toeplitz,
hankel, circulant, pascal, ...) are index arithmetic and gathers.

As in JAX, ``overwrite_*``, ``check_finite``, ``debug``, ``lwork``, ``turbo``
and ``lapack_driver`` are accepted and ignored.

``schur`` and ``hessenberg`` are the ``lax.linalg`` primitives' (LAPACK's gees
and gehrd, as in JAX).

``sqrtm``, ``funm`` and ``solve_sylvester`` go through the complex Schur
form (``schur(output='complex')``, or ``rsf2csf`` of the real one) as JAX's
do, so their results are complex (``solve_sylvester``'s real for real C).
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.autodiff import jvp
from minijax.custom_derivatives import custom_jvp
from minijax.lax import linalg as lax_linalg
from minijax.numpy.util import check_arraylike, promote_args_inexact, promote_dtypes, promote_dtypes_inexact
from minijax.primitives.linalg import lu_solve as _lu_solve_factors
from minijax.stages import jit
from minijax.typing import ArrayLike
from minijax.vectorization import vmap

# Arrays and tracers alike: the annotations stay loose, as in minijax.lax.linalg.
Array = Any

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "convolution_matrix", "det", "dft",
    "eigh", "eigh_tridiagonal", "expm", "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard", "hankel",
    "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor", "lu_solve",
    "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester", "solve_triangular",
    "sqrtm", "svd", "toeplitz",
]  # fmt: skip

_HIGHEST = lax.Precision.HIGHEST


def _mT(x: Array) -> Array:  # noqa: N802 (JAX's name for the matrix transpose)
    return jnp.swapaxes(x, -1, -2)


def _pad(x: Array, widths: list[tuple[int, int]]) -> Array:
    """x with zeros before and after along each axis (``jnp.pad``'s constant mode)."""
    return lax.pad(x, jnp.zeros((), x.dtype), [(lo, hi, 0) for lo, hi in widths])


def _square(name: str, a: Array) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected a (batched) square matrix, got shape {a.shape}.")


def _broadcast_batch(a: Array, b: Array, b_core: int) -> tuple[Array, Array]:
    """a (..., n, n) and b (..., core) with their batch axes broadcast to one shape."""
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[: b.ndim - b_core])
    return (
        jnp.broadcast_to(a, (*batch, *a.shape[-2:])),
        jnp.broadcast_to(b, (*batch, *b.shape[b.ndim - b_core :])),
    )


def _matrix_rhs(name: str, a: Array, b: Array, solve: Callable[[Array, Array], Array]) -> Array:
    """``solve(a, b)`` on (..., n, k) right-hand sides; a 1-D b is one vector.

    JAX reads b as a stack of matrices unless it is 1-D or in its deprecated
    batched-vector reading (b.ndim == a.ndim - 1 with a matching last axis),
    which warns as JAX's does.
    """
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warnings.warn(
            f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and in the future will be "
            f"treated as a batched 2D solve. Use {name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
            category=FutureWarning,
            stacklevel=3,
        )
    if b.ndim == 1 or (b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]):
        a2, b2 = _broadcast_batch(a, b, 1)
        return solve(a2, b2[..., None])[..., 0]
    if b.ndim < 1:
        raise ValueError(f"{name}: b must be at least 1-dimensional, got a scalar.")
    a2, b2 = _broadcast_batch(a, b, 2)
    return solve(a2, b2)


# ---------------------------------------------------------------------------
# Cholesky


def _cholesky(a: Array, lower: bool) -> Array:
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    factor = lax_linalg.cholesky(a if lower else _mT(a), symmetrize_input=False)
    return factor if lower else _mT(factor)


def cholesky(a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The Cholesky factor of a positive definite matrix: upper U (A = UᵀU) by default, lower L with ``lower``."""
    del overwrite_a, check_finite
    return _cholesky(jnp.asarray(a), lower)


def cho_factor(
    a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Array, bool]:
    """``(c, lower)`` for ``cho_solve``: the Cholesky factor and which triangle it is."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def _cho_solve_matrix(c: Array, b: Array, lower: bool) -> Array:
    # (L Lᴴ) x = b: solve with L then Lᴴ; the upper factor U = Lᴴ the other way round.
    b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower)
    return lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)


def cho_solve(
    c_and_lower: tuple[ArrayLike, bool], b: ArrayLike, overwrite_b: bool = False, check_finite: bool = True
) -> Array:
    """x with A x = b, from ``cho_factor(A)``."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c_arr, b_arr = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
    return _matrix_rhs("cho_solve", c_arr, b_arr, lambda cc, bb: _cho_solve_matrix(cc, bb, bool(lower)))


# ---------------------------------------------------------------------------
# Wrappers of the decompositions


def svd(
    a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
    check_finite: bool = True, lapack_driver: str = "gesdd",
) -> Any:  # fmt: skip
    """(U, s, Vh) with A = U diag(s) Vh (s descending), or s alone without ``compute_uv``."""
    del overwrite_a, check_finite, lapack_driver
    (arr,) = promote_dtypes_inexact(jnp.asarray(a))
    return lax_linalg.svd(arr, full_matrices=full_matrices, compute_uv=compute_uv)


def det(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The determinant (``jnp.linalg.det``)."""
    del overwrite_a, check_finite
    return jnp.linalg.det(a)


def inv(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The inverse (``jnp.linalg.inv``)."""
    del overwrite_a, check_finite
    return jnp.linalg.inv(a)


def eigh(
    a: ArrayLike, b: ArrayLike | None = None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
    overwrite_b: bool = False, turbo: bool = True, eigvals: None = None, type: int = 1,  # noqa: A002 (SciPy's name)
    check_finite: bool = True,
) -> Any:  # fmt: skip
    """(w, v): ascending eigenvalues and eigenvectors of a symmetric matrix (one triangle read), or w alone."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (arr,) = promote_dtypes_inexact(jnp.asarray(a))
    v, w = lax_linalg.eigh(arr, lower=lower)
    return w if eigvals_only else (w, v)


def lu_factor(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Array, Array]:
    """(lu, piv) for ``lu_solve``: LU with partial pivoting, piv the 0-based row swaps."""
    del overwrite_a, check_finite
    (arr,) = promote_dtypes_inexact(jnp.asarray(a))
    factors, pivots, _ = lax_linalg.lu(arr)
    return factors, pivots


def lu_solve(
    lu_and_piv: tuple[Array, ArrayLike],
    b: ArrayLike,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Array:
    """x with A x = b (``trans=0``), Aᵀ x = b (1) or Aᴴ x = b (2), from ``lu_factor(A)``."""
    del overwrite_b, check_finite
    factors, pivots = lu_and_piv
    lu_arr, b_arr = promote_dtypes_inexact(jnp.asarray(factors), jnp.asarray(b))
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    m = lu_arr.shape[-2]
    perm = lax_linalg.lu_pivots_to_permutation(jnp.asarray(pivots), m)

    def solve(f: Array, rhs: Array) -> Array:
        p = jnp.broadcast_to(perm, (*f.shape[:-2], m))
        return _lu_solve_factors(f, p, rhs, trans=int(trans))

    return _matrix_rhs("lu_solve", lu_arr, b_arr, solve)


def lu(a: ArrayLike, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """(P, L, U) with A = P L U, or (P L, U) with ``permute_l``."""
    del overwrite_a, check_finite
    (arr,) = promote_dtypes_inexact(jnp.asarray(a))
    factors, _, permutation = lax_linalg.lu(arr)
    m, n = arr.shape[-2:]
    k = min(m, n)
    dtype = arr.dtype
    real = np.finfo(dtype).dtype  # P is real for complex matrices too (as JAX)
    p = (permutation[..., None, :] == jnp.arange(m, dtype=permutation.dtype)[:, None]).astype(real)
    lower = jnp.tril(factors, -1)[..., :, :k] + jnp.eye(m, k, dtype=dtype)
    upper = jnp.triu(factors)[..., :k, :]
    if permute_l:
        return jnp.matmul(p, lower, precision=_HIGHEST), upper
    return p, lower, upper


def qr(
    a: ArrayLike, overwrite_a: bool = False, lwork: Any = None, mode: str = "full", pivoting: bool = False,
    check_finite: bool = True,
) -> Any:  # fmt: skip
    """(Q, R) for mode 'full' or 'economic', (R,) for mode 'r'."""
    del overwrite_a, lwork, check_finite
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (arr,) = promote_dtypes_inexact(jnp.asarray(a))
    q, r = lax_linalg.qr(arr, pivoting=pivoting, full_matrices=full_matrices)
    return (r,) if mode == "r" else (q, r)


def qr_multiply(
    a: ArrayLike, c: ArrayLike, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
    overwrite_a: bool = False, overwrite_c: bool = False,
) -> Any:  # fmt: skip
    """(Q c, R) for ``mode='left'`` or (c Q, R) for 'right', R the economic factor.

    minijax forms Q (the economic one) and multiplies, where JAX applies the
    Householder reflectors (``ormqr``): the values agree. ``pivoting=True``
    raises NotImplementedError (no pivoted QR in minijax).
    """
    del overwrite_a, overwrite_c
    a_arr, c_arr = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("qr_multiply(pivoting=True): minijax has no pivoted QR (lax.linalg.geqp3).")
    onedim = c_arr.ndim == 1
    if onedim:
        c_arr = c_arr[:, None] if mode == "left" else c_arr[None, :]
    m, n = a_arr.shape[-2:]
    k = min(m, n)
    if mode == "left":
        if c_arr.shape[-2] != k:
            raise ValueError(
                f"Array shapes are not compatible for Q @ c operation: a has shape {tuple(a_arr.shape)} so Q has "
                f"{k} columns, but c has {c_arr.shape[-2]} rows (expected {k})."
            )
    elif c_arr.shape[-1] != m:
        raise ValueError(
            f"Array shapes are not compatible for c @ Q operation: a has shape {tuple(a_arr.shape)} so Q has {m} "
            f"rows, but c has {c_arr.shape[-1]} columns (expected {m})."
        )
    q, r = lax_linalg.qr(a_arr, full_matrices=False)
    if conjugate:  # Qᴴ applied from the other side: (c Q)ᴴ = Qᴴ cᴴ, real here
        q = _mT(q)
        out = jnp.matmul(c_arr, q, precision=_HIGHEST) if mode == "left" else jnp.matmul(q, c_arr, precision=_HIGHEST)
    else:
        out = jnp.matmul(q, c_arr, precision=_HIGHEST) if mode == "left" else jnp.matmul(c_arr, q, precision=_HIGHEST)
    if onedim:
        out = out.ravel()
    return out, r


# ---------------------------------------------------------------------------
# Solves


def _make_solve_pos(lower: bool) -> Any:
    """x = A⁻¹ b through the Cholesky factor of A's ``lower`` (or upper) triangle."""

    def factor(a: Array) -> Array:
        return lax_linalg.cholesky(a if lower else _mT(a), symmetrize_input=False)

    @custom_jvp
    def solve_pos(a: Array, b: Array) -> Array:
        return _cho_solve_matrix(factor(a), b, True)

    @solve_pos.defjvp  # type: ignore[misc, untyped-decorator]
    def solve_pos_jvp(primals: tuple[Array, Array], tangents: tuple[Array, Array]) -> tuple[Array, Array]:
        # d(A⁻¹ b) = A⁻¹ (ḃ - Ȧ x) with the one factorization (what JAX's custom_linear_solve gives).
        (a, b), (a_dot, b_dot) = primals, tangents
        c = factor(a)
        x = _cho_solve_matrix(c, b, True)
        return x, _cho_solve_matrix(c, b_dot - jnp.matmul(a_dot, x, precision=_HIGHEST), True)

    return solve_pos


_SOLVE_POS = {lower: _make_solve_pos(lower) for lower in (False, True)}


def solve(
    a: ArrayLike, b: ArrayLike, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
    debug: bool = False, check_finite: bool = True, assume_a: str = "gen",
) -> Array:  # fmt: skip
    """x with a x = b; ``assume_a='pos'`` solves through a Cholesky factor of the ``lower`` (or upper) triangle."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid_assume_a = ["gen", "sym", "her", "pos"]
    if assume_a not in valid_assume_a:
        raise ValueError(f"Expected assume_a to be one of {valid_assume_a}; got {assume_a!r}")
    if assume_a != "pos":
        return jnp.linalg.solve(a, b)
    a_arr, b_arr = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    if not (
        a_arr.ndim >= 2 and b_arr.ndim in (a_arr.ndim, a_arr.ndim - 1)
        and a_arr.shape[-1] == a_arr.shape[-2] == b_arr.shape[a_arr.ndim - 2]
    ):  # fmt: skip
        raise ValueError(
            "The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; "
            f"got a={a_arr.shape} and b={b_arr.shape}"
        )
    solve_pos = _SOLVE_POS[bool(lower)]
    if b_arr.ndim == a_arr.ndim - 1:
        a2, b2 = _broadcast_batch(a_arr, b_arr, 1)
        return solve_pos(a2, b2[..., None])[..., 0]
    a2, b2 = _broadcast_batch(a_arr, b_arr, 2)
    return solve_pos(a2, b2)


def solve_triangular(
    a: ArrayLike, b: ArrayLike, trans: int | str = 0, lower: bool = False, unit_diagonal: bool = False,
    overwrite_b: bool = False, debug: Any = None, check_finite: bool = True,
) -> Array:  # fmt: skip
    """x with op(a) x = b, a triangular (only its ``lower`` or upper triangle read); op is trans 0/'N', 1/'T', 2/'C'."""
    del overwrite_b, debug, check_finite
    if trans in (0, "N"):
        transpose_a = conjugate_a = False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):
        transpose_a = conjugate_a = True  # (no effect on real matrices)
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a_arr, b_arr = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))

    def solve_(aa: Array, bb: Array) -> Array:
        return lax_linalg.triangular_solve(
            aa, bb, left_side=True, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
            unit_diagonal=unit_diagonal,
        )

    return _matrix_rhs("solve_triangular", a_arr, b_arr, solve_)


# ---------------------------------------------------------------------------
# expm: scaling and squaring with a Padé approximant (Higham 2005), JAX's
# orders and thresholds: float32 uses degree 3, 5 or 7, float64 up to 13.


def _dot(a: Array, b: Array) -> Array:
    return jnp.matmul(a, b, precision=_HIGHEST)


# The coefficients b_0..b_d of the degree-d Padé approximant of exp.
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0, 90.0, 1.0),
    13: (
        64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
        10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0,
    ),
}  # fmt: skip


def _pade(degree: int) -> Callable[[Array], tuple[Array, Array]]:
    """(U, V): the odd and even parts of the Padé numerator, p(A) = V + U, q(A) = V - U."""
    b = _PADE[degree]

    def uv(a: Array) -> tuple[Array, Array]:
        ident = jnp.eye(a.shape[0], dtype=a.dtype)
        a2 = _dot(a, a)
        if degree == 13:
            a4 = _dot(a2, a2)
            a6 = _dot(a4, a2)
            u = _dot(
                a, _dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident
            )
            v = _dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
            return u, v
        powers = [ident, a2]  # A^0, A^2, A^4, ...
        for _ in range(degree // 2 - 1):
            powers.append(_dot(powers[-1], a2))
        odd = sum((b[2 * i + 1] * p for i, p in enumerate(powers)), jnp.zeros_like(a))
        even = sum((b[2 * i] * p for i, p in enumerate(powers)), jnp.zeros_like(a))
        return _dot(a, odd), even

    return uv


def _expm_2d(a: Array, upper_triangular: bool, max_squarings: int) -> Array:
    norm1 = jnp.linalg.norm(a, 1)
    degrees: tuple[int, ...]
    if a.dtype in (np.float64, np.complex128):
        maxnorm, conds, degrees = (
            5.371920351148152,
            [0.01495585217958292, 0.253939833006323, 0.9504178996162932, 2.097847961257068],
            (3, 5, 7, 9, 13),
        )
    elif a.dtype in (np.float32, np.complex64):
        maxnorm, conds, degrees = 3.92572478313866, [0.4258730016922831, 1.880152677804762], (3, 5, 7)
    else:
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm1 / maxnorm)))
    scaled = a / (2**n_squarings).astype(a.dtype)
    # Thresholds on the unscaled norm pick the degree, as JAX does.
    idx = jnp.digitize(norm1, jnp.array(conds, dtype=norm1.dtype))
    u, v = lax.switch(idx, [_pade(d) for d in degrees], scaled)
    p, q = u + v, v - u

    def compute(operands: tuple[Array, Array]) -> Array:
        p_, q_ = operands
        if upper_triangular:
            r = lax_linalg.triangular_solve(q_, p_, left_side=True, lower=False)
        else:
            r = jnp.linalg.solve(q_, p_)

        def square(carry: Array, i: Array) -> tuple[Array, None]:
            return lax.cond(i < n_squarings, lambda x: _dot(x, x), lambda x: x, carry), None

        out, _ = lax.scan(square, r, jnp.arange(max_squarings, dtype=n_squarings.dtype))
        return out

    # More squarings than allowed: the result would not be accurate, NaN as in JAX.
    return lax.cond(n_squarings > max_squarings, lambda ops: jnp.full_like(ops[0], np.nan), compute, (p, q))


def expm(A: ArrayLike, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:  # noqa: N803 (SciPy's name)
    """The matrix exponential of each (n, n) matrix; ``upper_triangular`` solves with a triangular solve."""
    (arr,) = promote_dtypes_inexact(jnp.asarray(A))
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={arr.shape!r}.")
    fun: Callable[[Array], Array] = lambda x: _expm_2d(x, upper_triangular, max_squarings)  # noqa: E731
    for _ in range(arr.ndim - 2):
        fun = vmap(fun)
    return fun(arr)


def expm_frechet(A: ArrayLike, E: ArrayLike, *, method: str | None = None, compute_expm: bool = True) -> Any:  # noqa: N803
    """(expm(A), L(A, E)) with L the Fréchet derivative of expm at A along E (expm's jvp), or L alone."""
    del method
    a_arr, e_arr = jnp.asarray(A), jnp.asarray(E)
    if a_arr.ndim < 2 or a_arr.shape[-2] != a_arr.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a_arr.shape}")
    if e_arr.ndim < 2 or e_arr.shape[-2] != e_arr.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e_arr.shape}")
    if a_arr.shape != e_arr.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={a_arr.shape} E.shape={e_arr.shape}")
    expm_a, frechet = jvp(lambda x: expm(x), (a_arr,), (e_arr,))
    return (expm_a, frechet) if compute_expm else frechet


# ---------------------------------------------------------------------------
# polar


def _polar_2d(a: Array, side: str) -> tuple[Array, Array]:
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    unitary = _dot(u, vh)
    if side == "right":
        posdef = _dot(_mT(vh) * s[..., None, :], vh)
    else:
        posdef = _dot(u * s[..., None, :], _mT(u))
    return unitary, posdef


def polar(
    a: ArrayLike,
    side: str = "right",
    *,
    method: str = "qdwh",
    eps: float | None = None,
    max_iterations: int | None = None,
) -> tuple[Array, Array]:
    """(U, P) with A = U P (``side='right'``) or A = P U ('left'), U orthonormal, P positive semidefinite.

    'qdwh' (the default) iterates with ``lax.linalg.qdwh`` (of Aᵀ for
    side='left'), with its ``eps``; as in JAX, ``max_iterations`` is not
    passed on. 'svd' computes the factors from the SVD.
    """
    del max_iterations  # JAX's polar does not pass it on to qdwh either
    arr = jnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    (arr,) = promote_dtypes_inexact(arr)
    m, n = arr.shape[-2:]
    if method == "qdwh" and not ((m >= n and side == "right") or (m < n and side == "left")):
        raise NotImplementedError(
            "method='qdwh' only supports mxn matrices where m < n where side='right' and m >= n side='left', "
            f"got {arr.shape[-2:]} with side={side!r}"
        )
    if method == "svd":
        return _polar_2d(arr, side)

    # ext21 (issue 21): through qdwh, one matrix at a time (vmapped over leading axes), as JAX's.
    def one(matrix: Array) -> tuple[Array, Array]:
        if side == "right":
            unitary, posdef, _, _ = lax_linalg.qdwh(matrix, eps=eps)
            return unitary, posdef
        unitary, posdef, _, _ = lax_linalg.qdwh(_mT(matrix), eps=eps)
        return _mT(unitary), _mT(posdef)

    fn: Callable[[Array], tuple[Array, Array]] = one
    for _ in range(arr.ndim - 2):
        fn = vmap(fn)
    return fn(arr)


# ---------------------------------------------------------------------------
# eigh_tridiagonal: bisection on Sturm counts (as JAX does it)


def _sturm_counts(alpha: Array, beta_sq: Array, pivmin: Array, alpha0_perturbation: Array, x: Array) -> Array:
    """For each shift x: how many eigenvalues of the tridiagonal matrix are below x (LDLᵀ inertia)."""
    n = alpha.shape[0]
    q = alpha[0] - x
    count = jnp.where(q < 0, 1, 0).astype(np.int32)
    q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i: Array, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        q_, count_ = carry
        q_ = alpha[i] - beta_sq[i - 1] / q_ - x
        below = q_ <= pivmin
        return jnp.where(below, jnp.minimum(q_, -pivmin), q_), jnp.where(below, count_ + 1, count_)

    _, count = lax.fori_loop(1, n, step, (q, count))
    return count


def eigh_tridiagonal(
    d: ArrayLike, e: ArrayLike, *, eigvals_only: bool = False, select: str = "a",
    select_range: tuple[float, float] | None = None, tol: float | None = None, key: Array | None = None,
) -> Any:  # fmt: skip
    """Eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal d and off-diagonal e.

    ``select='a'`` gives all, ``'i'`` the indices ``select_range[0]..[1]``
    (inclusive). The eigenvalues come from bisection on Sturm counts, as in
    JAX. Eigenvectors (``eigvals_only=False``): JAX runs inverse iteration
    from random start vectors (``key``); minijax takes them from ``eigh`` of
    the dense matrix, which has the same columns up to sign.
    """
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got {alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in (np.float32, np.float64):
        raise TypeError(
            "Only float32 and float64 inputs are supported as inputs to jax.scipy.linalg.eigh_tridiagonal, "
            f"got {alpha.dtype} and {beta.dtype}"
        )
    n = alpha.shape[0]
    if n <= 1:
        return alpha if eigvals_only else (alpha, jnp.eye(n, dtype=alpha.dtype))
    beta_abs, beta_sq = jnp.abs(beta), jnp.square(beta)
    # Gershgorin bounds on the spectrum.
    row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    est_max = jnp.max(alpha + row_sums)
    est_min = jnp.min(alpha - row_sums)
    t_norm = jnp.maximum(jnp.abs(est_min), jnp.abs(est_max))
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1
    if select == "a":
        targets = jnp.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        targets = jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    fudge = 2.1
    slack = jnp.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
    shape = targets.shape
    lower = jnp.broadcast_to(est_min - slack - 2 * fudge * pivmin, shape)
    upper = jnp.broadcast_to(est_max + slack + fudge * pivmin, shape)
    mid = 0.5 * (upper + lower)
    pivmin_b = jnp.broadcast_to(pivmin, shape)
    perturb_b = jnp.broadcast_to(alpha0_perturbation, shape)

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        i, lo, _, hi = state
        return jnp.logical_and(i < max_it, abs_tol < jnp.max(hi - lo))

    def body(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        i, lo, mi, hi = state
        counts = _sturm_counts(alpha, beta_sq, pivmin_b, perturb_b, mi)
        lo = jnp.where(counts <= targets, mi, lo)
        hi = jnp.where(counts > targets, mi, hi)
        return i + 1, lo, 0.5 * (lo + hi), hi

    _, _, eigenvalues, _ = lax.while_loop(cond, body, (jnp.array(0), lower, mid, upper))
    if eigvals_only:
        return eigenvalues
    dense = jnp.diag(alpha) + jnp.diag(beta, 1) + jnp.diag(beta, -1)
    vectors, _ = lax_linalg.eigh(dense)
    return eigenvalues, jnp.take(vectors, targets, axis=1)


# ---------------------------------------------------------------------------
# block_diag and the special matrices


def block_diag(*arrs: ArrayLike) -> Array:
    """The block-diagonal matrix of the (at most 2-D) arguments."""
    if len(arrs) == 0:
        arrs = (jnp.zeros((1, 0)),)
    check_arraylike("block_diag", *arrs)
    promoted = promote_dtypes(*(jnp.asarray(a) for a in arrs))
    bad = [i for i, x in enumerate(promoted) if np.ndim(x) > 2]
    if bad:
        raise ValueError(
            f"Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got {promoted[bad[0]]} "
            f"at argument {bad[0]}."
        )
    mats = [jnp.atleast_2d(x) for x in promoted]
    total = sum(x.shape[1] for x in mats)
    rows, col = [], 0
    for x in mats:
        rows.append(_pad(x, [(0, 0), (col, total - col - x.shape[1])]))
        col += x.shape[1]
    return jnp.concatenate(rows, axis=0)


def _diagonal_constant(name: str, first: Array, rest: Array, flip: bool) -> Array:
    """out[..., i, j] = v[±i + j] from v = (first reversed or not, rest[1:]), batched."""
    first, rest = promote_dtypes(jnp.atleast_1d(first), jnp.atleast_1d(rest))
    m, n = first.shape[-1], rest.shape[-1]
    batch = jnp.broadcast_shapes(first.shape[:-1], rest.shape[:-1])
    first = jnp.broadcast_to(first, (*batch, m))
    rest = jnp.broadcast_to(rest, (*batch, n))
    if m == 0 or n == 0:
        return jnp.zeros((*batch, m, n), first.dtype)
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    if flip:  # Toeplitz: constant along i - j
        values = jnp.concatenate([first[..., ::-1], rest[..., 1:]], axis=-1)
        index = m - 1 - i + j
    else:  # Hankel: constant along i + j
        values = jnp.concatenate([first, rest[..., 1:]], axis=-1)
        index = i + j
    return jnp.take(values, jnp.asarray(index.astype(np.int32)), axis=-1)


def toeplitz(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """The Toeplitz matrix with first column c and first row r (r = c by default), batched over leading axes."""
    if r is None:
        check_arraylike("toeplitz", c)
        r = jnp.asarray(c)
    else:
        check_arraylike("toeplitz", c, r)
    return _diagonal_constant("toeplitz", jnp.asarray(c), jnp.asarray(r), flip=True)


def hankel(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """The Hankel matrix with first column c and last row r (zeros by default), batched over leading axes."""
    if r is None:
        check_arraylike("hankel", c)
        c_arr = jnp.asarray(c)
        r_arr = jnp.zeros_like(c_arr)
    else:
        check_arraylike("hankel", c, r)
        c_arr, r_arr = jnp.asarray(c), jnp.asarray(r)
    if c_arr.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r_arr.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    return _diagonal_constant("hankel", c_arr, r_arr, flip=False)


def circulant(c: ArrayLike) -> Array:
    """The circulant matrix with first column c: out[i, j] = c[(i - j) % n]."""
    check_arraylike("circulant", c)
    arr = jnp.atleast_1d(jnp.asarray(c))
    n = arr.shape[-1]
    index = (np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1)
    return jnp.take(arr, jnp.asarray(index.astype(np.int32)), axis=-1)


def leslie(f: ArrayLike, s: ArrayLike) -> Array:
    """The Leslie matrix: fecundities f in the first row, survival rates s on the subdiagonal."""
    check_arraylike("leslie", f, s)
    f_arr, s_arr = promote_dtypes(jnp.atleast_1d(f), jnp.atleast_1d(s))
    if f_arr.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape {f_arr.shape}.")
    if s_arr.shape[-1] != f_arr.shape[-1] - 1:
        raise ValueError(
            "Incorrect lengths for f and s. The length of s along the last axis must be one less than the length "
            f"of f; got f shape {f_arr.shape} and s shape {s_arr.shape}."
        )
    n = f_arr.shape[-1]
    batch = jnp.broadcast_shapes(f_arr.shape[:-1], s_arr.shape[:-1])
    f_arr = jnp.broadcast_to(f_arr, (*batch, n))
    s_arr = jnp.broadcast_to(s_arr, (*batch, n - 1))
    sub = _pad(s_arr[..., :, None] * jnp.eye(n - 1, n, dtype=s_arr.dtype), [(0, 0)] * len(batch) + [(1, 0), (0, 0)])
    return sub.at[..., 0, :].set(f_arr)


def companion(a: ArrayLike) -> Array:
    """The companion matrix of the polynomial with coefficients a (highest degree first)."""
    (arr,) = promote_args_inexact("companion", a)
    arr = jnp.atleast_1d(arr)
    if arr.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape {arr.shape}.")
    first_row = -arr[..., 1:] / arr[..., :1]
    m = arr.shape[-1] - 1
    out = jnp.broadcast_to(jnp.eye(m, m, k=-1, dtype=first_row.dtype), (*arr.shape[:-1], m, m))
    return out.at[..., 0, :].set(first_row)


def fiedler(a: ArrayLike) -> Array:
    """The symmetric Fiedler matrix |a[i] - a[j]|."""
    check_arraylike("fiedler", a)
    arr = jnp.atleast_1d(jnp.asarray(a))
    return jnp.abs(arr[..., None] - arr[..., None, :])


def fiedler_companion(a: ArrayLike) -> Array:
    """Fiedler's pentadiagonal companion matrix of the polynomial with coefficients a."""
    (arr,) = promote_args_inexact("fiedler_companion", a)
    arr = jnp.atleast_1d(arr)
    if arr.shape[-1] == 0:
        raise ValueError(
            "fiedler_companion requires the last axis of 'a' to have nonzero length, but got an array of "
            f"shape {arr.shape}."
        )
    n = arr.shape[-1] - 1
    batch = arr.shape[:-1]
    if n == 0:
        return jnp.zeros((*batch, 0, 0), arr.dtype)
    arr = arr / arr[..., :1]
    if n == 1:
        return -arr[..., 1:, None]
    # Each entry is -a[k] for one k, a 1, or a 0: a static table of which.
    which = np.full((n, n), -1, np.int64)  # -1: zero, -2: one, k >= 1: -a[k]
    for i in range(n):
        for j in range(n):
            if i == 0 and j == 0:
                which[i, j] = 1
            elif i == 1 and j == 0:
                which[i, j] = -2
            elif i % 2 == 0 and j == i + 1:
                which[i, j] = min(i + 2, n)
            elif i % 2 == 0 and j == i + 2:
                which[i, j] = -2
            elif i % 2 == 0 and j == i - 1 and i >= 2:
                which[i, j] = min(i + 1, n)
            elif i % 2 == 1 and j == i - 2 and i >= 3:
                which[i, j] = -2
    picked = -jnp.take(arr, jnp.asarray(np.maximum(which, 0).astype(np.int32)), axis=-1)
    ones = jnp.ones_like(picked)
    return jnp.where(
        jnp.asarray(which == -2), ones, jnp.where(jnp.asarray(which == -1), jnp.zeros_like(picked), picked)
    )


def convolution_matrix(a: ArrayLike, n: int, mode: str = "full") -> Array:
    """The Toeplitz matrix T with T @ v = convolve(a, v, mode) for every length-n v."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = arr.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {arr.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pad = [(0, 0)] * (arr.ndim - 1) + [(0, n - 1)]
    az = _pad(arr, pad)
    raz = _pad(jnp.flip(arr, axis=-1), pad)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    return toeplitz(az[..., tb : length - te], raz[..., length - n - tb : length - tb])


def hilbert(n: int) -> Array:
    """The n×n Hilbert matrix 1 / (i + j + 1)."""
    a = lax.broadcasted_iota(dtypes.default_float_dtype(), (n, 1), 0)
    return 1 / (a + a.T + 1)


def _binom(n: Array, k: Array) -> Array:
    # Through lgamma, as JAX does (so values carry its rounding).
    return jnp.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _comb(n: Array, k: Array) -> Array:
    """C(n, k) through lgamma, 0 where k < 0 or k > n (as ``scipy.special.comb``)."""
    valid = (k >= 0) & (k <= n)
    safe_k = jnp.where(valid, k, 0.0)
    return jnp.where(valid, _binom(n, safe_k), 0.0)


def invhilbert(n: int) -> Array:
    """The inverse of the n×n Hilbert matrix (floating point, as JAX computes it)."""
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i, j = a[:, None], a[None, :]
    s = i + j
    return (-1.0) ** s * (s + 1.0) * _comb(n + i, n - j - 1) * _comb(n + j, n - i - 1) * _comb(s, i) ** 2


def _check_kind(kind: str | None, article: str) -> str:
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be {article}: {valid}; got {kind}")
    return kind


def pascal(n: int, kind: str | None = None) -> Array:
    """The n×n Pascal matrix: 'symmetric' (default), 'lower' or 'upper'."""
    kind = _check_kind(kind, "on of")  # JAX's message, typo included
    a = jnp.arange(n, dtype=np.float32)
    lower = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return jnp.dot(lower, lower.T)


def invpascal(n: int, kind: str | None = None) -> Array:
    """The inverse of ``pascal(n, kind)``."""
    kind = _check_kind(kind, "one of")
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i, j = a[:, None], a[None, :]
    lower_inv = (-1.0) ** (i - j) * _binom(i, j)
    if kind == "lower":
        return lower_inv
    if kind == "upper":
        return lower_inv.T
    return jnp.dot(lower_inv.T, lower_inv)


def helmert(n: int, full: bool = False) -> Array:
    """The Helmert matrix: (n-1)×n orthonormal contrasts, n×n with ``full``."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = jnp.arange(n - 1)[:, None]
    j = jnp.arange(n)[None, :]
    k = (i + 1).astype(dtypes.default_float_dtype())
    denom = jnp.sqrt(k * (k + 1))
    h = jnp.where(j <= i, 1.0 / denom, jnp.where(j == i + 1, -k / denom, jnp.zeros_like(denom)))
    if full:
        h = jnp.concatenate([jnp.full((1, n), 1.0 / math.sqrt(n), dtype=h.dtype), h], axis=0)
    return h


def hadamard(n: int, dtype: Any = int) -> Array:
    """The n×n Sylvester-Hadamard matrix (n a power of 2)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.concatenate([jnp.concatenate([h, h], axis=1), jnp.concatenate([h, -h], axis=1)], axis=0)
    return h


# ---------------------------------------------------------------------------
# Schur forms and what JAX computes through them (sci21, issue 21): schur,
# rsf2csf, sqrtm, funm, solve_sylvester; and dft


def promote_dtypes_complex(*args: Array) -> list[Array]:
    """The arguments in one complex dtype (their common dtype's complex form)."""
    dt = dtypes.to_complex_dtype(dtypes.result_type(*args))
    return [jnp.asarray(a).astype(dt) for a in args]


def schur(a: ArrayLike, output: str = "real") -> tuple[Array, Array]:
    """The Schur decomposition A = Z T Zᴴ (``lax.linalg.schur``): [T, Z], a list as JAX's.

    ``output='real'``: for a real matrix T is quasi upper triangular (2×2
    diagonal blocks for complex conjugate eigenvalue pairs), Z orthogonal.
    ``output='complex'``: the matrix is made complex first, and T is upper
    triangular, Z unitary. A complex matrix always gets the complex form.
    """
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got output={output!r}.")
    arr = jnp.asarray(a)
    if output == "complex":
        arr = arr.astype(dtypes.to_complex_dtype(arr.dtype))
    out: Any = lax_linalg.schur(arr)
    return out  # type: ignore[no-any-return]


def hessenberg(a: ArrayLike, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The Hessenberg form H of a square matrix, A = Q H Qᵀ (``lax.linalg.hessenberg``): H, or (H, Q) with ``calc_q``."""
    del overwrite_a, check_finite  # unused, as in JAX
    n = np.shape(a)[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    reduced, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(reduced, -1)
    if not calc_q:
        return h
    # Reflector j acts on rows j+1 onwards: Q is 1 ⊕ (their product on the trailing n-1 rows and columns).
    q = lax_linalg.householder_product(reduced[..., 1:, :-1], taus)
    batch = reduced.shape[:-2]
    dtype = reduced.dtype
    q = jnp.block([
        [jnp.ones((*batch, 1, 1), dtype=dtype), jnp.zeros((*batch, 1, n - 1), dtype=dtype)],
        [jnp.zeros((*batch, n - 1, 1), dtype=dtype), q],
    ])  # fmt: skip
    return h, q


def _sqrtm_triu(t: Array) -> Array:
    """The upper triangular square root U (U @ U = T) of an upper triangular T, column by column
    (Björck and Hammarling's Schur method): U[i, j] from the entries of U right of and below it."""
    n = t.shape[0]
    diag = jnp.sqrt(jnp.diagonal(t))
    idx = jnp.arange(n)

    def column(j: Array, u: Array) -> Array:
        def entry(step: Array, u: Array) -> Array:
            i = j - 1 - step
            between = (idx > i) & (idx < j)
            s = jnp.sum(jnp.where(between, u[i, :] * u[:, j], 0))
            value = jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (diag[i] + diag[j]))
            return u.at[i, j].set(value)

        out: Array = lax.fori_loop(0, j, entry, u)
        return out

    out: Array = lax.fori_loop(0, n, column, jnp.diag(diag))
    return out


def sqrtm(A: ArrayLike, blocksize: int = 1) -> Array:  # noqa: N803 (SciPy's name)
    """The principal matrix square root, through the complex Schur form: always complex, as JAX's.

    ``A`` is one square matrix; ``blocksize > 1`` raises NotImplementedError (as in JAX).
    """
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    check_arraylike("scipy.sqrtm", A)
    return _sqrtm_jit(A)


def _sqrtm_2d(a: Array) -> Array:
    t, z = schur(a, output="complex")
    root = _sqrtm_triu(t)
    return jnp.matmul(jnp.matmul(z, root, precision=_HIGHEST), jnp.conj(z.T), precision=_HIGHEST)


def _rsf2csf_2d(t: Array, z: Array) -> tuple[Array, Array]:
    t, z = promote_dtypes_complex(t, z)
    n = t.shape[0]
    if n == 1:
        return t, z
    eps = float(dtypes.finfo(t.dtype).eps)
    idx = jnp.arange(n)

    def rotate(m: Array, t: Array, z: Array) -> tuple[Array, Array]:
        # The 2×2 block's eigenvalue with the larger imaginary part (LAPACK's first of a pair),
        # less T[m, m]: the Givens rotation that zeroes T[m, m-1].
        block = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
        half = (block[0, 0] - block[1, 1]) / 2
        mu = block[1, 1] + half + jnp.sqrt(half * half + block[0, 1] * block[1, 0]) - t[m, m]
        r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(t[m, m - 1]) ** 2).astype(t.dtype)
        c, s = mu / r, t[m, m - 1] / r
        g = jnp.array([[c.conj(), s], [-s, c]], dtype=t.dtype)
        rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
        right = idx >= m - 1
        t = lax.dynamic_update_slice_in_dim(t, jnp.where(right, g @ jnp.where(right, rows, 0), rows), m - 1, axis=0)
        cols = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
        above = idx[:, None] < m + 1
        t = lax.dynamic_update_slice_in_dim(t, jnp.where(above, jnp.where(above, cols, 0) @ g.conj().T, cols), m - 1, axis=1)
        zc = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
        return t, lax.dynamic_update_slice_in_dim(z, zc @ g.conj().T, m - 1, axis=1)

    def step(i: Array, tz: tuple[Array, Array]) -> tuple[Array, Array]:
        t, z = tz
        m = n - i
        coupled = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = lax.cond(coupled, rotate, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0), z

    out: tuple[Array, Array] = lax.fori_loop(1, n, step, (t, z))
    return out


def rsf2csf(T: ArrayLike, Z: ArrayLike, check_finite: bool = True) -> tuple[Array, Array]:  # noqa: N803 (SciPy's names)
    """Real Schur form to complex Schur form: each 2×2 diagonal block of T is split by a Givens
    rotation into two complex eigenvalues, and Z rotated along. Batch axes broadcast."""
    del check_finite  # unused, as in JAX
    t, z = jnp.asarray(T), jnp.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    out: tuple[Array, Array] = _rsf2csf_jit(t, z)
    return out


def _parlett(f: Array, t: Array) -> tuple[Array, Array]:
    """Parlett's recurrence (Golub and Van Loan, algorithm 11.1.1): the off-diagonal entries of
    F = f(T) for upper triangular T, superdiagonal by superdiagonal; also the smallest
    difference of two diagonal entries met (which bounds funm's error estimate)."""
    n = t.shape[0]
    idx = jnp.arange(n)

    def diagonal_p(p: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        def entry(i: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
            f, minden = state
            j = i + p
            s = t[i - 1, j - 1] * (f[j - 1, j - 1] - f[i - 1, i - 1])
            inner = (idx >= i) & (idx < j - 1)
            s = s + (jnp.where(inner, t[i - 1], 0) @ jnp.where(inner, f[:, j - 1], 0)
                     - jnp.where(inner, f[i - 1], 0) @ jnp.where(inner, t[:, j - 1], 0))  # fmt: skip
            den = t[j - 1, j - 1] - t[i - 1, i - 1]
            s = jnp.where(den != 0, s / den, s)
            return f.at[i - 1, j - 1].set(s), jnp.minimum(minden, jnp.abs(den))

        out: tuple[Array, Array] = lax.fori_loop(1, n - p + 1, entry, state)
        return out

    result: tuple[Array, Array] = lax.fori_loop(1, n, diagonal_p, (f, jnp.abs(t[0, 0])))
    return result


def funm(A: ArrayLike, func: Callable[[Array], Array], disp: bool = True) -> Any:  # noqa: N803 (SciPy's name)
    """``func`` of a square matrix (Schur-Parlett): complex, as JAX's. ``func`` maps the vector of
    eigenvalues elementwise. With ``disp=False`` also SciPy's error estimate, as ``(F, err)``."""
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(a)
    t, z = rsf2csf(t, z)
    f = jnp.diag(func(jnp.diagonal(t))).astype(t.dtype)
    f, minden = _parlett_jit(f, t)
    f = z @ f @ z.conj().T
    if disp:
        return f
    tol = float(dtypes.finfo(np.float32 if f.dtype == np.complex64 else np.float64).eps)
    minden = jnp.where(minden == 0.0, tol, minden)
    estimate = jnp.minimum(1, jnp.maximum(tol, (tol / minden) * jnp.linalg.norm(jnp.triu(t, 1), 1)))
    err = jnp.where(jnp.any(jnp.isinf(f)), np.inf, estimate)
    return f, err


def _sylvester_triangular(r: Array, s: Array, f: Array) -> Array:
    """Y with R Y + Y Sᵀ = F for upper triangular R and lower triangular Sᵀ (Bartels-Stewart),
    one entry at a time from the bottom-right corner (JAX's order: row-major, backwards)."""
    m, n = f.shape
    rows, cols = jnp.arange(m), jnp.arange(n)

    def solve_one(y: Array, k: Array) -> tuple[Array, None]:
        i, j = k // n, k % n
        grid = y.reshape((m, n))
        known = jnp.sum(jnp.where(rows > i, r[i, :] * grid[:, j], 0)) + jnp.sum(jnp.where(cols > j, grid[i, :] * s[:, j], 0))
        return y.at[k].set((f[i, j] - known) / (r[i, i] + s[j, j])), None

    y, _ = lax.scan(solve_one, jnp.zeros((m * n,), f.dtype), jnp.arange(m * n - 1, -1, -1))
    out: Array = y.reshape((m, n))
    return out


def _solve_sylvester_2d(a: Array, b: Array, c: Array, method: str, tol: float) -> Array:
    m, n = c.shape[-2:]
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(b.conj().T, output="complex")
        f = u.conj().T @ c.astype(r.dtype) @ v
        x = u @ _sylvester_triangular(r, s.conj().T, f) @ v.conj().T
    elif method == "eigen":
        eig: Any = jnp.linalg.eig  # the nonsymmetric eigendecomposition (complex results)
        ra, ua = eig(a)
        rb, ub = eig(b)
        f = solve(ua, c.astype(ra.dtype) @ ub)
        x = ua[:m, :m] @ (f / (ra[:, None] + rb[None, :]))[:m, :n] @ inv(ub)[:n, :n]
    else:
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".')
    if not dtypes.issubdtype(c.dtype, np.complexfloating):
        x = x.real
    # JAX tests the eigenvalue sums with jnp.linalg.eigvals (LAPACK's geev): the diagonals of the
    # complex Schur forms are those eigenvalues (to rounding), B's those of Bᴴ's, conjugated.
    ea = jnp.diagonal(schur(a, output="complex")[0])
    eb = jnp.diagonal(schur(b, output="complex")[0])
    near_singular = jnp.any(jnp.abs(ea[:, None] + eb[None, :]) < tol)
    out: Array = lax.cond(near_singular, lambda: jnp.zeros_like(x) * np.nan, lambda: x)
    return out


def solve_sylvester(A: ArrayLike, B: ArrayLike, C: ArrayLike, *, method: str = "schur", tol: float = 1e-8) -> Array:  # noqa: N803 (SciPy's names)
    """X with A X + X B = C. ``method='schur'``: Bartels-Stewart on the complex Schur forms of A and
    Bᴴ; ``'eigen'``: through ``jnp.linalg.eig``. NaN everywhere when some eigenvalue of A plus one of
    B is below ``tol`` in magnitude. Real when C is real. Batch axes broadcast."""
    a, b, c = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\nB: {b.shape}\nC: {c.shape}")
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".')
    fn = _SYLVESTER_JITS.get((method, tol))
    if fn is None:
        fn = _SYLVESTER_JITS[(method, tol)] = jit(
            jnp.vectorize(lambda a, b, c: _solve_sylvester_2d(a, b, c, method, tol), signature="(m,m),(n,n),(m,n)->(m,n)")
        )
    return fn(a, b, c)


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Array:
    """The n×n DFT matrix, entries exp(-2πi jk/n); ``scale`` None, ``'sqrtn'`` (unitary) or ``'n'``;
    ``dtype`` a complex dtype (default: the default complex dtype)."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex_dtype()
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "dft")
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    # iota in the real part's dtype, then complex: the same (exact) integers JAX's complex iota gives.
    k = jnp.arange(n, dtype=dtypes.finfo(dtype).dtype).astype(dtype)
    omegas = jnp.exp(-2j * np.pi * k[:, None] * k[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / jnp.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas


_sqrtm_jit = jit(_sqrtm_2d)
_rsf2csf_jit = jit(jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)"))
_parlett_jit = jit(_parlett)
_SYLVESTER_JITS: dict[tuple[str, float], Any] = {}
