"""NumPy implementations: elementwise primitives.

The semantics are XLA's on CPU, which is what JAX users observe. Where NumPy
differs, the implementation here says how and why:

* float16/bfloat16 arithmetic and math are computed in float32 and rounded
  back after each operation, as XLA's CPU backend does;
* integer division truncates toward zero and ``rem`` takes the dividend's sign
  (C semantics); dividing by zero gives -1 (all bits set), ``rem`` by zero
  gives the dividend; ``INT_MIN / -1`` is ``INT_MIN``;
* shifts by an amount outside ``[0, bits)`` give 0 (sign fill for the
  arithmetic right shift) instead of being undefined;
* ``max``/``min`` propagate NaN and order -0.0 below +0.0;
* float-to-integer conversion truncates and saturates, NaN becomes 0;
* complex operands: ``max``/``min`` compare (real, imag) lexicographically, and
  conversion to a real dtype (bool too) keeps the real part, as JAX lowers them.

``lgamma``, ``digamma``, ``erf``, ``erfc`` and ``erf_inv`` have no NumPy
function: they are written below as vectorised formulas evaluated in float64
(accurate to a few float64 ulps away from poles and zeros).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from minijax import dtypes
from minijax.core import ShapedArray
from minijax_numpy.table import IMPLS, SPECIALIZERS, impl

Array = np.ndarray[Any, Any]
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
# The narrow floats (float8_*, ...) are computed in float32 and rounded once too:
# XLA on CPU upcasts them the same way.
_LOW_PRECISION = frozenset({np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), *dtypes.narrow_dtypes()[:11]})
_COMPLEX_DTYPES = frozenset({np.dtype(np.complex64), np.dtype(np.complex128)})
# Computed by NumPy in the operand dtype itself.
_FULL_PRECISION = frozenset({_F32, _F64}) | _COMPLEX_DTYPES
# Integer dtypes by width in bytes, to view a value's bits as unsigned or signed.
_UNSIGNED: dict[int, np.dtype[Any]] = {np.dtype(t).itemsize: np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}
_SIGNED: dict[int, np.dtype[Any]] = {np.dtype(t).itemsize: np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)}


_FLOAT_DTYPES = frozenset(np.dtype(d) for d in (np.float16, dtypes.bfloat16, np.float32, np.float64)) | _LOW_PRECISION


def _is_float(dtype: np.dtype[Any]) -> bool:
    # A set lookup: this runs on every eager arithmetic op.
    return dtype in _FLOAT_DTYPES


_INEXACT_DTYPES = _FLOAT_DTYPES | _COMPLEX_DTYPES


def _in_float32(fn: Callable[..., Any]) -> Callable[..., Array]:
    """``fn`` on float16/bfloat16 operands computed in float32, rounded back to the operand dtype."""

    def run(*xs: Array, **params: Any) -> Array:
        dtype = xs[0].dtype
        if dtype in _LOW_PRECISION:
            return np.asarray(fn(*(x.astype(_F32) for x in xs))).astype(dtype)
        return np.asarray(fn(*xs))

    return run


# Elements per block in _in_float64: a block's float64 temporaries (a few dozen
# of them in erf_inv) stay in the CPU's caches; a whole large operand's would go
# out to memory and back for every step (random.normal of 25M elements: ~2x).
_SPECIAL_BLOCK = 1 << 14


def _in_float64(fn: Callable[[Array], Array]) -> Callable[..., Array]:
    """``fn`` evaluated in float64 and rounded to the operand dtype (the special functions).

    ``fn`` is elementwise, so a large operand is evaluated block by block: the
    same operations on each element, the same results, in less time."""

    def run(x: Array, **params: Any) -> Array:
        if x.size <= _SPECIAL_BLOCK:
            return np.asarray(fn(x.astype(_F64))).astype(x.dtype)
        flat = x.reshape(-1)
        out = np.empty(flat.shape, x.dtype)
        for start in range(0, flat.size, _SPECIAL_BLOCK):
            block = flat[start : start + _SPECIAL_BLOCK]
            out[start : start + _SPECIAL_BLOCK] = np.asarray(fn(block.astype(_F64)))
        return out.reshape(x.shape)

    return run


def _bits(dtype: np.dtype[Any]) -> int:
    return 8 * dtype.itemsize


def _all_ones(dtype: np.dtype[Any]) -> Any:
    return np.invert(np.zeros((), dtype))


def _plain_float(fn: Callable[..., Any]) -> Callable[[Sequence[ShapedArray]], Callable[..., Any] | None]:
    """Eager fast path: on float32/float64 operands the NumPy function itself is the implementation."""

    def specialize(avals: Sequence[ShapedArray]) -> Callable[..., Any] | None:
        return fn if avals[0].dtype in _FULL_PRECISION else None

    return specialize


# ---------------------------------------------------------------------------
# Floating-point math with a NumPy counterpart


def _atan2(x: Array, y: Array) -> Array:
    """NumPy's ``arctan2`` for real operands; for complex ones (NumPy has none) XLA's
    formula ``-i log((y + i x) / sqrt(x² + y²))``, NaN/inf where its steps give them."""
    if not np.iscomplexobj(x):
        return np.asarray(np.arctan2(x, y))
    with np.errstate(all="ignore"):
        return np.asarray(-1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))).astype(x.dtype)

_FLOAT_MATH: dict[str, Callable[..., Any]] = {
    "floor": np.floor, "ceil": np.ceil, "log": np.log,
    "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "sqrt": np.sqrt, "cbrt": np.cbrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "atan2": _atan2,
}  # fmt: skip
for _name, _fn in _FLOAT_MATH.items():
    IMPLS[_name] = _in_float32(_fn)
    SPECIALIZERS[_name] = _plain_float(_fn)


@impl("is_finite")
def _is_finite(x: Array) -> Array:
    return np.isfinite(x.astype(_F32) if x.dtype in _LOW_PRECISION else x)


@impl("round")
def _round(x: Array, *, rounding_method: int) -> Array:
    if rounding_method == 1:  # TO_NEAREST_EVEN
        return np.rint(x)
    # AWAY_FROM_ZERO. Not trunc(x + 0.5): that addition can round up (0.49999997 -> 1).
    # x - trunc(x) is exact, so the comparison with 0.5 is too.
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.copysign(np.ones((), x.dtype), x), t)


# ---------------------------------------------------------------------------
# Arithmetic on any numeric dtype


# narrow: int1/int2/int4 and their unsigned twins are computed in int32 and
# wrapped back (ml_dtypes' cast wraps modulo 2**bits, as XLA's arithmetic does).
_NARROW_INTS = frozenset(dtypes.narrow_dtypes()[11:])
_I32 = np.dtype(np.int32)


def _in_int32(fn: Callable[..., Any]) -> Callable[..., Array]:
    """``fn`` on narrow-int operands computed in int32, wrapped back to the operand dtype."""

    def run(*xs: Array, **params: Any) -> Array:
        dtype = xs[0].dtype
        if dtype in _NARROW_INTS:
            return np.asarray(fn(*(x.astype(_I32) for x in xs), **params)).astype(dtype)
        return np.asarray(fn(*xs, **params))

    return run


def _by_dtype_kind(
    float_fn: Callable[..., Any], int_fn: Callable[..., Any]
) -> Callable[[Sequence[ShapedArray]], Callable[..., Any] | None]:
    """Eager fast path for `_float_or_int`: choose the function once, from the operand dtype."""

    def specialize(avals: Sequence[ShapedArray]) -> Callable[..., Any] | None:
        dtype = avals[0].dtype
        if dtype in _FULL_PRECISION:
            return float_fn
        return int_fn if dtype not in _INEXACT_DTYPES and dtype not in _NARROW_INTS else None

    return specialize


def _float_or_int(float_fn: Callable[..., Any], int_fn: Callable[..., Any]) -> Callable[..., Array]:
    run_float = _in_float32(float_fn)
    run_int = _in_int32(int_fn)

    def run(*xs: Array, **params: Any) -> Array:
        return run_float(*xs) if xs[0].dtype in _INEXACT_DTYPES else run_int(*xs)

    return run


@impl("sign")
@_in_int32
def _sign(x: Array) -> Array:
    if _is_float(x.dtype):  # keeps -0.0 and NaN, unlike np.sign
        # Compared in float32: a narrow float may have no 0 to compare with (float8_e8m0fnu).
        w = x.astype(_F32) if x.dtype in _LOW_PRECISION else x
        return np.where(w > 0, np.ones((), w.dtype), np.where(w < 0, -np.ones((), w.dtype), w)).astype(x.dtype)
    return np.sign(x)


def _c_division(x: Array, y: Array) -> tuple[Array, Array, Array]:
    """(quotient, remainder, y == 0) with C semantics and no undefined cases."""
    by_zero = y == 0
    bad = by_zero
    if x.dtype.kind == "i":  # INT_MIN / -1 overflows; x / 1 gives XLA's answer (INT_MIN, remainder 0)
        bad = by_zero | ((x == np.iinfo(x.dtype).min) & (y == -1))
    safe_y = np.where(bad, np.ones((), y.dtype), y)
    r = np.fmod(x, safe_y)  # C remainder: the sign of the dividend
    q = (x - r) // safe_y  # exact division
    return q, r, by_zero


def _int_div(x: Array, y: Array) -> Array:
    q, _, by_zero = _c_division(x, y)
    return np.where(by_zero, _all_ones(x.dtype), q)


def _int_rem(x: Array, y: Array) -> Array:
    _, r, by_zero = _c_division(x, y)
    return np.where(by_zero, x, r)


def _complex_picks(x: Array, y: Array, greater: bool) -> Array:
    """Where (real, imag) of x is lexicographically above (below) y's: JAX's complex max (min)."""
    cmp = np.greater if greater else np.less
    return np.asarray(np.where(x.real == y.real, cmp(x.imag, y.imag), cmp(x.real, y.real)))


def _float_max(x: Array, y: Array) -> Array:
    if x.dtype.kind == "c":
        return np.where(_complex_picks(x, y, True), x, y)
    # np.maximum propagates NaN; between +0.0 and -0.0 it returns either, XLA returns +0.0.
    zeros = (x == 0) & (y == 0)
    if not zeros.any():  # (the usual case: no pair of zeros to order, NumPy's result is XLA's)
        return np.asarray(np.maximum(x, y))
    return np.where(zeros, np.where(np.signbit(x), y, x), np.maximum(x, y))


def _float_min(x: Array, y: Array) -> Array:
    if x.dtype.kind == "c":
        return np.where(_complex_picks(x, y, False), x, y)
    zeros = (x == 0) & (y == 0)
    if not zeros.any():
        return np.asarray(np.minimum(x, y))
    return np.where(zeros, np.where(np.signbit(x), x, y), np.minimum(x, y))


# name -> (implementation on floats, implementation on integers and bools)
_ARITHMETIC: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "neg": (np.negative, np.negative),
    "add": (np.add, np.add),
    "mul": (np.multiply, np.multiply),
    "div": (np.divide, _int_div),
    "max": (_float_max, np.maximum),  # np.maximum on bools is "or"
    "min": (_float_min, np.minimum),
    "abs": (np.abs, np.abs),
    "square": (np.square, np.square),
    "sub": (np.subtract, np.subtract),
    "rem": (np.fmod, _int_rem),
}
for _name, (_float_fn, _int_fn) in _ARITHMETIC.items():
    IMPLS[_name] = _float_or_int(_float_fn, _int_fn)
    SPECIALIZERS[_name] = _by_dtype_kind(_float_fn, _int_fn)
# The arithmetic implementations, reused below to build composite ones.
_neg: Callable[..., Array] = IMPLS["neg"]
_add: Callable[..., Array] = IMPLS["add"]
_mul: Callable[..., Array] = IMPLS["mul"]
_div: Callable[..., Array] = IMPLS["div"]
_max: Callable[..., Array] = IMPLS["max"]
_min: Callable[..., Array] = IMPLS["min"]
_exp = IMPLS["exp"] = _in_float32(np.exp)

# JAX writes exp2 and logistic as compositions, each step rounded to the operand dtype;
# the rounding shows in float16/bfloat16 (exp2(12.62) is 6310, not 6284, in float16).


@impl("exp2")
def _exp2(x: Array, **params: Any) -> Array:
    """exp(log(2) * x) with log(2) rounded to x's dtype."""
    return _exp(_mul(np.asarray(math.log(2), x.dtype), x))


