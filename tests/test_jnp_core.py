"""minijax.numpy core against NumPy: elementwise functions, reductions, creation, errors.

Values are checked against NumPy; dtypes and weak types against JAX's rules
(written out here as tables, taken from JAX 0.10). ``test_jnp_core_oracle.py``
checks the same functions against real JAX directly.
"""

from __future__ import annotations

import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import dtypes
from minijax.config import numpy_rank_promotion

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.int32, np.uint32)]
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32)]
DTYPES = [np.dtype(np.bool_), *INTS, *FLOATS]
SHAPES = [(), (3,), (2, 3), (2, 1, 3)]
F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)


def host(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, lo: float = -5, hi: float = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0 if dtype.kind == "u" else int(lo), int(hi) + 1, shape).astype(dtype))
    return np.asarray(rng.uniform(lo, hi, shape).astype(np.float32).astype(dtype))


@st.composite
def operands(draw: Any, dtypes_: list[np.dtype[Any]] = DTYPES, shape: tuple[int, ...] | None = None) -> np.ndarray:
    dtype = draw(st.sampled_from(dtypes_))
    sh = draw(st.sampled_from(SHAPES)) if shape is None else shape
    return host(sh, dtype, draw(st.integers(0, 2**16)))


def tol(dtype: np.dtype[Any]) -> float:
    return {np.dtype(np.float16): 1e-2, BF16: 2e-2}.get(np.dtype(dtype), 1e-5)


def check_values(got: Any, want: Any, dtype: np.dtype[Any]) -> None:
    g = np.asarray(got).astype(np.float64)
    w = np.asarray(want).astype(dtype).astype(np.float64)
    if dtype.kind in "iub":
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=tol(dtype), atol=tol(dtype), equal_nan=True)


def inexact(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return dtype if dtype in FLOATS else F32


def numeric(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return I32 if dtype == np.bool_ else dtype


# ---------------------------------------------------------------------------
# Unary functions: result dtype rule and NumPy reference

# name -> (dtype rule, NumPy reference computed in float64 or on the raw input)
UNARY: dict[str, tuple[Any, Any]] = {
    "exp": (inexact, np.exp), "exp2": (inexact, np.exp2), "expm1": (inexact, np.expm1), "log": (inexact, np.log),
    "log2": (inexact, np.log2), "log10": (inexact, np.log10), "log1p": (inexact, np.log1p),
    "sqrt": (inexact, np.sqrt), "cbrt": (inexact, np.cbrt), "reciprocal": (inexact, np.reciprocal),
    "sin": (inexact, np.sin), "cos": (inexact, np.cos), "tan": (inexact, np.tan), "arcsin": (inexact, np.arcsin),
    "arccos": (inexact, np.arccos), "arctan": (inexact, np.arctan), "sinh": (inexact, np.sinh),
    "cosh": (inexact, np.cosh), "tanh": (inexact, np.tanh), "arcsinh": (inexact, np.arcsinh),
    "arccosh": (inexact, np.arccosh), "arctanh": (inexact, np.arctanh), "deg2rad": (inexact, np.deg2rad),
    "rad2deg": (inexact, np.rad2deg), "radians": (inexact, np.radians), "degrees": (inexact, np.degrees),
    "rint": (inexact, np.rint), "sinc": (inexact, np.sinc), "fabs": (inexact, np.fabs),
    "positive": (lambda d: d, lambda x: x), "absolute": (lambda d: d, np.abs), "floor": (lambda d: d, np.floor),
    "ceil": (lambda d: d, np.ceil), "trunc": (lambda d: d, np.trunc), "square": (numeric, np.square),
    "isnan": (lambda d: np.dtype(bool), np.isnan), "isinf": (lambda d: np.dtype(bool), np.isinf),
    "isfinite": (lambda d: np.dtype(bool), np.isfinite), "isposinf": (lambda d: np.dtype(bool), np.isposinf),
    "isneginf": (lambda d: np.dtype(bool), np.isneginf), "signbit": (lambda d: np.dtype(bool), np.signbit),
    "logical_not": (lambda d: np.dtype(bool), np.logical_not), "real": (lambda d: d, np.real),
    "imag": (lambda d: d, np.imag), "conjugate": (lambda d: d, np.conjugate),
}  # fmt: skip
NOT_FOR_BOOL = {"negative": np.negative, "sign": np.sign, "round": np.round}
INT_ONLY = {"bitwise_not": np.invert, "invert": np.invert}
SAME_INPUT_REFERENCE = {"positive", "absolute", "floor", "ceil", "trunc", "isnan", "isinf", "isfinite", "isposinf",
                        "isneginf", "signbit", "logical_not", "real", "imag", "conjugate", "square"}


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=15)
@given(x=operands())
def test_unary_against_numpy(name: str, x: np.ndarray) -> None:
    rule, reference = UNARY[name]
    out = getattr(jnp, name)(x)
    want_dtype = rule(x.dtype)
    assert (out.shape, out.dtype, out.weak_type) == (x.shape, want_dtype, False)
    with np.errstate(all="ignore"):
        source = x if name in SAME_INPUT_REFERENCE else x.astype(np.float64)
        if x.dtype == BF16 and name in SAME_INPUT_REFERENCE:
            source = x.astype(np.float64)
        want = reference(source)
    check_values(out, want, want_dtype)


@pytest.mark.parametrize("name", sorted(NOT_FOR_BOOL))
@given(x=operands([*INTS, *FLOATS]))
def test_sign_functions_against_numpy(name: str, x: np.ndarray) -> None:
    out = getattr(jnp, name)(x)
    assert out.dtype == x.dtype
    with np.errstate(all="ignore"):
        check_values(out, NOT_FOR_BOOL[name](x.astype(np.float64)), x.dtype)


@pytest.mark.parametrize("name", sorted(INT_ONLY))
@given(x=operands([np.dtype(np.bool_), *INTS]))
def test_bitwise_not_against_numpy(name: str, x: np.ndarray) -> None:
    out = getattr(jnp, name)(x)
    assert out.dtype == x.dtype
    check_values(out, INT_ONLY[name](x), x.dtype)


@pytest.mark.parametrize("name", ["sin", "exp", "floor", "negative", "isnan", "square", "rint"])
@pytest.mark.parametrize("value", [2, -1.5])
def test_unary_on_python_scalars_is_weak(name: str, value: float) -> None:
    out = getattr(jnp, name)(value)
    expected_dtype = {"isnan": np.bool_}.get(name, F32 if isinstance(value, float) or name in ("sin", "exp", "rint") else I32)
    assert out.dtype == expected_dtype
    assert out.weak_type is (name != "rint" or isinstance(value, float))


# ---------------------------------------------------------------------------
# Binary functions

BINARY: dict[str, tuple[str, Any]] = {
    # name -> (dtype rule: promote / inexact / numeric / bool, NumPy reference)
    "add": ("promote", np.add), "subtract": ("promote", np.subtract), "multiply": ("promote", np.multiply),
    "divide": ("inexact", np.divide), "true_divide": ("inexact", np.true_divide),
    "floor_divide": ("numeric", np.floor_divide), "remainder": ("numeric", np.remainder),
    "mod": ("numeric", np.mod), "fmod": ("numeric", np.fmod), "power": ("numeric", np.power),
    "float_power": ("inexact", np.power), "arctan2": ("inexact", np.arctan2), "hypot": ("inexact", np.hypot),
    "maximum": ("promote", np.maximum), "minimum": ("promote", np.minimum), "fmax": ("promote", np.fmax),
    "fmin": ("promote", np.fmin), "logaddexp": ("inexact", np.logaddexp), "logaddexp2": ("inexact", np.logaddexp2),
    "copysign": ("inexact", np.copysign), "heaviside": ("inexact", np.heaviside),
    "equal": ("bool", np.equal), "not_equal": ("bool", np.not_equal), "less": ("bool", np.less),
    "less_equal": ("bool", np.less_equal), "greater": ("bool", np.greater),
    "greater_equal": ("bool", np.greater_equal), "logical_and": ("bool", np.logical_and),
    "logical_or": ("bool", np.logical_or), "logical_xor": ("bool", np.logical_xor),
}  # fmt: skip
BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
           "left_shift": np.left_shift, "right_shift": np.right_shift}


