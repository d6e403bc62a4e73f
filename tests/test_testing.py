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


def test_check_grads_passes_correct_derivatives_up_to_order_2() -> None:
    check_grads(lambda x: jnp.sin(x) * x**2, (f32(0.3, -1.2, 2.0),), order=2)
    check_grads(lambda x, y: jnp.tanh(x @ y), (np.ones((2, 3), np.float32) / 3, f32(0.5, -0.2, 1.0)), order=2)


def test_check_grads_takes_pytrees_python_floats_and_every_mode() -> None:
    def f(params: Any, x: Any) -> Any:
        return {"out": params["w"] * jnp.exp(x) + params["b"], "aux": (jnp.cos(x),)}

    check_grads(f, ({"w": f32(1.5, 2.0), "b": 0.5}, f32(0.1, -0.4)), order=1, modes=("fwd", "rev", "lin"))
    check_grads(lambda x: x * x * x, (1.5,), order=2, modes=("lin",))


def test_check_grads_in_float64_uses_the_tight_tolerance() -> None:
    with enable_x64(True):
        x = np.array([0.3, 1.7])
        assert default_eps((x,)) == DEFAULT_EPS[np.dtype(np.float64)]
        check_grads(lambda x: jnp.log1p(x) / (1 + x * x), (x,), order=2)


def test_check_grads_works_in_float16_where_a_fixed_step_of_1e_4_cannot() -> None:
    x = np.array([1.0, 0.25], np.float16)
    check_grads(jnp.sin, (x,), order=1)
    # JAX's fixed step: 1 + 1e-4 rounds to 1 in float16, so the difference would measure nothing.
    with pytest.raises(ValueError, match="pass a larger eps"):
        check_grads(jnp.sin, (x,), order=1, modes=("fwd",), eps=1e-4)


def test_integer_outputs_need_float0_tangents_only() -> None:
    check_grads(lambda x: (jnp.sin(x), jnp.argmax(x)), (f32(0.1, 2.0, -1.0),), order=1)


def test_numerical_jvp_is_exact_on_linear_functions() -> None:
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
    def cube(x: Any) -> Any:
        return x * x * x

    @cube.defjvp
    def cube_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return cube(x), factor * x * x * t

    return cube


def test_check_grads_catches_a_wrong_custom_jvp_rule_in_both_modes() -> None:
    x = (f32(0.5, 1.5, -2.0),)
    check_grads(_cube_with_jvp(3.0), x, order=1)  # the right rule
    wrong = _cube_with_jvp(2.0)
    with pytest.raises(AssertionError, match="JVP tangent"):
        check_grads(wrong, x, order=1, modes=("fwd",))
    with pytest.raises(AssertionError, match="VJP cotangent projection"):
        check_grads(wrong, x, order=1, modes=("rev",))
    with pytest.raises(AssertionError, match="LIN tangent"):
        check_grads(wrong, x, order=1, modes=("lin",))


def test_order_2_catches_a_rule_whose_first_derivative_is_right_but_not_differentiable() -> None:
    @minijax.custom_jvp
    def sin(x: Any) -> Any:
        return jnp.sin(x)

    @sin.defjvp
    def sin_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return sin(x), jnp.cos(lax.stop_gradient(x)) * t  # the second derivative is lost

    x = (f32(0.4, 1.1),)
    check_grads(sin, x, order=1)
    with pytest.raises(AssertionError, match="JVP of JVP"):
        check_grads(sin, x, order=2, modes=("fwd",))


def test_check_grads_catches_a_wrong_custom_vjp_backward() -> None:
    def make(scale: float) -> Any:
        @minijax.custom_vjp
        def square(x: Any) -> Any:
            return x * x

        square.defvjp(lambda x: (x * x, x), lambda x, g: (scale * x * g,))
        return square

    x = (f32(0.5, -1.5),)
    check_grads(make(2.0), x, order=1, modes=("rev",))
    with pytest.raises(AssertionError, match="cotangent projection"):
        check_grads(make(-2.0), x, order=1, modes=("rev",))


def test_check_jvp_and_check_vjp_take_the_transform_explicitly() -> None:
    f = jnp.exp
    check_jvp(f, lambda p, t: minijax.jvp(f, p, t), (f32(0.2, 0.7),))
    check_vjp(f, lambda *p: minijax.vjp(f, *p), (f32(0.2, 0.7),))
    with pytest.raises(AssertionError, match="tangent"):
        check_jvp(f, lambda p, t: (f(*p), minijax.jvp(jnp.sin, p, t)[1]), (f32(0.2, 0.7),))
    with pytest.raises(AssertionError, match="primal"):
        check_jvp(f, lambda p, t: minijax.jvp(jnp.sin, p, t), (f32(0.2, 0.7),))


