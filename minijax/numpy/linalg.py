"""``jnp.linalg``: NumPy's linear algebra on minijax arrays, as ``jax.numpy.linalg`` provides it.

Everything is built from the decompositions of ``minijax.lax.linalg`` (one
primitive each) and ordinary ``jnp``/``lax`` operations, so every function
works under jit, grad and vmap, and maps over leading batch axes. Functions
JAX compiles with ``jit`` are compiled here too, under the same names, so
their jaxprs nest the same way.

Derivatives are JAX's: ``det`` has JAX's custom jvp (a cofactor solve, right
for singular matrices too), ``slogdet`` and ``solve`` have custom jvps that
reuse the LU factors, ``pinv`` has the Golub-Pereyra rule.

Where minijax differs from JAX (the docs' differences page lists these):

* ``qr(mode="raw")`` raises NotImplementedError;
* ``svd(hermitian=True)`` computes the SVD of the symmetric part with the
  general SVD (JAX uses eigh; singular vectors may differ in sign);
* ``solve`` is a custom-jvp function rather than JAX's
  ``custom_linear_solve``, and row permutations are products with 0/1
  matrices rather than gathers: same values, different jaxprs.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from minijax import core, dtypes, lax
from minijax.custom_derivatives import custom_jvp
from minijax.lax import linalg as lax_linalg
from minijax.numpy import creation, reductions, shape_ops, sorting, tensor_contractions, ufuncs, ufuncs_math, util
from minijax.primitives.linalg import (
    conj_transpose as _H,
    diagonal as _diagonal,
    lu_solve as _lu_solve,
    matmul as _matmul,
    matrix_transpose as _T,
    permute_rows,
)
from minijax.stages import jit

ArrayLike = Any
Array = Any

__all__ = [
    "EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond", "cross", "det", "diagonal",
    "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
    "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
    "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm",
]  # fmt: skip


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# ---------------------------------------------------------------------------
# Helpers


def _arrays(name: str, *xs: ArrayLike) -> list[Array]:
    """JAX's ensure_arraylike: arrays and scalars only (no lists), as arrays."""
    util.check_arraylike(name, *xs)
    return [creation.asarray(x) for x in xs]


def _inexact(name: str, *xs: ArrayLike) -> list[Array]:
    """The operands as arrays of one inexact dtype (integers and bools promote to the default float)."""
    return util.promote_dtypes_inexact(*_arrays(name, *xs))


def _square(name: str, a: Array, what: str = "Argument to {name}() must have shape [..., n, n], got {shape}") -> None:
    shape = np.shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(what.format(name=name, shape=tuple(shape)))


def _eye_like(a: Array) -> Array:
    """The identity of a's matrix size and dtype, broadcast over a's batch axes."""
    n = np.shape(a)[-1]
    return lax.broadcast(creation.eye(n, dtype=a.dtype), tuple(np.shape(a)[:-2]))


# ---------------------------------------------------------------------------
# Decompositions


