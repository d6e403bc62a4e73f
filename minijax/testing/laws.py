"""The transformation laws, checked with the transformed programs compiled on a backend.

A law check (``Check`` of kind ``jvp``, ``vjp``, ``transpose`` or ``vmap``)
holds a function ``f`` as a jaxpr and its inputs. minijax's transformations
turn ``f`` into a new jaxpr (``make_jaxpr(jvp(f))`` and so on), which is
compiled and run on the backend under test, and the law relates its results
to ``f``'s own results on the same backend:

* ``jvp``: the tangents of ``jvp(f)`` match central finite differences of
  ``f`` (``check_jvp``), along a seeded random direction, for the operands
  at ``options["positions"]`` (for eigh and svd, on the branch through
  ``f(x)``'s vectors: their signs at the steps matched to those at ``x``).
* ``vjp``: ``<vjp(f)(u), v> = <u, numerical jvp(f)(v)>`` (``check_vjp``).
* ``transpose``: for operands ``f`` is linear in (``options["positions"]``),
  the tangent map ``L`` of ``jvp(f)`` equals ``f`` itself, and
  ``<u, L v> = <L^T u, v>`` with ``L^T`` from ``vjp``, both exactly up to the
  rounding of sums.
* ``vmap``: ``vmap(f, in_axes, out_axes)`` on the stacked inputs equals
  ``f`` run on each batch element and stacked (``options["in_axes"]``,
  ``["out_axes"]``, ``["axis_size"]``).

``spec/transforms.md`` states the laws; ``spec/tolerances.md`` the tolerances.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import minijax
from minijax import dtypes
from minijax.backend import Backend
from minijax.jaxpr import ClosedJaxpr, eval_jaxpr
from minijax.testing.checks import Check, Compiled, Outcome
from minijax.testing.gradients import check_jvp, check_vjp, inner_product
from minijax.testing.tolerances import compare_program, with_expected_signs

NDArray = np.ndarray[Any, Any]

# The transposition law's tolerance, relative to the sum of the absolute
# products (both sides are exact up to the rounding of sums).
TRANSPOSE_RTOL: dict[str, float] = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 1e-5, "float64": 1e-12}


def _is_float(dt: Any) -> bool:
    return dtypes.issubdtype(np.dtype(dt), np.floating)


def as_function(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    """The jaxpr as a Python function (it binds each equation on the current trace)."""
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _restricted(check: Check) -> tuple[Callable[..., tuple[Any, ...]], list[int], list[int]]:
    """``f`` of the operands at ``positions`` (the others fixed to the check's inputs),
    returning its floating outputs only; with the positions and those outputs' indices."""
    positions = [int(i) for i in check.options["positions"]]
    outs = [k for k, a in enumerate(check.jaxpr.out_avals) if _is_float(a.dtype)]
    f = as_function(check.jaxpr)

    def restricted(*chosen: Any) -> tuple[Any, ...]:
        full: list[Any] = list(check.args)
        for i, x in zip(positions, chosen):
            full[i] = x
        results = f(*full)
        return tuple(results[k] for k in outs)

    return restricted, positions, outs


class _OnBackend:
    """``f`` and its transformations as functions of host arrays that run on one backend."""

    def __init__(self, check: Check, backend: Backend) -> None:
        self.check = check
        self.backend = backend
        self.f_full = Compiled(backend, check.jaxpr)
        self.restricted, self.positions, self.outs = _restricted(check)
        # eigh's and svd's vectors are fixed up to sign only, and the sign LAPACK picks can flip
        # between x + eps t and x - eps t, which turns a finite difference into 1/eps garbage.
        # The derivative the jvp rule gives is that of the branch through f(x)'s vectors, so the
        # finite differences are taken on that branch: each vector's sign matched to f(x)'s.
        eqns = check.jaxpr.jaxpr.eqns
        self.signed = eqns[0] if len(eqns) == 1 and eqns[0].primitive.name in ("eigh", "svd") else None
        self.anchor = self.f_full(*check.args) if self.signed is not None else None

    def f(self, *chosen: NDArray) -> tuple[NDArray, ...]:
        full = list(self.check.args)
        for i, x in zip(self.positions, chosen):
            full[i] = np.asarray(x)
        results = self.f_full(*full)
        if self.signed is not None and self.anchor is not None:
            results = with_expected_signs(self.signed.primitive.name, self.signed.params, results, self.anchor)
        return tuple(results[k] for k in self.outs)

    def compile(self, fn: Callable[..., Any], *example: Any) -> Compiled:
        return Compiled(self.backend, minijax.make_jaxpr(fn)(*example))


def _primals(check: Check, positions: Sequence[int]) -> list[NDArray]:
    return [np.asarray(check.args[i]) for i in positions]


def _fail(e: AssertionError) -> Outcome:
    return Outcome("fail", 0.0, " ".join(str(e).split()))


def law_jvp(check: Check, backend: Backend) -> Outcome:
    on = _OnBackend(check, backend)
    primals = _primals(check, on.positions)
    n = len(primals)
    jvp_program = on.compile(lambda *pt: minijax.jvp(on.restricted, pt[:n], pt[n:]), *primals, *primals)

    def f_jvp(p: Sequence[Any], t: Sequence[Any]) -> tuple[tuple[NDArray, ...], tuple[NDArray, ...]]:
        results = jvp_program(*[np.asarray(x) for x in (*p, *t)])
        k = len(on.outs)
        return tuple(results[:k]), tuple(results[k:])

    try:
        check_jvp(on.f, f_jvp, primals, err_msg=f"{check.subject}:")
    except AssertionError as e:
        return _fail(e)
    return Outcome("pass")


def _cotangents_like(outs: Sequence[NDArray]) -> list[NDArray]:
    return [np.zeros(np.shape(o), np.asarray(o).dtype) for o in outs]


def _vjp_program(on: _OnBackend, primals: Sequence[NDArray]) -> Compiled:
    n = len(primals)

    def pullback(*p_and_ct: Any) -> Any:
        _, vjp_fn = minijax.vjp(on.restricted, *p_and_ct[:n])
        return vjp_fn(tuple(p_and_ct[n:]))

    example_ct = _cotangents_like(on.f(*primals))
    return on.compile(pullback, *primals, *example_ct)


def law_vjp(check: Check, backend: Backend) -> Outcome:
    on = _OnBackend(check, backend)
    primals = _primals(check, on.positions)
    vjp_program = _vjp_program(on, primals)

    def f_vjp(*p: Any) -> tuple[tuple[NDArray, ...], Callable[[Any], tuple[NDArray, ...]]]:
        args = [np.asarray(x) for x in p]
        return on.f(*args), lambda ct: tuple(vjp_program(*args, *[np.asarray(c) for c in ct]))

    try:
        check_vjp(on.f, f_vjp, primals, err_msg=f"{check.subject}:")
    except AssertionError as e:
        return _fail(e)
    return Outcome("pass")


def _random_like(rng: np.random.Generator, x: NDArray) -> NDArray:
    return np.asarray(rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype))


