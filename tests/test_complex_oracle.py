"""Complex numbers against real JAX: values, dtypes and weak types, errors and
warnings, printed reprs, jaxpr text, and derivatives (grad's conjugate
convention, holomorphic=True, jacfwd/jacrev, vjp with complex cotangents),
over a grid of points and hypothesis-drawn ones.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax
import minijax.numpy as mjnp
from minijax.config import enable_x64

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
jnp = jax.numpy

pytestmark = pytest.mark.oracle

C64 = np.dtype(np.complex64)

# A grid of points in all four quadrants, on the axes and near the branch cuts (away from them).
GRID = np.array(
    [complex(x, y) for x in (-2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 3.0) for y in (-2.0, -0.5, 0.0, 0.25, 1.5)],
    np.complex64,
)


@contextlib.contextmanager
def both_x64(flag: bool) -> Iterator[None]:
    with enable_x64(flag), jax.enable_x64(flag):
        yield


def outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", (value, dtype, weak)) or ("raise", exception type and first message line)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn()
        except (TypeError, ValueError, NotImplementedError) as e:
            return "raise", (type(e).__name__, str(e).split("\n")[0])
    return "ok", out


def same_error(got: tuple[str, str], want: tuple[str, str]) -> bool:
    """The same exception type and JAX's message (minijax may prefix the primitive's name,
    ``argmax: ...``, where JAX's message names another operation)."""
    return got[0] == want[0] and got[1].endswith(want[1])


