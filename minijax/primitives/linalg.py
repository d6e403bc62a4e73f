"""Linear-algebra primitives: cholesky, triangular_solve, lu, lu_pivots_to_permutation, qr, eigh, svd.

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
from minijax.core import ShapedArray
from minijax.jaxpr_parse import param_constructors
from minijax.primitives.common import standard_primitive

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


# algorithm=SvdAlgorithm.QR and friends read back from jaxpr text.
param_constructors["SvdAlgorithm"] = SvdAlgorithm
param_constructors["EighImplementation"] = EighImplementation


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
    """TypeError unless the operand is floating point (JAX's message, without complex)."""
    if not dtypes.issubdtype(aval.dtype, np.floating):
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype.name} at position {position}. "
            f"Accepted dtypes at position {position} are subtypes of floating, complexfloating."
        )


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


def _lu_pivots_to_permutation_rule(pivots: ShapedArray, *, permutation_size: int) -> ShapedArray:
    name = "lu_pivots_to_permutation"
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
    return [ShapedArray((*batch, n, d), x.dtype, weak), ShapedArray((*batch, d), x.dtype, weak)]  # eigh C6


eigh_p = standard_primitive("eigh", _eigh_rule, multiple_results=True)


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
    s = ShapedArray((*batch, rank), x.dtype, weak)  # svd C6
    if not compute_uv:
        return [s]
    u = ShapedArray((*batch, m, m if full_matrices else rank), x.dtype, weak)
    vt = ShapedArray((*batch, n if full_matrices else rank, n), x.dtype, weak)
    return [s, u, vt]


svd_p = standard_primitive("svd", _svd_rule, multiple_results=True)


# ===========================================================================
# Transformation rules: jvp, transpose and batching
#
# The jvp rules are JAX's formulas (references in each), written with the
# ``minijax.lax`` operations and the matrix helpers of ``minijax.lax.linalg``
# (imported when a rule runs: lax imports this module). Products inside the
# rules use Precision.HIGHEST, as JAX's do. Under linearize, every operation
# that touches a tangent is linear in it, so the linear jaxpr holds only
# triangular solves, products with residuals and structural operations.

from minijax.core import get_aval  # noqa: E402
from minijax.interpreters import ad, batching  # noqa: E402  (the rules need the primitives above)

BatchDim = batching.BatchDim


def _ops() -> Any:
    """``minijax.lax.linalg``, where the matrix helpers live (imported late: lax imports this module)."""
    from minijax.lax import linalg as lax_linalg

    return lax_linalg


def _lax() -> Any:
    from minijax import lax

    return lax


def _read_triangle(t: Any, lower: bool) -> Any:
    """The symmetric matrix built from the triangle of ``t`` a cholesky/eigh reads.

    The primitive's value depends on that triangle only, so its derivative
    along ``t`` is its derivative along this matrix (``t`` itself when ``t``
    is symmetric).
    """
    ops = _ops()
    if lower:
        return _lax().add(ops._tril(t), ops._T(ops._tril(t, -1)))
    return _lax().add(ops._triu(t), ops._T(ops._triu(t, 1)))


# --- cholesky: L̇ = L·Φ(L⁻¹ Σ̇ L⁻ᵀ), Φ taking the lower triangle with the
# diagonal halved (Murray, "Differentiation of the Cholesky decomposition",
# arXiv:1602.07527).


def _cholesky_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    ops, lax = _ops(), _lax()
    (x,), (sigma_dot,) = primals, tangents
    chol = cholesky_p.bind(x)
    sigma_dot = _read_triangle(sigma_dot, lower=True)
    tmp = ops.triangular_solve(chol, sigma_dot, left_side=False, transpose_a=True, lower=True)
    inner = ops.triangular_solve(chol, tmp, left_side=True, transpose_a=False, lower=True)
    n = get_aval(x).shape[-1]
    halve_diagonal = lax.add(lax.full((n, n), 1, get_aval(x).dtype), ops._eye(get_aval(x).dtype, (n, n)))
    phi = lax.div(ops._tril(inner), lax.expand_dims(halve_diagonal, tuple(range(get_aval(x).ndim - 2))))
    return chol, ops._matmul(chol, phi)


