"""Checking derivatives against finite differences: ``check_grads``, ``check_jvp``, ``check_vjp``.

The API and its semantics are JAX's (``jax.test_util``): derivatives are
checked along one random direction (so the cost does not grow with the
number of inputs and outputs), forward mode against central finite
differences, reverse mode through the identity

    <vjp(u), v> = <u, jvp(v)>

with ``jvp(v)`` computed numerically; both recursively up to ``order``. A
failed check raises ``AssertionError`` naming the check (``"VJP of JVP"``),
the output leaf, the worst difference and the tolerance used.

Where minijax differs (both documented in ``spec/tolerances.md``, section
"Gradient checks"):

* The default step ``eps`` depends on the arguments' dtype (JAX uses 1e-4
  everywhere, which is too small to measure anything in float16 and loses
  half of float32's digits to rounding).
* Finite differences are taken along the direction the rounded arguments
  actually moved: ``(x⁺ - x⁻) / 2·eps`` with ``x± = round(x ± eps·t)``, and
  the derivative is checked along that same direction. The rounding of the
  step then costs nothing, and the outputs are differenced in float64.

Complex arguments and outputs are perturbed and compared as JAX does it: a
random complex direction, and the pairing ``<x, y> = Re(sum(x * y))`` (without
conjugation: for it, the vjp is the transpose of the jvp in JAX's convention
for complex values, where ``mul``'s transpose multiplies by the same factor).

Arguments must be floating point or complex (every argument is perturbed): close over
integer arguments (``check_grads(lambda x: f(x, n), (x,), 1)``). Outputs of
integer or boolean dtype are allowed; their tangents must be ``float0``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from minijax import dtypes, tree_util
from minijax.autodiff import jvp as _jvp, linearize as _linearize, vjp as _vjp

Tolerance = float | Mapping[Any, float] | None
NDArray = np.ndarray[Any, Any]

_F64 = np.dtype(np.float64)
_BF16 = np.dtype(dtypes.bfloat16)

# Default tolerances (absolute and relative alike) for comparing derivatives,
# by the dtype of the values compared: JAX's ``default_gradient_tolerance``.
# As in JAX they are multiplied by the number of elements compared.
GRADIENT_TOLERANCE: dict[np.dtype[Any], float] = {
    _BF16: 1e-1,
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 2e-3,
    np.dtype(np.complex128): 1e-5,
}

# Default finite-difference step by dtype: near the cube root of the dtype's
# machine epsilon, where the truncation error of central differences
# (eps² · f''' / 6) and the rounding error of the outputs (ulp(f) / eps)
# are both far below the tolerance above. The least precise floating
# argument picks the step for all of them.
DEFAULT_EPS: dict[np.dtype[Any], float] = {
    _BF16: 2.5e-1,
    np.dtype(np.float16): 1e-1,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 2e-3,
    np.dtype(np.complex128): 1e-5,
}


# ---------------------------------------------------------------------------
# Leaves: dtypes, random directions, arithmetic in float64


def _leaf_dtype(x: Any) -> np.dtype[Any]:
    """The dtype minijax computes ``x`` in (Python floats are float32 without x64)."""
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = dtypes.python_scalar_dtypes.get(type(x), np.asarray(x).dtype)
    if dt == dtypes.float0:
        return dtypes.float0
    return dtypes.canonicalize_dtype(dt)


def _is_float(dt: np.dtype[Any]) -> bool:
    """Floating or complex: a leaf that has a derivative."""
    return dt != dtypes.float0 and dtypes.issubdtype(dt, np.inexact)


def _like(x: Any, value: NDArray) -> Any:
    """``value`` in the form of ``x``: a Python float stays a Python float (and weakly typed)."""
    if isinstance(x, float):
        return float(np.real(value))
    if isinstance(x, complex):
        return complex(value)
    dt = _leaf_dtype(x)
    return np.asarray(np.real(value) if dt.kind != "c" else value).astype(dt)


def _machine_eps(dt: np.dtype[Any]) -> float:
    return float(dtypes.finfo(dt).eps)


def _f64(x: Any) -> NDArray:
    """``x`` in float64 (complex128 for complex values)."""
    a: NDArray = np.asarray(x)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _check_float_args(args: Any, what: str) -> None:
    for i, leaf in enumerate(tree_util.tree_leaves(args)):
        dt = _leaf_dtype(leaf)
        if not _is_float(dt):
            raise TypeError(
                f"{what}: argument leaf {i} has dtype {dt.name}, but every argument is perturbed, so every "
                "argument must be floating point or complex. Close over integer and boolean arguments instead, e.g. "
                "check_grads(lambda x: f(x, n), (x,), order=1)."
            )


def default_eps(args: Any) -> float:
    """The finite-difference step ``check_grads`` uses for ``args`` when ``eps`` is None."""
    steps = [DEFAULT_EPS.get(_leaf_dtype(x), DEFAULT_EPS[_F64]) for x in tree_util.tree_leaves(args)]
    return max(steps, default=DEFAULT_EPS[_F64])


def _random_like(rng: np.random.Generator, x: Any) -> Any:
    dt = _leaf_dtype(x)
    if not _is_float(dt):  # an integer output's cotangent
        return np.zeros(np.shape(x), dtypes.float0)
    if dt.kind == "c":
        return _like(x, rng.standard_normal(np.shape(x)) + 1j * rng.standard_normal(np.shape(x)))
    return _like(x, rng.standard_normal(np.shape(x)))


def _step(args: Any, direction: Any, eps: float) -> tuple[Any, Any, Any]:
    """(x⁺, x⁻, the direction x actually moved in): x± = round(x ± eps·t) in x's dtype."""

    def one(x: Any, t: Any) -> tuple[Any, Any, Any]:
        with np.errstate(over="ignore", invalid="ignore"):
            shift = eps * _f64(t)
            plus = _like(x, _f64(x) + shift)
            minus = _like(x, _f64(x) - shift)
            moved = _like(x, (_f64(plus) - _f64(minus)) / (2 * eps))
        return plus, minus, moved

    leaves, tree = tree_util.tree_flatten(args)
    triples = [one(x, t) for x, t in zip(leaves, tree_util.tree_leaves(direction))]
    for x, t, (_, _, moved) in zip(leaves, tree_util.tree_leaves(direction), triples):
        # A step lost to rounding would make the check compare zeros with zeros.
        if np.linalg.norm(_f64(moved) - _f64(t)) > 0.5 * np.linalg.norm(_f64(t)):
            dt = _leaf_dtype(x)
            raise ValueError(
                f"check_grads: a finite-difference step of eps={eps} is lost to rounding in {dt.name} at these "
                f"arguments (|x| up to {np.max(np.abs(_f64(x)), initial=0.0):g}); pass a larger eps (the default "
                f"for {dt.name} is {DEFAULT_EPS.get(dt, DEFAULT_EPS[_F64])})."
            )
    return tuple(tree_util.tree_unflatten(tree, [tr[i] for tr in triples]) for i in range(3))  # type: ignore[return-value]