@impl("logistic")
def _logistic(x: Array, **params: Any) -> Array:
    """1 / (1 + exp(-x))."""
    one = np.ones((), x.dtype)
    return _div(one, _add(one, _exp(_neg(x))))


@impl("pow")
def _pow(x: Array, y: Array) -> Array:
    # An integer exponent is first converted to the base's dtype (so 70000 is inf in float16).
    return _in_float32(np.power)(x, y.astype(x.dtype))


@impl("integer_pow")
def _integer_pow(x: Array, *, y: int) -> Array:
    """Square-and-multiply over the bits of |y|, each product rounded to x's dtype; 1/x**|y| for y < 0."""
    n = abs(int(y))
    acc: Array = np.ones_like(x)
    first = True
    base = x
    while n:
        if n & 1:
            acc = base if first else _mul(acc, base)
            first = False
        n >>= 1
        if n:
            base = _mul(base, base)
    return _div(np.ones_like(x), acc) if y < 0 else acc


@impl("nextafter")
def _nextafter(x: Array, y: Array) -> Array:
    # On the sign-magnitude bit pattern, +1 moves away from zero and -1 toward it.
    x, y = np.broadcast_arrays(x, y)
    u = _UNSIGNED[x.dtype.itemsize]
    bits = x.view(u)
    away = (y > x) == (x > 0)
    step = np.where(away, bits + u.type(1), bits - u.type(1))
    smallest = (y.view(u) & u.type(1 << (_bits(u) - 1))) | u.type(1)  # tiniest subnormal, y's sign
    out = np.where(x == 0, smallest, step).view(x.dtype)
    out = np.where(x == y, y, out)  # equal (incl. 0 and -0): y
    return np.where(np.isnan(x) | np.isnan(y), x + y, out)  # NaN in, NaN out


