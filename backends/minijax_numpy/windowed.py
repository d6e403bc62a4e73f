"""NumPy implementations of the windowed reductions (spec/primitives/windowed.md).

Every primitive starts from ``window_view``: the operand with the base
dilation's holes and the padding filled with an identity, seen through a
sliding window (a strided view, no copy of the windows) whose leading axes are
the output positions and whose trailing axes are the window's taps.

The selections of select_and_scatter_add and select_and_gather_add run over
the taps in row-major order with XLA's rule (the running choice is kept while
``select(choice, tap)`` holds), so ties go to the first tap and NaNs behave as
they do in XLA.

Accumulation: float16/bfloat16 window sums run in float32 and round each
result once; integers wrap around.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from minijax.primitives.reductions import reduction_identity
from minijax.primitives.windowed import dilate_shape, reduce_window_shape_tuple
from minijax_numpy.table import HIGHER_ORDER, IMPLS, JaxprCompiler

Array = np.ndarray[Any, Any]
Shape = tuple[int, ...]
Padding = Sequence[tuple[int, int]]


def window_view(x: Array, fill: Any, window_dimensions: Shape, window_strides: Shape, padding: Padding,
                base_dilation: Shape, window_dilation: Shape) -> Array:
    """The windows of ``x``: shape ``out_shape + window_dimensions`` (a read-only view where it can be)."""
    ndim = x.ndim
    fill = np.asarray(fill, x.dtype)
    out_shape = reduce_window_shape_tuple(x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    if 0 in out_shape:
        return np.empty(out_shape + tuple(window_dimensions), x.dtype)
    # Base dilation: the elements, base_dilation - 1 identities apart.
    dilated = np.full(dilate_shape(x.shape, base_dilation), fill, x.dtype)
    dilated[tuple(slice(None, None, b) for b in base_dilation)] = x
    # Padding: positive pads add identities, then negative ones crop (a crop
    # longer than the operand eats into the padding at the other end).
    grown = np.pad(dilated, [(max(lo, 0), max(hi, 0)) for lo, hi in padding], constant_values=fill)
    padded = grown[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(grown.shape, padding))]
    # Every window of the dilated window's extent, then every stride-th of them and every dilation-th tap.
    extent = dilate_shape(window_dimensions, window_dilation)
    view = sliding_window_view(padded, extent)
    picked = view[tuple(slice(None, None, s) for s in window_strides) + tuple(slice(None, None, d) for d in window_dilation)]
    assert picked.shape[:ndim] == out_shape
    return picked


def _flat_taps(windows: Array, ndim: int) -> Array:
    """The windows with their taps on one last axis, in row-major tap order."""
    return windows.reshape(windows.shape[:ndim] + (int(np.prod(windows.shape[ndim:])),))


def _window_axes(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim, 2 * ndim))


def _is_float(dt: np.dtype[Any]) -> bool:
    return dt.kind == "f" or dt.name == "bfloat16"


# ---------------------------------------------------------------------------
# reduce_window_sum, reduce_window_max, reduce_window_min


def _reduce_window_sum(x: Array, **params: Any) -> Array:
    windows = window_view(x, 0, **params)
    narrow = _is_float(x.dtype) and x.dtype.itemsize == 2
    total = windows.sum(axis=_window_axes(x.ndim), dtype=np.float32 if narrow else x.dtype)
    return np.asarray(total).astype(x.dtype)


def _extremum(name: str, ufunc: np.ufunc, negative_zero_wins: bool) -> Callable[..., Array]:
    def run(x: Array, **params: Any) -> Array:
        windows = window_view(x, reduction_identity(name, x.dtype), **params)
        axes = _window_axes(x.ndim)
        out = np.asarray(ufunc.reduce(windows, axis=axes))  # NaN propagates, as in XLA
        if _is_float(x.dtype):
            # max(-0.0, 0.0) is 0.0 and min(-0.0, 0.0) is -0.0 in XLA; NumPy keeps either.
            seen = ((windows == 0) & (np.signbit(windows) == negative_zero_wins)).any(axis=axes)
            wanted = np.copysign(np.zeros((), x.dtype), -1.0 if negative_zero_wins else 1.0)
            out = np.where((out == 0) & seen, wanted, out)
        return np.asarray(out, x.dtype)

    return run


IMPLS["reduce_window_sum"] = _reduce_window_sum
IMPLS["reduce_window_max"] = _extremum("reduce_max", np.maximum, negative_zero_wins=False)
IMPLS["reduce_window_min"] = _extremum("reduce_min", np.minimum, negative_zero_wins=True)


# ---------------------------------------------------------------------------
# reduce_window: the body jaxpr folded over the taps


def _reduce_window(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., Any]:
    combine = backend.compile_jaxpr(params["jaxpr"], list(params["consts"]))
    window = {k: params[k] for k in ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")}

    def run(*args: Array) -> list[Array]:
        n = len(args) // 2
        operands, inits = args[:n], args[n:]
        ndim = operands[0].ndim
        taps = [_flat_taps(window_view(np.asarray(x), init, **window), ndim) for x, init in zip(operands, inits)]
        # Which taps are operand elements: holes and padding are skipped (the
        # init value is taken in once, as the accumulator's start), as XLA does.
        real = _flat_taps(window_view(np.ones(operands[0].shape, bool), False, **window), ndim)
        out_shape = real.shape[:ndim]
        acc = [np.broadcast_to(np.asarray(init), out_shape) for init in inits]
        # The body is a function of scalars made of elementwise primitives: it
        # runs on whole arrays, one window tap at a time, in row-major tap order.
        for k in range(real.shape[-1]):
            outs = combine(*acc, *[t[..., k] for t in taps])
            acc = [np.where(real[..., k], np.asarray(o), a) for o, a in zip(outs, acc)]
        return [np.array(a, dtype=x.dtype) for a, x in zip(acc, operands)]

    return run


HIGHER_ORDER["reduce_window"] = _reduce_window


# ---------------------------------------------------------------------------
# select_and_scatter_add, select_and_gather_add


def _selects(select_prim: Any) -> tuple[Callable[[Array, Array], Array], str]:
    """XLA's rule for keeping the running choice, and the identity that pads the operand."""
    if select_prim.name == "ge":
        return np.greater_equal, "reduce_max"
    return np.less_equal, "reduce_min"