def numerical_jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], eps: float | None = None) -> Any:
    """Central differences of ``f`` at ``primals`` along ``tangents``, in float64.

    The difference is taken between ``f`` at the rounded points
    ``round(x ± eps·t)``; the result estimates the derivative along
    ``(x⁺ - x⁻) / 2·eps``, which equals ``t`` up to that rounding.
    Integer and boolean outputs get ``float0`` zeros.
    """
    eps = eps or default_eps(primals)
    plus, minus, _ = _step(tuple(primals), tuple(tangents), eps)
    return _difference(f(*plus), f(*minus), eps)


def _difference(out_plus: Any, out_minus: Any, eps: float) -> Any:
    def one(p: Any, m: Any) -> NDArray:
        if not _is_float(_leaf_dtype(p)):
            return np.zeros(np.shape(p), dtypes.float0)
        with np.errstate(invalid="ignore", over="ignore"):
            p64, m64 = _f64(p), _f64(m)
            # inf - inf counts as no change, as in JAX.
            diff = np.where(p64 == m64, 0.0, p64 - m64)
            return np.asarray(diff / (2 * eps))

    return tree_util.tree_map(one, out_plus, out_minus)


def inner_product(xs: Any, ys: Any) -> float:
    """The sum over leaves of <x, y> = Re(sum(x * y)) in float64 (float0 leaves contribute nothing)."""
    total = 0.0
    for x, y in zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys)):
        if _leaf_dtype(x) == dtypes.float0 or _leaf_dtype(y) == dtypes.float0:
            continue
        total += float(np.real(np.dot(_f64(x).ravel(), _f64(y).ravel())))
    return total


# ---------------------------------------------------------------------------
# Comparing with a tolerance