def expected_binary_dtype(rule: str, x: Any, y: Any) -> np.dtype[Any]:
    promoted = dtypes.result_type(x, y)
    return {"promote": promoted, "inexact": inexact(promoted), "numeric": numeric(promoted),
            "bool": np.dtype(bool)}[rule]


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=15)
@given(data=st.data())
def test_binary_against_numpy(name: str, data: Any) -> None:
    rule, reference = BINARY[name]
    shape = data.draw(st.sampled_from(SHAPES))
    x = data.draw(operands(shape=shape))
    y = data.draw(operands(shape=data.draw(st.sampled_from([shape, shape[1:], ()]))))
    want_dtype = expected_binary_dtype(rule, x, y)
    if name == "power" and y.ndim == 0 and y.dtype.kind in "iu":
        want_dtype = numeric(x.dtype)  # a static integer exponent: integer_pow, x's dtype
    integer_division = name in ("floor_divide", "remainder", "mod", "fmod") and want_dtype.kind in "iu"
    if integer_division or (name == "power" and want_dtype.kind in "iu"):
        # Avoid integer x // 0 and x ** -n, which JAX defines differently from NumPy.
        y = np.where(y == 0, np.ones_like(y), y) if name != "power" else (np.abs(y) % 4).astype(y.dtype)
    if name == "subtract" and want_dtype == np.bool_:
        with pytest.raises(TypeError):
            jnp.subtract(x, y)
        return
    out = getattr(jnp, name)(x, y)
    assert (out.shape, out.dtype, out.weak_type) == (np.broadcast_shapes(x.shape, y.shape), want_dtype, False)
    compute = np.float64 if want_dtype.kind == "f" or (rule == "bool" and want_dtype.kind == "b") else want_dtype
    if rule == "bool" and want_dtype == np.bool_ and not name.startswith("logical"):
        compute = dtypes.result_type(x, y)
        compute = np.float64 if compute.kind == "f" or compute == BF16 else compute
    with np.errstate(all="ignore"):
        want = reference(x.astype(compute), y.astype(compute))
    check_values(out, want, want_dtype)


