"""Elementwise primitives: every primitive against its spec, eager against jit, errors, jaxpr text.

The reference for each primitive is the NumPy expression in its section of
``spec/primitives/elementwise.md`` (evaluated with the spec's reference
helpers), so the spec and the NumPy backend are checked against each other.
``CASES`` (one entry per primitive: operand kinds, accepted dtypes, params)
is shared with ``test_elementwise_oracle.py``.
"""

from __future__ import annotations

import contextlib
import functools
import math
import pathlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from minijax_numpy.table import IMPLS, load_all

import minijax as jax
from minijax import lax
from minijax.config import enable_x64
from minijax.jaxpr import eval_jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.primitives import elementwise as ew

load_all()  # the NumPy implementations, called directly below, whichever backend is active

# The rule XLA's results must satisfy against the NumPy backend's (spec/tolerances.md),
# for this file's runs on xla. (Imported here: importing a module of @given tests
# from inside a @given test trips hypothesis's nested-given check.)
try:
    import jaxlib  # noqa: F401
except ImportError:
    check_xla_result = None
else:
    from test_xla_elementwise import check_result as check_xla_result

SPEC_PATH = pathlib.Path(__file__).resolve().parent.parent / "spec" / "primitives" / "elementwise.md"
SPEC_TEXT = SPEC_PATH.read_text()

BF16 = np.dtype(ml_dtypes.bfloat16)
BOOL = [np.dtype(np.bool_)]
INT32 = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)]
INT64 = [np.dtype(np.int64), np.dtype(np.uint64)]
FLOAT32 = [np.dtype(np.float16), BF16, np.dtype(np.float32)]
FLOAT64 = [np.dtype(np.float64)]
SIGNED = [d for d in INT32 + INT64 if d.kind == "i"]
ALL_DTYPES = BOOL + INT32 + INT64 + FLOAT32 + FLOAT64


def is_float(dtype: Any) -> bool:
    return np.dtype(dtype) in FLOAT32 + FLOAT64


def needs_x64(*dts: Any) -> bool:
    return any(np.dtype(d) in INT64 + FLOAT64 for d in dts)


# ---------------------------------------------------------------------------
# The spec: sections, NumPy expressions, reference helpers


