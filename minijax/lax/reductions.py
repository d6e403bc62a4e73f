"""``lax`` reductions and contractions (reduce_*, argmax/argmin, dot_general), as in ``jax.lax``.

Like the structural wrappers, these turn user arguments into the exact params
JAX's primitives carry, then bind.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes
from minijax.core import Tracer, get_aval
from minijax.lax import elementwise as ew
from minijax.lax.structural import Array, ArrayLike, Ints, _as_given, _no_sharding, _placed, _sharding_param
from minijax.primitives import reductions as _prims
from minijax.primitives.reductions import (
    Precision,
    argmax_p,
    argmin_p,
    canonicalize_precision,
    dot_general_p,
    reduce_and_p,
    reduce_max_p,
    reduce_min_p,
    reduce_or_p,
    reduce_prod_p,
    reduce_xor_p,
    reduction_identity,
)
from minijax.primitives.structural import reduce_sum_p

# ---------------------------------------------------------------------------
# Reductions


def reduce_sum(operand: ArrayLike, axes: Ints, *, out_sharding: Any = None) -> Array:
    """Sum over ``axes``."""
    param = _sharding_param("reduce_sum", out_sharding)
    out = reduce_sum_p.bind(operand, axes=_as_given("reduce_sum", "axes", axes), out_sharding=param)
    return _placed(out, out_sharding, "reduce_sum")


def reduce_prod(operand: ArrayLike, axes: Ints) -> Array:
    """Product over ``axes``."""
    return reduce_prod_p.bind(operand, axes=_as_given("reduce_prod", "axes", axes))


def reduce_max(operand: ArrayLike, axes: Ints) -> Array:
    """Maximum over ``axes`` (NaN if any element is NaN)."""
    return reduce_max_p.bind(operand, axes=_as_given("reduce_max", "axes", axes))


def reduce_min(operand: ArrayLike, axes: Ints) -> Array:
    """Minimum over ``axes`` (NaN if any element is NaN)."""
    return reduce_min_p.bind(operand, axes=_as_given("reduce_min", "axes", axes))


def reduce_and(operand: ArrayLike, axes: Ints) -> Array:
    """Logical (bool) or bitwise (integer) and over ``axes``."""
    return reduce_and_p.bind(operand, axes=_as_given("reduce_and", "axes", axes))


def reduce_or(operand: ArrayLike, axes: Ints) -> Array:
    """Logical (bool) or bitwise (integer) or over ``axes``."""
    return reduce_or_p.bind(operand, axes=_as_given("reduce_or", "axes", axes))


def reduce_xor(operand: ArrayLike, axes: Ints) -> Array:
    """Logical (bool) or bitwise (integer) exclusive or over ``axes``."""
    return reduce_xor_p.bind(operand, axes=_as_given("reduce_xor", "axes", axes))


# lax function -> (its name, the reduction it is a monoid of). Only these
# computations are supported by lax.reduce (minijax has no general reduce).
_MONOIDS: dict[Callable[..., Any], tuple[str, Callable[..., Array]]] = {
    ew.add: ("reduce_sum", reduce_sum),
    ew.mul: ("reduce_prod", reduce_prod),
    ew.max: ("reduce_max", reduce_max),
    ew.min: ("reduce_min", reduce_min),
    ew.bitwise_and: ("reduce_and", reduce_and),
    ew.bitwise_or: ("reduce_or", reduce_or),
    ew.bitwise_xor: ("reduce_xor", reduce_xor),
}


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any], dimensions: Ints, out_sharding: Any = None) -> Any:
    """Reduce ``operands`` over ``dimensions`` with ``computation`` starting from ``init_values``.

    minijax supports the monoids JAX turns into primitives: one operand, a
    computation among lax.add/mul/max/min/bitwise_and/bitwise_or/bitwise_xor
    and a concrete init value equal to its identity (0 for add, -inf for a
    float max, ...). Anything else raises NotImplementedError.
    """
    _no_sharding("reduce", out_sharding)
    wrap: Callable[[Any], Any] = lambda r: r  # noqa: E731
    if isinstance(operands, (tuple, list)):
        if len(operands) != 1 or not isinstance(init_values, (tuple, list)) or len(init_values) != 1:
            raise NotImplementedError("lax.reduce: minijax supports a single operand and init value; reduce each operand on its own.")
        wrap = (lambda r: [r]) if isinstance(operands, list) else (lambda r: (r,))
        operands, init_values = operands[0], init_values[0]
    monoid = _MONOIDS.get(computation)
    aval = get_aval(operands)
    init = None if isinstance(init_values, Tracer) else np.asarray(init_values)
    if monoid is None or init is None or init.shape != () or init != reduction_identity(monoid[0], aval.dtype):
        name = getattr(computation, "__name__", repr(computation))
        raise NotImplementedError(
            f"lax.reduce: minijax supports only lax.add/mul/max/min/bitwise_and/bitwise_or/bitwise_xor with "
            f"their identity as a concrete init value, got computation {name} with init value {init_values!r}. "
            "Use lax.reduce_sum/reduce_max/... and combine the init value yourself."
        )
    result = monoid[1](operands, dimensions)
    if aval.weak_type and not dtypes.is_weakly_typed(init_values):
        result = ew.convert_element_type_p.bind(result, new_dtype=aval.dtype, weak_type=False, sharding=None)
    return wrap(result)


def _arg_reduction(name: str, operand: ArrayLike, axis: int, index_dtype: Any) -> Array:
    # JAX's order: the dtype is read (TypeError for no dtype), the axis checked, then the dtype's kind.
    dt = dtypes.check_user_dtype_supported(index_dtype, name)
    shape = core.get_aval(operand).shape
    if not isinstance(axis, (int, np.integer)) or not 0 <= axis < len(shape):
        raise ValueError(f"{name}: Invalid axis {axis} for operand shape {shape}")
    if shape[axis] == 0:
        raise ValueError(f"argmin and argmax require non-empty reduced dimension. operand.shape={shape} axis={axis}")
    if not dtypes.issubdtype(dt, np.integer):
        raise TypeError(f"index_dtype must be an integer type, but got {dt.name}")
    prim = argmax_p if name == "argmax" else argmin_p
    operator.index(axis)  # an integer, kept as given (as JAX does)
    return prim.bind(operand, axes=(axis,), index_dtype=dt)


def argmax(operand: ArrayLike, axis: int, index_dtype: Any) -> Array:
    """Index of the largest element along ``axis`` (the first one; NaN counts as largest)."""
    return _arg_reduction("argmax", operand, axis, index_dtype)


def argmin(operand: ArrayLike, axis: int, index_dtype: Any) -> Array:
    """Index of the smallest element along ``axis`` (the first one; NaN counts as smallest)."""
    return _arg_reduction("argmin", operand, axis, index_dtype)


# ---------------------------------------------------------------------------
# Contractions


# Type aliases JAX exports for annotations: a precision (None, a name, a Precision, or a pair of
# them), and dot_general's ((lhs contracting, rhs contracting), (lhs batch, rhs batch)).
PrecisionLike = Any
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]


def dot_general(
    lhs: ArrayLike,
    rhs: ArrayLike,
    dimension_numbers: Any,
    precision: PrecisionLike = None,
    preferred_element_type: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Contract ``lhs`` and ``rhs`` per ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))."""
    param = _sharding_param("dot_general", out_sharding)
    pet = None if preferred_element_type is None else dtypes.check_user_dtype_supported(preferred_element_type, "dot_general")
    return _placed(_prims.dot_general(lhs, rhs, dimension_numbers, precision, pet, param), out_sharding, "dot_general")


