"""Elementwise primitives: unary and binary math, comparisons, bitwise ops, conversions.

Each primitive is defined here once with its shape/dtype rule; its jvp,
transpose and batching rules are at the end of the module.
``spec/primitives/elementwise.md`` is the written specification: the rules
below cite its constraint labels (``# add C2``). Most primitives share one of
two rule shapes, stated once in the spec's "Conventions":

* unary ops: C1 operand dtype class, C2 result shape = operand shape,
  C3 weak iff the operand is weak;
* n-ary ops: C1 dtype class at every position, C2 same dtypes, C3 shapes
  broadcast (``broadcasting_shape``), C4 weak iff every operand is weak.

The error messages follow JAX's wording. Complex operands are accepted where
JAX accepts them; the primitives that move between a complex dtype and its
real parts (``complex``, ``real``, ``imag``, ``conj``) are the ``complex``
family (minijax/primitives/complex.py).
"""

from __future__ import annotations

import enum
import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.array import Array, device_put_value
from minijax.core import Primitive, ShapedArray, Tracer, get_aval
from minijax.interpreters import ad, batching
from minijax.jaxpr import param_filters
from minijax.jaxpr_parse import param_completers
from minijax.primitives import structural as sp
from minijax.primitives.common import accepts, broadcasting_shape, check_no_sharding, standard_primitive

Classes = tuple[type, ...]

# Dtype classes, in the order JAX lists them in its error messages.
INT_FLOAT: Classes = (np.integer, np.floating)
NUM: Classes = (np.integer, np.floating, np.complexfloating)
FLOATING: Classes = (np.floating,)
INEXACT: Classes = (np.floating, np.complexfloating)
COMPLEX: Classes = (np.complexfloating,)
INTEGER: Classes = (np.integer,)
INT_BOOL: Classes = (np.integer, np.bool_)
FLOAT_SIGNED: Classes = (np.floating, np.signedinteger)
SIGNED_INEXACT: Classes = (np.floating, np.complexfloating, np.signedinteger)  # abs: JAX's order
# Ordered comparisons (lt, le, gt, ge) refuse complex operands, as JAX's do.
ORDERED: Classes = (np.integer, np.floating, np.bool_)
ANY: Classes = (np.bool_, np.integer, np.floating, np.complexfloating)
# copy, eq and ne also take PRNG key arrays (of one key type), as JAX's do.
ANY_OR_KEY: Classes = (*ANY, dtypes.extended)

_CLASS_NAMES: dict[type, str] = {
    np.bool_: "bool",
    np.integer: "integer",
    np.signedinteger: "signedinteger",
    np.unsignedinteger: "unsignedinteger",
    np.floating: "floating",
    np.complexfloating: "complexfloating",
    np.float32: "float32",
    np.float64: "float64",
    dtypes.extended: "extended",
}


def complex_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The complex dtype whose parts are ``dtype`` (float32 -> complex64; complex stays)."""
    return np.result_type(dtype, np.complex64)


def real_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype of the real part of ``dtype`` (complex64 -> float32; real dtypes stay)."""
    return np.dtype(np.finfo(dtype).dtype) if dtype.kind == "c" else dtype


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


# The narrow integers an op refuses when it says so (JAX's list: not int1/uint1).
_NARROW_REFUSED = frozenset(np.dtype(d) for d in (dtypes.int2, dtypes.int4, dtypes.uint2, dtypes.uint4))


def unop_rule(
    name: str, classes: Classes, result_dtype: Any = None, *, accuracy: bool = False, narrow_ints: bool = True
) -> Callable[..., ShapedArray]:
    """The rule of a unary op: checks C1 (and C4 for ops with an ``accuracy`` param),
    keeps the shape (C2) and the weak type (C3). ``result_dtype`` is a dtype, or a
    function of the operand's dtype (``real_dtype`` for abs, real and imag)."""
    dtype_of: Callable[[np.dtype[Any]], np.dtype[Any]] | None = None
    if callable(result_dtype) and not isinstance(result_dtype, type):
        dtype_of, out_dtype = result_dtype, None
    else:
        out_dtype = None if result_dtype is None else np.dtype(result_dtype)

    def rule(x: ShapedArray, **params: Any) -> ShapedArray:
        check_classes(name, [x], classes)  # unary C1
        if not narrow_ints and x.dtype in _NARROW_REFUSED:
            raise TypeError(
                f"{name} does not accept dtype {x.dtype.name}. Support for narrow-width integers is "
                "platform-dependent and limited to a few specific operations, e.g. basic arithmetic "
                "and type casting."
            )
        if accuracy:
            _check_accuracy(name, params.pop("accuracy", None))  # unary C4
        if params:
            raise TypeError(f"{name} takes no params {sorted(params)}")
        # unary C2 (shape) and C3 (weak type; kept even when the dtype changes, as JAX does)
        if dtype_of is not None:
            return ShapedArray(x.shape, dtype_of(x.dtype), x.weak_type)
        return ShapedArray(x.shape, x.dtype if out_dtype is None else out_dtype, x.weak_type)

    return rule


