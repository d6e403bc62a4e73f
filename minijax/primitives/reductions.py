"""Reductions and contractions: reduce_sum/max/min/prod/and/or/xor, argmax, argmin, dot_general.

``spec/primitives/reductions.md`` is the written specification; each check
below cites its constraint label (``# dot_general C3``). Weak types: the
monoid reductions keep the operand's weak type, argmax/argmin results are
never weak, dot_general is weak only when both operands are.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr_parse import param_completers, param_constructors
from minijax.jaxpr_text import param_filters
from minijax.primitives.common import standard_primitive
from minijax.primitives.structural import check_no_sharding, int_tuple, long_str

# ---------------------------------------------------------------------------
# The monoid reductions


def _is_number(dt: np.dtype[Any]) -> bool:
    return dtypes.issubdtype(dt, np.integer) or dtypes.issubdtype(dt, np.floating)


def _number_only(name: str, x: ShapedArray) -> None:
    if not _is_number(x.dtype):
        raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of number.")


def _any_dtype(name: str, x: ShapedArray) -> None:
    pass


def _bool_or_int(name: str, x: ShapedArray) -> None:
    if not (x.dtype == np.bool_ or dtypes.issubdtype(x.dtype, np.integer)):
        raise TypeError(f"{name}: logical reduction requires operand dtype bool or int, got {x.dtype.name}.")


# name -> the dtype check (C3 of each reduction). Only reduce_sum carries an
# ``out_sharding`` param, as in JAX 0.10.2.
_REDUCTIONS: dict[str, Callable[[str, ShapedArray], None]] = {
    "reduce_sum": _number_only,
    "reduce_prod": _number_only,
    "reduce_max": _any_dtype,
    "reduce_min": _any_dtype,
    "reduce_and": _bool_or_int,
    "reduce_or": _bool_or_int,
    "reduce_xor": _bool_or_int,
}


def _reduction_rule(name: str) -> Callable[..., ShapedArray]:
    check_dtype = _REDUCTIONS[name]

    def rule(x: ShapedArray, *, axes: Any, out_sharding: Any = None) -> ShapedArray:
        check_no_sharding(name, out_sharding)
        axes = int_tuple(name, "axes", axes)
        if any(not 0 <= a < x.ndim for a in axes):  # reduce C1
            raise ValueError(f"{name}: reduction axes {axes} contains out-of-bounds indices for {long_str(x)}.")
        if len(set(axes)) != len(axes):  # reduce C2
            raise ValueError(f"{name}: duplicate value in 'axes' of reduction: {axes}")
        check_dtype(name, x)  # reduce C3
        shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)  # reduce C4

    return rule


REDUCTION_PRIMITIVES: dict[str, Primitive] = {name: standard_primitive(name, _reduction_rule(name)) for name in _REDUCTIONS}
reduce_sum_p = REDUCTION_PRIMITIVES["reduce_sum"]
reduce_prod_p = REDUCTION_PRIMITIVES["reduce_prod"]
reduce_max_p = REDUCTION_PRIMITIVES["reduce_max"]
reduce_min_p = REDUCTION_PRIMITIVES["reduce_min"]
reduce_and_p = REDUCTION_PRIMITIVES["reduce_and"]
reduce_or_p = REDUCTION_PRIMITIVES["reduce_or"]
reduce_xor_p = REDUCTION_PRIMITIVES["reduce_xor"]


# ---------------------------------------------------------------------------
# argmax, argmin


def _arg_reduction_rule(name: str) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axes: Any, index_dtype: Any) -> ShapedArray:
        axes = int_tuple(name, "axes", axes)
        if len(axes) != 1:  # argmax C1
            raise ValueError(f"{name} reduces exactly one axis, got axes {axes}.")
        (axis,) = axes
        if not 0 <= axis < x.ndim:  # argmax C2
            raise ValueError(f"{name}: Invalid axis {axis} for operand shape {x.shape}")
        index = np.dtype(index_dtype)
        if not dtypes.issubdtype(index, np.integer):  # argmax C3
            raise TypeError(f"{name}: index_dtype must be an integer type, but got {index.name}")
        if x.shape[axis] == 0:  # argmax C4
            raise ValueError(
                f"argmin and argmax require non-empty reduced dimension. operand.shape={x.shape} axis={axis}"
            )
        shape = x.shape[:axis] + x.shape[axis + 1 :]
        return ShapedArray(shape, dtypes.canonicalize_dtype(index), weak_type=False)  # argmax C5

    return rule


argmax_p = standard_primitive("argmax", _arg_reduction_rule("argmax"))
argmin_p = standard_primitive("argmin", _arg_reduction_rule("argmin"))


# ---------------------------------------------------------------------------
# dot_general


class Precision(enum.Enum):
    """How precisely a backend should compute a contraction (``lax.Precision``).

    The NumPy backend always computes in float32 or better, so it ignores it;
    the param is stored and printed as JAX does.
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        if isinstance(value, str):
            return _PRECISION_NAMES.get(value.lower())
        return None

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


