"""Elementwise arithmetic, comparison, logical and bitwise functions (NumPy's ufuncs).

Each function promotes its operands (``util.promote_args*``) and applies one
``lax`` operation, or a short composition where NumPy's definition differs
from the hardware's (floor division, Python-style remainder, integer powers
of arrays). Where JAX stages a function as a named ``jit`` (``floor_divide``,
``remainder``, ``fmax``, ...) so do we, so jaxprs print the same nested call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.array import Array
from minijax.numpy import util
from minijax.numpy.creation import asarray, ones_like
from minijax.numpy.util import ArrayLike
from minijax.stages import jit

__all__ = [
    "abs",
    "absolute",
    "add",
    "bitwise_and",
    "bitwise_count",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "divide",
    "divmod",
    "equal",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "greater",
    "greater_equal",
    "invert",
    "isnan",
    "left_shift",
    "less",
    "less_equal",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "positive",
    "pow",
    "power",
    "float_power",
    "remainder",
    "right_shift",
    "subtract",
    "true_divide",
]

Fn = Callable[..., Any]


def staged(name: str, fun: Fn, static_argnames: tuple[str, ...] = ()) -> Fn:
    """``fun`` as a jit named ``name``: JAX stages these jnp functions the same way."""
    fun.__name__ = fun.__qualname__ = name
    return jit(fun, static_argnames=static_argnames)  # type: ignore[no-any-return]


def _public(name: str, fun: Fn, doc: str) -> Fn:
    fun.__name__ = fun.__qualname__ = name
    fun.__module__ = "minijax.numpy"
    fun.__doc__ = doc
    return fun


def _lax(name: str) -> Fn:
    # Looked up at call time: the lax wrappers are plain module attributes.
    fn: Fn = getattr(lax, name)
    return fn


_BOOL = np.dtype(np.bool_)


def is_bool(x: Any) -> bool:
    aval = getattr(x, "aval", None)  # arrays and tracers: skip the general dtype() (hot path)
    return bool((aval.dtype if aval is not None else dtypes.dtype(x)) == _BOOL)  # (dtype == dtype: no conversion)


def is_unsigned(x: Any) -> bool:
    return dtypes.issubdtype(dtypes.dtype(x), np.unsignedinteger)


def is_integer(x: Any) -> bool:
    return dtypes.issubdtype(dtypes.dtype(x), np.integer)


def const(x: Any, value: Any) -> Any:
    """``value`` as a strongly typed host scalar of ``x``'s dtype (a literal in jaxprs)."""
    return np.array(value, dtype=dtypes.dtype(x))[()]


def python_scalar(x: Any, value: Any) -> Any:
    """``value`` as a Python scalar would enter a lax operation with ``x``: weak, in ``x``'s dtype."""
    return util.convert_element_type(value, dtypes.dtype(x), weak_type=True)


def lax_const(x: Any, value: Any) -> Any:
    """``value`` in ``x``'s dtype, as JAX's ``lax._const`` makes it.

    The constant is weak (so combining it with ``x`` keeps ``x`` weak) only
    when ``x`` is a weak scalar; next to a weak array it is strongly typed.
    """
    weak = dtypes.is_weakly_typed(x) and util.ndim(x) == 0
    return util.convert_element_type(value, dtypes.dtype(x), weak)


# ---------------------------------------------------------------------------
# Binary ops that are one lax operation after promotion


def _binary(name: str, lax_name: str, promote: Fn, doc: str) -> Fn:
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Any:
        a, b = promote(name, x1, x2)
        return _lax(lax_name)(a, b)

    return _public(name, fn, doc)


subtract = _binary("subtract", "sub", util.promote_args, "Elementwise ``x1 - x2``.")
true_divide = _binary(
    "true_divide", "div", util.promote_args_inexact, "Elementwise ``x1 / x2``; integers divide as floats."
)
divide = _public("divide", lambda x1, x2, /: true_divide(x1, x2), "Alias of ``true_divide``.")
maximum = _binary("maximum", "max", util.promote_args, "Elementwise maximum; NaN if either is NaN.")
minimum = _binary("minimum", "min", util.promote_args, "Elementwise minimum; NaN if either is NaN.")
float_power = _binary("float_power", "pow", util.promote_args_inexact, "``x1 ** x2`` computed in floating point.")
equal = _binary("equal", "eq", util.promote_args, "Elementwise ``x1 == x2``.")
not_equal = _binary("not_equal", "ne", util.promote_args, "Elementwise ``x1 != x2``.")