def naryop_rule(name: str, classes: Classes, result_dtype: Any = None, arity: int | None = None) -> Callable[..., ShapedArray]:
    """The rule of an n-ary op whose operands share one dtype class and one dtype
    (exactly ``arity`` of them, when given)."""
    out_dtype = None if result_dtype is None else np.dtype(result_dtype)

    def rule(*avals: ShapedArray) -> ShapedArray:
        if arity is not None and len(avals) != arity:
            raise TypeError(f"{name} takes {arity} operands, got {len(avals)}: {', '.join(a.str_short() for a in avals)}")
        shape = broadcasting_shape(name, *avals)  # n-ary C3 (checked first, as JAX does)
        check_classes(name, avals, classes)  # n-ary C1
        dtype = check_same_dtypes(name, avals)  # n-ary C2
        return ShapedArray(shape, dtype if out_dtype is None else out_dtype, _all_weak(avals))  # n-ary C4

    return rule


def _unop(
    name: str, classes: Classes, result_dtype: Any = None, *, accuracy: bool = False, narrow_ints: bool = True
) -> Primitive:
    return standard_primitive(name, unop_rule(name, classes, result_dtype, accuracy=accuracy, narrow_ints=narrow_ints))


def _binop(name: str, classes: Classes, result_dtype: Any = None) -> Primitive:
    return standard_primitive(name, naryop_rule(name, classes, result_dtype, arity=2))


# ---------------------------------------------------------------------------
# Unary primitives. Those with accuracy=True carry JAX's ``accuracy`` param (only None).

neg_p = _unop("neg", NUM)
sign_p = _unop("sign", NUM)
floor_p = _unop("floor", FLOATING)
ceil_p = _unop("ceil", FLOATING)
is_finite_p = _unop("is_finite", FLOATING, np.bool_)
exp_p = _unop("exp", INEXACT, accuracy=True)
exp2_p = _unop("exp2", INEXACT, accuracy=True)
log_p = _unop("log", INEXACT, accuracy=True)
log1p_p = _unop("log1p", INEXACT, accuracy=True)
expm1_p = _unop("expm1", INEXACT, accuracy=True)
tanh_p = _unop("tanh", INEXACT, accuracy=True)
logistic_p = _unop("logistic", INEXACT, accuracy=True)
sin_p = _unop("sin", INEXACT, accuracy=True)
cos_p = _unop("cos", INEXACT, accuracy=True)
tan_p = _unop("tan", INEXACT, accuracy=True)
asin_p = _unop("asin", INEXACT)
acos_p = _unop("acos", INEXACT)
atan_p = _unop("atan", INEXACT)
sinh_p = _unop("sinh", INEXACT)
cosh_p = _unop("cosh", INEXACT)
asinh_p = _unop("asinh", INEXACT)
acosh_p = _unop("acosh", INEXACT)
atanh_p = _unop("atanh", INEXACT)
sqrt_p = _unop("sqrt", INEXACT, accuracy=True)
rsqrt_p = _unop("rsqrt", INEXACT, accuracy=True)
cbrt_p = _unop("cbrt", FLOATING, accuracy=True)
abs_p = _unop("abs", SIGNED_INEXACT, real_dtype, narrow_ints=False)  # |complex| is real
erf_p = _unop("erf", FLOATING)
erfc_p = _unop("erfc", FLOATING)
erf_inv_p = _unop("erf_inv", FLOATING)
lgamma_p = _unop("lgamma", FLOATING)
digamma_p = _unop("digamma", FLOATING)
not_p = _unop("not", INT_BOOL)
population_count_p = _unop("population_count", INTEGER)
clz_p = _unop("clz", INTEGER)
square_p = _unop("square", NUM)

copy_p = _unop("copy", ANY_OR_KEY)

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
    check_classes("integer_pow", [x], NUM)  # integer_pow C1
    if isinstance(y, bool) or not isinstance(y, (int, float, np.integer)) or int(y) != y:  # integer_pow C4
        raise TypeError(f"integer_pow: the exponent y must be a Python int, got {y!r}. Use lax.pow for other exponents.")
    if y < 0 and dtypes.issubdtype(x.dtype, np.integer):  # integer_pow C5
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({x.str_short(short_dtypes=False)}, {y})")
    return ShapedArray(x.shape, x.dtype, x.weak_type)  # integer_pow C2, C3


integer_pow_p = standard_primitive("integer_pow", _integer_pow_rule)


def _reduce_precision_rule(x: ShapedArray, *, exponent_bits: int, mantissa_bits: int) -> ShapedArray:
    check_classes("reduce_precision", [x], FLOATING)  # reduce_precision C1
    for param, value in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"reduce_precision: {param} must be an integer; got {value!r}")
        if value >= 2**31:  # XLA's attribute is an int32
            raise ValueError(f"reduce_precision: {param} must be less than 2**31; got {value}")
    if exponent_bits < 1:  # reduce_precision C4
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:  # reduce_precision C5
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)  # reduce_precision C2, C3


reduce_precision_p = standard_primitive("reduce_precision", _reduce_precision_rule)


# ---------------------------------------------------------------------------
# Binary primitives

