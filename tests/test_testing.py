"""minijax.testing itself: check_grads catches wrong derivatives and passes right ones;
the strategies draw what they promise; every primitive has a sampler, and its cases are valid."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax
import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.config import enable_x64
from minijax.testing import DEFAULT_EPS, check_grads, check_jvp, check_vjp, default_eps, numerical_jvp, strategies
from minijax.testing.samplers import SAMPLERS, UNSAMPLED, missing_samplers, public_primitive_names, sampler_for

F32 = np.dtype(np.float32)


def f32(*values: float) -> np.ndarray[Any, Any]:
    return np.array(values, np.float32)


# ---------------------------------------------------------------------------
# check_grads passes right derivatives ...


def test_check_grads_passes_correct_derivatives_up_to_order_2():
    check_grads(lambda x: jnp.sin(x) * x**2, (f32(0.3, -1.2, 2.0),), order=2)
    check_grads(lambda x, y: jnp.tanh(x @ y), (np.ones((2, 3), np.float32) / 3, f32(0.5, -0.2, 1.0)), order=2)


def test_check_grads_takes_pytrees_python_floats_and_every_mode():
    def f(params, x):
        return {"out": params["w"] * jnp.exp(x) + params["b"], "aux": (jnp.cos(x),)}

    check_grads(f, ({"w": f32(1.5, 2.0), "b": 0.5}, f32(0.1, -0.4)), order=1, modes=("fwd", "rev", "lin"))
    check_grads(lambda x: x * x * x, (1.5,), order=2, modes=("lin",))


def test_check_grads_in_float64_uses_the_tight_tolerance():
    with enable_x64(True):
        x = np.array([0.3, 1.7])
        assert default_eps((x,)) == DEFAULT_EPS[np.dtype(np.float64)]
        check_grads(lambda x: jnp.log1p(x) / (1 + x * x), (x,), order=2)


def test_check_grads_works_in_float16_where_a_fixed_step_of_1e_4_cannot():
    x = np.array([1.0, 0.25], np.float16)
    check_grads(jnp.sin, (x,), order=1)
    # JAX's fixed step: 1 + 1e-4 rounds to 1 in float16, so the difference would measure nothing.
    with pytest.raises(ValueError, match="pass a larger eps"):
        check_grads(jnp.sin, (x,), order=1, modes=("fwd",), eps=1e-4)


def test_integer_outputs_need_float0_tangents_only():
    check_grads(lambda x: (jnp.sin(x), jnp.argmax(x)), (f32(0.1, 2.0, -1.0),), order=1)


def test_numerical_jvp_is_exact_on_linear_functions():
    x, t = f32(1.0, 2.0, 3.0), f32(0.5, -1.0, 2.0)
    got = numerical_jvp(lambda x: 3 * x, (x,), (t,))
    # Along the direction the rounded points moved in: t up to float32 rounding of x ± eps·t.
    np.testing.assert_allclose(got, 3 * t, rtol=1e-3)
    with enable_x64(True):
        got = numerical_jvp(lambda x: 3 * x, (x.astype(np.float64),), (t.astype(np.float64),))
        np.testing.assert_allclose(got, 3 * t, rtol=1e-9)


# ---------------------------------------------------------------------------
# ... and catches wrong ones


def _cube_with_jvp(factor: float) -> Any:
    @minijax.custom_jvp
    def cube(x):
        return x * x * x

    @cube.defjvp
    def cube_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return cube(x), factor * x * x * t

    return cube


def test_check_grads_catches_a_wrong_custom_jvp_rule_in_both_modes():
    x = (f32(0.5, 1.5, -2.0),)
    check_grads(_cube_with_jvp(3.0), x, order=1)  # the right rule
    wrong = _cube_with_jvp(2.0)
    with pytest.raises(AssertionError, match="JVP tangent"):
        check_grads(wrong, x, order=1, modes=("fwd",))
    with pytest.raises(AssertionError, match="VJP cotangent projection"):
        check_grads(wrong, x, order=1, modes=("rev",))
    with pytest.raises(AssertionError, match="LIN tangent"):
        check_grads(wrong, x, order=1, modes=("lin",))


def test_order_2_catches_a_rule_whose_first_derivative_is_right_but_not_differentiable():
    @minijax.custom_jvp
    def sin(x):
        return jnp.sin(x)

    @sin.defjvp
    def sin_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return sin(x), jnp.cos(lax.stop_gradient(x)) * t  # the second derivative is lost

    x = (f32(0.4, 1.1),)
    check_grads(sin, x, order=1)
    with pytest.raises(AssertionError, match="JVP of JVP"):
        check_grads(sin, x, order=2, modes=("fwd",))


def test_check_grads_catches_a_wrong_custom_vjp_backward():
    def make(scale: float) -> Any:
        @minijax.custom_vjp
        def square(x):
            return x * x

        square.defvjp(lambda x: (x * x, x), lambda x, g: (scale * x * g,))
        return square

    x = (f32(0.5, -1.5),)
    check_grads(make(2.0), x, order=1, modes=("rev",))
    with pytest.raises(AssertionError, match="cotangent projection"):
        check_grads(make(-2.0), x, order=1, modes=("rev",))


def test_check_jvp_and_check_vjp_take_the_transform_explicitly():
    f = jnp.exp
    check_jvp(f, lambda p, t: minijax.jvp(f, p, t), (f32(0.2, 0.7),))
    check_vjp(f, lambda *p: minijax.vjp(f, *p), (f32(0.2, 0.7),))
    with pytest.raises(AssertionError, match="tangent"):
        check_jvp(f, lambda p, t: (f(*p), minijax.jvp(jnp.sin, p, t)[1]), (f32(0.2, 0.7),))
    with pytest.raises(AssertionError, match="primal"):
        check_jvp(f, lambda p, t: minijax.jvp(jnp.sin, p, t), (f32(0.2, 0.7),))


def test_tolerances_are_what_the_caller_asks():
    # Central differences are not exact for exp: a tolerance of 0 must fail, a dict entry applies.
    x = (f32(1.0, 2.0),)
    with pytest.raises(AssertionError, match="float32"):
        check_grads(jnp.exp, x, order=1, modes=("fwd",), atol=0.0, rtol=0.0)
    check_grads(jnp.exp, x, order=1, modes=("fwd",), atol={np.float32: 1e-2}, rtol={np.float32: 1e-2})


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(TypeError, match="Close over integer"):
        check_grads(lambda x, n: x * n, (f32(1.0), np.int32(2)), order=1)
    with pytest.raises(ValueError, match="unknown modes"):
        check_grads(jnp.sin, (f32(1.0),), order=1, modes=("forward",))
    with pytest.raises(ValueError, match="order"):
        check_grads(jnp.sin, (f32(1.0),), order=0)


# ---------------------------------------------------------------------------
# strategies


@pytest.mark.single_backend
@settings(max_examples=30)
@given(st.data())
def test_arrays_have_the_dtype_and_shape_asked(data):
    dtype = data.draw(strategies.dtypes())
    shape = data.draw(strategies.shapes(max_rank=3, max_side=3))
    x = data.draw(strategies.arrays(dtype, shape))
    assert x.dtype == dtype and x.shape == shape
    y = data.draw(strategies.arrays_in(dtype, shape, -2, 5))
    assert y.dtype == dtype and y.shape == shape
    if dtype != np.bool_:
        assert np.all((y.astype(np.float64) >= -2) & (y.astype(np.float64) <= 5))


@pytest.mark.single_backend
def test_edge_values_are_drawn():
    seen: set[float] = set()

    # Derandomized: a fixed sequence of draws, so the check cannot flake.
    @settings(max_examples=200, database=None, derandomize=True)
    @given(strategies.arrays(np.float32, (8,)))
    def collect(x):
        seen.update(float(v) for v in x)

    collect()
    assert 0.0 in seen and any(not np.isfinite(v) for v in seen)
    assert np.float32(3.0) in strategies.edge_values(np.float32)
    assert np.iinfo(np.int8).min in strategies.edge_values(np.int8)


@pytest.mark.single_backend
@settings(max_examples=30)
@given(st.data())
def test_broadcastable_shapes_broadcast(data):
    shape = data.draw(strategies.shapes())
    operand = data.draw(strategies.broadcastable_shapes(shape))
    assert np.broadcast_shapes(operand, shape) == shape


@pytest.mark.single_backend
def test_dtype_list_follows_x64():
    assert np.dtype(np.float64) not in strategies.dtype_list(["float"])
    with enable_x64(True):
        assert np.dtype(np.float64) in strategies.dtype_list(["float"])
    assert strategies.dtype_list(["bool"]) == [np.dtype(np.bool_)]
    with pytest.raises(ValueError, match="unknown kinds"):
        strategies.dtype_list(["complex"])


# ---------------------------------------------------------------------------
# samplers


@pytest.mark.single_backend
def test_every_primitive_has_a_sampler():
    assert missing_samplers() == [], "add a sampler to minijax/testing/samplers_*.py (or a reason to UNSAMPLED)"


@pytest.mark.single_backend
def test_samplers_and_exclusions_name_existing_primitives_once():
    known = set(public_primitive_names())
    assert set(SAMPLERS) <= known, sorted(set(SAMPLERS) - known)
    assert not set(SAMPLERS) & set(UNSAMPLED)
    with pytest.raises(KeyError, match="not sampled on purpose"):
        sampler_for("jit")


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampled_cases_are_valid(name, backend_name):
    """Operands have the case's avals, the primitive accepts them, and the flags agree with the sampler's."""
    sampler = SAMPLERS[name]

    @settings(max_examples=1 if backend_name == "xla" else max(3, settings().max_examples // 8))
    @given(st.data())
    def check(data):
        dtype = data.draw(strategies.dtypes(sampler.kinds))
        case = data.draw(sampler.cases(dtype))
        args = case.args(data.draw(strategies.seeds()))
        assert [(a.shape, a.dtype) for a in args] == [(v.shape, v.dtype) for v in case.avals]
        out = case.apply(*args)
        expected = case.prim.abstract_eval(*case.avals, **case.params)
        for o, e in zip(out if case.prim.multiple_results else [out], expected if case.prim.multiple_results else [expected]):
            assert (o.shape, o.dtype) == (e.shape, e.dtype)
        assert sampler.linear or not case.linear
        assert sampler.differentiable or not case.differentiable
        for group in case.linear:
            assert all(dtypes.issubdtype(case.avals[i].dtype, np.floating) for i in group)

    check()


def test_a_sampler_refuses_a_dtype_it_does_not_take():
    with pytest.raises(ValueError, match="not one of its kinds"):
        SAMPLERS["exp"].cases(np.int32)
