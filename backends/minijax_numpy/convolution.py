"""NumPy implementation of conv_general_dilated (spec/primitives/convolution.md).

The convolution is computed in the canonical layout, lhs (batch, feature,
spatial...) and rhs (out, in, spatial...):

1. the lhs is dilated (``lhs_dilation - 1`` zeros between neighbours) and
   padded (negative pads crop);
2. every window position is read at once through a strided view
   (``sliding_window_view``), stepping by the strides over positions and by
   the rhs dilation inside a window;
3. the windows are laid out as the rows of one matrix per group (im2col),
   and a matrix product with the kernel, one per group, gives the result.

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


def _dilate_and_pad(x: Array, dilation: tuple[int, ...], padding: tuple[tuple[int, int], ...]) -> Array:
    """``x`` (canonical layout) with its spatial axes dilated, then padded (negative pads crop)."""
    spatial = x.shape[2:]
    dilated = tuple(0 if n == 0 else (n - 1) * d + 1 for n, d in zip(spatial, dilation))
    if dilated != spatial:
        holes = np.zeros(x.shape[:2] + dilated, x.dtype)
        holes[(slice(None), slice(None), *(slice(None, None, d) for d in dilation))] = x
        x = holes
    grow = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    if any(g != (0, 0) for g in grow):
        x = np.pad(x, grow)
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(x.shape[2:], padding))
    return x[(slice(None), slice(None), *crop)]


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
    x = lhs.transpose(lhs_spec).astype(stage).astype(work)
    w = rhs.transpose(rhs_spec).astype(stage).astype(work)
    nsp = x.ndim - 2
    kernel = w.shape[2:]
    x = _dilate_and_pad(x, lhs_dilation, padding)
    reach = tuple((k - 1) * d + 1 for k, d in zip(kernel, rhs_dilation))
    out_sp = tuple(max((n - r) // s + 1, 0) for n, r, s in zip(x.shape[2:], reach, window_strides))
    groups = max(feature_group_count, batch_group_count)
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    out_n = n // batch_group_count
    if 0 in out_sp or 0 in (out_n, o):
        result = np.zeros((out_n, o, *out_sp), work)
    else:
        # windows: (n, c, positions..., window...), a view, no copy yet.
        windows = np.lib.stride_tricks.sliding_window_view(x, reach, axis=tuple(range(2, 2 + nsp)))
        windows = windows[
            (slice(None), slice(None), *(slice(None, p * s, s) for p, s in zip(out_sp, window_strides)),
             *(slice(None, None, d) for d in rhs_dilation))
        ]  # fmt: skip
        npos, ksize = int(np.prod(out_sp)), int(np.prod(kernel))
        if batch_group_count > 1:
            # Group g reads lhs batch rows [g*out_n, (g+1)*out_n) with every feature.
            cols = windows.reshape(groups, out_n, c, npos, ksize)
            patches = cols.transpose(0, 1, 3, 2, 4).reshape(groups, out_n * npos, c * ksize)
        else:
            # Group g reads lhs features [g*c/G, (g+1)*c/G) of every batch row.
            cols = windows.reshape(n, groups, c // groups, npos, ksize)
            patches = cols.transpose(1, 0, 3, 2, 4).reshape(groups, n * npos, (c // groups) * ksize)
        # Group g's kernel: out features [g*o/G, (g+1)*o/G) as (in * window, out) columns.
        filters = w.reshape(groups, o // groups, w.shape[1] * ksize).transpose(0, 2, 1)
        product = np.matmul(patches, filters)  # (groups, rows, out/G)
        rows = out_n if batch_group_count > 1 else n
        product = product.reshape(groups, rows, *out_sp, o // groups)
        # -> (rows, groups, out/G, spatial...) = (batch, out features, spatial...)
        result = np.moveaxis(product, (0, nsp + 2), (1, 2)).reshape(rows, o, *out_sp)
    if _is_float(work):
        result = _float_to(result, out_dtype)
    else:
        result = np.asarray(result != 0 if out_dtype == np.bool_ else result.astype(out_dtype))
    return np.ascontiguousarray(result.transpose(np.argsort(out_spec)))
