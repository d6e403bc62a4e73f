"""JAX's configuration contexts at the top level (``jax.enable_x64``,
``jax.numpy_dtype_promotion``, ``jax.numpy_rank_promotion``,
``jax.default_matmul_precision``), ``jax.ensure_compile_time_eval``,
``jax.typeof``, ``jax.float0`` and ``jax.print_environment_info``."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.dtypes import TypePromotionError


def test_jit_traces_again_when_a_promotion_flag_changes() -> None:
    # The flags are part of jit's key (JAX's trace context): a trace made under
    # standard promotion must not answer a call made under strict promotion.
    add = jax.jit(lambda a, b: a + b)
    assert float(add(jnp.float32(1), jnp.int32(1))) == 2.0
    with jax.numpy_dtype_promotion("strict"), pytest.raises(TypePromotionError):
        add(jnp.float32(1), jnp.int32(1))
    assert float(add(jnp.float32(1), jnp.int32(1))) == 2.0

    outer = jax.jit(lambda a, b: a * b)
    assert outer(jnp.ones(3), jnp.ones((2, 1))).shape == (2, 3)
    with jax.numpy_rank_promotion("raise"), pytest.raises(ValueError, match="jax_numpy_rank_promotion=.raise."):
        outer(jnp.ones(3), jnp.ones((2, 1)))


def test_enable_x64_context_gives_64_bit_results_inside_only() -> None:
    f = jax.jit(lambda x: x * 2)
    assert f(np.ones(2)).dtype == np.float32
    with jax.enable_x64(True):
        assert f(np.ones(2)).dtype == np.float64
        assert jnp.arange(3).dtype == np.int64
    assert f(np.ones(2)).dtype == np.float32


@pytest.mark.parametrize(
    ("value", "expected"),
    [("default", lax.Precision.DEFAULT), ("bfloat16", lax.Precision.DEFAULT), ("tensorfloat32", lax.Precision.HIGH), ("high", lax.Precision.HIGH), ("float32", lax.Precision.HIGHEST), ("highest", lax.Precision.HIGHEST)],
)
def test_default_matmul_precision_fills_in_precision_none(value: str, expected: lax.Precision) -> None:
    x = jnp.ones((2, 2))
    with jax.default_matmul_precision(value):
        eqn = jax.make_jaxpr(lambda a, b: a @ b)(x, x).jaxpr.eqns[0]
        conv = jax.make_jaxpr(lambda a, b: lax.conv(a, b, (1, 1), "SAME"))(jnp.ones((1, 1, 2, 2)), jnp.ones((1, 1, 2, 2)))
        explicit = jax.make_jaxpr(lambda a, b: lax.dot(a, b, precision="highest"))(x, x).jaxpr.eqns[0]
    assert eqn.params["precision"] == (expected, expected)
    assert conv.jaxpr.eqns[0].params["precision"] == (expected, expected)
    assert explicit.params["precision"] == (lax.Precision.HIGHEST,) * 2  # an explicit precision wins
    assert jax.make_jaxpr(lambda a, b: a @ b)(x, x).jaxpr.eqns[0].params["precision"] is None


def test_default_matmul_precision_values_are_checked() -> None:
    with pytest.raises(ValueError, match="must be None or in"):
        jax.config.update("jax_default_matmul_precision", "bogus")
    with jax.default_matmul_precision("BF16_BF16_F32"), pytest.raises(NotImplementedError, match="DotAlgorithmPreset"):
        jnp.ones((2, 2)) @ jnp.ones((2, 2))


def test_ensure_compile_time_eval_computes_concrete_values_while_tracing() -> None:
    seen: list[object] = []

    @jax.jit
    def f(x: jax.Array) -> jax.Array:
        with jax.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            seen.append(y)
            positive = y > 0
        if positive:  # a concrete bool: Python control flow works on it
            return jnp.sin(x)
        return jnp.cos(x)

    np.testing.assert_allclose(f(1.0), np.sin(1.0), rtol=1e-6)
    assert type(seen[0]) is jax.Array
    np.testing.assert_allclose(seen[0], np.sin(3.0), rtol=1e-6)

    def g(x: jax.Array) -> jax.Array:
        with jax.ensure_compile_time_eval():
            return x * 2  # a traced operand: staged as usual

    assert str(jax.make_jaxpr(g)(1.0)) == "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }"
    assert float(jax.grad(g)(1.0)) == 2.0
    np.testing.assert_array_equal(jax.vmap(g)(jnp.ones(2)), [2.0, 2.0])


def test_typeof_float0_and_the_environment() -> None:
    assert repr(jax.typeof(1.0)) == "ShapedArray(float32[], weak_type=True)"
    assert str(jax.typeof(jnp.ones(3))) == "float32[3]"
    assert repr(jax.typeof(jnp.ones((2, 3), jnp.int32))) == "ShapedArray(int32[2,3])"
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        jax.typeof([1, 2])
    assert jax.float0 == np.dtype([("float0", np.void, 0)])
    assert jax.grad(lambda x: x * 1.0, allow_int=True)(3).dtype == jax.float0
    text = jax.print_environment_info(return_string=True)
    assert text is not None
    lines = text.splitlines()
    assert [line.split(":")[0] for line in lines] == ["jax", "jaxlib", "numpy", "python", "device info", "process_count", "platform"]
    assert lines[2] == f"numpy:  {np.__version__}"


# --- the debugging flags as context managers (jax.enable_checks, jax.no_tracing, ...) ---

def test_every_flag_context_sets_its_flag_inside_only() -> None:
    for context, name in [(jax.enable_checks, "jax_enable_checks"), (jax.no_tracing, "jax_no_tracing"),
                          (jax.check_tracer_leaks, "jax_check_tracer_leaks"),
                          (jax.softmax_custom_jvp, "jax_softmax_custom_jvp"),
                          (jax.enable_custom_prng, "jax_enable_custom_prng"), (jax.thread_guard, "jax_thread_guard"),
                          (jax.jax2tf_associative_scan_reductions, "jax2tf_associative_scan_reductions")]:
        assert context.value is False
        with context(True):
            assert context.value is True and jax.config.read(name) is True
        assert context.value is False
    with jax.allow_f16_reductions(False):
        assert jax.config.jax_allow_f16_reductions is False
    with jax.legacy_prng_key("error"), pytest.raises(ValueError, match="Legacy uint32 key array"):
        jax.random.split(np.zeros(2, np.uint32))
    with jax.default_prng_impl("threefry2x32"):
        assert jax.config.jax_default_prng_impl == "threefry2x32"


def test_enable_checks_type_checks_each_traced_jaxpr() -> None:
    # A primitive whose abstract evaluation changes between calls gives a jaxpr that does not
    # typecheck: only the checker, re-running the rule, sees it.
    from minijax.extend.core import Primitive

    calls = []
    drifting = Primitive("test_drifting")  # "test_": not one of minijax's own (test_registry)
    drifting.def_impl(lambda x: x)

    def abstract(x):  # type: ignore[no-untyped-def]
        calls.append(x)
        return x if len(calls) % 2 else jax.core.ShapedArray((7,), x.dtype)

    drifting.def_abstract_eval(abstract)
    jax.make_jaxpr(drifting.bind)(np.ones(3, np.float32))  # no check: traced without complaint
    with jax.enable_checks(True), pytest.raises(Exception, match="test_drifting"):
        jax.make_jaxpr(drifting.bind)(np.ones(3, np.float32))


def test_no_tracing_refuses_a_new_trace_and_keeps_the_cached_ones() -> None:
    def g(x):  # type: ignore[no-untyped-def]
        return x * 2

    f = jax.jit(g)
    assert float(f(1.0)) == 2.0
    with jax.no_tracing():
        assert float(f(3.0)) == 6.0  # same types: the cached program
        with pytest.raises(RuntimeError, match=r"re-tracing function g at .*test_config_contexts.py:\d+ for `jit`, "
                                               r"but 'no_tracing' is set"):
            f(np.ones(3, np.float32))
        with pytest.raises(RuntimeError, match=r"re-tracing function <function .*g at 0x"):
            jax.make_jaxpr(g)(1.0)
    assert f(np.ones(3, np.float32)).shape == (3,)


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16])
def test_allow_f16_reductions_false_refuses_half_precision_sums(dtype: object) -> None:
    x = jnp.ones((4, 1), dtype)
    total = jax.jit(lambda v: lax.reduce_sum(v, (0,)))
    assert float(total(x)[0]) == 4.0
    with jax.allow_f16_reductions(False):
        with pytest.raises(ValueError, match=r"reduce_sum on operand \w+16\[4,1\] is not allowed when "
                                             r"jax_allow_f16_reductions=False"):
            total(x)  # the flag is part of jit's key: traced again, and refused
        assert float(lax.reduce_sum(x, (1,))[0]) == 1.0  # summing one element is allowed
        assert float(jnp.sum(x)) == 4.0  # jnp.sum accumulates in float32
        assert float(lax.reduce_sum(jnp.ones(4), (0,))) == 4.0


def test_softmax_custom_jvp_switches_to_the_rule_with_the_same_values() -> None:
    x = jnp.array([0.5, -1.0, 2.0])
    plain_jaxpr = str(jax.make_jaxpr(jax.nn.softmax)(x))
    plain_grad = jax.grad(lambda v: jax.nn.softmax(v)[0])(x)
    with jax.softmax_custom_jvp(True):
        ruled_jaxpr = str(jax.make_jaxpr(jax.nn.softmax)(x))
        ruled_grad = jax.grad(lambda v: jax.nn.softmax(v)[0])(x)
    assert "custom_jvp_call" not in plain_jaxpr and "stop_gradient" in plain_jaxpr
    assert "custom_jvp_call" in ruled_jaxpr and "jvp=_softmax_jvp" in ruled_jaxpr
    np.testing.assert_allclose(np.asarray(ruled_grad), np.asarray(plain_grad), rtol=1e-6)


def test_enable_custom_prng_keeps_keys_typed_and_warns_of_raw_ones() -> None:
    raw = jax.random.PRNGKey(0)
    assert jax.random.split(raw).dtype == jnp.uint32
    with jax.enable_custom_prng(True):
        assert jax.dtypes.issubdtype(jax.random.PRNGKey(0).dtype, jax.dtypes.prng_key)
        with pytest.warns(FutureWarning, match="Raw arrays as random keys to jax.random functions are deprecated"):
            keys = jax.random.split(raw)
    assert jax.dtypes.issubdtype(keys.dtype, jax.dtypes.prng_key)
    np.testing.assert_array_equal(np.asarray(jax.random.key_data(keys)), np.asarray(jax.random.split(raw)))