ad.primitive_jvps[cholesky_p] = _cholesky_jvp


# --- triangular_solve: linear in b; in a, d(A⁻¹B) = -A⁻¹ Ȧ A⁻¹ B with Ȧ
# restricted to the triangle the solve reads.


def _triangular_solve_jvp_a(
    g_a: Any, ans: Any, a: Any, b: Any, *, left_side: bool, lower: bool, transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
) -> Any:
    ops, lax = _ops(), _lax()
    m, n = get_aval(b).shape[-2:]
    k = 1 if unit_diagonal else 0
    g_a = ops._tril(g_a, -k) if lower else ops._triu(g_a, k)
    g_a = lax.neg(g_a)
    if transpose_a:
        g_a = ops._T(g_a)

    def a_inverse(rhs: Any) -> Any:
        return triangular_solve_p.bind(
            a, rhs, left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
            unit_diagonal=unit_diagonal,
        )  # fmt: skip

    # A solve costs about as much as a product: order them as JAX does, the cheaper way round.
    if left_side:
        return a_inverse(ops._matmul(g_a, ans)) if m > n else ops._matmul(a_inverse(g_a), ans)
    return a_inverse(ops._matmul(ans, g_a)) if m < n else ops._matmul(ans, a_inverse(g_a))


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
    ops, lax = _ops(), _lax()
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
        return lax.slice(x, (0,) * (nb + 2), (*batch, rows, cols))

    eye_m = lax.broadcast(ops._eye(dtype, (m, m)), tuple(batch))
    l_factor = lax.add(lax.pad(ops._tril(cut(lu, m, k), -1), zero, [*keep, (0, 0, 0), (0, m - k, 0)]), eye_m)
    u_eye = lax.pad(ops._eye(dtype, (n - k, n - k)), zero, [(k, 0, 0), (k, 0, 0)])
    u_factor = lax.add(lax.pad(ops._triu(cut(lu, k, n)), zero, [*keep, (0, n - k, 0), (0, 0, 0)]), lax.broadcast(u_eye, tuple(batch)))
    la = ops.triangular_solve(l_factor, ops._permute_rows(a_dot, permutation), left_side=True, lower=True, unit_diagonal=True)
    lau = ops.triangular_solve(u_factor, la, left_side=False, lower=False)
    lu_dot = lax.add(ops._matmul(l_factor, ops._tril(lau, -1)), ops._matmul(ops._triu(lau), u_factor))
    return [lu, pivots, permutation], [lu_dot, ad.Zero.from_primal(pivots), ad.Zero.from_primal(permutation)]


ad.primitive_jvps[lu_p] = _lu_jvp
ad.defjvp_zero(lu_pivots_to_permutation_p)


# --- qr: JAX's rule (J. Townsend's note "Differentiating the QR
# decomposition"; Roberts and Roberts, arXiv:2409.13374, for the extra
# columns of a full Q).


def _qr_matmul(a: Any, b: Any) -> Any:
    """``a @ b`` as JAX's qr rule writes it (jnp.matmul: default precision)."""
    from minijax import numpy as jnp

    return jnp.matmul(a, b)


