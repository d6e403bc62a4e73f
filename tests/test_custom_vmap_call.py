"""custom_vmap as JAX stages it: one custom_vmap_call equation that keeps the rule, so the rule
runs under vmap wherever the equation is, inside a jit's jaxpr included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.custom_batching import custom_vmap


def _sin_with_cos_rule(calls: list[Any]) -> Any:
    @custom_vmap
    def f(x, y):  # type: ignore[no-untyped-def]
        return jnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):  # type: ignore[no-untyped-def]
        calls.append((axis_size, in_batched))
        return jnp.cos(x) * y, True  # on purpose not f's batch: the test sees which one ran

    return f


def test_the_call_is_one_equation_that_keeps_the_rule(backend_name: str) -> None:
    f = _sin_with_cos_rule([])
    text = str(jax.make_jaxpr(f)(1.0, 2.0))
    assert "custom_vmap_call[" in text and "in_tree=PyTreeDef(([], (*, *)))" in text
    assert "out_tree=PyTreeDef(*)" in text and "rule=<function " in text and "at 0xXXXXXXXXXXXX>" in text
    assert float(f(1.0, 2.0)) == pytest.approx(2 * np.sin(1.0))
    assert float(jax.jit(f)(1.0, 2.0)) == pytest.approx(2 * np.sin(1.0))  # evaluated: the function


def test_vmap_of_jit_calls_the_rule_inside_the_jitted_jaxpr(backend_name: str) -> None:
    calls: list[Any] = []
    f = _sin_with_cos_rule(calls)
    out = jax.vmap(jax.jit(f))(jnp.zeros(3), jnp.ones(3))
    np.testing.assert_allclose(np.asarray(out), np.ones(3))  # cos(0): the rule's answer
    assert calls == [(3, [True, True])]
    out = jax.vmap(f, in_axes=(0, None))(jnp.zeros(2), 2.0)
    np.testing.assert_allclose(np.asarray(out), [2.0, 2.0])
    assert calls[-1] == (2, [True, False])
    # Differentiating differentiates the function's body (JAX refuses reverse mode here).
    assert float(jax.grad(f)(0.5, 2.0)) == pytest.approx(2 * np.cos(0.5))


def test_a_rule_with_the_wrong_structure_gets_jaxs_error() -> None:
    @custom_vmap
    def f(x):  # type: ignore[no-untyped-def]
        return x * 2

    @f.def_vmap
    def rule(axis_size, in_batched, x):  # type: ignore[no-untyped-def]
        return (x, x), True

    with pytest.raises(ValueError, match=r"structure of output value and output batching specification returned by "
                                         r"custom vmap rule \(rule\) do not match"):
        jax.vmap(jax.jit(f))(jnp.ones(2))
