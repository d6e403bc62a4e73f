"""Linear-algebra primitives: cholesky, triangular_solve, lu, lu_pivots_to_permutation, qr, eigh, eig, svd,
householder_product, ormqr, hessenberg, tridiagonal, schur, symmetric_product, cholesky_update and
tridiagonal_solve.

``spec/primitives/linalg.md`` is the written specification; each check below
cites its constraint label (``# cholesky C3``). Names, params, result dtypes
and error messages are JAX 0.10.2's (``jax.lax.linalg``).

Every primitive works on the trailing matrix (or vector) axes of its
operands and maps over any leading *batch* axes, which all operands share.
That makes batching trivial: a vmapped axis is moved to the front and becomes
one more batch axis (``triangular_solve`` folds it into the right-hand sides
when only ``b`` is batched, as JAX does).

Results are weakly typed only when every operand is (JAX's rule, applied to
every result, integer pivots included).

Half precision: JAX on CPU raises NotImplementedError for float16/bfloat16
decompositions (LAPACK has none); minijax's backends compute them in float32
and round the results (documented in ``docs/linalg.md``).

The jvp, transpose and batching rules are at the end of the module; they
follow JAX's formulas. One difference: ``cholesky`` and ``eigh`` read only
one triangle of their operand, so their derivative along a tangent ``t`` is
the derivative along the symmetric matrix built from that triangle of ``t``.
JAX's rules assume a symmetric tangent (its public functions symmetrize
first, so the tangent always is); minijax's rules project the tangent onto
what the primitive reads, so that they are right for every tangent (the
projection is the identity on symmetric tangents).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import ShapedArray, get_aval
from minijax.interpreters import ad, batching
from minijax.jaxpr_parse import param_constructors
from minijax.primitives import complex as cx, elementwise as ew, reductions as red, slicing, structural as sp
from minijax.primitives.common import index_param, standard_primitive
from minijax.primitives.reductions import Precision

Shape = tuple[int, ...]
_I32 = np.dtype(np.int32)


class SvdAlgorithm(enum.Enum):
    """Which LAPACK routine computes an SVD (``jax.lax.linalg.SvdAlgorithm``)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


class EighImplementation(enum.Enum):
    """Which algorithm computes a symmetric eigendecomposition (``jax.lax.linalg.EighImplementation``)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class EigImplementation(enum.Enum):
    """Which library computes a nonsymmetric eigendecomposition (``jax.lax.linalg.EigImplementation``)."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


# algorithm=SvdAlgorithm.QR and friends read back from jaxpr text.
param_constructors["SvdAlgorithm"] = SvdAlgorithm
param_constructors["EighImplementation"] = EighImplementation
param_constructors["EigImplementation"] = EigImplementation


# ---------------------------------------------------------------------------
# Checks shared by the rules


def _split(name: str, avals: Sequence[ShapedArray], ranks: Sequence[int]) -> tuple[Shape, list[Shape]]:
    """(the batch shape, each operand's trailing core shape); C1/C2 of every primitive here.

    Operand i has ``ranks[i]`` core axes after the batch axes, which every
    operand must share exactly (no broadcasting).
    """
    batches, cores = [], []
    for i, (rank, aval) in enumerate(zip(ranks, avals)):
        if aval.ndim < rank:  # C1: enough axes
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got shape={aval.shape}")
        batches.append(aval.shape[: aval.ndim - rank])
        cores.append(aval.shape[aval.ndim - rank :])
    if len({len(b) for b in batches}) > 1:  # C2: one batch shape
        raise TypeError(
            f"All inputs to {name} must have the same number of batch dimensions, but got "
            f"{[len(b) for b in batches]} batch dimensions for the inputs."
        )
    if len(set(batches)) > 1:
        raise ValueError(
            f"All inputs to {name} must have the same batch dimensions, but got {batches}; "
            "broadcast them to one batch shape first."
        )
    return batches[0], cores


def _check_float(name: str, aval: ShapedArray, position: int) -> None:
    """TypeError unless the operand is floating point or complex (JAX's message)."""
    if dtypes.issubdtype(aval.dtype, np.complexfloating):
        return
    if not dtypes.issubdtype(aval.dtype, np.floating):
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype.name} at position {position}. "
            f"Accepted dtypes at position {position} are subtypes of floating, complexfloating."
        )


def is_complex(x: Any) -> bool:
    """Whether x (a value or an aval) has a complex dtype."""
    dtype = x.dtype if isinstance(x, ShapedArray) else get_aval(x).dtype
    return bool(np.dtype(dtype).kind == "c")


def conj_transpose(x: Any) -> Any:
    """The conjugate transpose of each matrix: the transpose for real ones (JAX's ``_H``)."""
    t = matrix_transpose(x)
    return cx.conj(t) if is_complex(t) else t


def _weak(*avals: ShapedArray) -> bool:
    return all(a.weak_type for a in avals)


def _check_subset(name: str, subset_by_index: Any, size: int) -> tuple[int, int] | None:
    """None, or the (start, end) pair of ``subset_by_index`` checked against ``size`` results."""
    if subset_by_index is None:
        return None
    try:
        start, end = (int(i) for i in subset_by_index)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: subset_by_index must be None or a (start, end) pair, got {subset_by_index!r}") from None
    if not 0 <= start <= end <= size:
        raise ValueError(f"{name}: subset_by_index={subset_by_index} must satisfy 0 <= start <= end <= {size}.")
    return start, end


# ---------------------------------------------------------------------------
# cholesky


def _cholesky_rule(x: ShapedArray) -> ShapedArray:
    _, (core,) = _split("cholesky", [x], [2])  # cholesky C1
    _check_float("cholesky", x, 0)  # cholesky C2
    if core[0] != core[1]:  # cholesky C3
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape {core}.")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


cholesky_p = standard_primitive("cholesky", _cholesky_rule)


# ---------------------------------------------------------------------------
# triangular_solve


def _triangular_solve_rule(
    a: ShapedArray, b: ShapedArray, *, left_side: bool, lower: bool, transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
) -> ShapedArray:
    name = "triangular_solve"
    _, (a_core, b_core) = _split(name, [a, b], [2, 2])  # triangular_solve C1, C2
    _check_float(name, a, 0)  # triangular_solve C3
    _check_float(name, b, 1)
    if a.dtype != b.dtype:  # triangular_solve C4
        raise TypeError(f"lax.triangular_solve requires arguments to have the same dtypes, got {a.dtype.name}, {b.dtype.name}.")
    if a_core[0] != a_core[1]:  # triangular_solve C5
        raise ValueError(f"The first input to triangular_solve must be a square matrix. Got shape {a_core}.")
    if a_core[1] != b_core[0 if left_side else 1]:  # triangular_solve C6
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a_core} and {b_core}.")
    return ShapedArray(b.shape, b.dtype, _weak(a, b))


triangular_solve_p = standard_primitive("triangular_solve", _triangular_solve_rule)


# ---------------------------------------------------------------------------
# lu, lu_pivots_to_permutation