def _thin_qr_jvp(q: Any, r: Any, dx: Any) -> tuple[Any, Any]:
    """(dQ, dR) of X = Q R for m >= n and square R."""
    ops, lax = _ops(), _lax()
    dx_rinv = ops.triangular_solve(r, dx)  # X R⁻¹: a right-side solve
    qt_dx_rinv = _qr_matmul(ops._T(q), dx_rinv)
    lower = ops._tril(qt_dx_rinv, -1)
    do = lax.sub(lower, ops._T(lower))  # skew-symmetric
    # JAX's correction for complex matrices, I ∘ (X - re(X)): zero for real ones, kept so the jaxprs match.
    n = get_aval(r).shape[-1]
    eye = lax.expand_dims(ops._eye(get_aval(do).dtype, (n, n)), tuple(range(get_aval(qt_dx_rinv).ndim - 2)))
    do = lax.add(do, lax.mul(eye, lax.sub(qt_dx_rinv, qt_dx_rinv)))
    dq = lax.add(_qr_matmul(q, lax.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _qr_matmul(lax.sub(qt_dx_rinv, do), r)
    return dq, dr


def _qr_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, pivoting: bool, full_matrices: bool, use_magma: Any) -> tuple[Any, Any]:
    ops, lax = _ops(), _lax()
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    aval = get_aval(x)
    *batch, m, n = aval.shape
    nd = aval.ndim

    def cols(v: Any, start: int, stop: int) -> Any:
        shape = get_aval(v).shape
        return lax.slice(v, (0,) * (nd - 1) + (start,), (*shape[:-1], stop))

    def rows(v: Any, start: int, stop: int) -> Any:
        shape = get_aval(v).shape
        return lax.slice(v, (0,) * (nd - 2) + (start, 0), (*shape[:-2], stop, shape[-1]))

    if m < n:  # wide: X = Q [R1 R2] with R1 square; dR2 = dQᵀ X2 + Qᵀ dX2
        x2, dx1, dx2, r1 = cols(x, m, n), cols(dx, 0, m), cols(dx, m, n), cols(r, 0, m)
        dq, dr1 = _thin_qr_jvp(q, r1, dx1)
        dr2 = lax.add(_qr_matmul(ops._T(dq), x2), _qr_matmul(ops._T(q), dx2))
        return [q, r], [dq, lax.concatenate([dr1, dr2], nd - 1)]
    q_mn = cols(q, 0, n) if full_matrices else q
    r_nn = rows(r, 0, n) if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return [q, r], [dq_mn, dr_nn]
    # Tall with a full Q: the last m - n columns of Q move too (arXiv:2409.13374, eqs. 32-33).
    q_nn, q_pn, q_mp = rows(q_mn, 0, n), rows(q_mn, n, m), cols(q, n, m)
    dq_nn, dq_pn = rows(dq_mn, 0, n), rows(dq_mn, n, m)
    eye_n = lax.expand_dims(ops._eye(aval.dtype, (n, n)), tuple(range(nd - 2)))
    lu, _, perm = lu_p.bind(lax.sub(q_nn, eye_n))
    z_pn_t = ops._lu_solve(lu, perm, ops._T(q_pn), trans=1)  # (Q_nn - I)ᵀ Zᵀ = Q_pnᵀ
    z_pn = ops._T(z_pn_t)
    correction = _qr_matmul(lax.add(q_mn, _qr_matmul(q_mp, z_pn)), ops._T(lax.sub(dq_pn, _qr_matmul(z_pn, dq_nn))))
    dq_mp = lax.sub(_qr_matmul(dq_mn, z_pn_t), correction)
    dq = lax.concatenate([dq_mn, dq_mp], nd - 1)
    zeros = lax.full((*batch, m - n, n), 0, aval.dtype)
    return [q, r], [dq, lax.concatenate([dr_nn, zeros], nd - 2)]


ad.primitive_jvps[qr_p] = _qr_jvp


# --- eigh: nondegenerate perturbation theory. With A = V diag(w) Vᵀ,
# ẇ = diag(Vᵀ Ȧ V) and V̇ = V (F ∘ Vᵀ Ȧ V), F_ij = 1/(w_j - w_i) off the
# diagonal and 0 on it (Giles, "An extended collection of matrix derivative
# results", 2008). Eigenvalues must be distinct.


def _eigh_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, lower: bool, sort_eigenvalues: bool, subset_by_index: Any, algorithm: Any
) -> tuple[Any, Any]:
    ops, lax = _ops(), _lax()
    (a,), (a_dot,) = primals, tangents
    aval = get_aval(a)
    n = aval.shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w = eigh_p.bind(a, lower=lower, sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index, algorithm=algorithm)
    a_dot = _read_triangle(a_dot, lower)
    eye_n = lax.expand_dims(ops._eye(aval.dtype, (n, n)), tuple(range(aval.ndim - 2)))
    gaps = lax.sub(lax.add(eye_n, lax.expand_dims(w, (aval.ndim - 2,))), lax.expand_dims(w, (aval.ndim - 1,)))
    fmat = lax.sub(lax.integer_pow(gaps, -1), eye_n)
    vt_adot_v = ops._matmul(ops._matmul(ops._T(v), a_dot), v)
    dv = ops._matmul(v, lax.mul(fmat, vt_adot_v))
    dw = ops._diagonal(vt_adot_v)
    return [v, w], [dv, dw]