def test_tolerances_are_what_the_caller_asks() -> None:
    # Central differences are not exact for exp: a tolerance of 0 must fail, a dict entry applies.
    x = (f32(1.0, 2.0),)
    with pytest.raises(AssertionError, match="float32"):
        check_grads(jnp.exp, x, order=1, modes=("fwd",), atol=0.0, rtol=0.0)
    check_grads(jnp.exp, x, order=1, modes=("fwd",), atol={np.float32: 1e-2}, rtol={np.float32: 1e-2})


def test_bad_arguments_raise_clear_errors() -> None:
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
def test_arrays_have_the_dtype_and_shape_asked(data: st.DataObject) -> None:
    dtype = data.draw(strategies.dtypes())
    shape = data.draw(strategies.shapes(max_rank=3, max_side=3))
    x = data.draw(strategies.arrays(dtype, shape))
    assert x.dtype == dtype and x.shape == shape
    y = data.draw(strategies.arrays_in(dtype, shape, -2, 5))
    assert y.dtype == dtype and y.shape == shape
    if dtype != np.bool_:
        assert np.all((y.astype(np.float64) >= -2) & (y.astype(np.float64) <= 5))


@pytest.mark.single_backend
def test_edge_values_are_drawn() -> None:
    seen: set[float] = set()

    # Derandomized: a fixed sequence of draws, so the check cannot flake.
    @settings(max_examples=200, database=None, derandomize=True)
    @given(strategies.arrays(np.float32, (8,)))
    def collect(x: Any) -> None:
        seen.update(float(v) for v in x)

    collect()
    assert 0.0 in seen and any(not np.isfinite(v) for v in seen)
    assert np.float32(3.0) in strategies.edge_values(np.float32)
    assert np.iinfo(np.int8).min in strategies.edge_values(np.int8)


@pytest.mark.single_backend
@settings(max_examples=30)
@given(st.data())
def test_broadcastable_shapes_broadcast(data: st.DataObject) -> None:
    shape = data.draw(strategies.shapes())
    operand = data.draw(strategies.broadcastable_shapes(shape))
    assert np.broadcast_shapes(operand, shape) == shape


@pytest.mark.single_backend
def test_dtype_list_follows_x64() -> None:
    assert np.dtype(np.float64) not in strategies.dtype_list(["float"])
    with enable_x64(True):
        assert np.dtype(np.float64) in strategies.dtype_list(["float"])
    assert strategies.dtype_list(["bool"]) == [np.dtype(np.bool_)]
    with pytest.raises(ValueError, match="unknown kinds"):
        strategies.dtype_list(["complex"])


# ---------------------------------------------------------------------------
# samplers


@pytest.mark.single_backend
def test_every_primitive_has_a_sampler() -> None:
    assert missing_samplers() == [], "add a sampler to minijax/testing/samplers_*.py (or a reason to UNSAMPLED)"


