"""Elementwise primitives: unary and binary math, comparisons, bitwise ops, conversions.

Each primitive is defined here once with its shape/dtype rule; its jvp,
transpose and batching rules join it here as those transforms arrive.
``spec/primitives/elementwise.md`` is the written specification: the rules
below cite its constraint labels (``# add C2``). Most primitives share one of
two rule shapes, stated once in the spec's "Conventions":

* unary ops: C1 operand dtype class, C2 result shape = operand shape,
  C3 weak iff the operand is weak;
* n-ary ops: C1 dtype class at every position, C2 same dtypes, C3 shapes
  broadcast (``broadcasting_shape``), C4 weak iff every operand is weak.

The error messages follow JAX's wording (without complex dtypes, which
minijax does not support).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr_parse import param_completers
from minijax.jaxpr_text import param_filters
from minijax.primitives.common import accepts, broadcasting_shape, standard_primitive

Classes = tuple[type, ...]

# Dtype classes, in the order JAX lists them in its error messages.
INT_FLOAT: Classes = (np.integer, np.floating)
FLOATING: Classes = (np.floating,)
INTEGER: Classes = (np.integer,)
INT_BOOL: Classes = (np.integer, np.bool_)
FLOAT_SIGNED: Classes = (np.floating, np.signedinteger)
ANY: Classes = (np.bool_, np.integer, np.floating)

_CLASS_NAMES: dict[type, str] = {
    np.bool_: "bool",
    np.integer: "integer",
    np.signedinteger: "signedinteger",
    np.unsignedinteger: "unsignedinteger",
    np.floating: "floating",
}


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks ties (``lax.RoundingMethod``)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


# ---------------------------------------------------------------------------
# Checks shared by the rules


def check_classes(name: str, avals: Sequence[ShapedArray], classes: Classes, *, positional: bool | None = None) -> None:
    """TypeError unless every operand's dtype is in ``classes`` (C1 of most ops).

    Messages name the operand's position for n-ary primitives, as JAX's do."""
    allowed = ", ".join(_CLASS_NAMES[c] for c in classes)
    positional = len(avals) > 1 if positional is None else positional
    for i, aval in enumerate(avals):
        if accepts(aval.dtype, classes):
            continue
        if not positional:
            raise TypeError(f"{name} does not accept dtype {aval.dtype.name}. Accepted dtypes are subtypes of {allowed}.")
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
            f"Accepted dtypes at position {i} are subtypes of {allowed}."
        )


# lax op -> the jnp function that promotes dtypes, suggested when dtypes differ.
_JNP_TIPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "max": "maximum",
    "min": "minimum", "atan2": "arctan2", "nextafter": "nextafter", "eq": "equal",
    "ne": "not_equal", "shift_left": "left_shift", "shift_right_logical": "right_shift",
    "shift_right_arithmetic": "right_shift", "select": "where",
}  # fmt: skip


def check_same_dtypes(name: str, avals: Sequence[ShapedArray]) -> np.dtype[Any]:
    """TypeError unless all operands share one dtype (weak types may differ)."""
    if any(a.dtype != avals[0].dtype for a in avals[1:]):
        got = ", ".join(a.dtype.name for a in avals)
        msg = f"lax.{name} requires arguments to have the same dtypes, got {got}."
        tip = _JNP_TIPS.get(name)
        if tip is not None:
            msg += f" (Tip: jnp.{tip} is a similar function that does automatic type promotion on inputs)."
        raise TypeError(msg)
    return avals[0].dtype


def _all_weak(avals: Sequence[ShapedArray]) -> bool:
    return all(a.weak_type for a in avals)


def _check_accuracy(name: str, accuracy: Any) -> None:
    if accuracy is not None:
        raise NotImplementedError(
            f"{name}: accuracy={accuracy!r} is not supported by minijax; leave accuracy=None "
            "(the backend's default implementation)."
        )


# ---------------------------------------------------------------------------
# Rule builders


def unop_rule(
    name: str, classes: Classes, result_dtype: Any = None, *, accuracy: bool = False
) -> Callable[..., ShapedArray]:
    """The rule of a unary op: checks C1 (and C4 for ops with an ``accuracy`` param),
    keeps the shape (C2) and the weak type (C3)."""
    out_dtype = None if result_dtype is None else np.dtype(result_dtype)

    def rule(x: ShapedArray, **params: Any) -> ShapedArray:
        check_classes(name, [x], classes)  # unary C1
        if accuracy:
            _check_accuracy(name, params.pop("accuracy", None))  # unary C4
        if params:
            raise TypeError(f"{name} takes no params {sorted(params)}")
        # unary C2 (shape) and C3 (weak type; kept even when the dtype changes, as JAX does)
        return ShapedArray(x.shape, x.dtype if out_dtype is None else out_dtype, x.weak_type)

    return rule


def naryop_rule(name: str, classes: Classes, result_dtype: Any = None) -> Callable[..., ShapedArray]:
    """The rule of an n-ary op whose operands share one dtype class and one dtype."""
    out_dtype = None if result_dtype is None else np.dtype(result_dtype)

    def rule(*avals: ShapedArray) -> ShapedArray:
        shape = broadcasting_shape(name, *avals)  # n-ary C3 (checked first, as JAX does)
        check_classes(name, avals, classes)  # n-ary C1
        dtype = check_same_dtypes(name, avals)  # n-ary C2
        return ShapedArray(shape, dtype if out_dtype is None else out_dtype, _all_weak(avals))  # n-ary C4

    return rule


def _unop(name: str, classes: Classes, result_dtype: Any = None, *, accuracy: bool = False) -> Primitive:
    return standard_primitive(name, unop_rule(name, classes, result_dtype, accuracy=accuracy))


def _binop(name: str, classes: Classes, result_dtype: Any = None) -> Primitive:
    return standard_primitive(name, naryop_rule(name, classes, result_dtype))


# ---------------------------------------------------------------------------
# Unary primitives. Those with accuracy=True carry JAX's ``accuracy`` param (only None).

neg_p = _unop("neg", INT_FLOAT)
sign_p = _unop("sign", INT_FLOAT)
floor_p = _unop("floor", FLOATING)
ceil_p = _unop("ceil", FLOATING)
is_finite_p = _unop("is_finite", FLOATING, np.bool_)
exp_p = _unop("exp", FLOATING, accuracy=True)
exp2_p = _unop("exp2", FLOATING, accuracy=True)
log_p = _unop("log", FLOATING, accuracy=True)
log1p_p = _unop("log1p", FLOATING, accuracy=True)
expm1_p = _unop("expm1", FLOATING, accuracy=True)
tanh_p = _unop("tanh", FLOATING, accuracy=True)
logistic_p = _unop("logistic", FLOATING, accuracy=True)
sin_p = _unop("sin", FLOATING, accuracy=True)
cos_p = _unop("cos", FLOATING, accuracy=True)
tan_p = _unop("tan", FLOATING, accuracy=True)
asin_p = _unop("asin", FLOATING)
acos_p = _unop("acos", FLOATING)
atan_p = _unop("atan", FLOATING)
sinh_p = _unop("sinh", FLOATING)
cosh_p = _unop("cosh", FLOATING)
asinh_p = _unop("asinh", FLOATING)
acosh_p = _unop("acosh", FLOATING)
atanh_p = _unop("atanh", FLOATING)
sqrt_p = _unop("sqrt", FLOATING, accuracy=True)
rsqrt_p = _unop("rsqrt", FLOATING, accuracy=True)
cbrt_p = _unop("cbrt", FLOATING, accuracy=True)
abs_p = _unop("abs", FLOAT_SIGNED)
erf_p = _unop("erf", FLOATING)
erfc_p = _unop("erfc", FLOATING)
erf_inv_p = _unop("erf_inv", FLOATING)
lgamma_p = _unop("lgamma", FLOATING)
digamma_p = _unop("digamma", FLOATING)
not_p = _unop("not", INT_BOOL)
population_count_p = _unop("population_count", INTEGER)
clz_p = _unop("clz", INTEGER)
square_p = _unop("square", INT_FLOAT)
copy_p = _unop("copy", ANY)

ACCURACY_PRIMITIVES = (
    exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p, logistic_p,
    sin_p, cos_p, tan_p, sqrt_p, rsqrt_p, cbrt_p,
)  # fmt: skip


def _round_rule(x: ShapedArray, *, rounding_method: Any) -> ShapedArray:
    check_classes("round", [x], FLOATING)  # round C1
    if not isinstance(rounding_method, RoundingMethod):  # round C4
        raise TypeError(f"round: rounding_method must be a lax.RoundingMethod, got {rounding_method!r}.")
    return ShapedArray(x.shape, x.dtype, x.weak_type)  # round C2, C3


round_p = standard_primitive("round", _round_rule)


def _integer_pow_rule(x: ShapedArray, *, y: Any) -> ShapedArray:
    check_classes("integer_pow", [x], INT_FLOAT)  # integer_pow C1
    if isinstance(y, bool) or not isinstance(y, (int, float, np.integer)) or int(y) != y:  # integer_pow C4
        raise TypeError(f"integer_pow: the exponent y must be a Python int, got {y!r}. Use lax.pow for other exponents.")
    if y < 0 and dtypes.issubdtype(x.dtype, np.integer):  # integer_pow C5
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({x.str_short(short_dtypes=False)}, {y})")
    return ShapedArray(x.shape, x.dtype, x.weak_type)  # integer_pow C2, C3


integer_pow_p = standard_primitive("integer_pow", _integer_pow_rule)


def _reduce_precision_rule(x: ShapedArray, *, exponent_bits: int, mantissa_bits: int) -> ShapedArray:
    check_classes("reduce_precision", [x], FLOATING)  # reduce_precision C1
    if exponent_bits < 1:  # reduce_precision C4
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:  # reduce_precision C5
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)  # reduce_precision C2, C3


reduce_precision_p = standard_primitive("reduce_precision", _reduce_precision_rule)


# ---------------------------------------------------------------------------
# Binary primitives

add_p = _binop("add", INT_FLOAT)
sub_p = _binop("sub", INT_FLOAT)
mul_p = _binop("mul", INT_FLOAT)
div_p = _binop("div", INT_FLOAT)
rem_p = _binop("rem", INT_FLOAT)
max_p = _binop("max", ANY)
min_p = _binop("min", ANY)
atan2_p = _binop("atan2", FLOATING)
nextafter_p = _binop("nextafter", FLOATING)
and_p = _binop("and", INT_BOOL)
or_p = _binop("or", INT_BOOL)
xor_p = _binop("xor", INT_BOOL)
shift_left_p = _binop("shift_left", INTEGER)
shift_right_logical_p = _binop("shift_right_logical", INTEGER)
shift_right_arithmetic_p = _binop("shift_right_arithmetic", INTEGER)
eq_p = _binop("eq", ANY, np.bool_)
ne_p = _binop("ne", ANY, np.bool_)
lt_p = _binop("lt", ANY, np.bool_)
le_p = _binop("le", ANY, np.bool_)
gt_p = _binop("gt", ANY, np.bool_)
ge_p = _binop("ge", ANY, np.bool_)


def _pow_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    shape = broadcasting_shape("pow", x, y)  # pow C3
    check_classes("pow", [x], FLOATING, positional=True)  # pow C1 (position 0)
    if not accepts(y.dtype, INT_FLOAT):  # pow C1 (position 1)
        raise TypeError(
            f"pow does not accept dtype {y.dtype.name} at position 1. "
            "Accepted dtypes at position 1 are subtypes of integer, floating."
        )
    if dtypes.issubdtype(y.dtype, np.floating) and x.dtype != y.dtype:  # pow C2
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or complex), and the second "
            "argument must have an inexact or integer dtype, and two inexact dtypes must match, but got "
            f"{x.dtype.name} and {y.dtype.name} respectively."
        )
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)  # pow C4


pow_p = standard_primitive("pow", _pow_rule)


# ---------------------------------------------------------------------------
# select_n, clamp


def _select_n_rule(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:  # select_n C1
        raise ValueError("select_n() must have at least one case")
    if not accepts(which.dtype, INT_BOOL):  # select_n C2
        raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype.name}.")
    if any(c.shape != cases[0].shape for c in cases[1:]):  # select_n C3
        raise TypeError(f"select cases must have the same shapes, got [{', '.join(str(c.shape) for c in cases)}].")
    if which.shape and which.shape != cases[0].shape:  # select_n C4
        raise TypeError(
            "select `which` must be scalar or have the same shape as cases, got `which` shape "
            f"{which.shape} but case shape {cases[0].shape}."
        )
    if which.dtype == np.bool_ and len(cases) > 2:  # select_n C5
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    dtype = check_same_dtypes("select", cases)  # select_n C6
    return ShapedArray(cases[0].shape, dtype, _all_weak(cases))  # select_n C7


select_n_p = standard_primitive("select_n", _select_n_rule)


def _clamp_rule(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for what, bound in (("min", lo), ("max", hi)):  # clamp C1
        if bound.shape and bound.shape != x.shape:
            raise TypeError(
                f"clamp requires {what}.shape == operand.shape or {what}.shape == (), got "
                f"{what}.shape={bound.shape}, operand.shape={x.shape}."
            )
    dtype = check_same_dtypes("clamp", [lo, x, hi])  # clamp C2
    return ShapedArray(x.shape, dtype, _all_weak([lo, x, hi]))  # clamp C3


clamp_p = standard_primitive("clamp", _clamp_rule)


# ---------------------------------------------------------------------------
# Conversions


def _convert_element_type_rule(
    x: ShapedArray, *, new_dtype: Any, weak_type: bool = False, sharding: Any = None
) -> ShapedArray:
    if sharding is not None:  # convert_element_type C3
        raise NotImplementedError("convert_element_type: minijax has no shardings; pass sharding=None.")
    # convert_element_type C1 (any dtype to any dtype) and C2 (shape kept)
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(new_dtype), weak_type=bool(weak_type))


convert_element_type_p = standard_primitive("convert_element_type", _convert_element_type_rule)


def _bitcast_convert_type_rule(x: ShapedArray, *, new_dtype: Any) -> ShapedArray:
    new = np.dtype(new_dtype)
    if (x.dtype == np.bool_ or new == np.bool_) and x.dtype != new:  # bitcast_convert_type C1
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the operand and "
            f"destination types match. Got operand dtype={x.dtype.name}, new_dtype={new!r}. "
            "Consider using the arr.view() method instead."
        )
    old_bits, new_bits = 8 * x.dtype.itemsize, 8 * new.itemsize
    shape = x.shape
    if new_bits < old_bits:  # bitcast_convert_type C2: a new minor dimension holds the pieces
        shape = (*x.shape, old_bits // new_bits)
    elif new_bits > old_bits:  # bitcast_convert_type C3: the minor dimension is consumed
        if not x.shape or x.shape[-1] * old_bits != new_bits:
            n = x.shape[-1] if x.shape else 1
            raise ValueError(
                f"Attempting to convert array of shape {x.shape} from {x.dtype.name} of size {old_bits} "
                f"bits to {new.name} of size {new_bits}, bits but {n} * {old_bits} != {new_bits}"
            )
        shape = x.shape[:-1]
    return ShapedArray(shape, new, weak_type=False)  # bitcast_convert_type C4


bitcast_convert_type_p = standard_primitive("bitcast_convert_type", _bitcast_convert_type_rule)


# ---------------------------------------------------------------------------
# How the params print in jaxpr text (as JAX 0.10.2 prints them).


def _hide_none_accuracy(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in sorted(params.items()) if not (k == "accuracy" and v is None)]


def _convert_element_type_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    shown = [("new_dtype", params["new_dtype"]), ("weak_type", params.get("weak_type", False))]
    if params.get("sharding") is not None:
        shown.append(("sharding", params["sharding"]))
    return shown


# ... and how the parser restores what the text leaves out.


def _complete_accuracy(params: dict[str, Any], *avals: Any) -> dict[str, Any]:
    return {"accuracy": None, **params}


def _complete_convert_element_type(params: dict[str, Any], *avals: Any) -> dict[str, Any]:
    return {**params, "sharding": params.get("sharding")}


def _complete_round(params: dict[str, Any], *avals: Any) -> dict[str, Any]:
    return {**params, "rounding_method": RoundingMethod(params["rounding_method"])}  # printed as 0 or 1


for _prim in ACCURACY_PRIMITIVES:
    param_filters[_prim.name] = _hide_none_accuracy
    param_completers[_prim.name] = _complete_accuracy
param_filters["convert_element_type"] = _convert_element_type_params
param_completers["convert_element_type"] = _complete_convert_element_type
param_completers["round"] = _complete_round
del _prim

