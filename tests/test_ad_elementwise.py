"""Autodiff of the elementwise primitives (and ``add_any``, ``stop_gradient``): jvp and transpose rules.

Laws, for every primitive of the family, on cases drawn by the primitive's
sampler (``minijax.testing.samplers``: shapes, dtypes, params, values inside
the differentiable domain): the jvp and the vjp agree with central finite
differences (``check_grads``), in float32 and float64; the primitives with a
zero derivative give zero tangents (float0 ones for integer results); every
linear primitive obeys the transposition law <ct, L t> = <L^T ct, t> with
cotangents of exactly its operands' types; and the derivatives compose with
jit. Then the corners where JAX's rules are specific: ``where`` of an unsafe
branch, ties of max/min, ``pow`` at 0, clamp at its bounds, and the
jnp functions with custom derivatives (logaddexp, sinc).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.config import config
from minijax.core import Primitive
from minijax.interpreters import ad, batching
from minijax.primitives import autodiff as autodiff_prims, elementwise as ew
from minijax.testing import check_grads
from minijax.testing.samplers import SAMPLERS, Case
from minijax.testing.strategies import seeds

NDArray = np.ndarray[Any, Any]

FAMILY: list[Primitive] = sorted(
    [p for p in vars(ew).values() if isinstance(p, Primitive)]
    + [autodiff_prims.add_any_p, autodiff_prims.stop_gradient_p],
    key=lambda p: p.name,
)
NAMES = [p.name for p in FAMILY]
# Linear in (some of) their operands: they need a transpose rule.
LINEAR = {
    "add", "sub", "neg", "mul", "div", "convert_element_type", "reduce_precision", "copy", "select_n", "add_any",
}  # fmt: skip
# Differentiating these raises NotImplementedError (nextafter: JAX has no rule either;
# digamma: its derivative needs polygamma, a primitive minijax lacks).
NO_DERIVATIVE = {"nextafter"}
FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]


@pytest.fixture(params=["float32", "float64"])
def float_dtype(request: pytest.FixtureRequest) -> Iterator[np.dtype[Any]]:
    """float32, and float64 with x64 on (restored afterwards)."""
    if request.param == "float32":
        yield np.dtype(np.float32)
        return
    previous = config.read("jax_enable_x64")
    config.update("jax_enable_x64", True)
    try:
        yield np.dtype(np.float64)
    finally:
        config.update("jax_enable_x64", previous)


def restricted(case: Case, args: list[NDArray], positions: tuple[int, ...]) -> tuple[Callable[..., Any], list[NDArray]]:
    """The case's primitive as a function of the operands at ``positions`` (the others fixed)."""
    return case.restricted(positions, args), [args[i] for i in positions]


def inner(xs: Any, ys: Any) -> float:
    return float(sum(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64)) for x, y in zip(xs, ys)))


def random_like(rng: np.random.Generator, x: Any) -> NDArray:
    return np.asarray(rng.standard_normal(np.shape(x))).astype(np.asarray(x).dtype)


# ---------------------------------------------------------------------------
# Every primitive has its rules


@pytest.mark.single_backend
@pytest.mark.parametrize("prim", FAMILY, ids=NAMES)
def test_every_primitive_has_its_rules(prim: Primitive) -> None:
    assert prim in ad.primitive_jvps
    assert (prim in ad.transpose_rules) == (prim.name in LINEAR)
    assert prim in batching.primitive_batchers
    assert (prim in ad.non_differentiable) == (prim.name in NO_DERIVATIVE)
    assert prim.name in SAMPLERS


# ---------------------------------------------------------------------------
# The laws, for every primitive

DIFFERENTIABLE = [n for n in NAMES if n not in NO_DERIVATIVE]
# With floating operands and a nonzero derivative.
ZERO_DERIVATIVE = {"eq", "ne", "lt", "le", "gt", "ge", "is_finite", "stop_gradient", "bitcast_convert_type"}
SMOOTH = [n for n in DIFFERENTIABLE if n not in ZERO_DERIVATIVE and SAMPLERS[n].accepts("float32")]


