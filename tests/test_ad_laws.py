"""Autodiff laws, for every primitive that has a sampler (``minijax.testing.samplers``).

1. Derivatives match finite differences: ``check_grads`` (forward and reverse
   mode, order 1) on the operands the primitive is differentiable in, in
   float32 (loose tolerance) and float64 under x64 (tight tolerance). Float
   operands it is *not* differentiable in (comparisons, ``stop_gradient``,
   integer results) must get zero (or float0) tangents; a primitive declared
   non-differentiable (``ad.non_differentiable``) must say so when asked.
2. The transposition law on each group of operands the primitive is linear
   in: the linearized map is the primitive itself, and
   ⟨ct, L(t)⟩ = ⟨Lᵀ(ct), t⟩ with Lᵀ from ``vjp``, whose cotangents have the
   operands' exact shapes and dtypes.
3. ``grad(jit(f)) == grad(f)`` and ``jit(grad(f)) == grad(f)``.

Each example draws its float dtype: float32, or float64 with x64 on. The
laws check rules, which are the same on every backend, so the reference
backend runs the examples and xla runs one float32 example per law and
primitive (each new signature compiles there, tens of ms each).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import minijax
import minijax.numpy as jnp
from minijax import dtypes, tree_util
from minijax.config import enable_x64
from minijax.interpreters import ad
from minijax.testing import check_grads
from minijax.testing.cases import Case, is_float, is_inexact
from minijax.testing.gradients import inner_product
from minijax.testing.samplers import SAMPLERS, sampled_primitive_names
from minijax.testing.strategies import seeds

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

# The primitives that take floating operands: the others never see a tangent
# (and iota makes its values from nothing).
FLOAT_PRIMS = [n for n in sampled_primitive_names() if SAMPLERS[n].accepts(F32) and n != "iota"]
LINEAR_PRIMS = [n for n in FLOAT_PRIMS if SAMPLERS[n].linear]
DIFFERENTIABLE_PRIMS = [
    n for n in FLOAT_PRIMS if SAMPLERS[n].differentiable and SAMPLERS[n].prim not in ad.non_differentiable
]

Law = Callable[[Case, list[Any], st.DataObject], None]


def run_law(name: str, backend_name: str | None, share: float, law: Law, dtypes_: tuple[np.dtype[Any], ...] = (F32, F64)) -> None:
    """Run ``law`` on cases of primitive ``name``: a ``share`` of the profile's examples."""
    xla = backend_name == "xla"
    n = 1 if xla else max(2, int(settings().max_examples * share))
    choices = [F32] if xla else list(dtypes_)

    @settings(max_examples=n)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        dtype = data.draw(st.sampled_from(choices), label="dtype")
        with enable_x64(dtype == F64):
            case = data.draw(SAMPLERS[name].cases(dtype), label="case")
            law(case, case.args(data.draw(seeds(), label="rng")), data)

    run()


def _random_like(rng: np.random.Generator, x: Any) -> Any:
    dt = np.dtype(x.dtype)
    if dt.kind == "c":  # a random complex direction
        return (rng.standard_normal(np.shape(x)) + 1j * rng.standard_normal(np.shape(x))).astype(dt)
    if not is_float(dt):
        return np.zeros(np.shape(x), dtypes.float0)
    return rng.standard_normal(np.shape(x)).astype(dt)