def _lu_rule(x: ShapedArray) -> list[ShapedArray]:
    batch, ((m, n),) = _split("lu", [x], [2])  # lu C1
    _check_float("lu", x, 0)  # lu C2
    weak = x.weak_type
    return [
        ShapedArray(x.shape, x.dtype, weak),  # lu C3
        ShapedArray((*batch, min(m, n)), _I32, weak),
        ShapedArray((*batch, m), _I32, weak),
    ]


lu_p = standard_primitive("lu", _lu_rule, multiple_results=True)


def _lu_pivots_to_permutation_rule(pivots: ShapedArray, *, permutation_size: Any) -> ShapedArray:
    name = "lu_pivots_to_permutation"
    permutation_size = index_param(name, "permutation_size", permutation_size)
    batch, ((k,),) = _split(name, [pivots], [1])  # lu_pivots_to_permutation C1
    if pivots.dtype != _I32:  # lu_pivots_to_permutation C2
        raise TypeError(
            f"{name} does not accept dtype {pivots.dtype.name} at position 0. "
            "Accepted dtypes at position 0 are subtypes of int32."
        )
    if not permutation_size >= k:  # lu_pivots_to_permutation C3
        raise ValueError(
            f"Output permutation size {permutation_size} has to exceed the trailing dimension of the pivots. "
            f"Got pivots size {k}"
        )
    return ShapedArray((*batch, permutation_size), _I32, pivots.weak_type)


lu_pivots_to_permutation_p = standard_primitive("lu_pivots_to_permutation", _lu_pivots_to_permutation_rule)


# ---------------------------------------------------------------------------
# qr


def _qr_rule(x: ShapedArray, *, pivoting: bool, full_matrices: bool, use_magma: Any) -> list[ShapedArray]:
    batch, ((m, n),) = _split("qr", [x], [2])  # qr C1
    _check_float("qr", x, 0)  # qr C2
    if pivoting:  # qr C3
        raise NotImplementedError(
            "qr: pivoting=True (column-pivoted QR) is not implemented in minijax; use pivoting=False."
        )
    k = m if full_matrices else min(m, n)
    weak = x.weak_type
    return [ShapedArray((*batch, m, k), x.dtype, weak), ShapedArray((*batch, k, n), x.dtype, weak)]  # qr C4


qr_p = standard_primitive("qr", _qr_rule, multiple_results=True)


# ---------------------------------------------------------------------------
# eigh


def _eigh_rule(x: ShapedArray, *, lower: bool, sort_eigenvalues: bool, subset_by_index: Any, algorithm: Any) -> list[ShapedArray]:
    batch, (core,) = _split("eigh", [x], [2])  # eigh C1
    _check_float("eigh", x, 0)  # eigh C2
    if core[0] != core[1]:  # eigh C3
        raise ValueError(f"Argument to symmetric eigendecomposition must have shape [..., n, n], got shape {core}")
    n = core[0]
    subset = _check_subset("eigh", subset_by_index, n)  # eigh C4
    if algorithm not in (None, EighImplementation.QR):  # eigh C5
        raise NotImplementedError(
            f"eigh: algorithm={algorithm} is not implemented in minijax (JAX has it on GPU/TPU only); "
            "use None or EighImplementation.QR."
        )
    d = n if subset is None else subset[1] - subset[0]
    weak = x.weak_type
    # eigh C6: Hermitian matrices have real eigenvalues
    return [ShapedArray((*batch, n, d), x.dtype, weak), ShapedArray((*batch, d), ew.real_dtype(x.dtype), weak)]


eigh_p = standard_primitive("eigh", _eigh_rule, multiple_results=True)


# ---------------------------------------------------------------------------
# eig (cla, issue 19): the nonsymmetric eigenproblem, LAPACK's geev. The
# results are complex for every operand dtype.


def _eig_rule(
    x: ShapedArray, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
    implementation: Any,
) -> list[ShapedArray]:
    batch, (core,) = _split("eig", [x], [2])  # eig C1
    _check_float("eig", x, 0)  # eig C2
    if core[0] != core[1]:  # eig C3
        raise ValueError(f"The input to eig must be a square matrix. Got shape {core}.")
    if implementation not in (None, EigImplementation.LAPACK):  # eig C4
        raise ValueError("Only the lapack implementation is supported on CPU.")
    dtype = ew.complex_dtype(x.dtype)  # eig C5
    weak = x.weak_type
    vectors = ShapedArray(x.shape, dtype, weak)
    count = int(bool(compute_left_eigenvectors)) + int(bool(compute_right_eigenvectors))
    return [ShapedArray((*batch, core[0]), dtype, weak)] + [vectors] * count


eig_p = standard_primitive("eig", _eig_rule, multiple_results=True)


# ---------------------------------------------------------------------------
# svd

# The algorithms LAPACK offers on CPU (gesdd for DEFAULT and DIVIDE_AND_CONQUER, gesvd for QR).
_CPU_SVD_ALGORITHMS = (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.QR, SvdAlgorithm.DIVIDE_AND_CONQUER)


def _svd_rule(
    x: ShapedArray, *, full_matrices: bool, compute_uv: bool, subset_by_index: Any, algorithm: Any
) -> list[ShapedArray]:
    batch, ((m, n),) = _split("svd", [x], [2])  # svd C1
    _check_float("svd", x, 0)  # svd C2
    rank = min(m, n)
    subset = _check_subset("svd", subset_by_index, rank)  # svd C3
    if subset is not None:
        if full_matrices and subset != (0, rank):  # svd C4
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = subset[1] - subset[0]
    if algorithm not in _CPU_SVD_ALGORITHMS:  # svd C5
        raise NotImplementedError(
            f"svd: algorithm={algorithm} is not implemented on CPU (JAX has it on GPU/TPU only); use None, "
            "SvdAlgorithm.DEFAULT, SvdAlgorithm.QR or SvdAlgorithm.DIVIDE_AND_CONQUER."
        )
    weak = x.weak_type
    s = ShapedArray((*batch, rank), ew.real_dtype(x.dtype), weak)  # svd C6: singular values are real
    if not compute_uv:
        return [s]
    u = ShapedArray((*batch, m, m if full_matrices else rank), x.dtype, weak)
    vt = ShapedArray((*batch, n if full_matrices else rank, n), x.dtype, weak)
    return [s, u, vt]


svd_p = standard_primitive("svd", _svd_rule, multiple_results=True)


# ===========================================================================
# Bind helpers and matrix helpers, shared by the rules below, minijax.lax.linalg
# and minijax.numpy.linalg. They work on the last two axes and keep the leading
# ones, and emit JAX's equations where JAX has the same helper.


def triangular_solve(
    a: Any, b: Any, *, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
    conjugate_a: bool = False, unit_diagonal: bool = False,
) -> Any:
    """X with op(A) X = B (``left_side``) or X op(A) = B, A triangular, op(A) = A, Aᵀ, conj(A) or Aᴴ.

    ``b`` may have one axis fewer than ``a``: a single right-hand side.
    ``conjugate_a`` has no effect on real matrices (JAX drops it for them too).
    """
    conjugate_a = bool(conjugate_a) and is_complex(a)
    singleton = np.ndim(b) == np.ndim(a) - 1
    if singleton:
        b = sp.expand_dims(b, (np.ndim(b) if left_side else np.ndim(b) - 1,))
    out = triangular_solve_p.bind(
        a, b, left_side=bool(left_side), lower=bool(lower), transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
        unit_diagonal=bool(unit_diagonal),
    )  # fmt: skip
    if singleton:
        out = sp.squeeze(out, (np.ndim(out) - 1 if left_side else np.ndim(out) - 2,))
    return out


