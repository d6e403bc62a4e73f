"""``minimize``: BFGS (Nocedal and Wright, algorithm 6.1) and JAX's
experimental L-BFGS (algorithm 7.5), each one ``lax.while_loop`` over the
iterations with the strong-Wolfe line search of ``line_search.py``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from minijax import dtypes, lax, numpy as jnp
from minijax.autodiff import value_and_grad
from minijax.scipy.optimize.line_search import line_search

__all__ = ["OptimizeResults", "minimize"]

_dot = functools.partial(jnp.dot, precision=lax.Precision.HIGHEST)
_einsum = functools.partial(jnp.einsum, precision=lax.Precision.HIGHEST)


class OptimizeResults(NamedTuple):
    """What ``minimize`` found.

    ``x``: the last iterate; ``success``: converged without a line-search
    failure; ``status``: why it stopped (BFGS: 0 converged, 1 ``maxiter``
    reached, 2 + the line search's status when that failed); ``fun`` and
    ``jac``: the objective and its gradient at ``x``; ``hess_inv``: BFGS's
    inverse-Hessian estimate (None for L-BFGS); ``nfev``, ``njev``: objective
    and gradient evaluations; ``nit``: iterations.
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


class _BFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def _bfgs(
    fun: Callable[[Any], Any],
    x0: Any,
    maxiter: int | None = None,
    norm: Any = np.inf,
    gtol: float = 1e-5,
    line_search_maxiter: int = 10,
) -> _BFGSState:
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    d = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSState(
        converged=jnp.linalg.norm(g_0, ord=norm) < gtol,
        failed=False,
        k=0,
        nfev=1,
        ngev=1,
        nhev=0,
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        H_k=jnp.eye(d, dtype=x0.dtype),
        # Makes the first line search start from the full step.
        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2,
        status=0,
        line_search_status=0,
    )

    def body(s: _BFGSState) -> _BFGSState:
        p_k = -_dot(s.H_k, s.g_k)
        ls = line_search(
            fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.old_old_fval, gfk=s.g_k, maxiter=line_search_maxiter
        )
        s = s._replace(nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, failed=ls.failed, line_search_status=ls.status)
        s_k = ls.a_k * p_k
        y_k = ls.g_k - s.g_k
        rho_k = jnp.reciprocal(_dot(y_k, s_k))
        # H' = (I - rho s y^T) H (I - rho y s^T) + rho s s^T; kept when y^T s is 0.
        w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * (s_k[:, None] * y_k[None, :])
        h_next = _einsum("ij,jk,lk", w, s.H_k, w) + rho_k * s_k[:, None] * s_k[None, :]
        h_next = jnp.where(jnp.isfinite(rho_k), h_next, s.H_k)
        return s._replace(
            converged=jnp.linalg.norm(ls.g_k, ord=norm) < gtol,
            k=s.k + 1,
            x_k=s.x_k + s_k,
            f_k=ls.f_k,
            g_k=ls.g_k,
            H_k=h_next,
            old_old_fval=s.f_k,
        )

    state = lax.while_loop(lambda s: (~s.converged) & (~s.failed) & (s.k < maxiter), body, state)
    status = jnp.where(
        state.converged,
        0,
        jnp.where(state.k == maxiter, 1, jnp.where(state.failed, 2 + state.line_search_status, -1)),
    )
    done: _BFGSState = state._replace(status=status)
    return done


class _LBFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _lbfgs_direction(s: _LBFGSState) -> Any:
    """-H g by the two-loop recursion over the stored pairs (newest last in the history)."""
    dtype = s.rho_history.dtype
    size = len(s.rho_history)
    used = jnp.where(s.k < size, s.k, size)

    def backward(j: Any, carry: Any) -> Any:
        q, alphas = carry
        i = size - 1 - j
        a_i = s.rho_history[i] * _dot(jnp.conj(s.s_history[i]), q).real.astype(dtype)
        return q - a_i * jnp.conj(s.y_history[i]), alphas.at[i].set(a_i)

    q, alphas = lax.fori_loop(0, used, backward, (-jnp.conj(s.g_k), jnp.zeros_like(s.rho_history)))
    q = s.gamma * q

    def forward(j: Any, q: Any) -> Any:
        i = size - used + j
        b_i = s.rho_history[i] * _dot(s.y_history[i], q).real.astype(dtype)
        return q + (alphas[i] - b_i) * s.s_history[i]

    return lax.fori_loop(0, used, forward, q)


def _push(history: Any, new: Any) -> Any:
    return jnp.roll(history, -1, axis=0).at[-1].set(new)


def _lbfgs(
    fun: Callable[[Any], Any],
    x0: Any,
    maxiter: float | None = None,
    norm: Any = np.inf,
    maxcor: int = 10,
    ftol: float = 2.220446049250313e-09,
    gtol: float = 1e-05,
    maxfun: float | None = None,
    maxgrad: float | None = None,
    maxls: int = 20,
) -> _LBFGSState:
    d = len(x0)
    dtype = dtypes.dtype(x0)
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    limit_iter = np.inf if maxiter is None else maxiter
    limit_fun = np.inf if maxfun is None else maxfun
    limit_grad = np.inf if maxgrad is None else maxgrad
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _LBFGSState(
        converged=jnp.array(False, dtype=bool),
        failed=jnp.array(False, dtype=bool),
        k=0,
        nfev=1,
        ngev=1,
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        s_history=jnp.zeros((maxcor, d), dtype=dtype),
        y_history=jnp.zeros((maxcor, d), dtype=dtype),
        rho_history=jnp.zeros((maxcor,), dtype=dtype),
        gamma=1.0,
        status=0,
        ls_status=0,
    )

    def body(s: _LBFGSState) -> _LBFGSState:
        p_k = _lbfgs_direction(s)
        ls = line_search(f=fun, xk=s.x_k, pk=p_k, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        s_k = jnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
        x_next = s.x_k + s_k
        y_k = ls.g_k - s.g_k
        rho_inv = jnp.real(_dot(y_k, s_k))
        rho_k = jnp.reciprocal(rho_inv).astype(y_k.dtype)
        gamma = rho_inv / jnp.real(_dot(jnp.conj(y_k), y_k))
        # The last condition written wins: a line-search failure over maxiter over maxfun ...
        status = jnp.array(0)
        status = jnp.where(s.f_k - ls.f_k < ftol, 4, status)
        status = jnp.where(s.ngev >= limit_grad, 3, status)
        status = jnp.where(s.nfev >= limit_fun, 2, status)
        status = jnp.where(s.k >= limit_iter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = jnp.linalg.norm(ls.g_k, ord=norm) < gtol
        return s._replace(
            converged=converged,
            failed=(status > 0) & (~converged),
            k=s.k + 1,
            nfev=s.nfev + ls.nfev,
            ngev=s.ngev + ls.ngev,
            x_k=x_next.astype(s.x_k.dtype),
            f_k=ls.f_k.astype(s.f_k.dtype),
            g_k=ls.g_k.astype(s.g_k.dtype),
            s_history=_push(s.s_history, s_k),
            y_history=_push(s.y_history, y_k),
            rho_history=_push(s.rho_history, rho_k),
            gamma=gamma.astype(s.g_k.dtype),
            status=jnp.where(converged, 0, status),
            ls_status=ls.status,
        )

    out: _LBFGSState = lax.while_loop(lambda s: (~s.converged) & (~s.failed), body, state)
    return out


def minimize(
    fun: Callable[..., Any],
    x0: Any,
    args: tuple[Any, ...] = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimize ``fun(x, *args)`` over the 1-D array ``x`` from ``x0``.

    ``method``: ``'BFGS'`` (options ``maxiter``, ``norm``, ``gtol``,
    ``line_search_maxiter``) or ``'l-bfgs-experimental-do-not-rely-on-this'``
    (``maxiter``, ``norm``, ``maxcor``, ``ftol``, ``gtol``, ``maxfun``,
    ``maxgrad``, ``maxls``). ``tol`` is accepted and, as in JAX, unused: use
    ``options={'gtol': ...}``.
    """
    del tol
    opts = dict(options or {})
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def objective(x: Any) -> Any:
        return fun(x, *args)

    if method.lower() == "bfgs":
        b = _bfgs(objective, x0, **opts)
        return OptimizeResults(
            x=b.x_k,
            success=b.converged & jnp.logical_not(b.failed),
            status=b.status,
            fun=b.f_k,
            jac=b.g_k,
            hess_inv=b.H_k,
            nfev=b.nfev,
            njev=b.ngev,
            nit=b.k,
        )
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        lb = _lbfgs(objective, x0, **opts)
        return OptimizeResults(
            x=lb.x_k,
            success=lb.converged & jnp.logical_not(lb.failed),
            status=lb.status,
            fun=lb.f_k,
            jac=lb.g_k,
            hess_inv=None,
            nfev=lb.nfev,
            njev=lb.ngev,
            nit=lb.k,
        )
    raise ValueError(f"Method {method} not recognized")
