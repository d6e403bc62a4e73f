"""Lowering rules for the elementwise primitives (``minijax/primitives/elementwise.py``).

Most primitives are one StableHLO (or CHLO) op; the tables below say which.
The rest are short compositions, each written to compute what the NumPy
reference backend computes (``backends/minijax_numpy/elementwise.py``), which
itself follows XLA on CPU:

* ``exp2``, ``logistic``, ``square`` and ``integer_pow`` are the same chains of
  rounded operations the reference performs, so float16/bfloat16 results agree;
* an integer exponent of ``pow`` is converted to the base's dtype first;
* ``sign`` of an unsigned integer is ``x != 0`` (StableHLO's ``sign`` is for
  signed and float operands only);
* ``select_n`` with an integer ``which`` is a binary tree of ``select``s on
  ``which < k``, so out-of-range indices clamp to the first/last case;
* ``max``/``min`` of complex operands compare them lexicographically (real part,
  then imaginary part), as JAX lowers them;
* conversion from complex to a real dtype (bool too) keeps the real part, as
  JAX's lowering does;
* conversion to bool is ``x != 0`` (``stablehlo.convert`` would truncate an
  integer's low bit); float-to-integer conversion is XLA's ``convert``, which
  on CPU already truncates, saturates and maps NaN to 0 (checked by the tests).

N-ary operands whose shape differs from the result (rank 0, or size-1 dims
under the lax broadcasting rule) are broadcast with ``broadcast_in_dim``, since
StableHLO's elementwise ops need equal shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, stablehlo as hlo

from minijax import dtypes
from minijax.core import ShapedArray
from minijax.shape_poly import is_symbolic_shape
from minijax_xla import jaxlib_api
from minijax_xla.lowering import LoweringRuleContext, broadcast_dynamic, constant, ir_type, register

Value = Any  # an ir.Value (the bindings' generic Value[...] types are not worth spelling out)

# ---------------------------------------------------------------------------
# Helpers


def _broadcast(x: Value, shape: Sequence[int]) -> Value:
    """``x`` (rank 0, or the result's rank with size-1 dims) broadcast to ``shape``."""
    x_type = ir.RankedTensorType(x.type)
    if list(x_type.shape) == list(shape):
        return x
    dims = list(range(x_type.rank))  # rank 0 -> []; equal ranks -> the identity map
    if is_symbolic_shape(shape):  # jax.export's shape polymorphism
        sizes = [d if isinstance(d, int) else ir.ShapedType.get_dynamic_size() for d in shape]
        return broadcast_dynamic(x, ir.RankedTensorType.get(sizes, x_type.element_type), shape, dims)
    return hlo.broadcast_in_dim(ir.RankedTensorType.get(list(shape), x_type.element_type), x, dims)


def _constant(value: Any, dtype: np.dtype[Any], shape: Sequence[int] = ()) -> Value:
    """A scalar ``value`` of ``dtype`` as a constant, broadcast to ``shape``."""
    return _broadcast(constant(value, dtype), shape)


def _compare_type(dtype: np.dtype[Any]) -> str:
    if dtypes.issubdtype(dtype, np.inexact):  # complex compares as FLOAT too (eq/ne only)
        return "FLOAT"
    if dtypes.issubdtype(dtype, np.signedinteger):
        return "SIGNED"
    return "UNSIGNED"  # unsigned integers and bool


def _compare(x: Value, y: Value, direction: str, dtype: np.dtype[Any]) -> Value:
    return hlo.compare(
        x,
        y,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get(_compare_type(dtype)),
    )


def _operands_at_result_shape(ctx: LoweringRuleContext, operands: Sequence[Value]) -> list[Value]:
    shape = ctx.avals_out[0].shape
    return [_broadcast(x, shape) for x in operands]


def _check_no_accuracy(name: str, params: dict[str, Any]) -> None:
    accuracy = params.pop("accuracy", None)
    if accuracy is not None or params:
        raise NotImplementedError(
            f"{name}: the XLA backend lowers only accuracy=None and no other params, got {dict(params, accuracy=accuracy)}"
        )


# ---------------------------------------------------------------------------
# One op per primitive

# Unary primitives that are one StableHLO or CHLO op on the operand.
_UNARY_OPS: dict[str, Callable[..., Value]] = {
    "neg": hlo.negate, "floor": hlo.floor, "ceil": hlo.ceil, "is_finite": hlo.is_finite,
    "exp": hlo.exponential, "log": hlo.log, "log1p": hlo.log_plus_one,
    "expm1": hlo.exponential_minus_one, "tanh": hlo.tanh, "sin": hlo.sine, "cos": hlo.cosine,
    "tan": hlo.tan, "sqrt": hlo.sqrt, "rsqrt": hlo.rsqrt, "cbrt": hlo.cbrt, "abs": hlo.abs,
    "not": hlo.not_, "population_count": hlo.popcnt, "clz": hlo.count_leading_zeros,
    # CHLO: XLA expands these into StableHLO when it legalizes the module.
    "asin": chlo.asin, "acos": chlo.acos, "atan": chlo.atan, "sinh": chlo.sinh,
    "cosh": chlo.cosh, "asinh": chlo.asinh, "acosh": chlo.acosh, "atanh": chlo.atanh,
    "erf": chlo.erf, "erfc": chlo.erfc, "erf_inv": chlo.erf_inv, "lgamma": chlo.lgamma,
    "digamma": jaxlib_api.digamma,
}  # fmt: skip

# Binary primitives that are one op on operands of the result's shape.
_BINARY_OPS: dict[str, Callable[..., Value]] = {
    "add": hlo.add, "sub": hlo.subtract, "mul": hlo.multiply,
    "atan2": hlo.atan2,
    "nextafter": chlo.next_after, "and": hlo.and_, "or": hlo.or_, "xor": hlo.xor,
    "shift_left": hlo.shift_left, "shift_right_logical": hlo.shift_right_logical,
    "shift_right_arithmetic": hlo.shift_right_arithmetic,
}  # fmt: skip

_COMPARISONS = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}