def matrix_transpose(x: Any) -> Any:
    """The transpose of each matrix (the last two axes swapped): JAX's ``_T``."""
    nd = np.ndim(x)
    return sp.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def symmetrize(x: Any) -> Any:
    """(x + xᴴ) / 2: the symmetric (Hermitian) part."""
    total = ew.add_p.bind(x, conj_transpose(x))
    return ew.div_p.bind(total, ew.scalar_like(total, 2))


def tri(shape: tuple[int, int], k: int) -> Any:
    """The bool mask of ``numpy.tri``: True where column <= row + k."""
    rows = sp.iota(np.int32, shape, 0)
    return ew.ge_p.bind(ew.add_p.bind(rows, np.int32(k)), sp.iota(np.int32, shape, 1))


def tril(x: Any, k: int = 0) -> Any:
    """x with the elements above diagonal ``k`` zeroed."""
    *batch, n, m = np.shape(x)
    mask = sp.broadcast(tri((n, m), k), tuple(batch))
    return ew.select(mask, x, ew.full_like(x, 0))


def triu(x: Any, k: int = 0) -> Any:
    """x with the elements below diagonal ``k`` zeroed."""
    *batch, n, m = np.shape(x)
    mask = sp.broadcast(tri((n, m), k - 1), tuple(batch))
    return ew.select(mask, ew.full_like(x, 0), x)


def eye(dtype: Any, shape: tuple[int, int]) -> Any:
    """A (rectangular) identity matrix of ``dtype``."""
    rows = ew.add_p.bind(sp.iota(np.int32, shape, 0), np.int32(0))  # (JAX's equations: an offset of 0)
    return ew.convert_element_type(ew.eq_p.bind(rows, sp.iota(np.int32, shape, 1)), dtype)


def matmul(a: Any, b: Any) -> Any:
    """Matrix products over the last two axes, batched over the (equal) leading ones, at HIGHEST precision."""
    nd = np.ndim(a)
    batch = tuple(range(nd - 2))
    return red.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)), precision=Precision.HIGHEST)


def diagonal(x: Any) -> Any:
    """The main diagonal of each matrix, read as a strided slice of the flattened matrix (exact and linear)."""
    *batch, n, m = np.shape(x)
    k = min(n, m)
    if k == 0:
        return ew.full((*batch, 0), 0, get_aval(x).dtype)
    flat = sp.reshape(x, (*batch, n * m))
    nb = len(batch)
    return slicing.slice(flat, (0,) * (nb + 1), (*batch, (k - 1) * (m + 1) + 1), (1,) * nb + (m + 1,))


def permutation_matrix(permutation: Any, n: int, dtype: Any) -> Any:
    """P with P[..., i, j] = (permutation[..., i] == j), so P @ x is x[..., permutation, :]."""
    perm = get_aval(permutation)
    nb = perm.ndim - 1
    m = perm.shape[-1]
    rows = sp.broadcast_in_dim(permutation, (*perm.shape, n), tuple(range(nb + 1)))
    cols = sp.iota(perm.dtype, (*perm.shape[:-1], m, n), nb + 1)
    return ew.convert_element_type(ew.eq_p.bind(rows, cols), dtype)


def permute_rows(x: Any, permutation: Any) -> Any:
    """x[..., permutation, :], as a product with a permutation matrix.

    JAX gathers here; minijax multiplies by the 0/1 matrix, which is exact
    for finite values (an inf or NaN in x spreads NaN along its column).
    """
    aval = get_aval(x)
    return matmul(permutation_matrix(permutation, aval.shape[-2], aval.dtype), x)


def unpermute_rows(x: Any, permutation: Any) -> Any:
    """y with y[..., permutation, :] = x: the inverse of ``permute_rows``."""
    aval = get_aval(x)
    p = permutation_matrix(permutation, aval.shape[-2], aval.dtype)
    return matmul(matrix_transpose(p), x)


def lu_solve(lu_: Any, permutation: Any, b: Any, trans: int = 0) -> Any:
    """Solve A x = b (``trans=0``), Aᵀ x = b (``trans=1``) or Aᴴ x = b (``trans=2``) from A's LU factors.

    ``b`` has the matrix axes (..., m, k) with the batch axes of ``lu_``.
    """
    if trans == 0:
        x = permute_rows(b, permutation)
        x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        return triangular_solve(lu_, x, left_side=True, lower=False)
    if trans in (1, 2):
        conj = trans == 2  # (no effect on real factors)
        x = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        x = triangular_solve(lu_, x, left_side=True, lower=True, transpose_a=True, conjugate_a=conj, unit_diagonal=True)
        return unpermute_rows(x, permutation)
    raise ValueError(f"'trans' value must be 0, 1 or 2, got {trans}")


# ---------------------------------------------------------------------------
# The Householder family: householder_product, ormqr, hessenberg, tridiagonal,
# schur (LAPACK's orgqr, ormqr, gehrd, sytrd, gees). JAX gives none of them
# a derivative; all but cholesky_update map over batch axes.


def _check_same_dtypes(name: str, avals: Sequence[ShapedArray]) -> None:
    if len({a.dtype for a in avals}) > 1:
        got = ", ".join(a.dtype.name for a in avals)
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {got}.")


def _check_floats(name: str, avals: Sequence[ShapedArray], complex_too: bool = True) -> None:
    for i, aval in enumerate(avals):
        if complex_too:
            _check_float(name, aval, i)
        elif not dtypes.issubdtype(aval.dtype, np.floating):
            raise TypeError(
                f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
                f"Accepted dtypes at position {i} are subtypes of floating."
            )
    _check_same_dtypes(name, avals)


def _householder_product_rule(a: ShapedArray, taus: ShapedArray) -> ShapedArray:
    name = "householder_product"
    _, ((m, n), (k,)) = _split(name, [a, taus], [2, 1])  # householder_product C1, C2
    _check_floats(name, [a, taus])  # householder_product C3
    if m < n:  # householder_product C4
        raise ValueError(
            f"The first argument to householder_product must have at least as many rows as columns, got shape {(m, n)}"
        )
    if k > min(m, n):  # householder_product C5
        raise ValueError(
            "The second argument to householder_product must not have more rows than the minimum of the first "
            "argument's rows and columns."
        )
    return ShapedArray(a.shape, a.dtype, _weak(a, taus))


householder_product_p = standard_primitive("householder_product", _householder_product_rule)