def _wide(x: Any) -> Any:
    """``x`` in float64 (complex128 for complex values)."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _float_operands(case: Case, but: tuple[int, ...] = ()) -> list[int]:
    return [i for i, a in enumerate(case.avals) if is_float(a.dtype) and i not in but]


def _jvp_along(case: Case, positions: list[int], args: list[Any]) -> Any:
    """The output tangents of ``case`` along random tangents of the operands at ``positions``."""
    rng = np.random.default_rng(1)
    f = case.restricted(positions, args)
    return minijax.jvp(f, [args[i] for i in positions], [_random_like(rng, args[i]) for i in positions])[1]


# ---------------------------------------------------------------------------
# 1. Finite differences, and zero tangents where there is no derivative


@pytest.mark.parametrize("name", FLOAT_PRIMS)
def test_derivatives_match_finite_differences(name: str, backend_name: str | None) -> None:
    def law(case: Case, args: list[Any], data: st.DataObject) -> None:
        if case.prim in ad.non_differentiable:
            _check_jvp_raises(case, args)
            return
        if case.differentiable:
            f = case.restricted(case.differentiable, args)
            check_grads(f, [args[i] for i in case.differentiable], order=1, modes=("fwd", "rev"))
        _check_zero_tangents(case, args)

    run_law(name, backend_name, 0.2, law)


def _check_jvp_raises(case: Case, args: list[Any]) -> None:
    """A primitive declared non-differentiable says so, by name, when differentiated."""
    floats = _float_operands(case)
    if floats:
        with pytest.raises(NotImplementedError, match=case.prim.name):
            _jvp_along(case, floats, args)


# Primitives whose derivative in their other float operands JAX refuses (with
# this error) instead of calling it zero: polygamma's order, betainc's a and b.
REFUSED_DERIVATIVES = {"polygamma": ValueError, "regularized_incomplete_beta": ValueError}


def _check_zero_tangents(case: Case, args: list[Any]) -> None:
    """Float operands the primitive is not differentiable in get no derivative."""
    others = _float_operands(case, but=case.differentiable)
    if not others:
        return
    refused = REFUSED_DERIVATIVES.get(case.prim.name)
    if refused is not None:
        with pytest.raises(refused, match="not supported"):
            _jvp_along(case, others, args)
        return
    for t in _outputs(_jvp_along(case, others, args)):
        t = np.asarray(t)
        if t.dtype != dtypes.float0:
            np.testing.assert_array_equal(t, np.zeros_like(t), err_msg=f"{case.prim.name}: nonzero tangent")


# ---------------------------------------------------------------------------
# 2. The transposition law on linear operands


def _abs(xs: list[Any]) -> list[Any]:
    return [np.abs(_wide(x)) for x in xs]


@pytest.mark.parametrize("name", LINEAR_PRIMS)
def test_transposition_law(name: str, backend_name: str | None) -> None:
    def law(case: Case, args: list[Any], data: st.DataObject) -> None:
        assume(case.linear)
        group = data.draw(st.sampled_from(case.linear), label="linear operands")
        f = case.restricted(group, args)
        x = [args[i] for i in group]
        rng = np.random.default_rng(2)
        t = [_random_like(rng, xi) for xi in x]
        out, f_lin = minijax.linearize(f, *x)
        lin_t = _outputs(f_lin(*t))
        tol = 1e-5 if case.avals[group[0]].dtype in (F32, np.dtype(np.complex64)) else 1e-12
        # f is linear in x, so its linearization is f itself.
        for got, want in zip(lin_t, _outputs(f(*t))):
            np.testing.assert_allclose(_wide(got), _wide(want), rtol=tol, atol=tol,
                                       err_msg=f"{name}: linearize(f)(t) != f(t) for an f linear in t")  # fmt: skip
        ct = [_random_like(rng, o) for o in _outputs(out)]
        _, pullback = minijax.vjp(f, *x)
        ct_in = pullback(ct if isinstance(out, (list, tuple)) else ct[0])
        for i, (c, xi) in enumerate(zip(ct_in, x)):
            got_type, want_type = (np.shape(c), np.dtype(c.dtype)), (np.shape(xi), np.dtype(xi.dtype))
            assert got_type == want_type, f"{name}: operand {group[i]} is {want_type} but its cotangent {got_type}"
        lhs, rhs = inner_product(ct, lin_t), inner_product(ct_in, t)
        scale = inner_product(_abs(ct), _abs(lin_t)) + inner_product(_abs(ct_in), _abs(t))
        assert abs(lhs - rhs) <= tol * (scale + 1), f"{name}: <ct, L t> = {lhs} but <L^T ct, t> = {rhs}"

    run_law(name, backend_name, 0.2, law)


# ---------------------------------------------------------------------------
# 3. grad and jit commute


def _scalarized(case: Case, args: list[Any]) -> Callable[..., Any]:
    """sum(f(x) * w) over the float outputs, w fixed and random: a scalar function to take grad of."""
    f = case.restricted(case.differentiable, args)
    rng = np.random.default_rng(3)
    outs = _outputs(case.apply(*args))
    weights = [_random_like(rng, o) if is_inexact(o.dtype) else None for o in outs]

    def scalar(*x: Any) -> Any:
        total: Any = 0.0
        for o, w in zip(_outputs(f(*x)), weights):
            if w is not None:
                total = total + jnp.real(jnp.sum(o * w))  # real: grad needs a real scalar
        return total

    return scalar


@pytest.mark.parametrize("name", DIFFERENTIABLE_PRIMS)
def test_grad_commutes_with_jit(name: str, backend_name: str | None) -> None:
    def law(case: Case, args: list[Any], data: st.DataObject) -> None:
        assume(case.differentiable)
        s = _scalarized(case, args)
        x = [args[i] for i in case.differentiable]
        argnums = tuple(range(len(x)))
        want = minijax.grad(s, argnums)(*x)
        for how, got in (("grad(jit(f))", minijax.grad(minijax.jit(s), argnums)(*x)),
                         ("jit(grad(f))", minijax.jit(minijax.grad(s, argnums))(*x))):  # fmt: skip
            for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(want)):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5, err_msg=f"{name}: {how}")

    run_law(name, backend_name, 0.1, law, dtypes_=(F32,))