def run_law(backend_name: str | None, examples: int, law: Callable[[st.DataObject, np.random.Generator], None]) -> None:
    """Run ``law`` on hypothesis examples: ``examples`` of them on NumPy, a fifth on the other backends.

    The rules are the same on every backend; on XLA each new operand shape
    compiles every primitive a rule binds, so a few examples there check the
    lowerings the rules use, and NumPy does the searching.
    """
    n = examples if backend_name in (None, "numpy") else max(1, examples // 5)
    # x64 (the float_dtype fixture) stays on for all examples, hence the health check.
    run = settings(max_examples=n, suppress_health_check=[HealthCheck.function_scoped_fixture])(
        given(data=st.data(), rng=seeds())(law)
    )
    run()


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_jvp_and_vjp_match_finite_differences(name: str, float_dtype: np.dtype[Any], backend_name: str | None) -> None:
    sampler = SAMPLERS[name]
    # Primitives of integers and booleans only are checked for zero (float0) tangents.
    dtype = float_dtype if sampler.accepts(float_dtype) else None

    def law(data: st.DataObject, rng: np.random.Generator) -> None:
        case = data.draw(sampler.cases(dtype))
        args = case.args(rng)
        if case.differentiable:
            fun, diff_args = restricted(case, args, case.differentiable)
            check_grads(fun, diff_args, order=1, modes=("fwd", "rev"))
            return
        # A zero derivative: symbolic-zero tangents of the output's tangent type.
        floats = tuple(i for i, a in enumerate(args) if a.dtype in FLOATS)
        fun, float_args = restricted(case, args, floats)
        out, t = jax.jvp(fun, float_args, [np.ones_like(a) for a in float_args])
        want = ad.tangent_dtype(np.asarray(out).dtype)
        assert t.dtype == want and t.shape == np.shape(out)
        assert not np.any(np.asarray(t, np.float64 if want != dtypes.float0 else bool))

    run_law(backend_name, 10, law)


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_transposition_law(name: str, float_dtype: np.dtype[Any], backend_name: str | None) -> None:
    # <ct, L t> = <L^T ct, t>, with L from linearize and L^T from vjp; cotangents of the operands' types.
    def law(data: st.DataObject, rng: np.random.Generator) -> None:
        case = data.draw(SAMPLERS[name].cases(float_dtype))
        assume(case.linear)  # e.g. not a conversion to an integer type
        args = case.args(rng)
        for group in case.linear:
            fun, lin_args = restricted(case, args, group)
            out, f_lin = jax.linearize(fun, *lin_args)
            _, f_vjp = jax.vjp(fun, *lin_args)
            t = [random_like(rng, a) for a in lin_args]
            ct = random_like(rng, out)
            cts = f_vjp(ct)
            for c, a in zip(cts, lin_args):
                assert (np.shape(c), np.asarray(c).dtype) == (a.shape, a.dtype)
            lhs, rhs = inner([ct], [f_lin(*t)]), inner(cts, t)
            assert abs(lhs - rhs) <= 1e-3 * (1 + abs(lhs)), (lhs, rhs)

    run_law(backend_name, 10, law)


@pytest.mark.parametrize("name", SMOOTH)
def test_derivatives_compose_with_jit(name: str, backend_name: str | None) -> None:
    def law(data: st.DataObject, rng: np.random.Generator) -> None:
        case = data.draw(SAMPLERS[name].cases("float32"))
        assume(case.differentiable)  # e.g. not a conversion to an integer type
        fun, args = restricted(case, case.args(rng), case.differentiable)
        t = [random_like(rng, a) for a in args]
        ct = random_like(rng, fun(*args))
        want_t = jax.jvp(fun, args, t)[1]
        want_ct = jax.vjp(fun, *args)[1](ct)
        # jvp and vjp inside jit, and of a jitted function
        got_t, got_ct = jax.jit(lambda a, b, c: (jax.jvp(fun, a, b)[1], jax.vjp(fun, *a)[1](c)))(args, t, ct)
        np.testing.assert_allclose(got_t, want_t, rtol=1e-5, atol=1e-6)
        for got, want in zip([*got_ct, *jax.vjp(jax.jit(fun), *args)[1](ct)], [*want_ct, *want_ct]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    run_law(backend_name, 5, law)


@pytest.mark.parametrize(
    "f, x",
    [(jnp.tanh, 0.3), (jnp.sin, 0.7), (lax.logistic, -0.4), (jnp.log1p, 0.5), (jnp.arctan, 1.5), (jnp.sqrt, 2.0),
     (lambda x: x**3, 1.5), (lambda x: 1 / x, 0.8), (jnp.cbrt, 2.0), (lax.erf_inv, 0.3), (jnp.exp2, 0.5)],
)  # fmt: skip
def test_second_and_third_order(f: Callable[..., Any], x: float) -> None:
    check_grads(f, (np.float32(x),), order=3, modes=("fwd", "rev"), atol=3e-2, rtol=3e-2)


# ---------------------------------------------------------------------------
# Primitives without a derivative


def test_nextafter_cannot_be_differentiated() -> None:
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'nextafter' not implemented"):
        jax.grad(lambda x: lax.nextafter(x, 2.0))(1.0)
    # With a zero tangent there is nothing to differentiate.
    assert jax.grad(lambda x, y: lax.nextafter(y, 2.0) + x)(1.0, 1.0) == 1.0


def test_digamma_is_differentiated_with_polygamma() -> None:
    # JAX's rule: d/dx digamma(x) = polygamma(1, x), the trigamma function (pi^2/6 at 1).
    np.testing.assert_allclose(jax.grad(lax.digamma)(1.0), np.pi**2 / 6, rtol=1e-6)
    assert "polygamma" in str(jax.make_jaxpr(jax.grad(lax.digamma))(1.0))
    # lgamma's derivative is digamma.
    np.testing.assert_allclose(jax.grad(lax.lgamma)(1.0), -0.5772157, rtol=1e-5)


@pytest.mark.parametrize(
    "f", [lax.round, lax.floor, lax.ceil, lax.sign, lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)]
)
def test_step_functions_have_zero_gradient(f: Callable[..., Any]) -> None:
    x = np.array([-1.5, -0.5, 0.0, 0.3, 2.5], np.float32)
    np.testing.assert_array_equal(jax.grad(lambda x: f(x).sum())(x), np.zeros(5, np.float32))


def test_integer_results_have_float0_tangents() -> None:
    x = np.array([0.5, 2.7], np.float32)
    out, t = jax.jvp(lambda x: x.astype(np.int32), (x,), (np.ones(2, np.float32),))
    np.testing.assert_array_equal(out, [0, 2])
    assert t.dtype == dtypes.float0
    out, t = jax.jvp(lambda x: x > 1.0, (x,), (np.ones(2, np.float32),))
    assert t.dtype == dtypes.float0 and t.shape == (2,)
    # and they contribute nothing to a gradient
    np.testing.assert_array_equal(
        jax.grad(lambda x: (x.astype(np.int32) * 2).astype(np.float32).sum() + x[0])(x), [1.0, 0.0]
    )


def test_gradient_with_respect_to_integers_is_float0() -> None:
    g = jax.grad(lambda x, n: x * lax.shift_left(n, 1).astype(np.float32), argnums=(0, 1), allow_int=True)(
        2.0, np.int32(3)
    )
    assert float(g[0]) == 6.0 and g[1].dtype == dtypes.float0


# ---------------------------------------------------------------------------
# JAX's choices at the corners


def test_where_of_an_unsafe_branch_is_nan_and_the_safe_where_is_zero() -> None:
    x = np.array([0.0, 2.0], np.float32)
    unsafe = jax.grad(lambda x: jnp.where(x > 0, jnp.log(x), 0.0).sum())(x)
    assert np.isnan(unsafe[0]) and unsafe[1] == np.float32(0.5)
    safe = jax.grad(lambda x: jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0).sum())(x)
    np.testing.assert_array_equal(safe, [0.0, 0.5])