def cholesky(a: ArrayLike, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor of each (symmetric positive definite) matrix: L with A = L Lᵀ, or Lᵀ if ``upper``.

    NaN where the matrix is not positive definite.
    """
    (a,) = _inexact("jnp.linalg.cholesky", a)
    return _cholesky_jit(a, upper=bool(upper), symmetrize_input=bool(symmetrize_input))


def _cholesky_impl(a: Array, *, upper: bool, symmetrize_input: bool) -> Array:
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(factor) if upper else factor


_cholesky_impl.__name__ = "cholesky"
_cholesky_jit = jit(_cholesky_impl, static_argnames=("upper", "symmetrize_input"))


def _svd_impl(a: Array, *, full_matrices: bool, compute_uv: bool, hermitian: bool, subset_by_index: Any) -> Any:
    if hermitian:  # the SVD of the symmetric part (JAX gets it from eigh)
        a = lax_linalg.symmetrize(a)
    if compute_uv:
        u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True, subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False, subset_by_index=subset_by_index)


_svd_impl.__name__ = "svd"
_svd_jit = jit(_svd_impl, static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))


def svd(
    a: ArrayLike,
    full_matrices: bool = True,
    compute_uv: bool = True,
    hermitian: bool = False,
    subset_by_index: tuple[int, int] | None = None,
) -> Any:
    """(U, S, Vh) with a = U diag(S) Vh, S descending; S alone without ``compute_uv``.

    ``hermitian=True`` decomposes the symmetric part (a + aᵀ)/2.
    ``subset_by_index=(start, end)`` keeps singular values start..end-1
    (needs ``full_matrices=False``).
    """
    (a,) = _inexact("jnp.linalg.svd", a)
    subset = None if subset_by_index is None else (int(subset_by_index[0]), int(subset_by_index[1]))
    return _svd_jit(
        a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv), hermitian=bool(hermitian), subset_by_index=subset
    )


def svdvals(x: ArrayLike, /) -> Array:
    """The singular values of each matrix, in descending order."""
    (x,) = _arrays("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


def _qr_impl(a: Array, *, mode: str) -> Any:
    if mode == "raw":
        raise NotImplementedError("jnp.linalg.qr(mode='raw') (Householder reflectors) is not implemented in minijax.")
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
    if mode == "r":
        return r
    return QRResult(q, r)


_qr_impl.__name__ = "qr"
_qr_jit = jit(_qr_impl, static_argnames=("mode",))


def qr(a: ArrayLike, mode: str = "reduced") -> Any:
    """(Q, R) with a = Q R: ``mode`` "reduced" (k = min(m, n) columns), "complete" (square Q) or "r" (R alone)."""
    (a,) = _inexact("jnp.linalg.qr", a)
    return _qr_jit(a, mode=mode)


def _eigh_impl(a: Array, UPLO: str | None, symmetrize_input: bool) -> EighResult:  # noqa: N803 (NumPy's name)
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    (a,) = util.promote_dtypes_inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


_eigh_impl.__name__ = "eigh"
_eigh_jit = jit(_eigh_impl, static_argnames=("UPLO", "symmetrize_input"))


def eigh(a: ArrayLike, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:  # noqa: N803
    """(eigenvalues, eigenvectors) of symmetric matrices: ascending eigenvalues, eigenvectors in columns.

    ``symmetrize_input`` decomposes (a + aᵀ)/2; without it only the ``UPLO``
    triangle ("L" or "U") is read.
    """
    (a,) = _arrays("jnp.linalg.eigh", a)
    result: EighResult = _eigh_jit(a, UPLO, symmetrize_input=bool(symmetrize_input))
    return result


def _eigvalsh_impl(a: Array, UPLO: str | None, symmetrize_input: bool) -> Array:  # noqa: N803
    (a,) = util.promote_dtypes_inexact(a)
    w, _ = _eigh_jit(a, UPLO, symmetrize_input=symmetrize_input)
    return w


_eigvalsh_impl.__name__ = "eigvalsh"
_eigvalsh_jit = jit(_eigvalsh_impl, static_argnames=("UPLO", "symmetrize_input"))


def eigvalsh(a: ArrayLike, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Array:  # noqa: N803
    """The eigenvalues of symmetric matrices, ascending."""
    (a,) = _arrays("jnp.linalg.eigvalsh", a)
    return _eigvalsh_jit(a, UPLO, symmetrize_input=bool(symmetrize_input))


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


def eig(a: ArrayLike) -> EigResult:
    """(eigenvalues, eigenvectors) of general square matrices, both complex; eigenvectors in columns.

    Each eigenvector has unit 2-norm and its largest component real (LAPACK's geev).
    """
    (a,) = _arrays("jnp.linalg.eig", a)
    (a,) = util.promote_dtypes_inexact(a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def _eigvals_impl(a: Array) -> Array:
    (a,) = util.promote_dtypes_inexact(a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


_eigvals_impl.__name__ = "eigvals"
_eigvals_jit = jit(_eigvals_impl)


def eigvals(a: ArrayLike) -> Array:
    """The (complex) eigenvalues of general square matrices."""
    (a,) = _arrays("jnp.linalg.eigvals", a)
    return _eigvals_jit(a)


# ---------------------------------------------------------------------------
# Solves and inverses


def _lu_solve_rhs(lu: Array, permutation: Array, b: Array, vector: bool, trans: int = 0) -> Array:
    """A x = b from A's LU factors; b is (..., m) when ``vector``, else (..., m, k)."""
    if vector:
        return lax.squeeze(_lu_solve(lu, permutation, lax.expand_dims(b, (b.ndim,)), trans), (b.ndim,))
    return _lu_solve(lu, permutation, b, trans)


@custom_jvp
def _solve(a: Array, b: Array) -> Array:
    """x with a x = b, batch axes already broadcast; b has a's rank (matrix) or one less (vector)."""
    lu, _, permutation = lax_linalg.lu(a)
    return _lu_solve_rhs(lu, permutation, b, b.ndim == a.ndim - 1)


@_solve.defjvp
def _solve_jvp(primals: tuple[Array, Array], tangents: tuple[Array, Array]) -> tuple[Array, Array]:
    # d(A⁻¹ b) = A⁻¹ (ḃ - Ȧ x), with the one factorization of A.
    (a, b), (a_dot, b_dot) = primals, tangents
    vector = b.ndim == a.ndim - 1
    lu, _, permutation = lax_linalg.lu(a)
    x = _lu_solve_rhs(lu, permutation, b, vector)
    if vector:
        rhs = b_dot - lax.squeeze(_matmul(a_dot, lax.expand_dims(x, (x.ndim,))), (x.ndim,))
    else:
        rhs = b_dot - _matmul(a_dot, x)
    return x, _lu_solve_rhs(lu, permutation, rhs, vector)


def _solve_impl(a: Array, b: Array) -> Array:
    vector = b.ndim == 1
    # NumPy's broadcasting over the batch axes (gufunc "(m,m),(m)->(m)" or "(m,m),(m,n)->(m,n)").
    core_b = 1 if vector else 2
    batch = util.broadcast_shapes("solve", a.shape[:-2], b.shape[: b.ndim - core_b])
    a = shape_ops.broadcast_to(a, (*batch, *a.shape[-2:]))
    b = shape_ops.broadcast_to(b, (*batch, *b.shape[b.ndim - core_b :]))
    return _solve(a, b)


_solve_impl.__name__ = "solve"
_solve_jit = jit(_solve_impl)


def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """x with a @ x = b, for a square a: b is a vector (..., m) only when it is 1-D, else (..., m, n)."""
    a, b = _inexact("jnp.linalg.solve", a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={a.shape}")
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1] and a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this would have been treated as "
            "a batched 1-dimensional solve. To recover this behavior, use solve(a, b[..., None]).squeeze(-1)."
        )
    m = a.shape[-1]
    rows = b.shape[-1] if b.ndim == 1 else b.shape[-2]
    if a.shape[-2] != m or rows != m:
        raise ValueError(
            f"The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; "
            f"got a={a.shape} and b={b.shape}"
        )
    return _solve_jit(a, b)


def _inv_impl(a: Array) -> Array:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {a.shape}.")
    return solve(a, _eye_like(a))


_inv_impl.__name__ = "inv"
_inv_jit = jit(_inv_impl)


def inv(a: ArrayLike) -> Array:
    """The inverse of each square matrix (inf/NaN where singular)."""
    (a,) = _arrays("jnp.linalg.inv", a)
    return _inv_jit(a)


def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """The inverse of a tensor seen as a matrix: its first ``ind`` axes against the rest."""
    (arr,) = _arrays("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting, batch = arr.shape[:ind], arr.shape[ind:]
    flat = (core.shape_size(contracting), core.shape_size(batch))
    if flat[0] != flat[1]:
        raise ValueError(
            "tensorinv is only possible when the product of the first `ind` dimensions equals that of the "
            f"remaining dimensions. got arr.shape={arr.shape} with ind={ind}."
        )
    return inv(arr.reshape(flat)).reshape(*batch, *contracting)


def tensorsolve(a: ArrayLike, b: ArrayLike, axes: tuple[int, ...] | None = None) -> Array:
    """x with tensordot(a, x, x.ndim) = b."""
    a_arr, b_arr = _arrays("tensorsolve", a, b)
    if axes is not None:
        a_arr = shape_ops.moveaxis(a_arr, axes, len(axes) * (a_arr.ndim - 1,))
    out_shape = a_arr.shape[b_arr.ndim :]
    if a_arr.shape[: b_arr.ndim] != b_arr.shape:
        raise ValueError(
            "After moving axes to end, leading shape of a must match shape of b. "
            f"got a.shape={a_arr.shape}, b.shape={b_arr.shape}"
        )
    if b_arr.size != core.shape_size(out_shape):
        raise ValueError(
            "Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); "
            f"got a.shape={a_arr.shape}, b.ndim={b_arr.ndim}."
        )
    a_arr = a_arr.reshape(b_arr.size, core.shape_size(out_shape))
    return solve(a_arr, b_arr.ravel()).reshape(out_shape)


def _pinv_body(a: Array, rtol: Any, hermitian: bool) -> Array:
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return creation.zeros((*a.shape[:-2], n, m), a.dtype)
    if rtol is None:
        rtol = 10.0 * max(m, n) * creation.array(dtypes.finfo(a.dtype).eps)
    rtol = creation.asarray(rtol)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    # Singular values at or below rtol times the largest count as zero.
    rtol = lax.expand_dims(rtol[..., None], tuple(range(s.ndim - rtol.ndim - 1)))
    cutoff = rtol * s[..., 0:1]
    s = sorting.where(s > cutoff, s, np.inf).astype(u.dtype)
    res = tensor_contractions.matmul(_H(vh), ufuncs.divide(_H(u), s[..., None]), precision=lax.Precision.HIGHEST)
    return lax.convert_element_type(res, a.dtype)


def _pinv_jvp(rtol: Any, hermitian: bool, primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    # Golub and Pereyra (1973), "The differentiation of pseudo-inverses ...", as JAX.
    (a,), (a_dot,) = primals, tangents
    p = _pinv_body(a, rtol, hermitian)
    if hermitian:  # the SVD symmetrizes its input: so does the derivative
        a, a_dot = lax_linalg.symmetrize(a), lax_linalg.symmetrize(a_dot)
    m, n = a.shape[-2:]
    if m >= n:
        s = _matmul(_matmul(p, _H(p)), _H(a_dot))
        t = _matmul(_matmul(_H(a_dot), _H(p)), p)
        p_dot = -_matmul(_matmul(p, a_dot), p) + s - _matmul(_matmul(s, a), p) + t - _matmul(_matmul(p, a), t)
    else:
        s = _matmul(p, _matmul(_H(p), _H(a_dot)))
        t = _matmul(_H(a_dot), _matmul(_H(p), p))
        p_dot = -_matmul(p, _matmul(a_dot, p)) + s - _matmul(s, _matmul(a, p)) + t - _matmul(p, _matmul(a, t))
    return p, p_dot


def _pinv_call(a: Array, rtol: Any, hermitian: bool) -> Array:
    return _pinv_jit(a, rtol, hermitian=hermitian)


_pinv_body.__name__ = "_pinv"
_pinv_jit = jit(_pinv_body, static_argnames=("hermitian",))
_pinv_nondiff = custom_jvp(_pinv_call, nondiff_argnums=(1, 2))
_pinv_nondiff.defjvp(_pinv_jvp)


def pinv(a: ArrayLike, rtol: ArrayLike | None = None, hermitian: bool = False, *, rcond: ArrayLike | None = None) -> Array:
    """The Moore-Penrose pseudo-inverse, from the SVD.

    Singular values at or below ``rtol`` times the largest are treated as
    zero (default ``10 * max(m, n) * eps``); ``rcond`` is an alias of ``rtol``.
    """
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    (arr,) = _inexact("jnp.linalg.pinv", a)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.pinv requires an array of at least 2 dimensions; got shape {arr.shape}")
    out: Array = _pinv_nondiff(arr, rtol, bool(hermitian))
    return out


def _lstsq_impl(a: Array, b: Array, rcond: Any, numpy_resid: bool = False) -> tuple[Array, Array, Array, Array]:
    a, b = util.promote_dtypes_inexact(a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = b.ndim
    if b_orig_ndim == 1:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    dtype = a.dtype
    if a.size == 0:
        s = creation.zeros(0, dtype=a.dtype)
        rank = creation.array(0, dtype=int)
        x = creation.zeros((n, *b.shape[1:]), dtype=a.dtype)
    else:
        if rcond is None:
            rcond = float(dtypes.finfo(dtype).eps) * max(n, m)
        else:
            rcond = sorting.where(creation.asarray(rcond) < 0, dtypes.finfo(dtype).eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= creation.array(rcond, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = sorting.where(mask, s, 1).astype(a.dtype)
        s_inv = sorting.where(mask, 1 / safe_s, 0)[:, None]
        u_t_b = tensor_contractions.matmul(_H(u), b, precision=lax.Precision.HIGHEST)
        x = tensor_contractions.matmul(_H(vt), s_inv * u_t_b, precision=lax.Precision.HIGHEST)
    # NumPy returns empty residuals in some cases; under jit the full ones are returned always (as JAX).
    if numpy_resid and (rank < n or m <= n):
        resid = creation.asarray([])
    else:
        b_estimate = tensor_contractions.matmul(a, x, precision=lax.Precision.HIGHEST)
        resid = norm(b - b_estimate, axis=0) ** 2
    if b_orig_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


_lstsq_impl.__name__ = "_lstsq"
_lstsq_jit = jit(_lstsq_impl)


def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None, *, numpy_resid: bool = False) -> tuple[Array, Array, Array, Array]:
    """Least squares: (x, residuals, rank, singular values) minimizing |a x - b|, via the SVD.

    ``numpy_resid=True`` returns NumPy's (possibly empty) residuals, which
    needs concrete values (no jit).
    """
    a, b = _arrays("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq_impl(a, b, rcond, numpy_resid=True)
    result: tuple[Array, Array, Array, Array] = _lstsq_jit(a, b, rcond)
    return result


# ---------------------------------------------------------------------------
# Determinants


def _slogdet_small_value(a: Array) -> tuple[Array, Array]:
    n = a.shape[-1]
    if n == 1:
        det = a[..., 0, 0]
    else:
        det = a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    return ufuncs_math.sign(det), ufuncs_math.log(ufuncs.abs(det))


@custom_jvp
def _slogdet_small(a: Array) -> tuple[Array, Array]:
    """slogdet of 1x1 and 2x2 matrices from their closed forms."""
    return _slogdet_small_value(a)


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Any, Any]:
    (x,), (g,) = primals, tangents
    sign, ans = _slogdet_small_value(x)
    if x.shape[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        x00, x01, x10, x11 = x[..., 0, 0], x[..., 0, 1], x[..., 1, 0], x[..., 1, 1]
        det = x00 * x11 - x01 * x10
        ans_dot = (g[..., 0, 0] * x11 - g[..., 0, 1] * x10 - g[..., 1, 0] * x01 + g[..., 1, 1] * x00) / det
    if dtypes.issubdtype(ans_dot.dtype, np.complexfloating):  # the imaginary part turns the sign
        real_part = ufuncs_math.real(ans_dot)
        return (sign, ans), ((ans_dot - real_part.astype(ans_dot.dtype)) * sign, real_part)
    return (sign, ans), (creation.zeros_like(sign), ans_dot)


def _pivot_parity(pivots: Array) -> Array:
    """How many rows the LU pivots actually swapped."""
    iota = lax.expand_dims(creation.arange(pivots.shape[-1], dtype=pivots.dtype), tuple(range(pivots.ndim - 1)))
    return sorting.count_nonzero(pivots != iota, axis=-1)


def _slogdet_lu_value(a: Array) -> tuple[Array, Array]:
    dtype = a.dtype
    lu, pivots, _ = lax_linalg.lu(a)
    diag = _diagonal(lu)
    is_zero = reductions.any(diag == creation.array(0, dtype=dtype), axis=-1)
    if dtypes.issubdtype(dtype, np.complexfloating):  # cla (issue 19): the sign is the product of U's phases
        parity = _pivot_parity(pivots)
        abs_diag = ufuncs.abs(diag)
        phases = reductions.prod(diag / abs_diag.astype(dtype), axis=-1)
        sign = sorting.where(is_zero, creation.array(0, dtype=dtype), creation.array(-2 * (parity % 2) + 1, dtype=dtype) * phases)
        real = abs_diag.dtype
        logdet = sorting.where(is_zero, creation.array(-np.inf, dtype=real), reductions.sum(ufuncs_math.log(abs_diag), axis=-1))
        return sign, logdet
    parity = _pivot_parity(pivots) + sorting.count_nonzero(diag < 0, axis=-1)
    sign = sorting.where(is_zero, creation.array(0, dtype=dtype), creation.array(-2 * (parity % 2) + 1, dtype=dtype))
    logdet = sorting.where(is_zero, creation.array(-np.inf, dtype=dtype), reductions.sum(ufuncs_math.log(ufuncs.abs(diag)).astype(dtype), axis=-1))
    return sign, logdet


def _slogdet_qr_value(a: Array) -> tuple[Array, Array]:
    # |det A| = prod |R_ii|; det Q = ±1, read off Q's (well-conditioned) LU.
    q, r = lax_linalg.qr(a, full_matrices=False)
    r_diag = _diagonal(r)
    log_abs_det = reductions.sum(ufuncs_math.log(ufuncs.abs(r_diag)), axis=-1)
    q_sign, _ = _slogdet_lu_value(q)
    return q_sign * reductions.prod(ufuncs_math.sign(r_diag), axis=-1), log_abs_det


def _slogdet_jvp_common(value: Any) -> Any:
    def jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Any, Any]:
        # d log|det A| = trace(A⁻¹ Ȧ); the sign does not move.
        (x,), (g,) = primals, tangents
        sign, ans = value(x)
        # A plain LU solve (not the custom-jvp ``solve``): what touches the
        # tangent must be transposable for grad.
        lu, _, permutation = lax_linalg.lu(x)
        ans_dot = _trace_last(_lu_solve(lu, permutation, g))
        if dtypes.issubdtype(ans_dot.dtype, np.complexfloating):  # the imaginary part turns the sign
            real_part = ufuncs_math.real(ans_dot)
            return (sign, ans), ((ans_dot - real_part.astype(ans_dot.dtype)) * sign, real_part)
        return (sign, ans), (creation.zeros_like(sign), ans_dot)

    return jvp


@custom_jvp
def _slogdet_lu(a: Array) -> tuple[Array, Array]:
    return _slogdet_lu_value(a)


@custom_jvp
def _slogdet_qr(a: Array) -> tuple[Array, Array]:
    return _slogdet_qr_value(a)


_slogdet_lu.defjvp(_slogdet_jvp_common(_slogdet_lu_value))
_slogdet_qr.defjvp(_slogdet_jvp_common(_slogdet_qr_value))


def _slogdet_impl(a: Array, *, method: str | None) -> SlogdetResult:
    (a,) = util.promote_dtypes_inexact(a)
    _square("slogdet", a)
    if method is None or method == "lu":
        if a.shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(a))
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(a))
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'.")


_slogdet_impl.__name__ = "slogdet"
_slogdet_jit = jit(_slogdet_impl, static_argnames=("method",))


def slogdet(a: ArrayLike, *, method: str | None = None) -> SlogdetResult:
    """(sign, log|det|) of each square matrix: sign 0 and log|det| -inf when singular.

    ``method``: "lu" (the default, None) or "qr".
    """
    (a,) = _arrays("jnp.linalg.slogdet", a)
    result: SlogdetResult = _slogdet_jit(a, method=method)
    return result


def _cofactor_solve(a: Array, b: Array) -> tuple[Array, Array]:
    """(det a, adj(a) b): JAX's cofactor solve, defined for singular a as well.

    The LU factors give det(a) = sign * prod(diag U). Replacing U's last
    diagonal element by 1/(det(a) / U_nn) turns the solve with the factors
    into a multiplication by det(a) a⁻¹ = adj(a) that never divides by a
    zero pivot, as long as a has rank n - 1 or more; matrices of lower rank
    have a zero adjugate, and get it (the second filter).
    """
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    batch = tuple(np.broadcast_shapes(lu.shape[:-2], b.shape[:-2]))
    x = shape_ops.broadcast_to(b, (*batch, *b.shape[-2:]))
    lu = shape_ops.broadcast_to(lu, (*batch, *lu.shape[-2:]))
    diag = _diagonal(lu)
    sign = creation.asarray(-2 * (_pivot_parity(pivots) % 2) + 1, dtype=dtype)
    partial_det = sorting.cumprod(diag, axis=-1) * sign[..., None]
    # lu[..., -1, -1] = 1 / partial_det[..., -2], without a scatter.
    last = lax.broadcast(lax.bitwise_and(_iota_eq((n, n), n - 1, 0), _iota_eq((n, n), n - 1, 1)), batch)
    lu = sorting.where(last, (1.0 / partial_det[..., -2])[..., None, None], lu)
    permutation = shape_ops.broadcast_to(permutation, (*batch, n))
    # Matrices of rank below n - 1 have adj(a) = 0: find them from a solve with the modified factors.
    d = lax_linalg.triangular_solve(lu, creation.ones(x.shape[:-1], x.dtype), left_side=True, lower=False)
    d = reductions.any(ufuncs.isnan(d) | ufuncs_math.isinf(d), axis=-1)[..., None, None]
    x = sorting.where(d, creation.zeros_like(x), x)
    x = permute_rows(x, permutation)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = shape_ops.concatenate((x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]), axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = sorting.where(d, creation.zeros_like(x), x)
    return partial_det[..., -1], x


def _iota_eq(shape: tuple[int, int], value: int, dimension: int) -> Array:
    return lax.eq(lax.broadcasted_iota(np.int32, shape, dimension), np.int32(value))


@custom_jvp
def _det(a: Array) -> Array:
    sign, logdet = slogdet(a)
    return sign * ufuncs_math.exp(logdet).astype(sign.dtype)


@_det.defjvp
def _det_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    # d det(A) = trace(adj(A) Ȧ).
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, _trace_last(z)


def _det_impl(a: Array) -> Array:
    (a,) = util.promote_dtypes_inexact(a)
    shape = a.shape
    if len(shape) >= 2 and shape[-2:] == (2, 2):
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    if len(shape) >= 2 and shape[-2:] == (3, 3):
        return (
            a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
            + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
            - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
            - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2]
        )
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        return _det(a)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {shape}")


_det_impl.__name__ = "det"
_det_jit = jit(_det_impl)


def det(a: ArrayLike) -> Array:
    """The determinant of each square matrix (closed forms for 2x2 and 3x3, else from the LU factors)."""
    (a,) = _arrays("jnp.linalg.det", a)
    return _det_jit(a)


# ---------------------------------------------------------------------------
# Norms, rank, condition number


def _abs_squared(x: Array) -> Array:
    """|x|^2, real: x * x for real x (the same jaxpr), re(x * conj(x)) for complex x, as JAX's norms."""
    return ufuncs_math.real(x * ufuncs_math.conj(x))


def vector_norm(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False, ord: int | str = 2) -> Array:  # noqa: A002
    """The vector p-norm over ``axis`` (all axes by default): ord 2, inf, -inf, 0, 1 or any other number."""
    (x,) = _arrays("jnp.linalg.vector_norm", x)
    if ord is None or ord == 2:
        return ufuncs_math.sqrt(reductions.sum(_abs_squared(x), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return reductions.max(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return reductions.min(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        dtype = dtypes.finfo(x.dtype).dtype if dtypes.issubdtype(x.dtype, np.floating) else dtypes.canonicalize_dtype(np.float64)
        return reductions.sum(x != 0, dtype=dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    abs_x = ufuncs.abs(x)
    # The exponents are constants computed on the host in x's dtype (so they print as literals, as in JAX).
    p = np.asarray(ord, dtype=abs_x.dtype)
    return ufuncs.power(reductions.sum(abs_x**p, axis=axis, keepdims=keepdims), np.asarray(1.0, abs_x.dtype) / p)


def _norm_impl(x: Array, ord: Any, axis: Any, keepdims: bool) -> Array:  # noqa: A002
    (x,) = util.promote_dtypes_inexact(x)
    ndim = x.ndim
    if axis is None:
        if ord is None:  # NumPy accepts any rank here: the 2-norm of everything
            return ufuncs_math.sqrt(reductions.sum(_abs_squared(x), keepdims=keepdims))
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(util.canonicalize_axis(a, ndim) for a in axis)
    else:
        axis = (util.canonicalize_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(
            f"Improper number of axes for norm: axis={axis}. Pass one axis to compute a vector-norm, "
            "or two axes to compute a matrix-norm."
        )
    row_axis, col_axis = axis
    if ord is None or ord in ("f", "fro"):
        return ufuncs_math.sqrt(reductions.sum(_abs_squared(x), axis=axis, keepdims=keepdims))
    if ord in (1, -1):  # the largest/smallest column sum
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        sums = reductions.sum(ufuncs.abs(x), axis=row_axis, keepdims=keepdims)
        return reductions.max(sums, axis=col_axis, keepdims=keepdims, initial=0) if ord == 1 else reductions.min(sums, axis=col_axis, keepdims=keepdims)
    if ord in (np.inf, -np.inf):  # the largest/smallest row sum
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        sums = reductions.sum(ufuncs.abs(x), axis=col_axis, keepdims=keepdims)
        return reductions.max(sums, axis=row_axis, keepdims=keepdims, initial=0) if ord == np.inf else reductions.min(sums, axis=row_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        x = shape_ops.moveaxis(x, axis, (-2, -1))
        s = svd(x, compute_uv=False)
        if ord == 2:
            y = reductions.max(s, axis=-1, initial=0)
        elif ord == -2:
            y = reductions.min(s, axis=-1)
        else:
            y = reductions.sum(s, axis=-1)
        return shape_ops.expand_dims(y, axis) if keepdims else y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


_norm_impl.__name__ = "norm"
_norm_jit = jit(_norm_impl, static_argnames=("ord", "axis", "keepdims"))


def norm(x: ArrayLike, ord: int | str | None = None, axis: None | tuple[int, ...] | int = None, keepdims: bool = False) -> Array:  # noqa: A002
    """A vector norm (one axis) or a matrix norm (two axes), NumPy's ``ord`` values.

    Matrices: None/"fro" (Frobenius), "nuc", 1/-1 (column sums), inf/-inf
    (row sums), 2/-2 (largest/smallest singular value). Vectors: see
    ``vector_norm``.
    """
    (x,) = _arrays("jnp.linalg.norm", x)
    if isinstance(axis, list):
        axis = tuple(axis)
    return _norm_jit(x, ord=ord, axis=axis, keepdims=bool(keepdims))


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: str | int = "fro") -> Array:  # noqa: A002
    """The matrix norm over the last two axes."""
    (x,) = _arrays("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def _matrix_rank_impl(M: Array, rtol: Any, *, hermitian: bool) -> Array:  # noqa: N803 (NumPy's name)
    (M,) = util.promote_dtypes_inexact(M)
    if M.ndim < 2:
        return (M != 0).any().astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = s.max(-1) * np.array(max(M.shape[-2:]), dtype=s.dtype) * dtypes.finfo(s.dtype).eps
    rtol = shape_ops.expand_dims(rtol, np.ndim(rtol))
    return reductions.sum(s > rtol, axis=-1)


_matrix_rank_impl.__name__ = "matrix_rank"
_matrix_rank_jit = jit(_matrix_rank_impl, static_argnames=("hermitian",))


def matrix_rank(M: ArrayLike, rtol: ArrayLike | None = None, *, hermitian: bool = False, tol: ArrayLike | None = None) -> Array:  # noqa: N803
    """The number of singular values above ``rtol`` times the largest (default: max(m, n) * eps)."""
    (M,) = _arrays("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    return _matrix_rank_jit(M, rtol, hermitian=bool(hermitian))


def _cond_impl(x: Array, p: Any) -> Array:
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if x.shape[-2] != x.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; got arr.shape={x.shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    # NaN (from a singular matrix) becomes inf, unless x itself has NaNs.
    return sorting.where(ufuncs.isnan(r) & ~ufuncs.isnan(x).any(axis=(-2, -1)), np.inf, r)


_cond_impl.__name__ = "cond"
_cond_jit = jit(_cond_impl, static_argnames=("p",))


def cond(x: ArrayLike, p: Any = None) -> Array:
    """The condition number of each matrix in norm ``p`` (None/2: s_max/s_min)."""
    (arr,) = _arrays("cond", x)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={arr.shape}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got arr.shape={arr.shape}")
    return _cond_jit(arr, p=p)


# ---------------------------------------------------------------------------
# Products and re-exports


def _matrix_power_impl(a: Array, *, n: int) -> Array:
    if n == 0:
        return shape_ops.broadcast_to(creation.eye(a.shape[-2], dtype=a.dtype), a.shape)
    if n < 0:
        a = inv(a)
        n = abs(n)
    if n == 1:
        return a
    if n == 2:
        return a @ a
    if n == 3:
        return (a @ a) @ a
    z: Array | None = None
    result: Array | None = None
    while n > 0:  # binary powering: square z, multiply it in for each set bit
        z = a if z is None else z @ z
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else result @ z
    return result


_matrix_power_impl.__name__ = "matrix_power"
_matrix_power_jit = jit(_matrix_power_impl, static_argnames=("n",))


def matrix_power(a: ArrayLike, n: int) -> Array:
    """a raised to the integer power n by repeated squaring (negative n: powers of the inverse)."""
    (arr,) = _arrays("jnp.linalg.matrix_power", a)
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    return _matrix_power_jit(arr, n=n)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Each matrix transposed (the last two axes swapped)."""
    (x_arr,) = _arrays("jnp.linalg.matrix_transpose", x)
    if x_arr.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={x_arr.ndim}")
    return _T(x_arr)


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The outer product of two vectors."""
    x1, x2 = _arrays("jnp.linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim} x2.ndim={x2.ndim}")
    return x1[:, None] * x2[None, :]


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """The cross product of 3-vectors along ``axis`` (broadcasting the other axes)."""
    x1, x2 = _arrays("jnp.linalg.cross", x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"x1.shape[axis]={x1.shape[axis]} and x2.shape[axis]={x2.shape[axis]}"
        )
    a, b = util.promote_dtypes(shape_ops.moveaxis(x1, axis, -1), shape_ops.moveaxis(x2, axis, -1))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = shape_ops.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return shape_ops.moveaxis(c, -1, axis)


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """The dot product of vectors along ``axis``, broadcasting the other axes."""
    x1, x2 = _arrays("jnp.linalg.vecdot", x1, x2)
    n1, n2 = x1.ndim, x2.ndim
    a = shape_ops.moveaxis(x1, util.canonicalize_axis(axis, n1), -1)
    b = shape_ops.moveaxis(x2, util.canonicalize_axis(axis, n2), -1)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"vecdot: the vectors have different lengths, {a.shape[-1]} and {b.shape[-1]}.")
    batch = util.broadcast_shapes("vecdot", a.shape[:-1], b.shape[:-1])
    a, b = shape_ops.broadcast_to(a, (*batch, a.shape[-1])), shape_ops.broadcast_to(b, (*batch, b.shape[-1]))
    nb = len(batch)
    out = tensor_contractions.matmul(a[..., None, :], b[..., :, None], precision=precision, preferred_element_type=preferred_element_type)
    return lax.reshape(out, batch) if nb or out.ndim else out


def matmul(x1: ArrayLike, x2: ArrayLike, /, *, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """``jnp.matmul``."""
    x1, x2 = _arrays("jnp.linalg.matmul", x1, x2)
    return tensor_contractions.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(
    x1: ArrayLike, x2: ArrayLike, /, *, axes: Any = 2, precision: Any = None, preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Array:  # fmt: skip
    """``jnp.tensordot`` (``out_sharding`` must be None: minijax has no shardings)."""
    if out_sharding is not None:
        raise NotImplementedError(f"jnp.linalg.tensordot: minijax has no shardings; pass out_sharding=None (got {out_sharding!r}).")
    x1, x2 = _arrays("jnp.linalg.tensordot", x1, x2)
    return tensor_contractions.tensordot(x1, x2, axes=axes, precision=precision, preferred_element_type=preferred_element_type)


def _diagonal_offset(x: Array, offset: int) -> Array:
    """The diagonal ``offset`` of each matrix (above the main one when positive)."""
    n, m = x.shape[-2:]
    if offset >= 0:
        x = x[..., :, offset:] if offset < m else x[..., :, m:]
    else:
        x = x[..., -offset:, :] if -offset < n else x[..., n:, :]
    return _diagonal(x)


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """The diagonal ``offset`` of each matrix (the last two axes)."""
    (x,) = _arrays("jnp.linalg.diagonal", x)
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.diagonal requires an array of at least 2 dimensions; got shape {x.shape}")
    return _diagonal_offset(x, operator.index(offset))


def _trace_last(x: Array) -> Array:
    return reductions.sum(_diagonal(x), axis=-1)


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """The sum of diagonal ``offset`` of each matrix."""
    (x,) = _arrays("jnp.linalg.trace", x)
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.trace requires an array of at least 2 dimensions; got shape {x.shape}")
    return reductions.sum(_diagonal_offset(x, operator.index(offset)), axis=-1, dtype=dtype)


def _chain_order(dims: Sequence[int]) -> list[list[int]]:
    """Where to split each sub-chain i..j of a matrix chain with sizes ``dims`` for the fewest flops (dynamic programming)."""
    n = len(dims) - 1
    cost = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays: Sequence[ArrayLike], *, precision: Any = None) -> Array:
    """The product of a chain of matrices, in the order that costs the fewest flops.

    The first and last arrays may be vectors (1-D).
    """
    arrs = _arrays("jnp.linalg.multi_dot", *arrays)
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2) and all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError(
            "multi_dot: input arrays must all be two-dimensional, except for the first and last array which may be "
            f"1 or 2 dimensional. Got array shapes {[a.shape for a in arrs]}"
        )
    if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError(
            "multi_dot: last dimension of each array must match first dimension of following array. "
            f"Got array shapes {[a.shape for a in arrs]}"
        )
    first_vector, last_vector = arrs[0].ndim == 1, arrs[-1].ndim == 1
    mats = list(arrs)
    if first_vector:
        mats[0] = mats[0][None, :]
    if last_vector:
        mats[-1] = mats[-1][:, None]
    split = _chain_order([mats[0].shape[0], *(a.shape[1] for a in mats)])

    def product(i: int, j: int) -> Array:
        if i == j:
            return mats[i]
        k = split[i][j]
        return tensor_contractions.matmul(product(i, k), product(k + 1, j), precision=precision)

    out = product(0, len(mats) - 1)
    if first_vector:
        out = out[0]
    if last_vector:
        out = out[..., 0]
    return out