def spec_sections() -> dict[str, str]:
    parts = re.split(r"^## +([A-Za-z0-9_]+) *$", SPEC_TEXT, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


SECTIONS = spec_sections()


def spec_expression(name: str) -> str:
    match = re.search(r"^NumPy: `(.+)`$", SECTIONS[name], flags=re.M)
    assert match, f"spec section {name} has no NumPy expression"
    return match.group(1)


def reference_namespace() -> dict[str, Any]:
    block = re.search(r"### Reference helpers\s+```python\n(.*?)```", SPEC_TEXT, flags=re.S)
    assert block, "spec lacks its reference helpers"
    namespace: dict[str, Any] = {}
    exec(block.group(1), namespace)
    return namespace


HELPERS = reference_namespace()


def spec_reference(name: str, **variables: Any) -> np.ndarray:
    with np.errstate(all="ignore"):
        # One namespace: lambdas in the expressions see the operands as globals.
        return np.asarray(eval(spec_expression(name), {**HELPERS, "np": np, "math": math, **variables}))


# ---------------------------------------------------------------------------
# One case per primitive


@dataclass
class Case:
    name: str  # the primitive's name
    call: Callable[..., Any]  # the lax wrapper, called as call(*operands, **params)
    kind: str  # "unary", "binary", "select_n", "clamp", "convert", "bitcast"
    dtypes: list[np.dtype]  # the operand dtypes the primitive accepts
    exact: bool = True  # bit-exact against the spec, or to a few ulps
    params: Callable[[Any, np.dtype], dict[str, Any]] = lambda draw, dtype: {}
    domain: tuple[tuple[float, float], ...] = ()  # extra float ranges worth sampling (e.g. [-1, 1])
    shift: bool = False  # y is a shift amount: sample around the bit width
    reject: list[np.dtype] = field(default_factory=list)  # dtypes rejected with a TypeError


def _rejected(accepted: list[np.dtype]) -> list[np.dtype]:
    return [d for d in BOOL + INT32 + FLOAT32 if d not in accepted]


NUMERIC = INT32 + INT64 + FLOAT32 + FLOAT64
FLOATS = FLOAT32 + FLOAT64
INTS = INT32 + INT64
INT_OR_BOOL = BOOL + INTS
APPROX = {
    "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "rsqrt", "cbrt", "erf", "erfc", "erf_inv",
    "lgamma", "digamma", "pow", "atan2",
}  # fmt: skip
UNIT_DOMAIN = {"asin", "acos", "atanh", "erf_inv"}
UNIT_RANGES = ((-1.2, 1.2), (0.999, 1.0), (-1.0, -0.999))


def _unary(name: str, dtypes: list[np.dtype], call: Callable[..., Any] | None = None, **kw: Any) -> Case:
    return Case(name, call or getattr(lax, name), "unary", dtypes, exact=name not in APPROX,
                domain=UNIT_RANGES if name in UNIT_DOMAIN else ((-30.0, 30.0),), reject=_rejected(dtypes), **kw)  # fmt: skip


def _binary(name: str, dtypes: list[np.dtype], call: Callable[..., Any] | None = None, **kw: Any) -> Case:
    return Case(name, call or getattr(lax, name), "binary", dtypes, exact=name not in APPROX,
                reject=_rejected(dtypes), **kw)  # fmt: skip


def _round_params(draw: Any, dtype: np.dtype) -> dict[str, Any]:
    return {"rounding_method": draw(st.sampled_from([0, 1]))}


def _integer_pow_params(draw: Any, dtype: np.dtype) -> dict[str, Any]:
    return {"y": draw(st.integers(-6 if is_float(dtype) else 0, 13))}


def _reduce_precision_params(draw: Any, dtype: np.dtype) -> dict[str, Any]:
    return {"exponent_bits": draw(st.integers(1, 11)), "mantissa_bits": draw(st.integers(0, 30))}


CASES: dict[str, Case] = {
    c.name: c
    for c in [
        _unary("neg", NUMERIC), _unary("sign", NUMERIC), _unary("abs", FLOATS + SIGNED), _unary("square", NUMERIC),
        _unary("floor", FLOATS), _unary("ceil", FLOATS), _unary("is_finite", FLOATS),
        _unary("round", FLOATS, params=_round_params),
        _unary("integer_pow", NUMERIC, params=_integer_pow_params),
        _unary("reduce_precision", FLOATS, params=_reduce_precision_params),
        *(_unary(n, FLOATS) for n in (
            "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos",
            "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt",
            "erf", "erfc", "erf_inv", "lgamma", "digamma")),
        _unary("not", INT_OR_BOOL, lax.bitwise_not), _unary("population_count", INTS), _unary("clz", INTS),
        _unary("copy", ALL_DTYPES, lambda x: lax.copy_p.bind(x)),
        *(_binary(n, NUMERIC) for n in ("add", "sub", "mul", "div", "rem")),
        _binary("pow", FLOATS), _binary("max", ALL_DTYPES), _binary("min", ALL_DTYPES),
        _binary("atan2", FLOATS), _binary("nextafter", FLOATS),
        _binary("and", INT_OR_BOOL, lax.bitwise_and), _binary("or", INT_OR_BOOL, lax.bitwise_or),
        _binary("xor", INT_OR_BOOL, lax.bitwise_xor),
        *(_binary(n, INTS, shift=True) for n in ("shift_left", "shift_right_logical", "shift_right_arithmetic")),
        *(_binary(n, ALL_DTYPES) for n in ("eq", "ne", "lt", "le", "gt", "ge")),
        Case("select_n", lax.select_n, "select_n", ALL_DTYPES),
        Case("clamp", lax.clamp, "clamp", ALL_DTYPES),
        Case("convert_element_type", lax.convert_element_type, "convert", ALL_DTYPES),
        Case("bitcast_convert_type", lax.bitcast_convert_type, "bitcast", ALL_DTYPES),
    ]
}  # fmt: skip


def elementwise_primitives() -> list[str]:
    return sorted(p.name for p in vars(ew).values() if isinstance(p, jax.core.Primitive))


def test_every_elementwise_primitive_has_a_case_and_a_spec_section():
    assert sorted(CASES) == elementwise_primitives()
    assert sorted(SECTIONS) == elementwise_primitives()


# ---------------------------------------------------------------------------
# Operands

SHAPES = [(), (3,), (2, 3)]


def float_edges(dtype: np.dtype) -> list[float]:
    info = ml_dtypes.finfo(dtype)
    return [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5,
            float(info.max), -float(info.max), float(info.tiny), float(info.smallest_subnormal)]  # fmt: skip


def int_edges(dtype: np.dtype) -> list[int]:
    info = np.iinfo(dtype)
    return sorted({int(info.min), int(info.max), 0, 1, 2, int(info.max) - 1} | ({-1, -2} if dtype.kind == "i" else set()))


@functools.cache  # building strategies is slow; each is built once
def elements(dtype: np.dtype, domain: tuple[tuple[float, float], ...] = (), shift: bool = False) -> st.SearchStrategy[Any]:
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        options = [st.sampled_from(int_edges(dtype)), st.integers(int(info.min), int(info.max))]
        if shift:
            options.append(st.integers(-2 if dtype.kind == "i" else 0, 8 * dtype.itemsize + 2))
        return st.one_of(options)
    options = [st.sampled_from(float_edges(dtype)), st.floats(-100, 100), st.floats(allow_nan=True, allow_infinity=True)]
    options.extend(st.floats(lo, hi) for lo, hi in domain)
    return st.one_of(options)


@st.composite
def arrays(draw: Any, dtype: np.dtype, shape: tuple[int, ...], domain: Any = (), shift: bool = False) -> np.ndarray:
    n = math.prod(shape)
    values = draw(st.lists(elements(dtype, domain, shift), min_size=n, max_size=n))
    with np.errstate(all="ignore"):  # float64 values round (or overflow) to the dtype
        host = np.array(values, dtype=np.float64 if is_float(dtype) else dtype).astype(dtype)
    return host.reshape(shape)


@st.composite
def broadcast_partner(draw: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape lax broadcasts against ``shape``: itself, a scalar, or ``shape`` with some dims 1."""
    choice = draw(st.sampled_from(["same", "scalar", "ones"]))
    if choice == "scalar" or not shape:
        return () if choice == "scalar" else shape
    if choice == "same":
        return shape
    return tuple(1 if draw(st.booleans()) else d for d in shape)


@dataclass
class Drawn:
    operands: list[np.ndarray]
    params: dict[str, Any]
    variables: dict[str, Any]  # names the spec's NumPy expression uses
    x64: bool


@st.composite
def case_inputs(draw: Any, case: Case) -> Drawn:
    dtype = draw(st.sampled_from(case.dtypes))
    shape = draw(st.sampled_from(SHAPES))
    params = case.params(draw, dtype)
    if case.kind == "unary":
        x = draw(arrays(dtype, shape, case.domain))
        return Drawn([x], params, {"x": x, **params}, needs_x64(dtype))
    if case.kind == "binary":
        x = draw(arrays(dtype, shape, case.domain))
        y_dtype = dtype
        if case.name == "pow" and draw(st.booleans()):
            y_dtype = draw(st.sampled_from([np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.uint8)]))
        y = draw(arrays(y_dtype, draw(broadcast_partner(shape)), case.domain, case.shift))
        if draw(st.booleans()):  # the broadcast partner may come first
            x, y = (y, x) if case.name != "pow" else (x, y)
        return Drawn([x, y], params, {"x": x, "y": y}, needs_x64(dtype))
    if case.kind == "select_n":
        which_dtype = draw(st.sampled_from([np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.uint8, np.uint32)]))
        n = draw(st.integers(1, 2 if which_dtype == np.bool_ else 4))
        which_shape = draw(st.sampled_from([(), shape]))
        if which_dtype == np.bool_:
            which = draw(arrays(which_dtype, which_shape))
        else:
            low = -2 if which_dtype.kind == "i" else 0
            which = np.array(draw(st.lists(st.integers(low, n + 2), min_size=math.prod(which_shape),
                                           max_size=math.prod(which_shape))), which_dtype).reshape(which_shape)  # fmt: skip
        cases = [draw(arrays(dtype, shape)) for _ in range(n)]
        return Drawn([which, *cases], {}, {"which": which, "cases": cases}, needs_x64(dtype))
    if case.kind == "clamp":
        lo = draw(arrays(dtype, draw(st.sampled_from([(), shape]))))
        hi = draw(arrays(dtype, draw(st.sampled_from([(), shape]))))
        x = draw(arrays(dtype, shape))
        return Drawn([lo, x, hi], {}, {"lo": lo, "x": x, "hi": hi}, needs_x64(dtype))
    if case.kind == "convert":
        new = draw(st.sampled_from(ALL_DTYPES))
        x = draw(arrays(dtype, shape))
        return Drawn([x], {"new_dtype": new}, {"x": x, "new_dtype": new}, needs_x64(dtype, new))
    # bitcast: bool only to bool; a wider new dtype consumes a minor dimension of the ratio's size
    new = BOOL[0] if dtype == np.bool_ else draw(st.sampled_from([d for d in ALL_DTYPES if d != np.bool_]))
    if new.itemsize > dtype.itemsize:
        shape = (*shape, new.itemsize // dtype.itemsize)
    x = draw(arrays(dtype, shape))
    return Drawn([x], {"new_dtype": new}, {"x": x, "new_dtype": new}, needs_x64(dtype, new))


# ---------------------------------------------------------------------------
# Comparing results


def ulp_tolerance(dtype: np.dtype, name: str) -> tuple[float, float]:
    """(rtol, atol) for the approximate primitives: a few ulps, more for the special functions."""
    eps = float(ml_dtypes.finfo(dtype).eps)
    if dtype == np.float64:
        return 1e-12, 1e-13
    special = name in ("lgamma", "digamma", "erf_inv")
    return 2 * eps, (1e-13 if special else 0.0)


def assert_same_values(got: np.ndarray, want: np.ndarray, *, exact: bool, name: str) -> None:
    assert got.shape == want.shape
    if not is_float(got.dtype):
        np.testing.assert_array_equal(got, want)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    if exact:  # same bits, signed zeros included (NaN payloads may differ)
        u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
        keep = ~np.isnan(g)
        np.testing.assert_array_equal(got.view(u)[keep], want.view(u)[keep])
        return
    rtol, atol = ulp_tolerance(got.dtype, name)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


def assert_bitwise_equal(a: Any, b: Any) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


@contextlib.contextmanager
def x64_if(flag: bool) -> Iterator[None]:
    if flag:
        with enable_x64(True):
            yield
    else:
        yield


def implementation(name: str, params: dict[str, Any]) -> Callable[[list[np.ndarray]], np.ndarray]:
    """The NumPy backend's implementation of ``name``, called directly with the primitive's params."""
    params = dict(params)
    if name == "convert_element_type":
        params.update(weak_type=False, sharding=None)
    elif name == "round":
        params["rounding_method"] = ew.RoundingMethod(params["rounding_method"])

    def run(operands: list[np.ndarray]) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(IMPLS[name](*operands, **params))

    return run


def canonical(operands: list[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(jax.device_put(o)) for o in operands]


def raw_implementation_result(name: str, drawn: Drawn) -> np.ndarray:
    """The NumPy implementation called directly, on canonical operands, with the primitive's params."""
    return implementation(name, drawn.params)(canonical(drawn.operands))


def assert_matches_the_spec(
    backend: str | None, name: str, operands: list[np.ndarray], params: dict[str, Any], got: np.ndarray, want: np.ndarray
) -> None:
    """``got`` (the active backend's result) is what the spec says.

    The NumPy backend must give the spec's NumPy expression (to a few ulps for
    the approximate primitives). XLA evaluates its own approximations and
    flushes subnormals: its result must agree with the NumPy backend's as
    spec/tolerances.md states (the rule test_xla_elementwise.py checks).
    """
    if backend != "xla":
        if want.dtype != got.dtype:  # a float64 from `math` stands for its value rounded to the dtype
            assert is_float(got.dtype)
            want = want.astype(got.dtype)
        assert_same_values(got, want, exact=CASES[name].exact, name=name)
        return
    assert check_xla_result is not None, "the xla runs need jaxlib"
    check_xla_result(name, canonical(operands), params, got, implementation(name, params))


# ---------------------------------------------------------------------------
# The property: eager == jit == the spec's NumPy expression, for every primitive


@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_primitive_matches_jit_and_its_spec(name, data, backend_name):
    case = CASES[name]
    drawn = data.draw(case_inputs(case))
    with x64_if(drawn.x64):
        eager = case.call(*drawn.operands, **drawn.params)
        jitted = jax.jit(lambda *xs: case.call(*xs, **drawn.params))(*drawn.operands)
        want = spec_reference(name, **drawn.variables)
        raw = raw_implementation_result(name, drawn)
        assert_bitwise_equal(eager, jitted)
        # The backend casts an implementation's result to the aval's dtype; none may need it.
        assert raw.dtype == eager.dtype and raw.shape == eager.shape
        got = np.asarray(eager)
        assert got.dtype == eager.dtype and got.shape == eager.shape
        assert_matches_the_spec(backend_name, name, drawn.operands, drawn.params, got, want)


def edge_values(dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return np.array([False, True])
    if dtype.kind in "iu":
        return np.array(int_edges(dtype), dtype)
    with np.errstate(all="ignore"):
        return np.array(float_edges(dtype), np.float64).astype(dtype)


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.kind in ("unary", "binary")))
def test_edge_values_all_pairs(name, backend_name):
    # Hypothesis rarely pairs two edge values (say -0.0 with 0.0); here every pair meets.
    case = CASES[name]
    for dtype in case.dtypes:
        edges = edge_values(dtype)
        if case.kind == "unary":
            operands = [edges]
        else:
            operands = [np.repeat(edges, len(edges)), np.tile(edges, len(edges))]
        params_list = [{}]
        if name == "round":
            params_list = [{"rounding_method": 0}, {"rounding_method": 1}]
        elif name == "integer_pow":
            params_list = [{"y": y} for y in ((-3, -1, 0, 1, 2, 3, 7) if is_float(dtype) else (0, 1, 2, 3, 7))]
        elif name == "reduce_precision":
            params_list = [{"exponent_bits": e, "mantissa_bits": m} for e, m in ((5, 10), (8, 7), (1, 0), (11, 52))]
        for params in params_list:
            with x64_if(needs_x64(dtype)):
                got = np.asarray(case.call(*operands, **params))
                variables = dict(zip("xy", operands), **params)
                want = spec_reference(name, **variables)
                assert_matches_the_spec(backend_name, name, operands, params, got, want)


# ---------------------------------------------------------------------------
# Errors: wrong dtype class, mismatched dtypes, shapes that do not broadcast


def _operands_of(case: Case, dtype: np.dtype, shape: tuple[int, ...] = (3,)) -> list[np.ndarray]:
    x = np.ones(shape, dtype)
    return [x] if case.kind == "unary" else [x, x]


def _params_of(case: Case) -> dict[str, Any]:
    return {"round": {}, "integer_pow": {"y": 2}, "reduce_precision": {"exponent_bits": 5, "mantissa_bits": 10}}.get(
        case.name, {}
    )


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.reject))
def test_rejected_dtype_class_raises_type_error_naming_the_primitive(name):
    case = CASES[name]
    for dtype in case.reject:
        with pytest.raises(TypeError, match=rf"^{name} does not accept dtype {dtype.name}"):
            case.call(*_operands_of(case, dtype), **_params_of(case))
        with pytest.raises(TypeError, match=rf"{name} does not accept dtype"):  # the same under tracing
            jax.make_jaxpr(lambda *xs: case.call(*xs, **_params_of(case)))(*_operands_of(case, dtype))


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.kind == "binary"))
def test_binary_ops_reject_mismatched_dtypes_and_shapes(name):
    case = CASES[name]
    accepted = [d for d in case.dtypes if d in BOOL + INT32 + FLOAT32]
    a, b = accepted[0], accepted[-1]
    with pytest.raises(TypeError, match=name):
        case.call(np.ones(3, a), np.ones(3, b))
    with pytest.raises(TypeError, match=rf"{name} got incompatible shapes for broadcasting: \(3,\), \(2,\)"):
        case.call(np.ones(3, a), np.ones(2, a))
    with pytest.raises(TypeError, match=rf"{name}: arrays must have the same number of dimensions"):
        case.call(np.ones((2, 3), a), np.ones(3, a))


