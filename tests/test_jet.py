"""jax.experimental.jet (minijax/experimental/jet.py) on each backend.

The law: the k-th term jet returns for f along a curve x(t) is the k-th
derivative of t -> f(x(t)) at 0, which nested jvps compute the slow way.
Hypothesis draws compositions (covering every family of rules: linear,
bilinear, the recurrences, compositions, choosers, jit and custom_jvp
calls), orders up to 4, points and series. The rest checks the interface:
output structure, zero series, factorial scaling, errors, and jet under
and over the other transformations.
tests/test_jet_oracle.py compares with real JAX.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.errors import UnexpectedTracerError
from minijax.experimental import jet as jet_module
from minijax.experimental.jet import fact, jet, jet2, zero_series

W = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.3], [-0.5, 0.2, 0.1]])


@jax.custom_jvp
def _softclip(x: Any) -> Any:
    return jnp.tanh(x) * 2.0


@_softclip.defjvp
def _softclip_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    y = jnp.tanh(x)
    return 2.0 * y, 2.0 * (1.0 - y * y) * t


@jax.custom_jvp
def _wrong_rule(x: Any) -> Any:
    return jnp.tanh(x) * 2.0


@_wrong_rule.defjvp
def _wrong_rule_jvp(primals: Any, tangents: Any) -> Any:
    # Wrong on purpose: jet must not use it (nor does JAX's), only the body.
    return _wrong_rule(primals[0]), 100.0 * tangents[0]


# Vector functions of x (shape (3,), entries in [-1, 1]), one per family of rules.
COMPOSITIONS: dict[str, Callable[[Any], Any]] = {
    "sin_exp": lambda x: jnp.sin(x) * jnp.exp(x),
    "tanh_dot": lambda x: jnp.tanh(jnp.dot(W, x)),
    "log1p_div": lambda x: jnp.log1p(x * x) / (2.0 + jnp.cos(x)),
    "sqrt_rsqrt": lambda x: jnp.sqrt(1.5 + x) + lax.rsqrt(2.0 + x),
    "logistic_sinh": lambda x: jax.nn.sigmoid(3.0 * x) * jnp.sinh(x),
    "cosh_log": lambda x: jnp.log(jnp.cosh(x) + x * x + 1.0),
    "powers": lambda x: (x + 2.0) ** 2.5 + x**3 - (x + 3.0) ** -2 + (x + 2.0) ** (x + 1.0),
    "structural": lambda x: jnp.concatenate([x, x[::-1] * 2.0]).reshape(2, 3).T @ jnp.array([1.0, -1.0]),
    "reductions": lambda x: jnp.sum(jnp.exp(x)) * jnp.cumsum(x) + jnp.max(x) + jnp.min(x * x + x),
    "cumulative": lambda x: jnp.cumprod(x + 2.0) + lax.cummax(x, 0) + lax.cummin(jnp.sin(x), 0),
    "select": lambda x: jnp.where(x > 0.1, jnp.exp(x), x**2) + jnp.abs(x - 0.05) + jnp.maximum(x, 0.2 * x),
    "special": lambda x: lax.erf(x) + lax.erfc(x / 2.0) + lax.erf_inv(x / 2.0) + lax.atan2(x, 2.0 + x * x),
    "inverse_hyperbolic": lambda x: lax.asinh(x) + lax.acosh(2.0 + x) + lax.atanh(x / 2.0) + jnp.expm1(x),
    "jit": lambda x: jax.jit(lambda y: jnp.sin(y) ** 2 * jnp.exp(-y))(x) * x,
    "custom_jvp": lambda x: _softclip(x) * jax.nn.softplus(x),
    "indexing": lambda x: (
        lax.dynamic_slice(jnp.outer(x, x), (1, 0), (2, 2)).sum() * x[1] + jnp.zeros(3).at[1].add(x[0] ** 2)
    ),
    "clamp_rem": lambda x: lax.clamp(-0.5, x, 0.5) ** 2 + lax.rem(x + 3.0, 2.0) ** 2,
}


def nested_derivative(g: Callable[[Any], Any], k: int) -> Callable[[Any], Any]:
    """t -> the k-th derivative of g at t, by k nested jvps."""
    if k == 0:
        return g
    inner = nested_derivative(g, k - 1)
    return lambda t: jax.jvp(inner, (t,), (jnp.ones_like(t),))[1]


def taylor_by_jvp(f: Callable[..., Any], primals: list[Any], series: list[list[Any]]) -> tuple[Any, list[Any]]:
    """What jet(f, primals, series) must give, by nested jvp of f along the curve."""
    order = len(series[0])

    def along_curve(t: Any) -> Any:
        moved = [
            x + sum(t ** (i + 1) * s[i] / math.factorial(i + 1) for i in range(order)) for x, s in zip(primals, series)
        ]
        return f(*moved)

    zero = jnp.asarray(0.0, dtype=jnp.asarray(primals[0]).dtype)
    return f(*primals), [nested_derivative(along_curve, k)(zero) for k in range(1, order + 1)]


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
@settings(max_examples=4)
@given(order=st.integers(1, 4), seed=st.integers(0, 2**16))
@example(order=4, seed=1)
def test_jet_terms_equal_nested_jvps(name: str, order: int, seed: int) -> None:
    f = COMPOSITIONS[name]
    rng = np.random.default_rng(seed)
    with jax.enable_x64():
        x = jnp.asarray(rng.uniform(-1.0, 1.0, 3))
        series = [[jnp.asarray(rng.normal(size=3)) for _ in range(order)]]
        y, terms = jet(f, (x,), series)
        expected_y, expected_terms = taylor_by_jvp(f, [x], series)
        assert len(terms) == order
        np.testing.assert_allclose(np.asarray(y), np.asarray(expected_y), rtol=1e-9, atol=1e-9)
        for k, (got, want) in enumerate(zip(terms, expected_terms), start=1):
            np.testing.assert_allclose(
                np.asarray(got), np.asarray(want), rtol=1e-7, atol=1e-7, err_msg=f"term {k} of {name}"
            )


def test_docstring_example_faa_di_bruno() -> None:
    # JAX's docstring example: sin(z^3) at z = 0.5 from the series of z^3.
    h0, h1, h2 = 0.5**3.0, 3.0 * 0.5**2.0, 6.0 * 0.5
    f0, (f1, f2) = jet(jnp.sin, (h0,), ((h1, h2),))
    np.testing.assert_allclose(f0, np.sin(h0), rtol=1e-6)
    np.testing.assert_allclose(f1, np.cos(h0) * h1, rtol=1e-6)
    np.testing.assert_allclose(f2, -np.sin(h0) * h1**2 + np.cos(h0) * h2, rtol=1e-6)


def test_factorial_scaling() -> None:
    x = jnp.float32(0.3)
    scaled = jet(jnp.exp, (x,), ([1.0, 0.0, 0.0],))[1]
    coefficients = jet2(jnp.exp, (x,), ([1.0, 0.0, 0.0],))[1]
    # Along x + t, exp's derivatives are all exp(x); its coefficients exp(x)/k!.
    np.testing.assert_allclose(np.asarray(scaled), [np.exp(0.3)] * 3, rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(coefficients), [np.exp(0.3) / math.factorial(k) for k in (1, 2, 3)], rtol=1e-5
    )
    np.testing.assert_allclose(np.asarray(fact(4)), 24.0, rtol=1e-5)


def test_output_structure_and_zero_series() -> None:
    x = jnp.float32(0.5)
    primals, series = jet(lambda x: {"a": x, "b": [x * x, jnp.float32(3.0)]}, (x,), ((1.0, 2.0),))
    assert set(primals) == {"a", "b"} and len(primals["b"]) == 2
    np.testing.assert_allclose(np.asarray(series["b"][0]), [1.0, 4.0], rtol=1e-6)
    # An output the series do not reach gets zero terms, never the zero_series marker.
    const_terms = series["b"][1]
    assert const_terms is not zero_series and len(const_terms) == 2
    assert all(float(t) == 0.0 for t in const_terms)


def test_instantiated_zero_equals_computed_zero() -> None:
    # JAX's test_inst_zero: a constant output and 2 + 0 x have equal series.
    x = jnp.ones(1)
    series = ([jnp.ones_like(x)] * 3,)
    f_primals, f_series = jet(lambda x: jnp.full_like(x, 2.0), (x,), series)
    g_primals, g_series = jet(lambda x: 2.0 + 0 * x, (x,), series)
    assert f_series is not zero_series
    np.testing.assert_array_equal(np.asarray(f_primals), np.asarray(g_primals))
    np.testing.assert_array_equal(np.asarray(f_series), np.asarray(g_series))


def test_order_zero() -> None:
    y, terms = jet(jnp.sin, (jnp.float32(0.5),), ((),))
    assert terms == [] and float(y) == pytest.approx(np.sin(0.5), rel=1e-6)


def test_bad_series_raise_jaxs_errors() -> None:
    x = jnp.float32(0.5)
    with pytest.raises(ValueError, match="jet terms have inconsistent lengths for different arguments"):
        jet(lambda x, y: x * y, (x, x), ((1.0, 2.0), (1.0,)))
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        jet(lambda d: d["a"], ({"a": x},), (({"a": 1.0},),))
    with pytest.raises(ValueError, match="term 1 for argument 0 is not an array"):
        jet(jnp.sin, (x,), ((1.0, (2.0, 3.0)),))


@pytest.mark.parametrize(
    ("name", "f"),
    [
        ("tan", jnp.tan),
        ("lgamma", lax.lgamma),
        ("cond", lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)),
        ("scan", lambda x: lax.scan(lambda c, _: (c * 2.0, c), x, None, length=3)[0]),
        ("while", lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c * 2.0, x)),
    ],
)
def test_primitive_without_rule_raises_keyerror(name: str, f: Callable[[Any], Any]) -> None:
    # JAX's jet has no rule for these either and raises KeyError(primitive).
    with pytest.raises(KeyError) as info:
        jet(f, (jnp.float32(0.5),), ((1.0, 2.0),))
    assert str(info.value) == name
    assert any(f"no Taylor rule for the primitive '{name}'" in note for note in info.value.__notes__)


def test_primitive_without_rule_runs_when_no_series_reaches_it() -> None:
    # Only operands carrying a series need a rule: tan of a constant is fine.
    y, (t1,) = jet(lambda x: x * jnp.tan(jnp.float32(0.3)), (jnp.float32(2.0),), ((1.0,),))
    np.testing.assert_allclose([float(y), float(t1)], [2.0 * np.tan(0.3), np.tan(0.3)], rtol=1e-6)


def test_custom_rules_are_ignored_the_body_is_differentiated() -> None:
    x = jnp.float32(0.4)
    series = ((1.0, 0.5, -1.0),)
    for f in (_wrong_rule, jax.jit(_wrong_rule), jax.jit(lambda y: _wrong_rule(y) + 0.0)):
        y, terms = jet(f, (x,), series)
        y_ref, terms_ref = jet(lambda y: jnp.tanh(y) * 2.0, (x,), series)
        np.testing.assert_allclose(np.asarray([y, *terms]), np.asarray([y_ref, *terms_ref]), rtol=1e-6)

    @jax.custom_vjp
    def g(x: Any) -> Any:
        return jnp.sin(x)

    g.defvjp(lambda x: (g(x), x), lambda r, c: (100.0 * c,))
    _, terms = jet(g, (x,), series)
    _, terms_ref = jet(jnp.sin, (x,), series)
    np.testing.assert_allclose(np.asarray(terms), np.asarray(terms_ref), rtol=1e-6)


def test_jit_stays_a_jit_of_the_jet() -> None:
    f = jax.jit(lambda y: jnp.sin(y) * y)
    jaxpr = jax.make_jaxpr(lambda x, t: jet(f, (x,), ((t, t),)))(1.0, 1.0)
    prims = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert "jit" in prims
    inner = next(e for e in jaxpr.jaxpr.eqns if e.primitive.name == "jit").params["jaxpr"]
    assert len(inner.in_avals) == 3 and len(inner.out_avals) == 3  # the primal and two terms, in and out


def test_jet_under_jit_vmap_grad() -> None:
    def first_term(x: Any, t: Any) -> Any:
        return jet(jnp.sin, (x,), ((t,),))[1][0]

    xs = jnp.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(np.asarray(jax.vmap(first_term)(xs, jnp.ones(3))), np.cos([0.1, 0.2, 0.3]), rtol=1e-6)
    np.testing.assert_allclose(float(jax.jit(first_term)(0.5, 2.0)), 2 * np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(float(jax.grad(first_term)(0.5, 1.0)), -np.sin(0.5), rtol=1e-6)


def test_transformations_inside_jet() -> None:
    x = jnp.float32(0.5)
    # grad inside jet: the series flows through the transposed program (JAX's test_add_any).
    y, (t1, t2) = jet(lambda x: jax.grad(jnp.sin)(x), (x,), ((1.0, 0.0),))
    np.testing.assert_allclose([float(y), float(t1), float(t2)], [np.cos(0.5), -np.sin(0.5), -np.cos(0.5)], rtol=1e-6)
    # nested jet: the inner one's series is the outer one's value.
    _, (d1,) = jet(lambda x: jet(jnp.sin, (x,), ((1.0,),))[1][0], (x,), ((1.0,),))
    np.testing.assert_allclose(float(d1), -np.sin(0.5), rtol=1e-6)
    # vmap inside jet
    _, (v1,) = jet(lambda x: jax.vmap(jnp.sin)(x), (jnp.ones(2),), ((jnp.ones(2),),))
    np.testing.assert_allclose(np.asarray(v1), np.cos([1.0, 1.0]), rtol=1e-6)


def test_scatter_add_through_grad_of_jacfwd() -> None:
    # JAX's test_scatter_add (issue 5365): grad(jacfwd) of indexing, then jet over it.
    def h(eps: Any) -> Any:
        x = jnp.array([1.0, 1.0])
        mu = eps * x

        def F(t: Any) -> Any:
            z = x + t * mu
            return z[0] ** 5 + z[1] ** 5

        return jax.grad(jax.jacfwd(F))(0.0)

    y, terms = jet(h, (0.0,), ([1.0, 2.0, 3.0],))
    y_ref, terms_ref = taylor_by_jvp(h, [jnp.float32(0.0)], [[1.0, 2.0, 3.0]])
    np.testing.assert_allclose(np.asarray([y, *terms]), np.asarray([y_ref, *terms_ref]), rtol=1e-3, atol=1e-3)


def test_leaked_jet_tracer_is_reported() -> None:
    leaked: list[Any] = []

    def f(x: Any) -> Any:
        leaked.append(x)
        return x

    jet(f, (jnp.float32(1.0),), ((1.0,),))
    with pytest.raises(UnexpectedTracerError):
        jnp.sin(leaked[0])


def test_rules_registered_for_jaxs_primitives() -> None:
    names = {p.name for p in jet_module.jet_rules}
    for name in ["add", "mul", "dot_general", "exp", "log", "div", "sin", "cos", "tanh", "logistic", "pow",
                 "integer_pow", "sqrt", "rsqrt", "erf_inv", "reduce_max", "cumsum", "cumprod", "select_n",
                 "gather", "scatter-add", "dynamic_slice", "max", "min", "abs", "clamp"]:  # fmt: skip
        assert name in names, name
    for name in ["tan", "lgamma", "digamma", "reduce_prod", "argmax", "sort", "cond", "scan", "while"]:
        assert name not in names, name  # JAX has none: KeyError, as JAX


@pytest.mark.parametrize("op", [lax.max, lax.min])
def test_max_min_ties_average_the_series(op: Callable[[Any, Any], Any]) -> None:
    # Where the operands tie, JAX's rule takes the average of their terms.
    y, (t1, t2) = jet(op, (jnp.float32(1.0), jnp.float32(1.0)), ([1.0, 4.0], [3.0, 0.0]))
    assert [float(y), float(t1), float(t2)] == [1.0, 2.0, 2.0]
    _, (u1,) = jet(op, (jnp.float32(1.0), jnp.float32(2.0)), ([1.0], [3.0]))
    assert float(u1) == (3.0 if op is lax.max else 1.0)


def test_registering_a_rule_for_a_primitive_without_one() -> None:
    tan_p = jet_module.core.primitive_registry["tan"]
    assert tan_p not in jet_module.jet_rules
    try:
        jet_module.def_comp(tan_p, lambda x: lax.sin(x) / lax.cos(x))
        _, (t1, t2) = jet(jnp.tan, (0.3,), ([1.0, 0.0],))
    finally:
        del jet_module.jet_rules[tan_p]
    sec2 = 1 / np.cos(0.3) ** 2
    np.testing.assert_allclose([float(t1), float(t2)], [sec2, 2 * np.tan(0.3) * sec2], rtol=1e-5)


def test_values_inside_are_tracers_python_control_flow_refuses() -> None:
    # As in JAX (and as under jit): even a constant computed inside is a tracer.
    from minijax.errors import ConcretizationTypeError, TracerBoolConversionError

    x = (jnp.float32(0.5),)
    with pytest.raises(TracerBoolConversionError):
        jet(lambda x: x if x > 0 else -x, x, ((1.0,),))
    with pytest.raises(TracerBoolConversionError):
        jet(lambda x: x if jnp.float32(1.0) > 0 else -x, x, ((1.0,),))
    with pytest.raises(ConcretizationTypeError):
        jet(lambda x: x * int(jnp.argmax(jnp.arange(3))), x, ((1.0,),))


# One function per linear/structural primitive: a linear f maps each term on its own.
LINEAR: dict[str, Callable[[Any], Any]] = {
    "pad": lambda x: lax.pad(x, 0.0, [(1, 0, 1), (0, 2, 0)]),
    "rev": lambda x: lax.rev(x, (0,)),
    "squeeze": lambda x: lax.squeeze(x[None], (0,)),
    "transpose": lambda x: lax.transpose(x, (1, 0)),
    "reduce_window_sum": lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), "VALID"),
    "split": lambda x: jnp.split(x, 3, axis=1)[1],
    "stack": lambda x: jnp.stack([x, -x]),
    "convert_element_type": lambda x: lax.convert_element_type(x, np.float16),
    "broadcast_in_dim": lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)),
    "copy": lambda x: jnp.copy(x),
    "cumsum": lambda x: lax.cumsum(x, 1, reverse=True),
    "reduce_sum": lambda x: lax.reduce_sum(x, (0,)),
    "slice": lambda x: lax.slice(x, (0, 1), (2, 3)),
    "concatenate": lambda x: lax.concatenate([x, 2.0 * x], 0),
    "reshape": lambda x: lax.reshape(x, (3, 2)),
    "neg_sub_add": lambda x: -x - (x + x),
    "dynamic_update_slice": lambda x: lax.dynamic_update_slice(x, x[:1, :2], (1, 1)),
}


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_linear_primitives_map_each_term(name: str) -> None:
    f = LINEAR[name]
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(2, 3)).astype(np.float32))
    terms = [jnp.asarray(rng.normal(size=(2, 3)).astype(np.float32)) for _ in range(3)]
    # Plain coefficients (jet2): no factorial scaling to round in float16.
    y, out = jet2(f, (x,), (terms,))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(f(x)))
    for got, t in zip(out, terms):
        np.testing.assert_allclose(np.asarray(got), np.asarray(f(t)), rtol=1e-6, atol=1e-6)
        assert got.dtype == f(t).dtype


@pytest.mark.parametrize(
    "f", [jnp.floor, jnp.ceil, jnp.round, jnp.sign, lambda x: (x > 0).astype(np.float32), lax.stop_gradient]
)
def test_piecewise_constant_primitives_have_zero_terms(f: Callable[[Any], Any]) -> None:
    x = jnp.array([-1.3, 0.4, 2.6])
    y, terms = jet(f, (x,), ([jnp.ones(3), jnp.ones(3)],))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(f(x)))
    assert all(not np.asarray(t).any() for t in terms)
