"""The strong-Wolfe line search (Nocedal and Wright, algorithms 3.5 and 3.6)
used by BFGS and L-BFGS, traceable: both loops are ``lax.while_loop``s and
every branch is a ``where``, so one search is one staged computation.

``phi(a) = f(x + a p)``. The outer loop doubles the step until it brackets a
point satisfying both Wolfe conditions; ``_zoom`` then narrows the bracket by
cubic, quadratic or bisection steps (the first that lands safely inside it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from minijax import dtypes, lax, numpy as jnp
from minijax.array import Array
from minijax.autodiff import value_and_grad
from minijax.numpy.util import promote_dtypes_inexact

_dot = functools.partial(jnp.dot, precision=lax.Precision.HIGHEST)


def _cubic_minimizer(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """The minimizer of the cubic through (a, fa) with slope fpa at a, (b, fb) and (c, fc)."""
    dtype = dtypes.result_type(a, fa, fpa, b, fb, c, fc)
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    m = jnp.array([[dc**2, -(db**2)], [-(dc**3), db**3]], dtype=dtype)
    rhs = jnp.array([fb - fa - fpa * db, fc - fa - fpa * dc], dtype=dtype)
    cubic, quad = _dot(m, rhs) / denom
    return a + (-quad + jnp.sqrt(quad * quad - 3.0 * cubic * fpa)) / (3.0 * cubic)


def _quadratic_minimizer(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    """The minimizer of the parabola through (a, fa) with slope fpa at a, and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db**2)
    return a - fpa / (2.0 * curvature)


def _choose(pick: Any, state: Any, **new: Any) -> Any:
    """``state`` with the named fields replaced by ``new``'s where ``pick`` holds."""
    return state._replace(**{k: jnp.where(pick, v, getattr(state, k)) for k, v in new.items()})


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any  # the previous a_hi or a_lo: the cubic's third point
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


PhiFn = Callable[[Any], tuple[Any, Any, Any]]