def _comparison(name: str, lax_name: str, doc: str) -> Fn:
    """An ordered comparison; complex values compare lexicographically, (real, imag), as JAX's do
    (lax's lt/gt refuse complex operands)."""

    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Any:
        a, b = util.promote_args(name, x1, x2)
        op = _lax(lax_name)
        if dtypes.issubdtype(dtypes.dtype(a), np.complexfloating):
            return lax.select(lax.eq(lax.real(a), lax.real(b)), op(lax.imag(a), lax.imag(b)), op(lax.real(a), lax.real(b)))
        return op(a, b)

    return _public(name, fn, doc)


less = _comparison("less", "lt", "Elementwise ``x1 < x2``.")
less_equal = _comparison("less_equal", "le", "Elementwise ``x1 <= x2``.")
greater = _comparison("greater", "gt", "Elementwise ``x1 > x2``.")
greater_equal = _comparison("greater_equal", "ge", "Elementwise ``x1 >= x2``.")
bitwise_and = _binary("bitwise_and", "bitwise_and", util.promote_args, "Elementwise ``x1 & x2`` (integers, bool).")
bitwise_or = _binary("bitwise_or", "bitwise_or", util.promote_args, "Elementwise ``x1 | x2`` (integers, bool).")
bitwise_xor = _binary("bitwise_xor", "bitwise_xor", util.promote_args, "Elementwise ``x1 ^ x2`` (integers, bool).")
left_shift = _binary("left_shift", "shift_left", util.promote_args_numeric, "Elementwise ``x1 << x2``.")
bitwise_left_shift = left_shift