# ---------------------------------------------------------------------------
# Bitwise operations, on the two's complement bit pattern


IMPLS["not"] = _in_int32(np.invert)
IMPLS["and"] = _in_int32(np.bitwise_and)
IMPLS["or"] = _in_int32(np.bitwise_or)
IMPLS["xor"] = _in_int32(np.bitwise_xor)


def _shift_amount(y: Array) -> tuple[Array, Array]:
    """(amount as an unsigned array, amount < bit width); negative amounts count as huge."""
    amount = y.view(_UNSIGNED[y.dtype.itemsize])
    return amount, amount < _bits(y.dtype)


def _logical_shift(shift: Callable[..., Any]) -> Callable[[Array, Array], Array]:
    """A shift on the operand's bits as unsigned; amounts outside [0, bits) give 0, as in XLA."""

    def run(x: Array, y: Array) -> Array:
        u = _UNSIGNED[x.dtype.itemsize]
        amount, ok = _shift_amount(y)
        shifted = shift(x.view(u), np.where(ok, amount, 0).astype(u))
        return np.asarray(np.where(ok, shifted, u.type(0)).view(x.dtype))

    return run


IMPLS["shift_left"] = _logical_shift(np.left_shift)
IMPLS["shift_right_logical"] = _logical_shift(np.right_shift)


