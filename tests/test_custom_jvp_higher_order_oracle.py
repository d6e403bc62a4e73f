"""Higher derivatives of custom_jvp functions against real JAX 0.10.2 (the oracle).

jax.nn's functions whose custom_jvp rule calls the function itself for the
primal (softplus and everything built on logaddexp, relu, log1mexp...):
hessian, jacfwd of jacrev, jacfwd of jacfwd and third derivatives give JAX's
values; a custom_jvp call on unbatched operands under vmap gives JAX's
jaxpr; jacfwd of a custom_vjp function raises JAX's error. Run where JAX is
installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_custom_jvp_higher_order_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

JAX = SimpleNamespace(jax=jax, jnp=jax.numpy)
MINI = SimpleNamespace(jax=minijax, jnp=minijax.numpy)
Lib = SimpleNamespace

FUNCTIONS: dict[str, Callable[[Lib], Callable[[Any], Any]]] = {
    "softplus": lambda m: m.jax.nn.softplus,
    "log_sigmoid": lambda m: m.jax.nn.log_sigmoid,
    "mish": lambda m: m.jax.nn.mish,
    "silu": lambda m: m.jax.nn.silu,
    "relu": lambda m: m.jax.nn.relu,
    "relu6": lambda m: lambda x: m.jax.nn.relu6(3.0 * x),
    "log1mexp": lambda m: lambda x: m.jax.nn.log1mexp(m.jnp.abs(x) + 0.5),
    "logaddexp": lambda m: lambda x: m.jnp.logaddexp(x, 2.0),
    "logaddexp2": lambda m: lambda x: m.jnp.logaddexp2(0.5, x),
    "logsumexp": lambda m: lambda x: m.jax.nn.logsumexp(m.jnp.stack([x, 2.0 * x, -x])),
    "log_softmax": lambda m: lambda x: m.jax.nn.log_softmax(m.jnp.stack([x, 2.0 * x, -x]))[1],
}

DERIVATIVES: dict[str, Callable[[Lib, Callable[[Any], Any]], Callable[[Any], Any]]] = {
    "hessian": lambda m, f: m.jax.hessian(f),
    "jacfwd_jacrev": lambda m, f: m.jax.jacfwd(m.jax.jacrev(f)),
    "jacfwd_jacfwd": lambda m, f: m.jax.jacfwd(m.jax.jacfwd(f)),
    "third": lambda m, f: m.jax.jacfwd(m.jax.hessian(f)),
    "jit_hessian": lambda m, f: m.jax.jit(m.jax.hessian(f)),
}


@pytest.mark.parametrize("derivative", sorted(DERIVATIVES))
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_higher_derivatives_equal_jaxs(name: str, derivative: str) -> None:
    make, d = FUNCTIONS[name], DERIVATIVES[derivative]
    for x in (np.float32(-1.3), np.float32(0.7), np.float32(2.5)):
        want = d(JAX, make(JAX))(x)
        got = d(MINI, make(MINI))(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-6)
        assert np.asarray(got).dtype == np.asarray(want).dtype


def test_hessian_of_a_vector_function_equals_jaxs() -> None:
    x = np.array([-2.0, 0.0, 1.5], np.float32)

    def f(m: Lib) -> Callable[[Any], Any]:
        return lambda x: m.jnp.sum(m.jax.nn.softplus(x) * m.jax.nn.log_sigmoid(x[::-1]))

    np.testing.assert_allclose(minijax.hessian(f(MINI))(x), jax.hessian(f(JAX))(x), rtol=2e-5, atol=1e-6)


def test_vmap_of_an_unbatched_custom_jvp_call_has_jaxs_jaxpr() -> None:
    c = np.ones(3, np.float32)

    def program(m: Lib) -> Callable[[Any], Any]:
        return m.jax.vmap(lambda y: m.jax.nn.relu(c) * y)

    y = np.arange(4, dtype=np.float32)
    assert str(minijax.make_jaxpr(program(MINI))(y)) == str(jax.make_jaxpr(program(JAX))(y))
    np.testing.assert_array_equal(program(MINI)(y), program(JAX)(y))


def test_jacfwd_of_a_custom_vjp_function_raises_jaxs_error() -> None:
    def errors(m: Lib) -> str:
        @m.jax.custom_vjp
        def f(x: Any) -> Any:
            return m.jnp.sin(x)

        f.defvjp(lambda x: (m.jnp.sin(x), m.jnp.cos(x)), lambda c, g: (g * c,))
        np.testing.assert_allclose(m.jax.hessian(f)(np.float32(1.0)), -np.sin(np.float32(1.0)), rtol=1e-6)
        with pytest.raises(TypeError) as info:
            m.jax.jacfwd(f)(np.float32(1.0))
        return str(info.value)

    assert errors(MINI) == errors(JAX)
