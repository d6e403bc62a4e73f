"""NumPy implementations of sort, top_k and the cumulative primitives (spec/primitives/sorting.md).

Orders (the spec's "Orders"): ``sort`` compares floats with -0.0 equal to
0.0 and every NaN after +inf; ``top_k`` uses the IEEE total order, in which
the sign of zeros and NaNs counts. Both are computed from integer sort keys
and NumPy's stable sorts, so equal elements keep their order.

Accumulation: float16/bfloat16 cumulative sums, products and logsumexps run
in float32 and round each result once; integers wrap around.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax_numpy.table import impl

Array = np.ndarray[Any, Any]


def _is_float(dt: np.dtype[Any]) -> bool:
    return dt.kind == "f" or dt.name == "bfloat16"


def _sort_key(x: Array) -> Array:
    """Values NumPy's sort orders as ``sort`` does: -0.0 as 0.0 (NaNs already go last, whatever their sign)."""
    if not _is_float(x.dtype):
        return x
    if x.dtype.itemsize == 2:  # float16/bfloat16: exactly representable in float32
        x = x.astype(np.float32)
    return np.where(x == 0, np.zeros((), x.dtype), x)


def _total_order_key(x: Array) -> Array:
    """Signed integers ordered as the IEEE total order orders ``x`` (integers and bools as they are)."""
    if x.dtype == np.bool_:
        return x.astype(np.uint8)
    if not _is_float(x.dtype):
        return x
    signed = np.dtype(f"i{x.dtype.itemsize}")
    bits = x.view(signed)
    # Negative floats order backwards as integers: flip their magnitude bits.
    magnitude = np.array(np.iinfo(signed).max, signed)
    return np.where(bits < 0, bits ^ magnitude, bits)


@impl("sort")
def _sort(*operands: Array, dimension: int, is_stable: bool, num_keys: int) -> list[Array]:
    # Least significant key first: each stable sort keeps the order of the
    # ones before it among its ties (a lexicographic sort). A stable sort is
    # also a valid unstable one.
    perm: Array | None = None
    for key in reversed(operands[:num_keys]):
        k = _sort_key(key if perm is None else np.take_along_axis(key, perm, dimension))
        order = np.argsort(k, axis=dimension, kind="stable")
        perm = order if perm is None else np.take_along_axis(perm, order, dimension)
    assert perm is not None  # sort C4: at least one key
    return [np.take_along_axis(x, perm, dimension) for x in operands]


@impl("top_k")
def _top_k(x: Array, *, k: int, axis: int) -> list[Array]:
    key = np.moveaxis(_total_order_key(x), axis, -1)
    n = key.shape[-1]
    # Largest first, ties in index order: a stable ascending sort of the
    # reversed row, read backwards.
    ascending = np.argsort(key[..., ::-1], axis=-1, kind="stable")
    order = (n - 1 - ascending[..., ::-1])[..., :k]
    values = np.take_along_axis(np.moveaxis(x, axis, -1), order, -1)
    return [np.moveaxis(values, -1, axis), np.moveaxis(order.astype(np.int32), -1, axis)]


# ---------------------------------------------------------------------------
# Cumulative reductions


def _along(fn: Callable[[Array, int], Array]) -> Callable[..., Array]:
    """A cumulative reduction from ``fn(x, axis)``: reversed by flipping, narrow floats in float32."""

    def run(x: Array, *, axis: int, reverse: bool) -> Array:
        dtype = x.dtype
        work = x.astype(np.float32) if _is_float(dtype) and dtype.itemsize == 2 else x
        if reverse:
            work = np.flip(work, axis)
        out = fn(work, axis)
        if reverse:
            out = np.flip(out, axis)
        return np.asarray(out).astype(dtype)

    return run


def _cumsum(x: Array, axis: int) -> Array:
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumprod(x: Array, axis: int) -> Array:
    return np.cumprod(x, axis=axis, dtype=x.dtype)


def _signed_zeros(x: Array, out: Array, axis: int, negative: bool) -> Array:
    # max(-0.0, 0.0) is 0.0 and min(-0.0, 0.0) is -0.0 whatever the order (as
    # XLA computes them); NumPy keeps whichever zero came first.
    seen = np.logical_or.accumulate((x == 0) & (np.signbit(x) == negative), axis=axis)
    wanted = np.copysign(np.zeros((), out.dtype), -1.0 if negative else 1.0)
    return np.where((out == 0) & seen, wanted, out)


def _extremum(ufunc: np.ufunc, negative_zero_wins: bool) -> Callable[[Array, int], Array]:
    def run(x: Array, axis: int) -> Array:
        out = ufunc.accumulate(x, axis=axis)  # NaN propagates, as in XLA
        return _signed_zeros(x, out, axis, negative_zero_wins) if _is_float(x.dtype) else out

    return run


def _cumlogsumexp(x: Array, axis: int) -> Array:
    return np.logaddexp.accumulate(x, axis=axis)


for _name, _fn in [
    ("cumsum", _cumsum),
    ("cumprod", _cumprod),
    ("cummax", _extremum(np.maximum, negative_zero_wins=False)),
    ("cummin", _extremum(np.minimum, negative_zero_wins=True)),
    ("cumlogsumexp", _cumlogsumexp),
]:
    impl(_name)(_along(_fn))