def test_same_dtype_error_matches_jax_wording():
    with pytest.raises(TypeError) as info:
        lax.add(np.ones(3, np.float32), 2)  # a Python int is a weak int32: no promotion in lax
    assert str(info.value) == (
        "lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.add is a "
        "similar function that does automatic type promotion on inputs)."
    )
    with pytest.raises(TypeError, match=r"^sin does not accept dtype int32\. Accepted dtypes are subtypes of floating, complexfloating\.$"):
        lax.sin(np.ones(3, np.int32))
    with pytest.raises(TypeError, match=r"^and does not accept dtype float32 at position 0\."):
        lax.bitwise_and(np.ones(3, np.float32), np.ones(3, np.float32))


def test_param_and_special_rule_errors():
    f32 = np.ones(3, np.float32)
    with pytest.raises(TypeError, match=r"Integers cannot be raised to negative powers, got integer_pow\(int32\[3\], -1\)"):
        lax.integer_pow(np.ones(3, np.int32), -1)
    with pytest.raises(TypeError, match="integer_pow"):
        lax.integer_pow(f32, 2.5)
    with pytest.raises(ValueError, match="exponent_bits must be positive; got 0"):
        lax.reduce_precision(f32, 0, 10)
    with pytest.raises(ValueError, match="mantissa_bits must be non-negative; got -1"):
        lax.reduce_precision(f32, 5, -1)
    with pytest.raises(ValueError, match="is not a valid RoundingMethod"):
        lax.round(f32, 2)
    with pytest.raises(NotImplementedError, match="accuracy"):
        lax.exp(f32, accuracy=1)
    with pytest.raises(TypeError, match="two inexact dtypes must match, but got float16 and float32"):
        lax.pow(np.ones(3, np.float16), f32)
    with pytest.raises(TypeError, match="pow does not accept dtype int32 at position 0"):
        lax.pow(np.ones(3, np.int32), np.ones(3, np.int32))
    with pytest.raises(TypeError, match="bitcast_convert_type does not support bool"):
        lax.bitcast_convert_type(np.ones(3, np.bool_), np.int8)
    with pytest.raises(ValueError, match=r"shape \(3, 4\) from int16 of size 16 bits to float32"):
        lax.bitcast_convert_type(np.ones((3, 4), np.int16), np.float32)