add_p = _binop("add", NUM)
sub_p = _binop("sub", NUM)
mul_p = _binop("mul", NUM)
div_p = _binop("div", NUM)
rem_p = _binop("rem", INT_FLOAT)
max_p = _binop("max", ANY)
min_p = _binop("min", ANY)
atan2_p = _binop("atan2", INEXACT)
nextafter_p = _binop("nextafter", FLOATING)
and_p = _binop("and", INT_BOOL)
or_p = _binop("or", INT_BOOL)
xor_p = _binop("xor", INT_BOOL)
shift_left_p = _binop("shift_left", INTEGER)
shift_right_logical_p = _binop("shift_right_logical", INTEGER)
shift_right_arithmetic_p = _binop("shift_right_arithmetic", INTEGER)
eq_p = _binop("eq", ANY_OR_KEY, np.bool_)
ne_p = _binop("ne", ANY_OR_KEY, np.bool_)
lt_p = _binop("lt", ORDERED, np.bool_)
le_p = _binop("le", ORDERED, np.bool_)
gt_p = _binop("gt", ORDERED, np.bool_)
ge_p = _binop("ge", ORDERED, np.bool_)



def _pow_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    shape = broadcasting_shape("pow", x, y)  # pow C3
    check_classes("pow", [x], INEXACT, positional=True)  # pow C1 (position 0)
    if not accepts(y.dtype, NUM):  # pow C1 (position 1)
        raise TypeError(
            f"pow does not accept dtype {y.dtype.name} at position 1. "
            "Accepted dtypes at position 1 are subtypes of integer, floating, complexfloating."
        )
    if dtypes.issubdtype(y.dtype, np.inexact) and x.dtype != y.dtype:  # pow C2
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
    check_no_sharding("convert_element_type", sharding)  # convert_element_type C3 (the result's type carries it)
    # convert_element_type C1 (any dtype to any dtype) and C2 (shape kept)
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(new_dtype), weak_type=bool(weak_type))


convert_element_type_p = standard_primitive("convert_element_type", _convert_element_type_rule)


def _bitcast_convert_type_rule(x: ShapedArray, *, new_dtype: Any) -> ShapedArray:
    new = np.dtype(new_dtype)
    bool_or_complex = x.dtype == np.bool_ or new == np.bool_ or x.dtype.kind == "c" or new.kind == "c"
    if bool_or_complex and x.dtype != new:  # bitcast_convert_type C1
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
    # (the sharding: the result's type says it, as in JAX's text)
    return [("new_dtype", params["new_dtype"]), ("weak_type", params.get("weak_type", False))]


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


# ===========================================================================
# Bind helpers the other families (and minijax.lax) use: each stages what
# JAX's lax function of the same name stages.


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """``operand`` as ``new_dtype``, strongly typed. Like JAX, converting an array
    (or tracer) to its own dtype stages nothing; a Python scalar still converts
    (it loses its weak type)."""
    new = np.dtype(new_dtype)
    found = getattr(operand, "aval", operand)  # an Array's or tracer's aval, or a NumPy value
    old = np.dtype(np.complex128) if type(operand) is complex else getattr(found, "dtype", None)
    if isinstance(old, np.dtype) and old.kind == "c" and new.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning, stacklevel=3)
    if type(operand) is int:
        # Like JAX, a Python int converts on the host through NumPy, before it is ever
        # a weak int32: 2**31 to int32 wraps around and 2**100 to float32 is fine,
        # where binding it first would refuse both as too large for int32.
        try:
            operand = np.asarray(operand).astype(new)
        except OverflowError:
            raise OverflowError(
                f"convert_element_type: Python int {operand} is too large to convert to {new.name} "
                "(NumPy cannot hold it as a 64-bit integer)"
            ) from None
    aval = getattr(operand, "aval", None)
    if aval is not None and aval.dtype == new and not aval.weak_type and isinstance(operand, (Array, Tracer)):
        return operand
    return convert_element_type_p.bind(operand, new_dtype=new, weak_type=False, sharding=None)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred``, else ``on_false``: ``select_n(pred, on_false, on_true)``."""
    return select_n_p.bind(pred, on_false, on_true)


def _scalar_of(value: Any, dtype: np.dtype[Any], weak: bool) -> Any:
    """``value`` as a scalar of ``dtype`` and weak type ``weak``: on the host when it is concrete."""
    if isinstance(value, (Array, Tracer)):
        aval = get_aval(value)
        if aval.dtype == dtype and aval.weak_type == weak:
            return value
        return convert_element_type_p.bind(value, new_dtype=dtype, weak_type=weak, sharding=None)
    if weak and type(value) in (int, float, complex) and dtypes.dtype(value, canonicalize=True) == dtype:
        return value  # a Python scalar of the target's default dtype is already weakly typed
    return device_put_value(np.asarray(value).astype(dtype), weak_type=weak)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value``; weakly typed
    when ``fill_value`` is and no ``dtype`` is given (JAX's ``lax.full``)."""
    weak = dtype is None and dtypes.is_weakly_typed(fill_value)
    target = dtypes.dtype(fill_value, canonicalize=True) if dtype is None else np.dtype(dtype)
    return sp.broadcast(_scalar_of(fill_value, target, weak), tuple(shape))


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None) -> Any:
    """An array like ``x`` (its shape and dtype, and weak type, unless given) filled with ``fill_value``."""
    aval = get_aval(x)
    weak = dtype is None and aval.weak_type
    target = aval.dtype if dtype is None else np.dtype(dtype)
    return sp.broadcast(_scalar_of(fill_value, target, weak), aval.shape if shape is None else tuple(shape))


