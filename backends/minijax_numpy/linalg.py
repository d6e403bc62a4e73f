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
    """x in the dtype LAPACK computes it in: float32, float64, complex64 or complex128."""
    return x if x.dtype in (np.float32, np.float64, np.complex64, np.complex128) else x.astype(_F32)


def _real(dtype: Any) -> Any:
    """The dtype of the real part (complex64 -> float32; real dtypes stay)."""
    return np.finfo(dtype).dtype if np.dtype(dtype).kind == "c" else dtype


def _read_triangle(x: Array, lower: bool) -> Array:
    """The symmetric (Hermitian, for complex x) matrices built from the triangle of x a routine reads;
    LAPACK reads only the real part of a Hermitian matrix's diagonal."""
    def mirror(t: Array) -> Array:
        return np.conj(np.swapaxes(t, -1, -2))

    if lower:
        out = np.tril(x) + mirror(np.tril(x, -1))
    else:
        out = np.triu(x) + mirror(np.triu(x, 1))
    if x.dtype.kind == "c":
        n = x.shape[-1]
        out[..., range(n), range(n)] = out[..., range(n), range(n)].real
    return out


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
    if conjugate_a:
        t = np.conj(t)
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
            # The pivot: the first row (from j down) with the largest magnitude in column j; for complex
            # entries LAPACK's magnitude is |re| + |im| (izamax).
            column = a[:, j:, j]
            p = j + np.argmax(np.abs(column.real) + np.abs(column.imag) if column.dtype.kind == "c" else np.abs(column), axis=1)
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
    return [_columns(v, subset_by_index).astype(x.dtype), _columns(w, subset_by_index).astype(_real(x.dtype))]


@impl("svd")
def svd(x: Array, *, full_matrices: bool, compute_uv: bool, subset_by_index: Any, algorithm: Any) -> list[Array]:
    work = _working(x)
    bad = ~_finite_matrices(work)
    work = np.where(bad[..., None, None], 0, work)
    if not compute_uv:
        (s,), failed = _per_matrix(lambda m: (np.linalg.svd(m, compute_uv=False),), work, 1)
        (s,) = _nan_where_failed([s], failed | bad)
        return [_columns(s, subset_by_index).astype(_real(x.dtype))]
    (u, s, vt), failed = _per_matrix(lambda m: np.linalg.svd(m, full_matrices=full_matrices), work, 3)
    u, s, vt = _nan_where_failed([u, s, vt], failed | bad)
    if subset_by_index is not None:
        start, end = subset_by_index
        s, u, vt = s[..., start:end], u[..., start:end], vt[..., start:end, :]
    return [s.astype(_real(x.dtype)), u.astype(x.dtype), vt.astype(x.dtype)]


# ---------------------------------------------------------------------------
# eig: numpy.linalg.eig calls LAPACK's geev, as XLA does, so the eigenvalues
# come in the same order and each right eigenvector has geev's normalisation
# (unit 2-norm, largest component real). NumPy has no left eigenvectors: they
# are the rows of V⁻¹, conjugated and normalised the same way.