def _ormqr_rule(a: ShapedArray, taus: ShapedArray, c: ShapedArray, *, left: bool, transpose: bool) -> ShapedArray:
    name = "ormqr"
    _, ((m, n), (k,), c_core) = _split(name, [a, taus, c], [2, 1, 2])  # ormqr C1, C2
    _check_floats(name, [a, taus, c])  # ormqr C3
    for param, value in (("left", left), ("transpose", transpose)):  # ormqr C6
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"ormqr: {param} must be a bool, got {value!r}")
    if left and c_core[0] != m:  # ormqr C4
        raise ValueError(
            "ormqr with left=True expects c to have the same number of rows as the Householder matrix a. "
            f"Got a shape {(m, n)} and c shape {c_core}."
        )
    if not left and c_core[1] != m:
        raise ValueError(
            "ormqr with left=False expects c to have the same number of columns as the Householder matrix a has "
            f"rows. Got a shape {(m, n)} and c shape {c_core}."
        )
    if k > min(m, n):  # ormqr C5 (JAX does not check: LAPACK rejects it at run time)
        raise ValueError(
            f"ormqr: taus has {k} scalar factors, more than the {min(m, n)} reflectors a of shape {(m, n)} holds."
        )
    return ShapedArray(c.shape, c.dtype, _weak(a, taus, c))


ormqr_p = standard_primitive("ormqr", _ormqr_rule)


def _hessenberg_rule(a: ShapedArray) -> list[ShapedArray]:
    batch, ((m, n),) = _split("hessenberg", [a], [2])  # hessenberg C1
    _check_float("hessenberg", a, 0)  # hessenberg C2
    if m != n:  # hessenberg C3
        raise ValueError(f"Argument to Hessenberg reduction must have shape [..., n, n], got shape {(m, n)}")
    if n == 0:  # hessenberg C4 (JAX fails inside XLA on the taus of shape (-1,))
        raise ValueError("Argument to Hessenberg reduction must not be an empty (0 x 0) matrix: it has no taus.")
    weak = a.weak_type
    return [ShapedArray(a.shape, a.dtype, weak), ShapedArray((*batch, n - 1), a.dtype, weak)]


hessenberg_p = standard_primitive("hessenberg", _hessenberg_rule, multiple_results=True)


def _tridiagonal_rule(a: ShapedArray, *, lower: bool) -> list[ShapedArray]:
    batch, ((m, n),) = _split("tridiagonal", [a], [2])  # tridiagonal C1
    _check_float("tridiagonal", a, 0)  # tridiagonal C2
    if m != n or n == 0:  # tridiagonal C3
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {(m, n)}.")
    weak = a.weak_type
    # hetrd: a Hermitian matrix's tridiagonal form is real (d and e), its reflectors' taus are not.
    real = np.dtype(np.finfo(a.dtype).dtype) if a.dtype.kind == "c" else a.dtype
    return [
        ShapedArray(a.shape, a.dtype, weak), ShapedArray((*batch, n), real, weak),
        ShapedArray((*batch, n - 1), real, weak), ShapedArray((*batch, n - 1), a.dtype, weak),
    ]  # fmt: skip


tridiagonal_p = standard_primitive("tridiagonal", _tridiagonal_rule, multiple_results=True)


def _schur_rule(x: ShapedArray, *, compute_schur_vectors: bool, sort_eig_vals: bool, select_callable: Any) -> list[ShapedArray]:
    _, ((m, n),) = _split("schur", [x], [2])  # schur C1
    if not dtypes.issubdtype(x.dtype, np.complexfloating):  # schur C2: complex matrices too (gees' c/z forms)
        _check_float("schur", x, 0)
    if m != n:  # schur C3
        raise ValueError(f"The input to schur must be a square matrix. Got shape {(m, n)}.")
    out = ShapedArray(x.shape, x.dtype, x.weak_type)
    return [out, out] if compute_schur_vectors else [out]


schur_p = standard_primitive("schur", _schur_rule, multiple_results=True)


# ---------------------------------------------------------------------------
# symmetric_product, cholesky_update, tridiagonal_solve


def _symmetric_product_rule(a: ShapedArray, c: ShapedArray, *, alpha: Any, beta: Any) -> ShapedArray:
    name = "symmetric_product"
    _, (a_core, c_core) = _split(name, [a, c], [2, 2])  # symmetric_product C1, C2
    _check_floats(name, [a, c], complex_too=False)  # symmetric_product C3
    if a_core[0] != c_core[1] or c_core[0] != c_core[1]:  # symmetric_product C4
        raise ValueError(
            "symmetric_update expects a rectangular matrix of shape (m, n) and a square matrix of shape (n, n). "
            f"Got shapes {a_core} and {c_core}."
        )
    for param, value in (("alpha", alpha), ("beta", beta)):  # symmetric_product C5
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name}: {param} must be a real number, got {value!r} of type {type(value).__name__}.")
    return ShapedArray(c.shape, c.dtype, _weak(a, c))


symmetric_product_p = standard_primitive("symmetric_product", _symmetric_product_rule)


def _cholesky_update_rule(r: ShapedArray, w: ShapedArray) -> ShapedArray:
    name = "cholesky_update"
    for i, (aval, rank) in enumerate(((r, 2), (w, 1))):
        if aval.ndim != rank:  # cholesky_update C1: no batch axes
            raise TypeError(f"Input {i} to {name} must have a rank of exactly {rank}, but got shape={aval.shape}")
    _check_floats(name, [r, w], complex_too=False)  # cholesky_update C2
    if r.shape[0] != r.shape[1] or w.shape[0] != r.shape[1]:  # cholesky_update C3
        raise ValueError(
            "Rank-1 update to Cholesky decomposition takes a square matrix and a vector of the same size as input. "
            f"Got shapes {r.shape} and {w.shape} instead"
        )
    return ShapedArray(r.shape, r.dtype, _weak(r, w))


cholesky_update_p = standard_primitive("cholesky_update", _cholesky_update_rule)


def _tridiagonal_solve_rule(
    dl: ShapedArray, d: ShapedArray, du: ShapedArray, b: ShapedArray, *, perturb_singular: bool
) -> ShapedArray:
    name = "tridiagonal_solve"
    avals = [dl, d, du, b]
    for i, (aval, rank) in enumerate(zip(avals, (1, 1, 1, 2))):
        if aval.ndim < rank:  # tridiagonal_solve C1
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got shape={aval.shape}")
    if len({a.ndim - r for a, r in zip(avals, (1, 1, 1, 2))}) > 1:  # tridiagonal_solve C2
        raise TypeError(
            f"All inputs to {name} must have the same number of batch dimensions, but got "
            f"{[a.ndim - r for a, r in zip(avals, (1, 1, 1, 2))]} batch dimensions for the inputs."
        )
    _check_floats(name, avals)  # tridiagonal_solve C3
    if dl.shape != d.shape or dl.shape != du.shape:  # tridiagonal_solve C4
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same shape.")
    if dl.shape != b.shape[:-1]:  # tridiagonal_solve C5
        raise TypeError(
            "tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the dimensions of the "
            "diagonal arguments."
        )
    return ShapedArray(b.shape, b.dtype, _weak(*avals))


tridiagonal_solve_p = standard_primitive("tridiagonal_solve", _tridiagonal_solve_rule)


# ===========================================================================
# Transformation rules: jvp, transpose and batching
#
# The jvp rules are JAX's formulas (references in each), written with the
# helpers above. Products inside the rules use Precision.HIGHEST, as JAX's
# do. Under linearize, every operation that touches a tangent is linear in
# it, so the linear jaxpr holds only triangular solves, products with
# residuals and structural operations.