def test_select_n_passes_the_chosen_cases_tangent() -> None:
    which = np.array([0, 2, 1], np.int32)
    g = jax.grad(lambda a, b, c: lax.select_n(which, a, b, c).sum(), argnums=(0, 1, 2))
    ga, gb, gc = g(*(np.ones(3, np.float32) for _ in range(3)))
    np.testing.assert_array_equal(ga, [1, 0, 0])
    np.testing.assert_array_equal(gb, [0, 0, 1])
    np.testing.assert_array_equal(gc, [0, 1, 0])


def test_abs_at_zero_has_derivative_one() -> None:
    np.testing.assert_array_equal(
        jax.grad(lambda x: jnp.abs(x).sum())(np.array([-2.0, 0.0, 3.0], np.float32)), [-1, 1, 1]
    )


@pytest.mark.parametrize("f", [jnp.maximum, jnp.minimum])
def test_max_and_min_split_the_tangent_at_ties(f: Callable[..., Any]) -> None:
    gx, gy = jax.grad(f, argnums=(0, 1))(1.0, 1.0)
    assert (float(gx), float(gy)) == (0.5, 0.5)
    gx, gy = jax.grad(f, argnums=(0, 1))(1.0, 2.0)
    assert (float(gx), float(gy)) == ((0.0, 1.0) if f is jnp.maximum else (1.0, 0.0))
    # relu at 0: half the slope
    assert float(jax.grad(lambda x: jnp.maximum(x, 0.0))(0.0)) == 0.5


@pytest.mark.parametrize(
    "f, x, want",
    [
        (lambda x: x**0.0, 0.0, math.nan),  # 0 * 0 ** -1, as in JAX
        (lambda x: x**2.0, 0.0, 0.0),
        (lambda x: x**0.5, 0.0, math.inf),
        (lambda x: lax.pow(x, 2), 0.0, 0.0),
        (lambda x: lax.pow(x, 0), 0.0, 0.0),  # an integer exponent 0: derivative 0, not nan
        (lambda y: lax.pow(0.0, y), 2.0, 0.0),  # log(0) replaced by log(1)
        (lambda y: lax.pow(2.0, y), 3.0, 8 * math.log(2)),
        (lambda x: lax.integer_pow(x, 0), 3.0, 0.0),
        (lambda x: lax.integer_pow(x, 1), 3.0, 1.0),
        (lambda x: lax.integer_pow(x, -3), 2.0, -3 / 16),
        (lambda x: lax.integer_pow(x, 2), 0.0, 0.0),
    ],
)
def test_pow_and_integer_pow_at_the_corners(f: Callable[..., Any], x: float, want: float) -> None:
    np.testing.assert_allclose(float(jax.grad(f)(x)), want, rtol=1e-6)