def _tolerance(dtype: np.dtype[Any], tol: Tolerance) -> float:
    if tol is None:
        return GRADIENT_TOLERANCE.get(dtype, 0.0)
    if isinstance(tol, Mapping):
        table = {np.dtype(k): float(v) for k, v in tol.items()}
        return table.get(dtype, GRADIENT_TOLERANCE.get(dtype, 0.0))
    return float(tol)


def _assert_close(actual: Any, desired: Any, atol: Tolerance, rtol: Tolerance, what: str) -> None:
    """Leaf by leaf: equal for integer/float0 leaves, else within atol + rtol·|desired|,
    both scaled by the leaf's size as in JAX."""
    a_leaves, a_tree = tree_util.tree_flatten(actual)
    d_leaves, d_tree = tree_util.tree_flatten(desired)
    if a_tree != d_tree:
        raise AssertionError(f"{what}: the structures differ: {a_tree} vs {d_tree}")
    for i, (a, d) in enumerate(zip(a_leaves, d_leaves)):
        leaf = f"{what} (output leaf {i})" if len(a_leaves) > 1 else what
        a_dt, d_dt = _leaf_dtype(a), _leaf_dtype(d)
        if np.shape(a) != np.shape(d):
            raise AssertionError(f"{leaf}: shape {np.shape(a)} differs from the expected {np.shape(d)}")
        if not _is_float(a_dt) or not _is_float(d_dt):
            if a_dt != d_dt:
                raise AssertionError(f"{leaf}: dtype {a_dt.name} differs from the expected {d_dt.name}")
            if a_dt != dtypes.float0:
                np.testing.assert_array_equal(np.asarray(a), np.asarray(d), err_msg=leaf)
            continue
        dt = a_dt if _machine_eps(a_dt) >= _machine_eps(d_dt) else d_dt  # the less precise one
        size = max(int(np.size(a)), 1)
        abs_tol, rel_tol = _tolerance(dt, atol) * size, _tolerance(dt, rtol) * size
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(
                _f64(a), _f64(d), atol=abs_tol, rtol=rel_tol,
                err_msg=f"{leaf} (dtype {dt.name}; pass check_grads atol=/rtol=, or another eps, to change the tolerance)",
            )  # fmt: skip


def _check_tangent_dtypes(primals_out: Any, tangents_out: Any, what: str) -> None:
    for i, (p, t) in enumerate(zip(tree_util.tree_leaves(primals_out), tree_util.tree_leaves(tangents_out))):
        p_dt, t_dt = _leaf_dtype(p), _leaf_dtype(t)
        want = p_dt if _is_float(p_dt) else dtypes.float0
        if t_dt != want:
            raise AssertionError(
                f"{what}: the tangent of output leaf {i} has dtype {t_dt.name}; the primal output is "
                f"{p_dt.name}, so its tangent must be {want.name}"
            )


def _label(what: str, err_msg: str) -> str:
    return f"{err_msg} {what}" if err_msg else what


# ---------------------------------------------------------------------------
# The checks


def check_jvp(
    f: Callable[..., Any],
    f_jvp: Callable[[Any, Any], tuple[Any, Any]],
    args: Sequence[Any],
    atol: Tolerance = None,
    rtol: Tolerance = None,
    eps: float | None = None,
    err_msg: str = "",
) -> None:
    """Check ``f_jvp(primals, tangents)`` (usually ``partial(jvp, f)``) against finite differences.

    One random direction (seeded, so the check is reproducible). Raises
    AssertionError when the primal outputs or the tangents disagree.
    """
    args = tuple(args)
    eps = eps or default_eps(args)  # as in JAX, 0 or None means the default
    rng = np.random.default_rng(0)
    tangent = tree_util.tree_map(functools.partial(_random_like, rng), args)
    plus, minus, moved = _step(args, tangent, eps)
    primal_out, tangent_out = f_jvp(args, moved)
    _check_tangent_dtypes(primal_out, tangent_out, _label("tangent", err_msg))
    _assert_close(primal_out, f(*args), atol, rtol, _label("primal", err_msg))
    expected = _difference(f(*plus), f(*minus), eps)
    _assert_close(tangent_out, expected, atol, rtol, _label("tangent", err_msg))


