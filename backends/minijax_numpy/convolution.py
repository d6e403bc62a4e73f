"""NumPy implementation of conv_general_dilated (spec/primitives/convolution.md).

The convolution is computed in the canonical layout, lhs (batch, feature,
spatial...) and rhs (out, in, spatial...):

1. the lhs is dilated (``lhs_dilation - 1`` zeros between neighbours) and
   padded (negative pads crop);
2. every window position is read at once through a strided view
   (``sliding_window_view``), stepping by the strides over positions and by
   the rhs dilation inside a window;
3. the windows are laid out as the rows of one matrix per group (im2col),
   and a matrix product with the kernel, one per group, gives the result
   (where the kernel holds an infinity or NaN, the zeros of step 1 are
   kept out of the products: XLA adds no product for them).

Accumulation is dot_general's (``dot_accumulation_dtypes``): float16/bfloat16
in float32 rounded once, float32 in float32, integers wrapping in the result
type, a boolean result meaning "some product is nonzero".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax.primitives.reductions import dot_accumulation_dtypes
from minijax_numpy.reductions import _float_to, _is_float
from minijax_numpy.table import impl

Array = np.ndarray[Any, Any]


def _dilate_and_pad(x: Array, axes: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[tuple[int, int], ...]) -> Array:
    """``x`` with its spatial ``axes`` dilated, then padded (negative pads crop).

    Done in the operand's own layout, so that the copy keeps its memory order
    (for NHWC the features stay contiguous, which the im2col copy reads best)."""
    shape = list(x.shape)
    for axis, d in zip(axes, dilation):
        shape[axis] = 0 if x.shape[axis] == 0 else (x.shape[axis] - 1) * d + 1
    if tuple(shape) != x.shape:
        holes = np.zeros(shape, x.dtype)
        at = [slice(None)] * x.ndim
        for axis, d in zip(axes, dilation):
            at[axis] = slice(None, None, d)
        holes[tuple(at)] = x
        x = holes
    grow = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for axis, (lo, hi) in zip(axes, padding):
        grow[axis] = (max(lo, 0), max(hi, 0))
        crop[axis] = slice(max(-lo, 0), x.shape[axis] + max(lo, 0) + max(hi, 0) - max(-hi, 0))
    if any(g != (0, 0) for g in grow):
        x = np.pad(x, grow)
    return x[tuple(crop)]


def _skipping_fill(patches: Array, filters: Array, lhs: Array, lhs_spec: tuple[int, ...], lhs_dilation: tuple[int, ...],
                   padding: tuple[tuple[int, int], ...], im2col: Any, window_view: Any) -> Array:
    """``patches @ filters`` where the padding and the lhs dilation's holes add no product at all.

    XLA (and so JAX) skips those taps rather than multiplying by a zero, which
    shows where the kernel holds an infinity or NaN: 0 * inf would be NaN. The
    finite kernel entries go through the matrix product (a zero times them is
    exactly the nothing XLA adds); each non-finite entry is then added only
    where its tap reads an operand element."""
    finite = np.isfinite(filters)
    product: Array = np.matmul(patches, np.where(finite, filters, 0))
    real = im2col(window_view(_dilate_and_pad(np.ones(lhs.shape, bool), lhs_spec[2:], lhs_dilation, padding).transpose(lhs_spec)))
    for g, k in zip(*np.nonzero(~finite.all(axis=2))):
        cols = ~finite[g, k]
        with np.errstate(invalid="ignore"):  # an operand's 0 or inf times the kernel's inf or NaN
            taken = patches[g, :, k, None] * filters[g, k, cols][None, :]
        product[g][:, cols] += np.where(real[g, :, k, None], taken, 0)
    return product


@impl("conv_general_dilated")
def _conv_general_dilated(
    lhs: Array,
    rhs: Array,
    *,
    window_strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: Any,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any = None,
) -> Array:
    lhs_spec, rhs_spec, out_spec = (tuple(s) for s in dimension_numbers)
    out_dtype = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    stage, work = dot_accumulation_dtypes(lhs.dtype, out_dtype)
    # A conversion copies only when the dtype changes; x and w are canonical views.
    x = lhs.astype(stage, copy=False).astype(work, copy=False)
    x = _dilate_and_pad(x, lhs_spec[2:], lhs_dilation, padding).transpose(lhs_spec)
    w = rhs.transpose(rhs_spec).astype(stage, copy=False).astype(work, copy=False)
    nsp = x.ndim - 2
    kernel = w.shape[2:]
    reach = tuple((k - 1) * d + 1 for k, d in zip(kernel, rhs_dilation))
    out_sp = tuple(max((n - r) // s + 1, 0) for n, r, s in zip(x.shape[2:], reach, window_strides))
    groups = max(feature_group_count, batch_group_count)
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    rows = n // batch_group_count
    # The result, allocated in its own layout; ``canonical`` is a view of it as (batch, out, spatial...).
    result = np.empty(tuple(np.take((rows, o, *out_sp), np.argsort(out_spec))), out_dtype)
    canonical = result.transpose(out_spec)
    if result.size == 0:
        return result
    def window_view(x: Array) -> Array:
        """(n, c, positions..., window...), a strided view of x, no copy yet."""
        windows = np.lib.stride_tricks.sliding_window_view(x, reach, axis=tuple(range(2, 2 + nsp)))
        return windows[
            (slice(None), slice(None), *(slice(None, p * s, s) for p, s in zip(out_sp, window_strides)),
             *(slice(None, None, d) for d in rhs_dilation))
        ]  # fmt: skip

    windows = window_view(x)
    npos, ksize = int(np.prod(out_sp)), int(np.prod(kernel))
    positions = tuple(range(3, 3 + nsp))
    taps = tuple(range(3 + nsp, 3 + 2 * nsp))

    def im2col(windows: Array) -> Array:
        """The im2col matrix of each group: one row per window placement, its columns
        (window position, feature) -- features last, the order an NHWC operand has in memory."""
        if batch_group_count > 1:
            # Group g reads lhs batch rows [g*rows, (g+1)*rows) with every feature.
            split = windows.reshape(groups, rows, c, *out_sp, *kernel)
            return split.transpose(0, 1, *positions, *taps, 2).reshape(groups, rows * npos, ksize * c)
        # Group g reads lhs features [g*c/G, (g+1)*c/G) of every batch row.
        split = windows.reshape(n, groups, c // groups, *out_sp, *kernel)
        return split.transpose(1, 0, *positions, *taps, 2).reshape(groups, n * npos, ksize * (c // groups))

    patches = im2col(windows)
    # Group g's kernel: out features [g*o/G, (g+1)*o/G) as (window position, feature) x out.
    filters = w.reshape(groups, o // groups, *w.shape[1:]).transpose(0, *range(3, 3 + nsp), 2, 1)
    filters = filters.reshape(groups, ksize * w.shape[1], o // groups)
    filled = any(lo > 0 or hi > 0 for lo, hi in padding) or any(d > 1 for d in lhs_dilation)
    if filled and _is_float(work) and not np.isfinite(filters).all():
        product = _skipping_fill(patches, filters, lhs, lhs_spec, lhs_dilation, padding, im2col, window_view)
    else:
        product = np.matmul(patches, filters)
    product = product.reshape(groups, rows, *out_sp, o // groups)
    # -> (rows, groups, out/G, spatial...), written into the result's (batch, out, spatial...) view.
    product = product.transpose(1, 0, nsp + 2, *range(2, 2 + nsp))
    target = canonical.reshape(rows, groups, o // groups, *out_sp)
    if _is_float(work) and not _is_float(out_dtype) or out_dtype == np.bool_:
        product = _float_to(product, out_dtype) if _is_float(work) else product != 0
    np.copyto(target, product, casting="unsafe")
    if not np.shares_memory(target, result):  # (the split view of a strided result may be a copy)
        canonical[...] = target.reshape(canonical.shape)
    return result