# The string spellings JAX accepts for each precision.
_PRECISION_NAMES: dict[str, Precision] = {
    "default": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
}

DotDimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]


def canonicalize_dimension_numbers(dimension_numbers: Any) -> DotDimensionNumbers:
    """((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)) as tuples of ints."""
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general dimension_numbers must be ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), "
            f"got {dimension_numbers!r}."
        ) from None

    def ints(what: str, v: Any) -> tuple[int, ...]:
        return int_tuple("dot_general", what, v)

    return (ints("lhs_contracting", lc), ints("rhs_contracting", rc)), (ints("lhs_batch", lb), ints("rhs_batch", rb))


# The dtype a mixed-dtype dot_general computes in: the "larger" operand dtype,
# ranked by kind (bool < integer < floating), then width, then signed over
# unsigned and bfloat16 over float16 (as JAX 0.10.2 picks; checked against it).
def _dot_rank(dt: np.dtype[Any]) -> tuple[int, int, int]:
    kind = 0 if dt == np.bool_ else 1 if dtypes.issubdtype(dt, np.integer) else 2
    tiebreak = int(dtypes.issubdtype(dt, np.signedinteger) or dt == np.dtype(dtypes.bfloat16))
    return kind, dt.itemsize, tiebreak


def dot_input_dtype(lhs: np.dtype[Any], rhs: np.dtype[Any]) -> np.dtype[Any]:
    return max(lhs, rhs, key=_dot_rank)


def _bits(dt: np.dtype[Any]) -> int:
    return 1 if dt == np.bool_ else 8 * dt.itemsize


def _check_dims(side: str, aval: ShapedArray, batch: tuple[int, ...], contract: tuple[int, ...]) -> None:
    if any(not 0 <= d < aval.ndim for d in batch + contract):  # dot_general C1
        raise TypeError(
            f"dot_general requires {side} dimension numbers to be nonnegative and less than the number of "
            f"axes of the {side} value, got {side}_batch of {batch} and {side}_contracting of {contract} "
            f"for {side} of rank {aval.ndim}"
        )
    if len(set(batch)) != len(batch):  # dot_general C3
        raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got {side}_batch {batch}.")
    if len(set(contract)) != len(contract):  # dot_general C3
        raise TypeError(
            f"dot_general requires {side} contracting dimensions to be distinct, got {side}_contracting {contract}."
        )
    if set(batch) & set(contract):  # dot_general C4
        raise TypeError(
            f"dot_general requires {side} batch dimensions to be disjoint from contracting dimensions, got "
            f"{side}_batch {batch} and {side}_contracting {contract}."
        )


def _check_precision(precision: Any) -> None:
    ok = precision is None or (
        isinstance(precision, tuple) and len(precision) == 2 and all(isinstance(p, Precision) for p in precision)
    )
    if not ok:  # dot_general C8
        raise TypeError(f"dot_general precision must be None or a pair of lax.Precision values, got {precision!r}.")