@impl("shift_right_arithmetic")
def _shift_right_arithmetic(x: Array, y: Array) -> Array:
    # Shifting by bits-1 already fills with the sign bit, so larger amounts are clamped to it.
    s = _SIGNED[x.dtype.itemsize]
    amount, _ = _shift_amount(y)
    amount = np.minimum(amount, _bits(s) - 1).astype(s)
    return np.asarray(np.right_shift(x.view(s), amount).view(x.dtype))


_POPCOUNT_OF_BYTE = np.array([bin(i).count("1") for i in range(256)], np.uint8)


@impl("population_count")
def _population_count(x: Array) -> Array:
    as_bytes = np.ascontiguousarray(x).reshape(-1).view(np.uint8).reshape(*x.shape, x.dtype.itemsize)
    return np.asarray(_POPCOUNT_OF_BYTE[as_bytes].sum(axis=-1, dtype=x.dtype))


@impl("clz")
def _clz(x: Array) -> Array:
    # The bit length by binary search (16, 8, 4, 2, 1 for 32 bits); clz = bits - bit length.
    v = x.view(_UNSIGNED[x.dtype.itemsize])
    length = np.zeros(x.shape, np.int64)
    step = _bits(x.dtype) // 2
    while step:
        high = (v >> step) != 0
        length += np.where(high, step, 0)
        v = np.where(high, v >> step, v)
        step //= 2
    length += v != 0
    return (_bits(x.dtype) - length).astype(x.dtype)