ad.primitive_jvps[eigh_p] = _eigh_jvp


# --- svd: with A = U diag(s) Vᵀ (reduced), ṡ = diag(Uᵀ Ȧ V) and the
# singular vectors from F_ij = 1/(s_j² - s_i²); the extra terms for tall and
# wide matrices project Ȧ onto the complements of U's and V's columns
# (Townsend, "Differentiating the singular value decomposition", 2016).
# Singular values must be distinct; full U/V of a non-square matrix have no
# rule (as in JAX), nor have the vectors of a partial SVD (JAX computes one
# only on TPU, with a rule that would be wrong for it).


def _svd_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool, compute_uv: bool, subset_by_index: Any, algorithm: Any
) -> tuple[Any, Any]:
    ops, lax = _ops(), _lax()
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
    ut, v = ops._T(u), ops._T(vt)
    s_row = lax.expand_dims(s, (nd - 2,))  # s[..., None, :]
    ds_mat = ops._matmul(ops._matmul(ut, da), v)
    ds = ops._diagonal(ds_mat)
    if not compute_uv:
        return [s], [ds]
    s_col = ops._T(s_row)
    k = get_aval(s).shape[-1]
    eye_k = lax.expand_dims(ops._eye(aval.dtype, (k, k)), tuple(range(nd - 2)))
    s_diffs = lax.mul(lax.add(s_row, s_col), lax.sub(s_row, s_col))
    f = lax.sub(lax.div(np.ones((), aval.dtype), lax.add(s_diffs, eye_k)), eye_k)
    dss = lax.mul(s_row, ds_mat)  # dS diag(s)
    sds = lax.mul(s_col, ds_mat)  # diag(s) dS
    # JAX adds ½ (dS - dSᴴ) ∘ diag(1/s) to dU's bracket: zero for real matrices, so left out.
    du = ops._matmul(u, lax.mul(f, lax.add(dss, ops._T(dss))))
    dv = ops._matmul(v, lax.mul(f, lax.add(sds, ops._T(sds))))
    if m > n:
        dav = ops._matmul(da, v)
        du = lax.add(du, lax.div(lax.sub(dav, ops._matmul(u, ops._matmul(ut, dav))), s_row))
    if n > m:
        dahu = ops._matmul(ops._T(da), u)
        dv = lax.add(dv, lax.div(lax.sub(dahu, ops._matmul(v, ops._matmul(vt, dahu))), s_row))
    return [s, u, vt], [ds, du, ops._T(dv)]


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


for _prim in (cholesky_p, lu_p, lu_pivots_to_permutation_p, qr_p, eigh_p, svd_p):
    batching.primitive_batchers[_prim] = _batch_at_front(_prim)


def _triangular_solve_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, left_side: bool, **params: Any) -> tuple[Any, BatchDim]:
    """When only b is batched, the batch becomes more right-hand sides of one solve (as in JAX)."""
    lax = _lax()
    a, b = vals
    a_dim, b_dim = dims
    if a_dim is None and b_dim is not None:
        b_aval = get_aval(b)
        if left_side:  # b: (..., m, n): the batch joins the n columns
            b = batching.moveaxis(b, b_dim, -1)
            shape = get_aval(b).shape
            flat = lax.reshape(b, (*shape[:-2], shape[-2] * shape[-1]))
            out_dim = b_aval.ndim - 1
        else:  # b: (..., m, n): the batch joins the m rows
            b = batching.moveaxis(b, b_dim, -2)
            shape = get_aval(b).shape
            flat = lax.reshape(b, (*shape[:-3], shape[-3] * shape[-2], shape[-1]))
            out_dim = b_aval.ndim - 2
        out = triangular_solve_p.bind(a, flat, left_side=left_side, **params)
        return lax.reshape(out, shape), out_dim
    size = batching.batch_size(vals, dims)
    a, b = batching.bdim_at_front(a, a_dim, size), batching.bdim_at_front(b, b_dim, size)
    return triangular_solve_p.bind(a, b, left_side=left_side, **params), 0


batching.primitive_batchers[triangular_solve_p] = _triangular_solve_batcher