@pytest.mark.parametrize("name", sorted(n for n in BINARY if n not in ("power", "subtract")))
@settings(max_examples=10)
@given(data=st.data())
def test_binary_with_a_python_scalar(name: str, data: Any) -> None:
    rule, reference = BINARY[name]
    x = data.draw(operands())
    scalar = data.draw(st.sampled_from([2, -3, 0.5, -1.25, True]))
    args = (x, scalar) if data.draw(st.booleans()) else (scalar, x)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    want_dtype = expected_binary_dtype(rule, *args)
    if name.startswith("logical_") or name in ("hypot", "logaddexp2"):
        # These combine a weak array with constants (0, 1, inf, 1/log 2) that are
        # strongly typed unless the array is a scalar, as JAX's lax._const makes them.
        weak = weak and x.ndim == 0
    if name == "heaviside":
        weak = weak and np.ndim(args[0]) == 0  # its constants follow the first operand
    if (name in ("floor_divide", "remainder", "mod", "fmod") and want_dtype.kind in "iu") or (
        name == "subtract" and want_dtype == np.bool_
    ):
        return  # integer division by zero and bool subtraction are covered elsewhere
    out = getattr(jnp, name)(*args)
    assert (out.dtype, out.weak_type) == (want_dtype, weak)
    floating = want_dtype.kind == "f" or want_dtype == BF16
    # Operands are converted to the promoted dtype (ints wrap), or straight to float for float results.
    source = np.float64 if floating else dtype
    compute = np.float64 if floating or dtype.kind == "f" or dtype == BF16 else dtype
    with np.errstate(all="ignore"):
        want = reference(*(np.asarray(a).astype(source).astype(compute) for a in args))
    check_values(out, want, want_dtype)


@pytest.mark.parametrize("name", sorted(BITWISE))
@given(data=st.data())
def test_bitwise_against_numpy(name: str, data: Any) -> None:
    x = data.draw(operands([np.dtype(np.bool_), *INTS]))
    y = data.draw(operands([np.dtype(np.bool_), *INTS], shape=x.shape))
    if "shift" in name:
        y = (np.abs(y) % 3).astype(y.dtype) if y.dtype != np.bool_ else y
    want_dtype = dtypes.result_type(x, y)
    if "shift" in name:
        want_dtype = numeric(want_dtype)
    out = getattr(jnp, name)(x, y)
    assert out.dtype == want_dtype
    check_values(out, BITWISE[name](x.astype(want_dtype), y.astype(want_dtype)), want_dtype)


# JAX's promotion with weak types, case by case (operand, operand, dtype, weak).
WEAK_CASES = [
    (1, 2, I32, True),
    (1, 2.5, F32, True),
    (True, 2, I32, True),
    (np.ones(2, np.int8), 3, np.dtype(np.int8), False),
    (np.ones(2, np.int8), 2.5, F32, True),
    (np.ones(2, np.uint8), 3, np.dtype(np.uint8), False),
    (np.ones(2, np.float16), 2.5, np.dtype(np.float16), False),
    (np.ones(2, BF16), 2, BF16, False),
    (np.ones(2, np.int8), np.ones(2, np.uint8), np.dtype(np.int16), False),
    (np.ones(2, np.float16), np.ones(2, BF16), F32, False),
    (np.ones(2, np.bool_), 2, I32, True),
    (np.float32(1), 2, F32, False),
    (np.ones(2, np.float64), 1, F32, False),
]


@pytest.mark.parametrize(("x", "y", "dtype", "weak"), WEAK_CASES)
def test_add_promotion_with_weak_types(x: Any, y: Any, dtype: np.dtype[Any], weak: bool) -> None:
    for out in (jnp.add(x, y), jnp.add(y, x)):
        assert (out.dtype, out.weak_type) == (dtype, weak)


def test_python_int_out_of_range() -> None:
    with pytest.raises(OverflowError, match="too large to convert to int32"):
        jnp.add(2**40, jnp.ones(3, jnp.int32))
    assert int(jnp.add(jnp.int8(1), 300)) == 45  # fits int32, then wraps in int8


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 5, np.int32(2), np.array(3)])
def test_static_integer_powers_are_integer_pow(exponent: Any) -> None:
    x = jnp.arange(-3, 4)
    text = str(jax.make_jaxpr(lambda v: v**exponent)(x))
    assert f"integer_pow[y={int(exponent)}]" in text and "pow " not in text
    np.testing.assert_array_equal(np.asarray(x**exponent), np.arange(-3, 4) ** int(exponent))


