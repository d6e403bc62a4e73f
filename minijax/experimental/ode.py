"""``jax.experimental.ode.odeint``: adaptive Dormand-Prince integration, differentiable by adjoints.

The solver is the explicit Runge-Kutta pair of Dormand and Prince (order 5,
with an embedded order-4 estimate of the local error; Math. Comp. 46, 1986).
Each accepted step also fits a quartic through the step (values and slopes at
both ends, and Shampine's midpoint estimate), and the solution at a requested
time is that quartic evaluated there, so output times never shorten a step.
The step size follows the usual controller: grow or shrink by
``0.9 * ratio**(-1/5)`` within [0.2, 10], where ``ratio`` is the RMS of the
error estimate over the tolerance ``atol + rtol * |y|``; a step is accepted
when the ratio is at most 1. The first step is chosen by Hairer, Norsett and
Wanner's rule (Solving ODEs I, II.4).

Reverse-mode derivatives solve the adjoint system backwards in time between
consecutive output times (Chen et al. 2018, appendix C): the state, its
cotangent, the time cotangent and the cotangents of ``args`` are integrated
together by the same solver, so the memory does not grow with the number of
steps. Forward-mode derivatives (``jvp``) are not defined, as in JAX.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import minijax.numpy as jnp
from minijax import lax, tree_util
from minijax.api import default_matmul_precision
from minijax.autodiff import vjp
from minijax.core import is_array_like
from minijax.custom_derivatives import closure_convert, custom_vjp
from minijax.flatten_util import ravel_pytree
from minijax.stages import jit
from minijax.vectorization import vmap

__all__ = ["odeint"]

# The Dormand-Prince tableau: stage i (1..6) is evaluated at t + dt * NODES[i-1]
# from y + dt * (WEIGHTS[i-1] . k); the order-5 solution weighs the 7 stages by
# SOLUTION, the local-error estimate by ERROR (order 5 minus order 4), and
# MIDPOINT gives y at t + dt/2 for the dense-output quartic.
NODES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
WEIGHTS = (
    (1 / 5, 0, 0, 0, 0, 0, 0),
    (3 / 40, 9 / 40, 0, 0, 0, 0, 0),
    (44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0),
    (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0),
)
SOLUTION = (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0)
ERROR = (
    35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
    -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60,
)
MIDPOINT = tuple(c / 2 for c in (
    6025192743 / 30085553152, 0, 51252292925 / 65400821598, -2691868925 / 45128329728,
    187940372067 / 1594534317056, -1776094331 / 19743644256, 11237099 / 235043384,
))

# The step-size controller (order 5 errors).
SAFETY, MAX_GROWTH, MAX_SHRINK, ORDER = 0.9, 10.0, 0.2, 5.0


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8, atol: float = 1.4e-8,
           mxstep: float = math.inf, hmax: float = math.inf) -> Any:
    """Solve ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0`` and return ``y`` at every time in ``t``.

    ``y0`` is an array or a pytree of arrays; the result has its structure,
    each leaf with a new leading axis of length ``len(t)``. ``t`` must be a
    strictly increasing array of floats. ``rtol``/``atol`` bound the local
    error of each step, ``mxstep`` the number of steps between two output
    times (the solution stops advancing when it is reached), ``hmax`` the step
    size. ``args`` are arrays (or pytrees of them) that ``grad`` can
    differentiate through, as can ``y0`` and ``t``.
    """
    for leaf in tree_util.tree_leaves(args):
        if not is_array_like(leaf):
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, but got {leaf}.")
    t = jnp.asarray(t)
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    # Values func closes over become explicit arguments, so the adjoint differentiates them too.
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _solve_pytree(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


@partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _solve_pytree(func: Callable[..., Any], rtol: float, atol: float, mxstep: float, hmax: float, y0: Any, ts: Any,
                  *args: Any) -> Any:
    y0_flat, unravel = ravel_pytree(y0)

    def flat_func(y: Any, t: Any, *a: Any) -> Any:
        return ravel_pytree(func(unravel(y), t, *a))[0]

    with default_matmul_precision("highest"):  # the tableau's dot products in full float32
        ys = _solve(flat_func, rtol, atol, mxstep, hmax, y0_flat, ts, *args)
    return vmap(unravel)(ys)


def _stages(func: Callable[[Any, Any], Any], y: Any, f: Any, t: Any, dt: Any) -> Any:
    """The 7 stage slopes of one step from (t, y), the first being ``f = func(y, t)``."""
    weights = jnp.array(WEIGHTS, dtype=f.dtype)
    nodes = jnp.array(NODES, dtype=dt.dtype)
    step = dt.astype(f.dtype)

    def stage(i: Any, k: Any) -> Any:
        return k.at[i].set(func(y + step * jnp.dot(weights[i - 1], k), t + dt * nodes[i - 1]))

    return lax.fori_loop(1, 7, stage, jnp.zeros((7, f.shape[0]), f.dtype).at[0].set(f))


def _error_ratio(error: Any, rtol: float, atol: float, y: Any, y_next: Any) -> Any:
    """RMS of the error estimate over the tolerance at the larger of the two ends."""
    tolerance = (atol + rtol * jnp.maximum(jnp.abs(y), jnp.abs(y_next))).astype(error.dtype)
    ratio = error / tolerance
    squared = ratio.real ** 2 + ratio.imag ** 2 if jnp.iscomplexobj(ratio) else ratio ** 2
    return jnp.sqrt(jnp.mean(squared))


def _next_step(dt: Any, ratio: Any) -> Any:
    """The controller: a step after a rejection never grows (the factor is at most 1 there)."""
    shrink_floor = jnp.where(ratio < 1, 1.0, MAX_SHRINK)
    factor = jnp.minimum(MAX_GROWTH, jnp.maximum(ratio ** (-1.0 / ORDER) * SAFETY, shrink_floor))
    return jnp.where(ratio == 0, dt * MAX_GROWTH, dt * factor)


def _quartic(y: Any, y_next: Any, k: Any, dt: Any) -> Any:
    """Coefficients (highest power first) of the quartic q on [0, 1] with q(0) = y,
    q(1) = y_next, q(1/2) = the midpoint estimate, and slopes dt*k[0], dt*k[-1] at the ends."""
    h = dt.astype(y.dtype)
    y_mid = y + h * jnp.dot(jnp.array(MIDPOINT, dtype=y.dtype), k)
    k0, k1 = k[0], k[-1]
    # Each slope term is (coefficient * h) * k: the rounding JAX's solver has, so that an
    # extrapolated output (mxstep reached) agrees with JAX's to float32 precision.
    a = -2.0 * h * k0 + 2.0 * h * k1 - 8.0 * y - 8.0 * y_next + 16.0 * y_mid
    b = 5.0 * h * k0 - 3.0 * h * k1 + 18.0 * y + 14.0 * y_next - 32.0 * y_mid
    c = -4.0 * h * k0 + h * k1 - 11.0 * y - 5.0 * y_next + 16.0 * y_mid
    return jnp.stack([a, b, c, h * k0, y])


def _first_step(func: Callable[[Any, Any], Any], t0: Any, y0: Any, f0: Any, rtol: float, atol: float) -> Any:
    """Hairer-Norsett-Wanner's starting step for an order-4 error estimate."""
    scale = (atol + jnp.abs(y0) * rtol).astype(y0.dtype)
    d0, d1 = jnp.linalg.norm(y0 / scale), jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = func(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / 5.0))
    return jnp.minimum(100.0 * h0, h1)


@partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _solve(func: Callable[..., Any], rtol: float, atol: float, mxstep: float, hmax: float, y0: Any, ts: Any,
           *args: Any) -> Any:
    """The flat solution: ``ys[i]`` is y at ``ts[i]`` (``y0`` a vector)."""
    def dynamics(y: Any, t: Any) -> Any:
        return func(y, t, *args)

    def advance_to(carry: list[Any], target: Any) -> tuple[list[Any], Any]:
        # carry: y, f = dynamics(y, t), t, the next step size, the previous t, the quartic of the last step.
        def keep_stepping(state: list[Any]) -> Any:
            count, _, _, t, dt, _, _ = state
            return (t < target) & (count < mxstep) & (dt > 0)

        def try_step(state: list[Any]) -> list[Any]:
            count, y, f, t, dt, t_prev, poly = state
            k = _stages(dynamics, y, f, t, dt)
            h = dt.astype(f.dtype)
            y_next = y + h * jnp.dot(jnp.array(SOLUTION, dtype=f.dtype), k)
            ratio = _error_ratio(h * jnp.dot(jnp.array(ERROR, dtype=f.dtype), k), rtol, atol, y, y_next)
            dt_next = jnp.clip(_next_step(dt, ratio), min=0.0, max=hmax)
            accepted = [count + 1, y_next, k[-1], t + dt, dt_next, t, _quartic(y, y_next, k, dt)]
            rejected = [count + 1, y, f, t, dt_next, t_prev, poly]
            return [jnp.where(ratio <= 1.0, a, r) for a, r in zip(accepted, rejected)]

        _, *carry = lax.while_loop(keep_stepping, try_step, [0, *carry])
        _, _, t, _, t_prev, poly = carry
        where = ((target - t_prev) / (t - t_prev)).astype(poly.dtype)  # in [0, 1] on the last accepted step
        return carry, jnp.polyval(poly, where)

    f0 = dynamics(y0, ts[0])
    dt0 = jnp.clip(_first_step(dynamics, ts[0], y0, f0, rtol, atol), min=0.0, max=hmax)
    start = [y0, f0, ts[0], dt0, ts[0], jnp.stack([y0] * 5)]
    _, ys = lax.scan(advance_to, start, ts[1:])
    return jnp.concatenate([y0[None], ys])