# ===========================================================================
# Transformation rules: jvp, transpose (the linear primitives), batching.
#
# The formulas, and the order in which each rule applies primitives, are
# JAX's: the jaxprs of grad, jvp and vmap then print as JAX's do. A jvp rule
# computes primal-only factors from the primals (``cos(x)``) and applies them
# to the tangent in a primitive of its own (``mul(t, cos_x)``): under
# linearize the first runs right away and only the second is staged into the
# linear jaxpr (minijax/interpreters/ad.py explains the split).

# The primitives as functions, named as JAX's lax names them, so that the
# rules read as formulas.
_add, _sub, _mul, _div = add_p.bind, sub_p.bind, mul_p.bind, div_p.bind
_neg, _square, _sign, _floor, _abs = neg_p.bind, square_p.bind, sign_p.bind, floor_p.bind, abs_p.bind
_eq, _gt, _ge, _lt, _and = eq_p.bind, gt_p.bind, ge_p.bind, lt_p.bind, and_p.bind
_pow, _cosh, _sinh = pow_p.bind, cosh_p.bind, sinh_p.bind
_exp, _log, _rsqrt = (functools.partial(p.bind, accuracy=None) for p in (exp_p, log_p, rsqrt_p))


def _select(pred: Any, on_true: Any, on_false: Any) -> Any:
    return select_n_p.bind(pred, on_false, on_true)


def _integer_pow(x: Any, y: int) -> Any:
    return integer_pow_p.bind(x, y=y)


# ---------------------------------------------------------------------------
# Constants and shape fixes the rules share


def _const(example: Any, value: float) -> Any:
    """``value`` as a strongly typed rank-0 constant of ``example``'s dtype (JAX's ``_const``).

    A Python scalar example gives a Python scalar, which stays weakly typed."""
    if type(example) in (bool, int, float, complex):
        return type(example)(value)
    return np.array(value, get_aval(example).dtype)


def scalar_like(x: Any, value: float) -> Any:
    """``value`` as a rank-0 constant of ``x``'s dtype *and weak type* (JAX's ``_one(x)``)."""
    aval = get_aval(x)
    if not aval.weak_type:
        return np.array(value, aval.dtype)
    # Python scalars are the weakly typed values of the default dtypes.
    if aval.dtype == dtypes.default_float_dtype():
        return float(value)
    if aval.dtype == dtypes.default_int_dtype():
        return int(value)
    if aval.dtype == dtypes.default_complex_dtype():
        return complex(value)
    return device_put_value(np.array(value, aval.dtype), weak_type=True)


def _full_like(x: Any, value: float) -> Any:
    """An array of ``x``'s shape, dtype and weak type filled with ``value`` (JAX's ``_zeros``, ``_ones``)."""
    aval = get_aval(x)
    if not aval.shape:  # an array even so: it may be a rule's result (a tangent)
        return device_put_value(np.array(value, aval.dtype), weak_type=aval.weak_type)
    return sp.broadcast_in_dim(scalar_like(x, value), aval.shape, ())


def _convert(x: Any, dtype: np.dtype[Any]) -> Any:
    """``x`` as ``dtype`` (strongly typed); host constants convert on the host, as JAX folds them."""
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
        return np.asarray(x, dtype)
    return convert_element_type(x, dtype)


def _maybe_broadcast(shape: tuple[int, ...], x: Any) -> Any:
    """``x`` broadcast to ``shape``: a tangent of an operand made as big as the result."""
    x_shape = get_aval(x).shape
    if x_shape == shape:
        return x
    if not x_shape:
        return sp.broadcast_in_dim(x, shape, ())
    kept = [i for i, (a, b) in enumerate(zip(x_shape, shape)) if a == b]
    return sp.broadcast_in_dim(sp.reshape(x, [x_shape[i] for i in kept]), shape, kept)


def _unbroadcast(aval: ShapedArray, ct: Any) -> Any:
    """A cotangent of a broadcasting result, summed back to the shape of operand ``aval``."""
    shape = get_aval(ct).shape
    if shape == aval.shape:
        return ct
    if not aval.shape:
        return sp.reduce_sum(ct, tuple(range(len(shape))))
    dims = tuple(i for i, (a, b) in enumerate(zip(shape, aval.shape)) if a != b)
    summed = sp.reduce_sum(ct, dims) if dims else ct
    return sp.reshape(summed, aval.shape)


def _result_shape(*xs: Any) -> tuple[int, ...]:
    return broadcasting_shape("jvp", *(get_aval(x) for x in xs))


# ---------------------------------------------------------------------------
# jvp rules of the unary primitives: ``rule(t, x)`` or, with the result, ``rule(t, ans, x)``


def _abs_jvp(g: Any, ans: Any, x: Any) -> Any:
    # Of real operands; minijax/primitives/complex.py extends it to complex ones.
    return _select(_ge(x, scalar_like(x, 0)), g, _neg(g))


