"""NumPy implementations: reductions, argmax/argmin, dot_general (spec/primitives/reductions.md).

reduce_sum belongs to the structural family (as in ``minijax/primitives/``)
and is registered by ``structural.py``, with ``arithmetic_reduction`` below.

Accumulation: float16/bfloat16 sums, products and contractions accumulate in
float32 and round once at the end; float32 in float32, float64 in float64.
Integer arithmetic wraps around (NumPy integer arrays already do).
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from minijax.core import shape_size
from minijax.primitives.reductions import dot_accumulation_dtypes, dot_input_dtype, reduction_identity
from minijax_numpy.table import IMPLS, impl

Array = np.ndarray[Any, Any]


def _is_float(dt: np.dtype[Any]) -> bool:
    return dt.kind == "f" or dt.name == "bfloat16"


def _accumulator(dt: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype a floating-point reduction accumulates in."""
    return np.dtype(np.float64) if dt == np.float64 else np.dtype(np.float32)


def arithmetic_reduction(ufunc: np.ufunc) -> Callable[..., Array]:
    """The implementation of the reduction by ``ufunc`` (add, multiply), with
    the accumulation above. (structural.py uses it for reduce_sum.)"""

    def run(x: Array, *, axes: tuple[int, ...], out_sharding: Any = None) -> Array:
        if _is_float(x.dtype):
            # (copy=False: float32 already is its accumulator, and the sum is a fresh array)
            acc = ufunc.reduce(x.astype(_accumulator(x.dtype), copy=False), axis=tuple(axes))
            return np.asarray(acc).astype(x.dtype, copy=False)
        return np.asarray(ufunc.reduce(x, axis=tuple(axes), dtype=x.dtype))

    return run


IMPLS["reduce_prod"] = arithmetic_reduction(np.multiply)


def _fix_zero_sign(x: Array, result: Array, axes: tuple[int, ...], name: str) -> Array:
    # max(-0.0, +0.0) is +0.0 and min is -0.0 whatever the order (as XLA);
    # NumPy returns whichever zero it saw first.
    want_negative = name == "reduce_min"
    present = np.any((x == 0) & (np.signbit(x) == want_negative), axis=axes)
    return np.where((result == 0) & present, np.copysign(0.0, -1.0 if want_negative else 1.0), result)


def _complex_fold(name: str, x: Array, axes: tuple[int, ...]) -> Array:
    # XLA (and so JAX) reduces complex operands with the elementwise max/min, which
    # compare lexicographically and keep the second operand when the comparison is
    # false: a NaN does not win, and the answer depends on the order. That order is a
    # left fold from the identity over the reduced elements in row-major order.
    kept = [d for d in range(x.ndim) if d not in axes]
    length = math.prod(x.shape[d] for d in axes)
    rows = np.transpose(x, [*kept, *axes]).reshape(*[x.shape[d] for d in kept], length)
    acc = np.full(rows.shape[:-1], reduction_identity(name, x.dtype), x.dtype)
    for i in range(rows.shape[-1]):
        item = rows[..., i]
        if name == "reduce_max":
            keep = (acc.real > item.real) | ((acc.real == item.real) & (acc.imag > item.imag))
        else:
            keep = (acc.real < item.real) | ((acc.real == item.real) & (acc.imag < item.imag))
        acc = np.where(keep, acc, item)
    return np.asarray(acc)


def _ordered(name: str, ufunc: np.ufunc) -> Callable[..., Array]:
    def run(x: Array, *, axes: tuple[int, ...]) -> Array:
        axes = tuple(axes)
        if np.iscomplexobj(x):
            return _complex_fold(name, x, axes)
        work = x.astype(np.float32) if x.dtype.itemsize == 2 and _is_float(x.dtype) else x
        result = ufunc.reduce(work, axis=axes, initial=reduction_identity(name, x.dtype))
        if _is_float(x.dtype):
            result = _fix_zero_sign(work, result, axes, name)
        return np.asarray(result).astype(x.dtype)

    return run


def _bitwise(name: str, ufunc: np.ufunc) -> Callable[..., Array]:
    def run(x: Array, *, axes: tuple[int, ...]) -> Array:
        return np.asarray(ufunc.reduce(x, axis=tuple(axes), initial=reduction_identity(name, x.dtype)))

    return run


IMPLS["reduce_max"] = _ordered("reduce_max", np.maximum)
IMPLS["reduce_min"] = _ordered("reduce_min", np.minimum)
IMPLS["reduce_and"] = _bitwise("reduce_and", np.bitwise_and)
IMPLS["reduce_or"] = _bitwise("reduce_or", np.bitwise_or)
IMPLS["reduce_xor"] = _bitwise("reduce_xor", np.bitwise_xor)


def _arg(np_fn: Callable[..., Array]) -> Callable[..., Array]:
    # NumPy's argmax/argmin already take the first NaN as the extreme and the
    # first index among ties (-0.0 == +0.0), as JAX does.
    def run(x: Array, *, axes: tuple[int, ...], index_dtype: Any) -> Array:
        work = x.astype(np.float32) if x.dtype.name == "bfloat16" else x
        # operator.index: the axis may be a bool (JAX keeps True as given), which NumPy refuses.
        return np.asarray(np_fn(work, axis=operator.index(axes[0]))).astype(index_dtype)  # wraps, for narrow index dtypes

    return run