def _f64(xs: Sequence[Any]) -> list[NDArray]:
    return [np.asarray(x, np.float64) for x in xs]


def law_transpose(check: Check, backend: Backend) -> Outcome:
    on = _OnBackend(check, backend)
    x = _primals(check, on.positions)
    n = len(x)
    rng = np.random.default_rng(2)
    t = [_random_like(rng, xi) for xi in x]
    lin_program = on.compile(lambda *xt: minijax.jvp(on.restricted, xt[:n], xt[n:])[1], *x, *x)
    lin_t = lin_program(*x, *t)
    # f is linear in x, so its tangent map is f itself.
    same = compare_program(lin_t, list(on.f(*t)), rtol=_rtol(x))
    if not same.ok:
        return Outcome("fail", same.worst_ulps, f"the tangent map L of jvp(f) differs from f, f being linear: {same.detail}")
    ct = [_random_like(rng, o) for o in lin_t]
    ct_in = _vjp_program(on, x)(*x, *ct)
    for i, (c, xi) in enumerate(zip(ct_in, x)):
        if (c.shape, c.dtype) != (xi.shape, xi.dtype):
            return Outcome("fail", np.inf, f"the cotangent of operand {on.positions[i]} is {c.dtype.name}{list(c.shape)}, "
                           f"but the operand is {xi.dtype.name}{list(xi.shape)}")  # fmt: skip
    lhs, rhs = inner_product(_f64(ct), _f64(lin_t)), inner_product(_f64(ct_in), _f64(t))
    scale = inner_product([np.abs(c) for c in _f64(ct)], [np.abs(v) for v in _f64(lin_t)])
    scale += inner_product([np.abs(c) for c in _f64(ct_in)], [np.abs(v) for v in _f64(t)])
    tol = _rtol(x)
    if not abs(lhs - rhs) <= tol * (scale + 1):
        return Outcome("fail", 0.0, f"<u, L v> = {lhs!r} but <L^T u, v> = {rhs!r}: they differ by {abs(lhs - rhs):.3g}, "
                       f"allowed {tol:g} * {scale + 1:.3g}")  # fmt: skip
    return Outcome("pass")


def _rtol(xs: Sequence[NDArray]) -> float:
    return max((TRANSPOSE_RTOL.get(np.asarray(x).dtype.name, 1e-5) for x in xs), default=1e-5)


def per_example(args: Sequence[NDArray], in_axes: Sequence[int | None], b: int) -> list[NDArray]:
    """The inputs of batch element ``b``: each batched input indexed along its axis."""
    return [np.asarray(a) if d is None else np.take(a, b, axis=d) for a, d in zip(args, in_axes)]


def law_vmap(check: Check, backend: Backend) -> Outcome:
    in_axes = [None if d is None else int(d) for d in check.options["in_axes"]]
    out_axes = int(check.options["out_axes"])
    size = int(check.options["axis_size"])
    f = as_function(check.jaxpr)
    # The per-example program: f at the avals of one batch element.
    one = per_example(check.args, in_axes, 0)
    f_one = Compiled(backend, minijax.make_jaxpr(f)(*one))
    vmapped = minijax.vmap(f, in_axes=tuple(in_axes), out_axes=out_axes, axis_size=size)
    got = Compiled(backend, minijax.make_jaxpr(vmapped)(*check.args))(*check.args)
    examples = [f_one(*per_example(check.args, in_axes, b)) for b in range(size)]
    want = [np.stack([ex[k] for ex in examples], axis=out_axes) for k in range(len(examples[0]))]
    same = compare_program(got, want)
    if not same.ok:
        return Outcome("fail", same.worst_ulps, f"vmap(f) differs from stacking f over the batch: {same.detail}")
    return Outcome("pass", same.worst_ulps)


LAWS: dict[str, Callable[[Check, Backend], Outcome]] = {
    "jvp": law_jvp,
    "vjp": law_vjp,
    "transpose": law_transpose,
    "vmap": law_vmap,
}


def run_law(check: Check, backend: Backend) -> Outcome:
    law = LAWS[check.kind]
    with np.errstate(all="ignore"):
        return law(check, backend)


__all__ = ["LAWS", "TRANSPOSE_RTOL", "as_function", "law_jvp", "law_transpose", "law_vjp", "law_vmap", "per_example",
           "run_law"]  # fmt: skip