BatchDim = batching.BatchDim
_T = matrix_transpose


def _read_triangle(t: Any, lower: bool) -> Any:
    """The symmetric (Hermitian) matrix built from the triangle of ``t`` a cholesky/eigh reads.

    The primitive's value depends on that triangle only, so its derivative
    along ``t`` is its derivative along this matrix (``t`` itself when ``t``
    is symmetric, or Hermitian for complex ``t``). LAPACK ignores the
    imaginary part of a Hermitian matrix's diagonal, so the projection
    drops it too.
    """
    if is_complex(t):
        part = tril(t) if lower else triu(t)
        full = ew.add_p.bind(part, conj_transpose(tril(t, -1) if lower else triu(t, 1)))
        return ew.div_p.bind(ew.add_p.bind(full, conj_transpose(full)), ew.scalar_like(full, 2))
    if lower:
        return ew.add_p.bind(tril(t), _T(tril(t, -1)))
    return ew.add_p.bind(triu(t), _T(triu(t, 1)))


# --- cholesky: L̇ = L·Φ(L⁻¹ Σ̇ L⁻ᴴ), Φ taking the lower triangle with the
# diagonal halved (Murray, "Differentiation of the Cholesky decomposition",
# arXiv:1602.07527).


def _cholesky_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (x,), (sigma_dot,) = primals, tangents
    chol = cholesky_p.bind(x)
    sigma_dot = _read_triangle(sigma_dot, lower=True)
    tmp = triangular_solve(chol, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True, lower=True)  # Σ̇ L⁻ᴴ
    inner = triangular_solve(chol, tmp, left_side=True, transpose_a=False, lower=True)
    n = get_aval(x).shape[-1]
    halve_diagonal = ew.add_p.bind(ew.full((n, n), 1, get_aval(x).dtype), eye(get_aval(x).dtype, (n, n)))
    phi = ew.div_p.bind(tril(inner), sp.expand_dims(halve_diagonal, tuple(range(get_aval(x).ndim - 2))))
    return chol, matmul(chol, phi)


ad.primitive_jvps[cholesky_p] = _cholesky_jvp


# --- triangular_solve: linear in b; in a, d(A⁻¹B) = -A⁻¹ Ȧ A⁻¹ B with Ȧ
# restricted to the triangle the solve reads.


def _triangular_solve_jvp_a(
    g_a: Any, ans: Any, a: Any, b: Any, *, left_side: bool, lower: bool, transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
) -> Any:
    m, n = get_aval(b).shape[-2:]
    k = 1 if unit_diagonal else 0
    g_a = tril(g_a, -k) if lower else triu(g_a, k)
    g_a = ew.neg_p.bind(g_a)
    if transpose_a:
        g_a = _T(g_a)
    if conjugate_a:
        g_a = cx.conj(g_a)

    def a_inverse(rhs: Any) -> Any:
        return triangular_solve_p.bind(
            a, rhs, left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
            unit_diagonal=unit_diagonal,
        )  # fmt: skip

    # A solve costs about as much as a product: order them as JAX does, the cheaper way round.
    if left_side:
        return a_inverse(matmul(g_a, ans)) if m > n else matmul(a_inverse(g_a), ans)
    return a_inverse(matmul(ans, g_a)) if m < n else matmul(ans, a_inverse(g_a))


def _triangular_solve_jvp_b(g_b: Any, ans: Any, a: Any, b: Any, **params: Any) -> Any:
    return triangular_solve_p.bind(a, g_b, **params)


def _triangular_solve_transpose(ct: Any, a: Any, b: Any, *, transpose_a: bool, **params: Any) -> list[Any]:
    if ad.is_undefined_primal(a) or not ad.is_undefined_primal(b):
        raise ValueError("triangular_solve transpose: only b is linear (a must be a known value).")
    if type(ct) is ad.Zero:
        return [None, ad.Zero(b.aval)]
    return [None, triangular_solve_p.bind(a, ct, transpose_a=not transpose_a, **params)]


ad.defjvp2(triangular_solve_p, _triangular_solve_jvp_a, _triangular_solve_jvp_b)
ad.transpose_rules[triangular_solve_p] = _triangular_solve_transpose


# --- lu: with P A = L U, L̇ = L·tril(X, -1) and U̇ = triu(X)·U where
# X = L⁻¹ P Ȧ U⁻¹ (de Hoog, Anderssen and Lukas, "Differentiation of matrix
# functionals using triangular factorization"). Rectangular matrices pad L
# and U to square with identity blocks.


def _lu_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (a,), (a_dot,) = primals, tangents
    lu, pivots, permutation = lu_p.bind(a)
    aval = get_aval(a)
    *batch, m, n = aval.shape
    k = min(m, n)
    nb = len(batch)
    dtype = aval.dtype
    zero = np.zeros((), dtype)
    keep = [(0, 0, 0)] * nb

    def cut(x: Any, rows: int, cols: int) -> Any:
        return slicing.slice(x, (0,) * (nb + 2), (*batch, rows, cols))

    eye_m = sp.broadcast(eye(dtype, (m, m)), tuple(batch))
    l_factor = ew.add_p.bind(slicing.pad(tril(cut(lu, m, k), -1), zero, [*keep, (0, 0, 0), (0, m - k, 0)]), eye_m)
    u_eye = slicing.pad(eye(dtype, (n - k, n - k)), zero, [(k, 0, 0), (k, 0, 0)])
    u_factor = ew.add_p.bind(slicing.pad(triu(cut(lu, k, n)), zero, [*keep, (0, n - k, 0), (0, 0, 0)]), sp.broadcast(u_eye, tuple(batch)))
    la = triangular_solve(l_factor, permute_rows(a_dot, permutation), left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(u_factor, la, left_side=False, lower=False)
    lu_dot = ew.add_p.bind(matmul(l_factor, tril(lau, -1)), matmul(triu(lau), u_factor))
    return [lu, pivots, permutation], [lu_dot, ad.Zero.from_primal(pivots), ad.Zero.from_primal(permutation)]


ad.primitive_jvps[lu_p] = _lu_jvp
ad.defjvp_zero(lu_pivots_to_permutation_p)


# --- qr: JAX's rule (J. Townsend's note "Differentiating the QR
# decomposition"; Roberts and Roberts, arXiv:2409.13374, for the extra
# columns of a full Q).


def _qr_matmul(a: Any, b: Any) -> Any:
    """``a @ b`` as JAX's qr rule writes it: jnp.matmul of matrices with equal batch
    axes, one dot_general at default precision accumulating in the operands' dtype."""
    nd = np.ndim(a)
    batch = tuple(range(nd - 2))
    return red.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)), preferred_element_type=dtypes.result_type(a, b))