IMPLS["argmax"] = _arg(np.argmax)
IMPLS["argmin"] = _arg(np.argmin)


# ---------------------------------------------------------------------------
# dot_general


def _float_to(x: Array, dt: np.dtype[Any]) -> Array:
    """Convert a floating-point result as XLA does: to integers with truncation,
    saturating at the type's bounds, NaN -> 0; to bool as x != 0."""
    if dt == np.bool_:
        return np.not_equal(x, 0)
    if dt.kind not in "iu":
        return x.astype(dt)
    info = np.iinfo(dt)
    x = np.trunc(x.astype(np.float64))
    # Compare in float64 and pick the bounds exactly: float(info.max) may round up.
    high, low = x >= float(info.max), x <= float(info.min)
    inside = np.where(high | low | np.isnan(x), 0, x).astype(dt)
    return np.where(high, info.max, np.where(low, info.min, inside)).astype(dt)


def _matrix_form(
    shape: tuple[int, ...], batch: tuple[int, ...], rows: tuple[int, ...], cols: tuple[int, ...]
) -> tuple[tuple[int, ...] | None, tuple[int, ...]]:
    """How an operand of ``shape`` becomes a stack of matrices: the axes ordered
    (batch..., rows..., cols...) (None: already in that order), then the rows and
    the cols each merged into one, giving the returned shape."""
    order = batch + rows + cols
    merged = tuple(shape[i] for i in batch) + (shape_size(shape[i] for i in rows), shape_size(shape[i] for i in cols))
    return (None if order == tuple(range(len(shape))) else order), merged


def _conversions(start: np.dtype[Any], chain: tuple[np.dtype[Any], ...]) -> tuple[np.dtype[Any], ...]:
    """The conversions of ``chain`` that change something, for an operand of dtype ``start``."""
    steps = []
    for dt in chain:
        if dt != start:
            steps.append(dt)
            start = dt
    return tuple(steps)


DotPlan = tuple[Any, ...]


@functools.lru_cache(maxsize=512)
def _dot_plan(
    dimension_numbers: Any,
    lhs_shape: tuple[int, ...],
    rhs_shape: tuple[int, ...],
    lhs_dtype: np.dtype[Any],
    rhs_dtype: np.dtype[Any],
    preferred_element_type: Any,
) -> DotPlan:
    """Everything ``_dot_general`` decides from the operands' shapes and dtypes
    and the params, decided once per such combination (eager calls repeat them):
    each operand's conversions and matrix form, the product's shape, the result
    dtype and whether the result is converted from the accumulator."""
    (lc, rc), (lb, rb) = (tuple(map(tuple, pair)) for pair in dimension_numbers)
    in_dtype = dot_input_dtype(lhs_dtype, rhs_dtype)
    out_dtype = np.dtype(preferred_element_type) if preferred_element_type is not None else in_dtype
    stage, work = dot_accumulation_dtypes(in_dtype, out_dtype)
    chain = (in_dtype, stage, work)
    lhs_free = tuple(i for i in range(len(lhs_shape)) if i not in lb + lc)
    rhs_free = tuple(i for i in range(len(rhs_shape)) if i not in rb + rc)
    shape = tuple(lhs_shape[i] for i in lb + lhs_free) + tuple(rhs_shape[i] for i in rhs_free)
    return (
        _conversions(lhs_dtype, chain),
        *_matrix_form(lhs_shape, lb, lhs_free, lc),
        _conversions(rhs_dtype, chain),
        *_matrix_form(rhs_shape, rb, rc, rhs_free),
        shape,
        work,
        out_dtype,
    )


@impl("dot_general")
def _dot_general(
    lhs: Array,
    rhs: Array,
    *,
    dimension_numbers: Any,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any = None,
) -> Array:
    # The work is planned by ``_dot_plan`` (cached): convert each operand through
    # dot_accumulation_dtypes's stages, order and merge its axes into a stack of
    # matrices, multiply, give the product its shape, convert to the result dtype.
    try:
        plan = _dot_plan(dimension_numbers, lhs.shape, rhs.shape, lhs.dtype, rhs.dtype, preferred_element_type)
    except TypeError:  # dimension numbers given as lists: hashable once made tuples
        plan = _dot_plan(
            tuple(tuple(map(tuple, pair)) for pair in dimension_numbers),
            lhs.shape, rhs.shape, lhs.dtype, rhs.dtype, preferred_element_type,
        )
    lhs_steps, lhs_order, lhs_matrices, rhs_steps, rhs_order, rhs_matrices, shape, work, out_dtype = plan
    for dt in lhs_steps:
        lhs = lhs.astype(dt)
    for dt in rhs_steps:
        rhs = rhs.astype(dt)
    if lhs_order is not None:
        lhs = lhs.transpose(lhs_order)
    if rhs_order is not None:
        rhs = rhs.transpose(rhs_order)
    product = np.matmul(lhs.reshape(lhs_matrices), rhs.reshape(rhs_matrices)).reshape(shape)
    if _is_float(work):
        return product if out_dtype == work else _float_to(product, out_dtype)
    return np.asarray(product != 0 if out_dtype == np.bool_ else product.astype(out_dtype))
