"""``lax`` elementwise operations: thin wrappers that bind the elementwise primitives.

Like JAX's lax (and unlike ``jnp``) these do no type promotion and no rank
promotion: operands must already share a dtype, and shapes must be equal up to
1-sized dimensions or be scalars. A Python scalar is a weakly typed value of
the default dtype of its kind, so ``lax.add(f32_array, 2.0)`` works while
``lax.add(f32_array, 2)`` is an int32/float32 mismatch (TypeError).
"""

from __future__ import annotations

import operator
from typing import Any

from minijax import dtypes
from minijax.primitives import elementwise as _prims

# The primitives are part of the lax namespace too (``lax.add_p``), as in JAX.
from minijax.primitives.elementwise import (
    RoundingMethod,
    abs_p,
    acos_p,
    acosh_p,
    add_p,
    and_p,
    asin_p,
    asinh_p,
    atan2_p,
    atan_p,
    atanh_p,
    bitcast_convert_type_p,
    cbrt_p,
    ceil_p,
    clamp_p,
    clz_p,
    convert_element_type_p,
    copy_p,
    cos_p,
    cosh_p,
    digamma_p,
    div_p,
    eq_p,
    erf_inv_p,
    erf_p,
    erfc_p,
    exp2_p,
    exp_p,
    expm1_p,
    floor_p,
    ge_p,
    gt_p,
    integer_pow_p,
    is_finite_p,
    le_p,
    lgamma_p,
    log1p_p,
    log_p,
    logistic_p,
    lt_p,
    max_p,
    min_p,
    mul_p,
    ne_p,
    neg_p,
    nextafter_p,
    not_p,
    or_p,
    population_count_p,
    pow_p,
    reduce_precision_p,
    rem_p,
    round_p,
    rsqrt_p,
    select_n_p,
    shift_left_p,
    shift_right_arithmetic_p,
    shift_right_logical_p,
    sign_p,
    sin_p,
    sinh_p,
    sqrt_p,
    square_p,
    sub_p,
    tan_p,
    tanh_p,
    xor_p,
)  # fmt: skip

ArrayLike = Any
Array = Any


def _accuracy_ok(name: str, accuracy: Any) -> None:
    if accuracy is not None:
        raise NotImplementedError(
            f"lax.{name}: accuracy={accuracy!r} is not supported by minijax; leave accuracy=None."
        )


# --- binary arithmetic --------------------------------------------------------


def add(x: ArrayLike, y: ArrayLike) -> Array:
    """x + y."""
    return add_p.bind(x, y)


def sub(x: ArrayLike, y: ArrayLike) -> Array:
    """x - y."""
    return sub_p.bind(x, y)


def mul(x: ArrayLike, y: ArrayLike, *, out_dtype: Any = None) -> Array:
    """x * y."""
    if out_dtype is not None:
        raise NotImplementedError("lax.mul(out_dtype=...) is not supported by minijax; convert the operands first.")
    return mul_p.bind(x, y)


def div(x: ArrayLike, y: ArrayLike) -> Array:
    """x / y; integer division rounds toward zero."""
    return div_p.bind(x, y)


def rem(x: ArrayLike, y: ArrayLike) -> Array:
    """Remainder of x / y with the sign of x (C's fmod / %)."""
    return rem_p.bind(x, y)


