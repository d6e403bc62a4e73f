"""scan through jvp, linearize, grad, transposition, vmap and jit.

Random bodies are built from a small vocabulary of differentiable operations
on a carry ``c``, the current ``x`` and a closed-over constant ``w`` (all
f[3]); each transformed scan must equal the same transformation of its
Python-unrolled meaning (a loop calling the body), and derivatives must match
finite differences. The rules are the same on every backend, so the xla runs
use fewer examples (each new program compiles there). Rule names are those of
spec/primitives/scan.md, section scan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import config
from minijax.primitives.scan import scan_p
from minijax.testing import check_grads
from minijax.testing.gradients import inner_product

F32 = np.float32
Op = Callable[[Any, Any, Any], Any]

# Operations on (c, x, w: f[3]) -> f[3], smooth on [-2, 2].
VOCAB: list[Op] = [
    lambda c, x, w: jnp.sin(c) * x,
    lambda c, x, w: c * w + x,
    lambda c, x, w: jnp.tanh(c + w),
    lambda c, x, w: c * 0.5 - x * x,
    lambda c, x, w: jnp.cos(w) * c,
    lambda c, x, w: x,
    lambda c, x, w: (c * x).sum() * w,
    lambda c, x, w: c[::-1] + jnp.exp(0.25 * w),
]


def make_body(carry_ops: list[int], y_op: int, w: Any) -> Callable[[Any, Any], Any]:
    def body(c: Any, x: Any) -> Any:
        new = c
        for i in carry_ops:
            new = VOCAB[i](new, x, w)
        return new, VOCAB[y_op](c, x, w)

    return body


def unrolled(body: Callable[[Any, Any], Any], init: Any, xs: Any, reverse: bool = False) -> tuple[Any, Any]:
    """The Python meaning, written with minijax operations so that it can be transformed."""
    carry, ys = init, []
    order = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
    for i in order:
        carry, y = body(carry, xs[i])
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, jnp.stack(ys)


Program = tuple[list[int], int, Any, Any, Any, bool]


@st.composite
def programs(draw: st.DrawFn, dtype: Any = F32) -> Program:
    """(carry ops, y op, init, xs, w, reverse): 1 to 3 operations, 1 to 4 steps."""
    ops = draw(st.lists(st.integers(0, len(VOCAB) - 1), min_size=1, max_size=3))
    y_op = draw(st.integers(0, len(VOCAB) - 1))
    n = draw(st.integers(1, 4))
    values = st.floats(-1.5, 1.5)
    init = np.asarray(draw(st.lists(values, min_size=3, max_size=3)), dtype)
    xs = np.asarray(draw(st.lists(values, min_size=3 * n, max_size=3 * n)), dtype).reshape(n, 3)
    w = np.asarray(draw(st.lists(values, min_size=3, max_size=3)), dtype)
    return ops, y_op, init, xs, w, draw(st.booleans())


def loss(f: Callable[..., Any]) -> Callable[..., Any]:
    def value(init: Any, xs: Any, w: Any) -> Any:
        carry, ys = f(init, xs, w)
        return jnp.sum(jnp.sin(carry)) + jnp.sum(ys * ys)

    return value


def scanned(ops: list[int], y_op: int, reverse: bool) -> Callable[..., Any]:
    return lambda init, xs, w: lax.scan(make_body(ops, y_op, w), init, xs, reverse=reverse)


def meaning(ops: list[int], y_op: int, reverse: bool) -> Callable[..., Any]:
    return lambda init, xs, w: unrolled(make_body(ops, y_op, w), init, xs, reverse)


def examples(backend_name: str | None, n: int, on_xla: int = 2) -> int:
    """``n`` examples on the reference backend, fewer on xla (each eager scan compiles there)."""
    return on_xla if backend_name == "xla" else n


def close(actual: Any, desired: Any, tol: float = 2e-5) -> None:
    a_leaves, d_leaves = jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(desired)
    assert len(a_leaves) == len(d_leaves)
    for a, d in zip(a_leaves, d_leaves):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(d, np.float64), rtol=tol, atol=tol)


@pytest.fixture
def x64() -> Iterator[None]:
    previous = config.read("jax_enable_x64")
    config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        config.update("jax_enable_x64", previous)


def scans(closed: Any) -> list[Any]:
    return [e for e in closed.eqns if e.primitive is scan_p]


# ---------------------------------------------------------------------------
# Forward and reverse mode against the unrolled program and finite differences


def test_grad_and_jvp_equal_those_of_the_unrolled_program(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 30))
    @given(program=programs())
    def law(program: Program) -> None:
        ops, y_op, init, xs, w, rev = program
        f, g = scanned(ops, y_op, rev), meaning(ops, y_op, rev)
        close(jax.grad(loss(f), argnums=(0, 1, 2))(init, xs, w), jax.grad(loss(g), argnums=(0, 1, 2))(init, xs, w))
        tangents = (np.ones_like(init), np.full_like(xs, 0.5), np.zeros_like(w))
        close(jax.jvp(f, (init, xs, w), tangents), jax.jvp(g, (init, xs, w), tangents))

    law()


def test_derivatives_match_finite_differences(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 15))
    @given(program=programs())
    def law(program: Program) -> None:
        ops, y_op, init, xs, w, rev = program
        check_grads(scanned(ops, y_op, rev), (init, xs, w), order=1, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)

    law()


def test_second_derivatives_match_finite_differences_in_float64(x64: None, backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 8, on_xla=1))
    @given(program=programs(np.float64))
    def law(program: Program) -> None:
        ops, y_op, init, xs, w, rev = program
        f = scanned(ops, y_op, rev)
        assert f(init, xs, w)[0].dtype == np.float64
        check_grads(loss(f), (init, xs, w), order=2, modes=("fwd", "rev"))

    law()


def test_the_linear_map_and_its_transpose_agree(backend_name: str | None) -> None:
    """<ct, L(t)> = <L^T(ct), t> for L the linearization of a random scan."""

    @settings(max_examples=examples(backend_name, 20))
    @given(program=programs(), seed=st.integers(0, 2**16))
    def law(program: Program, seed: int) -> None:
        ops, y_op, init, xs, w, rev = program
        f = scanned(ops, y_op, rev)
        rng = np.random.default_rng(seed)
        args = (init, xs, w)
        t = tuple(rng.standard_normal(np.shape(a)).astype(F32) for a in args)
        _, f_lin = jax.linearize(f, *args)
        out, f_vjp = jax.vjp(f, *args)
        ct = jax.tree_util.tree_map(lambda o: rng.standard_normal(np.shape(o)).astype(F32), out)
        lhs = inner_product(ct, f_lin(*t))
        rhs = inner_product(f_vjp(ct), t)
        np.testing.assert_allclose(lhs, rhs, rtol=1e-4, atol=1e-4)

    law()


def test_grad_composes_with_jit(backend_name: str | None) -> None:
    ops, y_op = [0, 2], 1
    args = (np.array([0.1, 0.2, 0.3], F32), np.linspace(-1, 1, 12, dtype=F32).reshape(4, 3), np.ones(3, F32))
    f = loss(scanned(ops, y_op, False))
    want = jax.grad(loss(meaning(ops, y_op, False)), argnums=(0, 1, 2))(*args)
    close(jax.jit(jax.grad(f, argnums=(0, 1, 2)))(*args), want)
    close(jax.grad(jax.jit(f), argnums=(0, 1, 2))(*args), want)
    close(jax.jit(jax.grad(jax.jit(f), argnums=(0, 1, 2)))(*args), want)


def test_hessian_and_grad_of_grad() -> None:
    xs = np.linspace(0.5, 1.5, 4, dtype=F32)

    def f(c: Any) -> Any:
        return lax.scan(lambda c, x: (jnp.sin(c) * x, c * c), c, xs)[1].sum()

    def g(c: Any) -> Any:
        return unrolled(lambda c, x: (jnp.sin(c) * x, c * c), c, xs)[1].sum()

    close(jax.grad(jax.grad(f))(F32(0.7)), jax.grad(jax.grad(g))(F32(0.7)), 1e-4)
    close(jax.hessian(lambda v: f(v.sum()))(np.array([0.3, 0.4], F32)), jax.hessian(lambda v: g(v.sum()))(np.array([0.3, 0.4], F32)), 1e-4)


# ---------------------------------------------------------------------------
# The rules' structure (as JAX's)


def test_jvp_is_one_scan_whose_tangent_carries_come_from_a_fixpoint() -> None:
    # The initial carry has a zero tangent, but w's tangent reaches the carry
    # through the body: the carry's tangent is carried from the start.
    xs = np.arange(3, dtype=F32)

    def f(w: Any) -> Any:
        return lax.scan(lambda c, x: (c * w + x, c), F32(1.0), xs)

    closed = jax.make_jaxpr(lambda w, t: jax.jvp(f, (w,), (t,)))(F32(2.0), F32(1.0))
    (eqn,) = scans(closed)
    assert (eqn.params["num_consts"], eqn.params["num_carry"]) == (2, 2)  # (w, dw), (c, dc)
    (c, ys), (dc, dys) = jax.jvp(f, (F32(2.0),), (F32(1.0),))
    (c2, ys2), (dc2, dys2) = jax.jvp(lambda w: unrolled(lambda c, x: (c * w + x, c), F32(1.0), xs), (F32(2.0),), (F32(1.0),))
    close((c, ys, dc, dys), (c2, ys2, dc2, dys2))


def test_grad_is_a_known_scan_then_a_reverse_scan_of_the_transposed_body() -> None:
    def f(c: Any, xs: Any) -> Any:
        carry, ys = lax.scan(lambda c, x: (jnp.sin(c) * x, c * 2.0), c, xs)
        return carry + ys.sum()

    closed = jax.make_jaxpr(jax.grad(f))(F32(1.0), np.arange(3, dtype=F32))
    known, transposed = scans(closed)
    assert known.params["reverse"] is False and transposed.params["reverse"] is True
    # The known scan stacks one residual (cos c) after the carry and ys; the
    # x it reads is an input, passed to the transposed scan directly.
    assert [v.aval.str_short() for v in known.outvars] == ["f32[]", "f32[3]", "f32[3]"]
    assert transposed.invars[-1] is closed.jaxpr.invars[1]
    assert [e.primitive.name for e in known.params["jaxpr"].eqns] == ["sin", "cos", "mul", "mul"]


def test_loop_invariant_residuals_are_computed_once_before_the_loop() -> None:
    def f(w: Any, c: Any, xs: Any) -> Any:
        carry, ys = lax.scan(lambda c, x: (c * jnp.sin(w) + x, jnp.cos(w) * c), c, xs)
        return carry + ys.sum()

    closed = jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(F32(2.0), F32(1.0), np.arange(3, dtype=F32))
    known = scans(closed)[0]
    outside = [e.primitive.name for e in closed.eqns[: closed.eqns.index(known)]]
    assert outside == ["sin", "cos", "cos", "sin"]  # sin w, cos w and their derivatives' residuals
    assert all(e.primitive.name not in ("sin", "cos") for e in known.params["jaxpr"].eqns)
    assert known.params["num_consts"] == 2  # sin w and cos w
    got = jax.grad(f, argnums=(0, 1))(F32(2.0), F32(1.0), np.arange(3, dtype=F32))
    want = jax.grad(
        lambda w, c, xs: (lambda r: r[0] + r[1].sum())(unrolled(lambda c, x: (c * jnp.sin(w) + x, jnp.cos(w) * c), c, xs)),
        argnums=(0, 1),
    )(F32(2.0), F32(1.0), np.arange(3, dtype=F32))
    close(got, want)


def test_transposition_drops_zero_cotangents_and_accumulates_constants_in_the_carry() -> None:
    w = np.linspace(-1, 1, 4, dtype=F32)

    def f(w: Any, c: Any, xs: Any) -> Any:
        carry, _ = lax.scan(lambda c, x: (jnp.sin(c) * x * w, c * 2.0), c, xs)
        return carry.sum()

    closed = jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(w, np.ones(4, F32), np.arange(3, dtype=F32))
    transposed = scans(closed)[-1]
    # No cotangent input for the unused ys; w's cotangent is accumulated in the carry.
    assert transposed.params["num_carry"] == 2
    assert [v.aval.str_short() for v in transposed.outvars] == ["f32[4]", "f32[4]"]
    assert any(e.primitive.name == "add_any" for e in transposed.params["jaxpr"].eqns)


def test_integer_carries_have_float0_tangents() -> None:
    def f(c: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: ((c[0] + 1, c[1] * x), c[0]), (0, c), xs)

    xs = np.arange(1, 4, dtype=F32)
    (carry, ys), (t_carry, t_ys) = jax.jvp(f, (F32(2.0), xs), (F32(1.0), np.zeros(3, F32)))
    assert t_carry[0].dtype == jax.dtypes.float0 and t_ys.dtype == jax.dtypes.float0
    assert float(t_carry[1]) == 6.0 and int(carry[0]) == 3
    assert float(jax.grad(lambda c: f(c, xs)[0][1])(F32(2.0))) == 6.0


# ---------------------------------------------------------------------------
# vmap


def batched_value(x: Any, axis: int | None, size: int, rng: np.random.Generator) -> Any:
    if axis is None:
        return x
    stacked = np.stack([x + F32(0.1) * rng.standard_normal(x.shape).astype(F32) for _ in range(size)])
    return np.moveaxis(stacked, 0, axis)


def test_vmap_equals_stacking_over_the_batch(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 25))
    @given(
        program=programs(),
        size=st.integers(1, 3),
        axes=st.tuples(st.sampled_from([None, 0, 1]), st.sampled_from([None, 0, 1, 2]), st.sampled_from([None, 0, 1])),
        seed=st.integers(0, 2**16),
    )
    def law(program: Program, size: int, axes: tuple[Any, Any, Any], seed: int) -> None:
        ops, y_op, init, xs, w, rev = program
        if all(a is None for a in axes):
            axes = (0, axes[1], axes[2])
        rng = np.random.default_rng(seed)
        args = [batched_value(a, ax, size, rng) for a, ax in zip((init, xs, w), axes)]
        f = scanned(ops, y_op, rev)
        got = jax.vmap(f, in_axes=axes)(*args)
        per_element = [f(*(a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes))) for i in range(size)]
        want = jax.tree_util.tree_map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *per_element)
        close(got, want)

    law()


def test_vmap_batches_the_carry_from_the_start_when_the_body_batches_it() -> None:
    xs = np.linspace(-1, 1, 6, dtype=F32).reshape(3, 2)

    def f(c: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: (jnp.sin(c) * x, c * 2.0), c, xs)

    closed = jax.make_jaxpr(jax.vmap(f, (None, 1)))(F32(1.0), xs)
    assert [e.primitive.name for e in closed.eqns] == ["broadcast_in_dim", "scan", "transpose"]
    (eqn,) = scans(closed)
    assert [v.aval.str_short() for v in eqn.outvars] == ["f32[2]", "f32[3,2]"]  # ys batched along axis 1
    close(jax.vmap(f, (None, 1))(F32(1.0), xs), [np.stack(v) for v in zip(*(f(F32(1.0), xs[:, i]) for i in range(2)))])


def test_vmap_of_grad_and_grad_of_vmap() -> None:
    xs = np.linspace(-1, 1, 6, dtype=F32).reshape(3, 2)

    def f(c: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: (jnp.tanh(c * x), c), c, xs)[1].sum()

    def g(c: Any, xs: Any) -> Any:
        return unrolled(lambda c, x: (jnp.tanh(c * x), c), c, xs)[1].sum()

    close(jax.vmap(jax.grad(f), (None, 1))(F32(0.5), xs), jax.vmap(jax.grad(g), (None, 1))(F32(0.5), xs))
    close(
        jax.grad(lambda c: jax.vmap(f, (0, 1))(c, xs).sum())(np.array([0.5, 0.6], F32)),
        jax.grad(lambda c: jax.vmap(g, (0, 1))(c, xs).sum())(np.array([0.5, 0.6], F32)),
    )


def test_collectives_in_the_body_see_the_vmapped_axis() -> None:
    xs = np.array([-1.0, -0.2, 0.6], F32)
    got = jax.vmap(lambda c: lax.scan(lambda c, x: (c + lax.psum(c, "i") * x, None), c, xs)[0], axis_name="i")(np.array([1.0, 2.0], F32))
    c = np.array([1.0, 2.0], F32)
    for x in xs:
        c = c + c.sum() * x
    close(got, c)