def _dot_general_rule(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: Any,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any = None,
) -> ShapedArray:
    check_no_sharding("dot_general", out_sharding)
    _check_precision(precision)
    (lc, rc), (lb, rb) = canonicalize_dimension_numbers(dimension_numbers)
    _check_dims("lhs", lhs, lb, lc)  # dot_general C1, C3, C4
    _check_dims("rhs", rhs, rb, rc)
    if len(lb) != len(rb):  # dot_general C2
        raise TypeError(
            "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got "
            f"lhs_batch {lb} and rhs_batch {rb}."
        )
    lhs_batch, rhs_batch = tuple(lhs.shape[d] for d in lb), tuple(rhs.shape[d] for d in rb)
    if lhs_batch != rhs_batch:  # dot_general C5
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, "
            f"got {lhs_batch} and {rhs_batch}."
        )
    lhs_contract, rhs_contract = tuple(lhs.shape[d] for d in lc), tuple(rhs.shape[d] for d in rc)
    if lhs_contract != rhs_contract:  # dot_general C6
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{lhs_contract} and {rhs_contract}."
        )
    dtype = dot_input_dtype(lhs.dtype, rhs.dtype)
    if preferred_element_type is not None:
        preferred = dtypes.canonicalize_dtype(preferred_element_type)
        # Integer results may only widen; bool counts as 1 bit wide.
        narrower = _bits(preferred) < _bits(dtype)
        if dtypes.issubdtype(dtype, np.integer) and narrower:  # dot_general C7
            raise TypeError(
                "`preferred_element_type` must not be narrower than the original type, got "
                f"preferred_element_type of {preferred.name} for result type of {dtype.name}."
            )
        dtype = preferred
    lhs_free = tuple(n for i, n in enumerate(lhs.shape) if i not in lb + lc)
    rhs_free = tuple(n for i, n in enumerate(rhs.shape) if i not in rb + rc)
    return ShapedArray(lhs_batch + lhs_free + rhs_free, dtype, lhs.weak_type and rhs.weak_type)  # dot_general C9


dot_general_p = standard_primitive("dot_general", _dot_general_rule)


def _dot_general_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    # JAX writes the dimension numbers with lists inside and hides None params.
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    dn = f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"
    shown: list[tuple[str, Any]] = [("dimension_numbers", dn)]
    precision = params.get("precision")
    if precision is not None:
        shown.append(("precision", "(" + ", ".join(repr(p) for p in precision) + ")"))
    for key in ("preferred_element_type", "out_sharding"):
        if params.get(key) is not None:
            shown.append((key, params[key]))
    return shown


def _complete_dot_general(
    params: dict[str, Any], in_avals: list[ShapedArray], out_avals: list[ShapedArray]
) -> dict[str, Any]:
    # The text has lists inside dimension_numbers and leaves out the None params.
    precision = params.get("precision")
    return {
        "dimension_numbers": canonicalize_dimension_numbers(params["dimension_numbers"]),
        "precision": None if precision is None else tuple(precision),
        "preferred_element_type": params.get("preferred_element_type"),
        "out_sharding": params.get("out_sharding"),
    }


param_filters["dot_general"] = _dot_general_params
param_completers["dot_general"] = _complete_dot_general
param_constructors["Precision"] = Precision  # precision=(Precision.HIGH, ...) reads back


def dot_accumulation_dtypes(in_dtype: np.dtype[Any], out_dtype: np.dtype[Any]) -> tuple[np.dtype[Any], np.dtype[Any]]:
    """How dot_general computes (its Semantics in spec/primitives/reductions.md).

    Returns (stage, work): each operand is converted to the common input dtype
    ``in_dtype``, then to ``stage`` (rounding or wrapping as a conversion does),
    then to ``work``, the dtype the products are accumulated in; the result is
    then converted to ``out_dtype``. Every backend follows this, so it is
    stated once, here.
    """
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    if dtypes.issubdtype(in_dtype, np.floating):
        # Floats accumulate in float32 (float64 when either end is float64), round once.
        return in_dtype, f64 if f64 in (in_dtype, out_dtype) else f32
    if dtypes.issubdtype(out_dtype, np.floating):
        # Integer operands with a floating result are rounded to it first.
        return out_dtype, f64 if out_dtype == f64 else f32
    if out_dtype == np.bool_:
        # A boolean result is "any product nonzero": count in a wide enough integer.
        return in_dtype, np.dtype(np.int32) if in_dtype == np.bool_ else in_dtype
    # Integers (and bools with an integer result) wrap around in the result type.
    return out_dtype, out_dtype


def reduction_identity(name: str, dtype: np.dtype[Any]) -> Any:
    """The identity of the reduce_* primitive ``name`` at ``dtype``: what reducing nothing gives.

    (reduce_* Semantics in spec/primitives/reductions.md.) Backends start their
    reductions from it and ``lax.reduce`` recognises a monoid by it.
    """
    if name in ("reduce_sum", "reduce_or", "reduce_xor"):
        return np.zeros((), dtype)[()]
    if name == "reduce_prod":
        return np.ones((), dtype)[()]
    if dtype == np.bool_:
        return np.bool_(name in ("reduce_min", "reduce_and"))
    if name == "reduce_and":
        return np.array(-1).astype(dtype)[()]  # every bit set
    if dtypes.issubdtype(dtype, np.floating):
        return dtype.type(-np.inf if name == "reduce_max" else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if name == "reduce_max" else info.max)