def _thin_qr_jvp(q: Any, r: Any, dx: Any) -> tuple[Any, Any]:
    """(dQ, dR) of X = Q R for m >= n and square R."""
    dx_rinv = triangular_solve(r, dx)  # X R⁻¹: a right-side solve
    qt_dx_rinv = _qr_matmul(conj_transpose(q), dx_rinv)
    lower = tril(qt_dx_rinv, -1)
    do = ew.sub_p.bind(lower, conj_transpose(lower))  # skew-Hermitian
    # The diagonal of Qᴴ dQ is imaginary, I ∘ (X - re(X)): zero for real ones, kept so the jaxprs match.
    n = get_aval(r).shape[-1]
    eye_n = sp.expand_dims(eye(get_aval(do).dtype, (n, n)), tuple(range(get_aval(qt_dx_rinv).ndim - 2)))
    re_part = ew.convert_element_type(cx.real(qt_dx_rinv), get_aval(do).dtype) if is_complex(do) else qt_dx_rinv
    do = ew.add_p.bind(do, ew.mul_p.bind(eye_n, ew.sub_p.bind(qt_dx_rinv, re_part)))
    dq = ew.add_p.bind(_qr_matmul(q, ew.sub_p.bind(do, qt_dx_rinv)), dx_rinv)
    dr = _qr_matmul(ew.sub_p.bind(qt_dx_rinv, do), r)
    return dq, dr


def _qr_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, pivoting: bool, full_matrices: bool, use_magma: Any) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    aval = get_aval(x)
    *batch, m, n = aval.shape
    nd = aval.ndim

    def cols(v: Any, start: int, stop: int) -> Any:
        shape = get_aval(v).shape
        return slicing.slice(v, (0,) * (nd - 1) + (start,), (*shape[:-1], stop))

    def rows(v: Any, start: int, stop: int) -> Any:
        shape = get_aval(v).shape
        return slicing.slice(v, (0,) * (nd - 2) + (start, 0), (*shape[:-2], stop, shape[-1]))

    if m < n:  # wide: X = Q [R1 R2] with R1 square; dR2 = dQᴴ X2 + Qᴴ dX2
        x2, dx1, dx2, r1 = cols(x, m, n), cols(dx, 0, m), cols(dx, m, n), cols(r, 0, m)
        dq, dr1 = _thin_qr_jvp(q, r1, dx1)
        dr2 = ew.add_p.bind(_qr_matmul(conj_transpose(dq), x2), _qr_matmul(conj_transpose(q), dx2))
        return [q, r], [dq, sp.concatenate([dr1, dr2], nd - 1)]
    q_mn = cols(q, 0, n) if full_matrices else q
    r_nn = rows(r, 0, n) if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return [q, r], [dq_mn, dr_nn]
    # Tall with a full Q: the last m - n columns of Q move too (arXiv:2409.13374, eqs. 32-33).
    if is_complex(aval):
        raise NotImplementedError(
            "qr jvp: the derivative of a full Q (full_matrices=True) of a tall complex matrix is not implemented in "
            "minijax; use full_matrices=False (jnp.linalg.qr mode='reduced')."
        )
    q_nn, q_pn, q_mp = rows(q_mn, 0, n), rows(q_mn, n, m), cols(q, n, m)
    dq_nn, dq_pn = rows(dq_mn, 0, n), rows(dq_mn, n, m)
    eye_n = sp.expand_dims(eye(aval.dtype, (n, n)), tuple(range(nd - 2)))
    lu, _, perm = lu_p.bind(ew.sub_p.bind(q_nn, eye_n))
    z_pn_t = lu_solve(lu, perm, _T(q_pn), trans=1)  # (Q_nn - I)ᵀ Zᵀ = Q_pnᵀ
    z_pn = _T(z_pn_t)
    correction = _qr_matmul(ew.add_p.bind(q_mn, _qr_matmul(q_mp, z_pn)), _T(ew.sub_p.bind(dq_pn, _qr_matmul(z_pn, dq_nn))))
    dq_mp = ew.sub_p.bind(_qr_matmul(dq_mn, z_pn_t), correction)
    dq = sp.concatenate([dq_mn, dq_mp], nd - 1)
    zeros = ew.full((*batch, m - n, n), 0, aval.dtype)
    return [q, r], [dq, sp.concatenate([dr_nn, zeros], nd - 2)]


ad.primitive_jvps[qr_p] = _qr_jvp


# --- eigh: nondegenerate perturbation theory. With A = V diag(w) Vᴴ,
# ẇ = re diag(Vᴴ Ȧ V) and V̇ = V (F ∘ Vᴴ Ȧ V), F_ij = 1/(w_j - w_i) off the
# diagonal and 0 on it (Giles, "An extended collection of matrix derivative
# results", 2008). Eigenvalues must be distinct.


def _eigh_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, lower: bool, sort_eigenvalues: bool, subset_by_index: Any, algorithm: Any
) -> tuple[Any, Any]:
    (a,), (a_dot,) = primals, tangents
    aval = get_aval(a)
    n = aval.shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w_real = eigh_p.bind(a, lower=lower, sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index, algorithm=algorithm)
    a_dot = _read_triangle(a_dot, lower)
    complex_ = is_complex(aval)
    # A Hermitian matrix's eigenvalues are real: w in a's (complex) dtype for the products.
    w = ew.convert_element_type(w_real, aval.dtype) if complex_ else w_real
    eye_n = sp.expand_dims(eye(aval.dtype, (n, n)), tuple(range(aval.ndim - 2)))
    gaps = ew.sub_p.bind(ew.add_p.bind(eye_n, sp.expand_dims(w, (aval.ndim - 2,))), sp.expand_dims(w, (aval.ndim - 1,)))
    fmat = ew.sub_p.bind(ew.integer_pow_p.bind(gaps, y=-1), eye_n)
    vh_adot_v = matmul(matmul(conj_transpose(v), a_dot), v)
    dv = matmul(v, ew.mul_p.bind(fmat, vh_adot_v))
    dw = diagonal(cx.real(vh_adot_v) if complex_ else vh_adot_v)
    return [v, w_real], [dv, dw]


ad.primitive_jvps[eigh_p] = _eigh_jvp


# --- eig: nondegenerate perturbation theory (Giles 2008, sec. 3.1). With
# A V = V diag(w) and P = V⁻¹ Ȧ V: ẇ = diag(P), and V̇ = V (F ∘ P) + V diag(c),
# F_ij = 1/(w_j - w_i) off the diagonal. The free multiples c_j of each
# column are fixed by LAPACK's normalisation (unit 2-norm, largest-magnitude
# component real), as JAX fixes them. The left eigenvectors are the right
# ones of Aᴴ (eigenvalues conj(w)). Eigenvector derivatives are opt-in
# (enable_eigvec_derivs), as in JAX.


def _solve_square(a: Any, b: Any) -> Any:
    """a⁻¹ b for square matrices a (batched), by LU with partial pivoting."""
    lu_, _, permutation = lu_p.bind(a)
    return lu_solve(lu_, permutation, b)