def _unary_rule(name: str, op: Callable[..., Value]) -> None:
    def rule(ctx: LoweringRuleContext, x: Value, **params: Any) -> list[Value]:
        _check_no_accuracy(name, params)
        return [op(x)]

    register(name)(rule)


def _binary_rule(name: str, op: Callable[..., Value]) -> None:
    def rule(ctx: LoweringRuleContext, x: Value, y: Value) -> list[Value]:
        return [op(*_operands_at_result_shape(ctx, [x, y]))]

    register(name)(rule)


def _comparison_rule(name: str, direction: str) -> None:
    def rule(ctx: LoweringRuleContext, x: Value, y: Value) -> list[Value]:
        x, y = _operands_at_result_shape(ctx, [x, y])
        return [_compare(x, y, direction, ctx.avals_in[0].dtype)]

    register(name)(rule)


for _name, _op in _UNARY_OPS.items():
    _unary_rule(_name, _op)
for _name, _op in _BINARY_OPS.items():
    _binary_rule(_name, _op)
for _name, _direction in _COMPARISONS.items():
    _comparison_rule(_name, _direction)


# ---------------------------------------------------------------------------
# Compositions


def complex_minmax(x: Value, y: Value, direction: str, dtype: np.dtype[Any]) -> Value:
    """max (direction "GT") or min ("LT") of complex values: lexicographic on (real, imag),
    as JAX lowers it. (The reductions' combiners use it too.)"""
    part = np.dtype(np.finfo(dtype).dtype)
    rx, ry = hlo.real(x), hlo.real(y)
    real_eq = _compare(rx, ry, "EQ", part)
    which = hlo.select(real_eq, _compare(hlo.imag(x), hlo.imag(y), direction, part), _compare(rx, ry, direction, part))
    return hlo.select(which, x, y)


