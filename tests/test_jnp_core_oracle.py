"""minijax.numpy core (creation, ufuncs, reductions, dtype helpers) against real JAX.

The same inputs go to both libraries; values, dtypes and weak types must
agree, and for a set of small programs so must the text of ``make_jaxpr``.

Run with the oracle environment (README.md, "More"):
    .venv-oracle/bin/python -m pytest tests/test_jnp_core_oracle.py
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
import jax.numpy as jjnp  # noqa: E402

import minijax as mj  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402
from minijax import dtypes  # noqa: E402

pytestmark = pytest.mark.oracle

BF16 = np.dtype(dtypes.bfloat16)
DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.float16, np.float32)]
DTYPES.append(BF16)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32)]
SHAPES = [(), (3,), (2, 3)]


# ---------------------------------------------------------------------------
# Inputs: NumPy arrays (strong), Python scalars (weak) and weak arrays


def host(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, lo: float = -6, hi: float = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else int(lo), int(hi) + 1, shape).astype(dtype)
    values = rng.uniform(lo, hi, shape).astype(np.float32)
    if shape and rng.random() < 0.3:
        values.flat[0] = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan])
    return values.astype(dtype)


class Weak:
    """A weakly typed array input (what ``jnp.asarray(2.5)`` gives)."""

    def __init__(self, value: float | int) -> None:
        self.value = value


def to_jax(x: Any) -> Any:
    if isinstance(x, Weak):
        return jjnp.asarray(x.value)
    return x


def to_mj(x: Any) -> Any:
    if isinstance(x, Weak):
        return mjnp.asarray(x.value)
    return x


def operand(draw: Any, dtype: np.dtype[Any] | None = None, shape: tuple[int, ...] | None = None) -> Any:
    """A NumPy array of a drawn dtype and shape, sometimes a Python scalar or weak array."""
    kind = draw(st.sampled_from(["array"] * 6 + ["int", "float", "weak_int", "weak_float"]))
    seed = draw(st.integers(0, 2**16))
    if kind == "int" and dtype is None:
        return draw(st.integers(-5, 5))
    if kind == "float" and dtype is None:
        return draw(st.sampled_from([0.5, -2.0, 3.25, 0.0]))
    if kind == "weak_int" and dtype is None:
        return Weak(draw(st.integers(-5, 5)))
    if kind == "weak_float" and dtype is None:
        return Weak(draw(st.sampled_from([1.5, -0.75])))
    dt = dtype if dtype is not None else draw(st.sampled_from(DTYPES))
    sh = shape if shape is not None else draw(st.sampled_from(SHAPES))
    return host(sh, dt, seed)


def run_both(fn_name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """(minijax result, JAX result) or (exception type, exception type)."""
    results = []
    for lib, conv in ((mjnp, to_mj), (jjnp, to_jax)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(getattr(lib, fn_name)(*[conv(a) for a in args], **kwargs))
            except Exception as e:  # noqa: BLE001 - the error types are compared
                results.append(type(e))
    return results[0], results[1]


def tolerance(dtype: np.dtype[Any]) -> float:
    return {np.dtype(np.float16): 2e-3, BF16: 1e-2}.get(np.dtype(dtype), 2e-6)


def same(ours: Any, theirs: Any, rtol: float | None = None) -> None:
    if isinstance(theirs, type):
        assert isinstance(ours, type), f"JAX raised {theirs.__name__}, minijax returned {ours!r}"
        assert issubclass(ours, theirs) or issubclass(theirs, ours), (ours, theirs)
        return
    assert not isinstance(ours, type), f"minijax raised {ours.__name__}, JAX returned {theirs!r}"
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            same(o, t, rtol)
        return
    got = (tuple(ours.shape), np.dtype(ours.dtype), bool(ours.weak_type))
    want = (tuple(theirs.shape), np.dtype(theirs.dtype), bool(theirs.weak_type))
    assert got == want, f"minijax {got} != JAX {want}"
    o, t = np.asarray(ours).astype(np.float64), np.asarray(theirs).astype(np.float64)
    tol = tolerance(want[1]) if rtol is None else rtol
    np.testing.assert_allclose(o, t, rtol=tol, atol=tol, equal_nan=True)


# ---------------------------------------------------------------------------
# Elementwise functions

UNARY_INEXACT = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "reciprocal", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg",
    "degrees", "radians", "rint", "sinc", "fabs",
]
UNARY_OTHER = [
    "negative", "positive", "abs", "absolute", "sign", "floor", "ceil", "trunc", "round", "square", "isnan",
    "isinf", "isfinite", "isposinf", "isneginf", "signbit", "logical_not", "bitwise_not", "invert", "real",
    "imag", "conj", "conjugate",
]
BINARY = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod",
    "power", "float_power", "arctan2", "hypot", "maximum", "minimum", "fmax", "fmin", "logaddexp",
    "logaddexp2", "copysign", "nextafter", "heaviside", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "left_shift", "right_shift", "divmod",
]  # fmt: skip
# Functions whose results near branch points/poles legitimately differ in the last bits.
LOOSE = {"tan": 1e-4, "arctanh": 1e-4, "arccosh": 1e-4, "logaddexp2": 1e-5, "sinc": 1e-5, "float_power": 1e-5,
         "power": 1e-5, "cbrt": 1e-5}


@pytest.mark.parametrize("name", UNARY_INEXACT + UNARY_OTHER)
@settings(max_examples=5)
@given(data=st.data())
def test_unary_matches_jax(name: str, data: Any) -> None:
    x = operand(data.draw)
    ours, theirs = run_both(name, x)
    rtol = LOOSE.get(name)
    if rtol is not None and not isinstance(theirs, type) and theirs.dtype in FLOATS[:2]:
        rtol = 2e-2
    same(ours, theirs, rtol)


@pytest.mark.parametrize("name", BINARY)
@settings(max_examples=5)
@given(data=st.data())
def test_binary_matches_jax(name: str, data: Any) -> None:
    shape = data.draw(st.sampled_from(SHAPES))
    x = operand(data.draw, shape=shape)
    y = operand(data.draw, shape=data.draw(st.sampled_from([shape, shape[1:], ()])))
    if name in ("left_shift", "right_shift", "power"):
        # Out-of-range shifts and huge integer powers are implementation-defined.
        y = np.abs(y) % 4 if isinstance(y, np.ndarray) and y.dtype.kind in "iu" else y
    ours, theirs = run_both(name, x, y)
    same(ours, theirs, LOOSE.get(name))


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, -1, -2, np.int32(3), 2.0, 0.5])
@pytest.mark.parametrize("dtype", ["int32", "int8", "float32", "float16", "bool"])
def test_power_static_exponents(exponent: Any, dtype: str) -> None:
    x = host((4,), np.dtype(dtype), 3, lo=-3, hi=3)
    same(*run_both("power", x, exponent))
    same(*run_both("power", 2, x if dtype != "bool" else x.astype(np.int32)))


@pytest.mark.parametrize("decimals", [0, 1, 2, -1, 50])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_round_decimals(decimals: int, dtype: str) -> None:
    x = host((5,), np.dtype(dtype), 7, lo=-200, hi=200)
    same(*run_both("round", x, decimals))
    same(*run_both("round", 2.345, decimals))


# ---------------------------------------------------------------------------
# Reductions


REDUCTIONS = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "all", "any", "argmax", "argmin",
              "nansum", "nanmean", "nanmax", "nanmin", "ptp"]


@pytest.mark.parametrize("name", REDUCTIONS)
@settings(max_examples=5)
@given(data=st.data())
def test_reduction_matches_jax(name: str, data: Any) -> None:
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(st.sampled_from([(3,), (2, 3), (2, 1, 3)]))
    x = host(shape, dtype, data.draw(st.integers(0, 2**16)), lo=-3, hi=3)
    if data.draw(st.booleans()):
        x = data.draw(st.sampled_from([1.5, 2, True]))
    axes: list[Any] = [None, 0, -1] + ([(0, 1), 1] if np.ndim(x) >= 2 else [])
    kwargs: dict[str, Any] = {"axis": data.draw(st.sampled_from(axes)) if np.ndim(x) else None}
    if name not in ("argmax", "argmin") or kwargs["axis"] is not None:
        kwargs["keepdims"] = data.draw(st.booleans())
    if name in ("var", "std"):
        kwargs["ddof"] = data.draw(st.sampled_from([0, 1]))
    ours, theirs = run_both(name, x, **kwargs)
    rtol = 1e-2 if name in ("var", "std", "mean", "nanmean", "prod") and np.dtype(dtype) in FLOATS[:2] else 2e-5
    same(ours, theirs, rtol)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("sum", {"dtype": "float16"}),
        ("sum", {"dtype": "int8"}),
        ("sum", {"promote_integers": False}),
        ("prod", {"promote_integers": False}),
        ("sum", {"initial": 2}),
        ("max", {"initial": 100}),
        ("min", {"initial": -100, "axis": 1}),
        ("sum", {"where": np.array([True, False, True])}),
        ("prod", {"where": np.array([[True], [False]])}),
        ("max", {"where": np.array([True, False, True]), "initial": -5}),
        ("mean", {"where": np.array([True, False, True])}),
        ("mean", {"dtype": "float16", "axis": 0}),
        ("var", {"correction": 1, "axis": 1}),
        ("std", {"ddof": 2, "keepdims": True}),
        ("var", {"where": np.array([True, False, True])}),
        ("all", {"where": np.array([True, False, True])}),
        ("argmax", {"keepdims": True}),
        ("argmin", {"axis": 1, "keepdims": True}),
        ("nansum", {"axis": 0}),
        ("nanmax", {"axis": 1, "keepdims": True}),
        ("ptp", {"axis": 0}),
        ("max", {"where": np.array([True, False, True])}),
        ("max", {"axis": 1, "out": np.zeros(2)}),
        ("sum", {"axis": 2}),
        ("sum", {"axis": (0, 0)}),
        ("max", {"initial": -np.inf}),
        ("min", {"initial": np.inf}),
        ("max", {"initial": np.nan}),
        ("max", {"initial": 5.7}),
        ("sum", {"initial": 2.5}),
        ("max", {"initial": -1}),
    ],
)
@pytest.mark.parametrize("dtype", ["int8", "float32", "bool", "uint8"])
def test_reduction_options_match_jax(name: str, kwargs: dict[str, Any], dtype: str) -> None:
    x = host((2, 3), np.dtype(dtype), 11, lo=-4, hi=4)
    same(*run_both(name, x, **kwargs), rtol=1e-5)


def test_reductions_of_empty_arrays_match_jax() -> None:
    for name in ("sum", "prod", "max", "argmax", "mean", "any", "all"):
        same(*run_both(name, np.zeros((0, 3), np.float32)))
        same(*run_both(name, np.zeros((0, 3), np.float32), axis=1))
    same(*run_both("max", np.zeros((0,), np.float32), initial=1.0))


@pytest.mark.parametrize("name", ["isclose", "allclose", "array_equal", "array_equiv"])
@settings(max_examples=8)
@given(data=st.data())
def test_comparisons_match_jax(name: str, data: Any) -> None:
    x = operand(data.draw, shape=(3,))
    y = data.draw(st.sampled_from(["same", "near", "other", "short", "row"]))
    if isinstance(x, Weak):
        x = x.value
    base = np.asarray(x)
    other = {
        "same": base,
        "near": base.astype(np.float32) * (1 + 1e-7) if base.dtype != np.bool_ else base,
        "other": host(base.shape, base.dtype, 3),
        "short": np.ones(2, np.float32),
        "row": np.ones((2, 3), np.float32),
    }[y]
    kwargs: dict[str, Any] = {}
    if name in ("isclose", "allclose", "array_equal") and data.draw(st.booleans()):
        kwargs["equal_nan"] = True
    ours, theirs = run_both(name, x, other, **kwargs)
    same(ours, theirs)


# ---------------------------------------------------------------------------
# Creation


CREATIONS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("array", (1,), {}),
    ("array", (2.5,), {}),
    ("array", (True,), {}),
    ("array", ([1, 2, 3],), {}),
    ("array", ([1, 2.5, True],), {}),
    ("array", ([[1, 2], [3, 4]],), {"dtype": "int8"}),
    ("array", ([],), {}),
    ("array", (np.float64(1.5),), {}),
    ("array", (np.arange(3, dtype=np.int64),), {}),
    ("array", (1,), {"ndmin": 3}),
    ("array", ([1.5, -2.5],), {"dtype": "int32"}),
    ("array", (2**31,), {}),
    ("array", (2**31,), {"dtype": "uint32"}),
    ("array", ([[1, 2], [3]],), {}),
    ("array", (None,), {}),
    ("array", ([1, 2],), {"order": "F"}),
    ("asarray", (3,), {}),
    ("asarray", ([1, 2],), {"dtype": "float16"}),
    ("asarray", (np.ones(3, np.float64),), {}),
    ("zeros", ((2, 3),), {}),
    ("zeros", (3,), {"dtype": "int8"}),
    ("zeros", ((),), {}),
    ("zeros", (np.int64(2),), {}),
    ("zeros", ((2, 2.5),), {}),
    ("zeros", (-1,), {}),
    ("ones", ([2, 1],), {"dtype": "bool"}),
    ("empty", ((2,),), {"dtype": "bfloat16"}),
    ("full", ((2, 3), 7), {}),
    ("full", ((2,), 1.5), {}),
    ("full", ((2,), True), {}),
    ("full", ((2, 3), np.arange(3, dtype=np.float32)), {}),
    ("full", ((2, 3), np.arange(3)), {"dtype": "int8"}),
    ("full", ((2,), [1, 2]), {}),
    ("zeros_like", (np.ones((2, 3), np.int8),), {}),
    ("zeros_like", (1.5,), {}),
    ("ones_like", (np.ones(3, np.float32),), {"dtype": "int32", "shape": (2,)}),
    ("full_like", (np.ones(2, np.int8), 1.7), {}),
    ("full_like", (np.ones(2, np.float32), 3), {"shape": (2, 3)}),
    ("empty_like", (np.ones(2, np.uint8),), {}),
    ("arange", (5,), {}),
    ("arange", (5.0,), {}),
    ("arange", (2, 10, 3), {}),
    ("arange", (0, 1, 0.25), {}),
    ("arange", (10, 2, -3), {}),
    ("arange", (3, 1), {}),
    ("arange", (0.5, 3), {"dtype": "int32"}),
    ("arange", (1, 2.5, 0.5), {"dtype": "int32"}),
    ("arange", (np.int8(5),), {}),
    ("arange", (np.int16(2), 7), {}),
    ("arange", (5,), {"dtype": "float16"}),
    ("arange", (-5,), {}),
    ("arange", (np.ones(2),), {}),
    ("arange", (True,), {}),
    ("linspace", (0, 1, 5), {}),
    ("linspace", (0, 1, 1), {}),
    ("linspace", (0, 1, 0), {}),
    ("linspace", (0, 10, 4), {"endpoint": False}),
    ("linspace", (0, 10, 4), {"dtype": "int32"}),
    ("linspace", (0, -7, 3), {"dtype": "int32"}),
    ("linspace", (0.0, 1.0, 3), {"dtype": "bfloat16"}),
    ("linspace", (0, 1, 5), {"retstep": True}),
    ("linspace", (np.ones(2, np.float32), 3, 3), {"axis": 1}),
    ("linspace", (np.zeros(2, np.float32), np.ones((3, 2), np.float32), 4), {"axis": -1}),
    ("linspace", (0, 1, -1), {}),
    ("eye", (3,), {}),
    ("eye", (2, 3), {"k": 1, "dtype": "int32"}),
    ("eye", (3,), {"k": -1, "dtype": "bool"}),
    ("eye", (2, 3, 5), {}),
    ("eye", (-1,), {}),
    ("identity", (2,), {"dtype": "int8"}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), CREATIONS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CREATIONS)])
def test_creation_matches_jax(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    same(*run_both(name, *args, **kwargs), rtol=1e-6)


def test_array_of_arrays_and_tracers_matches_jax() -> None:
    same(*run_both("array", [np.ones(2, np.float32), np.zeros(2, np.int32)]))
    same(mjnp.array([mjnp.ones(2), mjnp.zeros(2, dtype=mjnp.int8)]), jjnp.array([jjnp.ones(2), jjnp.zeros(2, jjnp.int8)]))
    same(mjnp.array([1, mjnp.int8(2)]), jjnp.array([1, jjnp.int8(2)]))
    same(mj.jit(lambda x, y: mjnp.array([[x, 1], [2, y]]))(1.5, 2), jax.jit(lambda x, y: jjnp.array([[x, 1], [2, y]]))(1.5, 2))


@pytest.mark.parametrize("name", ["float32", "int32", "int8", "uint8", "bool_", "float16", "bfloat16", "int16"])
@pytest.mark.parametrize("value", [1, 2.7, True, -3, [1, 2], 2**31])
def test_scalar_types_convert_like_jax(name: str, value: Any) -> None:
    ours, theirs = run_both(name, value)
    same(ours, theirs)
    assert np.dtype(getattr(mjnp, name)) == np.dtype(getattr(jjnp, name))
    assert getattr(mjnp, name) == getattr(np, name if name != "bfloat16" else "float32") or name == "bfloat16"


def test_dtype_helpers_match_jax() -> None:
    for a in ("int8", "uint8", "float16", "bfloat16", "int32", "bool"):
        for b in ("int16", "uint32", "float32", "bfloat16", "bool"):
            assert mjnp.promote_types(a, b) == jjnp.promote_types(a, b)
            assert mjnp.result_type(a, b) == jjnp.result_type(a, b)
            assert mjnp.can_cast(a, b) == jjnp.can_cast(a, b)
            assert mjnp.can_cast(a, b, "same_kind") == jjnp.can_cast(a, b, "same_kind")
    assert mjnp.result_type(1, 2.0) == jjnp.result_type(1, 2.0)
    assert mjnp.result_type(np.int8(1), 2.0) == jjnp.result_type(np.int8(1), 2.0)
    assert mjnp.issubdtype(mjnp.bfloat16, mjnp.floating) == jjnp.issubdtype(jjnp.bfloat16, jjnp.floating)
    assert str(mjnp.finfo(mjnp.bfloat16)) == str(jjnp.finfo(jjnp.bfloat16))
    assert mjnp.iinfo(mjnp.int8).max == jjnp.iinfo(jjnp.int8).max
    assert mjnp.finfo(mjnp.ones(2)).eps == jjnp.finfo(jjnp.ones(2)).eps
    for name in ("pi", "e", "inf", "euler_gamma", "newaxis"):
        assert getattr(mjnp, name) == getattr(jjnp, name)
    assert np.isnan(mjnp.nan)
    for x in (1, np.float32(1), mjnp.ones(()), [1], "a", np.array(1), np.ones(2), None):
        y = jjnp.ones(()) if isinstance(x, mj.Array) else x
        assert mjnp.isscalar(x) == jjnp.isscalar(y)
    with pytest.raises(TypeError):
        mjnp.can_cast(1, mjnp.int8)


# ---------------------------------------------------------------------------
# Errors: same exception types


ERRORS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("sin", ([1, 2],), {}),
    ("add", (1, [1]), {}),
    ("add", ((1,), 1), {}),
    ("sum", ([1, 2],), {}),
    ("sin", (None,), {}),
    ("add", (np.ones(2, np.float32), np.ones(3, np.float32)), {}),
    ("add", (2**40, np.ones(3, np.int32)), {}),
    ("sum", (np.ones(3),), {"axis": 1}),
    ("argmax", (np.ones(3),), {"axis": (0,)}),
    ("round", (np.ones(3, np.bool_),), {}),
    ("round", (np.ones(3, np.int32), -1), {}),
    ("power", (np.arange(3), -1), {}),
    ("subtract", (np.ones(2, np.bool_), np.ones(2, np.bool_)), {}),
    ("bitwise_and", (np.ones(2, np.float32), 1), {}),
    ("negative", (np.ones(2, np.bool_),), {}),
    ("var", (np.ones(3),), {"ddof": 1, "correction": 1}),
    ("max", (np.ones(3),), {"where": np.ones(3, np.bool_)}),
    ("max", (np.zeros((0,)),), {}),
    ("argmax", (np.zeros((0,)),), {}),
    ("allclose", ([1.0], [1.0]), {}),
    ("array_equiv", (np.ones(3), np.ones(2)), {}),
    ("sum", (np.ones(3),), {"out": np.ones(())}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors_match_jax(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    ours, theirs = run_both(name, *args, **kwargs)
    assert isinstance(theirs, type), "the case must be an error in JAX"
    same(ours, theirs)


def test_error_messages_match_jax() -> None:
    for call in (lambda lib: lib.sin([1, 2]), lambda lib: lib.add(1, (1,)), lambda lib: lib.sum(lib.ones(3), axis=1)):
        with pytest.raises(Exception) as ours:
            call(mjnp)
        with pytest.raises(Exception) as theirs:
            call(jjnp)
        assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------------------
# Jaxpr text


def f32(*shape: int) -> np.ndarray:
    return np.ones(shape, np.float32)


def i32(*shape: int) -> np.ndarray:
    return np.ones(shape, np.int32)


JAXPRS: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
    ("broadcast-add", lambda np_: lambda x, y: x + y, (f32(2, 3), f32(3))),
    ("rank-3-add", lambda np_: lambda x, y: x + y, (f32(2, 1), f32(4, 2, 3))),
    ("scalar-add", lambda np_: lambda x, y: x + y, (f32(), f32(4, 2, 3))),
    ("weak-literal", lambda np_: lambda x: x + 1, (f32(2, 3),)),
    ("int8-times-2", lambda np_: lambda x: x * 2, (np.ones(3, np.int8),)),
    ("int8-plus-f32", lambda np_: lambda x, y: x + y, (np.ones(3, np.int8), f32(3))),
    ("weak-arg", lambda np_: lambda x, y: x + y, (1.0, f32(2, 1))),
    ("weak-int-to-float", lambda np_: lambda x: np_.add(x, 2.5), (1,)),
    ("sin-int", lambda np_: np_.sin, (i32(3),)),
    ("sin-weak-int", lambda np_: np_.sin, (1,)),
    ("powers", lambda np_: lambda x: (x**2, x**2.0, x**-1, 2**x), (f32(3),)),
    ("int-power-array", lambda np_: lambda x, y: x**y, (i32(3), i32(3))),
    ("float-power-int-array", lambda np_: lambda x, y: np_.power(x, y), (f32(3), i32(3))),
    ("true-divide-int", lambda np_: lambda x: x / 2, (i32(3),)),
    ("floor-divide-int", lambda np_: lambda x: x // 3, (i32(3),)),
    ("floor-divide-float", lambda np_: np_.floor_divide, (f32(3), f32(3))),
    ("remainder", lambda np_: lambda x: x % 3.0, (f32(3),)),
    ("remainder-int", lambda np_: np_.remainder, (i32(3), i32(3))),
    ("fmod", lambda np_: np_.fmod, (i32(3), i32(3))),
    ("divmod", lambda np_: np_.divmod, (i32(3), 2)),
    ("unary-math", lambda np_: lambda x: (np_.log2(x), np_.log10(x), np_.deg2rad(x), np_.reciprocal(x)), (f32(3),)),
    ("rounding", lambda np_: lambda x: (np_.round(x), np_.round(x, 2), np_.rint(x), np_.trunc(x)), (f32(3),)),
    ("round-f16", lambda np_: lambda x: np_.round(x, 1), (np.ones(3, np.float16),)),
    ("int-rounding", lambda np_: lambda x: (np_.floor(x), np_.round(x), np_.trunc(x), np_.rint(x)), (i32(3),)),
    ("predicates", lambda np_: lambda x: (np_.isnan(x), np_.isinf(x), np_.isfinite(x), np_.isposinf(x)), (f32(3),)),
    ("int-predicates", lambda np_: lambda x: (np_.isinf(x), np_.isfinite(x), np_.signbit(x)), (i32(3),)),
    ("signbit", lambda np_: np_.signbit, (np.ones(3, np.float16),)),
    ("logical", lambda np_: lambda x, y: (np_.logical_and(x, y), np_.logical_xor(x, 1)), (f32(3), i32(3))),
    ("bool-arith", lambda np_: lambda x, y: (x + y, x * y, np_.maximum(x, y)), (np.ones(3, bool), np.ones(3, bool))),
    ("shifts", lambda np_: lambda x, y: (x << y, x >> y), (np.ones(3, np.uint8), np.ones(3, np.int8))),
    ("fmax", lambda np_: np_.fmax, (f32(3), f32(3))),
    ("copysign", lambda np_: np_.copysign, (f32(3), f32(3))),
    ("heaviside", lambda np_: np_.heaviside, (f32(3), f32(3))),
    ("hypot", lambda np_: np_.hypot, (f32(3), f32(3))),
    ("sum-keepdims", lambda np_: lambda x: np_.sum(x, axis=1, keepdims=True), (np.ones((2, 3), np.int8),)),
    ("sum-f16", lambda np_: np_.sum, (np.ones(3, np.float16),)),
    ("sum-where-initial", lambda np_: lambda x: np_.sum(x, where=x > 0, initial=2.0), (f32(2, 3),)),
    ("max-initial", lambda np_: lambda x: np_.max(x, axis=0, initial=2.0), (f32(2, 3),)),
    ("mean", lambda np_: lambda x: np_.mean(x, axis=1, keepdims=True), (i32(2, 3),)),
    ("mean-bf16", lambda np_: np_.mean, (np.ones(3, BF16),)),
    ("mean-where", lambda np_: lambda x: np_.mean(x, where=x > 0), (f32(2, 3),)),
    ("var", lambda np_: np_.var, (f32(2, 3),)),
    ("std-ddof-keepdims", lambda np_: lambda x: np_.std(x, ddof=1, keepdims=True), (f32(2, 3),)),
    ("var-f16", lambda np_: np_.var, (np.ones(3, np.float16),)),
    ("all-any", lambda np_: lambda x: (np_.all(x), np_.any(x, axis=0)), (f32(2, 3),)),
    ("argmax", lambda np_: lambda x: (np_.argmax(x), np_.argmin(x, axis=1, keepdims=True)), (f32(2, 3),)),
    ("nan-reductions", lambda np_: lambda x: (np_.nansum(x), np_.nanmax(x), np_.nanmean(x)), (f32(2, 3),)),
    ("ptp", lambda np_: np_.ptp, (f32(2, 3),)),
    ("isclose", lambda np_: np_.isclose, (i32(3), i32(3))),
    ("array-equal", lambda np_: lambda x, y: np_.array_equal(x, y, equal_nan=True), (f32(3), i32(3))),
    ("array-equiv", lambda np_: np_.array_equiv, (f32(3), f32(2, 3))),
    ("creation", lambda np_: lambda: (np_.zeros((2, 3)), np_.ones(3, np_.int8), np_.zeros(())), ()),
    ("full", lambda np_: lambda x, y: (np_.full((2, 3), x), np_.full((2, 3), y, np_.int32)), (1.0, f32(3))),
    ("like", lambda np_: lambda x: (np_.zeros_like(x), np_.full_like(x, 2), np_.ones_like(x, shape=(2,))), (f32(3),)),
    ("arange", lambda np_: lambda: (np_.arange(5), np_.arange(1, 5, 2), np_.arange(0, 1, 0.25)), ()),
    ("linspace", lambda np_: lambda: np_.linspace(0, 1, 5), ()),
    ("linspace-int-retstep", lambda np_: lambda: np_.linspace(0, 10, 4, endpoint=False, dtype=int, retstep=True), ()),
    ("linspace-axis", lambda np_: lambda x, y: np_.linspace(x, y, 3, axis=-1), (f32(2), f32(3, 2))),
    ("eye", lambda np_: lambda: (np_.eye(3), np_.eye(3, 4, k=1, dtype=int)), ()),
    ("eye-traced-k", lambda np_: lambda k: np_.eye(2, k=k), (1,)),
    ("array-of-tracers", lambda np_: lambda x, y: np_.array([x, y]), (1.0, 2.0)),
    ("nested-array", lambda np_: lambda x, y: np_.array([x, y, [3, 4]]), (f32(2), i32(2))),
    ("array-ndmin", lambda np_: lambda x: np_.array(x, ndmin=2), (f32(3),)),
    ("asarray", lambda np_: lambda x: (np_.asarray(x), np_.asarray(x, np_.int32)), (f32(),)),
    ("scalar-type-call", lambda np_: lambda x: np_.int8(x), (1.0,)),
    ("astype", lambda np_: lambda x: (x.astype(np_.float32), x.astype("int32")), (1.0,)),
    ("methods", lambda np_: lambda x: (x.sum(0), x.mean(axis=1), x.max(), x.T.shape and x.copy()), (f32(2, 3),)),
    ("python-round", lambda np_: lambda x: round(x), (f32(2),)),
]


def _jaxpr_args(args: tuple[Any, ...], lib: Any) -> tuple[Any, ...]:
    return tuple(lib.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize(("name", "make", "args"), JAXPRS, ids=[j[0] for j in JAXPRS])
def test_jaxpr_text_matches_jax(name: str, make: Callable[[Any], Callable[..., Any]], args: tuple[Any, ...]) -> None:
    ours = str(mj.make_jaxpr(make(mjnp))(*_jaxpr_args(args, mjnp)))
    theirs = str(jax.make_jaxpr(make(jjnp))(*_jaxpr_args(args, jjnp)))
    assert ours == theirs