def check_vjp(
    f: Callable[..., Any],
    f_vjp: Callable[..., tuple[Any, Callable[[Any], Any]]],
    args: Sequence[Any],
    atol: Tolerance = None,
    rtol: Tolerance = None,
    eps: float | None = None,
    err_msg: str = "",
) -> None:
    """Check ``f_vjp(*args)`` (usually ``partial(vjp, f)``): <vjp(u), v> = <u, numerical jvp(v)>.

    One random direction v and one random cotangent u (seeded). Raises
    AssertionError when the primal outputs or the two inner products disagree.
    """
    args = tuple(args)
    eps = eps or default_eps(args)  # as in JAX, 0 or None means the default
    rng = np.random.default_rng(0)
    primal_out, pullback = f_vjp(*args)
    _assert_close(primal_out, f(*args), atol, rtol, _label("primal", err_msg))
    tangent = tree_util.tree_map(functools.partial(_random_like, rng), args)
    plus, minus, moved = _step(args, tangent, eps)
    tangent_out = _difference(f(*plus), f(*minus), eps)
    cotangent = tree_util.tree_map(functools.partial(_random_like, rng), primal_out)
    cotangent_in = pullback(cotangent)
    projected = inner_product(moved, cotangent_in)
    expected = inner_product(tangent_out, cotangent)
    leaves = [*tree_util.tree_leaves(args), *tree_util.tree_leaves(primal_out)]
    float_dts = [dt for dt in map(_leaf_dtype, leaves) if _is_float(dt)]
    dt = max(float_dts, key=_machine_eps, default=_F64)  # the least precise
    _assert_close(np.asarray(projected, dt), np.asarray(expected, dt), atol, rtol, _label("cotangent projection", err_msg))


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: Tolerance = None,
    rtol: Tolerance = None,
    eps: float | None = None,
) -> None:
    """Check the derivatives of ``f`` at ``args`` against finite differences, up to ``order``.

    Args:
      f: the function, called as ``f(*args)``; any pytree of outputs.
      args: the arguments, pytrees of floating-point arrays or Python floats.
      order: derivatives up to this order are checked (1: first derivatives;
        2: also the derivatives of the jvp/vjp functions, and so on).
      modes: ``"fwd"`` (jvp), ``"rev"`` (vjp), ``"lin"`` (jvp through linearize).
      atol, rtol: a number, or a dict dtype -> number merged into the defaults
        (``GRADIENT_TOLERANCE``); scaled by the number of elements compared.
      eps: the finite-difference step; by default ``default_eps(args)``.

    Raises:
      AssertionError: if a derivative does not match.
      TypeError: if an argument is not floating point.
    """
    args = tuple(args)
    _check_float_args(args, "check_grads")
    unknown = sorted(set(modes) - {"fwd", "rev", "lin"})
    if unknown:
        raise ValueError(f"check_grads: unknown modes {unknown}; the modes are 'fwd', 'rev' and 'lin'.")
    if order < 1:
        raise ValueError(f"check_grads: order must be at least 1, got {order}.")
    _check_jvp = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    _check_vjp = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def check(f: Callable[..., Any], args: tuple[Any, ...], order: int, err_msg: str) -> None:
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            _check_jvp(f, functools.partial(_jvp, f), args, err_msg=msg)
            if order > 1:
                # The jvp function is checked as a function of (primals, tangents).
                check(functools.partial(_jvp, f), (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            _check_vjp(f, functools.partial(_vjp, f), args, err_msg=msg)
            if order > 1:
                check(functools.partial(_pullback_of_output, f), args, order - 1, msg)
        if "lin" in modes:
            msg = f"LIN of {err_msg}" if err_msg else "LIN"
            _check_jvp(f, functools.partial(_jvp_through_linearize, f), args, err_msg=msg)
            if order > 1:
                check(functools.partial(_jvp_through_linearize, f), (args, args), order - 1, msg)

    check(f, args, order, "")


def _pullback_of_output(f: Callable[..., Any], *args: Any) -> Any:
    """The vjp of ``f`` applied to ``f``'s own output (float0 for integer outputs)."""
    out, pullback = _vjp(f, *args)
    cotangent = tree_util.tree_map(
        lambda o: o if _is_float(_leaf_dtype(o)) else np.zeros(np.shape(o), dtypes.float0), out
    )
    return pullback(cotangent)


def _jvp_through_linearize(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    out, f_lin = _linearize(f, *primals)
    return out, f_lin(*tangents)


__all__ = [
    "DEFAULT_EPS",
    "GRADIENT_TOLERANCE",
    "check_grads",
    "check_jvp",
    "check_vjp",
    "default_eps",
    "inner_product",
    "numerical_jvp",
]