def test_select_n_and_clamp_errors():
    f = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="at least one case"):
        lax.select_n(np.ones(3, bool))
    with pytest.raises(TypeError, match="select `which` must be boolean or integer type, got float32"):
        lax.select_n(f, f, f)
    with pytest.raises(TypeError, match="select `which` must be scalar or have the same shape as cases"):
        lax.select_n(np.ones(2, bool), f, f)
    with pytest.raises(TypeError, match="select with boolean `which` cannot have > 2 cases"):
        lax.select_n(np.ones(3, bool), f, f, f)
    with pytest.raises(TypeError, match=r"select cases must have the same shapes, got \[\(3,\), \(1,\)\]"):
        lax.select_n(True, f, np.ones(1, np.float32))
    with pytest.raises(TypeError, match="lax.select requires arguments to have the same dtypes, got float32, int32"):
        lax.select_n(True, f, np.ones(3, np.int32))
    with pytest.raises(TypeError, match=r"clamp requires min.shape == operand.shape or min.shape == \(\)"):
        lax.clamp(np.ones(2, np.float32), f, 1.0)
    with pytest.raises(TypeError, match="lax.clamp requires arguments to have the same dtypes, got int32, float32, float32"):
        lax.clamp(0, f, 1.0)


# ---------------------------------------------------------------------------
# Weak types and Python scalars