def add(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 + x2``; on bool this is logical or, as in NumPy."""
    a, b = util.promote_args("add", x1, x2)
    return lax.bitwise_or(a, b) if is_bool(a) else lax.add(a, b)


def multiply(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 * x2``; on bool this is logical and, as in NumPy."""
    a, b = util.promote_args("multiply", x1, x2)
    return lax.bitwise_and(a, b) if is_bool(a) else lax.mul(a, b)


def right_shift(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 >> x2``: arithmetic for signed integers, logical for unsigned."""
    a, b = util.promote_args_numeric("right_shift", x1, x2)
    return lax.shift_right_logical(a, b) if is_unsigned(a) else lax.shift_right_arithmetic(a, b)


bitwise_right_shift = right_shift


# ---------------------------------------------------------------------------
# Unary ops


def negative(x: ArrayLike, /) -> Any:
    """Elementwise ``-x``."""
    util.check_arraylike("negative", x)
    return lax.neg(x)


def positive(x: ArrayLike, /) -> Any:
    """Elementwise ``+x``: ``x`` itself, as an array."""
    util.check_arraylike("positive", x)
    return asarray(x)


def bitwise_not(x: ArrayLike, /) -> Any:
    """Elementwise ``~x`` (integers, bool)."""
    util.check_arraylike("bitwise_not", x)
    return lax.bitwise_not(x)


invert = _public("invert", lambda x, /: bitwise_not(x), "Alias of ``bitwise_not``.")
bitwise_invert = invert


def bitwise_count(x: ArrayLike, /) -> Any:
    """The number of 1 bits in the absolute value of each integer."""
    util.check_arraylike("bitwise_count", x)
    return lax.population_count(absolute(x))


# ---------------------------------------------------------------------------
# Logical ops: operands are truth values (nonzero is true)


def _truth(x: Any) -> Any:
    return x if is_bool(x) else lax.ne(x, lax_const(x, 0))


def _logical(name: str, lax_name: str) -> Fn:
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Any:
        a, b = util.promote_args(name, x1, x2)
        return _lax(lax_name)(_truth(a), _truth(b))

    return _public(name, fn, f"Elementwise logical {name.removeprefix('logical_')} of the truth values.")


logical_and = _logical("logical_and", "bitwise_and")
logical_or = _logical("logical_or", "bitwise_or")
logical_xor = _logical("logical_xor", "bitwise_xor")


def logical_not(x: ArrayLike, /) -> Any:
    """Elementwise logical not of the truth value (nonzero is true)."""
    (a,) = util.promote_args("logical_not", x)
    return lax.bitwise_not(_truth(a))


# ---------------------------------------------------------------------------
# Division with NumPy's (floor) semantics


def _floor_divide(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_args_numeric("floor_divide", x1, x2)
    if is_unsigned(x1):
        return lax.div(x1, x2)
    if is_integer(x1):
        quotient = lax.div(x1, x2)
        # Truncating division rounds toward zero; step down when the signs
        # differ and the division was inexact.
        signs_differ = lax.ne(lax.sign(x1), lax.sign(x2))
        inexact = lax.ne(lax.rem(x1, x2), lax_const(x1, 0))
        step_down = logical_and(signs_differ, inexact)
        return util.where_jit(step_down, lax.sub(quotient, python_scalar(x1, 1)), quotient)
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1: Any, x2: Any) -> tuple[Any, Any]:
    """Floor quotient and remainder of floats, exact when the true quotient is an integer."""
    mod = lax.rem(x1, x2)
    div = lax.div(util.where_jit(lax.eq(x2, lax_const(x2, 0)), x1, lax.sub(x1, mod)), x2)
    adjust = lax.bitwise_and(lax.ne(mod, lax_const(mod, 0)), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = lax.select_n(adjust, mod, lax.add(mod, x2))
    div = lax.select_n(adjust, div, lax.sub(div, python_scalar(div, 1)))
    return lax.round(div, lax.RoundingMethod.AWAY_FROM_ZERO), mod


_floor_divide_jit = staged("floor_divide", _floor_divide)


def floor_divide(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 // x2``: the quotient rounded toward minus infinity."""
    util.check_arraylike("floor_divide", x1, x2)
    if any(dtypes.issubdtype(dtypes.dtype(x), np.complexfloating) for x in (x1, x2)):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _floor_divide_jit(x1, x2)


def _nonzero_divisor(x2: Any) -> Any:
    # Integer remainder by zero is defined as 0 in NumPy; divide by 1 instead.
    return util.where_jit(lax.eq(x2, lax_const(x2, 0)), ones_like(x2), x2)


def _remainder(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_args_numeric("remainder", x1, x2)
    if is_integer(x2):
        x2 = _nonzero_divisor(x2)
    trunc_mod = lax.rem(x1, x2)
    nonzero = lax.ne(trunc_mod, const(trunc_mod, 0))
    # The result takes the divisor's sign (Python's %), unlike C's remainder.
    signs_differ = lax.ne(lax.lt(trunc_mod, const(trunc_mod, 0)), lax.lt(x2, const(x2, 0)))
    adjust = lax.bitwise_and(signs_differ, nonzero)
    return lax.select_n(adjust, trunc_mod, lax.add(trunc_mod, x2))


_remainder_jit = staged("remainder", _remainder)


def remainder(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 % x2`` with the sign of the divisor (Python's ``%``)."""
    util.check_arraylike("remainder", x1, x2)
    return _remainder_jit(x1, x2)


mod = _public("mod", lambda x1, x2, /: remainder(x1, x2), "Alias of ``remainder``.")


def _fmod(x1: Any, x2: Any) -> Any:
    # The guard against division by zero is for integer operands (bool is not one).
    integer_operands = dtypes.issubdtype(dtypes.result_type(x1, x2), np.integer)
    x1, x2 = util.promote_args_numeric("fmod", x1, x2)
    if integer_operands:
        x2 = _nonzero_divisor(x2)
    return lax.rem(x1, x2)


_fmod_jit = staged("fmod", _fmod)


def fmod(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise C-style remainder: the result has the sign of ``x1``."""
    util.check_arraylike("fmod", x1, x2)
    return _fmod_jit(x1, x2)


def _divmod(x1: Any, x2: Any) -> tuple[Any, Any]:
    x1, x2 = util.promote_args_numeric("divmod", x1, x2)
    if dtypes.issubdtype(dtypes.dtype(x1), np.inexact):
        return _float_divmod(x1, x2)
    return floor_divide(x1, x2), remainder(x1, x2)


_divmod_jit = staged("divmod", _divmod)


def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Any, Any]:  # noqa: A001  (NumPy's name)
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    util.check_arraylike("divmod", x1, x2)
    result: tuple[Any, Any] = _divmod_jit(x1, x2)
    return result


# ---------------------------------------------------------------------------
# Powers


def _is_static_int(x: Any) -> bool:
    """A concrete integer scalar: the exponents JAX turns into ``integer_pow``."""
    if type(x) is int or isinstance(x, np.integer):
        return True
    # Not a tracer (an Array for isinstance): its value is not known while tracing.
    if isinstance(x, (np.ndarray, Array)) and not isinstance(x, core.Tracer) and x.ndim == 0:
        return bool(dtypes.issubdtype(x.dtype, np.integer))
    return False


def _aval_str(x: Any) -> str:
    aval = core.get_aval(x)
    return ("~" if aval.weak_type else "") + f"{aval.dtype.name}{list(aval.shape)}".replace(" ", "")


def power(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 ** x2``.

    A static integer exponent (a Python or NumPy int) becomes ``integer_pow``,
    exactly like JAX: repeated multiplication, no ``pow``. An integer array
    exponent with an integer base uses square-and-multiply on its bits.
    """
    util.check_arraylike("power", x1, x2)
    if _is_static_int(x2):
        (x,) = util.promote_dtypes_numeric(x1)
        y = int(x2)
        if y < 0 and is_integer(x):
            raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({_aval_str(x)}, {y})")
        return lax.integer_pow(x, y)
    a, b = util.promote_dtypes_numeric(x1, x2)
    if is_integer(a):
        a, b = util.promote_shapes("power", a, b)
        return _integer_power(a, b)
    if is_integer(x2) and not isinstance(x2, (bool, int)):
        # lax.pow takes an integer exponent directly; the converted copy is unused.
        a, b = util.promote_shapes("power", a, x2)
    else:
        a, b = util.promote_shapes("power", a, b)
    return lax.pow(a, b)


def _integer_power(x: Any, y: Any) -> Any:
    """``x ** y`` for integer arrays by binary exponentiation over the bits of ``y``."""
    acc = util.where_jit(
        lax.bitwise_and(lax.eq(x, lax_const(x, 0)), lax.ne(y, lax_const(y, 0))), lax_const(x, 0), lax_const(x, 1)
    )
    # Six bits of the exponent suffice: any larger power overflows unless |x| <= 1,
    # and for those the low bits decide the result (JAX stops at six too).
    for _ in range(6):
        acc = util.where_jit(lax.bitwise_and(y, lax_const(y, 1)), lax.mul(acc, x), acc)
        x = lax.mul(x, x)
        y = lax.shift_right_logical(y, lax_const(y, 1))
    return acc


pow = power  # noqa: A001  (NumPy 2's alias)


# ---------------------------------------------------------------------------
# absolute value and NaN test (here: the ufuncs below build on them)


def absolute(x: ArrayLike, /) -> Any:
    """Elementwise absolute value; unsigned and bool values are returned as they are."""
    util.check_arraylike("absolute", x)
    if is_unsigned(x) or is_bool(x):
        return asarray(x)
    return lax.abs(x)


abs = absolute  # noqa: A001  (NumPy's name)


def isnan(x: ArrayLike, /) -> Any:
    """Elementwise test for NaN (always False for integers)."""
    util.check_arraylike("isnan", x)
    return lax.ne(x, x)



# ---------------------------------------------------------------------------
# fmax/fmin (jnp.where and jnp.clip live in shape_ops)


def _fmax(x1: Any, x2: Any) -> Any:
    return util.where_jit(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def _fmin(x1: Any, x2: Any) -> Any:
    return util.where_jit(logical_or(less(x1, x2), isnan(x2)), x1, x2)


_fmax_jit = staged("fmax", _fmax)
_fmin_jit = staged("fmin", _fmin)


def fmax(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise maximum that ignores NaNs (NaN only if both are NaN)."""
    util.check_arraylike("fmax", x1, x2)
    return _fmax_jit(x1, x2)


def fmin(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise minimum that ignores NaNs (NaN only if both are NaN)."""
    util.check_arraylike("fmin", x1, x2)
    return _fmin_jit(x1, x2)