def test_integer_array_powers() -> None:
    x = jnp.array([2, -3, 0, 5, 1, -1])
    y = jnp.array([3, 2, 0, 1, 7, 9])
    np.testing.assert_array_equal(np.asarray(x**y), np.array([8, 9, 1, 5, 1, -1]))
    with pytest.raises(TypeError, match=r"Integers cannot be raised to negative powers, got integer_pow\(int32\[3\], -1\)"):
        jnp.arange(3) ** -1
    np.testing.assert_allclose(np.asarray(jnp.float32(2.0) ** jnp.array([-1, 2])), [0.5, 4.0])


def test_divmod_and_floor_semantics() -> None:
    a = np.array([-7, -1, 0, 1, 7], np.int32)
    for b in (2, -2, 3):
        np.testing.assert_array_equal(np.asarray(jnp.floor_divide(a, b)), np.floor_divide(a, b))
        np.testing.assert_array_equal(np.asarray(jnp.remainder(a, b)), np.remainder(a, b))
        np.testing.assert_array_equal(np.asarray(jnp.fmod(a, b)), np.fmod(a, b))
        q, r = jnp.divmod(a.astype(np.float32), float(b))
        np.testing.assert_allclose(np.asarray(q), np.floor_divide(a, b))
        np.testing.assert_allclose(np.asarray(r), np.remainder(a, b))
    assert np.asarray(jnp.remainder(a, 0)).tolist() == [0, 0, 0, 0, 0]  # NumPy's definition


def test_round_decimals_and_rint() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, 1.2345, -2.675], np.float32)
    np.testing.assert_allclose(np.asarray(jnp.round(x)), np.round(x))
    np.testing.assert_allclose(np.asarray(jnp.round(x, 2)), np.round(x, 2), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.around(x, 1)), np.round(x, 1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.rint(x)), np.rint(x))
    assert jnp.round(jnp.arange(3), 2).dtype == np.int32
    with pytest.raises(NotImplementedError, match="decimals < 0"):
        jnp.round(jnp.arange(3), -1)
    with pytest.raises(NotImplementedError, match="out"):
        jnp.round(x, out=np.zeros(6))


# ---------------------------------------------------------------------------
# Broadcasting as JAX stages it


BROADCAST_JAXPRS = [
    ((np.ones((2, 3), np.float32), np.ones(3, np.float32)),
     "{ lambda ; a:f32[2,3] b:f32[3]. let\n    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
     "    d:f32[2,3] = add a c\n  in (d,) }"),
    ((np.ones((2, 1), np.float32), np.ones((4, 2, 3), np.float32)),
     "{ lambda ; a:f32[2,1] b:f32[4,2,3]. let\n    c:f32[1,2,1] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n"
     "    d:f32[4,2,3] = add c b\n  in (d,) }"),
    ((np.ones((), np.float32), np.ones((4, 2, 3), np.float32)),
     "{ lambda ; a:f32[] b:f32[4,2,3]. let c:f32[4,2,3] = add a b in (c,) }"),
    ((np.ones(3, np.int8), np.ones(3, np.float32)),
     "{ lambda ; a:i8[3] b:f32[3]. let\n    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
     "    d:f32[3] = add c b\n  in (d,) }"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "expected"), BROADCAST_JAXPRS)
def test_broadcasting_jaxprs(args: tuple[Any, ...], expected: str) -> None:
    assert str(jax.make_jaxpr(lambda x, y: x + y)(*map(jnp.asarray, args))) == expected


def test_python_scalars_become_literals() -> None:
    text = str(jax.make_jaxpr(lambda x: x * 2 + 1.5)(jnp.ones(3, jnp.int8)))
    assert "mul a 2:i8[]" in text
    assert "add c 1.5:f32[]" in text or "1.5:f32[]" in text


def test_rank_promotion_modes() -> None:
    x, y = jnp.ones(3), jnp.ones((2, 3))
    with numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match=r"Operands could not be broadcast together for add on shapes \(3,\) \(2, 3\)"):
            jnp.add(x, y)
        assert (jnp.add(jnp.ones(()), y)).shape == (2, 3)  # scalars are not rank promotion
    with numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="Following NumPy automatic rank promotion for multiply"):
            jnp.multiply(x, y)


def test_incompatible_shapes() -> None:
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: \(2,\), \(3,\)"):
        jnp.add(jnp.ones(2), jnp.ones(3))


# ---------------------------------------------------------------------------
# Reductions

REDUCTIONS: dict[str, Any] = {
    "sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "amax": np.max, "amin": np.min,
    "mean": np.mean, "var": np.var, "std": np.std, "all": np.all, "any": np.any, "nansum": np.nansum,
    "nanmean": np.nanmean, "nanmax": np.nanmax, "nanmin": np.nanmin, "ptp": np.ptp,
}  # fmt: skip