# ---------------------------------------------------------------------------
# Comparisons, selection, copies

IMPLS["eq"] = np.equal
IMPLS["ne"] = np.not_equal
IMPLS["lt"] = np.less
IMPLS["le"] = np.less_equal
IMPLS["gt"] = np.greater
IMPLS["ge"] = np.greater_equal


@impl("select_n")
def _select_n(which: Array, *cases: Array) -> Array:
    # XLA chooses case k where which >= k: out-of-range indices clamp to the first/last case.
    out = cases[0]
    for k, case in enumerate(cases[1:], start=1):
        out = np.where(which >= k, case, out)
    return np.asarray(out)


@impl("clamp")
def _clamp(lo: Array, x: Array, hi: Array) -> Array:
    return _min(_max(x, lo), hi)


@impl("copy")
def _copy(x: Array) -> Array:
    return np.array(x, copy=True)


# ---------------------------------------------------------------------------
# Conversions


@impl("convert_element_type")
def _convert_element_type(x: Array, *, new_dtype: Any, weak_type: bool, sharding: Any = None) -> Array:
    new = dtypes.canonicalize_dtype(new_dtype)
    if new == dtypes.float0:
        return np.zeros(x.shape, dtypes.float0)
    if x.dtype.kind == "c" and new.kind != "c":
        x = np.asarray(x.real)  # the imaginary part is dropped (NumPy would warn here)
    if new == np.bool_:
        return np.asarray(x != 0)  # NaN is true
    if _is_float(x.dtype) and dtypes.issubdtype(new, np.integer):
        return _float_to_int(x, new)
    return x.astype(new)


def _float_to_int(x: Array, new: np.dtype[Any]) -> Array:
    """Truncate toward zero, saturate at the integer range, NaN -> 0 (XLA's conversion)."""
    info = dtypes.iinfo(new)
    t = np.trunc(x.astype(_F64))  # exact for every float dtype
    too_big = t >= 2.0 ** (info.bits - (info.kind == "i"))  # the power of two above info.max
    too_small = t < info.min
    inside = np.where(too_big | too_small | np.isnan(t), 0, t).astype(new)
    return np.where(too_big, new.type(info.max), np.where(too_small, new.type(info.min), inside))


