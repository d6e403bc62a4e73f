"""The tolerance policy: when a backend's result agrees with the reference backend's.

``spec/tolerances.md`` is this module in prose, with the reasons; a test
(``tests/test_conformance_tolerances.py``) keeps the page's table and
``ULPS`` equal. The rules, in the order ``compare_primitive`` applies them:

1. **Exact unless listed.** Integer and boolean results, and floating
   results of every primitive and dtype not in ``ULPS`` or ``BOUNDS``, agree
   bit for bit (any NaN equals any NaN; the sign of zero counts).
2. **ULPS**: the transcendental and special functions may be ``ulps`` units
   in the last place apart, or ``abs_eps`` machine epsilons in absolute terms
   where that column is not 0 (near the zeros and poles of lgamma/digamma).
3. **BOUNDS**: sums, products and contractions may add in another order;
   they agree within an error bound computed from the operands.
4. **Flushed subnormals.** A backend may flush float32, float64 and
   bfloat16 subnormals to zero, in operands and results (XLA on CPU does),
   except in the primitives that only move bits (``BIT_EXACT``).
5. Special cases: broadcast float division (1 ulp), operands where the
   result is unspecified (``SUBNORMAL_UNSPECIFIED``), and the reference's
   known loss near the poles of lgamma/digamma in float64.

Whole programs (the case corpus, transformed programs, random jaxprs) are
compared by ``compare_program``: integers exactly, floats within a normwise
tolerance per dtype (``PROGRAM_RTOL``), since errors of each primitive
propagate and sums may be reordered by a compiler.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from minijax import dtypes
from minijax.core import shape_size

NDArray = np.ndarray[Any, Any]

FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """How far a floating result may be from the reference's, per element."""

    ulps: int = 0
    abs_eps: int = 0  # an absolute error of this many finfo(dtype).eps also agrees
    bound: str = ""  # a key of BOUNDS: an error bound computed from the operands

    @property
    def exact(self) -> bool:
        return not (self.ulps or self.abs_eps or self.bound)

    def describe(self) -> str:
        if self.bound:
            return f"{self.bound} bound"
        if self.exact:
            return "exact"
        text = f"{self.ulps} ulps"
        return f"{text} or {self.abs_eps} eps" if self.abs_eps else text


EXACT = Tolerance()


def _ulps(f16: int, bf16: int, f32: int, f64: int) -> dict[str, tuple[int, int]]:
    return dict(zip(FLOAT_NAMES, ((f16, 0), (bf16, 0), (f32, 0), (f64, 0))))


# (ulps, abs eps) by primitive and dtype. Measured between the xla backend and
# the NumPy reference on CPU (jaxlib 0.10.2) over ~24 000 operands per dtype,
# then rounded up with a margin; spec/tolerances.md says why each is what it is.
ULPS: dict[str, dict[str, tuple[int, int]]] = {
    "exp": _ulps(1, 1, 2, 2),
    "exp2": _ulps(1, 1, 2, 2),
    "expm1": _ulps(2, 1, 6, 5),
    "log": _ulps(1, 1, 3, 2),
    "log1p": _ulps(1, 1, 2, 192),
    "logistic": _ulps(1, 1, 3, 2),
    "tanh": _ulps(1, 1, 5, 8),
    "sin": _ulps(1, 1, 2, 1),
    "cos": _ulps(1, 1, 2, 1),
    "tan": _ulps(1, 1, 2, 2),
    "asin": _ulps(1, 1, 3, 2),
    "acos": _ulps(1, 1, 3, 2),
    "atan": _ulps(1, 1, 2, 2),
    "atan2": _ulps(1, 1, 3, 2),
    "sinh": _ulps(1, 1, 32, 1024),
    "cosh": _ulps(1, 1, 32, 1024),
    "asinh": _ulps(1, 1, 3, 2),
    "acosh": _ulps(2, 2, 3, 3),
    "atanh": _ulps(1, 1, 2, 192),
    "rsqrt": _ulps(0, 0, 2, 2),
    "cbrt": _ulps(1, 1, 2, 3),
    "pow": _ulps(1, 1, 2, 2),
    "erf": _ulps(1, 1, 8, 8),
    "erfc": _ulps(1, 1, 96, 128),
    "erf_inv": dict(zip(FLOAT_NAMES, ((1, 0), (1, 0), (96, 0), (64, 4_000_000)))),
    "lgamma": dict(zip(FLOAT_NAMES, ((2, 2), (2, 2), (4, 64), (32, 4096)))),
    "digamma": dict(zip(FLOAT_NAMES, ((2, 2), (2, 2), (4, 16), (64, 32)))),
    # The special family: the XLA backend computes in float64 as the reference does, so the
    # narrower dtypes differ by a rounding at most; in float64 the two lgammas, the series'
    # summation orders and XLA's own zeta/polygamma/i1e differ in the last digits.
    "igamma": dict(zip(FLOAT_NAMES, ((1, 0), (1, 0), (1, 0), (4096, 64)))),
    "igammac": dict(zip(FLOAT_NAMES, ((1, 0), (1, 0), (1, 0), (4096, 64)))),
    "igamma_grad_a": dict(zip(FLOAT_NAMES, ((1, 0), (1, 0), (1, 0), (4096, 64)))),
    "regularized_incomplete_beta": dict(zip(FLOAT_NAMES, ((1, 0), (1, 0), (1, 0), (4096, 64)))),
    "polygamma": dict(zip(FLOAT_NAMES, ((1, 0), (1, 0), (1, 0), (256, 0)))),
    "zeta": dict(zip(FLOAT_NAMES, ((1, 0), (1, 0), (1, 0), (64, 0)))),
    "bessel_i0e": dict(zip(FLOAT_NAMES, ((1, 0), (1, 0), (1, 0), (16, 0)))),
    "bessel_i1e": dict(zip(FLOAT_NAMES, ((1, 0), (1, 0), (1, 0), (16, 0)))),
}