def _integer_pow_jvp(g: Any, x: Any, *, y: int) -> Any:
    if y == 0:
        return _full_like(g, 0)
    if y == 1:
        return g
    if y == 2:
        return _mul(g, _mul(_const(x, y), x))
    return _mul(g, _mul(_const(x, y), _integer_pow(x, y - 1)))


_SQRT_PI = float(np.sqrt(np.pi))

ad.defjvp2(exp_p, lambda g, ans, x, **p: _mul(g, ans))
ad.defjvp2(exp2_p, lambda g, ans, x, **p: _mul(_log(_const(x, 2)), _mul(g, ans)))
ad.defjvp(log_p, lambda g, x, **p: _div(g, x))
ad.defjvp2(expm1_p, lambda g, ans, x, **p: _mul(g, _add(ans, scalar_like(ans, 1))))
ad.defjvp(log1p_p, lambda g, x, **p: _div(g, _add(x, scalar_like(x, 1))))
ad.defjvp2(tanh_p, lambda g, ans, x, **p: _mul(_add(g, _mul(g, ans)), _sub(scalar_like(x, 1), ans)))
ad.defjvp2(logistic_p, lambda g, ans, x, **p: _mul(g, _mul(ans, _sub(scalar_like(ans, 1), ans))))
ad.defjvp(sin_p, lambda g, x, accuracy: _mul(g, cos_p.bind(x, accuracy=accuracy)))
ad.defjvp(cos_p, lambda g, x, accuracy: _neg(_mul(g, sin_p.bind(x, accuracy=accuracy))))
ad.defjvp2(tan_p, lambda g, ans, x, **p: _mul(g, _add(_const(x, 1), _square(ans))))
ad.defjvp(asin_p, lambda g, x: _mul(g, _rsqrt(_sub(_const(x, 1), _square(x)))))
ad.defjvp(acos_p, lambda g, x: _mul(g, _neg(_rsqrt(_sub(_const(x, 1), _square(x))))))
ad.defjvp(atan_p, lambda g, x: _div(g, _add(_const(x, 1), _square(x))))
ad.defjvp(sinh_p, lambda g, x: _mul(g, _cosh(x)))
ad.defjvp(cosh_p, lambda g, x: _mul(g, _sinh(x)))
ad.defjvp(asinh_p, lambda g, x: _mul(g, _rsqrt(_add(_square(x), scalar_like(x, 1)))))
ad.defjvp(acosh_p, lambda g, x: _mul(g, _rsqrt(_sub(_square(x), scalar_like(x, 1)))))
ad.defjvp(
    atanh_p,
    lambda g, x: _mul(_integer_pow(_add(scalar_like(x, 1), x), -1), _div(g, _sub(scalar_like(x, 1), x))),
)
ad.defjvp2(abs_p, _abs_jvp)
ad.defjvp2(sqrt_p, lambda g, ans, x, **p: _mul(g, _div(_const(x, 0.5), ans)))
ad.defjvp2(rsqrt_p, lambda g, ans, x, **p: _mul(g, _mul(_const(x, -0.5), _div(ans, x))))
ad.defjvp2(cbrt_p, lambda g, ans, x, **p: _mul(g, _mul(_const(x, 1 / 3), _integer_pow(ans, -2))))
ad.defjvp2(square_p, lambda g, ans, x: _mul(g, _mul(_const(x, 2), x)))
ad.defjvp(integer_pow_p, _integer_pow_jvp)
ad.defjvp(erf_p, lambda g, x: _mul(_const(x, 2 / _SQRT_PI), _mul(g, _exp(_neg(_square(x))))))
ad.defjvp(erfc_p, lambda g, x: _mul(_const(x, -2 / _SQRT_PI), _mul(g, _exp(_neg(_square(x))))))
ad.defjvp2(erf_inv_p, lambda g, ans, x: _mul(_const(x, _SQRT_PI / 2), _mul(g, _exp(_square(ans)))))
ad.defjvp(lgamma_p, lambda g, x: _mul(g, digamma_p.bind(x)))