def pow(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 (JAX's name)
    """x ** y for a floating x and a floating (same dtype) or integer y."""
    return pow_p.bind(x, y)


def max(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 (JAX's name)
    """Elementwise maximum; NaN if either is NaN."""
    return max_p.bind(x, y)


def min(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 (JAX's name)
    """Elementwise minimum; NaN if either is NaN."""
    return min_p.bind(x, y)


def atan2(x: ArrayLike, y: ArrayLike) -> Array:
    """The angle of the point (y, x): arctan(x / y) in the right quadrant."""
    return atan2_p.bind(x, y)


def nextafter(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The next representable value after x1 in the direction of x2."""
    return nextafter_p.bind(x1, x2)


# --- bitwise ------------------------------------------------------------------


def bitwise_and(x: ArrayLike, y: ArrayLike) -> Array:
    return and_p.bind(x, y)


def bitwise_or(x: ArrayLike, y: ArrayLike) -> Array:
    return or_p.bind(x, y)


def bitwise_xor(x: ArrayLike, y: ArrayLike) -> Array:
    return xor_p.bind(x, y)


def bitwise_not(x: ArrayLike) -> Array:
    return not_p.bind(x)


def shift_left(x: ArrayLike, y: ArrayLike) -> Array:
    """x << y; 0 when y is negative or at least the bit width."""
    return shift_left_p.bind(x, y)


def shift_right_logical(x: ArrayLike, y: ArrayLike) -> Array:
    """x >> y filling with zeros; 0 when y is negative or at least the bit width."""
    return shift_right_logical_p.bind(x, y)


def shift_right_arithmetic(x: ArrayLike, y: ArrayLike) -> Array:
    """x >> y filling with the sign bit (also for unsigned dtypes)."""
    return shift_right_arithmetic_p.bind(x, y)


def population_count(x: ArrayLike) -> Array:
    """The number of set bits in each element."""
    return population_count_p.bind(x)


def clz(x: ArrayLike) -> Array:
    """The number of leading zero bits in each element."""
    return clz_p.bind(x)


# --- comparisons --------------------------------------------------------------


def eq(x: ArrayLike, y: ArrayLike) -> Array:
    return eq_p.bind(x, y)


def ne(x: ArrayLike, y: ArrayLike) -> Array:
    return ne_p.bind(x, y)


def lt(x: ArrayLike, y: ArrayLike) -> Array:
    return lt_p.bind(x, y)


def le(x: ArrayLike, y: ArrayLike) -> Array:
    return le_p.bind(x, y)


def gt(x: ArrayLike, y: ArrayLike) -> Array:
    return gt_p.bind(x, y)


def ge(x: ArrayLike, y: ArrayLike) -> Array:
    return ge_p.bind(x, y)


# --- unary --------------------------------------------------------------------


def neg(x: ArrayLike) -> Array:
    return neg_p.bind(x)


def sign(x: ArrayLike) -> Array:
    """-1, 0 or 1 (floats keep -0.0 and NaN)."""
    return sign_p.bind(x)


def floor(x: ArrayLike) -> Array:
    return floor_p.bind(x)


def ceil(x: ArrayLike) -> Array:
    return ceil_p.bind(x)


def round(x: ArrayLike, rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO) -> Array:  # noqa: A001
    """Round to the nearest integer; ties away from zero, or to even with TO_NEAREST_EVEN."""
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def is_finite(x: ArrayLike) -> Array:
    """True where x is neither infinite nor NaN."""
    return is_finite_p.bind(x)


def abs(x: ArrayLike) -> Array:  # noqa: A001 (JAX's name)
    return abs_p.bind(x)


def square(x: ArrayLike) -> Array:
    return square_p.bind(x)


def integer_pow(x: ArrayLike, y: int) -> Array:
    """x ** y for a Python int y, by repeated multiplication."""
    return integer_pow_p.bind(x, y=y)


def reciprocal(x: ArrayLike) -> Array:
    """1 / x, as JAX stages it: ``integer_pow`` with exponent -1."""
    return integer_pow_p.bind(x, y=-1)


def exp(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("exp", accuracy)
    return exp_p.bind(x, accuracy=None)


def exp2(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("exp2", accuracy)
    return exp2_p.bind(x, accuracy=None)


def log(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("log", accuracy)
    return log_p.bind(x, accuracy=None)


def log1p(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("log1p", accuracy)
    return log1p_p.bind(x, accuracy=None)


def expm1(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("expm1", accuracy)
    return expm1_p.bind(x, accuracy=None)


def tanh(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("tanh", accuracy)
    return tanh_p.bind(x, accuracy=None)


def logistic(x: ArrayLike, *, accuracy: Any = None) -> Array:
    """1 / (1 + exp(-x))."""
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("logistic", accuracy)
    return logistic_p.bind(x, accuracy=None)


def sin(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("sin", accuracy)
    return sin_p.bind(x, accuracy=None)


def cos(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("cos", accuracy)
    return cos_p.bind(x, accuracy=None)


def tan(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("tan", accuracy)
    return tan_p.bind(x, accuracy=None)


def sqrt(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("sqrt", accuracy)
    return sqrt_p.bind(x, accuracy=None)


def rsqrt(x: ArrayLike, *, accuracy: Any = None) -> Array:
    """1 / sqrt(x)."""
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("rsqrt", accuracy)
    return rsqrt_p.bind(x, accuracy=None)


def cbrt(x: ArrayLike, *, accuracy: Any = None) -> Array:
    if accuracy is not None:  # checked inline: eager hot path
        _accuracy_ok("cbrt", accuracy)
    return cbrt_p.bind(x, accuracy=None)


def asin(x: ArrayLike) -> Array:
    return asin_p.bind(x)


def acos(x: ArrayLike) -> Array:
    return acos_p.bind(x)


def atan(x: ArrayLike) -> Array:
    return atan_p.bind(x)


def sinh(x: ArrayLike) -> Array:
    return sinh_p.bind(x)


def cosh(x: ArrayLike) -> Array:
    return cosh_p.bind(x)


def asinh(x: ArrayLike) -> Array:
    return asinh_p.bind(x)


def acosh(x: ArrayLike) -> Array:
    return acosh_p.bind(x)


def atanh(x: ArrayLike) -> Array:
    return atanh_p.bind(x)


def erf(x: ArrayLike) -> Array:
    return erf_p.bind(x)


def erfc(x: ArrayLike) -> Array:
    """1 - erf(x), accurate where erf(x) is close to 1."""
    return erfc_p.bind(x)


def erf_inv(x: ArrayLike) -> Array:
    """The inverse of erf on [-1, 1] (±inf at ±1, NaN outside)."""
    return erf_inv_p.bind(x)


def lgamma(x: ArrayLike) -> Array:
    """log |Gamma(x)|."""
    return lgamma_p.bind(x)


def digamma(x: ArrayLike) -> Array:
    """d/dx lgamma(x); NaN at the poles 0, -1, -2, ..."""
    return digamma_p.bind(x)


def reduce_precision(operand: ArrayLike, exponent_bits: int, mantissa_bits: int) -> Array:
    """Round operand to a float format with the given exponent and mantissa widths."""
    return reduce_precision_p.bind(
        operand,
        exponent_bits=operator.index(exponent_bits),
        mantissa_bits=operator.index(mantissa_bits),
    )


# --- selection ----------------------------------------------------------------


def select_n(which: ArrayLike, *cases: ArrayLike) -> Array:
    """cases[which], elementwise; ``which`` is bool (two cases) or an integer index."""
    if not cases:
        raise ValueError("select_n() must have at least one case")
    return select_n_p.bind(which, *cases)


def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Array:
    """on_true where pred, else on_false (``select_n(pred, on_false, on_true)``)."""
    return _prims.select(pred, on_true, on_false)


def clamp(min: ArrayLike, x: ArrayLike, max: ArrayLike) -> Array:  # noqa: A002 (JAX's names)
    """x limited to [min, max]; min and max may be scalars."""
    return clamp_p.bind(min, x, max)


# --- conversions --------------------------------------------------------------


def convert_element_type(operand: ArrayLike, new_dtype: Any) -> Array:
    """operand as ``new_dtype``: floats to ints truncate and saturate, NaN -> 0; nonzero -> True."""
    return _prims.convert_element_type(operand, dtypes.check_user_dtype_supported(new_dtype, "convert_element_type"))


def bitcast_convert_type(operand: ArrayLike, new_dtype: Any) -> Array:
    """The same bits read as ``new_dtype``; a narrower dtype adds a minor dimension, a wider one consumes it."""
    new = dtypes.check_user_dtype_supported(new_dtype, "bitcast_convert_type")
    return bitcast_convert_type_p.bind(operand, new_dtype=new)


__all__ = [
    "RoundingMethod",
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
    "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "cbrt", "ceil", "clamp", "clz", "convert_element_type", "cos", "cosh", "digamma", "div",
    "eq", "erf", "erf_inv", "erfc", "exp", "exp2", "expm1", "floor", "ge", "gt",
    "integer_pow", "is_finite", "le", "lgamma", "log", "log1p", "logistic", "lt", "max",
    "min", "mul", "ne", "neg", "nextafter", "population_count", "pow", "reciprocal", "reduce_precision",
    "rem", "round", "rsqrt", "select", "select_n", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "sign", "sin", "sinh", "sqrt", "square", "sub", "tan", "tanh",
    # primitives
    "abs_p", "acos_p", "acosh_p", "add_p", "and_p", "asin_p", "asinh_p", "atan2_p", "atan_p",
    "atanh_p", "bitcast_convert_type_p", "cbrt_p", "ceil_p", "clamp_p", "clz_p",
    "convert_element_type_p", "copy_p", "cos_p", "cosh_p", "digamma_p", "div_p", "eq_p",
    "erf_inv_p", "erf_p", "erfc_p", "exp2_p", "exp_p", "expm1_p", "floor_p", "ge_p", "gt_p",
    "integer_pow_p", "is_finite_p", "le_p", "lgamma_p", "log1p_p", "log_p", "logistic_p",
    "lt_p", "max_p", "min_p", "mul_p", "ne_p", "neg_p", "nextafter_p", "not_p", "or_p",
    "population_count_p", "pow_p", "reduce_precision_p", "rem_p", "round_p", "rsqrt_p",
    "select_n_p", "shift_left_p", "shift_right_arithmetic_p", "shift_right_logical_p",
    "sign_p", "sin_p", "sinh_p", "sqrt_p", "square_p", "sub_p", "tan_p", "tanh_p", "xor_p",
]  # fmt: skip