# Primitives that only move or reinterpret bits: no allowance for flushed
# subnormals (a backend that flushes here loses data).
BIT_EXACT = frozenset({
    "neg", "abs", "copy", "select_n", "reduce_precision", "bitcast_convert_type",
    "broadcast_in_dim", "reshape", "transpose", "squeeze", "rev", "slice", "dynamic_slice",
    "dynamic_update_slice", "concatenate", "pad", "split", "tile", "stack",
})  # fmt: skip

# The exceptions to BIT_EXACT: XLA CPU's loop fusion of a bfloat16 broadcast converts
# through float32 with subnormals flushed for some shapes (a scalar to [3,2] or [n,5]:
# 0x0001 becomes 0; jax.jit gives the same in JAX 0.10.2). Broadcasting the bits as int16
# does not help (XLA folds the bitcasts away); only an optimization barrier would, and it
# would keep every bfloat16 broadcast from fusing into its consumers.
FLUSHING_MOVES = frozenset({("broadcast_in_dim", np.dtype(dtypes.bfloat16))})

# Where XLA's result for a subnormal operand is neither the value for the
# subnormal nor the value for zero (JAX gives the same): not compared there.
SUBNORMAL_UNSPECIFIED = frozenset({"atan2", "cbrt", "log", "nextafter", "pow"})

# Within 1e-12 of a negative integer the reference's float64 reflection
# formula loses accuracy: not compared there until the reference is fixed.
NEAR_POLE_REFERENCE_LOSS = frozenset({"lgamma", "digamma"})

# Dtypes whose subnormals a backend may flush (float16 is computed in float32,
# where its subnormals are normal numbers, so it is never flushed).
FLUSHABLE = frozenset({np.dtype(dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)})

# With flushing, results this many smallest-normals from zero may come out as
# ±0 (intermediate values underflow a little before the result does).
FLUSH_MARGIN = 8

# Normwise tolerance of whole programs, by result dtype: an element agrees when
# |actual - expected| <= rtol * (|expected| + max |expected| over the output).
PROGRAM_RTOL: dict[str, float] = {"bfloat16": 3e-2, "float16": 4e-3, "float32": 2e-5, "float64": 1e-12}


# ---------------------------------------------------------------------------
# Error bounds of the accumulating primitives: |actual - expected| <= bound,
# elementwise, with eps/tiny of the accumulation and result dtypes.


def _f64(x: Any) -> NDArray:
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(x).astype(np.float64)


def _acc_eps(dt: np.dtype[Any]) -> float:
    """Half-precision sums accumulate in float32; float64 in float64."""
    return float(np.finfo(np.float64 if dt == np.dtype(np.float64) else np.float32).eps)


def _sum_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    x = operands[0]
    axes = tuple(params["axes"])
    n = shape_size(x.shape[a] for a in axes)
    abs_sum = np.sum(np.abs(_f64(x)), axis=axes)
    info = dtypes.finfo(want.dtype)
    return np.asarray(n * _acc_eps(x.dtype) * abs_sum + float(info.eps) * np.abs(_f64(want)) + float(info.tiny))


def _prod_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    x = operands[0]
    n = shape_size(x.shape[a] for a in params["axes"])
    info = dtypes.finfo(want.dtype)
    return np.asarray((n * _acc_eps(x.dtype) + float(info.eps)) * np.abs(_f64(want)) + float(info.tiny))


def _prefix_sums(values: NDArray, params: Mapping[str, Any]) -> NDArray:
    """For a cumulative reduction: the sum of ``values`` (float64) over the operands each result combines."""
    axis, reverse = int(params["axis"]), bool(params["reverse"])
    sums = np.cumsum(np.flip(values, axis) if reverse else values, axis=axis)
    return np.flip(sums, axis) if reverse else sums


def _prefixes(operands: Sequence[NDArray], params: Mapping[str, Any]) -> tuple[NDArray, NDArray]:
    """For a cumulative reduction: how many operands each result combines, and the
    sum of their magnitudes (float64), both in the shape of the operand."""
    x = operands[0]
    counts = _prefix_sums(np.ones(x.shape), params)
    return counts, _prefix_sums(np.abs(_f64(x)), params)


def _cumsum_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    """cumsum: each result is a sum, bounded as reduce_sum's over the operands it adds."""
    counts, abs_sums = _prefixes(operands, params)
    info = dtypes.finfo(want.dtype)
    acc = _acc_eps(operands[0].dtype)
    return np.asarray(counts * acc * abs_sums + float(info.eps) * np.abs(_f64(want)) + float(info.tiny))


def _cumprod_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    """cumprod: each result is a product, bounded as reduce_prod's over the operands it multiplies."""
    counts, _ = _prefixes(operands, params)
    info = dtypes.finfo(want.dtype)
    return np.asarray((counts * _acc_eps(operands[0].dtype) + float(info.eps)) * np.abs(_f64(want)) + float(info.tiny))


def _dot_magnitude(lhs: NDArray, rhs: NDArray, params: Mapping[str, Any]) -> NDArray:
    """|lhs| . |rhs| in float64, with the contraction written out by einsum."""
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lhs_sub = [next(letters) for _ in range(lhs.ndim)]
    rhs_sub = [next(letters) for _ in range(rhs.ndim)]
    for i, j in zip((*lc, *lb), (*rc, *rb)):
        rhs_sub[j] = lhs_sub[i]
    batch = [lhs_sub[i] for i in lb]
    free_l = [s for i, s in enumerate(lhs_sub) if i not in (*lc, *lb)]
    free_r = [s for j, s in enumerate(rhs_sub) if j not in (*rc, *rb)]
    spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(batch + free_l + free_r)}"
    return np.asarray(np.einsum(spec, np.abs(_f64(lhs)), np.abs(_f64(rhs))))