def test_weak_type_propagation():
    f32 = np.ones(3, np.float32)
    assert lax.add(2.0, 3.0).weak_type and lax.add(2.0, 3.0).dtype == np.float32
    assert not lax.add(f32, 2.0).weak_type
    assert lax.eq(2.0, 2.0).weak_type and lax.eq(2.0, 2.0).dtype == np.bool_  # as JAX: weak bool
    assert not lax.eq(f32, 2.0).weak_type
    assert lax.is_finite(2.0).weak_type and lax.neg(2).weak_type and lax.population_count(3).weak_type
    assert not lax.bitwise_not(True).weak_type  # bool is never weak
    assert lax.pow(2.0, 2).weak_type and not lax.pow(2.0, np.int32(2)).weak_type
    assert lax.select_n(True, 1.0, 2.0).weak_type and not lax.select_n(True, np.float32(1), 2.0).weak_type
    assert lax.clamp(0.0, 2.0, 1.0).weak_type and not lax.clamp(np.float32(0), 2.0, 1.0).weak_type
    assert not lax.convert_element_type(2.0, np.float32).weak_type
    assert not lax.bitcast_convert_type(2.0, np.int32).weak_type


def test_convert_element_type_to_the_same_dtype_is_no_operation():
    x = jax.device_put(np.ones(3, np.float32))
    assert lax.convert_element_type(x, np.float32) is x
    closed = jax.make_jaxpr(lambda x: lax.convert_element_type(x, np.float32))(x)
    assert len(closed.jaxpr.eqns) == 0
    closed = jax.make_jaxpr(lambda x: lax.convert_element_type(x, np.float32))(2.0)  # weak: converts
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["convert_element_type"]