def reduction_dtype(name: str, dtype: np.dtype[Any]) -> np.dtype[Any]:
    if name in ("all", "any"):
        return np.dtype(bool)
    if name in ("mean", "var", "std", "nanmean"):
        return inexact(dtype)
    if name in ("sum", "prod", "nansum"):
        if dtype == np.bool_ or (dtype.kind == "i" and dtype.itemsize < 4):
            return I32
        if dtype.kind == "u" and dtype.itemsize < 4:
            return np.dtype(np.uint32)
    return dtype


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@settings(max_examples=15)
@given(data=st.data())
def test_reduction_against_numpy(name: str, data: Any) -> None:
    allowed = [d for d in DTYPES if not (name == "ptp" and d == np.bool_)]
    x = data.draw(operands(allowed, shape=data.draw(st.sampled_from(SHAPES[1:]))))
    if x.dtype.kind == "f" or x.dtype == BF16:
        x = x.copy()
        x.flat[0] = np.nan if data.draw(st.booleans()) and name.startswith("nan") else x.flat[0]
    axis = data.draw(st.sampled_from([None, 0, -1, *([(0, 1)] if x.ndim >= 2 else [])]))
    keepdims = data.draw(st.booleans())
    out = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
    want_dtype = reduction_dtype(name, x.dtype)
    source = x.astype(np.float64) if x.dtype in FLOATS or name in ("mean", "var", "std", "nanmean") else x
    if name in ("sum", "prod", "nansum") and want_dtype.kind in "iu":
        source = x.astype(want_dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = REDUCTIONS[name](source, axis=axis, keepdims=keepdims)
    assert (out.shape, out.dtype, out.weak_type) == (np.shape(want), want_dtype, False)
    check_values(out, want, want_dtype)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(x=operands([*INTS, *FLOATS], shape=(2, 3)), axis=st.sampled_from([None, 0, 1, -1]), keepdims=st.booleans())
def test_argmax_argmin_against_numpy(name: str, x: np.ndarray, axis: Any, keepdims: bool) -> None:
    out = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
    want = getattr(np, name)(x.astype(np.float64), axis=axis, keepdims=keepdims)
    assert out.dtype == I32 and out.shape == np.shape(want)
    np.testing.assert_array_equal(np.asarray(out), want)


@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_reduction_options() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    mask = np.array([True, False, True])
    np.testing.assert_allclose(np.asarray(jnp.sum(x, where=mask)), np.sum(x, where=mask))
    np.testing.assert_allclose(np.asarray(jnp.sum(x, initial=10.0)), np.sum(x, initial=10.0))
    np.testing.assert_allclose(np.asarray(jnp.max(x, where=mask, initial=-100)), np.max(x, where=mask, initial=-100))
    np.testing.assert_allclose(np.asarray(jnp.mean(x, axis=0, where=mask)), np.mean(x, axis=0, where=mask))
    np.testing.assert_allclose(np.asarray(jnp.var(x, where=mask)), np.var(x, where=mask), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.var(x, correction=1, axis=1)), np.var(x, ddof=1, axis=1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.std(x, ddof=1)), np.std(x, ddof=1), rtol=1e-6)
    assert jnp.sum(jnp.ones(3, jnp.int8), promote_integers=False).dtype == np.int8
    assert jnp.sum(jnp.ones(3, jnp.bool_), promote_integers=False).dtype == np.int32
    assert jnp.sum(x, dtype=jnp.int8).dtype == np.int8
    assert jnp.mean(x, dtype=jnp.float16).dtype == np.float16
    assert np.isnan(float(jnp.var(jnp.ones(1), ddof=1)))
    assert float(jnp.max(jnp.zeros(0), initial=3.0)) == 3.0
    assert jnp.sum(jnp.zeros((0, 2))).shape == ()


def test_reduction_initial_converts_as_lax_does() -> None:
    # initial is converted to the result dtype with lax's conversion (as in JAX):
    # out-of-range floats saturate, NaN becomes 0, ints wrap, fractions truncate.
    ints = jnp.arange(3, dtype=jnp.int32)
    i32 = np.iinfo(np.int32)
    assert int(jnp.max(ints, initial=-np.inf)) == 2
    assert int(jnp.max(ints, initial=np.inf)) == i32.max
    assert int(jnp.min(ints, initial=-np.inf)) == i32.min
    assert int(jnp.max(ints, initial=np.nan)) == 2
    assert int(jnp.sum(ints, initial=2.5)) == 3 + 2
    assert int(jnp.max(jnp.arange(3, dtype=jnp.uint8), initial=-1)) == 255
    with pytest.raises(ValueError, match="initial value must be a scalar"):
        jnp.max(ints, initial=jnp.array([1, 2]))
    with pytest.raises(OverflowError):
        jnp.max(ints, initial=2**40)


def test_reduction_errors() -> None:
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        jnp.sum(x, axis=2)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        jnp.sum(x, axis=(0, 0))
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.sum is not supported."):
        jnp.sum(x, out=np.zeros(()))
    with pytest.raises(ValueError, match="does not have an identity, so to use a where mask one has to specify 'initial'"):
        jnp.max(x, where=np.ones(3, bool))
    with pytest.raises(ValueError, match="zero-size array to reduction operation min which has no identity"):
        jnp.min(jnp.zeros((0,)))
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        jnp.argmax(jnp.zeros((0,)))
    with pytest.raises(ValueError, match="ddof and correction can't be provided simultaneously."):
        jnp.var(x, ddof=1, correction=1)
    with pytest.raises(TypeError):
        jnp.argmax(x, axis=(0,))
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments, got <class 'list'> at position 0."):
        jnp.sum([1, 2])