def _dot_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    lhs, rhs = operands
    k = shape_size(lhs.shape[d] for d in params["dimension_numbers"][0][0])
    magnitude = _dot_magnitude(lhs, rhs, params)
    wide = np.dtype(np.float64) in (lhs.dtype, rhs.dtype, want.dtype)
    work_eps = float(np.finfo(np.float64 if wide else np.float32).eps)
    info = dtypes.finfo(want.dtype)
    return np.asarray(2 * k * work_eps * magnitude + float(info.eps) * np.abs(_f64(want)) + float(info.tiny))


def _window_abs_sums(x: NDArray, params: Mapping[str, Any]) -> NDArray:
    """sum|x| over each window of a windowed reduction, in float64 (holes and padding are 0)."""
    magnitude = np.abs(_f64(x))
    base, wdil = params["base_dilation"], params["window_dilation"]
    dilated = np.zeros([0 if n == 0 else (n - 1) * b + 1 for n, b in zip(x.shape, base)])
    dilated[tuple(slice(None, None, b) for b in base)] = magnitude
    grown = np.pad(dilated, [(max(lo, 0), max(hi, 0)) for lo, hi in params["padding"]])
    padded = grown[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(grown.shape, params["padding"]))]
    extent = [(w - 1) * d + 1 for w, d in zip(params["window_dimensions"], wdil)]
    if any(p < e for p, e in zip(padded.shape, extent)):
        return np.zeros([0] * x.ndim)
    view = sliding_window_view(padded, extent)
    view = view[tuple(slice(None, None, s) for s in params["window_strides"]) + tuple(slice(None, None, d) for d in wdil)]
    return np.asarray(view.sum(axis=tuple(range(x.ndim, 2 * x.ndim))))


def _window_sum_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    """reduce_window_sum: each result is a sum, bounded as reduce_sum's over its window."""
    x = operands[0]
    n = shape_size(params["window_dimensions"])
    info = dtypes.finfo(want.dtype)
    sums = _window_abs_sums(x, params).reshape(want.shape)
    return np.asarray(n * _acc_eps(x.dtype) * sums + float(info.eps) * np.abs(_f64(want)) + float(info.tiny))