# ---------------------------------------------------------------------------
# jaxpr text (the strings are what JAX 0.10.2 prints)

F32_3 = np.ones(3, np.float32)


@pytest.mark.parametrize(
    ("fun", "args", "text"),
    [
        (lambda x: lax.exp(x), (F32_3,), "{ lambda ; a:f32[3]. let b:f32[3] = exp a in (b,) }"),
        (lambda x: lax.round(x, 1), (F32_3,), "{ lambda ; a:f32[3]. let b:f32[3] = round[rounding_method=1] a in (b,) }"),
        (lambda x: lax.integer_pow(x, 3), (F32_3,), "{ lambda ; a:f32[3]. let b:f32[3] = integer_pow[y=3] a in (b,) }"),
        (lambda x: lax.clamp(1.0, x, 2.0), (F32_3,), "{ lambda ; a:f32[3]. let b:f32[3] = clamp 1.0:f32[] a 2.0:f32[] in (b,) }"),
        (lambda x: lax.bitwise_not(x), (np.ones(3, np.int8),), "{ lambda ; a:i8[3]. let b:i8[3] = not a in (b,) }"),
        (lambda x: lax.select_n(True, x, x), (F32_3,), "{ lambda ; a:f32[3]. let b:f32[3] = select_n True:bool[] a a in (b,) }"),
        (
            lambda x: lax.convert_element_type(x, np.int32),
            (F32_3,),
            "{ lambda ; a:f32[3]. let\n    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a\n  in (b,) }",
        ),
        (
            lambda x: lax.bitcast_convert_type(x, np.uint16),
            (np.float32(1.0),),
            "{ lambda ; a:f32[]. let\n    b:u16[2] = bitcast_convert_type[new_dtype=uint16] a\n  in (b,) }",
        ),
        (
            lambda x: lax.reduce_precision(x, 5, 10),
            (F32_3,),
            "{ lambda ; a:f32[3]. let\n    b:f32[3] = reduce_precision[exponent_bits=5 mantissa_bits=10] a\n  in (b,) }",
        ),
    ],
)
def test_jaxpr_text(fun, args, text):
    assert str(jax.make_jaxpr(fun)(*args)) == text