def assert_same(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape
    assert bool(getattr(got, "weak_type", False)) == bool(getattr(want, "weak_type", False))
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------------------
# Functions of one complex array: values on the grid


UNARY = [
    "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan",
    "arcsinh", "arccosh", "arctanh", "expm1", "log1p", "abs", "sign", "real", "imag", "conj", "conjugate",
    "angle", "square", "negative", "reciprocal", "exp2", "log2", "log10", "iscomplex", "isreal",
    "sort_complex", "cumsum", "cumprod", "sum", "prod", "mean", "max", "min", "sort", "isfinite",
    "isinf", "isnan", "isposinf", "argmax", "argsort", "nonzero", "round", "floor", "var", "std",
]  # fmt: skip


@pytest.mark.parametrize("name", UNARY)
def test_jnp_functions_on_the_grid(name: str) -> None:
    want_kind, want = outcome(lambda: getattr(jnp, name)(GRID))
    got_kind, got = outcome(lambda: getattr(mjnp, name)(GRID))
    assert got_kind == want_kind, (got, want)
    if want_kind == "raise":
        assert same_error(got, want), (got, want)
        return
    # XLA's complex transcendental functions are a few ulps from NumPy's; near zeros, absolute.
    assert_same(got, want, rtol=5e-6, atol=5e-6)


LAX_UNARY = [
    "exp", "exp2", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "logistic",
    "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "abs", "sign", "neg", "square",
    "real", "imag", "conj", "floor", "ceil", "round", "is_finite", "cbrt", "erf", "erfc", "erf_inv",
    "lgamma", "digamma", "population_count",
]  # fmt: skip


@pytest.mark.parametrize("name", LAX_UNARY)
def test_lax_unary_accepts_or_refuses_complex_as_jax(name: str) -> None:
    z = GRID[GRID != 0]  # rsqrt and sign at 0 are inf/NaN in both; kept out to compare values tightly
    want_kind, want = outcome(lambda: getattr(jax.lax, name)(z))
    got_kind, got = outcome(lambda: getattr(minijax.lax, name)(z))
    assert got_kind == want_kind, (got, want)
    if want_kind == "raise":
        assert same_error(got, want), (got, want)
    else:
        assert_same(got, want, rtol=5e-6, atol=5e-6)


LAX_BINARY = ["add", "sub", "mul", "div", "pow", "max", "min", "eq", "ne", "lt", "le", "gt", "ge", "rem", "nextafter"]


@pytest.mark.parametrize("name", LAX_BINARY)
def test_lax_binary_accepts_or_refuses_complex_as_jax(name: str) -> None:
    x, y = GRID[GRID != 0], GRID[GRID != 0][::-1]
    want_kind, want = outcome(lambda: getattr(jax.lax, name)(x, y))
    got_kind, got = outcome(lambda: getattr(minijax.lax, name)(x, y))
    assert got_kind == want_kind, (got, want)
    if want_kind == "raise":
        assert same_error(got, want), (got, want)
    else:
        assert_same(got, want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize(
    "call",
    [
        "lax.complex(f32, f32)", "lax.complex(f32, 2.0)", "lax.complex(2.0, 3.0)", "lax.complex(i32, i32)",
        "lax.complex(c64, c64)", "lax.conj(f32)", "lax.conj(i32)", "lax.conj(1.5)", "lax.real(f32)",
        "lax.integer_pow(c64, 3)", "lax.integer_pow(c64, -2)", "lax.pow(c64, i32)", "lax.pow(f32, c64)",
        "lax.clamp(c64, c64, c64)", "lax.select_n(b, c64, c64)", "lax.cumsum(c64)", "lax.cummax(c64)",
        "lax.reduce_max(c64, (0,))", "lax.argmax(c64, 0, np.int32)", "lax.sort(c64)",
        "lax.convert_element_type(c64, np.float32)", "lax.convert_element_type(c64, np.int32)",
        "lax.convert_element_type(c64, np.bool_)", "lax.convert_element_type(f32, np.complex64)",
        "lax.bitcast_convert_type(c64, np.float32)", "lax.dot(c64, c64)", "lax.dot(c64, f32)",
        "c64 * 2", "c64 + 1j", "f32 * 1j", "i32 + 1j", "2 * 1j", "f32.astype(np.complex64) ** 0.5",
        "c64.astype(bool)", "c64.astype(np.float32)", "c64.astype(np.int32)",
        "lax.max(c64, c64[::-1])", "lax.min(c64, c64[::-1])",
        "jnp.vdot(c64, c64[::-1])", "jnp.inner(c64, c64)", "jnp.linalg.norm(c64)", "jnp.linalg.norm(c64.reshape(2, 2))",
        "jnp.linalg.norm(c64, 1)", "jnp.linalg.norm(c64, jnp.inf)", "jnp.isclose(c64, c64 + 1e-9)",
        "jnp.allclose(c64, c64[::-1])", "jnp.linspace(0, 1 + 1j, 5)", "jnp.cov(jnp.stack([c64, c64[::-1] * 2]))",
        "jnp.floor_divide(c64, c64)", "jnp.hypot(c64, c64)", "jnp.fmax(c64, c64[::-1])", "jnp.fmin(c64, c64[::-1])",
        "jnp.greater(c64, c64[::-1])", "jnp.less_equal(c64, c64[::-1])", "jnp.nan_to_num(c64 * jnp.inf)",
        "jnp.var(c64)", "jnp.std(c64)", "jnp.round(c64 * 1.37, 1)", "jnp.isinf(c64 / 0)", "jnp.isnan(c64 * jnp.nan)",
        "jnp.mean(c64)", "jnp.average(c64, weights=f32)", "jnp.polyval(c64, c64)", "jnp.einsum('i,i->', c64, c64)",
        "jnp.trace(jnp.outer(c64, c64))", "jnp.cumsum(c64)", "jnp.sort(c64)", "jnp.unique(jnp.concatenate([c64, c64]))",
        "jnp.where(jnp.abs(c64) > 1, c64, 0)", "jnp.asarray(c64).at[1].add(2j)", "jnp.matmul(c64.reshape(2, 2), c64.reshape(2, 2))",
        "jnp.sign(c64)", "jnp.exp(c64) * 1j", "jnp.square(c64)", "jnp.reciprocal(c64)",
    ],
)  # fmt: skip
def test_lax_and_jnp_calls_match_jax(call: str) -> None:
    values = {
        "f32": np.float32([1.5, -2.0, 0.5, 3.0]), "i32": np.int32([1, -2, 0, 3]),
        "c64": np.array([1 + 2j, 1 - 1j, -3 + 0.5j, 0.5 + 0j], np.complex64), "b": np.array([True, False, True, False]),
    }  # fmt: skip

    def run(lax: Any, numpy: Any) -> Any:
        env = {"lax": lax, "np": np, "jnp": numpy, **{k: numpy.asarray(v) for k, v in values.items()}}
        return eval(call, env)

    want_kind, want = outcome(lambda: run(jax.lax, jnp))
    got_kind, got = outcome(lambda: run(minijax.lax, mjnp))
    assert got_kind == want_kind, (got, want)
    if want_kind == "raise":
        assert same_error(got, want), (got, want)
        return
    want, got = (want if isinstance(want, (list, tuple)) else [want]), (got if isinstance(got, (list, tuple)) else [got])
    for g, w in zip(got, want):
        assert_same(g, w, rtol=1e-6)


def test_warnings_match_jax() -> None:
    z = np.array([1 + 2j], np.complex64)
    for what in ("lax.convert_element_type(z, np.float32)", "z.astype(np.float32)", "z.astype(bool)"):
        caught = []
        for lax, numpy in ((jax.lax, jnp), (minijax.lax, mjnp)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                eval(what, {"lax": lax, "np": np, "z": numpy.asarray(z)})
            caught.append(sorted({(c.category.__name__, str(c.message)) for c in w}))
        assert caught[0] == caught[1], what


# ---------------------------------------------------------------------------
# Promotion, creation, printing


@pytest.mark.parametrize("x64", [False, True])
def test_creation_and_promotion_match_jax(x64: bool) -> None:
    cases = [
        "np.array(1 + 2j)", "np.array([1j, 2])", "np.zeros(3, np.complex64)", "np.ones((2,), complex)",
        "np.complex64(1 + 2j)", "np.complex128(1j)", "np.arange(3) * 1j", "np.float32(1) + 1j",
        "np.array([1, 2], np.float16) * 1j", "np.asarray(3 + 0j, dtype=np.complex64)",
        "np.full((2,), 1j)", "np.array([1.5], np.float32).astype(complex)", "np.linspace(0, 1, 3) * (1 - 1j)",
    ]  # fmt: skip
    with both_x64(x64):
        for code in cases:
            want_kind, want = outcome(lambda code=code: eval(code, {"np": jnp}))
            got_kind, got = outcome(lambda code=code: eval(code, {"np": mjnp}))
            assert got_kind == want_kind, code
            assert repr(got) == repr(want), code
            assert str(got) == str(want), code


def test_reprs_match_jax() -> None:
    values = [
        np.array([1 + 2j, -3.25j], np.complex64), np.array([[np.nan + 1j, np.inf - np.inf * 1j]], np.complex64),
        np.array([1e10 + 1j, 1e-8 - 2j], np.complex64), np.array(2 - 1j, np.complex64),
        np.zeros((2, 3), np.complex64), np.array([0.1 + 0.2j, -0.3 + 0.4j] * 5, np.complex64),
    ]  # fmt: skip
    for v in values:
        assert repr(mjnp.asarray(v)) == repr(jnp.asarray(v))
        assert str(mjnp.asarray(v)) == str(jnp.asarray(v))


def test_random_normal_complex_matches_jax_bit_for_bit() -> None:
    for key in (0, 7):
        want = jax.random.normal(jax.random.key(key), (3, 5), jnp.complex64)
        got = minijax.random.normal(minijax.random.key(key), (3, 5), mjnp.complex64)
        # XLA's erf_inv (the numpy backend's is within a few ulps: spec/primitives/random.md)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-7)
    fun = lambda k, r: r.normal(k, (2,), np.complex64)  # noqa: E731
    assert str(minijax.make_jaxpr(lambda k: fun(k, minijax.random))(minijax.random.key(0))) == str(
        jax.make_jaxpr(lambda k: fun(k, jax.random))(jax.random.key(0))
    )


# ---------------------------------------------------------------------------
# jaxpr text


JAXPRS: list[tuple[str, Callable[[Any, Any], Callable[..., Any]]]] = [
    ("conj_mul_add", lambda jx, np_: lambda z: np_.conj(z) * 2 + (1 - 0.5j)),
    ("grad_abs", lambda jx, np_: jx.grad(lambda z: np_.abs(z))),
    ("grad_norm2", lambda jx, np_: jx.grad(lambda z: np_.real(z) ** 2 + np_.imag(z) ** 2)),
    ("grad_sin_holomorphic", lambda jx, np_: jx.grad(np_.sin, holomorphic=True)),
    ("angle", lambda jx, np_: np_.angle),
    ("complex_of_parts", lambda jx, np_: lambda z: jx.lax.complex(np_.real(z), np_.imag(z) * 2)),
    ("vmap_conj", lambda jx, np_: jx.vmap(lambda z: jx.lax.conj(z) * z)),
    ("jvp_exp", lambda jx, np_: lambda z: jx.jvp(np_.exp, (z,), (z,))),
    ("literals", lambda jx, np_: lambda z: z + np_.complex64(complex(np.inf, -np.inf)) + np_.complex64(1e20 + 3j)),
]


@pytest.mark.parametrize(("name", "make"), JAXPRS, ids=[n for n, _ in JAXPRS])
def test_jaxpr_text_matches_jax(name: str, make: Callable[[Any, Any], Callable[..., Any]]) -> None:
    arg = np.complex64(0.5 + 1j) if name not in ("vmap_conj",) else np.array([1j, 2], np.complex64)
    want = str(jax.make_jaxpr(make(jax, jnp))(arg))
    got = str(minijax.make_jaxpr(make(minijax, mjnp))(arg))
    assert got == want
    assert str(minijax.jaxpr_parse.parse_jaxpr(got)) == got


# ---------------------------------------------------------------------------
# Derivatives


DERIVATIVES: dict[str, Callable[[Any, Any], Callable[[Any], Any]]] = {
    "grad_norm2": lambda jx, np_: jx.grad(lambda z: np_.real(z) ** 2 + np_.imag(z) ** 2),
    "grad_abs": lambda jx, np_: jx.grad(np_.abs),
    "grad_abs_sq": lambda jx, np_: jx.grad(lambda z: np_.abs(z) ** 2),
    "grad_real_sin": lambda jx, np_: jx.grad(lambda z: np_.real(np_.sin(z) * np_.conj(z))),
    "grad_angle": lambda jx, np_: jx.grad(np_.angle),
    "grad_holo_sin": lambda jx, np_: jx.grad(np_.sin, holomorphic=True),
    "grad_holo_mix": lambda jx, np_: jx.grad(lambda z: np_.exp(z) * z ** 3 / (1 + z * z), holomorphic=True),
    "grad_holo_log_sqrt": lambda jx, np_: jx.grad(lambda z: np_.log(z) + np_.sqrt(z) + np_.arctan(z), holomorphic=True),
    "grad_holo_acosh": lambda jx, np_: jx.grad(np_.arccosh, holomorphic=True),
    "grad_sign": lambda jx, np_: jx.grad(lambda z: np_.real(np_.sign(z))),
    "jacfwd_holo": lambda jx, np_: jx.jacfwd(lambda z: np_.stack([z * z, np_.tanh(z)]), holomorphic=True),
    "jacrev_holo": lambda jx, np_: jx.jacrev(lambda z: np_.stack([z * z, np_.tanh(z)]), holomorphic=True),
    "jacrev_real_out": lambda jx, np_: jx.jacrev(lambda z: np_.stack([np_.abs(z), np_.real(z * z)])),
    "hessian_holo": lambda jx, np_: jx.hessian(lambda z: z ** 4, holomorphic=True),
    "jacfwd_nonholo": lambda jx, np_: jx.jacfwd(np_.sin),
    "jacrev_complex_out": lambda jx, np_: jx.jacrev(np_.sin),
    "grad_complex_out": lambda jx, np_: jx.grad(np_.sin),
    "grad_holo_real_out": lambda jx, np_: jx.grad(np_.abs, holomorphic=True),
    "vjp": lambda jx, np_: lambda z: jx.vjp(lambda w: np_.sin(w) * np_.conj(w), z)[1](np_.complex64(1 - 2j)),
    "jvp": lambda jx, np_: lambda z: jx.jvp(lambda w: np_.abs(w) + np_.angle(w), (z,), (np_.complex64(1 - 2j),)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_derivatives_match_jax_on_the_grid(name: str) -> None:
    make = DERIVATIVES[name]
    for z in GRID[GRID != 0]:
        want_kind, want = outcome(lambda z=z: make(jax, jnp)(z))
        got_kind, got = outcome(lambda z=z: make(minijax, mjnp)(z))
        assert got_kind == want_kind, (z, got, want)
        if want_kind == "raise":
            assert same_error(got, want), (got, want)
            continue
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert_same(g, w, rtol=2e-5, atol=2e-5)


def test_derivatives_of_real_inputs_through_complex_match_jax() -> None:
    x = np.float32(0.7)
    cases: list[tuple[Callable[[Any, Any], Callable[..., Any]], tuple[Any, ...]]] = [
        (lambda jx, np_: jx.grad(lambda x: np_.abs(np_.exp(1j * x) * (x + 2j))), (x,)),
        (lambda jx, np_: jx.grad(lambda x, y: np_.abs(jx.lax.complex(x, y)), argnums=(0, 1)), (x, x)),
        (lambda jx, np_: jx.jacfwd(lambda x: np_.exp(1j * x)), (x,)),
    ]
    for make, args in cases:
        want, got = make(jax, jnp)(*args), make(minijax, mjnp)(*args)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert_same(g, w, rtol=2e-6)


# Cells in the spirit of JAX's "Complex numbers and differentiation" page and the autodiff
# cookbook's complex section: the printed result (value, dtype, weak type) must be JAX's.
CELLS: list[Callable[[Any, Any], Any]] = [
    lambda jx, np_: jx.grad(np_.abs)(0j),
    lambda jx, np_: jx.grad(lambda z: np_.abs(z) ** 2)(0j),
    lambda jx, np_: jx.grad(lambda z: np_.abs(z) ** 2)(3 + 4j),
    lambda jx, np_: jx.grad(np_.exp, holomorphic=True)(1 + 1j),
    lambda jx, np_: jx.grad(lambda z: np_.real(np_.exp(z)))(1 + 1j),
    lambda jx, np_: jx.vjp(np_.sin, 1 + 2j)[1](1 + 0j),
    lambda jx, np_: jx.jvp(np_.sin, (1 + 2j,), (1 + 0j,)),
    lambda jx, np_: jx.grad(lambda x: np_.real(np_.exp(1j * x)))(0.5),
    lambda jx, np_: jx.jacrev(np_.exp, holomorphic=True)(1 + 1j),
    lambda jx, np_: jx.grad(lambda z: (z * z.conj()).real)(1 - 2j),
    lambda jx, np_: jx.grad(np_.angle)(1 + 1j),
    lambda jx, np_: jx.grad(lambda z: np_.sum(np_.abs(z) ** 2))(np_.array([1 + 1j, 2 - 1j])),
    lambda jx, np_: jx.jacfwd(lambda x: np_.array([x, 1j * x]))(1.0),
    lambda jx, np_: jx.grad(lambda z: np_.real(np_.sqrt(z)))(-1 + 0j),
    lambda jx, np_: jx.grad(np_.sin, holomorphic=True)(3.0 + 4.0j),
]


@pytest.mark.parametrize("i", range(len(CELLS)))
def test_differentiation_page_cells_print_as_jax(i: int) -> None:
    want, got = CELLS[i](jax, jnp), CELLS[i](minijax, mjnp)
    assert repr(got) == repr(want)


@settings(max_examples=40, deadline=None)
@given(
    re=st.floats(-4, 4, allow_subnormal=False, width=32),
    im=st.floats(-4, 4, allow_subnormal=False, width=32),
    name=st.sampled_from(["grad_norm2", "grad_abs", "grad_real_sin", "grad_holo_mix", "grad_holo_log_sqrt", "vjp", "jvp"]),
)
def test_derivatives_match_jax_at_hypothesis_points(re: float, im: float, name: str) -> None:
    z = np.complex64(complex(re, im))
    if abs(z) < 1e-3:
        return  # abs, log and angle are singular at 0
    make = DERIVATIVES[name]
    want, got = make(jax, jnp)(z), make(minijax, mjnp)(z)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert_same(g, w, rtol=1e-4, atol=1e-4)


@settings(max_examples=40, deadline=None)
@given(
    re=st.lists(st.floats(-3, 3, allow_subnormal=False, width=32), min_size=3, max_size=3),
    im=st.lists(st.floats(-3, 3, allow_subnormal=False, width=32), min_size=3, max_size=3),
    name=st.sampled_from(["exp", "sin", "tanh", "sqrt", "log1p", "expm1", "arctan", "abs", "angle", "sort_complex", "cumprod"]),
)
def test_values_match_jax_at_hypothesis_points(re: list[float], im: list[float], name: str) -> None:
    z = (np.array(re) + 1j * np.array(im)).astype(np.complex64)
    if name in ("arctan", "log1p") and np.any(np.abs(z - (-1 if name == "log1p" else 1j)) < 1e-2):
        return  # poles
    want, got = getattr(jnp, name)(z), getattr(mjnp, name)(z)
    assert_same(got, want, rtol=1e-5, atol=1e-5)