@pytest.mark.single_backend
def test_samplers_and_exclusions_name_existing_primitives_once() -> None:
    known = set(public_primitive_names())
    assert set(SAMPLERS) <= known, sorted(set(SAMPLERS) - known)
    assert not set(SAMPLERS) & set(UNSAMPLED)
    with pytest.raises(KeyError, match="not sampled on purpose"):
        sampler_for("jit")


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampled_cases_are_valid(name: str, backend_name: str) -> None:
    """Operands have the case's avals, the primitive accepts them, and the flags agree with the sampler's."""
    sampler = SAMPLERS[name]

    @settings(max_examples=1 if backend_name == "xla" else max(3, settings().max_examples // 8))
    @given(st.data())
    def check(data: st.DataObject) -> None:
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
            assert all(dtypes.issubdtype(case.avals[i].dtype, np.inexact) for i in group)

    check()


def test_a_sampler_refuses_a_dtype_it_does_not_take() -> None:
    with pytest.raises(ValueError, match="not one of its kinds"):
        SAMPLERS["exp"].cases(np.int32)


# ---------------------------------------------------------------------------
# random programs, nested transformations, backends against each other

from minijax.jaxpr_check import check_jaxpr  # noqa: E402
from minijax.jaxpr_parse import parse_jaxpr  # noqa: E402
from minijax.testing import assert_backends_agree, nested_programs, programs, random_jaxprs  # noqa: E402
from minijax.testing.laws import as_function  # noqa: E402


@pytest.mark.single_backend
@settings(max_examples=20)
@given(random_jaxprs(), strategies.seeds())
def test_random_jaxprs_are_well_typed_and_print_back(program: programs.RandomProgram, rng: np.random.Generator) -> None:
    check_jaxpr(program.closed)  # raises JaxprTypeError on any ill-typed equation
    assert 1 <= len(program.closed.jaxpr.eqns) <= 6
    text = str(program.closed)
    assert str(parse_jaxpr(text)) == text
    args = program.args(rng)
    assert [(a.shape, a.dtype) for a in args] == [(v.aval.shape, v.aval.dtype) for v in program.closed.jaxpr.invars]


@pytest.mark.single_backend
def test_random_jaxprs_chain_results_and_honour_the_vocabulary() -> None:
    found = []

    @settings(max_examples=30, derandomize=True)
    @given(random_jaxprs(vocabulary=["add", "mul", "neg", "sin"], dtype=np.float32, min_eqns=3, max_eqns=5))
    def collect(program: programs.RandomProgram) -> None:
        found.append(program.closed.jaxpr)

    collect()
    assert {e.primitive.name for j in found for e in j.eqns} <= {"add", "mul", "neg", "sin"}
    # Some equation reads another's result (chains), and no result of sin is read (it ends its chain).
    results = [{v for e in j.eqns for v in e.outvars} for j in found]
    assert any(set(e.invars) & r for j, r in zip(found, results) for e in j.eqns)
    for j in found:
        sines = {v for e in j.eqns if e.primitive.name == "sin" for v in e.outvars}
        assert not any(set(e.invars) & sines for e in j.eqns)
    with pytest.raises(ValueError, match="no sampler for"):
        random_jaxprs(vocabulary=["cond"])


def test_random_jaxprs_agree_on_every_backend(backend_name: str) -> None:
    @settings(max_examples=3 if backend_name == "xla" else 10)
    @given(random_jaxprs(), strategies.seeds())
    def run(program: programs.RandomProgram, rng: np.random.Generator) -> None:
        args = program.args(rng)
        assert_backends_agree(as_function(program.closed), *args, backends=[backend_name])

    run()


@pytest.mark.single_backend
def test_nested_programs_cover_every_transformation_and_depth() -> None:
    seen = []

    @settings(max_examples=60, derandomize=True)
    @given(nested_programs())
    def collect(program: programs.NestedProgram) -> None:
        seen.append(program.transforms)

    collect()
    assert {t for ts in seen for t in ts} == set(programs.TRANSFORMS)
    assert {len(ts) for ts in seen} == {0, 1, 2, 3}


def test_nested_programs_match_their_plain_meaning(backend_name: str) -> None:
    from minijax.testing.checks import backend_named
    from minijax.testing.runner import run_check

    @settings(max_examples=3 if backend_name == "xla" else 15)
    @given(nested_programs())
    def run(program: programs.NestedProgram) -> None:
        outcome = run_check(program.check(), backend_named(backend_name), backend_named("numpy"))
        assert outcome.passed, f"{program}: {outcome.message}"

    run()


@pytest.mark.parametrize(
    ("transforms", "ops", "x"),
    [
        (("jvp", "jvp", "jvp"), ("square",), [-1.27592429, -1.39530669, -1.02796293]),
        (("jvp", "jvp", "jvp"), ("affine", "square"), [1.42208691, 1.27902426]),
        (("grad", "jvp", "jvp"), ("sum",), [0.51078674, -1.33581471, 0.94975346]),
    ],
)
def test_a_derivative_that_is_exactly_zero_matches_the_noise_of_its_plain_meaning(
    backend_name: str, transforms: tuple[str, ...], ops: tuple[str, ...], x: list[float]
) -> None:
    # Found by the random profile: the third derivative of a quadratic is exactly 0, and the
    # plain meaning's nested central differences give rounding noise (-2.8e-8 with step 1e-3),
    # which a normwise tolerance (relative to that noise) refused.
    from minijax.testing.checks import backend_named
    from minijax.testing.runner import run_check

    program = programs.NestedProgram(transforms, ops, len(x), (), np.array(x))
    outcome = run_check(program.check(), backend_named(backend_name), backend_named("numpy"))
    assert outcome.passed, outcome.message
    # The allowance is the rounding noise, not more: a first derivative stays at 1e-12.
    assert programs.finite_difference_noise(["jvp"], lambda v: v * v, np.array(x)) < 1e-11


def test_a_derivative_near_zero_is_judged_within_the_plain_meanings_truncation_error(backend_name: str) -> None:
    # Found by a stored hypothesis example: jvp of cos(0.5 tanh(x) + 0.25) at -0.539 is
    # -0.00127191; central differences with step 1e-3 give -0.00127196 (their truncation
    # error, STEP**2 times a third derivative over 6, is 3.7e-5 of so small a derivative),
    # which rtol 1e-5 refused.
    from minijax.testing.checks import backend_named
    from minijax.testing.runner import run_check

    x = np.array([-0.53915446])
    program = programs.NestedProgram(("jvp",), ("tanh", "affine", "cos"), 1, (), x)
    outcome = run_check(program.check(), backend_named(backend_name), backend_named("numpy"))
    assert outcome.passed, outcome.message
    # The allowance is the reference's own error (~5e-8), not more: a wrong jvp is still refused.
    base = lambda v: np.cos(0.5 * np.tanh(v) + 0.25)  # noqa: E731
    want = programs.plain(["jvp"], base)(x)
    assert 1e-8 < programs.truncation_error(["jvp"], base, x, want) < 1e-6


@pytest.mark.single_backend
def test_the_plain_meaning_is_what_the_transformations_mean() -> None:
    x = np.array([0.5, -1.0])

    def square(v: Any) -> Any:
        return v * v

    np.testing.assert_allclose(programs.plain(["grad"], square)(x), 2 * x, rtol=1e-8)
    np.testing.assert_allclose(programs.plain(["jvp"], square)(x), 2 * x * programs._tangent((2,)), rtol=1e-8)
    np.testing.assert_allclose(programs.plain(["vmap", "grad"], square)(np.stack([x, 2 * x])), [2 * x, 4 * x], rtol=1e-8)
    np.testing.assert_array_equal(programs.plain(["cond"], square)(-x), 2 * square(-x))


@pytest.mark.single_backend
def test_assert_backends_agree_names_the_backend_that_disagrees() -> None:
    from minijax_numpy import NumpyBackend
    from minijax_numpy.table import IMPLS

    from minijax.backend import register_backend

    class Negates(NumpyBackend):
        name = "negates-exp"

        def _impl(self, prim: Any, params: Any) -> Any:
            impl = super()._impl(prim, params)
            return (lambda *a: -impl(*a)) if prim.name == "exp" else impl

    register_backend("negates-exp", Negates)
    x = np.array([0.5, 1.0], np.float32)
    assert_backends_agree(lambda v: jnp.sin(v) * 2, x, backends=["negates-exp"])
    with pytest.raises(AssertionError, match="'negates-exp' disagrees with 'numpy': output 0 \\(f32\\[2\\]\\)"):
        assert_backends_agree(lambda v: jnp.exp(v) + 1, x, backends=["negates-exp"])
    assert "exp" in IMPLS  # the reference itself is untouched


def _parsed(text: str) -> Any:
    from minijax.jaxpr import ClosedJaxpr
    from minijax.jaxpr_parse import parse_jaxpr

    parsed = parse_jaxpr(text)
    return parsed if isinstance(parsed, ClosedJaxpr) else ClosedJaxpr(parsed, [])


LGAMMA_PROGRAM = "{ lambda ; a:f32[] b:f32[]. let c:f32[] = acos a; d:f32[] = lgamma b in (c, d) }"
LGAMMA_ARGS = [np.array(-0.66176975, np.float32), np.array(1.940907, np.float32)]


def test_a_program_output_may_agree_by_the_rule_of_the_primitive_that_computes_it(backend_name: str) -> None:
    # Found by the random fuzz profile: XLA's lgamma(1.940907) is -0.023842335, the reference's
    # -0.02384339: 567 ulps, within lgamma's absolute allowance near its zero at 2 (64 eps),
    # but not within the program rule, relative to the output's own magnitude.
    from minijax.testing.checks import Check, backend_named
    from minijax.testing.runner import run_check

    check = Check("program", "acos and lgamma", "float32", _parsed(LGAMMA_PROGRAM), LGAMMA_ARGS)
    outcome = run_check(check, backend_named(backend_name), backend_named("numpy"))
    assert outcome.passed, outcome.message


@pytest.mark.single_backend
def test_compare_program_outputs_uses_a_primitives_rule_only_on_exactly_computed_operands() -> None:
    from minijax.testing import tolerances
    from minijax.testing.checks import backend_named, compare_program_outputs

    numpy_backend = backend_named("numpy")
    want = [np.asarray(np.arccos(LGAMMA_ARGS[0])), np.asarray(np.float32(-0.02384339))]
    xla_like = [want[0], np.asarray(np.float32(-0.023842335))]
    assert not tolerances.compare_program(xla_like, want).ok
    assert compare_program_outputs(_parsed(LGAMMA_PROGRAM), LGAMMA_ARGS, xla_like, want, numpy_backend).ok
    # Beyond lgamma's allowance: refused.
    far = [want[0], np.asarray(np.float32(-0.0237))]
    assert not compare_program_outputs(_parsed(LGAMMA_PROGRAM), LGAMMA_ARGS, far, want, numpy_backend).ok
    # The lgamma output of an operand that is not computed exactly (sin of b) is judged normwise only.
    chained = "{ lambda ; a:f32[] b:f32[]. let c:f32[] = acos a; e:f32[] = sin b; d:f32[] = lgamma e in (c, d) }"
    assert not compare_program_outputs(_parsed(chained), LGAMMA_ARGS, xla_like, want, numpy_backend).ok