def _eig_vector_jvp(w: Any, v: Any, da: Any) -> tuple[Any, Any]:
    aval = get_aval(v)
    nd, n = aval.ndim, aval.shape[-1]
    eye_n = sp.expand_dims(eye(aval.dtype, (n, n)), tuple(range(nd - 2)))
    gaps = ew.sub_p.bind(ew.add_p.bind(eye_n, sp.expand_dims(w, (nd - 2,))), sp.expand_dims(w, (nd - 1,)))
    fmat = ew.sub_p.bind(ew.integer_pow_p.bind(gaps, y=-1), eye_n)
    p = matmul(_solve_square(v, da), v)
    dw = diagonal(p)
    u = matmul(v, ew.mul_p.bind(fmat, p))
    # c_j = -re(v_jᴴ u_j) - i im(u_kj) / re(v_kj), k the row of v_j's largest |entry|.
    rows = sp.iota(np.int32, aval.shape, nd - 2)
    k = red.argmax_p.bind(ew.abs_p.bind(v), axes=(nd - 2,), index_dtype=np.dtype(np.int32))
    mask = ew.convert_element_type(ew.eq_p.bind(rows, sp.expand_dims(k, (nd - 2,))), aval.dtype)

    def col_sum(x: Any) -> Any:
        return sp.reduce_sum(x, (nd - 2,))

    re_part = ew.neg_p.bind(cx.real(col_sum(ew.mul_p.bind(cx.conj(v), u))))
    im_part = ew.neg_p.bind(ew.div_p.bind(cx.imag(col_sum(ew.mul_p.bind(mask, u))), cx.real(col_sum(ew.mul_p.bind(mask, v)))))
    c = cx.complex(re_part, im_part)
    return dw, ew.add_p.bind(u, ew.mul_p.bind(v, sp.expand_dims(c, (nd - 2,))))


def _eig_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool, implementation: Any,
) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the input that JAX cannot "
            "check (see the enable_eigvec_derivs argument to jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to "
            "jax.lax.linalg.eig to opt in. See https://github.com/jax-ml/jax/issues/2748 for discussion."
        )
    outs = eig_p.bind(
        a, compute_left_eigenvectors=compute_left_eigenvectors, compute_right_eigenvectors=True,
        enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation,
    )  # fmt: skip
    w, vr = outs[0], outs[-1]
    if get_aval(a).shape[-1] == 0:  # empty matrices: nothing moves
        kept = outs if compute_right_eigenvectors else outs[:-1]
        return kept, [ew.full_like(o, 0) for o in kept]
    da = ew.convert_element_type(da, get_aval(vr).dtype)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        nd = get_aval(vr).ndim
        return [w], [sp.reduce_sum(ew.mul_p.bind(_solve_square(vr, da), _T(vr)), (nd - 1,))]
    dw, dvr = _eig_vector_jvp(w, vr, da)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:
        _, dvl = _eig_vector_jvp(cx.conj(w), outs[1], conj_transpose(da))
        primal_out.append(outs[1])
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


ad.primitive_jvps[eig_p] = _eig_jvp


# --- svd: with A = U diag(s) Vᴴ (reduced), ṡ = re diag(Uᴴ Ȧ V) and the
# singular vectors from F_ij = 1/(s_j² - s_i²); the extra terms for tall and
# wide matrices project Ȧ onto the complements of U's and V's columns
# (Townsend, "Differentiating the singular value decomposition", 2016).
# Singular values must be distinct; full U/V of a non-square matrix have no
# rule (as in JAX), nor have the vectors of a partial SVD (JAX computes one
# only on TPU, with a rule that would be wrong for it).


def _svd_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool, compute_uv: bool, subset_by_index: Any, algorithm: Any
) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    aval = get_aval(a)
    m, n = aval.shape[-2:]
    nd = aval.ndim
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full matrices")
    if compute_uv and subset_by_index is not None and tuple(subset_by_index) != (0, min(m, n)):
        # The vectors' rule treats the columns left out as having singular value 0: not so for a partial SVD.
        raise NotImplementedError("Singular value decomposition JVP not implemented for a partial SVD (subset_by_index)")
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True, subset_by_index=subset_by_index, algorithm=algorithm)
    complex_ = is_complex(aval)
    ut, v = conj_transpose(u), conj_transpose(vt)
    s_row = sp.expand_dims(s, (nd - 2,))  # s[..., None, :], real
    ds_mat = matmul(matmul(ut, da), v)
    ds = diagonal(cx.real(ds_mat) if complex_ else ds_mat)
    if not compute_uv:
        return [s], [ds]
    s_col = _T(s_row)
    k = get_aval(s).shape[-1]
    real_dtype = get_aval(s).dtype
    eye_k = sp.expand_dims(eye(real_dtype, (k, k)), tuple(range(nd - 2)))
    s_diffs = ew.mul_p.bind(ew.add_p.bind(s_row, s_col), ew.sub_p.bind(s_row, s_col))
    f = ew.sub_p.bind(ew.div_p.bind(np.ones((), real_dtype), ew.add_p.bind(s_diffs, eye_k)), eye_k)

    def as_a(x: Any) -> Any:  # the real factors in a's (complex) dtype
        return ew.convert_element_type(x, aval.dtype) if complex_ else x

    f, s_row_a, s_col_a = as_a(f), as_a(s_row), as_a(s_col)
    dss = ew.mul_p.bind(s_row_a, ds_mat)  # dS diag(s)
    sds = ew.mul_p.bind(s_col_a, ds_mat)  # diag(s) dS
    du_bracket = ew.mul_p.bind(f, ew.add_p.bind(dss, conj_transpose(dss)))
    if complex_:  # ½ (dS - dSᴴ) ∘ diag(1/s): the phases of U's columns (zero for real matrices)
        s_zero = ew.convert_element_type(ew.eq_p.bind(s, np.zeros((), real_dtype)), real_dtype)
        s_inv = ew.sub_p.bind(ew.div_p.bind(np.ones((), real_dtype), ew.add_p.bind(s, s_zero)), s_zero)
        s_inv_diag = ew.mul_p.bind(eye_k, sp.expand_dims(s_inv, (nd - 2,)))
        skew = ew.mul_p.bind(ew.sub_p.bind(ds_mat, conj_transpose(ds_mat)), ew.scalar_like(ds_mat, 0.5))
        du_bracket = ew.add_p.bind(du_bracket, ew.mul_p.bind(skew, as_a(s_inv_diag)))
    du = matmul(u, du_bracket)
    dv = matmul(v, ew.mul_p.bind(f, ew.add_p.bind(sds, conj_transpose(sds))))
    if m > n:
        dav = matmul(da, v)
        du = ew.add_p.bind(du, ew.div_p.bind(ew.sub_p.bind(dav, matmul(u, matmul(ut, dav))), s_row_a))
    if n > m:
        dahu = matmul(conj_transpose(da), u)
        dv = ew.add_p.bind(dv, ew.div_p.bind(ew.sub_p.bind(dahu, matmul(v, matmul(vt, dahu))), s_row_a))
    return [s, u, vt], [ds, du, conj_transpose(dv)]


ad.primitive_jvps[svd_p] = _svd_jvp


# ---------------------------------------------------------------------------
# Batching: the primitives map over leading batch axes natively, so a
# vmapped axis moves to the front (an unbatched operand is broadcast there).


def _batch_at_front(prim: Any) -> Any:
    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> tuple[Any, Any]:
        size = batching.batch_size(vals, dims)
        args = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
        out = prim.bind(*args, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)

    return rule