def test_clamp_tangent_passes_only_where_in_range() -> None:
    x = np.array([-2.0, -1.0, 0.5, 1.0, 3.0], np.float32)
    g_lo, g_x, g_hi = jax.grad(lambda lo, x, hi: lax.clamp(lo, x, hi).sum(), argnums=(0, 1, 2))(-1.0, x, 1.0)
    np.testing.assert_array_equal(g_x, [0, 0, 1, 0, 0])  # strictly inside only
    assert (float(g_lo), float(g_hi)) == (1.0, 1.0)  # x below lo once, above hi once
    # an array bound with scalar other operands (JAX fails here: its select needs equal shapes)
    g = jax.grad(lambda lo: lax.clamp(lo, jnp.arange(3.0), 2.0).sum())(0.5)
    assert float(g) == 1.0


def test_rem_derivatives() -> None:
    gx, gy = jax.grad(lambda x, y: lax.rem(x, y), argnums=(0, 1))(2.0, 0.7)
    assert float(gx) == 1.0
    np.testing.assert_allclose(float(gy), -2.0)  # -trunc(x / y)


def test_convert_element_type_tangents_follow_the_new_dtype() -> None:
    x = np.float32(1.5)
    out, t = jax.jvp(lambda x: lax.convert_element_type(x, np.float16), (x,), (np.float32(2.0),))
    assert t.dtype == np.float16 and float(t) == 2.0
    g = jax.grad(lambda x: lax.convert_element_type(x, np.float16).astype(np.float32) * 3)(x)
    assert g.dtype == np.float32 and float(g) == 3.0


def test_transposed_broadcasting_operands_are_summed_back() -> None:
    # A rank-0 operand and a size-1 axis: the cotangent is reduced to the operand's shape.
    x = np.ones((2, 3), np.float32)
    y = np.ones((1, 3), np.float32)
    s = np.float32(2.0)
    for op in (lax.add, lax.sub, lax.mul, lax.div):
        g = jax.grad(lambda x, y, s, op=op: op(op(x, y), s).sum(), argnums=(0, 1, 2))(x, y, s)
        assert [(a.shape, a.dtype) for a in g] == [((2, 3), np.float32), ((1, 3), np.float32), ((), np.float32)]
    gy, gs = jax.grad(lambda y, s: lax.sub(x, lax.mul(y, s)).sum(), argnums=(0, 1))(y, s)
    np.testing.assert_array_equal(gy, [[-4.0, -4.0, -4.0]])
    assert float(gs) == -6.0


def test_weak_typed_inputs_keep_float32_gradients() -> None:
    g = jax.grad(lambda x: jnp.tanh(x) * 2.0 + jnp.exp(x))(0.5)
    assert g.dtype == np.float32
    np.testing.assert_allclose(float(g), 2 * (1 - math.tanh(0.5) ** 2) + math.exp(0.5), rtol=1e-6)


# ---------------------------------------------------------------------------
# jnp functions with JAX's custom derivatives


def test_logaddexp_derivative_with_infinite_inputs() -> None:
    x = np.array([0.5, -1.0, 2.0], np.float32)
    g = jax.grad(lambda a, b: jnp.logaddexp(a, b).sum())(x, np.full(3, -np.inf, np.float32))
    np.testing.assert_array_equal(g, [1, 1, 1])
    ga, gb = jax.grad(lambda a, b: jnp.logaddexp2(a, b).sum(), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(ga, [0.5] * 3, rtol=1e-6)
    np.testing.assert_allclose(gb, [0.5] * 3, rtol=1e-6)
    check_grads(jnp.logaddexp, (x, x[::-1].copy()), order=2, modes=("fwd", "rev"), atol=3e-2, rtol=3e-2)


def test_sinc_derivatives_at_zero() -> None:
    derivatives = [jax.grad(jnp.sinc)]
    for _ in range(3):
        derivatives.append(jax.grad(derivatives[-1]))
    want = [0.0, -(math.pi**2) / 3, 0.0, math.pi**4 / 5]  # the Maclaurin coefficients times k!
    # (one jit: on XLA, compiling each derivative eagerly would take long)
    got = jax.jit(lambda x: [d(x) for d in derivatives])(0.0)
    np.testing.assert_allclose(np.array(got, np.float64), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.grad(jnp.sinc)(0.5), -4 / math.pi, rtol=1e-5)
