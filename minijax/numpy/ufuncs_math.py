"""Elementwise math: exponentials and logarithms, trigonometry, rounding, sign and
floating-point predicates, and the two-argument float functions (hypot, arctan2, ...).

Functions of real analysis compute in floating point: integer and bool
operands are promoted to the default float first (``promote_args_inexact``),
and weak operands stay weak, as in JAX. Rounding and sign functions leave
integers alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.array import Array
from minijax.custom_derivatives import custom_jvp
from minijax.numpy import util
from minijax.numpy.creation import asarray, full_like, ones_like, zeros_like
from minijax.numpy.scalar_types import iscomplexobj
from minijax.numpy.ufuncs import (
    Fn,
    _lax,
    _public,
    const,
    is_bool,
    is_integer,
    lax_const,
    staged,
)
from minijax.numpy.util import ArrayLike
from minijax.primitives.sorting import logaddexp_function

__all__ = [
    "acos",
    "angle",
    "acosh",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "around",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "conj",
    "conjugate",
    "copysign",
    "cos",
    "cosh",
    "deg2rad",
    "degrees",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "floor",
    "heaviside",
    "hypot",
    "imag",
    "iscomplex",
    "isfinite",
    "isreal",
    "isinf",
    "isneginf",
    "isposinf",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logaddexp2",
    "nextafter",
    "rad2deg",
    "radians",
    "real",
    "reciprocal",
    "rint",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinc",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "trunc",
]


def _full_like_bool(x: Any, value: bool) -> Any:
    return full_like(x, value, dtype=np.bool_)


# ---------------------------------------------------------------------------
# Functions of real analysis: promote to float, apply one lax operation

# jnp name -> lax name
_INEXACT_UNARY: dict[str, str] = {
    "exp": "exp",
    "exp2": "exp2",
    "expm1": "expm1",
    "log": "log",
    "log1p": "log1p",
    "sqrt": "sqrt",
    "cbrt": "cbrt",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "arcsinh": "asinh",
    "arctanh": "atanh",
}


def _inexact_unary(name: str) -> Callable[[ArrayLike], Array]:
    lax_name = _INEXACT_UNARY[name]
    inexact_dtypes = util.INEXACT_DTYPES

    resolved: list[Fn] = []  # the lax function, looked up on first use

    def fn(x: ArrayLike, /) -> Array:
        # A float array (eager or traced) needs no promotion: the hot path skips the prologue's calls.
        if not (type(x) is Array or isinstance(x, core.Tracer)) or x.aval.dtype not in inexact_dtypes:
            (x,) = util.promote_args_inexact(name, x)
        if not resolved:
            resolved.append(_lax(lax_name))
        out: Array = resolved[0](x)
        return out

    _public(name, fn, f"Elementwise ``{name}`` (``lax.{lax_name}``); integers are computed as floats.")
    return fn  # as typed here (_public's result is an untyped callable)


exp = _inexact_unary("exp")
exp2 = _inexact_unary("exp2")
expm1 = _inexact_unary("expm1")
log = _inexact_unary("log")
log1p = _inexact_unary("log1p")
sqrt = _inexact_unary("sqrt")
cbrt = _inexact_unary("cbrt")
sin = _inexact_unary("sin")
cos = _inexact_unary("cos")
tan = _inexact_unary("tan")
arcsin = asin = _inexact_unary("arcsin")
arccos = acos = _inexact_unary("arccos")
arctan = atan = _inexact_unary("arctan")
sinh = _inexact_unary("sinh")
cosh = _inexact_unary("cosh")
tanh = _inexact_unary("tanh")
arcsinh = asinh = _inexact_unary("arcsinh")
arctanh = atanh = _inexact_unary("arctanh")


def _arccosh(x: Any) -> Any:
    (a,) = util.promote_args_inexact("arccosh", x)
    return lax.acosh(a)


_arccosh_jit = staged("arccosh", _arccosh)


def arccosh(x: ArrayLike, /) -> Any:
    """Elementwise inverse hyperbolic cosine."""
    util.check_arraylike("arccosh", x)
    return _arccosh_jit(x)


acosh = arccosh


def log2(x: ArrayLike, /) -> Any:
    """Elementwise base-2 logarithm: ``log(x) / log(2)``."""
    (a,) = util.promote_args_inexact("log2", x)
    if dtypes.issubdtype(dtypes.dtype(a), np.complexfloating):  # each part divided by the real log(2)
        r = lax.log(a)
        re, im = lax.real(r), lax.imag(r)
        ln2 = lax.log(const(re, 2))
        return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
    return lax.div(lax.log(a), lax.log(const(a, 2)))


def log10(x: ArrayLike, /) -> Any:
    """Elementwise base-10 logarithm: ``log(x) * (1 / log(10))``."""
    (a,) = util.promote_args_inexact("log10", x)
    if dtypes.issubdtype(dtypes.dtype(a), np.complexfloating):  # each part times the real 1/log(10)
        r = lax.log(a)
        re, im = lax.real(r), lax.imag(r)
        return lax.complex(lax.mul(re, const(re, 1 / np.log(10))), lax.mul(im, const(im, 1 / np.log(10))))
    return lax.mul(lax.log(a), const(a, 1 / np.log(10)))


def reciprocal(x: ArrayLike, /) -> Any:
    """Elementwise ``1 / x``, in floating point."""
    (a,) = util.promote_args_inexact("reciprocal", x)
    return lax.integer_pow(a, -1)


def deg2rad(x: ArrayLike, /) -> Any:
    """Degrees to radians."""
    (a,) = util.promote_args_inexact("deg2rad", x)
    return lax.mul(a, lax_const(a, np.pi / 180))


def rad2deg(x: ArrayLike, /) -> Any:
    """Radians to degrees."""
    (a,) = util.promote_args_inexact("rad2deg", x)
    return lax.mul(a, lax_const(a, 180 / np.pi))


radians = _public("radians", lambda x, /: deg2rad(x), "Alias of ``deg2rad``.")
degrees = _public("degrees", lambda x, /: rad2deg(x), "Alias of ``rad2deg``.")


def square(x: ArrayLike, /) -> Any:
    """Elementwise ``x * x`` (bool is computed as int)."""
    (a,) = util.promote_args_numeric("square", x)
    return lax.square(a)


# ---------------------------------------------------------------------------
# Sign and rounding: integers pass through


def fabs(x: ArrayLike, /) -> Any:
    """Elementwise absolute value, in floating point."""
    (a,) = util.promote_args_inexact("fabs", x)
    return lax.abs(a)


def sign(x: ArrayLike, /) -> Any:
    """Elementwise sign: -1, 0 or 1 (NaN for NaN)."""
    util.check_arraylike("sign", x)
    return lax.sign(x)


def _rounding(name: str, lax_name: str) -> Fn:
    def fn(x: ArrayLike, /) -> Any:
        util.check_arraylike(name, x)
        if not dtypes.issubdtype(dtypes.dtype(x), np.inexact):
            return asarray(x)
        return _lax(lax_name)(x)

    return _public(name, fn, f"Elementwise {name} of floats; integers are returned as they are.")


floor = _rounding("floor", "floor")
ceil = _rounding("ceil", "ceil")


def _round(a: Any, decimals: int) -> Any:
    dtype = dtypes.dtype(a)
    if dtype.kind == "c":  # each part rounded, as NumPy and JAX round complex values
        return lax.complex(_round(lax.real(a), decimals), _round(lax.imag(a), decimals))
    if is_integer(a) or is_bool(a):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if decimals > np.log10(dtypes.finfo(dtype).max):
        return a  # every representable value is already rounded
    if decimals == 0:
        return lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)
    # float16/bfloat16 are scaled in float32, where 10**decimals is exact enough.
    compute = np.dtype(np.float32) if dtype in (np.float16, dtypes.bfloat16) else dtype
    weak = dtypes.is_weakly_typed(a)
    x = util.convert_element_type(a, compute, weak)
    factor = lax_const(x, 10.0**decimals)
    out = lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
    return util.convert_element_type(out, dtype, weak)


_round_jit = staged("round", _round, static_argnames=("decimals",))


def round(a: ArrayLike, decimals: int = 0, out: None = None) -> Any:  # noqa: A001  (NumPy's name)
    """Round to ``decimals`` decimal places, halves to even."""
    util.check_arraylike("round", a)
    util.check_no_out("round", out)
    decimals = int(decimals)
    if is_bool(a):
        raise ValueError(f"jnp.round does not accept dtype bool: data type {np.bool_!r} not inexact")
    return _round_jit(a, decimals=decimals)


around = round


def _rint(x: Any) -> Any:
    if not dtypes.issubdtype(dtypes.dtype(x), np.inexact):
        return util.convert_element_type(x, dtypes.default_float_dtype())
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


_rint_jit = staged("rint", _rint)


def rint(x: ArrayLike, /) -> Any:
    """Round to the nearest integer (halves to even); the result is a float array."""
    util.check_arraylike("rint", x)
    return _rint_jit(x)


def _trunc(x: Any) -> Any:
    if not dtypes.issubdtype(dtypes.dtype(x), np.inexact):
        return x
    return util.where_jit(lax.lt(x, const(x, 0)), lax.ceil(x), lax.floor(x))


_trunc_jit = staged("trunc", _trunc)


def trunc(x: ArrayLike, /) -> Any:
    """Round toward zero; integers are returned as they are."""
    util.check_arraylike("trunc", x)
    return _trunc_jit(x)


# ---------------------------------------------------------------------------
# Floating-point predicates


def isfinite(x: ArrayLike, /) -> Any:
    """Elementwise test for finite values (not inf, not NaN)."""
    util.check_arraylike("isfinite", x)
    if not dtypes.issubdtype(dtypes.dtype(x), np.inexact):
        return _full_like_bool(x, True)
    if dtypes.issubdtype(dtypes.dtype(x), np.complexfloating):  # both parts finite
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def _isinf(x: Any) -> Any:
    if not dtypes.issubdtype(dtypes.dtype(x), np.inexact):
        return _full_like_bool(x, False)
    if dtypes.issubdtype(dtypes.dtype(x), np.complexfloating):  # either part infinite
        re, im = lax.real(x), lax.imag(x)
        return lax.bitwise_or(lax.eq(lax.abs(re), const(re, np.inf)), lax.eq(lax.abs(im), const(im, np.inf)))
    return lax.eq(lax.abs(x), const(x, np.inf))


_isinf_jit = staged("isinf", _isinf)


def isinf(x: ArrayLike, /) -> Any:
    """Elementwise test for positive or negative infinity."""
    util.check_arraylike("isinf", x)
    return _isinf_jit(x)


def _isinf_signed(name: str, value: float) -> Fn:
    def fn(x: ArrayLike, /, out: None = None) -> Any:
        util.check_arraylike(name, x)
        util.check_no_out(name, out)
        if not dtypes.issubdtype(dtypes.dtype(x), np.inexact):
            return _full_like_bool(x, False)
        if dtypes.issubdtype(dtypes.dtype(x), np.complexfloating):
            raise ValueError("isposinf/isneginf are not well defined for complex types")
        return lax.eq(x, const(x, value))

    return _public(name, fn, f"Elementwise test for {'+' if value > 0 else '-'}inf.")


isposinf = _isinf_signed("isposinf", np.inf)
isneginf = _isinf_signed("isneginf", -np.inf)


def _signbit(x: Any) -> Any:
    dtype = dtypes.dtype(x)
    if dtype == np.bool_:
        return _full_like_bool(x, False)
    if dtypes.issubdtype(dtype, np.integer):
        return lax.lt(x, const(x, 0))
    # The sign is the top bit of the float's bit pattern.
    int_type = np.dtype(f"int{dtype.itemsize * 8}")
    bits = lax.bitcast_convert_type(x, int_type)
    top = lax.shift_right_arithmetic(bits, np.array(dtype.itemsize * 8 - 1, int_type)[()])
    return util.convert_element_type(top, np.bool_)


_signbit_jit = staged("signbit", _signbit)


def signbit(x: ArrayLike, /) -> Any:
    """Elementwise test of the sign bit (True for -0.0 and negative NaNs too)."""
    util.check_arraylike("signbit", x)
    return _signbit_jit(x)


# ---------------------------------------------------------------------------
# Two-argument float functions


def arctan2(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise angle of the point ``(x2, x1)``, in ``[-pi, pi]``."""
    a, b = util.promote_args_inexact("arctan2", x1, x2)
    return lax.atan2(a, b)