def _solve_fwd(func: Callable[..., Any], rtol: float, atol: float, mxstep: float, hmax: float, y0: Any, ts: Any,
               *args: Any) -> tuple[Any, Any]:
    ys = _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _solve_bwd(func: Callable[..., Any], rtol: float, atol: float, mxstep: float, hmax: float, residuals: Any,
               ys_bar: Any) -> tuple[Any, ...]:
    ys, ts, args = residuals

    def adjoint(state: Any, minus_t: Any, *a: Any) -> Any:
        # Integrated in reversed time s = -t: the state runs backwards (-dy/dt), and the
        # cotangents of (y, t, args) gather the vjp of the dynamics along the way.
        y, y_bar = state[0], state[1]
        dy, pullback = vjp(func, y, -minus_t, *a)
        return (-dy, *pullback(y_bar))

    def back_one_interval(carry: Any, i: Any) -> tuple[Any, Any]:
        y_bar, t0_bar, args_bar = carry
        # Moving the output time ts[i] moves ys[i] by dynamics * dt.
        t_bar = jnp.dot(func(ys[i], ts[i], *args), ys_bar[i]).real
        solved = odeint(adjoint, (ys[i], y_bar, t0_bar - t_bar, args_bar), jnp.stack([-ts[i], -ts[i - 1]]), *args,
                        rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        _, y_bar, t0_bar, args_bar = tree_util.tree_map(lambda leaf: leaf[1], solved)
        return (y_bar + ys_bar[i - 1], t0_bar, args_bar), t_bar

    start = (ys_bar[-1], jnp.zeros((), ts.dtype), tree_util.tree_map(jnp.zeros_like, args))
    (y0_bar, t0_bar, args_bar), later_ts_bar = lax.scan(back_one_interval, start, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([t0_bar[None], later_ts_bar[::-1]])
    return (y0_bar, ts_bar, *args_bar)


_solve.defvjp(_solve_fwd, _solve_bwd)