def test_comparison_helpers() -> None:
    a = np.array([1.0, np.nan, np.inf, 2.0], np.float32)
    b = np.array([1.0 + 1e-7, np.nan, np.inf, 2.1], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.isclose(a, b)), np.isclose(a, b))
    np.testing.assert_array_equal(np.asarray(jnp.isclose(a, b, equal_nan=True)), np.isclose(a, b, equal_nan=True))
    np.testing.assert_array_equal(np.asarray(jnp.isclose(a, b, rtol=0.1)), np.isclose(a, b, rtol=0.1))
    assert bool(jnp.allclose(a[:1], b[:1])) and not bool(jnp.allclose(a, b))
    assert bool(jnp.allclose(a, a, equal_nan=True))
    assert bool(jnp.array_equal(jnp.arange(3), [0, 1, 2]))
    assert not bool(jnp.array_equal(jnp.arange(3), jnp.arange(2)))
    assert bool(jnp.array_equal(a, a, equal_nan=True)) and not bool(jnp.array_equal(a, a))
    assert bool(jnp.array_equiv(jnp.ones(3), jnp.ones((2, 3))))
    assert jnp.array_equal(jnp.ones(2), jnp.ones(3)).dtype == np.bool_
    with pytest.raises(TypeError, match="allclose requires ndarray or scalar arguments"):
        jnp.allclose([1.0], [1.0])


# ---------------------------------------------------------------------------
# Creation


@given(
    start=st.integers(-5, 5),
    stop=st.integers(-5, 10),
    step=st.sampled_from([1, 2, 3, -1, -2]),
    as_float=st.booleans(),
)
def test_arange_against_numpy(start: int, stop: int, step: int, as_float: bool) -> None:
    s = float(start) if as_float else start
    out = jnp.arange(s, stop, step)
    want = np.arange(s, stop, step)
    assert out.dtype == (F32 if as_float else I32) and not out.weak_type
    np.testing.assert_allclose(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(jnp.arange(stop)), np.arange(stop))


@given(
    start=st.floats(-5, 5),
    stop=st.floats(-5, 5),
    num=st.integers(0, 7),
    endpoint=st.booleans(),
    dtype=st.sampled_from([None, jnp.float32, jnp.int32, jnp.float16]),
)
def test_linspace_against_numpy(start: float, stop: float, num: int, endpoint: bool, dtype: Any) -> None:
    out = jnp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    want_dtype = np.dtype(dtype if dtype is not None else np.float32)
    assert out.dtype == want_dtype and out.shape == (num,)
    want = np.linspace(np.float32(start), np.float32(stop), num, endpoint=endpoint)
    if want_dtype.kind == "i":
        np.testing.assert_allclose(np.asarray(out), np.floor(want), atol=1)
    else:
        np.testing.assert_allclose(np.asarray(out), want, rtol=tol(want_dtype), atol=tol(want_dtype) * 5)


def test_linspace_options() -> None:
    out, step = jnp.linspace(0, 1, 5, retstep=True)
    assert float(step) == 0.25
    grid = jnp.linspace(jnp.zeros(2), jnp.array([1.0, 2.0]), 3, axis=1)
    np.testing.assert_allclose(np.asarray(grid), np.linspace(np.zeros(2), [1.0, 2.0], 3, axis=1))
    with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative."):
        jnp.linspace(0, 1, -1)


@given(n=st.integers(0, 4), m=st.sampled_from([None, 0, 2, 5]), k=st.integers(-3, 3))
def test_eye_against_numpy(n: int, m: int | None, k: int) -> None:
    np.testing.assert_array_equal(np.asarray(jnp.eye(n, m, k)), np.eye(n, m, k))
    assert jnp.eye(n, m, k, dtype=jnp.int8).dtype == np.int8
    np.testing.assert_array_equal(np.asarray(jnp.identity(n, dtype=bool)), np.identity(n, dtype=bool))


