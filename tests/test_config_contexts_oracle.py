"""The configuration contexts, ensure_compile_time_eval and typeof against real JAX 0.10.2 (the oracle)."""

from __future__ import annotations

import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
import jax.numpy as jjnp  # noqa: E402

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("value", ["default", "high", "highest", "bfloat16", "tensorfloat32", "float32"])
def test_default_matmul_precision_prints_as_in_jax(value: str) -> None:
    def program(lib, jnp):  # type: ignore[no-untyped-def]
        with lib.default_matmul_precision(value):
            return str(lib.make_jaxpr(lambda a, b: jnp.tanh(a @ b))(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)))

    assert program(minijax, mjnp) == program(jax, jjnp)


def test_ensure_compile_time_eval_stages_what_jax_stages() -> None:
    def program(lib, jnp):  # type: ignore[no-untyped-def]
        def f(x):  # type: ignore[no-untyped-def]
            with lib.ensure_compile_time_eval():
                y = jnp.sin(3.0) * jnp.arange(3.0)
                z = x * 2
            return y + z

        return str(lib.make_jaxpr(f)(np.float32(1)))

    assert program(minijax, mjnp) == program(jax, jjnp)


@pytest.mark.parametrize("value", [1.0, 2, True, np.float32(1), np.ones((2, 3), np.int16), np.zeros(4, np.bool_)])
def test_typeof_prints_as_in_jax(value: object) -> None:
    assert repr(minijax.typeof(value)) == repr(jax.typeof(value))
    assert str(minijax.typeof(value)) == str(jax.typeof(value))


def test_promotion_contexts_raise_as_jax_does() -> None:
    for lib, jnp in ((minijax, mjnp), (jax, jjnp)):
        add = lib.jit(lambda a, b: a + b)
        add(jnp.float32(1), jnp.int32(1))
        with lib.numpy_dtype_promotion("strict"), pytest.raises(lib.dtypes.TypePromotionError):
            add(jnp.float32(1), jnp.int32(1))
        with lib.numpy_rank_promotion("raise"), pytest.raises(ValueError):
            add(jnp.ones(3), jnp.ones((2, 1)))


def test_the_debugging_flag_contexts_act_as_in_jax() -> None:
    def program(lib, jnp):  # type: ignore[no-untyped-def]
        seen = []
        x = jnp.ones((4, 1), jnp.float16)
        with lib.allow_f16_reductions(False):
            try:
                lib.lax.reduce_sum(x, (0,))
            except ValueError as e:
                seen.append(str(e))
            seen.append(str(jnp.sum(x)))
        with lib.softmax_custom_jvp(True):
            seen.append(str(lib.make_jaxpr(lib.nn.softmax)(np.ones(3, np.float32))))
            seen.append(str(lib.make_jaxpr(lib.grad(lambda v: lib.nn.softmax(v)[0]))(np.ones(3, np.float32))))
        f = lib.jit(lambda v: v * 2)
        f(np.float32(1))
        with lib.no_tracing():
            seen.append(str(f(np.float32(2))))
            try:
                f(np.ones(2, np.float32))
            except RuntimeError as e:
                seen.append(str(e).split(" at ")[0] + " ... " + str(e).split(" for ")[-1])
        with lib.enable_custom_prng(True):
            import warnings

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                keys = lib.random.split(np.zeros(2, np.uint32))
            seen.append(str(keys.dtype))
            seen.append(str(lib.random.PRNGKey(0).dtype))
            seen.append([str(w.message) for w in caught if w.category is FutureWarning][0])
        return seen

    assert program(minijax, mjnp) == program(jax, jjnp)