for _prim in (
    cholesky_p, lu_p, lu_pivots_to_permutation_p, qr_p, eigh_p, eig_p, svd_p, householder_product_p, ormqr_p, hessenberg_p,
    tridiagonal_p, schur_p, symmetric_product_p,
):  # fmt: skip
    batching.primitive_batchers[_prim] = _batch_at_front(_prim)


def _triangular_solve_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, left_side: bool, **params: Any) -> tuple[Any, BatchDim]:
    """When only b is batched, the batch becomes more right-hand sides of one solve (as in JAX)."""
    a, b = vals
    a_dim, b_dim = dims
    if a_dim is None and b_dim is not None:
        b_aval = get_aval(b)
        if left_side:  # b: (..., m, n): the batch joins the n columns
            b = batching.moveaxis(b, b_dim, -1)
            shape = get_aval(b).shape
            flat = sp.reshape(b, (*shape[:-2], shape[-2] * shape[-1]))
            out_dim = b_aval.ndim - 1
        else:  # b: (..., m, n): the batch joins the m rows
            b = batching.moveaxis(b, b_dim, -2)
            shape = get_aval(b).shape
            flat = sp.reshape(b, (*shape[:-3], shape[-3] * shape[-2], shape[-1]))
            out_dim = b_aval.ndim - 2
        out = triangular_solve_p.bind(a, flat, left_side=left_side, **params)
        return sp.reshape(out, shape), out_dim
    size = batching.batch_size(vals, dims)
    a, b = batching.bdim_at_front(a, a_dim, size), batching.bdim_at_front(b, b_dim, size)
    return triangular_solve_p.bind(a, b, left_side=left_side, **params), 0


batching.primitive_batchers[triangular_solve_p] = _triangular_solve_batcher


# --- tridiagonal_solve: linear in b. With A X = B, Ẋ = A⁻¹ (Ḃ - Ȧ X), Ȧ the
# tridiagonal matrix of the diagonals' tangents; the transpose solves with
# Aᵀ, whose sub- and superdiagonals are A's super- and subdiagonals shifted by
# one place (JAX's rules).


def tridiagonal_product(dl: Any, d: Any, du: Any, b: Any) -> Any:
    """A @ b for the tridiagonal A with diagonals (dl, d, du) (dl[0] and du[-1] unused)."""
    *batch, m, k = get_aval(b).shape
    nb = len(batch)
    dtype = get_aval(b).dtype
    zero = np.zeros((), dtype)
    keep = [(0, 0, 0)] * nb
    y = ew.mul_p.bind(sp.expand_dims(d, (nb + 1,)), b)
    if m < 2:
        return y

    def rows(x: Any, start: int, stop: int) -> Any:
        return slicing.slice(x, (0,) * nb + (start, 0), (*batch, stop, get_aval(x).shape[-1]))

    def entries(v: Any, start: int, stop: int) -> Any:
        return sp.expand_dims(slicing.slice(v, (0,) * (nb) + (start,), (*batch, stop)), (nb + 1,))

    below = ew.mul_p.bind(entries(dl, 1, m), rows(b, 0, m - 1))  # row i gets dl[i] b[i-1]
    above = ew.mul_p.bind(entries(du, 0, m - 1), rows(b, 1, m))  # row i gets du[i] b[i+1]
    y = ew.add_p.bind(y, slicing.pad(below, zero, [*keep, (1, 0, 0), (0, 0, 0)]))
    return ew.add_p.bind(y, slicing.pad(above, zero, [*keep, (0, 1, 0), (0, 0, 0)]))


def _tridiagonal_solve_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, perturb_singular: bool) -> tuple[Any, Any]:
    *diagonals, _ = primals
    *diagonal_dots, b_dot = tangents
    ans = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(type(t) is ad.Zero for t in diagonal_dots):
        rhs = b_dot
    else:
        dl_dot, d_dot, du_dot = (ad.instantiate_zeros(t) for t in diagonal_dots)
        product = tridiagonal_product(dl_dot, d_dot, du_dot, ans)
        rhs = ad.add_tangents(b_dot, ew.neg_p.bind(product))
    if type(rhs) is ad.Zero:
        return ans, rhs
    return ans, tridiagonal_solve_p.bind(*diagonals, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct: Any, dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool) -> list[Any]:
    if any(ad.is_undefined_primal(x) for x in (dl, d, du)) or not ad.is_undefined_primal(b):
        raise ValueError("tridiagonal_solve transpose: only b is linear (the diagonals must be known values).")
    if type(ct) is ad.Zero:
        return [None, None, None, ad.Zero(b.aval)]
    *batch, m = get_aval(d).shape
    nb = len(batch)
    zero = np.zeros((), get_aval(d).dtype)
    keep = [(0, 0, 0)] * nb
    # Aᵀ's subdiagonal is du shifted down one place, its superdiagonal dl shifted up one place.
    dl_t = slicing.pad(slicing.slice(du, (0,) * (nb + 1), (*batch, max(m - 1, 0))), zero, [*keep, (min(m, 1), 0, 0)])
    du_t = slicing.pad(slicing.slice(dl, (0,) * nb + (min(m, 1),), (*batch, m)), zero, [*keep, (0, min(m, 1), 0)])
    return [None, None, None, tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


ad.primitive_jvps[tridiagonal_solve_p] = _tridiagonal_solve_jvp
ad.transpose_rules[tridiagonal_solve_p] = _tridiagonal_solve_transpose


def _tridiagonal_solve_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, perturb_singular: bool) -> tuple[Any, BatchDim]:
    """When only b is batched, the batch becomes more right-hand sides of one solve (as in JAX)."""
    *diagonals, b = vals
    *diagonal_dims, b_dim = dims
    if all(dim is None for dim in diagonal_dims) and b_dim is not None:
        b = batching.moveaxis(b, b_dim, -2)
        shape = get_aval(b).shape
        flat = sp.reshape(b, (*shape[:-3], shape[-3], shape[-2] * shape[-1]))
        out = tridiagonal_solve_p.bind(*diagonals, flat, perturb_singular=perturb_singular)
        return sp.reshape(out, shape), len(shape) - 2
    size = batching.batch_size(vals, dims)
    args = [batching.bdim_at_front(x, dim, size) for x, dim in zip(vals, dims)]
    return tridiagonal_solve_p.bind(*args, perturb_singular=perturb_singular), 0


batching.primitive_batchers[tridiagonal_solve_p] = _tridiagonal_solve_batcher


# --- No derivatives (as in JAX): differentiating these raises, naming them.


def _no_jvp(prim: Any) -> None:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented")

    ad.primitive_jvps[prim] = rule
    ad.non_differentiable.add(prim)


for _prim in (
    householder_product_p, ormqr_p, hessenberg_p, tridiagonal_p, schur_p, symmetric_product_p, cholesky_update_p,
):  # fmt: skip
    _no_jvp(_prim)


def _cholesky_update_batcher(vals: Sequence[Any], dims: Sequence[BatchDim]) -> tuple[Any, BatchDim]:
    """JAX defines cholesky_update for one matrix only (its lowering unrolls over the rows): no vmap."""
    raise NotImplementedError("Batching rule for 'cholesky_update' not implemented")


batching.primitive_batchers[cholesky_update_p] = _cholesky_update_batcher