@pytest.mark.parametrize(
    ("make", "values", "dtype", "weak"),
    [
        (lambda: jnp.zeros((2, 3)), np.zeros((2, 3)), F32, False),
        (lambda: jnp.ones(3, dtype=jnp.int8), np.ones(3), np.dtype(np.int8), False),
        (lambda: jnp.empty((2,), jnp.bfloat16), np.zeros(2), BF16, False),
        (lambda: jnp.full((2, 2), 7), np.full((2, 2), 7), I32, True),
        (lambda: jnp.full((2,), 1.5), np.full(2, 1.5), F32, True),
        (lambda: jnp.full((2, 3), np.arange(3.0)), np.tile(np.arange(3.0), (2, 1)), F32, False),
        (lambda: jnp.full((), True), np.array(True), np.dtype(bool), False),
        (lambda: jnp.zeros_like(np.ones((2,), np.int8)), np.zeros(2), np.dtype(np.int8), False),
        (lambda: jnp.ones_like(jnp.add(1.0, 1.0)), np.ones(()), F32, True),
        (lambda: jnp.full_like(np.ones(2, np.int8), 1.7), np.ones(2), np.dtype(np.int8), False),
        (lambda: jnp.full_like(np.ones(2), 3, shape=(2, 2)), np.full((2, 2), 3.0), F32, False),
        (lambda: jnp.empty_like(np.ones(2, np.uint8), dtype=jnp.float16), np.zeros(2), np.dtype(np.float16), False),
        (lambda: jnp.array(1), np.array(1), I32, True),
        (lambda: jnp.array(2.5), np.array(2.5), F32, True),
        (lambda: jnp.array(True), np.array(True), np.dtype(bool), False),
        (lambda: jnp.array([1, 2.5, True]), np.array([1, 2.5, 1]), F32, False),
        (lambda: jnp.array([[1, 2], [3, 4]], dtype=jnp.uint8), np.array([[1, 2], [3, 4]]), np.dtype(np.uint8), False),
        (lambda: jnp.array([]), np.zeros(0), F32, False),
        (lambda: jnp.array(np.arange(3, dtype=np.int64)), np.arange(3), I32, False),
        (lambda: jnp.array([jnp.int8(1), 2]), np.array([1, 2]), np.dtype(np.int8), False),
        (lambda: jnp.array([jnp.ones(2), np.zeros(2, np.int32)]), np.array([[1, 1], [0, 0]]), F32, False),
        (lambda: jnp.array(1, ndmin=3), np.ones((1, 1, 1)), I32, True),
        (lambda: jnp.asarray([1.5, -2.5], dtype=jnp.int32), np.array([1, -2]), I32, False),
        (lambda: jnp.float32(1), np.array(1.0), F32, False),
        (lambda: jnp.int8([1, 2]), np.array([1, 2]), np.dtype(np.int8), False),
        (lambda: jnp.bool_(2), np.array(True), np.dtype(bool), False),
        (lambda: jnp.bfloat16(1.5), np.array(1.5), BF16, False),
        (lambda: jnp.uint32(2**31), np.array(2**31), np.dtype(np.uint32), False),
    ],
)
def test_creation(make: Any, values: np.ndarray, dtype: np.dtype[Any], weak: bool) -> None:
    out = make()
    assert isinstance(out, jax.Array)
    assert (out.shape, out.dtype, out.weak_type) == (np.shape(values), dtype, weak)
    np.testing.assert_array_equal(np.asarray(out).astype(np.float64), np.asarray(values, np.float64))


def test_array_of_tracers_stacks_them() -> None:
    f = jax.jit(lambda x, y: jnp.array([[x, 1.0], [2.0, y]]))
    np.testing.assert_array_equal(np.asarray(f(3.0, 4.0)), [[3.0, 1.0], [2.0, 4.0]])
    text = str(jax.make_jaxpr(lambda x, y: jnp.array([x, y]))(1.0, 2.0))
    assert "concatenate[dimension=0]" in text


def test_a_shape_may_be_a_1d_array() -> None:
    """As in JAX, a 1-D NumPy or jax array of ints is a shape (a 0-d one is one dimension)."""
    assert jnp.zeros(np.array([2, 3])).shape == (2, 3)
    assert jnp.ones(jnp.array([4, 1])).shape == (4, 1)
    assert jnp.zeros(np.array(3)).shape == (3,)
    assert jax.image.resize(jnp.ones((2, 2)), np.array([3, 4]), "linear").shape == (3, 4)
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type"):
        jnp.zeros(np.array([[2, 3]]))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type"):
        jax.jit(lambda s: jnp.zeros(s))(jnp.array([2, 3]))


def test_creation_errors() -> None:
    with pytest.raises(OverflowError, match="Python int 2147483648 too large to convert to int32"):
        jnp.array(2**31)
    with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
        jnp.array([1, None])
    with pytest.raises(ValueError, match="inhomogeneous"):
        jnp.array([[1, 2], [3]])
    with pytest.raises(NotImplementedError, match="Only implemented for order='K'"):
        jnp.array([1], order="F")
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type"):
        jnp.zeros((2, 2.5))
    with pytest.raises(TypeError, match="nonnegative"):
        jnp.ones(-1)
    with pytest.raises(TypeError, match="full requires ndarray or scalar arguments"):
        jnp.full((2,), [1, 2])
    with pytest.raises(ValueError, match=r"jax.numpy.arange: arguments must be scalars; got stop=\[1. 1.\]"):
        jnp.arange(np.ones(2))
    with pytest.raises(TypeError, match="iota does not accept dtype bool"):
        jnp.arange(True)
    with pytest.raises(ZeroDivisionError):
        jnp.arange(0, 5, 0)
    with pytest.raises(jax.errors.ConcretizationTypeError, match="arange argument 'stop'"):
        jax.jit(lambda n: jnp.arange(n))(3)
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        jnp.eye(-1)
    with pytest.raises(ValueError, match="Passing an array as a dtype argument"):
        jnp.zeros(2, dtype=jnp.ones(2))
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in zeros"):
        assert jnp.zeros(2, dtype="float64").dtype == F32