def _minmax_rule(name: str, op: Callable[..., Value], direction: str) -> None:
    def rule(ctx: LoweringRuleContext, x: Value, y: Value) -> list[Value]:
        x, y = _operands_at_result_shape(ctx, [x, y])
        dtype = ctx.avals_out[0].dtype
        return [complex_minmax(x, y, direction, dtype) if dtype.kind == "c" else op(x, y)]

    register(name)(rule)


_minmax_rule("max", hlo.maximum, "GT")
_minmax_rule("min", hlo.minimum, "LT")


@register("copy")
def _copy(ctx: LoweringRuleContext, x: Value) -> list[Value]:
    return [x]  # values are immutable in the IR; the runtime gives the result its own buffer


def _division_rule(name: str, op: Callable[..., Value]) -> None:
    """div and rem. On integers the divisor is guarded: XLA's constant folder
    divides a constant by a constant zero with the CPU's own division, which
    kills the process with SIGFPE (the compiled code checks, the folder does
    not). A zero divisor becomes 1 and the result is then picked to be what XLA
    computes at run time, as the NumPy backend does: x / 0 has every bit set
    (-1, or the unsigned maximum) and x % 0 is x. INT_MIN / -1 needs no guard:
    folded or run, it gives INT_MIN with remainder 0 (tests/test_reliability_xla.py)."""

    def rule(ctx: LoweringRuleContext, x: Value, y: Value) -> list[Value]:
        x, y = _operands_at_result_shape(ctx, [x, y])
        aval = ctx.avals_out[0]
        if not dtypes.issubdtype(aval.dtype, np.integer):
            return [op(x, y)]
        by_zero = _compare(y, _constant(0, aval.dtype, aval.shape), "EQ", aval.dtype)
        result = op(x, hlo.select(by_zero, _constant(1, aval.dtype, aval.shape), y))
        all_ones = np.invert(np.zeros((), aval.dtype))
        at_zero = _constant(all_ones, aval.dtype, aval.shape) if name == "div" else x
        return [hlo.select(by_zero, at_zero, result)]

    register(name)(rule)


_division_rule("div", hlo.divide)
_division_rule("rem", hlo.remainder)


@register("sign")
def _sign(ctx: LoweringRuleContext, x: Value) -> list[Value]:
    aval = ctx.avals_in[0]
    if not dtypes.issubdtype(aval.dtype, np.unsignedinteger):
        return [hlo.sign(x)]
    zero, one = _constant(0, aval.dtype, aval.shape), _constant(1, aval.dtype, aval.shape)
    return [hlo.select(_compare(x, zero, "EQ", aval.dtype), zero, one)]


@register("square")
def _square(ctx: LoweringRuleContext, x: Value) -> list[Value]:
    return [hlo.multiply(x, x)]


@register("exp2")
def _exp2(ctx: LoweringRuleContext, x: Value, **params: Any) -> list[Value]:
    # exp(log(2) * x), log(2) rounded to x's dtype: the reference's (and JAX's) composition.
    _check_no_accuracy("exp2", params)
    aval = ctx.avals_in[0]
    return [hlo.exponential(hlo.multiply(_constant(np.log(2.0), aval.dtype, aval.shape), x))]


@register("logistic")
def _logistic(ctx: LoweringRuleContext, x: Value, **params: Any) -> list[Value]:
    # 1 / (1 + exp(-x)), each step rounded to x's dtype, as the reference computes it.
    _check_no_accuracy("logistic", params)
    aval = ctx.avals_in[0]
    one = _constant(1, aval.dtype, aval.shape)
    return [hlo.divide(one, hlo.add(one, hlo.exponential(hlo.negate(x))))]


@register("round")
def _round(ctx: LoweringRuleContext, x: Value, *, rounding_method: int) -> list[Value]:
    # RoundingMethod: 0 = AWAY_FROM_ZERO, 1 = TO_NEAREST_EVEN.
    if int(rounding_method) == 1:
        return [hlo.round_nearest_even(x)]
    return [hlo.round_nearest_afz(x)]


