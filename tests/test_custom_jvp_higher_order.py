"""Higher derivatives of ``custom_jvp`` functions whose rule calls the function itself.

The usual idiom computes the rule's primal output by calling the decorated
function (``out = f(x)``). Under ``jacfwd`` the rule runs inside a ``vmap`` of
the tangents, so that inner call is a ``custom_jvp_call`` with unbatched
operands: it must give an unbatched output (as in JAX), or the primal of the
jvp comes back batched and ``jacfwd``/``hessian`` fail. Checked here against
finite differences in float64; the comparison with real JAX is
test_custom_jvp_higher_order_oracle.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.config import enable_x64
from minijax.primitives.calls import custom_jvp_call_p

# jax.nn functions (and jnp ones) defined with custom_jvp, or built on one.
FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "softplus": jax.nn.softplus,
    "log_sigmoid": jax.nn.log_sigmoid,
    "mish": jax.nn.mish,
    "relu": jax.nn.relu,
    "relu6": lambda x: jax.nn.relu6(3.0 * x),
    "log1mexp": lambda x: jax.nn.log1mexp(jnp.abs(x) + 0.5),
    "logaddexp": lambda x: jnp.logaddexp(x, 2.0),
    "logaddexp2": lambda x: jnp.logaddexp2(0.5, x),
}
POINTS = [-1.3, 2.5]
H = 1e-5


def _fd(g: Callable[[Any], Any], x: float) -> float:
    return (float(g(x + H)) - float(g(x - H))) / (2 * H)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_second_and_third_derivatives_match_finite_differences(name: str, backend_name: str) -> None:
    f = FUNCTIONS[name]
    # (XLA compiles each staged jax.nn function per transformation: one point there.)
    points = POINTS if backend_name == "numpy" else POINTS[:1]
    with enable_x64():
        for x in points:
            x64 = np.float64(x)
            d2_want = _fd(jax.grad(f), x64)
            for d2 in (jax.hessian(f), jax.jacfwd(jax.jacfwd(f))):
                np.testing.assert_allclose(float(d2(x64)), d2_want, rtol=1e-6, atol=1e-8)
            d3_want = _fd(jax.jacrev(jax.grad(f)), x64)
            np.testing.assert_allclose(float(jax.jacfwd(jax.hessian(f))(x64)), d3_want, rtol=1e-5, atol=1e-7)


def test_jitted_hessian_and_third_derivative() -> None:
    x = np.float32(0.7)
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(jax.jit(jax.hessian(jax.nn.softplus))(x), s * (1 - s), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.jacfwd(jax.jacfwd(jax.jacfwd(jax.nn.softplus))))(x), s * (1 - s) * (1 - 2 * s), rtol=1e-5)


def test_jacfwd_of_softplus_on_a_vector() -> None:
    x = np.array([-2.0, 0.0, 1.5], np.float32)
    np.testing.assert_allclose(jax.jacfwd(jax.nn.softplus)(x), np.diag(1 / (1 + np.exp(-x))), rtol=1e-6)
    np.testing.assert_allclose(jax.hessian(lambda x: jnp.sum(jax.nn.softplus(x)))(x), np.diag(np.exp(-x) / (1 + np.exp(-x)) ** 2), rtol=1e-5)


def test_a_custom_jvp_call_on_unbatched_operands_stays_unbatched_under_vmap() -> None:
    closed = jax.make_jaxpr(jax.vmap(lambda y: jax.nn.relu(np.float32(2.0) * np.ones(3, np.float32)) * y))(np.ones(4, np.float32))
    calls = [e for e in closed.eqns if e.primitive is custom_jvp_call_p]
    assert len(calls) == 1 and calls[0].outvars[0].aval.shape == (3,)
    np.testing.assert_array_equal(jax.vmap(lambda y: jax.nn.relu(-y * 0 + 2.0) * y)(np.arange(3.0, dtype=np.float32)), [0.0, 2.0, 4.0])


def test_an_unbatched_custom_vjp_call_stays_unbatched_under_vmap() -> None:
    @jax.custom_vjp
    def f(x: Any) -> Any:
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (g * c,))
    closed = jax.make_jaxpr(jax.vmap(lambda y: f(np.ones(3, np.float32)) * y))(np.ones(4, np.float32))
    (call,) = [e for e in closed.eqns if e.primitive.name == "custom_vjp_call"]
    assert call.outvars[0].aval.shape == (3,)
    grads = jax.vmap(lambda y: jax.grad(lambda z: f(z) * y)(np.float32(2.0)))(np.ones(2, np.float32))
    np.testing.assert_allclose(grads, [np.cos(2.0)] * 2, rtol=1e-6)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jacfwd(f)(np.float32(1.0))