def _normalise_columns(v: Array) -> Array:
    """Each column scaled to unit 2-norm with its largest-magnitude component real and positive."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    k = np.argmax(np.abs(v), axis=-2)[..., None, :]
    largest = np.take_along_axis(v, k, axis=-2)
    phase = np.where(largest == 0, 1, np.conj(largest) / np.where(largest == 0, 1, np.abs(largest)))
    return np.asarray(v * phase)


@impl("eig")
def eig(
    x: Array, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
    implementation: Any,
) -> list[Array]:
    out_dtype = np.result_type(x.dtype, np.complex64)
    if x.size == 0:
        count = 1 + int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
        return [np.zeros(x.shape[:-1], out_dtype)] + [np.zeros(x.shape, out_dtype)] * (count - 1)
    work = _working(x)
    bad = ~_finite_matrices(work)
    work = np.where(bad[..., None, None], 0, work)
    (w, vr), failed = _per_matrix(np.linalg.eig, work, 2)
    w, vr = w.astype(out_dtype), vr.astype(out_dtype)
    results = [w]
    if compute_left_eigenvectors:
        with np.errstate(all="ignore"):
            try:
                inverse = np.linalg.inv(vr)
            except np.linalg.LinAlgError:  # a defective matrix: its left eigenvectors are not defined
                inverse = np.full_like(vr, np.nan)
            vl = _normalise_columns(np.conj(np.swapaxes(inverse, -1, -2)))
        results.append(vl.astype(out_dtype))
    if compute_right_eigenvectors:
        results.append(vr)
    return [r.astype(out_dtype) for r in _nan_where_failed(results, failed | bad)]


# ---------------------------------------------------------------------------
# The Householder family (LAPACK's orgqr/ungqr, ormqr/unmqr, gehrd, sytrd/hetrd),
# written out. A reflector H = I - tau v vᴴ has v[0] = 1; the rest of v is
# stored in the matrix, below (or above) the entry it leaves behind. For real
# matrices vᴴ = vᵀ; for complex ones tau is complex and Hᴴ = I - conj(tau) v vᴴ
# (LAPACK's zlarfg/zlarf conventions). Every loop runs over the columns and is
# vectorized over the (flattened) batch.


def _flat(x: Array, core: int) -> Array:
    """x with its batch axes flattened into one leading axis, as float64 or complex128 (a copy)."""
    work = np.complex128 if x.dtype.kind == "c" else np.float64
    return np.array(x, dtype=work).reshape((shape_size(x.shape[: x.ndim - core]), *x.shape[x.ndim - core :]))


def _larfg(alpha: Array, x: Array) -> tuple[Array, Array, Array]:
    """LAPACK's larfg (zlarfg for complex) for a batch: (beta, tau, v) with Hᴴ [alpha, x] = [beta, 0, ..., 0].

    H = I - tau [1, v] [1, v]ᴴ; beta is real, -sign(Re alpha) ‖[alpha, x]‖;
    tau = (beta - Re alpha)/beta - i Im alpha/beta and v = x / (alpha - beta).
    Where x is zero and alpha real, tau = 0 and H = I (beta = alpha).
    """
    xnorm = np.sqrt(np.sum(np.abs(x) ** 2, axis=-1))
    re, im = alpha.real, alpha.imag
    trivial = (xnorm == 0) & (im == 0)
    beta = -np.where(re >= 0, 1.0, -1.0) * np.sqrt(re**2 + im**2 + xnorm**2)
    safe_beta = np.where(trivial, 1.0, beta)
    tau = (beta - re) / safe_beta
    if alpha.dtype.kind == "c":
        tau = tau - 1j * im / safe_beta
    tau = np.where(trivial, 0, tau)
    scale = np.where(trivial, 0, 1 / np.where(trivial, 1, alpha - beta))
    return np.where(trivial, alpha, beta), tau, x * scale[:, None]


def _reflect_left(c: Array, v: Array, tau: Array) -> Array:
    """(I - tau v vᴴ) c for a batch: c (B, m, k), v (B, m), tau (B,)."""
    return np.asarray(c - tau[:, None, None] * v[:, :, None] * np.einsum("bm,bmk->bk", np.conj(v), c)[:, None, :])


def _reflect_right(c: Array, v: Array, tau: Array) -> Array:
    """c (I - tau v vᴴ) for a batch: c (B, k, m), v (B, m), tau (B,)."""
    return np.asarray(c - tau[:, None, None] * np.einsum("bkm,bm->bk", c, v)[:, :, None] * np.conj(v)[:, None, :])


def _reflector(a: Array, i: int) -> Array:
    """The vector of reflector i stored in column i of a (B, m, n): zero above row i, 1 at row i."""
    v = np.zeros(a.shape[:2], a.dtype)
    v[:, i] = 1
    v[:, i + 1 :] = a[:, i + 1 :, i]
    return v


def _with_one(v_tail: Array) -> Array:
    """[1, v_tail] for a batch of reflector tails."""
    return np.concatenate([np.ones((v_tail.shape[0], 1), v_tail.dtype), v_tail], axis=1)


@impl("householder_product")
def householder_product(a: Array, taus: Array) -> Array:
    *batch, m, n = a.shape
    work, tau = _flat(a, 2), _flat(taus, 1)
    q = np.broadcast_to(np.eye(m, n, dtype=work.dtype), work.shape).copy()
    for i in reversed(range(tau.shape[-1])):  # Q = H(0) H(1) ... H(k-1), applied to I from the right end
        q = _reflect_left(q, _reflector(work, i), tau[:, i])
    return q.reshape(a.shape).astype(a.dtype)


@impl("ormqr")
def ormqr(a: Array, taus: Array, c: Array, *, left: bool, transpose: bool) -> Array:
    work, tau, out = _flat(a, 2), _flat(taus, 1), _flat(c, 2)
    k = tau.shape[-1]
    # Q C applies H(k-1) first; Qᴴ C applies H(0)ᴴ first; C Q applies H(0) first; C Qᴴ applies H(k-1)ᴴ first.
    order = range(k) if left == transpose else reversed(range(k))
    if transpose:  # "transpose" is the conjugate transpose for complex matrices: H(i)ᴴ has conj(tau)
        tau = np.conj(tau)
    for i in order:
        v = _reflector(work, i)
        out = _reflect_left(out, v, tau[:, i]) if left else _reflect_right(out, v, tau[:, i])
    return out.reshape(c.shape).astype(c.dtype)


@impl("hessenberg")
def hessenberg(a: Array) -> list[Array]:
    *batch, n, _ = a.shape
    h = _flat(a, 2)
    taus = np.zeros((h.shape[0], n - 1), h.dtype)
    for j in range(n - 1):
        # Reflector j zeroes column j below the subdiagonal: H = H(j)ᴴ H H(j) on rows (and columns) j+1 onwards.
        beta, tau, v_tail = _larfg(h[:, j + 1, j], h[:, j + 2 :, j])
        v = _with_one(v_tail)
        h[:, :, j + 1 :] = _reflect_right(h[:, :, j + 1 :], v, tau)
        h[:, j + 1 :, j + 1 :] = _reflect_left(h[:, j + 1 :, j + 1 :], v, np.conj(tau))
        h[:, j + 1, j] = beta
        h[:, j + 2 :, j] = v_tail
        taus[:, j] = tau
    return [h.reshape(a.shape).astype(a.dtype), taus.reshape((*batch, n - 1)).astype(a.dtype)]


def _tridiagonal_lower(x: Array) -> tuple[Array, Array, Array, Array]:
    """sytrd (hetrd) on the lower triangle of each matrix of x (B, n, n), read as symmetric (Hermitian)."""
    count, n, _ = x.shape
    a = _read_triangle(x, lower=True)
    e, taus = np.zeros((count, n - 1)), np.zeros((count, n - 1), a.dtype)
    diagonal = (slice(None), range(n), range(n))
    for i in range(n - 1):
        beta, tau, v_tail = _larfg(a[:, i + 1, i], a[:, i + 2 :, i])
        v = _with_one(v_tail)
        block = a[:, i + 1 :, i + 1 :]
        a[:, i + 1 :, i + 1 :] = _reflect_right(_reflect_left(block, v, np.conj(tau)), v, tau)
        a[diagonal] = a[diagonal].real  # a Hermitian matrix's diagonal stays real, as LAPACK's her2 keeps it
        a[:, i + 1, i], a[:, i, i + 1] = beta, beta
        a[:, i + 2 :, i] = v_tail
        e[:, i], taus[:, i] = beta.real, tau
    d = np.diagonal(a, axis1=-2, axis2=-1).real.copy()
    return np.tril(a) + np.triu(x, 1), d, e, taus


@impl("tridiagonal")
def tridiagonal(a: Array, *, lower: bool) -> list[Array]:
    *batch, n, _ = a.shape
    x = _flat(a, 2)
    if lower:
        out, d, e, taus = _tridiagonal_lower(x)
    else:
        # The upper case is the lower one on the matrix with rows and columns in reverse order (which
        # swaps the triangles and keeps a Hermitian matrix Hermitian): LAPACK's upper sytrd/hetrd
        # eliminates from the last column back, with the reflectors' 1 at their last entry.
        out, d, e, taus = _tridiagonal_lower(x[:, ::-1, ::-1].copy())
        out = out[:, ::-1, ::-1]
        d, e, taus = d[:, ::-1], e[:, ::-1], taus[:, ::-1]
    vec = (*batch, n - 1)
    real = np.finfo(a.dtype).dtype if a.dtype.kind == "c" else a.dtype
    return [
        out.reshape(a.shape).astype(a.dtype), d.reshape((*batch, n)).astype(real),
        e.reshape(vec).astype(real), taus.reshape(vec).astype(a.dtype),
    ]  # fmt: skip


# ---------------------------------------------------------------------------
# symmetric_product, cholesky_update, tridiagonal_solve


@impl("symmetric_product")
def symmetric_product(a: Array, c: Array, *, alpha: Any, beta: Any) -> Array:
    work = a.astype(np.float64)
    out = alpha * (work @ np.swapaxes(work, -1, -2)) + beta * c.astype(np.float64)
    return np.asarray(out, dtype=c.dtype)


@impl("cholesky_update")
def cholesky_update(r: Array, w: Array) -> Array:
    """Givens rotations fold w into R one row at a time (R stays upper triangular)."""
    out, z = r.astype(np.float64), w.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(z.shape[0]):
            x, y = out[k, k], z[k]
            if y == 0:
                c, s = 1.0, 0.0
            else:
                scale = max(abs(x), abs(y))
                radius = np.hypot(x / scale, y / scale)
                c, s = x / scale / radius, -y / scale / radius
            out[k, :], z = c * out[k, :] - s * z, c * z + s * out[k, :]
    return out.astype(r.dtype)


@impl("tridiagonal_solve")
def tridiagonal_solve(dl: Array, d: Array, du: Array, b: Array, *, perturb_singular: bool) -> Array:
    """LAPACK's gtsv: Gaussian elimination with partial pivoting, which fills in a second superdiagonal.

    Where a pivot is exactly zero (a singular matrix) LAPACK stops: that
    system's solution is NaN.
    """
    if perturb_singular:
        return _tridiagonal_solve_perturbed(dl, d, du, b)
    *batch, m, k = b.shape
    # Complex systems (zgtsv) in complex128, pivoting on |re| + |im| as LAPACK does.
    work = np.complex128 if b.dtype.kind == "c" else np.float64

    def flat(x: Array, core: int) -> Array:
        return np.array(x, dtype=work).reshape((shape_size(x.shape[: x.ndim - core]), *x.shape[x.ndim - core :]))

    def size(x: Array) -> Array:
        return np.asarray(np.abs(x.real) + np.abs(x.imag))

    lower, diag, upper = flat(dl, 1)[:, 1:], flat(d, 1), flat(du, 1)  # LAPACK's DL is dl[1:]
    rhs = flat(b, 2)
    count = rhs.shape[0]
    upper2 = np.zeros((count, max(m - 2, 0)), work)  # the fill-in: A[i, i+2] after a row swap
    failed = np.zeros(count, np.bool_)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in range(m - 1):
            swap = size(diag[:, i]) < size(lower[:, i])
            failed |= ~swap & (diag[:, i] == 0)
            # Without a swap: eliminate row i+1 with row i.
            fact = lower[:, i] / np.where(swap, 1, diag[:, i])
            keep_next = diag[:, i + 1] - fact * upper[:, i]
            keep_rhs = rhs[:, i + 1] - fact[:, None] * rhs[:, i]
            # With a swap: row i+1 becomes the pivot row.
            sfact = diag[:, i] / np.where(swap, lower[:, i], 1)
            next_upper = upper[:, i + 1] if i + 1 < m - 1 else np.zeros(count, work)
            swap_next = upper[:, i] - sfact * diag[:, i + 1]
            swap_rhs = rhs[:, i] - sfact[:, None] * rhs[:, i + 1]
            new_row_i = np.where(swap[:, None], rhs[:, i + 1], rhs[:, i])
            rhs[:, i + 1] = np.where(swap[:, None], swap_rhs, keep_rhs)
            rhs[:, i] = new_row_i
            new_upper_i = np.where(swap, diag[:, i + 1], upper[:, i])
            diag[:, i] = np.where(swap, lower[:, i], diag[:, i])
            diag[:, i + 1] = np.where(swap, swap_next, keep_next)
            upper[:, i] = new_upper_i
            if i + 1 < m - 1:
                upper2[:, i] = np.where(swap, next_upper, 0)
                upper[:, i + 1] = np.where(swap, -sfact * next_upper, upper[:, i + 1])
        if m:
            failed |= diag[:, m - 1] == 0
        x = np.zeros_like(rhs)
        for i in reversed(range(m)):
            acc = rhs[:, i].copy()
            if i + 1 < m:
                acc -= upper[:, i, None] * x[:, i + 1]
            if i + 2 < m:
                acc -= upper2[:, i, None] * x[:, i + 2]
            x[:, i] = acc / diag[:, i, None]
    x[failed] = np.nan
    return x.reshape(b.shape).astype(b.dtype)


def _flush(v: Any) -> Any:
    """v with subnormals read as zero (of v's sign): the kernel runs on XLA's CPU threads, which flush
    subnormal operands and results to zero (FTZ/DAZ)."""
    t = np.asarray(v).dtype.type
    if np.asarray(v).dtype.kind == "c":  # the real and imaginary parts are flushed each on its own
        out = np.empty(np.shape(v), t)
        out.real, out.imag = _flush(np.real(v)), _flush(np.imag(v))  # (x + 1j*y would lose y's -0.0)
        return out if np.ndim(v) else out[()]
    out = np.where(np.abs(v) < np.finfo(t).tiny, np.asarray(v) * t(0), v).astype(t)
    return out if np.ndim(v) else t(out)


def _perturb_pivot(perturb: Any, pivot: Any, row: Array) -> tuple[Any, Array]:
    """A pivot below 1 in magnitude that would overflow ``row / pivot`` is pushed away from zero (by
    ``perturb``, doubling each time) or, when it is subnormal but nonzero, ``row`` and it are scaled up
    (LAPACK's safe minimum, as jaxlib's kernel; with subnormals flushed that branch is never taken).
    A complex pivot is measured by its modulus and moved along the real axis (the sign of its real part)."""
    t = type(pivot)
    r = np.finfo(t).dtype.type  # the real type of the magnitudes (t itself for real pivots)
    one = r(1)
    safemin = r(np.finfo(t).tiny)  # LAPACK's xLAMCH('S'): 1/max < tiny for IEEE floats
    bignum = one / safemin
    if abs(pivot) >= one:
        return pivot, row
    perturb = r(np.copysign(max(abs(perturb), safemin), np.real(pivot)))
    largest = r(np.max(np.abs(row))) if row.size else r(0)
    while abs(pivot) < one:
        if abs(pivot) < safemin:
            if pivot == 0 or largest * safemin > abs(pivot):
                pivot, perturb = _flush(t(pivot + perturb)), _flush(r(perturb * 2))
            else:
                return _flush(t(pivot * bignum)), _flush(row * bignum)
        elif largest > abs(pivot) * bignum:
            pivot, perturb = _flush(t(pivot + perturb)), _flush(r(perturb * 2))
        else:
            break
    return pivot, row


def _tridiagonal_solve_perturbed(dl: Array, d: Array, du: Array, b: Array) -> Array:
    """jaxlib's ``tridiagonal_solve_perturbed_ffi`` (what JAX runs on CPU for ``perturb_singular=True``):
    Gaussian elimination with partial pivoting, row by row in the working precision, then back
    substitution in which a pivot small enough to overflow is perturbed by about eps * max|U|, so a
    singular system gets a finite (large) solution instead of NaN. Every stored value is flushed as
    the kernel's subnormals are (``_flush``)."""
    *batch, m, k = b.shape
    work = _working(b).dtype.type
    real = np.finfo(work).dtype.type  # the scales and the perturbation are real for complex systems too
    # The batch's size spelled out, not -1: with no right-hand sides (k == 0) or no rows, -1 is ambiguous.
    n = shape_size(tuple(batch))
    lower, diag, upper = (_flush(np.asarray(v, work).reshape(n, m)) for v in (dl, d, du))
    rhs_all = _flush(np.asarray(b, work).reshape(n, m, k))
    out = np.zeros_like(rhs_all)
    eps = real(np.finfo(work).eps)
    zero = work(0)
    f = _flush
    with np.errstate(all="ignore"):
        for n_, (sub, dia, sup, rhs) in enumerate(zip(lower, diag, upper, rhs_all)):
            x = out[n_]
            if m == 0:
                continue
            if m == 1:
                p, row = _perturb_pivot(f(eps * abs(dia[0])), dia[0], rhs[0].copy())
                x[0] = f(row / p)
                continue
            u = np.zeros((m, 3), work)  # U's diagonal and two superdiagonals
            u[0, 0], u[0, 1] = dia[0], sup[0]
            max_u = max(abs(u[0, 0]), abs(u[0, 1]))
            scale1 = f(real(abs(u[0, 0]) + abs(u[0, 1])))
            x[0] = rhs[0]
            for i in range(m - 1):
                u[i + 1, 0] = dia[i + 1]
                scale2 = f(real(abs(sub[i + 1]) + abs(u[i + 1, 0])))
                if i < m - 2:
                    scale2 = f(real(scale2 + abs(sup[i + 1])))
                if sub[i + 1] == 0:
                    scale1 = scale2
                    u[i + 1, 1], u[i, 2] = sup[i + 1], zero
                    x[i + 1] = rhs[i + 1]
                else:
                    piv1 = real(0) if u[i, 0] == 0 else f(real(abs(u[i, 0]) / scale1))
                    piv2 = f(real(abs(sub[i + 1]) / scale2))
                    if piv2 <= piv1:  # no row exchange
                        scale1 = scale2
                        factor = f(work(sub[i + 1] / u[i, 0]))
                        u[i + 1, 0] = f(u[i + 1, 0] - f(factor * u[i, 1]))
                        u[i + 1, 1], u[i, 2] = sup[i + 1], zero
                        x[i + 1] = f(rhs[i + 1] - f(factor * x[i]))
                    else:  # rows i and i+1 exchanged
                        factor = f(work(u[i, 0] / sub[i + 1]))
                        previous_super = u[i, 1]
                        u[i, 0] = sub[i + 1]
                        u[i + 1, 0] = f(previous_super - f(factor * dia[i + 1]))
                        u[i, 1] = dia[i + 1]
                        if i < m - 2:
                            u[i, 2] = sup[i + 1]
                            u[i + 1, 1] = f(-factor * sup[i + 1])
                        x[i + 1] = f(x[i] - f(factor * rhs[i + 1]))
                        x[i] = rhs[i + 1]
                        scale1 = f(real(abs(u[i + 1, 0]) + abs(u[i + 1, 1])))
                if i < m - 2:
                    max_u = max(max_u, *np.abs(u[i]))
            max_u = max(max_u, abs(u[m - 1, 0]))
            perturb = f(real(eps * max_u))
            for i in reversed(range(m)):
                row = x[i].copy()
                if i + 1 < m:
                    row = f(row - f(u[i, 1] * x[i + 1]))
                if i + 2 < m:
                    row = f(row - f(u[i, 2] * x[i + 2]))
                p, row = _perturb_pivot(perturb, u[i, 0], row)
                x[i] = f(row * f(work(1) / p))
    result: Array = out.reshape(b.shape).astype(b.dtype)
    return result


# ---------------------------------------------------------------------------
# schur: Hessenberg reduction, then Francis double-shift QR steps with
# deflation (Golub and Van Loan, "Matrix Computations", algorithms 7.5.1-2),
# and each 2×2 diagonal block put in standard form as LAPACK's lanv2 does
# (upper triangular for real eigenvalues, equal diagonal for a complex pair).
# The decomposition is unique only up to the order of the eigenvalues along
# the diagonal and the signs of Q's columns: LAPACK's hseqr may order them
# otherwise (spec/primitives/linalg.md, schur).


def _house(x: Array) -> tuple[Array, float]:
    """(v, beta) with (I - beta v vᵀ) x a multiple of e1 (v[0] = 1)."""
    sigma = float(x[1:] @ x[1:])
    v = x.astype(np.float64).copy()
    if sigma == 0:
        v[0] = 1
        return v, 0.0
    mu = np.sqrt(x[0] ** 2 + sigma)
    v0 = x[0] - mu if x[0] <= 0 else -sigma / (x[0] + mu)
    beta = 2 * v0**2 / (sigma + v0**2)
    v[0] = v0
    return v / v0, float(beta)


def _francis_step(h: Array, z: Array, lo: int, hi: int, s: float, t: float) -> None:
    """One implicit double-shift QR step on the active block h[lo:hi+1, lo:hi+1] (in place).

    The shifts are the roots of x² - s x + t. The similarity is applied to
    the whole of h (the rows above and the columns right of the block too),
    and accumulated into z.
    """
    n = h.shape[0]
    x = h[lo, lo] ** 2 + h[lo, lo + 1] * h[lo + 1, lo] - s * h[lo, lo] + t
    y = h[lo + 1, lo] * (h[lo, lo] + h[lo + 1, lo + 1] - s)
    w = h[lo + 1, lo] * h[lo + 2, lo + 1]
    for k in range(lo, hi - 1):
        v, beta = _house(np.array([x, y, w]))
        rows = slice(k, k + 3)
        first = max(lo, k - 1)
        h[rows, first:n] -= beta * np.outer(v, v @ h[rows, first:n])
        last = min(k + 3, hi)
        h[: last + 1, rows] -= beta * np.outer(h[: last + 1, rows] @ v, v)
        z[:, rows] -= beta * np.outer(z[:, rows] @ v, v)
        x, y = h[k + 1, k], h[k + 2, k]
        if k < hi - 2:
            w = h[k + 3, k]
    v, beta = _house(np.array([x, y]))
    rows = slice(hi - 1, hi + 1)
    h[rows, hi - 2 : n] -= beta * np.outer(v, v @ h[rows, hi - 2 : n])
    h[: hi + 1, rows] -= beta * np.outer(h[: hi + 1, rows] @ v, v)
    z[:, rows] -= beta * np.outer(z[:, rows] @ v, v)


def _standardize_block(h: Array, z: Array, i: int) -> None:
    """Rotate the 2×2 block at rows/columns (i, i+1) into LAPACK's standard form (in place)."""
    a, b, c, d = h[i, i], h[i, i + 1], h[i + 1, i], h[i + 1, i + 1]
    if c == 0:
        return
    p = (a - d) / 2
    discriminant = p * p + b * c
    if discriminant >= 0:  # real eigenvalues: the first basis vector is an eigenvector
        root = np.sqrt(discriminant)
        shift = p + (root if p >= 0 else -root)  # the eigenvalue farther from d, less d
        radius = np.hypot(shift, c)
        cs, sn = shift / radius, c / radius
    else:  # a complex pair: rotate to equal diagonal entries
        sigma = b + c
        radius = np.hypot(sigma, a - d)
        if radius == 0:
            return
        cs = np.sqrt(0.5 * (1 + abs(sigma) / radius))
        sn = -(p / (radius * cs)) * (1.0 if sigma >= 0 else -1.0)
    g = np.array([[cs, -sn], [sn, cs]])
    pair = slice(i, i + 2)
    h[pair, :] = g.T @ h[pair, :]
    h[:, pair] = h[:, pair] @ g
    z[:, pair] = z[:, pair] @ g
    if discriminant >= 0:
        h[i + 1, i] = 0
    else:
        h[i, i] = h[i + 1, i + 1] = (h[i, i] + h[i + 1, i + 1]) / 2


def _active_block_start(h: Array, hi: int, eps: float) -> int:
    """Where the unreduced block of Hessenberg ``h`` ending at row ``hi`` starts: the first
    negligible subdiagonal entry above it (set to 0), or row 0 (the QR iterations' deflation)."""
    lo = hi
    while lo > 0:
        scale = abs(h[lo - 1, lo - 1]) + abs(h[lo, lo])
        if abs(h[lo, lo - 1]) <= eps * (scale if scale else np.abs(h).max()):
            h[lo, lo - 1] = 0
            break
        lo -= 1
    return lo

def _real_schur(a: Array) -> tuple[Array, Array, bool]:
    """(T, Z, converged) for one float64 matrix: A = Z T Zᵀ."""
    n = a.shape[0]
    if n < 2:
        return a.copy(), np.eye(n), True
    eps = float(np.finfo(np.float64).eps)
    h, taus = hessenberg(a[None])
    h, taus = h[0], taus[0]
    # Q = H(0) ... H(n-2), reflector j stored in column j from row j+2: shifted one column right
    # (behind an identity reflector) that is householder_product's layout.
    reflectors = np.pad(h[:, :-1], ((0, 0), (1, 0)))
    z = householder_product(reflectors[None], np.concatenate([[0.0], taus])[None])[0]
    h = np.triu(h, -1)
    hi, iterations = n - 1, 0
    while hi > 0:
        lo = _active_block_start(h, hi, eps)
        if lo == hi:  # a 1×1 block has converged
            hi, iterations = hi - 1, 0
        elif lo == hi - 1:  # a 2×2 block has converged
            _standardize_block(h, z, hi - 1)
            hi, iterations = hi - 2, 0
        else:
            iterations += 1
            if iterations > 30 * n:
                return h, z, False
            if iterations % 10 == 0:  # an exceptional shift breaks a cycle
                s = abs(h[hi, hi - 1]) + abs(h[hi - 1, hi - 2])
                _francis_step(h, z, lo, hi, 1.5 * s, s * s)  # EISPACK's hqr: shifts 0.75 s ± 0.66 s i
            else:  # the eigenvalues of the trailing 2×2 block
                m = hi - 1
                s = h[m, m] + h[hi, hi]
                t = h[m, m] * h[hi, hi] - h[m, hi] * h[hi, m]
                _francis_step(h, z, lo, hi, s, t)
            h[np.tril_indices(n, -2)] = 0  # the bulge's rounding remnants below the subdiagonal
    return np.triu(h, -1), z, True


# The complex Schur form: Householder reduction to Hessenberg form, then
# single-shift QR steps (Wilkinson's shift, chased with Givens rotations) with
# deflation, as LAPACK's zlahqr does; T is upper triangular. The order of the
# eigenvalues along the diagonal may differ from LAPACK's.


def _givens(x: complex, y: complex) -> Array:
    """The unitary [[c, s], [-conj(s), c]] (c real) taking (x, y) to (r, 0)."""
    r = float(np.hypot(abs(x), abs(y)))
    if r == 0:
        return np.eye(2, dtype=np.complex128)
    if x == 0:
        c, s = 0.0, complex(np.conj(y)) / r
    else:
        c, s = abs(x) / r, (x / abs(x)) * complex(np.conj(y)) / r
    return np.array([[c, s], [-np.conj(s), c]], np.complex128)


def _complex_schur(a: Array) -> tuple[Array, Array, bool]:
    """(T, Z, converged) for one complex128 matrix: A = Z T Zᴴ."""
    n = a.shape[0]
    h = a.astype(np.complex128).copy()
    z = np.eye(n, dtype=np.complex128)
    for k in range(n - 2):
        x = h[k + 1 :, k]
        norm = float(np.linalg.norm(x))
        if norm == 0:
            continue
        v = x.copy()
        v[0] += (x[0] / abs(x[0]) if x[0] != 0 else 1.0) * norm
        v /= np.linalg.norm(v)
        h[k + 1 :, :] -= 2 * np.outer(v, v.conj() @ h[k + 1 :, :])
        h[:, k + 1 :] -= 2 * np.outer(h[:, k + 1 :] @ v, v.conj())
        z[:, k + 1 :] -= 2 * np.outer(z[:, k + 1 :] @ v, v.conj())
    h = np.triu(h, -1)
    eps = float(np.finfo(np.float64).eps)
    hi, iterations = n - 1, 0
    while hi > 0:
        lo = _active_block_start(h, hi, eps)
        if lo == hi:  # h[hi, hi] has converged
            hi, iterations = hi - 1, 0
            continue
        iterations += 1
        if iterations > 30 * n:
            return h, z, False
        if iterations % 10 == 0:  # an exceptional shift breaks a cycle
            mu = h[hi, hi] + 0.75 * abs(h[hi, hi - 1].real)
        else:  # Wilkinson's shift: the trailing 2×2 block's eigenvalue nearer its last entry
            p, q, r, t = h[hi - 1, hi - 1], h[hi - 1, hi], h[hi, hi - 1], h[hi, hi]
            half = (p - t) / 2
            root = np.sqrt(half * half + q * r)
            mu = t + half - root if abs(half - root) < abs(half + root) else t + half + root
        x, y = h[lo, lo] - mu, h[lo + 1, lo]
        for k in range(lo, hi):
            if k > lo:
                x, y = h[k, k - 1], h[k + 1, k - 1]
            g = _givens(x, y)
            h[k : k + 2, :] = g @ h[k : k + 2, :]
            h[:, k : k + 2] = h[:, k : k + 2] @ g.conj().T
            z[:, k : k + 2] = z[:, k : k + 2] @ g.conj().T
            if k > lo:
                h[k + 1, k - 1] = 0
    return np.triu(h), z, True


@impl("schur")
def schur(x: Array, *, compute_schur_vectors: bool, sort_eig_vals: bool, select_callable: Any) -> list[Array]:
    if sort_eig_vals:
        raise NotImplementedError("schur: The sort feature of LAPACK's gees routine is not implemented. (sort_eig_vals=True: JAX has none either.)")
    n = x.shape[-1]
    complex_ = np.iscomplexobj(x)
    flat = x.astype(np.complex128).reshape((shape_size(x.shape[:-2]), n, n)) if complex_ else _flat(x, 2)
    if flat.size == 0:
        return [np.zeros(x.shape, x.dtype)] * (2 if compute_schur_vectors else 1)
    ts, zs = np.zeros_like(flat), np.zeros_like(flat)
    decompose = _complex_schur if complex_ else _real_schur
    for i, matrix in enumerate(flat):
        ok = bool(np.isfinite(matrix).all())
        if ok:
            ts[i], zs[i], ok = decompose(matrix)
        if not ok:
            ts[i] = zs[i] = np.nan
    ts_out = ts.reshape(x.shape).astype(x.dtype)
    if not compute_schur_vectors:
        return [ts_out]
    return [ts_out, zs.reshape((*x.shape[:-2], n, n)).astype(x.dtype)]