def dot(
    lhs: ArrayLike,
    rhs: ArrayLike,
    *,
    dimension_numbers: Any = None,
    precision: PrecisionLike = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Array:
    """Vector/matrix products (``lhs @ rhs`` for rank 1 or 2), or ``dot_general`` with ``dimension_numbers``."""
    if dimension_numbers is None:
        lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
        if not (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2 and lhs_shape[-1] == rhs_shape[0]):
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple un-batched "
                "matrix-matrix, matrix-vector, or vector-vector products; got "
                f"lhs_shape={tuple(lhs_shape)} rhs_shape={tuple(rhs_shape)}"
            )
        dimension_numbers = (([len(lhs_shape) - 1], [0]), ([], []))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type, out_sharding=out_sharding)


def batch_matmul(lhs: Array, rhs: Array, precision: PrecisionLike = None) -> Array:
    """Matrix products over the last two axes, batched over the leading ones."""
    lhs_ndim, rhs_ndim = np.ndim(lhs), np.ndim(rhs)
    if min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, {rhs_ndim}")
    if lhs_ndim != rhs_ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, {rhs_ndim}")
    batch = tuple(range(lhs_ndim - 2))
    return dot_general(lhs, rhs, (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)), precision=precision)


__all__ = [
    "DotDimensionNumbers", "Precision", "PrecisionLike", "argmax", "canonicalize_precision", "argmax_p", "argmin", "argmin_p", "batch_matmul", "dot", "dot_general",
    "dot_general_p", "reduce", "reduce_and", "reduce_and_p", "reduce_max", "reduce_max_p", "reduce_min",
    "reduce_min_p", "reduce_or", "reduce_or_p", "reduce_prod", "reduce_prod_p", "reduce_sum", "reduce_sum_p",
    "reduce_xor", "reduce_xor_p",
]  # fmt: skip