@register("reduce_precision")
def _reduce_precision(ctx: LoweringRuleContext, x: Value, *, exponent_bits: int, mantissa_bits: int) -> list[Value]:
    return [hlo.reduce_precision(x, int(exponent_bits), int(mantissa_bits))]


@register("integer_pow")
def _integer_pow(ctx: LoweringRuleContext, x: Value, *, y: int) -> list[Value]:
    """Square-and-multiply over the bits of |y| (the reference's order of products); 1/x**|y| for y < 0."""
    aval = ctx.avals_in[0]
    n = abs(int(y))
    acc: Value | None = None
    base = x
    while n:
        if n & 1:
            acc = base if acc is None else hlo.multiply(acc, base)
        n >>= 1
        if n:
            base = hlo.multiply(base, base)
    one = _constant(1, aval.dtype, aval.shape)
    if acc is None:  # y == 0
        return [one]
    return [hlo.divide(one, acc) if y < 0 else acc]


@register("pow")
def _pow(ctx: LoweringRuleContext, x: Value, y: Value) -> list[Value]:
    x_aval, y_aval = ctx.avals_in
    if y_aval.dtype != x_aval.dtype:  # an integer exponent: converted to the base's dtype first
        y = hlo.convert(ir_type(ShapedArray(y_aval.shape, x_aval.dtype)), y)
    x, y = _operands_at_result_shape(ctx, [x, y])
    return [hlo.power(x, y)]


@register("select_n")
def _select_n(ctx: LoweringRuleContext, which: Value, *cases: Value) -> list[Value]:
    which_aval, out = ctx.avals_in[0], ctx.avals_out[0]
    which = _broadcast(which, out.shape)
    if which_aval.dtype == np.bool_:  # at most two cases (select_n C5): true picks cases[1]
        return [cases[0] if len(cases) == 1 else hlo.select(which, cases[1], cases[0])]

    def pick(first: int, options: Sequence[Value]) -> Value:
        # ``which`` below ``first + mid`` takes the left half: indices out of range clamp.
        if len(options) == 1:
            return options[0]
        mid = len(options) // 2
        below = _compare(which, _constant(first + mid, which_aval.dtype, out.shape), "LT", which_aval.dtype)
        return hlo.select(below, pick(first, options[:mid]), pick(first + mid, options[mid:]))

    return [pick(0, cases)]


@register("clamp")
def _clamp(ctx: LoweringRuleContext, lo: Value, x: Value, hi: Value) -> list[Value]:
    shape = ctx.avals_out[0].shape
    return [hlo.clamp(_broadcast(lo, shape), x, _broadcast(hi, shape))]


@register("convert_element_type")
def _convert_element_type(
    ctx: LoweringRuleContext, x: Value, *, new_dtype: Any, weak_type: bool = False, sharding: Any = None
) -> list[Value]:
    src: ShapedArray = ctx.avals_in[0]
    new = ctx.avals_out[0].dtype
    if new == dtypes.float0:
        raise NotImplementedError(
            "convert_element_type to float0 is not lowered by the XLA backend; float0 values "
            "only appear as tangents of integer inputs, which have no device representation."
        )
    if new == src.dtype:
        return [x]
    if src.dtype.kind == "c" and new.kind != "c":  # complex to real: the real part, converted
        src = ShapedArray(src.shape, np.dtype(np.finfo(src.dtype).dtype))
        x = hlo.real(x)
        if new == src.dtype:
            return [x]
    if new == np.bool_:  # nonzero (NaN included) is true; convert would keep only the low bit
        return [_compare(x, _constant(0, src.dtype, src.shape), "NE", src.dtype)]
    return [hlo.convert(ir_type(ctx.avals_out[0]), x)]


@register("bitcast_convert_type")
def _bitcast_convert_type(ctx: LoweringRuleContext, x: Value, *, new_dtype: Any) -> list[Value]:
    # Width changes add or consume the minor dimension, which stablehlo.bitcast_convert does too.
    return [hlo.bitcast_convert(ir_type(ctx.avals_out[0]), x)]