# ---------------------------------------------------------------------------
# Scalar types and dtype helpers


def test_scalar_types_are_dtypes_and_converters() -> None:
    assert np.dtype(jnp.float32) == F32 and jnp.float32.dtype == F32
    assert jnp.float32 == np.float32 and hash(jnp.float32) == hash(np.float32)
    assert jnp.zeros(2, dtype=jnp.bfloat16).dtype == BF16
    assert isinstance(np.float32(1), jnp.float32) and not isinstance(jnp.float32(1), jnp.float32)
    assert jnp.float_ is jnp.float64 and jnp.int_ is jnp.int64 and jnp.uint is jnp.uint64
    assert repr(jnp.float32) == "<class 'minijax.numpy.float32'>"
    assert jnp.dtype is np.dtype and jnp.dtype(jnp.int8) == np.int8
    with pytest.warns(UserWarning, match="requested in asarray"):
        assert jnp.float64(1).dtype == F32
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating) and not jnp.issubdtype(jnp.int8, jnp.floating)
    assert jnp.issubdtype(jnp.uint8, jnp.unsignedinteger) and jnp.issubdtype("int32", jnp.signedinteger)


def test_dtype_helpers() -> None:
    assert jnp.promote_types(jnp.int8, jnp.uint8) == np.int16
    assert jnp.promote_types("bfloat16", "float16") == F32
    assert jnp.result_type(1, 2.0) == F32 and jnp.result_type(jnp.int8, 1) == np.int8
    assert jnp.can_cast(jnp.int8, jnp.int32) and not jnp.can_cast(jnp.float32, jnp.int32)
    with pytest.raises(TypeError, match="can_cast\\(\\) does not support Python ints"):
        jnp.can_cast(1, jnp.int8)
    assert jnp.finfo(jnp.bfloat16).bits == 16 and jnp.finfo(jnp.ones(2)).dtype == F32
    assert jnp.iinfo(jnp.int8).min == -128 and jnp.iinfo(jnp.ones(2, jnp.uint8)).max == 255
    assert (jnp.pi, jnp.e, jnp.inf, jnp.newaxis) == (np.pi, np.e, np.inf, None) and np.isnan(jnp.nan)
    assert jnp.isscalar(1) and jnp.isscalar(jnp.ones(())) and not jnp.isscalar(jnp.ones(2))


def test_removed_names() -> None:
    with pytest.raises(AttributeError, match="Use jax.numpy.trunc instead"):
        jnp.fix  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'not_a_function'"):
        jnp.not_a_function  # noqa: B018


@pytest.mark.parametrize(
    "call",
    [lambda: jnp.sin([1, 2]), lambda: jnp.add(1, (1,)), lambda: jnp.mean([1.0]), lambda: jnp.zeros_like([1]),
     lambda: jnp.isclose([1], 1), lambda: jnp.floor_divide([4], 2), lambda: jnp.sin(None)],
)  # fmt: skip
def test_lists_are_refused(call: Any) -> None:
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments, got <class '(list|tuple|NoneType)'>"):
        call()


def test_exact_list_error_message() -> None:
    with pytest.raises(TypeError) as info:
        jnp.sin([1, 2])
    assert str(info.value) == "sin requires ndarray or scalar arguments, got <class 'list'> at position 0."
    with pytest.raises(TypeError) as info:
        jnp.add(1, [1])
    assert str(info.value) == "add requires ndarray or scalar arguments, got <class 'list'> at position 1."


def test_functions_work_under_jit_and_match_eager() -> None:
    def program(x: Any, y: Any) -> Any:
        return (
            jnp.sum(jnp.sin(x) * y, axis=0)
            + jnp.mean(x // 2 + x % 3)
            + jnp.var(jnp.hypot(x, y))
            + jnp.max(jnp.where(x > 0, x, y))
            + jnp.argmax(x).astype(jnp.float32)
            + jnp.std(jnp.round(x, 1), ddof=1)
        )

    x = jnp.asarray(host((4, 3), F32, 1))
    y = jnp.asarray(host((3,), F32, 2))
    np.testing.assert_allclose(np.asarray(jax.jit(program)(x, y)), np.asarray(program(x, y)), rtol=1e-5)


@pytest.mark.parametrize("bounds", [(0, 2**40, 2**31), (2**31, 2**31 + 10, 3), (0, 10, 2**31), (7, 2**63, 2**43)])
def test_arange_bounds_beyond_int32_wrap_as_jax_does(bounds: tuple[int, int, int]) -> None:
    # JAX's arange converts start and step with lax.convert_element_type, which wraps a
    # Python int around int32; only the length is computed from the exact bounds.
    start, stop, step = bounds
    size = -(-(stop - start) // step)
    want = (np.int64(start) + np.int64(step) * np.arange(size, dtype=np.int64)).astype(np.int32)
    for f in (lambda: jnp.arange(*bounds), jax.jit(lambda: jnp.arange(*bounds))):
        out = f()
        assert out.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(out), want)