def _zoom(
    phi_fn: PhiFn,
    armijo_fails: Callable[[Any, Any], Any],
    curvature_holds: Callable[[Any], Any],
    a_lo: Any,
    phi_lo: Any,
    dphi_lo: Any,
    a_hi: Any,
    phi_hi: Any,
    dphi_hi: Any,
    g_0: Any,
    skip: Any,
) -> _Zoom:
    """Narrow [a_lo, a_hi] to a step satisfying the strong Wolfe conditions (skipped when ``skip``)."""
    state = _Zoom(
        done=False,
        failed=False,
        j=0,
        a_lo=a_lo,
        phi_lo=phi_lo,
        dphi_lo=dphi_lo,
        a_hi=a_hi,
        phi_hi=phi_hi,
        dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0,
        phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=1.0,
        phi_star=phi_lo,
        dphi_star=dphi_lo,
        g_star=g_0,
        nfev=0,
        ngev=0,
    )
    # A trial step must keep this fraction of the bracket to either side (cubic, quadratic).
    cubic_margin, quad_margin = 0.2, 0.1

    def body(s: _Zoom) -> _Zoom:
        width = s.a_hi - s.a_lo
        lo, hi = jnp.minimum(s.a_hi, s.a_lo), jnp.maximum(s.a_hi, s.a_lo)
        threshold = jnp.where(dtypes.finfo(width.dtype).bits < 64, 1e-5, 1e-10)
        s = s._replace(failed=s.failed | (width <= threshold))
        a_cubic = _cubic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cubic = (s.j > 0) & (a_cubic > lo + cubic_margin * width) & (a_cubic < hi - cubic_margin * width)
        a_quad = _quadratic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = (~use_cubic) & (a_quad > lo + quad_margin * width) & (a_quad < hi - quad_margin * width)
        use_bisection = (~use_cubic) & (~use_quad)
        a_j = jnp.where(use_cubic, a_cubic, s.a_rec)
        a_j = jnp.where(use_quad, a_quad, a_j)
        a_j = jnp.where(use_bisection, (s.a_lo + s.a_hi) / 2.0, a_j)
        phi_j, dphi_j, g_j = phi_fn(a_j)
        phi_j = phi_j.astype(s.phi_lo.dtype)
        dphi_j = dphi_j.astype(s.dphi_lo.dtype)
        g_j = g_j.astype(s.g_star.dtype)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        # Algorithm 3.6's cases, as masks.
        shrink_hi = armijo_fails(a_j, phi_j) | (phi_j >= s.phi_lo)
        found = curvature_holds(dphi_j) & (~shrink_hi)
        flip = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & (~shrink_hi) & (~found)
        move_lo = (~shrink_hi) & (~found)
        s = _choose(shrink_hi, s, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s.a_hi, phi_rec=s.phi_hi)
        s = _choose(found, s, a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)._replace(done=found | s.done)
        s = _choose(flip, s, a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo, a_rec=s.a_hi, phi_rec=s.phi_hi)
        s = _choose(move_lo & ~flip, s, a_rec=s.a_lo, phi_rec=s.phi_lo)
        s = _choose(move_lo, s, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        s = s._replace(j=s.j + 1)
        return s._replace(failed=s.failed | (s.j >= 30))

    out: _Zoom = lax.while_loop(lambda s: (~s.done) & (~skip) & (~s.failed), body, state)
    return out


class _Search(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class LineSearchResults(NamedTuple):
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def line_search(
    f: Callable[[Any], Any],
    xk: Any,
    pk: Any,
    old_fval: Any = None,
    old_old_fval: Any = None,
    gfk: Any = None,
    c1: float = 1e-4,
    c2: float = 0.9,
    maxiter: int = 20,
) -> LineSearchResults:
    """A step along ``pk`` from ``xk`` satisfying the strong Wolfe conditions (sufficient decrease ``c1``, curvature ``c2``)."""
    xk, pk = promote_dtypes_inexact(xk, pk)

    def phi_fn(t: Any) -> tuple[Any, Any, Any]:
        t = jnp.array(t, dtype=pk.dtype)
        value, grad = value_and_grad(f)(xk + t * pk)
        return value, jnp.real(_dot(grad, pk)), grad

    evaluated_start = old_fval is None or gfk is None
    if evaluated_start:
        phi_0, dphi_0, gfk = phi_fn(0)
    else:
        phi_0, dphi_0 = old_fval, jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        # Nocedal and Wright's initial step from the last decrease, capped at the full step.
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start: Array | int = jnp.where(candidate > 1, 1.0, candidate)
    else:
        start = 1

    def armijo_fails(a: Any, phi: Any) -> Any:
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_holds(dphi: Any) -> Any:
        return jnp.abs(dphi) <= -c2 * dphi_0

    state = _Search(
        done=jnp.array(False, dtype=bool),
        failed=jnp.array(False, dtype=bool),
        i=1,
        a_i1=0.0,
        phi_i1=phi_0,
        dphi_i1=dphi_0,
        nfev=1 if evaluated_start else 0,
        ngev=1 if evaluated_start else 0,
        a_star=0.0,
        phi_star=phi_0,
        dphi_star=dphi_0,
        g_star=gfk,
    )

    def body(s: _Search) -> _Search:
        a_i = jnp.where(s.i == 1, start, s.a_i1 * 2.0)
        phi_i, dphi_i, g_i = phi_fn(a_i)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        # Algorithm 3.5: zoom on [a_{i-1}, a_i] or [a_i, a_{i-1}], accept a_i, or go on.
        zoom_up = armijo_fails(a_i, phi_i) | ((phi_i >= s.phi_i1) & (s.i > 1))
        accept = curvature_holds(dphi_i) & (~zoom_up)
        zoom_down = (dphi_i >= 0.0) & (~zoom_up) & (~accept)
        up = _zoom(
            phi_fn, armijo_fails, curvature_holds, s.a_i1, s.phi_i1, s.dphi_i1, a_i, phi_i, dphi_i, gfk, ~zoom_up
        )
        s = s._replace(nfev=s.nfev + up.nfev, ngev=s.ngev + up.ngev)
        down = _zoom(
            phi_fn, armijo_fails, curvature_holds, a_i, phi_i, dphi_i, s.a_i1, s.phi_i1, s.dphi_i1, gfk, ~zoom_down
        )
        s = s._replace(nfev=s.nfev + down.nfev, ngev=s.ngev + down.ngev)
        s = _choose(zoom_up, s, a_star=up.a_star, phi_star=up.phi_star, dphi_star=up.dphi_star, g_star=up.g_star)
        s = s._replace(done=zoom_up | s.done, failed=(zoom_up & up.failed) | s.failed)
        s = _choose(accept, s, a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)._replace(done=accept | s.done)
        s = _choose(
            zoom_down, s, a_star=down.a_star, phi_star=down.phi_star, dphi_star=down.dphi_star, g_star=down.g_star
        )
        s = s._replace(done=zoom_down | s.done, failed=(zoom_down & down.failed) | s.failed)
        return s._replace(i=s.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(lambda s: (~s.done) & (s.i <= maxiter) & (~s.failed), body, state)
    # 1: zoom failed; 3: maxiter reached; 0: found.
    status = jnp.where(state.failed, jnp.array(1), jnp.where(state.i > maxiter, jnp.array(3), jnp.array(0)))
    alpha = jnp.asarray(state.a_star)
    # Below float64 a vanishing step is bumped to 1e-8 so that BFGS's update stays finite.
    alpha = jnp.where((dtypes.finfo(alpha.dtype).bits != 64) & (jnp.abs(alpha) < 1e-8), jnp.sign(alpha) * 1e-8, alpha)
    return LineSearchResults(
        failed=state.failed | (~state.done),
        nit=state.i - 1,
        nfev=state.nfev,
        ngev=state.ngev,
        k=state.i,
        a_k=alpha,
        f_k=state.phi_star,
        g_k=state.g_star,
        status=status,
    )
