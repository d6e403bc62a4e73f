"""jax.experimental.ode.odeint against real JAX: the same solutions and adjoint gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402  (after the importorskip)
import minijax.experimental.ode  # noqa: E402

pytestmark = pytest.mark.oracle


def _results(lib: Any, odeint: Any) -> list[Any]:
    jnp = lib.numpy

    def forced(y, t, k):  # type: ignore[no-untyped-def]
        return -k * y + jnp.sin(t)

    ts = jnp.linspace(0.0, 3.0, 7)
    w = jnp.array(0.3)

    def pendulum(s, t):  # type: ignore[no-untyped-def]
        return {"x": s["v"], "v": -jnp.sin(s["x"]) - w * s["v"]}

    out = odeint(pendulum, {"x": jnp.array(1.0), "v": jnp.array(0.0)}, jnp.linspace(0.0, 5.0, 4), rtol=1e-6, atol=1e-6)
    grads = lib.grad(lambda y0, k, t: odeint(forced, y0, t, k).sum(), argnums=(0, 1, 2))(jnp.array([1.0, 2.0]), 0.7, ts)
    return [np.asarray(odeint(forced, jnp.array([1.0, 2.0]), ts, 0.7)), np.asarray(out["x"]), np.asarray(out["v"]),
            *[np.asarray(g) for g in grads]]


def test_solutions_and_gradients_equal_jaxs() -> None:
    from jax.experimental.ode import odeint as jax_odeint

    ours, theirs = _results(minijax, minijax.experimental.ode.odeint), _results(jax, jax_odeint)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
