"""jax.experimental.ode.odeint: accuracy against closed forms, pytrees, closures, and adjoint gradients."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.experimental.ode import odeint


def decay(y, t, k):  # type: ignore[no-untyped-def]
    return -k * y


def test_exponential_decay_is_solved_to_the_tolerance(backend_name: str) -> None:
    ts = jnp.linspace(0.0, 2.0, 5)
    ys = odeint(decay, jnp.array([1.0, 3.0]), ts, 0.8, rtol=1e-6, atol=1e-6)
    exact = np.array([1.0, 3.0]) * np.exp(-0.8 * np.asarray(ts))[:, None]
    assert ys.shape == (5, 2) and ys.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(ys), exact, rtol=2e-5)


def test_a_pytree_state_and_a_closed_over_parameter(backend_name: str) -> None:
    omega = jnp.array(2.0)

    def oscillator(state, t):  # type: ignore[no-untyped-def]
        return {"x": state["v"], "v": -(omega ** 2) * state["x"]}

    ts = jnp.linspace(0.0, 1.5, 4)
    out = odeint(oscillator, {"x": jnp.array(1.0), "v": jnp.array(0.0)}, ts, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(np.asarray(out["x"]), np.cos(2.0 * np.asarray(ts)), atol=2e-5)
    np.testing.assert_allclose(np.asarray(out["v"]), -2.0 * np.sin(2.0 * np.asarray(ts)), atol=5e-5)


def test_adjoint_gradients_match_the_closed_form(backend_name: str) -> None:
    # y(t) = y0 exp(-k t): d/dk = -t y, d/dy0 = exp(-k t), d/dt1 = -k y(t1), d/dt0 = +k y0 exp(-k (t1 - t0)).
    ts = jnp.array([0.0, 1.5])

    def final(y0, k, times):  # type: ignore[no-untyped-def]
        return odeint(decay, y0, times, k, rtol=1e-7, atol=1e-7)[-1]

    g_y0, g_k, g_ts = jax.grad(final, argnums=(0, 1, 2))(2.0, 0.5, ts)
    y1 = 2.0 * np.exp(-0.75)
    np.testing.assert_allclose([float(g_y0), float(g_k)], [np.exp(-0.75), -1.5 * y1], rtol=1e-4)
    np.testing.assert_allclose(np.asarray(g_ts), [0.5 * y1, -0.5 * y1], rtol=1e-4)
    # A parameter the dynamics close over is differentiated too (closure conversion).
    g_w = jax.grad(lambda w: odeint(lambda y, t: -w * y, 1.0, ts)[-1])(0.5)
    assert float(g_w) == pytest.approx(-1.5 * np.exp(-0.75), rel=1e-4)


def test_it_composes_with_jit_and_vmap(backend_name: str) -> None:
    ts = jnp.array([0.0, 1.0])
    solve = jax.jit(lambda y0: odeint(decay, y0, ts, 1.0)[-1])
    batched = jax.vmap(solve)(jnp.array([1.0, 2.0, 4.0]))
    np.testing.assert_allclose(np.asarray(batched), np.array([1.0, 2.0, 4.0]) * np.exp(-1.0), rtol=1e-5)


def test_mxstep_stops_the_solver_and_bad_arguments_are_refused(backend_name: str) -> None:
    ys = odeint(decay, jnp.array([1.0]), jnp.array([0.0, 50.0]), 1.0, mxstep=2)
    assert np.isfinite(np.asarray(ys)).all()
    with pytest.raises(TypeError, match="The contents of odeint \\*args must be arrays or scalars, but got a."):
        odeint(decay, jnp.array([1.0]), jnp.array([0.0, 1.0]), "a")
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(decay, jnp.array([1.0]), jnp.arange(3), 1.0)