atan2 = arctan2


def nextafter(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """The next float after ``x1`` in the direction of ``x2``."""
    a, b = util.promote_args_inexact("nextafter", x1, x2)
    return lax.nextafter(a, b)


def _hypot(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_args_inexact("hypot", x1, x2)
    x1, x2 = lax.abs(x1), lax.abs(x2)
    either_inf = lax.bitwise_or(lax.eq(x1, const(x1, np.inf)), lax.eq(x2, const(x2, np.inf)))
    big, small = lax.max(x1, x2), lax.min(x1, x2)
    # big * sqrt(1 + (small/big)**2) cannot overflow where big**2 would; where
    # big is 0 the answer is 0 (the safe divisor only avoids 0/0). The
    # expressions are nested as JAX's are, so the equations come in its order.
    zero = lax_const(big, 0)
    big_is_zero = lax.eq(big, zero)

    def scaled() -> Any:
        safe_big = util.where_jit(lax.eq(big, zero), ones_like(big), big)
        return lax.mul(big, lax.sqrt(lax.add(lax_const(big, 1), lax.square(lax.div(small, safe_big)))))

    out = util.where_jit(big_is_zero, big, scaled())
    return util.where_jit(either_inf, lax_const(out, np.inf), out)


_hypot_jit = staged("hypot", _hypot)


def hypot(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``sqrt(x1**2 + x2**2)``, without intermediate overflow."""
    util.check_arraylike("hypot", x1, x2)
    if any(dtypes.issubdtype(dtypes.dtype(x), np.complexfloating) for x in (x1, x2)):
        raise ValueError(
            "jnp.hypot is not well defined for complex-valued inputs. Please convert to real values first, "
            "such as by using abs(x)"
        )
    return _hypot_jit(x1, x2)


def _logaddexp_with(name: str, exp: Any) -> Fn:
    """``log(exp(x1) + exp(x2))`` in base e or 2 after promotion to a common inexact
    dtype, with JAX's custom derivative (``minijax.primitives.sorting.logaddexp_function``)."""
    custom = logaddexp_function(name, exp, 1.0 if exp is lax.exp_p else float(np.log(2)))

    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Any:
        a, b = util.promote_args_inexact(name, x1, x2)
        return custom(a, b)

    base = "exp" if exp is lax.exp_p else "exp2"
    return _public(name, fn, f"Elementwise ``log({base}(x1) + {base}(x2))`` without overflow.")


logaddexp = _logaddexp_with("logaddexp", lax.exp_p)
logaddexp2 = _logaddexp_with("logaddexp2", lax.exp2_p)


def _copysign(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_args_inexact("copysign", x1, x2)
    negative = _signbit_jit(x2)
    return util.where_jit(negative, lax.neg(lax.abs(x1)), lax.abs(x1))


_copysign_jit = staged("copysign", _copysign)


def copysign(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """The magnitude of ``x1`` with the sign of ``x2``."""
    util.check_arraylike("copysign", x1, x2)
    return _copysign_jit(x1, x2)


def _heaviside(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_args_inexact("heaviside", x1, x2)
    zero, one = lax_const(x1, 0), lax_const(x1, 1)
    return util.where_jit(
        lax.lt(x1, zero), zero, util.where_jit(lax.gt(x1, zero), one, util.where_jit(lax.ne(x1, x1), x1, x2))
    )


_heaviside_jit = staged("heaviside", _heaviside)


def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """The step function: 0 for ``x1 < 0``, ``x2`` at 0, 1 for ``x1 > 0``."""
    util.check_arraylike("heaviside", x1, x2)
    return _heaviside_jit(x1, x2)


def _sinc(x: Any) -> Any:
    (x,) = util.promote_args_inexact("sinc", x)
    at_zero = lax.eq(x, lax_const(x, 0))
    pi_x = lax.mul(lax_const(x, np.pi), x)
    safe = util.where_jit(at_zero, lax_const(x, 1), pi_x)
    return util.where_jit(at_zero, _sinc_maclaurin(0, pi_x), lax.div(lax.sin(safe), safe))


def _sinc_maclaurin(k: int, x: Any) -> Any:
    """The k-th derivative of sin(x)/x at 0 (times x * 0, so it has x's shape and type).

    Its jvp is the (k+1)-th one times the tangent: every derivative of sinc
    at 0 is then exact, as in JAX (the formula itself is 0/0 there)."""
    if k % 2:
        return x * 0
    return x * 0 + lax_const(x, (-1) ** (k // 2) / (k + 1))


def _sinc_maclaurin_jvp(k: int, primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _sinc_maclaurin(k, x), _sinc_maclaurin(k + 1, x) * t


_sinc_maclaurin = custom_jvp(_sinc_maclaurin, nondiff_argnums=(0,))  # type: ignore[assignment]
_sinc_maclaurin.defjvp(_sinc_maclaurin_jvp)  # type: ignore[attr-defined]


_sinc_jit = staged("sinc", _sinc)


def sinc(x: ArrayLike, /) -> Any:
    """Normalized sinc: ``sin(pi x) / (pi x)``, and 1 at 0."""
    util.check_arraylike("sinc", x)
    return _sinc_jit(x)


# ---------------------------------------------------------------------------
# Complex parts


def real(val: ArrayLike, /) -> Any:
    """The real part (a real array is its own real part)."""
    util.check_arraylike("real", val)
    return lax.real(val) if iscomplexobj(val) else asarray(val)


def imag(val: ArrayLike, /) -> Any:
    """The imaginary part (zeros of a real array's dtype)."""
    util.check_arraylike("imag", val)
    return lax.imag(val) if iscomplexobj(val) else zeros_like(val)


def conjugate(x: ArrayLike, /) -> Any:
    """The complex conjugate (a real array is its own)."""
    util.check_arraylike("conjugate", x)
    return lax.conj(x) if iscomplexobj(x) else asarray(x)


conj = conjugate


def _angle(z: Any, deg: bool) -> Any:
    re, im = real(z), imag(z)
    dtype = dtypes.result_type(re, im)
    # Integers, and real scalars, give the default float (as JAX's angle does).
    if not dtypes.issubdtype(dtype, np.inexact) or (dtypes.issubdtype(dtypes.dtype(z), np.floating) and np.ndim(z) == 0):
        dtype = dtypes.default_float_dtype()
        re, im = lax.convert_element_type(re, dtype), lax.convert_element_type(im, dtype)
    result = lax.atan2(im, re)
    return lax.mul(result, np.asarray(180 / np.pi, dtype)) if deg else result


_angle_jit = staged("angle", _angle, static_argnames=("deg",))


def angle(z: ArrayLike, deg: bool = False) -> Any:
    """The argument (phase) of complex values, in radians (degrees with ``deg=True``)."""
    util.check_arraylike("angle", z)
    return _angle_jit(z, deg=deg)


def iscomplex(x: ArrayLike) -> Any:
    """Elementwise: whether the imaginary part is nonzero (False for real arrays)."""
    i = imag(x)
    return lax.ne(i, lax.full_like(i, 0))


def isreal(x: ArrayLike) -> Any:
    """Elementwise: whether the imaginary part is zero (True for real arrays)."""
    i = imag(x)
    return lax.eq(i, lax.full_like(i, 0))
