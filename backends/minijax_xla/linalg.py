"""XLA lowerings of the linalg primitives: calls of jaxlib's LAPACK kernels (``lapack.py``).

Each decomposition is one typed-FFI custom call on the whole batch of
matrices (potrf, trsm, getrf, geqrf + orgqr, syevd, gesdd/gesvd), wrapped in
the few StableHLO ops that give the results the meaning
``spec/primitives/linalg.md`` states and the NumPy backend computes:

* float16/bfloat16 operands are converted to float32 around the call;
* a failure LAPACK reports (``info != 0``), or a non-finite element in the
  part of the matrix cholesky/eigh/svd read, makes that matrix's results NaN;
* cholesky's factor has zeros above the diagonal (potrf leaves the input
  there), qr's R zeros below it, LU pivots are 0-based;
* empty matrices never reach LAPACK: their (empty or identity) results are
  constants.

``lu_pivots_to_permutation`` (and the permutation ``lu`` returns) is a
``stablehlo.while`` over the row swaps, each swap a few elementwise selects
over the batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

import minijax.numpy as jnp
from minijax import lax
from minijax.core import ShapedArray, shape_size
from minijax.interpreters.tracing import DebugInfo, trace_to_jaxpr
from minijax.primitives.linalg import SvdAlgorithm
from minijax_xla import jaxlib_api, lapack
from minijax_xla.jaxlib_api import tensor_type
from minijax_xla.lowering import LoweringRuleContext, constant, emit_jaxpr, register

Value = Any  # an ir.Value
DType = np.dtype[Any]
Shape = tuple[int, ...]

_I32 = np.dtype(np.int32)
_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)


# ---------------------------------------------------------------------------
# Small StableHLO helpers


def _working(dtype: DType) -> DType:
    """The dtype LAPACK computes ``dtype`` in: float32 for float16/bfloat16."""
    return dtype if dtype in (np.float32, np.float64, np.complex64, np.complex128) else _F32


def _real(dtype: DType) -> DType:
    """The dtype of the real part (complex64 -> float32; real dtypes stay)."""
    return np.dtype(np.finfo(dtype).dtype) if dtype.kind == "c" else dtype


def _conj(x: Value, shape: Shape, dtype: DType) -> Value:
    """The complex conjugate (StableHLO has no conj op: re - i im)."""
    if dtype.kind != "c":
        return x
    return hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))


def _convert(x: Value, shape: Shape, src: DType, dst: DType) -> Value:
    return x if src == dst else hlo.convert(tensor_type(shape, dst), x)


def _full(value: Any, dtype: DType, shape: Shape) -> Value:
    """``value`` broadcast to ``shape``."""
    scalar = constant(value, dtype)
    return scalar if not shape else hlo.broadcast_in_dim(tensor_type(shape, dtype), scalar, [])


def _broadcast_leading(x: Value, from_shape: Shape, shape: Shape, dtype: DType) -> Value:
    """``x`` (of ``from_shape``, a prefix of ``shape`` up to size-1 axes) broadcast to ``shape``."""
    if tuple(from_shape) == tuple(shape):
        return x
    return hlo.broadcast_in_dim(tensor_type(shape, dtype), x, list(range(len(from_shape))))


def _compare(a: Value, b: Value, direction: str, kind: str) -> Value:
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction), compare_type=hlo.ComparisonTypeAttr.get(kind))


def _iota(shape: Shape, dimension: int) -> Value:
    return hlo.iota(tensor_type(shape, _I32), dimension)


def _triangle_mask(shape: Shape, lower: bool, k: int = 0) -> Value:
    """bool[shape]: True on and below diagonal ``k`` (``lower``), or on and above it."""
    nd = len(shape)
    rows, cols = _iota(shape, nd - 2), _iota(shape, nd - 1)
    shifted = hlo.add(rows, _full(k, _I32, shape))
    return _compare(shifted, cols, "GE" if lower else "LE", "SIGNED")


def _reduce(x: Value, init: Value, dtype: DType, out_shape: Shape, axes: Sequence[int], combine: Callable[[Value, Value], Value]) -> Value:
    op = hlo.ReduceOp([tensor_type(out_shape, dtype)], [x], [init], [int(a) for a in axes])
    scalar = tensor_type((), dtype)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([combine(*block.arguments)])
    return op.results[0]


def _all_finite(x: Value, shape: Shape) -> Value:
    """bool[batch]: whether each matrix (the last two axes) is finite everywhere."""
    nd = len(shape)
    if isinstance(ir.RankedTensorType(x.type).element_type, ir.ComplexType):
        finite = hlo.and_(hlo.is_finite(hlo.real(x)), hlo.is_finite(hlo.imag(x)))
    else:
        finite = hlo.is_finite(x)
    return _reduce(finite, constant(True, _BOOL), _BOOL, shape[:-2], (nd - 2, nd - 1), hlo.and_)


def _nan_unless(ok: Value, x: Value, batch: Shape, shape: Shape, dtype: DType) -> Value:
    """x where the batch element is ``ok``, NaN everywhere in the others."""
    mask = _broadcast_leading(ok, batch, shape, _BOOL)
    return hlo.select(mask, x, _full(np.nan, dtype, shape))


def _slice_last(x: Value, shape: Shape, axis_from_end: int, start: int, stop: int) -> Value:
    """x restricted to [start, stop) along axis ``-axis_from_end``."""
    nd = len(shape)
    axis = nd - axis_from_end
    starts = [0] * nd
    limits = list(shape)
    starts[axis], limits[axis] = start, stop
    return hlo.slice(x, starts, limits, [1] * nd)


def _info_ok(info: Value, batch: Shape, direction: str = "EQ") -> Value:
    return _compare(info, _full(0, _I32, batch), direction, "SIGNED")


def _matrix_io(rank: int, count: int) -> list[tuple[int, ...]]:
    return [lapack.matrix_layout(rank)] * count


def _on_gpu(ctx: LoweringRuleContext) -> bool:
    return getattr(ctx.module_context, "platform", "cpu") == "gpu"


# The same column-major kernels exist twice: LAPACK's on the host (from jaxlib)
# and cuSOLVER's on an NVIDIA GPU (from the CUDA plugin). The cuSOLVER ones take
# any float dtype under one name, and spell their options as booleans.
def _target(ctx: LoweringRuleContext, routine: str, dt: DType) -> str:
    return f"cusolver_{routine}_ffi" if _on_gpu(ctx) else lapack.target_name(routine, dt)


def _flag(value: bool) -> ir.Attribute:
    return ir.BoolAttr.get(value)


# ---------------------------------------------------------------------------
# cholesky: potrf, lower


@register("cholesky")
def _cholesky(ctx: LoweringRuleContext, x: Value) -> list[Value]:
    (aval,) = ctx.avals_in
    shape, batch = aval.shape, aval.shape[:-2]
    dt = _working(aval.dtype)
    if aval.size == 0:
        return [x]
    x = _convert(x, shape, aval.dtype, dt)
    lower = _triangle_mask(shape, lower=True)
    read = hlo.select(lower, x, _full(0, dt, shape))
    factor, info = lapack.call(
        _target(ctx, "potrf", dt), [x], [tensor_type(shape, dt), tensor_type(batch, _I32)],
        operand_layouts=_matrix_io(len(shape), 1),
        result_layouts=[lapack.matrix_layout(len(shape)), lapack.row_major_layout(len(batch))],
        attributes={"lower": _flag(True)} if _on_gpu(ctx) else {"uplo": lapack.char_attr("L")}, aliases={0: 0},
    )  # fmt: skip
    ok = hlo.and_(_info_ok(info, batch), _all_finite(read, shape))
    factor = hlo.select(lower, factor, _full(0, dt, shape))  # potrf leaves the upper triangle as it was
    return [_convert(_nan_unless(ok, factor, batch, shape, dt), shape, dt, aval.dtype)]


# ---------------------------------------------------------------------------
# triangular_solve: trsm


@register("triangular_solve")
def _triangular_solve(
    ctx: LoweringRuleContext, a: Value, b: Value, *, left_side: bool, lower: bool, transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
) -> list[Value]:
    a_aval, b_aval = ctx.avals_in
    if a_aval.size == 0 or b_aval.size == 0:  # nothing to solve: b is empty too
        return [b] if b_aval.size == 0 else [_full(0, b_aval.dtype, b_aval.shape)]
    dt = _working(b_aval.dtype)
    a = _convert(a, a_aval.shape, a_aval.dtype, dt)
    b = _convert(b, b_aval.shape, b_aval.dtype, dt)
    if conjugate_a and not transpose_a:  # trsm conjugates only along with the transpose ('C')
        a, conjugate_a = _conj(a, a_aval.shape, dt), False
    if _on_gpu(ctx):  # XLA's own op, which XLA:GPU runs with cuBLAS
        transpose = hlo.TransposeAttr.get("ADJOINT" if conjugate_a else "TRANSPOSE" if transpose_a else "NO_TRANSPOSE")
        solved = hlo.triangular_solve(a, b, left_side, lower, unit_diagonal, transpose)
        return [_convert(solved, b_aval.shape, dt, b_aval.dtype)]
    (out,) = lapack.call(
        lapack.target_name("trsm", dt), [a, b], [tensor_type(b_aval.shape, dt)],
        operand_layouts=_matrix_io(a_aval.ndim, 2), result_layouts=_matrix_io(b_aval.ndim, 1),
        attributes={
            "side": lapack.char_attr("L" if left_side else "R"),
            "uplo": lapack.char_attr("L" if lower else "U"),
            "trans_x": lapack.char_attr("C" if conjugate_a else "T" if transpose_a else "N"),
            "diag": lapack.char_attr("U" if unit_diagonal else "N"),
        },
        aliases={0: 1},
    )  # fmt: skip
    return [_convert(out, b_aval.shape, dt, b_aval.dtype)]


# ---------------------------------------------------------------------------
# lu: getrf; the permutation from the pivots


def _pivots_to_permutation(pivots: Value, batch: Shape, k: int, size: int) -> Value:
    """The permutation the row swaps ``pivots`` (int32[*batch, k]) make of ``range(size)``.

    A while loop over the k swaps. Swap i exchanges entries i and j =
    pivots[..., i] of every permutation in the batch: a negative j counts
    from the end, reading clamps j into range and writing out of range is
    dropped (what JAX's loop does with ``.at[j].set``). Each read and write
    is a select against an iota, so the batch needs no gather.
    """
    shape = (*batch, size)
    nd = len(shape)
    start = _iota(shape, nd - 1)
    if k == 0 or size == 0 or shape_size(shape) == 0:
        return start
    scalar = tensor_type((), _I32)
    types = [scalar, tensor_type(shape, _I32), tensor_type((*batch, k), _I32)]
    loop = hlo.WhileOp(types, [constant(0, _I32), start, pivots])

    cond = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(cond):
        hlo.return_([_compare(cond.arguments[0], constant(k, _I32), "LT", "SIGNED")])

    body = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(body):
        i, perm, piv = body.arguments
        one_shape = (*batch, 1)
        zeros = [constant(0, _I32)] * len(batch)

        def spread(v: Value) -> Value:  # int32[*batch, 1] -> int32[*batch, size]
            return hlo.broadcast_in_dim(tensor_type(shape, _I32), v, list(range(nd)))

        def full(value: int) -> Value:
            return _full(value, _I32, one_shape)

        position = _iota(shape, nd - 1)
        j = hlo.dynamic_slice(piv, [*zeros, i], list(one_shape))
        j = hlo.select(_compare(j, full(0), "LT", "SIGNED"), hlo.add(j, full(size)), j)
        clamped = hlo.clamp(full(0), j, full(size - 1))
        x = hlo.dynamic_slice(perm, [*zeros, i], list(one_shape))
        at_j = _compare(position, spread(clamped), "EQ", "SIGNED")
        picked = hlo.select(at_j, perm, _full(0, _I32, shape))
        y = hlo.reshape(tensor_type(one_shape, _I32), _reduce(picked, constant(0, _I32), _I32, batch, (nd - 1,), hlo.add))
        i_shape = hlo.broadcast_in_dim(tensor_type(shape, _I32), i, [])
        perm = hlo.select(_compare(position, i_shape, "EQ", "SIGNED"), spread(y), perm)
        inside = hlo.and_(_compare(j, full(0), "GE", "SIGNED"), _compare(j, full(size), "LT", "SIGNED"))
        write = hlo.and_(_compare(position, spread(j), "EQ", "SIGNED"), hlo.broadcast_in_dim(tensor_type(shape, _BOOL), inside, list(range(nd))))
        perm = hlo.select(write, spread(x), perm)
        hlo.return_([hlo.add(i, constant(1, _I32)), perm, piv])
    return loop.results[1]


@register("lu_pivots_to_permutation")
def _lu_pivots_to_permutation(ctx: LoweringRuleContext, pivots: Value, *, permutation_size: int) -> list[Value]:
    (aval,) = ctx.avals_in
    return [_pivots_to_permutation(pivots, aval.shape[:-1], aval.shape[-1], int(permutation_size))]


@register("lu")
def _lu(ctx: LoweringRuleContext, x: Value) -> list[Value]:
    (aval,) = ctx.avals_in
    shape = aval.shape
    *batch_list, m, n = shape
    batch = tuple(batch_list)
    k = min(m, n)
    if aval.size == 0:
        return [x, _full(0, _I32, (*batch, k)), _pivots_to_permutation(_full(0, _I32, (*batch, k)), batch, 0, m)]
    dt = _working(aval.dtype)
    x = _convert(x, shape, aval.dtype, dt)
    lu, ipiv, info = lapack.call(
        _target(ctx, "getrf", dt), [x],
        [tensor_type(shape, dt), tensor_type((*batch, k), _I32), tensor_type(batch, _I32)],
        operand_layouts=_matrix_io(len(shape), 1),
        result_layouts=[lapack.matrix_layout(len(shape)), lapack.row_major_layout(len(batch) + 1), lapack.row_major_layout(len(batch))],
        aliases={0: 0},
    )  # fmt: skip
    pivots = hlo.subtract(ipiv, _full(1, _I32, (*batch, k)))  # LAPACK counts rows from 1
    # info > 0 only says that U is singular (a zero pivot): the factors are still right.
    lu = _nan_unless(_info_ok(info, batch, "GE"), lu, batch, shape, dt)
    return [_convert(lu, shape, dt, aval.dtype), pivots, _pivots_to_permutation(pivots, batch, k, m)]


# ---------------------------------------------------------------------------
# qr: geqrf, then orgqr builds Q from the Householder reflectors


def _eye(shape: Shape, dtype: DType) -> Value:
    nd = len(shape)
    same = _compare(_iota(shape, nd - 2), _iota(shape, nd - 1), "EQ", "SIGNED")
    return hlo.select(same, _full(1, dtype, shape), _full(0, dtype, shape))


def _orgqr(ctx: LoweringRuleContext, a: Value, a_shape: Shape, taus: Value, taus_shape: Shape, dt: DType) -> Value:
    (q,) = lapack.call(
        _target(ctx, "orgqr", dt), [a, taus], [tensor_type(a_shape, dt)],
        operand_layouts=[lapack.matrix_layout(len(a_shape)), lapack.row_major_layout(len(taus_shape))],
        result_layouts=_matrix_io(len(a_shape), 1), aliases={0: 0},
    )  # fmt: skip
    return q


@register("qr")
def _qr(ctx: LoweringRuleContext, x: Value, *, pivoting: bool, full_matrices: bool, use_magma: Any) -> list[Value]:
    (aval,) = ctx.avals_in
    q_aval, r_aval = ctx.avals_out
    shape = aval.shape
    *batch_list, m, n = shape
    batch = tuple(batch_list)
    if aval.size == 0:  # Q is the identity's first columns, R is empty or zero
        return [_eye(q_aval.shape, aval.dtype), _full(0, aval.dtype, r_aval.shape)]
    dt = _working(aval.dtype)
    x = _convert(x, shape, aval.dtype, dt)
    k = min(m, n)
    taus_shape = (*batch, k)
    r, taus = lapack.call(
        _target(ctx, "geqrf", dt), [x], [tensor_type(shape, dt), tensor_type(taus_shape, dt)],
        operand_layouts=_matrix_io(len(shape), 1),
        result_layouts=[lapack.matrix_layout(len(shape)), lapack.row_major_layout(len(taus_shape))], aliases={0: 0},
    )  # fmt: skip
    nd = len(shape)
    if m < n:  # Q from the first m columns; R is all of r
        square = (*batch, m, m)
        q = _orgqr(ctx, _slice_last(r, shape, 1, 0, m), square, taus, taus_shape, dt)
    elif full_matrices:  # pad the reflectors to m columns for a square Q
        padded = (*batch, m, m)
        zero = constant(0, dt)
        q_in = hlo.pad(r, zero, [0] * nd, [0] * (nd - 1) + [m - n], [0] * nd)
        q = _orgqr(ctx, q_in, padded, taus, taus_shape, dt)
    else:
        q = _orgqr(ctx, r, shape, taus, taus_shape, dt)
        r = _slice_last(r, shape, 2, 0, n)
    r_shape = r_aval.shape
    r = hlo.select(_triangle_mask(r_shape, lower=False), r, _full(0, dt, r_shape))
    return [_convert(q, q_aval.shape, dt, aval.dtype), _convert(r, r_shape, dt, aval.dtype)]


# ---------------------------------------------------------------------------
# eigh: syevd


def _syevd_attributes(ctx: LoweringRuleContext, lower: bool) -> dict[str, ir.Attribute]:
    if _on_gpu(ctx):  # algorithm 0: cuSOLVER's default (divide and conquer)
        return {"lower": _flag(lower), "algorithm": ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), 0)}
    return {"mode": lapack.char_attr("V"), "uplo": lapack.char_attr("L" if lower else "U")}


@register("eigh")
def _eigh(ctx: LoweringRuleContext, x: Value, *, lower: bool, sort_eigenvalues: bool, subset_by_index: Any, algorithm: Any) -> list[Value]:
    (aval,) = ctx.avals_in
    v_aval, w_aval = ctx.avals_out
    shape = aval.shape
    batch, n = shape[:-2], shape[-1]
    if aval.size == 0:
        return [_full(0, aval.dtype, v_aval.shape), _full(0, w_aval.dtype, w_aval.shape)]
    dt = _working(aval.dtype)
    x = _convert(x, shape, aval.dtype, dt)
    read = hlo.select(_triangle_mask(shape, lower), x, _full(0, dt, shape))
    rdt = _real(dt)  # the eigenvalues of a Hermitian matrix are real
    v, w, info = lapack.call(
        _target(ctx, "syevd", dt), [x],
        [tensor_type(shape, dt), tensor_type((*batch, n), rdt), tensor_type(batch, _I32)],
        operand_layouts=_matrix_io(len(shape), 1),
        result_layouts=[lapack.matrix_layout(len(shape)), lapack.row_major_layout(len(batch) + 1), lapack.row_major_layout(len(batch))],
        attributes=_syevd_attributes(ctx, lower), aliases={0: 0},
    )  # fmt: skip
    ok = hlo.and_(_info_ok(info, batch), _all_finite(read, shape))
    v = _nan_unless(ok, v, batch, shape, dt)
    w = _nan_unless(ok, w, batch, (*batch, n), rdt)
    if subset_by_index is not None:  # syevd computes them all (sorted ascending): keep the range asked
        start, end = subset_by_index
        v = _slice_last(v, shape, 1, start, end)
        w = _slice_last(w, (*batch, n), 1, start, end)
    return [_convert(v, v_aval.shape, dt, aval.dtype), _convert(w, w_aval.shape, rdt, w_aval.dtype)]


# ---------------------------------------------------------------------------
# eig (cla, issue 19): geev. For real matrices jaxlib's kernel returns the
# eigenvalues as real and imaginary parts and unpacks LAPACK's packed
# conjugate-pair eigenvectors into complex ones itself.


def _geev_mode(compute: bool) -> ir.Attribute:
    # jaxlib's eig::ComputationMode: 'V' (kComputeEigenvectors) or 'N' (kNoEigenvectors).
    return lapack.char_attr("V" if compute else "N")


@register("eig")
def _eig(
    ctx: LoweringRuleContext, x: Value, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool, implementation: Any,
) -> list[Value]:
    _cpu_only(ctx, "eig", "geev")
    (aval,) = ctx.avals_in
    shape = aval.shape
    batch, n = shape[:-2], shape[-1]
    if aval.size == 0:
        return _empty_results(ctx)
    dt = _working(aval.dtype)
    x = _convert(x, shape, aval.dtype, dt)
    cdt = np.dtype(np.result_type(dt, np.complex64))
    nd = len(shape)
    w_shape = (*batch, n)
    vector_types = [tensor_type(shape, cdt), tensor_type(shape, cdt), tensor_type(batch, _I32)]
    vector_layouts = [lapack.matrix_layout(nd), lapack.matrix_layout(nd), lapack.row_major_layout(nd - 2)]
    real = dt.kind != "c"
    w_types = [tensor_type(w_shape, dt)] * (2 if real else 1)
    results = lapack.call(
        lapack.target_name("geev", dt), [x], [*w_types, *vector_types],
        operand_layouts=_matrix_io(nd, 1),
        result_layouts=[lapack.row_major_layout(nd - 1)] * len(w_types) + vector_layouts,
        attributes={"compute_left": _geev_mode(compute_left_eigenvectors), "compute_right": _geev_mode(compute_right_eigenvectors)},
    )  # fmt: skip
    *w_parts, vl, vr, info = results
    w = hlo.complex(*w_parts) if real else w_parts[0]
    ok = hlo.and_(_info_ok(info, batch), _all_finite(x, shape))
    outs = [_nan_unless(ok, w, batch, w_shape, cdt)]
    if compute_left_eigenvectors:
        outs.append(_nan_unless(ok, vl, batch, shape, cdt))
    if compute_right_eigenvectors:
        outs.append(_nan_unless(ok, vr, batch, shape, cdt))
    return [_convert(v, a.shape, cdt, a.dtype) for v, a in zip(outs, ctx.avals_out)]


# ---------------------------------------------------------------------------
# svd: gesdd (divide and conquer, the default) or gesvd (QR iteration)


def _svd_target(algorithm: Any, dt: DType) -> str:
    return lapack.target_name("gesvd" if algorithm == SvdAlgorithm.QR else "gesdd", dt)


def _gesvd_on_gpu(x: Value, shape: Shape, dt: DType, *, full_matrices: bool, compute_uv: bool) -> tuple[Value, Value, Value, Value]:
    """s, U, Vh and info from cuSOLVER's gesvd (QR iteration; the algorithm
    option only chooses between LAPACK's two, so the GPU takes this one).

    cuSOLVER's gesvd needs m >= n: a wide matrix is handed over in row-major
    order, which it reads as the (tall) transpose, and the transpose's U and
    Vh are the matrix's Vh and U. Without U and Vh the kernel still returns
    two (unused) scalars in their places.
    """
    *batch_list, m, n = shape
    batch, k, nd = tuple(batch_list), min(m, n), len(shape)
    u_shape = (*batch, m, m if full_matrices else k) if compute_uv else ()
    vt_shape = (*batch, n if full_matrices else k, n) if compute_uv else ()
    transposed = m < n
    shapes = [shape, (*batch, k), *((vt_shape, u_shape) if transposed else (u_shape, vt_shape)), batch]
    layouts = [lapack.matrix_layout(nd) if len(r) == nd and not transposed else lapack.row_major_layout(len(r)) for r in shapes]
    _, s, first, second, info = lapack.call(
        "cusolver_gesvd_ffi", [x],
        [tensor_type(r, _I32 if i == 4 else _real(dt) if i == 1 else dt) for i, r in enumerate(shapes)],
        operand_layouts=layouts[:1], result_layouts=layouts,
        attributes={"full_matrices": _flag(full_matrices), "compute_uv": _flag(compute_uv), "transposed": _flag(transposed)},
        aliases={0: 0},
    )  # fmt: skip
    return (s, second, first, info) if transposed else (s, first, second, info)


@register("svd")
def _svd(ctx: LoweringRuleContext, x: Value, *, full_matrices: bool, compute_uv: bool, subset_by_index: Any, algorithm: Any) -> list[Value]:
    (aval,) = ctx.avals_in
    shape = aval.shape
    *batch_list, m, n = shape
    batch = tuple(batch_list)
    k = min(m, n)
    if aval.size == 0:  # no singular values; full U and Vh are identities
        outs = [_full(0, ctx.avals_out[0].dtype, ctx.avals_out[0].shape)]
        if compute_uv:
            u_aval, vt_aval = ctx.avals_out[1:]
            make = _eye if full_matrices else (lambda s, d: _full(0, d, s))
            outs += [make(u_aval.shape, aval.dtype), make(vt_aval.shape, aval.dtype)]
        return outs
    dt = _working(aval.dtype)
    x = _convert(x, shape, aval.dtype, dt)
    mode = "N" if not compute_uv else "A" if full_matrices else "S"
    u_shape = (*batch, m, m if full_matrices else k)
    vt_shape = (*batch, n if full_matrices else k, n)
    s_shape = (*batch, k)
    nd = len(shape)
    if _on_gpu(ctx):
        s, u, vt, info = _gesvd_on_gpu(x, shape, dt, full_matrices=full_matrices, compute_uv=compute_uv)
    else:
        _, s, u, vt, info = lapack.call(
            _svd_target(algorithm, dt), [x],
            [tensor_type(shape, dt), tensor_type(s_shape, _real(dt)), tensor_type(u_shape, dt), tensor_type(vt_shape, dt), tensor_type(batch, _I32)],
            operand_layouts=_matrix_io(nd, 1),
            result_layouts=[lapack.matrix_layout(nd), lapack.row_major_layout(nd - 1), lapack.matrix_layout(nd), lapack.matrix_layout(nd), lapack.row_major_layout(nd - 2)],
            attributes={"mode": lapack.char_attr(mode)}, aliases={0: 0},
        )  # fmt: skip
    ok = hlo.and_(_info_ok(info, batch), _all_finite(x, shape))
    s = _nan_unless(ok, s, batch, s_shape, _real(dt))
    if subset_by_index is not None:
        start, end = subset_by_index
        s = _slice_last(s, s_shape, 1, start, end)
    outs = [_convert(s, ctx.avals_out[0].shape, _real(dt), ctx.avals_out[0].dtype)]
    if compute_uv:
        u = _nan_unless(ok, u, batch, u_shape, dt)
        vt = _nan_unless(ok, vt, batch, vt_shape, dt)
        if subset_by_index is not None:
            u = _slice_last(u, u_shape, 1, start, end)
            vt = _slice_last(vt, vt_shape, 2, start, end)
        u_aval, vt_aval = ctx.avals_out[1:]
        outs += [_convert(u, u_aval.shape, dt, aval.dtype), _convert(vt, vt_aval.shape, dt, aval.dtype)]
    return outs


# ---------------------------------------------------------------------------
# The Householder family: orgqr, ormqr, gehrd, sytrd, gees. The vectors of a
# batch (taus, diagonals) are row-major; the matrices column-major.


def _i32_attr(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))


def _empty_results(ctx: LoweringRuleContext) -> list[Value]:
    return [_full(0, a.dtype, a.shape) for a in ctx.avals_out]


def _cpu_only(ctx: LoweringRuleContext, name: str, routine: str) -> None:
    if _on_gpu(ctx):
        raise NotImplementedError(
            f"{name} is not implemented on the gpu platform: JAX computes it with LAPACK's {routine} on the CPU only "
            "(jaxlib has no cuSOLVER kernel for it); run it on the CPU."
        )


@register("householder_product")
def _householder_product(ctx: LoweringRuleContext, a: Value, taus: Value) -> list[Value]:
    a_aval, taus_aval = ctx.avals_in
    if a_aval.size == 0:
        return _empty_results(ctx)
    dt = _working(a_aval.dtype)
    a = _convert(a, a_aval.shape, a_aval.dtype, dt)
    taus = _convert(taus, taus_aval.shape, taus_aval.dtype, dt)
    q = _orgqr(ctx, a, a_aval.shape, taus, taus_aval.shape, dt)
    return [_convert(q, a_aval.shape, dt, a_aval.dtype)]


@register("ormqr")
def _ormqr(ctx: LoweringRuleContext, a: Value, taus: Value, c: Value, *, left: bool, transpose: bool) -> list[Value]:
    a_aval, taus_aval, c_aval = ctx.avals_in
    if c_aval.size == 0:
        return [c]
    if a_aval.size == 0 or taus_aval.shape[-1] == 0:  # no reflectors: Q = I
        return [c]
    dt = _working(c_aval.dtype)
    a, taus, c = (_convert(v, av.shape, av.dtype, dt) for v, av in zip((a, taus, c), ctx.avals_in))
    nd = c_aval.ndim
    (out,) = lapack.call(
        _target(ctx, "ormqr", dt), [a, taus, c], [tensor_type(c_aval.shape, dt)],
        operand_layouts=[lapack.matrix_layout(nd), lapack.row_major_layout(nd - 1), lapack.matrix_layout(nd)],
        result_layouts=_matrix_io(nd, 1), attributes={"left": _flag(left), "transpose": _flag(transpose)},
        aliases={0: 2},
    )  # fmt: skip
    return [_convert(out, c_aval.shape, dt, c_aval.dtype)]


@register("hessenberg")
def _hessenberg(ctx: LoweringRuleContext, a: Value) -> list[Value]:
    _cpu_only(ctx, "hessenberg", "gehrd")
    (aval,) = ctx.avals_in
    shape, batch, n = aval.shape, aval.shape[:-2], aval.shape[-1]
    if aval.size == 0:
        return _empty_results(ctx)
    dt = _working(aval.dtype)
    a = _convert(a, shape, aval.dtype, dt)
    taus_shape = (*batch, n - 1)
    h, taus, info = lapack.call(
        lapack.target_name("gehrd", dt), [a],
        [tensor_type(shape, dt), tensor_type(taus_shape, dt), tensor_type(batch, _I32)],
        operand_layouts=_matrix_io(len(shape), 1),
        result_layouts=[lapack.matrix_layout(len(shape)), lapack.row_major_layout(len(taus_shape)), lapack.row_major_layout(len(batch))],
        attributes={"low": _i32_attr(1), "high": _i32_attr(n)}, aliases={0: 0},
    )  # fmt: skip
    ok = _info_ok(info, batch)
    return [
        _convert(_nan_unless(ok, h, batch, shape, dt), shape, dt, aval.dtype),
        _convert(_nan_unless(ok, taus, batch, taus_shape, dt), taus_shape, dt, aval.dtype),
    ]


@register("tridiagonal")
def _tridiagonal(ctx: LoweringRuleContext, a: Value, *, lower: bool) -> list[Value]:
    (aval,) = ctx.avals_in
    shape, batch, n = aval.shape, aval.shape[:-2], aval.shape[-1]
    if aval.size == 0:
        return _empty_results(ctx)
    dt = _working(aval.dtype)
    a = _convert(a, shape, aval.dtype, dt)
    shapes = [shape, (*batch, n), (*batch, n - 1), (*batch, n - 1)]
    # hetrd returns the (real) diagonals in the real dtype of its complex operand.
    kinds = [dt, _real(dt), _real(dt), dt]
    attributes = {"lower": _flag(lower)} if _on_gpu(ctx) else {"uplo": lapack.char_attr("L" if lower else "U")}
    *outs, info = lapack.call(
        _target(ctx, "sytrd", dt), [a], [*(tensor_type(s, k) for s, k in zip(shapes, kinds)), tensor_type(batch, _I32)],
        operand_layouts=_matrix_io(len(shape), 1),
        result_layouts=[lapack.matrix_layout(len(shape)), *(lapack.row_major_layout(len(s)) for s in shapes[1:]), lapack.row_major_layout(len(batch))],
        attributes=attributes, aliases={0: 0},
    )  # fmt: skip
    ok = _info_ok(info, batch)
    return [
        _convert(_nan_unless(ok, x, batch, s, k), s, k, out.dtype) for x, s, k, out in zip(outs, shapes, kinds, ctx.avals_out)
    ]


@register("schur")
def _schur(ctx: LoweringRuleContext, x: Value, *, compute_schur_vectors: bool, sort_eig_vals: bool, select_callable: Any) -> list[Value]:
    _cpu_only(ctx, "schur", "gees")
    if sort_eig_vals:
        raise NotImplementedError("schur: The sort feature of LAPACK's gees routine is not implemented. (sort_eig_vals=True: JAX has none either.)")
    (aval,) = ctx.avals_in
    shape, batch = aval.shape, aval.shape[:-2]
    if aval.size == 0:
        return _empty_results(ctx)
    complex_ = aval.dtype.kind == "c"
    dt = aval.dtype if complex_ else _working(aval.dtype)
    x = _convert(x, shape, aval.dtype, dt)
    nd = len(shape)
    eig_shape = shape[:-1]
    # The complex gees (cgees/zgees) returns the eigenvalues as one complex vector, the real one as two.
    eig_count = 1 if complex_ else 2
    target = f"lapack_{'c' if dt == np.complex64 else 'z'}gees_ffi" if complex_ else lapack.target_name("gees", dt)
    t, q, *_, info = lapack.call(
        target, [x],
        [tensor_type(shape, dt), tensor_type(shape, dt), *([tensor_type(eig_shape, dt)] * eig_count),
         tensor_type(batch, _I32), tensor_type(batch, _I32)],
        operand_layouts=_matrix_io(nd, 1),
        result_layouts=[*_matrix_io(nd, 2), *([lapack.row_major_layout(nd - 1)] * eig_count), *([lapack.row_major_layout(nd - 2)] * 2)],
        attributes={"mode": lapack.char_attr("V" if compute_schur_vectors else "N"), "sort": lapack.char_attr("N")},
        aliases={0: 0},
    )  # fmt: skip
    # A complex matrix is finite where 0·re + 0·im is (0 there, NaN beside an inf or a NaN).
    probe = hlo.add(*(hlo.multiply(part(x), _full(0, np.dtype(np.finfo(dt).dtype), shape)) for part in (hlo.real, hlo.imag))) if complex_ else x
    ok = hlo.and_(_info_ok(info, batch), _all_finite(probe, shape))
    outs = [t, q] if compute_schur_vectors else [t]
    return [_convert(_nan_unless(ok, v, batch, shape, dt), shape, dt, aval.dtype) for v in outs]


# ---------------------------------------------------------------------------
# symmetric_product and cholesky_update: plain StableHLO (as JAX lowers them
# on CPU); tridiagonal_solve: gtsv


def _matrix_product_abt(a: Value, shape: Shape, dtype: DType) -> Value:
    """a @ aᵀ for each matrix of the batch, at the highest precision."""
    *batch, m, _ = shape
    nd = len(shape)
    dims = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(range(nd - 2)), rhs_batching_dimensions=list(range(nd - 2)),
        lhs_contracting_dimensions=[nd - 1], rhs_contracting_dimensions=[nd - 1],
    )  # fmt: skip
    highest = ir.ArrayAttr.get([hlo.PrecisionAttr.get("HIGHEST")] * 2)
    return hlo.dot_general(tensor_type((*batch, m, m), dtype), a, a, dims, precision_config=highest)


@register("symmetric_product")
def _symmetric_product(ctx: LoweringRuleContext, a: Value, c: Value, *, alpha: Any, beta: Any) -> list[Value]:
    a_aval, c_aval = ctx.avals_in
    dtype = c_aval.dtype
    shape = c_aval.shape
    product = _matrix_product_abt(a, a_aval.shape, dtype)
    scaled = hlo.multiply(_full(alpha, dtype, shape), product)
    return [hlo.add(scaled, hlo.multiply(_full(beta, dtype, shape), c))]


@register("tridiagonal_solve")
def _tridiagonal_solve(ctx: LoweringRuleContext, dl: Value, d: Value, du: Value, b: Value, *, perturb_singular: bool) -> list[Value]:
    *_, b_aval = ctx.avals_in
    shape, batch = b_aval.shape, b_aval.shape[:-2]
    m = shape[-2]
    if b_aval.size == 0:
        return [b]
    if perturb_singular:
        return _tridiagonal_solve_perturbed(ctx, dl, d, du, b)
    if _on_gpu(ctx) and m < 3:
        raise NotImplementedError(
            "tridiagonal_solve on the gpu platform needs at least 3 rows (cuSPARSE's gtsv2); JAX falls back to a "
            "scan there, which minijax does not have: solve systems this small on the CPU."
        )
    dt = _working(b_aval.dtype)
    args = [_convert(v, av.shape, av.dtype, dt) for v, av in zip((dl, d, du, b), ctx.avals_in)]
    nd = len(shape)
    vector = lapack.row_major_layout(nd - 1)
    if _on_gpu(ctx):
        (x,) = lapack.call(
            "cusparse_gtsv2_ffi", args, [tensor_type(shape, dt)],
            operand_layouts=[vector, vector, vector, lapack.matrix_layout(nd)], result_layouts=_matrix_io(nd, 1),
            aliases={0: 3},
        )  # fmt: skip
        return [_convert(x, shape, dt, b_aval.dtype)]
    vec_type = tensor_type(shape[:-1], dt)
    *_, x, info = lapack.call(
        lapack.target_name("gtsv", dt), args, [vec_type, vec_type, vec_type, tensor_type(shape, dt), tensor_type(batch, _I32)],
        operand_layouts=[vector, vector, vector, lapack.matrix_layout(nd)],
        result_layouts=[vector, vector, vector, lapack.matrix_layout(nd), lapack.row_major_layout(nd - 2)],
        aliases={0: 0, 1: 1, 2: 2, 3: 3},
    )  # fmt: skip
    x = _nan_unless(_info_ok(info, batch), x, batch, shape, dt)
    return [_convert(x, shape, dt, b_aval.dtype)]


def _tridiagonal_solve_perturbed(ctx: LoweringRuleContext, dl: Value, d: Value, du: Value, b: Value) -> list[Value]:
    """jaxlib's own kernel (gtsv cannot perturb a pivot), as JAX lowers ``perturb_singular=True`` on CPU:
    elimination with partial pivoting, small pivots perturbed by about eps * max|U|; no info output."""
    if _on_gpu(ctx):
        raise NotImplementedError("tridiagonal_solve(perturb_singular=True) runs on the CPU only in minijax.")
    *_, b_aval = ctx.avals_in
    shape = b_aval.shape
    dt = _working(b_aval.dtype)
    args = [_convert(v, av.shape, av.dtype, dt) for v, av in zip((dl, d, du, b), ctx.avals_in)]
    nd = len(shape)
    vector = lapack.row_major_layout(nd - 1)
    (x,) = lapack.call(
        "tridiagonal_solve_perturbed_ffi", args, [tensor_type(shape, dt)],
        operand_layouts=[vector, vector, vector, lapack.matrix_layout(nd)], result_layouts=[lapack.matrix_layout(nd)],
    )  # fmt: skip
    return [_convert(x, shape, dt, b_aval.dtype)]


def _givens_update(r: Any, w: Any) -> Any:
    """The upper Cholesky factor of Rᵀ R + w wᵀ: one Givens rotation per row folds w into R.

    Traced with minijax's lax operations (as JAX lowers its primitive): the
    rotation of row k zeroes w[k] against R[k, k], scaled by the larger of
    the two so that squaring them cannot overflow; w[k] = 0 is the identity.
    """
    n = r.shape[0]
    rows = [r[k] for k in range(n)]
    z = w
    for k in range(n):
        x, y = rows[k][k], z[k]
        scale = lax.max(lax.abs(x), lax.abs(y))
        safe = lax.select(y == 0, lax.full_like(scale, 1), scale)
        xs, ys = x / safe, y / safe
        inverse_radius = lax.rsqrt(xs * xs + ys * ys)
        c = lax.select(y == 0, lax.full_like(x, 1), xs * inverse_radius)
        s = lax.select(y == 0, lax.full_like(x, 0), -ys * inverse_radius)
        rows[k], z = c * rows[k] - s * z, c * z + s * rows[k]
    return jnp.stack(rows) if n else r


@register("cholesky_update")
def _cholesky_update(ctx: LoweringRuleContext, r: Value, w: Value) -> list[Value]:
    avals = [ShapedArray(a.shape, a.dtype) for a in ctx.avals_in]
    closed, _ = trace_to_jaxpr(lambda a, b: [_givens_update(a, b)], avals, DebugInfo(_givens_update, ["r", "w"], "cholesky_update"))
    consts = [jaxlib_api.dense_constant(np.asarray(c)) for c in closed.consts]
    return list(emit_jaxpr(ctx.module_context, closed.jaxpr, consts, [r, w]))
