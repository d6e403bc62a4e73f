"""The elementwise rules against real JAX: jaxprs of grad, jvp and vmap, and derivative values.

Each program is written once as a function of a library triple
``(jax, jnp, lax)`` and run with JAX's and with minijax's: the printed
jaxprs must be equal character for character (same primitives, same order,
same params and literals), and the derivatives equal up to float rounding.

Run with the oracle environment (README.md, "More"):
    .venv-oracle/bin/python -m pytest tests/test_ad_elementwise_oracle.py
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
import jax.numpy as jjnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

import minijax as mj  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402
from minijax import lax as mlax  # noqa: E402

pytestmark = pytest.mark.oracle

Lib = tuple[Any, Any, Any]  # (jax, jnp, lax)
Program = Callable[[Any, Any, Any], Any]

JAX: Lib = (jax, jjnp, jlax)
MINIJAX: Lib = (mj, mjnp, mlax)


def same_text(program: Program) -> None:
    want, got = str(program(*JAX)), str(program(*MINIJAX))
    assert got == want, f"\n--- JAX\n{want}\n--- minijax\n{got}"


X = np.array([0.5, 1.5, 2.5], np.float32)
Y = np.array([0.25, -1.0, 2.0], np.float32)

# Unary functions of jnp/lax (as functions of the library triple), differentiated as sum(f(x)).
UNARY: dict[str, Callable[[Any, Any], Callable[[Any], Any]]] = {
    "tanh": lambda jnp, lax: jnp.tanh,
    "exp": lambda jnp, lax: jnp.exp,
    "exp2": lambda jnp, lax: jnp.exp2,
    "log": lambda jnp, lax: jnp.log,
    "log1p": lambda jnp, lax: jnp.log1p,
    "expm1": lambda jnp, lax: jnp.expm1,
    "sin": lambda jnp, lax: jnp.sin,
    "cos": lambda jnp, lax: jnp.cos,
    "tan": lambda jnp, lax: jnp.tan,
    "arcsin": lambda jnp, lax: lambda x: jnp.arcsin(x / 3),
    "arccos": lambda jnp, lax: lambda x: jnp.arccos(x / 3),
    "arctan": lambda jnp, lax: jnp.arctan,
    "sinh": lambda jnp, lax: jnp.sinh,
    "cosh": lambda jnp, lax: jnp.cosh,
    "arcsinh": lambda jnp, lax: jnp.arcsinh,
    "arccosh": lambda jnp, lax: lambda x: jnp.arccosh(x + 1),
    "arctanh": lambda jnp, lax: lambda x: jnp.arctanh(x / 3),
    "sqrt": lambda jnp, lax: jnp.sqrt,
    "rsqrt": lambda jnp, lax: lax.rsqrt,
    "cbrt": lambda jnp, lax: jnp.cbrt,
    "square": lambda jnp, lax: jnp.square,
    "abs": lambda jnp, lax: jnp.abs,
    "logistic": lambda jnp, lax: lax.logistic,
    "erf": lambda jnp, lax: lax.erf,
    "erfc": lambda jnp, lax: lax.erfc,
    "erf_inv": lambda jnp, lax: lambda x: lax.erf_inv(x / 3),
    "lgamma": lambda jnp, lax: lax.lgamma,
    "square_pow": lambda jnp, lax: lambda x: x**2,
    "cube": lambda jnp, lax: lambda x: x**3,
    "integer_pow_neg": lambda jnp, lax: lambda x: lax.integer_pow(x, -3),
    "reciprocal": lambda jnp, lax: lambda x: 1 / x,
    "float_pow": lambda jnp, lax: lambda x: x**2.5,
    "relu": lambda jnp, lax: lambda x: jnp.maximum(x, 0.0),
    "where": lambda jnp, lax: lambda x: jnp.where(x > 1, x, 0.0),
    "unsafe_where": lambda jnp, lax: lambda x: jnp.where(x > 1, jnp.log(x - 1), 0.0),
    "clip": lambda jnp, lax: lambda x: jnp.clip(x, 1.0, 2.0),
    "clamp": lambda jnp, lax: lambda x: lax.clamp(1.0, x, 2.0),
    "steps": lambda jnp, lax: lambda x: jnp.sign(x) + jnp.floor(x) + jnp.round(x) + x,
    "to_int_and_back": lambda jnp, lax: lambda x: x.astype(jnp.int32).astype(jnp.float32) + x,
    "to_f16": lambda jnp, lax: lambda x: x.astype(jnp.float16).astype(jnp.float32) * 2,
    "reduce_precision": lambda jnp, lax: lambda x: lax.reduce_precision(x, 5, 10),
    "logaddexp": lambda jnp, lax: lambda x: jnp.logaddexp(x, 1.0),
    "chain": lambda jnp, lax: lambda x: jnp.tanh(jnp.exp(-x) * jnp.log1p(x)) / (1 + lax.logistic(x)),
}

# Functions of two arrays, differentiated in both.
BINARY: dict[str, Callable[[Any, Any], Callable[[Any, Any], Any]]] = {
    "add_mul_sub_div": lambda jnp, lax: lambda x, y: x * y - y / (x + 3.0),
    "maximum": lambda jnp, lax: jnp.maximum,
    "minimum": lambda jnp, lax: jnp.minimum,
    "atan2": lambda jnp, lax: jnp.arctan2,
    "power": lambda jnp, lax: lambda x, y: jnp.power(x, y),
    "rem": lambda jnp, lax: lambda x, y: lax.rem(x, y + 3.0),
    "select": lambda jnp, lax: lambda x, y: lax.select(x > y, x * 2, y),
    "broadcasting": lambda jnp, lax: lambda x, y: x[:, None] * y[None, :] + x[0],
    "logaddexp": lambda jnp, lax: jnp.logaddexp,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_grad_jaxpr(name: str) -> None:
    same_text(lambda jax, jnp, lax: jax.make_jaxpr(jax.grad(lambda x: UNARY[name](jnp, lax)(x).sum()))(X))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_jvp_jaxpr(name: str) -> None:
    same_text(lambda jax, jnp, lax: jax.make_jaxpr(lambda x, t: jax.jvp(UNARY[name](jnp, lax), (x,), (t,)))(X, Y))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_grad_jaxpr_of_binary(name: str) -> None:
    same_text(
        lambda jax, jnp, lax: jax.make_jaxpr(jax.grad(lambda x, y: BINARY[name](jnp, lax)(x, y).sum(), argnums=(0, 1)))(
            X, Y
        )
    )


@pytest.mark.parametrize("name", sorted(UNARY))
def test_grad_values(name: str) -> None:
    def grads(jax: Any, jnp: Any, lax: Any) -> Any:
        f = UNARY[name](jnp, lax)
        return np.asarray(jax.grad(lambda x: f(x).sum())(X))

    np.testing.assert_allclose(grads(*MINIJAX), grads(*JAX), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_grad_values_of_binary(name: str) -> None:
    def grads(jax: Any, jnp: Any, lax: Any) -> Any:
        f = BINARY[name](jnp, lax)
        return [np.asarray(g) for g in jax.grad(lambda x, y: f(x, y).sum(), argnums=(0, 1))(X, Y)]

    for got, want in zip(grads(*MINIJAX), grads(*JAX)):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# Corners: values at the points where the rules choose


CORNERS: list[tuple[str, Callable[[Any, Any], Callable[..., Any]], float]] = [
    ("pow_float_0", lambda jnp, lax: lambda x: x**0.0, 0.0),
    ("pow_float_2_at_0", lambda jnp, lax: lambda x: x**2.0, 0.0),
    ("pow_half_at_0", lambda jnp, lax: lambda x: x**0.5, 0.0),
    ("pow_int_2_at_0", lambda jnp, lax: lambda x: lax.pow(x, 2), 0.0),
    ("pow_int_0_at_0", lambda jnp, lax: lambda x: lax.pow(x, 0), 0.0),
    ("pow_base_0", lambda jnp, lax: lambda y: lax.pow(0.0, y), 2.0),
    ("pow_base_0_exp_0", lambda jnp, lax: lambda y: lax.pow(0.0, y), 0.0),
    ("integer_pow_0", lambda jnp, lax: lambda x: lax.integer_pow(x, 0), 3.0),
    ("integer_pow_neg", lambda jnp, lax: lambda x: lax.integer_pow(x, -3), 2.0),
    ("abs_at_0", lambda jnp, lax: jnp.abs, 0.0),
    ("maximum_tie", lambda jnp, lax: lambda x: jnp.maximum(x, 1.0), 1.0),
    ("minimum_tie", lambda jnp, lax: lambda x: jnp.minimum(x, 1.0), 1.0),
    ("relu_at_0", lambda jnp, lax: lambda x: jnp.maximum(x, 0.0), 0.0),
    ("clamp_at_hi", lambda jnp, lax: lambda x: lax.clamp(0.0, x, 1.0), 1.0),
    ("clamp_lo", lambda jnp, lax: lambda x: lax.clamp(x, 0.5, 1.0), 0.7),
    ("clamp_hi", lambda jnp, lax: lambda x: lax.clamp(0.0, 1.5, x), 1.0),
    ("rem_x", lambda jnp, lax: lambda x: lax.rem(x, 0.7), 2.0),
    ("rem_y", lambda jnp, lax: lambda y: lax.rem(2.0, y), 0.7),
    ("sqrt_at_0", lambda jnp, lax: jnp.sqrt, 0.0),
    ("unsafe_where_at_0", lambda jnp, lax: lambda x: jnp.where(x > 0, 1 / x, 0.0), 0.0),
    ("safe_where_at_0", lambda jnp, lax: lambda x: jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0), 0.0),
    ("select_n_int", lambda jnp, lax: lambda x: lax.select_n(2, x, 2 * x, 3 * x), 1.0),
    ("atan2_y", lambda jnp, lax: lambda x: lax.atan2(2.0, x), 0.3),
    ("logaddexp_neg_inf", lambda jnp, lax: lambda x: jnp.logaddexp(x, -jnp.inf), 0.5),
    ("logaddexp_both_neg_inf", lambda jnp, lax: lambda x: jnp.logaddexp(x, x), -math.inf),
    ("sinc_at_0", lambda jnp, lax: jnp.sinc, 0.0),
]


@pytest.mark.parametrize("name, fun, x", CORNERS, ids=[c[0] for c in CORNERS])
def test_grad_at_the_corners(name: str, fun: Callable[[Any, Any], Callable[..., Any]], x: float) -> None:
    def grad(jax: Any, jnp: Any, lax: Any) -> float:
        return float(jax.grad(fun(jnp, lax))(x))

    want, got = grad(*JAX), grad(*MINIJAX)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert math.isnan(got) == math.isnan(want)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_higher_derivatives_of_sinc_at_zero(order: int) -> None:
    def derivative(jax: Any, jnp: Any, lax: Any) -> float:
        f = jnp.sinc
        for _ in range(order):
            f = jax.grad(f)
        return float(jax.jit(f)(0.0))

    np.testing.assert_allclose(derivative(*MINIJAX), derivative(*JAX), rtol=1e-5, atol=1e-6)


def test_second_order_jaxpr() -> None:
    same_text(lambda jax, jnp, lax: jax.make_jaxpr(jax.grad(jax.grad(lambda x: jnp.tanh(x) * jnp.sin(x))))(0.5))


# ---------------------------------------------------------------------------
# Programs


def _init(jnp: Any, sizes: list[int]) -> list[tuple[Any, Any]]:
    return [
        (jnp.ones((m, n)) * 0.1 * (i + 1), jnp.zeros(n) + 0.01) for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]))
    ]


def _mlp_loss(jnp: Any) -> Callable[..., Any]:
    def mlp(params: Any, x: Any) -> Any:
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    def loss(params: Any, x: Any, y: Any) -> Any:
        return jnp.mean((mlp(params, x) - y) ** 2)

    return loss


def test_mlp_loss_grad_jaxpr_and_values() -> None:
    x = np.arange(8.0, dtype=np.float32).reshape(2, 4) / 8
    y = np.ones((2, 3), np.float32)

    def program(jax: Any, jnp: Any, lax: Any) -> Any:
        return jax.make_jaxpr(jax.grad(_mlp_loss(jnp)))(_init(jnp, [4, 5, 3]), x, y)

    same_text(program)

    def grads(jax: Any, jnp: Any, lax: Any) -> list[Any]:
        g = jax.grad(_mlp_loss(jnp))(_init(jnp, [4, 5, 3]), x, y)
        return [np.asarray(leaf) for pair in g for leaf in pair]

    for got, want in zip(grads(*MINIJAX), grads(*JAX)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


# name -> (the function, vmap's keyword arguments, the arguments), each given the library.
VmapCase = tuple[Callable[[Any, Any], Callable[..., Any]], dict[str, Any], Callable[[Any], tuple[Any, ...]]]
VMAP_CASES: dict[str, VmapCase] = {
    "add_unbatched_array": (
        lambda jnp, lax: lambda x, y: x + y,
        {"in_axes": (0, None)},
        lambda jnp: (jnp.ones((3, 4)), jnp.ones(4)),
    ),
    "mul_moved": (
        lambda jnp, lax: lambda x, y: x * y,
        {"in_axes": (1, 0)},
        lambda jnp: (jnp.ones((4, 3)), jnp.ones((3, 4))),
    ),
    "sub_python_scalar": (
        lambda jnp, lax: lambda x, y: x - y,
        {"in_axes": (0, None)},
        lambda jnp: (jnp.ones((3, 4, 5)), 2.0),
    ),
    "div_batched_scalar": (lambda jnp, lax: lambda x, y: x / y, {}, lambda jnp: (jnp.arange(3.0), jnp.ones((3, 4)))),
    "max_both_reshaped": (lambda jnp, lax: lax.max, {"in_axes": (0, None)}, lambda jnp: (jnp.arange(3.0), jnp.ones(4))),
    "where_unbatched_branch": (
        lambda jnp, lax: lambda x, y: jnp.where(x > 0, x, y),
        {"in_axes": (0, None)},
        lambda jnp: (jnp.arange(12.0).reshape(3, 4) - 5, jnp.ones(4)),
    ),
    "select_batched_scalar_which": (
        lambda jnp, lax: lax.select,
        {"in_axes": (0, None, 1)},
        lambda jnp: (jnp.arange(3) > 0, jnp.ones(4), jnp.zeros((4, 3))),
    ),
    "select_scalar_cases": (
        lambda jnp, lax: lax.select,
        {"in_axes": (0, None, None)},
        lambda jnp: (jnp.arange(3) > 0, 1.0, 2.0),
    ),
    "select_unbatched_which": (
        lambda jnp, lax: lax.select,
        {"in_axes": (None, 0, 1)},
        lambda jnp: (True, jnp.ones((3, 4)), jnp.zeros((4, 3))),
    ),
    "clamp_batched_lo": (
        lambda jnp, lax: lax.clamp,
        {"in_axes": (0, None, None)},
        lambda jnp: (jnp.arange(3.0), jnp.arange(4.0), 2.0),
    ),
    "clamp_batched_x": (
        lambda jnp, lax: lax.clamp,
        {"in_axes": (None, 0, None)},
        lambda jnp: (0.5, jnp.arange(12.0).reshape(3, 4), 2.0),
    ),
    "clamp_all_batched": (
        lambda jnp, lax: lax.clamp,
        {"in_axes": (0, 1, 0)},
        lambda jnp: (jnp.zeros(3), jnp.arange(12.0).reshape(4, 3) / 4, jnp.ones(3)),
    ),
    "unary_then_binary": (
        lambda jnp, lax: lambda x, y: jnp.tanh(x) + jnp.exp(y),
        {"in_axes": (1, 0)},
        lambda jnp: (jnp.ones((4, 3)), jnp.ones((3, 4))),
    ),
    "convert": (lambda jnp, lax: lambda x: x.astype(jnp.int32) + 1, {}, lambda jnp: (jnp.ones((3, 4)),)),
    "out_axes": (
        lambda jnp, lax: lambda x, y: x + y,
        {"in_axes": (0, 1), "out_axes": 1},
        lambda jnp: (jnp.ones((3, 4)), jnp.ones((4, 3))),
    ),
    "pow_int_exponent": (lambda jnp, lax: lambda x: lax.pow(x, 2), {}, lambda jnp: (jnp.arange(12.0).reshape(3, 4),)),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_jaxpr_and_values(name: str) -> None:
    fun, kwargs, args = VMAP_CASES[name]
    same_text(lambda jax, jnp, lax: jax.make_jaxpr(jax.vmap(fun(jnp, lax), **kwargs))(*args(jnp)))
    got, want = (np.asarray(jax.vmap(fun(jnp, lax), **kwargs)(*args(jnp))) for jax, jnp, lax in (MINIJAX, JAX))
    np.testing.assert_array_equal(got, want)


def test_vmap_of_grad_jaxpr() -> None:
    same_text(
        lambda jax, jnp, lax: jax.make_jaxpr(
            jax.vmap(jax.grad(lambda x, y: jnp.sin(x) * y + x * x), in_axes=(0, None))
        )(X, 2.0)
    )
    same_text(
        lambda jax, jnp, lax: jax.make_jaxpr(
            jax.grad(lambda x: jax.vmap(lambda a: jnp.tanh(a) * x)(jnp.ones((3, 2))).sum())
        )(jnp.ones(2))
    )


def test_custom_jvp_functions_jaxprs() -> None:
    same_text(lambda jax, jnp, lax: jax.make_jaxpr(jnp.logaddexp)(X, Y))
    same_text(lambda jax, jnp, lax: jax.make_jaxpr(jnp.sinc)(X))
    same_text(lambda jax, jnp, lax: jax.make_jaxpr(jax.grad(lambda a, b: jnp.logaddexp(a, b).sum()))(X, Y))