def _no_jvp(prim: Primitive, reason: str = "") -> None:
    """``prim`` has no derivative minijax can compute: differentiating it raises, as in JAX."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented{reason}")

    ad.primitive_jvps[prim] = rule
    ad.non_differentiable.add(prim)


# digamma's derivative, polygamma(1, x), is set by the special family (minijax/primitives/special.py).
_no_jvp(nextafter_p)  # JAX has no rule either

# Piecewise constant or integer-valued: zero tangents (float0 for integer results).
for _prim in (
    sign_p, floor_p, ceil_p, round_p, is_finite_p, not_p, population_count_p, clz_p,
    and_p, or_p, xor_p, shift_left_p, shift_right_logical_p, shift_right_arithmetic_p,
    eq_p, ne_p, lt_p, le_p, gt_p, ge_p, bitcast_convert_type_p,
):  # fmt: skip
    ad.defjvp_zero(_prim)

# ---------------------------------------------------------------------------
# jvp rules of the binary primitives (one rule per operand)


def _add_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, y = primals
    xdot, ydot = tangents
    out = _add(x, y)
    shape = get_aval(out).shape
    if type(xdot) is ad.Zero:
        return out, (ad.Zero.from_primal(out) if type(ydot) is ad.Zero else _maybe_broadcast(shape, ydot))
    if type(ydot) is ad.Zero:
        return out, _maybe_broadcast(shape, xdot)
    return out, _add(xdot, ydot)


def _sub_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, y = primals
    xdot, ydot = tangents
    out = _sub(x, y)
    shape = get_aval(out).shape
    if type(xdot) is ad.Zero:
        return out, (ad.Zero.from_primal(out) if type(ydot) is ad.Zero else _maybe_broadcast(shape, _neg(ydot)))
    if type(ydot) is ad.Zero:
        return out, _maybe_broadcast(shape, xdot)
    return out, _sub(xdot, ydot)


def _balanced_eq(x: Any, z: Any, y: Any) -> Any:
    """1 where x is the result z, halved where y ties with it: max and min split ties evenly."""
    return _div(
        _select(_eq(x, z), _full_like(z, 1), _full_like(z, 0)),
        _select(_eq(y, z), _full_like(z, 2), _full_like(z, 1)),
    )


def _replace_zero(x: Any) -> Any:
    return _select(_eq(x, _const(x, 0)), _full_like(x, 1), x)


def _pow_jvp_x(g: Any, ans: Any, x: Any, y: Any) -> Any:
    y_dtype = get_aval(y).dtype
    dtype = dtypes.result_type(x, y)
    x, y = _convert(x, dtype), _convert(y, dtype)
    if dtypes.issubdtype(y_dtype, np.integer):
        # y * x ** (y - 1), but 0 where y == 0 (so that 0 ** 0 has derivative 0, not nan).
        shape = _result_shape(x, y)
        x, y = _maybe_broadcast(shape, x), _maybe_broadcast(shape, y)
        jac = _select(
            _eq(y, _const(y, 0)),
            _full_like(y, 0),
            _mul(_replace_zero(y), _pow(x, _sub(y, _full_like(y, 1)))),
        )
    else:
        jac = _mul(y, _pow(x, _sub(y, _full_like(y, 1))))
    return _mul(g, jac)


def _pow_jvp_y(g: Any, ans: Any, x: Any, y: Any) -> Any:
    # log(x) * x ** y, with log(1) in place of log(0): 0 ** y is flat in y where it is finite.
    return _convert(_mul(g, _mul(_log(_replace_zero(x)), ans)), get_aval(y).dtype)


def _rem_jvp_y(g: Any, x: Any, y: Any) -> Any:
    return _mul(_neg(g), _mul(_sign(_div(x, y)), _floor(_abs(_div(x, y)))))


ad.primitive_jvps[add_p] = _add_jvp
ad.primitive_jvps[sub_p] = _sub_jvp
ad.defjvp(mul_p, lambda g, x, y: _mul(g, y), lambda g, x, y: _mul(x, g))
ad.defjvp(div_p, lambda g, x, y: _div(g, y), lambda g, x, y: _mul(_mul(_neg(g), x), _integer_pow(y, -2)))
ad.defjvp(rem_p, lambda g, x, y: _maybe_broadcast(_result_shape(x, y), g), _rem_jvp_y)
ad.defjvp2(pow_p, _pow_jvp_x, _pow_jvp_y)
for _prim in (max_p, min_p):  # the tangent of the operand chosen (half each at ties)
    ad.defjvp2(
        _prim,
        lambda g, ans, x, y: _mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: _mul(g, _balanced_eq(y, ans, x)),
    )
ad.defjvp(
    atan2_p,
    lambda g, x, y: _mul(g, _div(y, _add(_square(x), _square(y)))),
    lambda g, x, y: _mul(g, _div(_neg(x), _add(_square(x), _square(y)))),
)

# ---------------------------------------------------------------------------
# jvp rules of select_n, clamp and the conversions


def _select_n_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    # The tangent of the chosen case: where() of an unsafe branch still has its NaN tangent
    # there (multiplied by zero only if the user's code does so), as in JAX.
    which, *cases = primals
    case_tangents = tangents[1:]
    out = select_n_p.bind(which, *cases)
    nonzero = [t for t in case_tangents if type(t) is not ad.Zero]
    if not nonzero:
        return out, ad.Zero.from_primal(out)
    zeros = _full_like(nonzero[0], 0)
    return out, select_n_p.bind(which, *(zeros if type(t) is ad.Zero else t for t in case_tangents))


def _clamp_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    # Every contribution first, then their sum (JAX's order for three operands).
    lo, x, hi = primals
    out = clamp_p.bind(lo, x, hi)
    rules: tuple[Callable[[Any], Any], ...] = (
        lambda g: _select(_and(_gt(lo, x), _lt(lo, hi)), g, _full_like(x, 0)),  # x below lo: lo's tangent
        lambda g: _select(_and(_gt(x, lo), _lt(x, hi)), g, _full_like(x, 0)),  # strictly inside: x's
        lambda g: _select(_lt(hi, x), g, _full_like(x, 0)),  # x above hi: hi's
    )
    shape = get_aval(x).shape
    # A rank-0 bound's tangent is broadcast first: select_n needs cases of one shape.
    parts = [rule(_maybe_broadcast(shape, t)) for rule, t in zip(rules, tangents) if type(t) is not ad.Zero]
    total: Any = ad.Zero.from_primal(out)
    for part in parts:
        total = ad.add_tangents(total, part)
    return out, total


def _convert_element_type_jvp(g: Any, ans: Any, x: Any, *, new_dtype: Any, weak_type: bool, sharding: Any) -> Any:
    tangent_dtype = ad.tangent_dtype(np.dtype(new_dtype))
    if tangent_dtype == dtypes.float0:  # a float converted to an integer: no derivative
        return ad.Zero.from_primal(ans)
    return convert_element_type_p.bind(g, new_dtype=tangent_dtype, weak_type=weak_type, sharding=sharding)


ad.primitive_jvps[select_n_p] = _select_n_jvp
ad.primitive_jvps[clamp_p] = _clamp_jvp
ad.defjvp2(convert_element_type_p, _convert_element_type_jvp)

# ---------------------------------------------------------------------------
# Transpose rules of the linear primitives: ``rule(ct, *operands)`` gives one
# cotangent per operand (None for the operands that are not linear), each of its
# operand's shape and dtype.


def _linear_operand_cts(ct: Any, operands: Sequence[Any], fns: Sequence[Callable[[Any], Any]]) -> list[Any]:
    """Apply ``fns[i]`` to the cotangent for each linear operand i, unbroadcast to its shape."""
    if type(ct) is ad.Zero:
        return [None] * len(operands)
    return [_unbroadcast(x.aval, fn(ct)) if ad.is_undefined_primal(x) else None for x, fn in zip(operands, fns)]


def _add_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return _linear_operand_cts(ct, [x, y], [lambda t: t, lambda t: t])


def _sub_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return _linear_operand_cts(ct, [x, y], [lambda t: t, _neg])


def _mul_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    # Linear in one operand: the cotangent times the other one.
    return _linear_operand_cts(ct, [x, y], [lambda t: _mul(t, y), lambda t: _mul(x, t)])


def _div_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if ad.is_undefined_primal(y):
        raise NotImplementedError("div is linear in its numerator only; it cannot be transposed in its denominator")
    return _linear_operand_cts(ct, [x, y], [lambda t: _div(t, y), lambda t: t])


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list[Any]:
    # Each case receives the cotangent where it was selected, zero elsewhere.
    if type(ct) is ad.Zero:
        return [None] * (1 + len(cases))
    zeros = _full_like(ct, 0)
    is_bool = get_aval(which).dtype == np.bool_
    cts: list[Any] = [None]
    for i, case in enumerate(cases):
        if not ad.is_undefined_primal(case):
            cts.append(None)
        elif is_bool:
            cts.append(_select(which, ct, zeros) if i else _select(which, zeros, ct))
        else:
            cts.append(_select(_eq(which, _const(which, i)), ct, zeros))
    return cts


def _convert_element_type_transpose(ct: Any, x: Any, *, new_dtype: Any, weak_type: bool, sharding: Any) -> list[Any]:
    aval = x.aval
    if type(ct) is ad.Zero:
        return [None]
    if ad.tangent_dtype(aval.dtype) == dtypes.float0:
        return [ad.Zero(ad.tangent_aval(aval))]
    return [convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type, sharding=None)]


ad.transpose_rules[add_p] = _add_transpose
ad.transpose_rules[sub_p] = _sub_transpose
ad.transpose_rules[mul_p] = _mul_transpose
ad.transpose_rules[div_p] = _div_transpose
ad.transpose_rules[select_n_p] = _select_n_transpose
ad.transpose_rules[convert_element_type_p] = _convert_element_type_transpose
ad.deflinear(neg_p, lambda ct, x: [_neg(ct)])
ad.deflinear(copy_p, lambda ct, x: [copy_p.bind(ct)])
ad.deflinear(reduce_precision_p, lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])

# ---------------------------------------------------------------------------
# Batching rules. Elementwise primitives keep a batch dimension where it is
# when every operand has it at the same place; otherwise (JAX's broadcasting
# batcher) batch dimensions move to the front and unbatched operands get a
# leading 1-sized axis, so that the primitive's own broadcasting does the rest.

BatchDim = batching.BatchDim


def _bdim_at_front(x: Any, dim: BatchDim, size: int) -> Any:
    return batching.broadcast(x, size, 0) if dim is None else batching.moveaxis(x, dim, 0)


def _ndim(x: Any) -> int:
    return get_aval(x).ndim


def broadcasting_batcher(prim: Primitive) -> Callable[..., tuple[Any, BatchDim]]:
    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> tuple[Any, BatchDim]:
        shape, dim = next((get_aval(x).shape, d) for x, d in zip(vals, dims) if d is not None)
        if all(get_aval(x).shape == shape and d == dim for x, d in zip(vals, dims) if _ndim(x)):
            return prim.bind(*vals, **params), dim  # batched alike, or rank-0: nothing to move
        moved = [_bdim_at_front(x, d, 1) if _ndim(x) else x for x, d in zip(vals, dims)]
        rank = max(_ndim(x) for x in moved)
        # A batched rank-0 operand is now a vector: trailing 1-sized axes make it broadcast.
        moved = [
            x if d is None or _ndim(x) == rank else sp.expand_dims(x, tuple(range(_ndim(x), rank)))
            for x, d in zip(moved, dims)
        ]
        return prim.bind(*moved, **params), 0

    return rule


def _select_n_batcher(vals: Sequence[Any], dims: Sequence[BatchDim]) -> tuple[Any, BatchDim]:
    which, *cases = vals
    which_dim, *case_dims = dims
    size = batching.batch_size(vals, dims)
    case_shape = get_aval(cases[0]).shape
    if which_dim is not None and all(d == which_dim for d in case_dims):
        if get_aval(which).shape != case_shape:  # a rank-0 `which` (now a vector) for array cases
            which = sp.broadcast_in_dim(which, case_shape, (which_dim,))
        return select_n_p.bind(which, *cases), which_dim
    if _ndim(which) == 0 and all(d is not None for d in case_dims):
        dims_ = [d for d in case_dims if d is not None]
        dim = dims_[0]
        if all(d == dim for d in dims_) or all(get_aval(c).shape == case_shape for c in cases):
            return select_n_p.bind(which, *(batching.moveaxis(c, d, dim) for c, d in zip(cases, dims_))), dim
    # General case: everything batched at the front.
    if _ndim(which):
        which = _bdim_at_front(which, which_dim, size)
    if any(_ndim(c) for c in cases):
        cases = [_bdim_at_front(c, d, size) for c, d in zip(cases, case_dims)]
    case_rank = _ndim(cases[0])
    if 0 < _ndim(which) < case_rank:  # a batched rank-0 `which` for array cases
        which = sp.broadcast_in_dim(which, get_aval(cases[0]).shape, (0,))
    if _ndim(which) > case_rank:  # rank-0 unbatched cases for a batched `which`
        cases = [sp.broadcast(c, get_aval(which).shape) for c in cases]
    return select_n_p.bind(which, *cases), 0


def _clamp_batcher(vals: Sequence[Any], dims: Sequence[BatchDim]) -> tuple[Any, BatchDim]:
    lo, x, hi = vals
    lo_dim, x_dim, hi_dim = dims
    size = batching.batch_size(vals, dims)
    if x_dim is not None and lo_dim == x_dim == hi_dim:
        if _ndim(lo) == 1 and _ndim(hi) == 1 and _ndim(x) > 1:  # rank-0 bounds of an array x, batched
            lo = sp.broadcast_in_dim(lo, get_aval(x).shape, (x_dim,))
            hi = sp.broadcast_in_dim(hi, get_aval(x).shape, (x_dim,))
        if get_aval(lo).shape == get_aval(x).shape == get_aval(hi).shape:
            return clamp_p.bind(lo, x, hi), x_dim
    elif _ndim(lo) == 0 and _ndim(hi) == 0 and x_dim is not None:
        return clamp_p.bind(lo, x, hi), x_dim
    # General case: everything batched at the front, rank-0 operands broadcast as needed.
    lo, x, hi = (_bdim_at_front(v, d, size) if _ndim(v) else v for v, d in ((lo, lo_dim), (x, x_dim), (hi, hi_dim)))
    x_shape = get_aval(x).shape
    if x_shape:
        lo, hi = (sp.broadcast(b, x_shape) if _ndim(b) == 0 else b for b in (lo, hi))
        lo, hi = (sp.broadcast_in_dim(b, x_shape, (0,)) if _ndim(b) < len(x_shape) else b for b in (lo, hi))
    else:  # a rank-0 x with a batched bound: x takes the bound's shape
        x = sp.broadcast(x, get_aval(lo if _ndim(lo) else hi).shape)
    return clamp_p.bind(lo, x, hi), 0


def _bitcast_convert_type_batcher(
    vals: Sequence[Any], dims: Sequence[BatchDim], *, new_dtype: Any
) -> tuple[Any, BatchDim]:
    (x,), (dim,) = vals, dims
    aval = get_aval(x)
    # A wider dtype consumes the minor axis: that must not be the batch axis.
    if np.dtype(new_dtype).itemsize > aval.dtype.itemsize and dim == aval.ndim - 1:
        x, dim = batching.moveaxis(x, dim, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), dim


_UNARY = (
    neg_p, sign_p, floor_p, ceil_p, is_finite_p, exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p,
    logistic_p, sin_p, cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p,
    atanh_p, sqrt_p, rsqrt_p, cbrt_p, abs_p, erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p, not_p,
    population_count_p, clz_p, square_p, copy_p, round_p, integer_pow_p, reduce_precision_p,
    convert_element_type_p,
)  # fmt: skip
_NARY = (
    add_p, sub_p, mul_p, div_p, rem_p, max_p, min_p, atan2_p, nextafter_p, and_p, or_p, xor_p,
    shift_left_p, shift_right_logical_p, shift_right_arithmetic_p, eq_p, ne_p, lt_p, le_p, gt_p,
    ge_p, pow_p,
)  # fmt: skip

for _prim in _UNARY:
    batching.defvectorized(_prim)
for _prim in _NARY:
    batching.primitive_batchers[_prim] = broadcasting_batcher(_prim)
batching.primitive_batchers[select_n_p] = _select_n_batcher
batching.primitive_batchers[clamp_p] = _clamp_batcher
batching.primitive_batchers[bitcast_convert_type_p] = _bitcast_convert_type_batcher
del _prim