def _scatter_sum_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    """select_and_scatter_add: an element adds the sources of the (at most k) windows that chose it."""
    source = operands[0]
    k = shape_size(-(-w // s) for w, s in zip(params["window_dimensions"], params["window_strides"]))
    # Only finite sources: a NaN would make every bound NaN (and no element agree), an
    # infinity every bound infinite; non-finite results are compared exactly instead.
    largest = float(np.max(_finite_abs(source), initial=0.0))
    info = dtypes.finfo(want.dtype)
    return np.asarray(k * float(info.eps) * k * largest + float(info.eps) * np.abs(_f64(want)) + float(info.tiny))


def _conv_magnitude(lhs: NDArray, rhs: NDArray, params: Mapping[str, Any]) -> NDArray:
    """|lhs| convolved with |rhs| in float64 (the result's layout): the sum of the magnitudes
    of the products each result element adds up. Written out one window offset at a time.
    Only finite operands count: a finite result took in no infinity or NaN (the padding
    and holes add no product), and a non-finite one is compared exactly; an inf kernel
    tap over the padding's 0 would otherwise make the bound NaN."""
    lhs_spec, rhs_spec, out_spec = (tuple(s) for s in params["dimension_numbers"])
    x = _finite_abs(lhs).transpose(lhs_spec)
    w = _finite_abs(rhs).transpose(rhs_spec)
    for i, (d, (lo, hi)) in enumerate(zip(params["lhs_dilation"], params["padding"])):
        axis, n = 2 + i, x.shape[2 + i]
        spread = np.zeros(x.shape[:axis] + ((n - 1) * d + 1 if n else 0,) + x.shape[axis + 1 :])
        spread[(slice(None),) * axis + (slice(None, None, d),)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(spread, widths)
        x = x[(slice(None),) * axis + (slice(max(-lo, 0), x.shape[axis] - max(-hi, 0)),)]  # negative pads crop
    fgc, bgc = int(params["feature_group_count"]), int(params["batch_group_count"])
    groups = max(fgc, bgc)
    (n, c), (o, ci), window = x.shape[:2], w.shape[:2], w.shape[2:]
    strides, rhs_dil = params["window_strides"], params["rhs_dilation"]
    reach = [(k - 1) * d + 1 for k, d in zip(window, rhs_dil)]
    out_sp = [max((p - r) // s + 1, 0) for p, r, s in zip(x.shape[2:], reach, strides)]
    out = np.zeros((n // bgc, o, *out_sp))
    if 0 in out.shape:
        return out.transpose(np.argsort(out_spec))
    for offset in np.ndindex(*window):
        at = tuple(slice(k * d, k * d + (m - 1) * s + 1, s) for k, d, m, s in zip(offset, rhs_dil, out_sp, strides))
        xs = x[(slice(None), slice(None), *at)]
        taps = w[(slice(None), slice(None), *offset)].reshape(groups, o // groups, ci)
        if bgc > 1:
            part = np.einsum("bnc...,boc->nbo...", xs.reshape(groups, n // groups, c, *out_sp), taps)
        else:
            part = np.einsum("ngc...,goc->ngo...", xs.reshape(n, groups, c // groups, *out_sp), taps)
        out += part.reshape(out.shape)
    return out.transpose(np.argsort(out_spec))


def _conv_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    """conv_general_dilated: each result is a dot product of k = (kernel in features) x (window
    size) pairs, bounded as dot_general's."""
    lhs, rhs = operands
    rhs_spec = params["dimension_numbers"][1]
    k = shape_size(rhs.shape[d] for d in rhs_spec[1:])
    magnitude = _conv_magnitude(lhs, rhs, params)
    wide = np.dtype(np.float64) in (lhs.dtype, rhs.dtype, want.dtype)
    work_eps = float(np.finfo(np.float64 if wide else np.float32).eps)
    info = dtypes.finfo(want.dtype)
    return np.asarray(2 * k * work_eps * magnitude + float(info.eps) * np.abs(_f64(want)) + float(info.tiny))


Bound = Callable[[Sequence[NDArray], Mapping[str, Any], NDArray], NDArray]


# Where a reordered sum or product may overflow (or a product underflow) on the way,
# its result depends on the order: (big + big) - big is inf one way and big the other,
# and inf - inf is NaN. No order is the right one there (the exact value is often
# finite), so those elements are unspecified (spec/tolerances.md, rule 3). Only the
# finite operands count: infinities given as operands propagate the same in any order.


def _finite_abs(x: NDArray) -> NDArray:
    m = np.abs(_f64(x))
    return np.asarray(np.where(np.isfinite(m), m, 0.0))


def _overflow_limit(x: NDArray, want: NDArray) -> float:
    """The largest finite value of the accumulation and the result dtypes, whichever is smaller."""
    acc = np.float64 if x.dtype == np.dtype(np.float64) else np.float32
    return min(float(np.finfo(acc).max), float(dtypes.finfo(want.dtype).max))


def _may_overflow(magnitude: NDArray, n: Any, x: NDArray, want: NDArray) -> NDArray:
    """A sum of ``n`` terms whose magnitudes add up to ``magnitude``: may some order overflow?
    (Each of the n - 1 additions may round up by an eps; a single term is itself.)"""
    return np.asarray(magnitude * (1 + 2 * (n - 1) * _acc_eps(x.dtype)) > _overflow_limit(x, want))


def _sum_overflows(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    x = operands[0]
    axes = tuple(params["axes"])
    return _may_overflow(np.sum(_finite_abs(x), axis=axes), shape_size(x.shape[a] for a in axes), x, want)


def _cumsum_overflows(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    x = operands[0]
    counts = _prefix_sums(np.ones(x.shape), params)
    return _may_overflow(_prefix_sums(_finite_abs(x), params), counts, x, want)


def _dot_overflows(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    lhs, rhs = operands
    k = shape_size(lhs.shape[d] for d in params["dimension_numbers"][0][0])
    finite = [np.asarray(np.where(np.isfinite(_f64(o)), o, 0)).astype(o.dtype) for o in (lhs, rhs)]
    magnitude = _dot_magnitude(finite[0], finite[1], params)
    wide = np.dtype(np.float64) in (lhs.dtype, rhs.dtype, want.dtype)
    return _may_overflow(magnitude, k, np.zeros((), np.float64 if wide else np.float32), want)


def _log_ranges(x: NDArray) -> tuple[NDArray, NDArray]:
    """log|x| of the finite nonzero operands, split into its positive and negative parts."""
    m = _finite_abs(x)
    logs = np.log(np.where(m > 0, m, 1.0))
    return np.maximum(logs, 0.0), np.minimum(logs, 0.0)


def _product_may_overflow(up: NDArray, down: NDArray, x: NDArray, want: NDArray) -> NDArray:
    """A product whose factors' logs add up to ``up`` (the positive ones) and ``down``: may some order
    overflow (the factors above 1 first) or underflow (those below 1 first)?"""
    acc = np.float64 if x.dtype == np.dtype(np.float64) else np.float32
    return np.asarray((up >= np.log(_overflow_limit(x, want)) - 1e-3) | (down <= np.log(float(np.finfo(acc).tiny)) + 1e-3))


def _prod_overflows(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    x = operands[0]
    up, down = _log_ranges(x)
    axes = tuple(params["axes"])
    return _product_may_overflow(np.sum(up, axis=axes), np.sum(down, axis=axes), x, want)


def _cumprod_overflows(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    x = operands[0]
    up, down = _log_ranges(x)
    return _product_may_overflow(_prefix_sums(up, params), _prefix_sums(down, params), x, want)


OVERFLOWS: dict[str, Bound] = {
    "sum": _sum_overflows, "prod": _prod_overflows, "dot": _dot_overflows,
    "cumsum": _cumsum_overflows, "cumprod": _cumprod_overflows,
}  # fmt: skip

def _logsumexp_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    """cumlogsumexp: each step is a logaddexp, whose error scales with the operands' magnitude."""
    x = _f64(operands[0])
    scale = float(np.max(np.abs(x[np.isfinite(x)]), initial=0.0))
    info = dtypes.finfo(want.dtype)
    return np.asarray(4 * float(info.eps) * (np.abs(_f64(want)) + scale) + float(info.tiny))


# Decompositions: the backends call the same LAPACK algorithms in different
# builds and blockings (spec/primitives/linalg.md, "Accuracy"); results agree
# normwise, relative to the largest finite magnitude of the result.
LINALG = frozenset({
    "cholesky", "triangular_solve", "lu", "qr", "eigh", "eig", "svd", "householder_product", "ormqr", "hessenberg",
    "tridiagonal", "schur", "symmetric_product", "tridiagonal_solve",
})  # fmt: skip
LINALG_RTOL: dict[str, float] = {
    "float16": 4e-3, "bfloat16": 3e-2, "float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10,
}  # fmt: skip


def _linalg_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    w = np.abs(np.asarray(want)).astype(np.float64)  # magnitudes: complex results too
    scale = float(np.max(w[np.isfinite(w)], initial=0.0))
    return np.asarray(LINALG_RTOL[want.dtype.name] * scale + float(dtypes.finfo(want.dtype).tiny))


# fft (issue 19): a transform of N points adds each result from all N inputs in
# log2(N) butterfly stages, in an order each library picks; its error is bounded
# by the operand's magnitude (spec/tolerances.md, rule 3). Complex results are
# compared part by part. An operand holding an infinity or NaN spreads it
# through the whole lane in a way that depends on the algorithm: unspecified.
def _fft_size(params: Mapping[str, Any]) -> int:
    return shape_size(params["fft_lengths"])


def _fft_bound(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    x = np.asarray(operands[0])
    parts = np.finfo(x.dtype).dtype if x.dtype.kind == "c" else np.dtype(np.float32) if x.dtype.itemsize < 4 else x.dtype
    magnitude = float(np.sum(np.where(np.isfinite(x), np.abs(x.astype(np.complex128)), 0.0)))
    stages = 1 + np.log2(max(_fft_size(params), 1))
    info = np.finfo(parts)
    return np.asarray(8 * stages * float(info.eps) * magnitude + float(info.tiny))


def _fft_unspecified(operands: Sequence[NDArray], params: Mapping[str, Any], want: NDArray) -> NDArray:
    x = np.asarray(operands[0])
    return np.asarray(not bool(np.all(np.isfinite(x))))


OVERFLOWS["fft"] = _fft_unspecified

BOUNDS: dict[str, Bound] = {
    "sum": _sum_bound, "prod": _prod_bound, "dot": _dot_bound, "conv": _conv_bound, "logsumexp": _logsumexp_bound, "linalg": _linalg_bound,
    "cumsum": _cumsum_bound, "cumprod": _cumprod_bound,
    "window_sum": _window_sum_bound, "scatter_sum": _scatter_sum_bound,
    "fft": _fft_bound,  # fft (issue 19)
}  # fmt: skip
BOUND_OF: dict[str, str] = {
    "reduce_sum": "sum", "reduce_prod": "prod", "dot_general": "dot", "cumlogsumexp": "logsumexp",
    "conv_general_dilated": "conv", "cumsum": "cumsum", "cumprod": "cumprod",
    "reduce_window_sum": "window_sum", "select_and_scatter_add": "scatter_sum",
    **dict.fromkeys(LINALG, "linalg"),
    "fft": "fft",  # fft (issue 19)
}  # fmt: skip
# Primitives whose complex results are compared part by part within their bound.
COMPLEX_BOUNDED = frozenset({"fft"})


def tolerance(name: str, dtype: Any) -> Tolerance:
    """The per-element tolerance of primitive ``name`` for results of ``dtype``."""
    dt = np.dtype(dtype)
    if dt.kind == "c" and (name in COMPLEX_BOUNDED or name in LINALG):  # complex fft and decompositions: normwise
        return Tolerance(bound=BOUND_OF[name])
    if not _is_float(dt):
        return EXACT
    if name in BOUND_OF:
        return Tolerance(bound=BOUND_OF[name])
    ulps, abs_eps = ULPS.get(name, {}).get(dt.name, (0, 0))
    return Tolerance(ulps, abs_eps)


# ---------------------------------------------------------------------------
# Distances


_SIGNED: dict[int, np.dtype[Any]] = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
_UNSIGNED: dict[int, np.dtype[Any]] = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _is_float(dt: np.dtype[Any]) -> bool:
    return dt != dtypes.float0 and dtypes.issubdtype(dt, np.floating)


def _ordered(x: NDArray) -> NDArray:
    """Float bits as integers (Python ints: no overflow) that count ulps monotonically; ±0 map to 0."""
    i = np.asarray(x).view(_SIGNED[x.dtype.itemsize]).astype(object)
    low = -(2 ** (8 * x.dtype.itemsize - 1))
    return np.asarray(np.where(i < 0, low - i, i))


def ulp_distance(actual: NDArray, expected: NDArray) -> NDArray:
    """Elementwise distance in units in the last place (float64 array).

    Floats: the number of representable values between the two (±0 are the
    same point; the largest finite value is 1 from infinity); 0 where both are
    NaN, inf where exactly one is. Integers and booleans: |actual - expected|.
    """
    a, e = np.asarray(actual), np.asarray(expected)
    if a.dtype.kind == "c":  # the distance of complex values, not of their real parts
        with np.errstate(invalid="ignore"):
            return np.asarray(np.abs(a.astype(np.complex128) - e.astype(np.complex128)))
    if not _is_float(a.dtype):
        return np.abs(a.astype(np.float64) - e.astype(np.float64))
    if a.size == 0:
        return np.zeros(a.shape)
    difference = np.asarray(_ordered(a) - _ordered(e), dtype=object)
    distance = np.asarray(np.abs(difference), dtype=object).astype(np.float64)
    a_nan, e_nan = np.isnan(_f64(a)), np.isnan(_f64(e))
    distance = np.where(a_nan & e_nan, 0.0, distance)
    return np.asarray(np.where(a_nan ^ e_nan, np.inf, distance))


def _bits_equal(a: NDArray, e: NDArray) -> NDArray:
    u = _UNSIGNED[a.dtype.itemsize]
    return np.asarray((a.view(u) == e.view(u)) | (np.isnan(_f64(a)) & np.isnan(_f64(e))))


# ---------------------------------------------------------------------------
# Verdicts


@dataclasses.dataclass(frozen=True)
class Agreement:
    """The verdict of one comparison: ``ok``, the worst distance in ulps, and
    (when not ok) where the first disagreement is."""

    ok: bool
    worst_ulps: float
    detail: str = ""


def _fmt(x: Any) -> str:
    if isinstance(x, np.generic) and _is_float(np.dtype(x.dtype)):
        bits = np.asarray(x).view(_UNSIGNED[x.dtype.itemsize]).item()
        return f"{x!r} (0x{bits:0{2 * x.dtype.itemsize}x})"
    return repr(x)


def _where(ok: NDArray) -> tuple[int, ...]:
    bad = np.argwhere(~ok)
    return tuple(int(i) for i in bad[0]) if ok.ndim else ()


def _describe(k: int, a: NDArray, e: NDArray, ok: NDArray, dist: NDArray, allowed: str) -> str:
    at = _where(ok)
    n_bad = int(np.sum(~ok))
    aval = f"{dtypes.short_dtype_name(a.dtype)}[{','.join(map(str, a.shape))}]"
    d = dist[at]
    apart = "NaN vs a number" if np.isinf(d) and _is_float(a.dtype) else f"{d:.6g} ulps apart"
    return (
        f"output {k} ({aval}): {n_bad} of {a.size} elements disagree; at index {list(at)} got {_fmt(a[at])}, "
        f"expected {_fmt(e[at])}: {apart}, allowed {allowed}"
    )


def _check_types(actual: Sequence[NDArray], expected: Sequence[NDArray]) -> Agreement | None:
    if len(actual) != len(expected):
        return Agreement(False, np.inf, f"{len(actual)} outputs, expected {len(expected)}")
    for k, (a, e) in enumerate(zip(actual, expected)):
        if a.shape != e.shape or a.dtype != e.dtype:
            return Agreement(
                False, np.inf, f"output {k} is {a.dtype.name}{list(a.shape)}, expected {e.dtype.name}{list(e.shape)}"
            )
    return None


def _worst(dist: NDArray, counted: NDArray) -> float:
    return float(np.max(dist[np.broadcast_to(counted, dist.shape)], initial=0.0))


def _flush(x: NDArray) -> NDArray:
    if x.dtype not in FLUSHABLE:
        return x
    tiny = float(dtypes.finfo(x.dtype).tiny)
    with np.errstate(invalid="ignore"):
        return np.asarray(np.where(np.abs(_f64(x)) < tiny, np.zeros_like(x) * np.sign(x), x).astype(x.dtype))


def _subnormal(x: NDArray) -> NDArray:
    if x.dtype not in FLUSHABLE:
        return np.zeros(x.shape, bool)
    with np.errstate(invalid="ignore"):
        return np.asarray((x != 0) & (np.abs(_f64(x)) < float(dtypes.finfo(x.dtype).tiny)))


def _within(a: NDArray, e: NDArray, tol: Tolerance, dist: NDArray) -> NDArray:
    ok = _bits_equal(a, e)
    finite_pair = ~np.isnan(_f64(a)) & ~np.isnan(_f64(e))
    if tol.ulps:
        ok |= finite_pair & (dist <= tol.ulps)
    if tol.abs_eps:
        with np.errstate(invalid="ignore"):
            ok |= np.abs(_f64(a) - _f64(e)) <= tol.abs_eps * float(dtypes.finfo(a.dtype).eps)
    return np.asarray(ok)


def _within_bound(a: NDArray, e: NDArray, bound: NDArray) -> NDArray:
    """NaN where NaN, infinities exactly, the rest within ``bound``."""
    g, w = _f64(a), _f64(e)
    with np.errstate(invalid="ignore"):
        both_nan = np.isnan(g) & np.isnan(w)
        infinite = np.isinf(g) | np.isinf(w)
        close = np.abs(g - w) <= np.broadcast_to(bound, w.shape)
    return np.asarray(both_nan | (infinite & (g == w)) | (~infinite & close))


def with_expected_signs(
    name: str, params: Mapping[str, Any], actual: Sequence[NDArray], expected: Sequence[NDArray]
) -> list[NDArray]:
    """``actual`` with each singular or eigen-vector's sign flipped to the expected one's.

    A decomposition fixes its vectors up to sign only (spec/primitives/linalg.md):
    eigh's eigenvectors are the columns of its first result; svd's left vectors the
    columns of ``u`` and right vectors the rows of ``vt``, flipped together.
    """
    out = [np.asarray(a) for a in actual]
    if name == "eig":  # cla (issue 19): each eigenvector column is fixed up to a phase
        for k in range(1, len(out)):
            out[k] = _with_expected_phases(out[k], np.asarray(expected[k]))
        return out
    if name == "eigh":
        columns, rows = 0, None
    elif name == "svd" and params.get("compute_uv") and len(out) == 3:
        columns, rows = 1, 2
    else:
        return out
    a, e = out[columns], np.asarray(expected[columns])
    if a.shape == e.shape and a.ndim >= 2 and a.dtype.kind == "c":
        phase = _phases(a, e)
        out[columns] = (a * phase[..., None, :]).astype(a.dtype)
        if rows is not None and out[rows].shape[-2:-1] == phase.shape[-1:]:
            out[rows] = (out[rows] * np.conj(phase)[..., :, None]).astype(out[rows].dtype)
        return out
    if a.shape != e.shape or a.ndim < 2 or not _is_float(a.dtype):
        return out
    with np.errstate(all="ignore"):
        overlap = np.sum(_f64(a) * _f64(e), axis=-2)  # one number per vector: [..., k]
    flip = overlap < 0  # NaN overlaps leave the vector as it is
    sign = np.where(flip, -1.0, 1.0)
    out[columns] = (_f64(a) * sign[..., None, :]).astype(a.dtype)
    if rows is not None and out[rows].shape[-2:-1] == sign.shape[-1:]:
        out[rows] = (_f64(out[rows]) * sign[..., :, None]).astype(out[rows].dtype)
    return out


def _phases(a: NDArray, e: NDArray) -> NDArray:
    """Per column: the unit complex number that turns a's column toward e's (1 where undefined)."""
    with np.errstate(all="ignore"):
        overlap = np.sum(np.conj(a) * e, axis=-2)
        size = np.abs(overlap)
        return np.asarray(np.where(np.isfinite(overlap) & (size > 0), overlap / np.where(size > 0, size, 1), 1))


def _with_expected_phases(a: NDArray, e: NDArray) -> NDArray:
    if a.shape != e.shape or a.ndim < 2 or a.dtype.kind != "c":
        return a
    return np.asarray((a * _phases(a, e)[..., None, :]).astype(a.dtype))


def compare_primitive(
    name: str,
    params: Mapping[str, Any],
    operands: Sequence[NDArray],
    actual: Sequence[NDArray],
    expected: Sequence[NDArray],
    reference: Callable[[list[NDArray]], list[NDArray]] | None = None,
) -> Agreement:
    """Whether a backend's results of one primitive agree with the reference's.

    ``reference(operands)`` re-runs the reference, for the flushed-subnormal
    allowance (rule 4); without it that allowance only accepts ±0 for tiny
    expected values.
    """
    bad_types = _check_types(actual, expected)
    if bad_types is not None:
        return bad_types
    if _any_complex(actual) and name not in COMPLEX_BOUNDED and name not in LINALG:
        # (The FFT's and the decompositions' complex results keep their normwise bounds, and the
        # decompositions' vectors their phase alignment: rule 3 and ``with_expected_signs`` below.)
        parts = compare_primitive(name, params, [_magnitude(x) for x in operands], _split(actual), _split(expected))
        return _joined(parts, actual)
    unsigned = actual
    actual = with_expected_signs(name, params, actual, expected)
    operands = [np.asarray(x) for x in operands]
    flushes = (name not in BIT_EXACT or any((name, x.dtype) in FLUSHING_MOVES for x in actual)) and any(
        x.dtype in FLUSHABLE for x in [*operands, *actual]
    )
    flushed_ops = [_flush(x) for x in operands]
    flushed_expected: list[NDArray] = []
    flushed_actual: list[NDArray] = []

    def on_flushed(k: int) -> tuple[NDArray, NDArray] | None:
        """(actual, the reference on flushed operands), the vectors' signs matched to the latter."""
        if reference is None:
            return None
        if not flushed_expected:
            with np.errstate(all="ignore"):
                flushed_expected.extend(np.asarray(r) for r in reference(flushed_ops))
            flushed_actual.extend(with_expected_signs(name, params, unsigned, flushed_expected))
        return flushed_actual[k], flushed_expected[k]

    worst = 0.0
    for k, (a, e) in enumerate(zip(actual, expected)):
        dist = ulp_distance(a, e)
        tol = tolerance(name, a.dtype)
        broadcast_div = name == "div" and _is_float(a.dtype) and any(x.shape != a.shape for x in operands)
        if broadcast_div:
            tol = Tolerance(1)  # x / y as x * (1 / y) when y is broadcast: 1 ulp
        ok = _agrees(a, e, tol, dist, operands, params)
        plain_ok = ok.copy()
        excused = np.zeros(a.shape, bool)
        if flushes and not ok.all():
            if _is_float(a.dtype):
                with np.errstate(invalid="ignore"):
                    excused |= (a == 0) & (np.abs(_f64(e)) < FLUSH_MARGIN * float(dtypes.finfo(a.dtype).tiny))
            pair = on_flushed(k)
            if pair is not None:
                fa, f = pair
                excused |= _agrees(fa, f, tol, ulp_distance(fa, f), flushed_ops, params)
                # A sort orders by flushed keys but moves the operand's own bits.
                ff = _flush(fa)
                excused |= _agrees(ff, f, tol, ulp_distance(ff, f), flushed_ops, params)
        if broadcast_div and a.size:
            excused |= _reciprocal_division(operands, a)
        if name in NEAR_POLE_REFERENCE_LOSS and operands[0].dtype == np.dtype(np.float64):
            x = np.broadcast_to(_f64(operands[0]), a.shape)
            with np.errstate(invalid="ignore"):
                excused |= (x < 0) & (np.abs(x - np.round(x)) < 1e-12)
        if name == "conv_general_dilated" and _is_float(a.dtype) and _conv_nan_unspecified(params, operands[1]):
            excused |= np.isnan(_f64(a))
        if name in SUBNORMAL_UNSPECIFIED:
            for x in operands:
                excused |= np.broadcast_to(_subnormal(x), a.shape)
        ok = np.asarray(ok | excused)
        worst = max(worst, _worst(dist, plain_ok | ~ok))
        if not ok.all():
            return Agreement(False, worst, _describe(k, a, e, ok, dist, tol.describe()))
    return Agreement(True, worst)


def _agrees(
    a: NDArray, e: NDArray, tol: Tolerance, dist: NDArray, operands: Sequence[NDArray], params: Mapping[str, Any]
) -> NDArray:
    """Elementwise agreement by rules 1-3."""
    if a.dtype.kind == "c" and tol.bound:  # each part within the (magnitude-based) bound
        bound = BOUNDS[tol.bound](operands, params, e)
        with np.errstate(all="ignore"):
            ok = _within_bound(a.real, e.real, bound) & _within_bound(a.imag, e.imag, bound)
            if tol.bound in OVERFLOWS:  # results left unspecified (an FFT of non-finite values)
                ok |= np.broadcast_to(OVERFLOWS[tol.bound](operands, params, e), ok.shape)
            return np.asarray(ok)
    if not _is_float(a.dtype):
        return np.asarray(a == e)
    if tol.bound:
        with np.errstate(all="ignore"):
            ok = _within_bound(a, e, BOUNDS[tol.bound](operands, params, e))
            if tol.bound in OVERFLOWS:
                ok |= np.broadcast_to(OVERFLOWS[tol.bound](operands, params, e), ok.shape)
            return ok
    return _within(a, e, tol, dist)


def _conv_nan_unspecified(params: Mapping[str, Any], rhs: NDArray) -> bool:
    """Whether XLA may give NaN for a conv's numbers (spec/primitives/convolution.md): a kernel
    holding an infinity or NaN, with padding or lhs holes (XLA on CPU skips them in one algorithm
    and multiplies their zeros in another, e.g. a 1x1 kernel done as a dot) or batch groups
    (its rewrite of them lets the entry reach the other groups)."""
    if np.isfinite(_f64(rhs)).all():
        return False
    filled = any(lo > 0 or hi > 0 for lo, hi in params["padding"]) or any(d > 1 for d in params["lhs_dilation"])
    return bool(filled or int(params["batch_group_count"]) > 1)


def _reciprocal_division(operands: Sequence[NDArray], a: NDArray) -> NDArray:
    """XLA's x * (1 / y) also where the reciprocal itself over- or underflows."""
    x, y = (np.asarray(o) for o in operands)
    work = np.dtype(np.float64) if a.dtype == np.dtype(np.float64) else np.dtype(np.float32)
    with np.errstate(all="ignore"):
        reciprocal = _flush((np.ones((), work) / y.astype(work)).astype(a.dtype))
        as_xla = np.broadcast_to((x.astype(work) * reciprocal.astype(work)).astype(a.dtype), a.shape)
    return _within(a, np.asarray(as_xla), Tolerance(1), ulp_distance(a, np.asarray(as_xla)))


def compare_program(
    actual: Sequence[NDArray], expected: Sequence[NDArray], rtol: float | None = None, atol: float = 0.0
) -> Agreement:
    """Whether a backend's outputs of a whole program agree with the reference's.

    Integers and booleans exactly; floats with NaN and infinities in the same
    places and the rest within ``rtol * (|expected| + max |expected|) + atol``
    (``PROGRAM_RTOL`` by dtype unless ``rtol`` is given; ``atol``, for an
    expected value with an absolute error of its own, 0 unless given).
    """
    bad_types = _check_types(actual, expected)
    if bad_types is not None:
        return bad_types
    if _any_complex(actual):
        return _joined(compare_program(_split(actual), _split(expected), rtol, atol), actual)
    worst = 0.0
    for k, (a, e) in enumerate(zip(actual, expected)):
        dist = ulp_distance(a, e)
        if not _is_float(a.dtype):
            ok = np.asarray(a == e)
            allowed = "exact"
        else:
            tol = PROGRAM_RTOL[a.dtype.name] if rtol is None else rtol
            w = _f64(e)
            finite = np.isfinite(w)
            scale = float(np.max(np.abs(w[finite]), initial=0.0)) if w.ndim else (abs(float(w)) if finite else 0.0)
            with np.errstate(invalid="ignore"):
                ok = _within_bound(a, e, tol * (np.abs(w) + scale) + atol)
            allowed = f"rtol {tol:g} (normwise)" + (f" + atol {atol:.3g}" if atol else "")
        worst = max(worst, _worst(dist, np.ones(np.shape(ok), bool)))
        if not ok.all():
            return Agreement(False, worst, _describe(k, a, e, ok, dist, allowed))
    return Agreement(True, worst)


# Complex results (spec/tolerances.md, "Complex results"): a complex number is judged as its
# two parts, each by the rules of the parts' dtype (so NaN parts agree with NaN parts, as
# for real results), and the number agrees when both parts do. Bounds that scale with the
# operands' magnitudes see a complex operand's modulus.


def _any_complex(xs: Sequence[NDArray]) -> bool:
    return any(np.iscomplexobj(x) for x in xs)


def _split(xs: Sequence[NDArray]) -> list[NDArray]:
    """Each complex array as its real and imaginary parts (two outputs); real arrays as they are."""
    out: list[NDArray] = []
    for x in xs:
        x = np.asarray(x)
        out.extend([np.ascontiguousarray(x.real), np.ascontiguousarray(x.imag)] if np.iscomplexobj(x) else [x])
    return out


def _magnitude(x: NDArray) -> NDArray:
    x = np.asarray(x)
    return np.asarray(np.abs(x)) if np.iscomplexobj(x) else x


def _joined(parts: Agreement, actual: Sequence[NDArray]) -> Agreement:
    """``parts``'s verdict on the split outputs, its message naming the output and part it was about."""
    if parts.ok or not parts.detail.startswith("output "):
        return parts
    names: list[str] = []
    for k, x in enumerate(actual):
        if np.iscomplexobj(x):
            aval = f"{dtypes.short_dtype_name(np.asarray(x).dtype)}[{','.join(map(str, np.shape(x)))}]"
            names += [f"output {k} ({aval}), real part", f"output {k} ({aval}), imaginary part"]
        else:
            names.append(f"output {k}")
    head, _, rest = parts.detail.partition(" (")
    index = int(head.split()[1])
    return Agreement(False, parts.worst_ulps, f"{names[index]} ({rest}" if index < len(names) else parts.detail)


@functools.cache
def documented_rows() -> tuple[str, ...]:
    """The rows of the table in spec/tolerances.md, as this module states them."""
    rows = []
    for name, per_dtype in ULPS.items():
        for dtype_name, (ulps, abs_eps) in per_dtype.items():
            rows.append(f"| `{name}` | {dtype_name} | {ulps} | {abs_eps} |")
    return tuple(rows)


__all__ = [
    "BIT_EXACT",
    "BOUNDS",
    "BOUND_OF",
    "EXACT",
    "FLUSHABLE",
    "FLUSHING_MOVES",
    "FLUSH_MARGIN",
    "LINALG",
    "LINALG_RTOL",
    "NEAR_POLE_REFERENCE_LOSS",
    "OVERFLOWS",
    "PROGRAM_RTOL",
    "SUBNORMAL_UNSPECIFIED",
    "ULPS",
    "Agreement",
    "Tolerance",
    "compare_primitive",
    "compare_program",
    "documented_rows",
    "tolerance",
    "ulp_distance",
    "with_expected_signs",
]