# ---------------------------------------------------------------------------
# The spec's examples run


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_spec_example_runs(name):
    blocks = re.findall(r"```python\n(.*?)```", SECTIONS[name], flags=re.S)
    assert len(blocks) == 1, f"{name}: expected one example"
    exec(blocks[0], {})


# ---------------------------------------------------------------------------
# Printed jaxprs parse back to the same equation, params included


def _program_for(case: Case) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    f32 = np.array([0.5, -1.5, 2.0], np.float32)
    i32 = np.array([3, -4, 0], np.int32)
    if case.kind in ("unary", "binary"):
        x = f32 if np.dtype(np.float32) in case.dtypes else i32
        params = {"round": {"rounding_method": 1}, "integer_pow": {"y": 3},
                  "reduce_precision": {"exponent_bits": 5, "mantissa_bits": 10}}.get(case.name, {})  # fmt: skip
        args = (x,) if case.kind == "unary" else (x, x)
        return (lambda *xs: case.call(*xs, **params)), args
    return {
        "select_n": (lambda w, a, b: lax.select_n(w, a, b), (np.array([True, False, True]), f32, -f32)),
        "clamp": (lambda x: lax.clamp(0.0, x, 1.0), (f32,)),
        "convert_element_type": (lambda x: lax.convert_element_type(x, np.int8), (f32,)),
        "bitcast_convert_type": (lambda x: lax.bitcast_convert_type(x, np.uint16), (f32,)),
    }[case.name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_jaxpr_text_parses_back(name):
    fun, args = _program_for(CASES[name])
    closed = jax.make_jaxpr(fun)(*args)
    parsed = parse_jaxpr(str(closed))
    jaxpr = getattr(parsed, "jaxpr", parsed)
    assert str(parsed) == str(closed)
    assert [e.params for e in jaxpr.eqns] == [e.params for e in closed.jaxpr.eqns]
    for got, want in zip(eval_jaxpr(jaxpr, [], *args), eval_jaxpr(closed.jaxpr, closed.consts, *args)):
        assert_bitwise_equal(got, want)


@pytest.mark.parametrize(("value", "dtype"), [(2**31, np.int32), (2**63, np.int32), (-(2**40) - 3, np.int16), (2**100, np.float32)])
def test_convert_element_type_of_a_python_int_converts_it_through_numpy(value: int, dtype: Any) -> None:
    # JAX converts a Python int on the host (wrapping, or to a float it fits), not as a weak
    # int32 first: lax.convert_element_type(2**31, int32) is -2**31, not an OverflowError.
    want = np.asarray(value).astype(dtype)
    for f in (lambda: lax.convert_element_type(value, dtype), jax.jit(lambda: lax.convert_element_type(value, dtype))):
        out = f()
        assert out.dtype == want.dtype and not out.weak_type
        np.testing.assert_array_equal(np.asarray(out), want)
    if np.dtype(dtype).kind == "i":
        with pytest.raises(OverflowError, match="convert_element_type: Python int"):
            lax.convert_element_type(2**64, dtype)