@impl("bitcast_convert_type")
def _bitcast_convert_type(x: Array, *, new_dtype: Any) -> Array:
    new = np.dtype(new_dtype)
    if new.itemsize == x.dtype.itemsize:
        return x.view(new)
    flat = np.ascontiguousarray(x).reshape(-1).view(new)  # little-endian byte order, as XLA on CPU
    if new.itemsize < x.dtype.itemsize:
        return np.asarray(flat.reshape(*x.shape, x.dtype.itemsize // new.itemsize))
    return np.asarray(flat.reshape(x.shape[:-1]))


@impl("reduce_precision")
def _reduce_precision(x: Array, *, exponent_bits: int, mantissa_bits: int) -> Array:
    """Round to nearest even at ``mantissa_bits``; flush values outside the exponent range to inf / 0."""
    u = _UNSIGNED[x.dtype.itemsize]
    src_mantissa = dtypes.finfo(x.dtype).nmant
    src_exponent = _bits(u) - 1 - src_mantissa
    v = x.view(u)
    if mantissa_bits < src_mantissa:
        dropped = src_mantissa - mantissa_bits
        last_kept = (v >> u.type(dropped)) & u.type(1)
        half_minus_one = u.type((1 << (dropped - 1)) - 1)
        # Adding half-1 plus the last kept bit rounds to nearest with ties to even; a carry
        # into the exponent is the correct rounding up to the next binade (or to inf).
        v = (v + half_minus_one + last_kept) & u.type(~((1 << dropped) - 1) & ((1 << _bits(u)) - 1))
    if exponent_bits < src_exponent:
        exponent_mask = u.type(((1 << src_exponent) - 1) << src_mantissa)
        sign = v & u.type(1 << (_bits(u) - 1))
        bias, new_bias = (1 << (src_exponent - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = v & exponent_mask
        overflow = exponent > u.type((bias + new_bias) << src_mantissa)
        underflow = exponent <= u.type((bias - new_bias) << src_mantissa)  # incl. new subnormals
        v = np.where(overflow, sign | exponent_mask, np.where(underflow, sign, v))
    return np.where(np.isnan(x), x, v.view(x.dtype))


# ---------------------------------------------------------------------------
# Special functions, vectorised, in float64

_SQRT_PI = math.sqrt(math.pi)
_ERFC_CUT = 1.5  # below: series for erf; above: continued fraction for erfc


def _erf_series(x: Array) -> Array:
    """erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2x^2)^n x / (1*3*...*(2n+1)); all terms positive."""
    term = x.copy()
    total = x.copy()
    two_x2 = 2 * x * x
    for n in range(1, 40):  # in place: the same operations in the same order, without temporaries
        term *= two_x2
        term /= 2 * n + 1
        total += term
    return np.asarray(2 / _SQRT_PI * np.exp(-x * x) * total)


def _erfc_fraction(x: Array) -> Array:
    """erfc(x) for x >= _ERFC_CUT: exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))."""
    t = x.copy()
    for k in range(200, 0, -1):
        t = x + (k / 2) / t
    return np.asarray(np.exp(-x * x) / _SQRT_PI / t)


def _erf(x: Array) -> Array:
    # Each formula runs on the elements it is for only: the continued fraction
    # costs 200 steps, and few elements need it (|x| >= 1.5).
    a = np.abs(x)
    small = a < _ERFC_CUT
    out = np.empty_like(a)
    out[small] = _erf_series(a[small])
    out[~small] = 1 - _erfc_fraction(a[~small])
    return np.copysign(out, x)


def _erfc(x: Array) -> Array:
    a = np.abs(x)
    tail = a >= _ERFC_CUT
    out = np.empty_like(a)
    fraction = _erfc_fraction(a[tail])
    out[tail] = np.where(x[tail] > 0, fraction, 2 - fraction)
    out[~tail] = 1 - _erf(x[~tail])
    return out


# Giles's single-precision approximation of erf_inv ("Approximating the erfinv function", GPU
# Computing Gems, 2011): erf_inv(t) ~ t * p(w) with w = -log(1 - t^2), one polynomial in w - 2.5
# for w < 5 and one in sqrt(w) - 3 beyond. Relative error below ~4e-7 on (-1, 1).
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefficients: Sequence[float], v: Array) -> Array:
    """The polynomial of ``coefficients`` (highest power first) at ``v``, in place."""
    p = np.full_like(v, coefficients[0])
    for c in coefficients[1:]:
        p *= v
        p += c
    return p


def _halley_step(y: Array, t: Array, near_one: Array) -> Array:
    """One Halley step towards erf(y) = t (erf'' / erf' = -2y)."""
    # f(y) = erf(y) - t, written through erfc where erf(y) is close to 1.
    f = np.empty_like(y)
    f[near_one] = (1 - t[near_one]) - _erfc(y[near_one])
    f[~near_one] = _erf(y[~near_one]) - t[~near_one]
    u = f / (2 / _SQRT_PI * np.exp(-y * y))
    return np.asarray(y - u / (1 + y * u))


def _erf_inv(x: Array) -> Array:
    """An initial guess (Giles's approximation, ~4e-7) polished by one Halley step.

    Halley's step triples the number of correct digits: 4e-7 becomes ~1e-19, below
    float64's rounding, so what is left is erf's own error (a few float64 ulps, up to
    ~30 near |y| = 1.5 where erf switches formulas); a second step only moves that
    noise around (issue 23: float32 results bit-identical on a dense grid, float64
    within the same ulps of scipy). Each step evaluates erf once on every element,
    which is most of the cost of random.normal on this backend."""
    t = np.abs(x)
    inside = t < 1
    t = np.where(inside, t, 0.5)
    w = -np.log1p(-t * t)
    y = np.asarray(t * _horner(_GILES_CENTRAL, w - 2.5))
    tail = w >= 5
    y[tail] = t[tail] * _horner(_GILES_TAIL, np.sqrt(w[tail]) - 3)
    # Beyond float32's range (w > 16, t within ~1e-7 of 1) the fit does not hold: there
    # Winitzki's closed form (~1e-3 everywhere) starts the steps, and takes a third one.
    far = w > 16
    wf, a = w[far], 0.147
    b = 2 / (math.pi * a) - wf / 2
    y[far] = np.sqrt(np.maximum(np.sqrt(b * b + wf / a) - b, 0.0))
    near_one = t > 0.5
    y = _halley_step(y, t, near_one)
    if far.any():  # ~1e-3 -> ~1e-9 -> ~1e-27: one more step where Winitzki's guess started
        y[far] = _halley_step(y[far], t[far], near_one[far])
    y = np.where(inside, y, np.where(np.abs(x) == 1, np.inf, np.nan))
    return np.asarray(np.copysign(y, x))


def _shift_up(z: Array, to: float, steps: int) -> tuple[Array, Array, Array]:
    """(w, terms, used): w = z + n >= to (n <= steps), terms[k] = z + k, used[k] = (k < n)."""
    w = z.copy()
    terms, used = [], []
    for _ in range(steps):
        below = w < to
        terms.append(w)
        used.append(below)
        w = np.where(below, w + 1, w)
    return w, np.stack(terms), np.stack(used)


# Bernoulli numbers B_2, B_4, ..., B_14, for the asymptotic series at large w:
#   lgamma(w)  ~ (w - 1/2) log w - w + log(2 pi)/2 + sum_k B_2k / (2k (2k-1) w^(2k-1))
#   digamma(w) ~ log w - 1/(2w) - sum_k B_2k / (2k w^(2k))
# With w >= 10 the first omitted terms are below 1e-16 relative.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _lgamma_series(w: Array) -> Array:
    return sum((b / (2 * k * (2 * k - 1)) * w ** -(2 * k - 1) for k, b in enumerate(_BERNOULLI, 1)), np.zeros_like(w))


def _digamma_series(w: Array) -> Array:
    return sum((b / (2 * k) * w ** -(2 * k) for k, b in enumerate(_BERNOULLI, 1)), np.zeros_like(w))


def _is_nonpositive_integer(x: Array) -> Array:
    return np.asarray((x <= 0) & (np.floor(x) == x))


def _lgamma(x: Array) -> Array:
    # Reflection for x < 1/2: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x).
    reflect = x < 0.5
    z = np.where(reflect, 1 - x, x)
    # Recurrence lgamma(z) = lgamma(z + n) - log(z (z+1) ... (z+n-1)), then Stirling's series.
    w, terms, used = _shift_up(z, 10.0, 10)
    stirling = (w - 0.5) * np.log(w) - w + 0.5 * math.log(2 * math.pi) + _lgamma_series(w)
    result = stirling - np.log(np.prod(np.where(used, terms, 1.0), axis=0))
    r = x - 2 * np.round(x / 2)  # sin(pi x) = sin(pi r), r in [-1, 1], exact
    # For tiny r, sin(pi r) = pi r: avoids pi * r losing bits when r is subnormal.
    log_sin = np.where(np.abs(r) < 1e-8, math.log(math.pi) + np.log(np.abs(r)), np.log(np.abs(np.sin(math.pi * r))))
    reflected = math.log(math.pi) - log_sin - result
    result = np.where(reflect, reflected, result)
    return np.where(_is_nonpositive_integer(x) | np.isinf(x), np.inf, result)


def _digamma(x: Array) -> Array:
    # Reflection for x < 1/2: digamma(x) = digamma(1 - x) - pi / tan(pi x).
    reflect = x < 0.5
    z = np.where(reflect, 1 - x, x)
    # Recurrence digamma(z) = digamma(z + n) - sum 1/(z+k), then the asymptotic series.
    w, terms, used = _shift_up(z, 10.0, 10)
    asymptotic = np.log(w) - 1 / (2 * w) - _digamma_series(w)
    result = asymptotic - np.sum(np.where(used, 1 / terms, 0.0), axis=0)
    r = x - np.round(x)  # tan(pi x) = tan(pi r), r in [-1/2, 1/2], exact
    cot = np.where(np.abs(r) < 1e-8, 1 / r, math.pi / np.tan(math.pi * r))  # pi cot(pi r) = 1/r for tiny r
    result = np.where(reflect, result - cot, result)
    return np.where(_is_nonpositive_integer(x) | (x == -np.inf), np.nan, result)


IMPLS["erf"] = _in_float64(_erf)
IMPLS["erfc"] = _in_float64(_erfc)
IMPLS["erf_inv"] = _in_float64(_erf_inv)
IMPLS["lgamma"] = _in_float64(_lgamma)
IMPLS["digamma"] = _in_float64(_digamma)
