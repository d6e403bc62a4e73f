"""``jax.extend`` on minijax: its IR under JAX's names, new primitives, and interpreters that walk jaxprs.

The comparison with real JAX is tests/test_extend_oracle.py; JAX's "Writing
custom Jaxpr interpreters" page is tests/test_custom_interpreters_page.py.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax._src.util import safe_map, safe_zip
from minijax.core import ShapedArray
from minijax.extend import backend, core, linear_util as lu, mlir, random as xrandom, source_info_util as siu
from minijax.extend.core import primitives

# ---------------------------------------------------------------------------
# The IR is minijax's own


@pytest.mark.single_backend
def test_the_ir_classes_are_minijaxs_own() -> None:
    from minijax import core as mcore, jaxpr as mjaxpr

    assert core.Jaxpr is mjaxpr.Jaxpr and core.ClosedJaxpr is mjaxpr.ClosedJaxpr
    assert core.JaxprEqn is mjaxpr.JaxprEqn and core.Var is mjaxpr.Var and core.Literal is mjaxpr.Literal
    assert core.Primitive is mcore.Primitive
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(np.ones(3, np.float32))
    assert isinstance(closed, core.ClosedJaxpr) and isinstance(closed.jaxpr, core.Jaxpr)
    assert all(isinstance(e, core.JaxprEqn) for e in closed.jaxpr.eqns)
    assert primitives.sin_p is closed.jaxpr.eqns[0].primitive
    assert lax.exp_p is primitives.exp_p


@pytest.mark.single_backend
def test_primitives_carry_jaxs_names() -> None:
    assert primitives.scatter_add_p.name == "scatter-add"
    assert primitives.add_jaxvals_p.name == "add_any"
    assert primitives.remat_p.name == "remat2"
    assert all(getattr(primitives, n).name for n in primitives.__all__)
    assert primitives.fft_p.name == "fft" and primitives.eig_p.name == "eig"
    with pytest.raises(AttributeError, match="minijax has no create_token primitive"):
        primitives.create_token_p  # noqa: B018


# ---------------------------------------------------------------------------
# Printing as JAX prints


@pytest.mark.single_backend
def test_var_and_literal_reprs_are_jaxs() -> None:
    closed = jax.make_jaxpr(lambda x: x + 1)(5)
    (eqn,) = closed.jaxpr.eqns
    var, lit = eqn.invars
    assert re.fullmatch(r"Var\(id=\d+\):int32\[\]", repr(var))
    assert repr(lit) == "Literal(TypedInt(1, dtype=int32))"
    closed = jax.make_jaxpr(lambda x: x * 2.5 + jnp.ones(2))(np.ones(2, np.float32))
    lits = [a for e in closed.jaxpr.eqns for a in e.invars if isinstance(a, core.Literal)]
    assert [repr(a) for a in lits] == ["Literal(2.5)", "Literal(1.0)"]
    assert re.fullmatch(r"\[Var\(id=\d+\):float32\[2\]\]", repr(closed.jaxpr.invars))
    assert repr(core.DropVar(ShapedArray((), np.float32))) == "_"


@pytest.mark.single_backend
def test_closed_jaxpr_literals_are_its_consts() -> None:
    c = np.arange(3.0, dtype=np.float32)
    closed = jax.make_jaxpr(lambda x: x * c + c)(np.ones(3, np.float32))
    assert closed.literals is closed.consts
    assert len(closed.literals) == 1
    np.testing.assert_array_equal(closed.literals[0], c)


# ---------------------------------------------------------------------------
# A primitive of one's own


# Primitives made here are named "test_...": tests/test_registry.py leaves such names out of minijax's own.
def _multiply_add() -> core.Primitive:
    p = core.Primitive("test_multiply_add")
    p.def_impl(lambda x, y, z: jnp.add(jnp.multiply(x, y), z))
    p.def_abstract_eval(lambda x, y, z: ShapedArray(x.shape, x.dtype))
    return p


def test_a_new_primitive_runs_eagerly_and_stages_into_jaxprs() -> None:
    p = _multiply_add()
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(p.bind(x, x, 1.0), np.arange(3.0) ** 2 + 1)
    closed = jax.make_jaxpr(lambda a: p.bind(a, a, a) * 2)(x)
    assert str(closed).splitlines()[1].strip() == "b:f32[3] = test_multiply_add a a a"
    (out,) = core.jaxpr_as_fun(closed)(x)
    np.testing.assert_array_equal(out, 2 * (np.arange(3.0) ** 2 + np.arange(3.0)))
    assert p.impl(x, x, x).shape == (3,)


def test_a_new_primitive_without_rules_says_which_rule_is_missing() -> None:
    p = _multiply_add()
    x = jnp.arange(3.0)
    with pytest.raises(NotImplementedError, match="test_multiply_add"):
        jax.jit(lambda a: p.bind(a, a, a))(x)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'test_multiply_add' not implemented"):
        jax.grad(lambda a: p.bind(a, a, a).sum())(x)
    with pytest.raises(NotImplementedError, match="Batching rule for 'test_multiply_add' not implemented"):
        jax.vmap(lambda a: p.bind(a, a, a))(x)
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'test_nothing' not implemented"):
        core.Primitive("test_nothing").impl(x)


def test_a_new_primitive_with_multiple_results() -> None:
    p = core.Primitive("test_two_outs")
    p.multiple_results = True
    p.def_impl(lambda a: (a + 1, a * 2))
    p.def_abstract_eval(lambda a: [a, a])
    x = jnp.arange(3.0)
    one, two = p.bind(x)
    np.testing.assert_array_equal(one, np.arange(3.0) + 1)
    np.testing.assert_array_equal(two, np.arange(3.0) * 2)
    assert "b:f32[3] c:f32[3] = test_two_outs a" in str(jax.make_jaxpr(p.bind)(x))


# ---------------------------------------------------------------------------
# Walking a jaxpr, as the custom-interpreters page does


def eval_jaxpr(jaxpr: core.Jaxpr, consts: list[Any], *args: Any) -> list[Any]:
    env: dict[core.Var, Any] = {}

    def read(var: Any) -> Any:
        return var.val if type(var) is core.Literal else env[var]

    def write(var: core.Var, val: Any) -> None:
        env[var] = val

    safe_map(write, jaxpr.invars, args)
    safe_map(write, jaxpr.constvars, consts)
    for eqn in jaxpr.eqns:
        outvals = eqn.primitive.bind(*safe_map(read, eqn.invars), **eqn.params)
        safe_map(write, eqn.outvars, outvals if eqn.primitive.multiple_results else [outvals])
    return safe_map(read, jaxpr.outvars)


W = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)


def _program(x: Any) -> Any:
    y = jnp.tanh(jnp.dot(W, x) + 1.0) * jnp.sum(W)  # W closed over and read twice: one constvar
    keys, vals = lax.sort((y, -y), num_keys=1)  # a primitive with multiple results
    return jnp.exp(keys) + vals * 2, jnp.max(x)


def test_walking_the_equations_computes_what_the_function_computes() -> None:
    x = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
    closed = jax.make_jaxpr(_program)(x)
    assert len(closed.jaxpr.constvars) == 1
    got = eval_jaxpr(closed.jaxpr, closed.literals, x)
    want = _program(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    # The interpreter composes with the transformations, as the page shows.
    jitted = jax.jit(lambda x: eval_jaxpr(closed.jaxpr, closed.literals, x))(x)
    np.testing.assert_allclose(jitted[0], want[0], rtol=1e-6)
    g = jax.grad(lambda x: eval_jaxpr(closed.jaxpr, closed.literals, x)[0].sum())(x)
    np.testing.assert_allclose(g, jax.grad(lambda x: _program(x)[0].sum())(x), rtol=1e-5)


@pytest.mark.single_backend
def test_safe_map_and_safe_zip_refuse_unequal_lengths() -> None:
    assert safe_map(lambda a, b: a + b, (1, 2), [3, 4]) == [4, 6]
    assert safe_zip("ab", [1, 2]) == [("a", 1), ("b", 2)]
    with pytest.raises(ValueError, match=r"safe_map\(\) argument 2 is shorter than argument 1"):
        safe_map(lambda a, b: a, [1, 2], [1])
    with pytest.raises(ValueError, match=r"safe_zip\(\) argument 1 has length 1 but argument 0 has length 2"):
        safe_zip([1, 2], [1])


# ---------------------------------------------------------------------------
# linear_util, backend, random, source_info_util


@pytest.mark.single_backend
def test_linear_util_applies_transformations_in_order() -> None:
    @lu.transformation2
    def scale(f: Any, k: float, *args: Any) -> Any:
        return f(*(a * k for a in args)) + 1

    @lu.transformation_with_aux2
    def count(f: Any, store: Any, *args: Any) -> Any:
        out = f(*args)
        store.store(len(args))
        return out

    @lu.transformation
    def negate(*args: Any) -> Any:
        out = yield tuple(-a for a in args), {}
        yield out * 10

    wrapped = lu.wrap_init(lambda x, y, bias: x + y + bias, {"bias": 100})
    wrapped = scale(wrapped, 2.0)
    wrapped, aux = count(wrapped)
    wrapped = negate(wrapped)
    # negate sees the arguments first (added last), then count, then scale, then the function.
    assert wrapped.call_wrapped(1.0, 2.0) == (-2.0 - 4.0 + 100 + 1) * 10
    assert aux() == 2
    with pytest.raises(lu.StoreException):
        count(lu.wrap_init(lambda: 0))[1]()


def test_backends_and_clear_backends() -> None:
    names = backend.backends()
    assert "numpy" in names
    assert backend.get_default_device() == jax.devices()[0]
    assert backend.get_backend() is backend.get_default_device().backend
    f = jax.jit(lambda x: x * 3)
    f(np.float32(1.0))
    backend.clear_backends()
    assert float(f(np.float32(2.0))) == 6.0
    with pytest.raises(NotImplementedError, match=r"jax\.extend\.backend\.get_compile_options"):
        backend.get_compile_options(1, 1)


def test_threefry_2x32_known_answer() -> None:
    # Random123's known-answer vectors for Threefry-2x32 with 20 rounds.
    zero = np.uint32(0)
    out = xrandom.threefry_2x32((zero, zero), np.zeros(2, np.uint32))
    np.testing.assert_array_equal(out, np.array([0x6B200159, 0x99BA4EFE], np.uint32))
    ones = np.uint32(0xFFFFFFFF)
    out = xrandom.threefry_2x32((ones, ones), np.full(2, 0xFFFFFFFF, np.uint32))
    np.testing.assert_array_equal(out, np.array([0x1CB996FC, 0xBB002BE7], np.uint32))
    assert xrandom.threefry_2x32((zero, zero), np.arange(5, dtype=np.uint32)).shape == (5,)  # odd: padded
    with pytest.raises(TypeError, match="threefry_2x32 requires uint32 arguments"):
        xrandom.threefry_2x32((zero, zero), np.arange(4))
    key = xrandom.seed_with_impl(xrandom.threefry_prng_impl, 3)
    np.testing.assert_array_equal(jax.random.key_data(key), jax.random.key_data(jax.random.key(3)))
    with pytest.raises(NotImplementedError, match="'rbg'"):
        xrandom.seed_with_impl(xrandom.rbg_prng_impl, 0)


@pytest.mark.single_backend
def test_name_stacks() -> None:
    assert str(siu.current_name_stack()) == ""
    with siu.extend_name_stack("outer"):
        with siu.extend_name_stack("inner"):
            assert str(siu.current_name_stack()) == "outer/inner"
        with siu.transform_name_stack("vmap"):
            assert str(siu.current_name_stack()) == "outer/vmap()"
            with siu.extend_name_stack("f"):
                assert str(siu.current_name_stack()) == "outer/vmap(f)"
    assert str(siu.current_name_stack()) == ""
    stack = siu.new_name_stack("a").extend("b").transform("vmap").extend("c").transform("jvp")
    assert str(stack) == "a/b/vmap(c)/jvp()" and len(stack) == 5 and str(stack[:2] + stack[2:4]) == "a/b/vmap(c)"
    assert __file__ in siu.summarize(siu.current())


@pytest.mark.single_backend
def test_what_minijax_lacks_says_so() -> None:
    with pytest.raises(NotImplementedError, match=r"jax\.extend\.mlir\.hlo_to_stablehlo is not implemented"):
        mlir.hlo_to_stablehlo(b"")
    with pytest.raises(NotImplementedError, match="no tokens"):
        core.Token()