def _select_and_scatter_add(source: Array, operand: Array, *, select_prim: Any, window_dimensions: Shape,
                            window_strides: Shape, padding: Padding) -> Array:
    keep, identity = _selects(select_prim)
    ndim = operand.ndim
    ones = (1,) * ndim
    # As JAX lowers it on CPU: the padding is real identity elements, which a
    # window may select (its source value is then dropped with the padding).
    windows = window_view(operand, reduction_identity(identity, operand.dtype), window_dimensions, window_strides,
                          padding, ones, ones)
    out_shape = windows.shape[:ndim]
    taps = _flat_taps(windows, ndim)
    result = np.zeros(operand.shape, source.dtype)
    if taps.size == 0:
        return result
    chosen_value, chosen = taps[..., 0], np.zeros(out_shape, np.int64)
    for k in range(1, taps.shape[-1]):
        kept = keep(chosen_value, taps[..., k])
        chosen_value = np.where(kept, chosen_value, taps[..., k])
        chosen = np.where(kept, chosen, k)
    # The chosen tap's position in the operand: window start + tap offset - low pad.
    offsets = np.unravel_index(chosen, window_dimensions)
    starts = np.indices(out_shape)
    positions = [starts[d] * window_strides[d] + offsets[d] - padding[d][0] for d in range(ndim)]
    inside = np.ones(out_shape, bool)
    for d in range(ndim):
        inside &= (positions[d] >= 0) & (positions[d] < operand.shape[d])
    np.add.at(result, tuple(p[inside] for p in positions), source[inside])
    return result


def _select_and_gather_add(tangents: Array, operand: Array, *, select_prim: Any, window_dimensions: Shape,
                           window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape) -> Array:
    keep, identity = _selects(select_prim)
    worst = reduction_identity(identity, operand.dtype)
    window = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    values, taps = window_view(operand, worst, *window), window_view(tangents, 0, *window)
    ndim = operand.ndim
    out_shape = values.shape[:ndim]
    values, taps = _flat_taps(values, ndim), _flat_taps(taps, ndim)
    # A reduction of (value, tangent) pairs from (identity, 0), as JAX lowers it.
    # Holes and padding are skipped, as XLA's reduce_window skips them: they are
    # not a no-op here, as a NaN value loses to a following identity under XLA's
    # rule, so taking them in would drop the NaN's tangent that XLA (and JAX) keep.
    real = _flat_taps(window_view(np.ones(operand.shape, bool), False, *window), ndim)
    best = np.full(out_shape, worst, operand.dtype)
    gathered = np.zeros(out_shape, tangents.dtype)
    for k in range(values.shape[-1]):
        kept = keep(best, values[..., k]) | ~real[..., k]
        best = np.where(kept, best, values[..., k])
        gathered = np.where(kept, gathered, taps[..., k])
    return gathered


IMPLS["select_and_scatter_add"] = _select_and_scatter_add
IMPLS["select_and_gather_add"] = _select_and_gather_add
