"""while_loop and fori_loop through jvp, linearize, grad, vmap and jit.

Random loops run a body built from a small vocabulary of differentiable
operations a fixed number of times (a counter in the carry decides the
predicate), so each loop has a Python-unrolled meaning: every transformed loop
must equal the same transformation of that meaning, and derivatives must
match finite differences. Reverse mode through ``while`` raises JAX's
ValueError; ``fori_loop`` with static bounds is a ``scan`` and is reverse
differentiable. Rule names are those of spec/primitives/while_loop.md,
section while.
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
from minijax.primitives.while_loop import while_p
from minijax.testing import check_grads

Step = Callable[[Any, Any], Any]
Fn = Callable[..., Any]

# Carry updates (x: f[3], y: f[]) -> f[3], smooth and bounded on [-2, 2].
VOCAB: list[Step] = [
    lambda x, y: jnp.sin(x) * y,
    lambda x, y: x * 0.5 - y,
    lambda x, y: jnp.tanh(x) + x * 0.25,
    lambda x, y: x[::-1] * y,
    lambda x, y: (x * y).sum() * 0.1 + x,
    lambda x, y: jnp.cos(x),
]

WHILE_REVERSE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
    "start/stop values. Try using lax.scan, or using fori_loop with static start/stop."
)


def step(picks: list[int]) -> Step:
    def f(x: Any, y: Any) -> Any:
        for k in picks:
            x = VOCAB[k](x, y)
        return x

    return f


def looped(body: Step, n: int) -> Callable[[Any, Any], Any]:
    """``body`` applied ``n`` times to x, as one while_loop (the counter is part of the carry)."""
    return lambda x, y: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, body(c[1], y)), (0, x))[1]


def unrolled(body: Step, n: int) -> Callable[[Any, Any], Any]:
    def f(x: Any, y: Any) -> Any:
        for _ in range(n):
            x = body(x, y)
        return x

    return f


@st.composite
def programs(draw: st.DrawFn, dtype: Any = np.float32) -> tuple[Step, int, np.ndarray[Any, Any], Any]:
    picks = draw(st.lists(st.integers(0, len(VOCAB) - 1), min_size=1, max_size=3))
    n = draw(st.integers(0, 3))
    x = np.asarray(draw(st.lists(st.floats(-2, 2), min_size=3, max_size=3)), dtype)
    y = np.asarray(draw(st.floats(-2, 2)), dtype)[()]
    return step(picks), n, x, y


def examples(backend_name: str | None, n: int) -> int:
    """``n`` examples on the reference backend, 3 on xla (each program compiles there)."""
    return 3 if backend_name == "xla" else n


def close(actual: Any, desired: Any, tol: float = 1e-5) -> None:
    actual_leaves, desired_leaves = jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(desired)
    assert len(actual_leaves) == len(desired_leaves)
    for a, d in zip(actual_leaves, desired_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(d), rtol=tol, atol=tol)


def count(closed: Any, prim: Any = while_p) -> int:
    return sum(e.primitive is prim for e in closed.eqns)


@pytest.fixture
def x64() -> Iterator[None]:
    previous = config.read("jax_enable_x64")
    config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        config.update("jax_enable_x64", previous)


# ---------------------------------------------------------------------------
# Forward mode


def test_jvp_equals_the_jvp_of_the_unrolled_loop(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 25))
    @given(program=programs())
    def law(program: Any) -> None:
        body, n, x, y = program
        tangents = (np.linspace(-1, 1, 3, dtype=np.float32), np.float32(0.5))
        close(jax.jvp(looped(body, n), (x, y), tangents), jax.jvp(unrolled(body, n), (x, y), tangents))

    law()


def test_forward_derivatives_match_finite_differences(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 15))
    @given(program=programs())
    def law(program: Any) -> None:
        body, n, x, y = program
        check_grads(looped(body, n), (x, y), order=1, modes=("fwd", "lin"))

    law()


def test_second_forward_derivatives_match_finite_differences_in_float64(x64: None, backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 8))
    @given(program=programs(np.float64))
    def law(program: Any) -> None:
        body, n, x, y = program
        f = looped(body, n)
        assert f(x, y).dtype == np.float64
        check_grads(f, (x, y), order=2, modes=("fwd",))

    law()


def test_jvp_is_one_loop_over_primal_and_tangent_carries() -> None:
    def f(x: Any, y: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * y), (0, x))

    (i, out), (t_i, t_out) = jax.jvp(f, (2.0, 1.5), (1.0, 0.0))
    assert (int(i), float(out), float(t_out)) == (3, 2.0 * 1.5**3, 1.5**3)
    assert t_i.dtype == jax.dtypes.float0
    closed = jax.make_jaxpr(lambda x, y, t: jax.jvp(f, (x, y), (t, t)))(2.0, 1.5, 1.0)
    (eqn,) = [e for e in closed.eqns if e.primitive is while_p]
    # operands: body const y, its tangent, then carries (i, x), then x's tangent (i's is float0: not carried)
    assert [v.aval.str_short() for v in eqn.outvars] == ["i32[]", "f32[]", "f32[]"]
    assert eqn.params["body_nconsts"] == 2


def test_a_carry_whose_tangent_starts_zero_becomes_nonzero_by_the_fixpoint() -> None:
    # acc starts as a constant (zero tangent) but accumulates x: its tangent is carried.
    def f(x: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 1.5, c[2] + c[1]), (0, x, jnp.zeros(3)))[2]

    x = np.array([1.0, 2.0, -1.0], np.float32)
    t = np.ones(3, np.float32)
    close(jax.jvp(f, (x,), (t,))[1], t * (1 + 1.5 + 1.5**2 + 1.5**3))
    close(jax.linearize(f, x)[1](t), t * (1 + 1.5 + 1.5**2 + 1.5**3))


def test_only_the_predicate_depending_on_the_input_gives_zero_tangents_and_grad_works() -> None:
    f: Fn = lambda x: lax.while_loop(lambda c: c < x, lambda c: c + 1.0, 0.0)  # noqa: E731
    assert float(jax.jvp(f, (3.5,), (1.0,))[1]) == 0.0
    assert float(jax.grad(lambda x: f(x) * x)(3.5)) == 4.0


# ---------------------------------------------------------------------------
# Linearize and reverse mode


def test_linearize_runs_the_primal_loop_and_stages_the_jvp_loop() -> None:
    def f(x: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0, jnp.sin(c[1]) * c[0]), (x, x))

    out, f_lin = jax.linearize(f, 1.0)
    close(out, f(1.0))
    close(f_lin(1.0), jax.jvp(f, (1.0,), (1.0,))[1])
    closed = jax.make_jaxpr(lambda x: jax.linearize(f, x)[1](1.0))(1.0)
    known, tangent = [e for e in closed.eqns if e.primitive is while_p]
    assert len(known.outvars) == 2 and len(tangent.outvars) == 4  # the primal loop; primal + tangent carries
    # The staged loop recomputes the primal carry: its primal results are unused.
    used = {a for e in closed.eqns for a in e.invars} | set(closed.jaxpr.outvars)
    assert [v in used for v in tangent.outvars] == [False, False, True, True]


def test_grad_through_while_loop_raises_jaxs_error() -> None:
    f: Fn = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)  # noqa: E731
    with pytest.raises(ValueError) as info:
        jax.grad(f)(1.0)
    assert str(info.value) == WHILE_REVERSE_ERROR
    # vjp linearizes fine; the pullback is what cannot be built.
    out, pullback = jax.vjp(f, 1.0)
    assert float(out) == 16.0
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        pullback(1.0)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        jax.jit(jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x)))(1.5, 3)  # n traced: a while


def test_grad_of_a_loop_that_does_not_depend_on_the_input_works() -> None:
    f: Fn = lambda x, y: x * lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, y)  # noqa: E731
    assert float(jax.grad(f)(2.0, 1.0)) == 16.0


def test_fori_loop_with_static_bounds_is_reverse_differentiable(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 10))
    @given(program=programs())
    def law(program: Any) -> None:
        body, n, x, y = program
        f: Fn = lambda x, y: lax.fori_loop(0, n, lambda i, c: body(c, y), x)  # noqa: E731
        g = unrolled(body, n)
        loss: Fn = lambda f: lambda x, y: jnp.sum(jnp.sin(f(x, y)))  # noqa: E731
        close(jax.grad(loss(f), argnums=(0, 1))(x, y), jax.grad(loss(g), argnums=(0, 1))(x, y))
        check_grads(f, (x, y), order=1, modes=("rev",))

    law()


# ---------------------------------------------------------------------------
# Batching


@st.composite
def batched_calls(draw: st.DrawFn) -> tuple[Step, int | None, list[np.ndarray[Any, Any]], tuple[int | None, int | None, int | None]]:
    """A loop f(x, y, lim) and batched arguments: x's and y's batch axis anywhere or
    absent, lim (the predicate's bound, so lanes end at different iterations) batched or not."""
    body, _, _, _ = draw(programs())
    size = draw(st.integers(1, 3))
    x_dim = draw(st.sampled_from([None, 0, 1]))
    y_dim = draw(st.sampled_from([None, 0]))
    lim_dim = draw(st.sampled_from([None, 0]))
    if x_dim is None and y_dim is None and lim_dim is None:
        x_dim = 0
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.uniform(-2, 2, (3, size) if x_dim == 1 else (size, 3) if x_dim == 0 else (3,)).astype(np.float32)
    y = rng.uniform(-2, 2, (size,) if y_dim == 0 else ()).astype(np.float32)
    lim = rng.integers(0, 4, (size,) if lim_dim == 0 else ()).astype(np.int32)
    return body, size, [x, y, lim], (x_dim, y_dim, lim_dim)


def counted(body: Step) -> Callable[[Any, Any, Any], Any]:
    return lambda x, y, lim: lax.while_loop(lambda c: c[0] < lim, lambda c: (c[0] + 1, body(c[1], y)), (0, x))


def _take(a: np.ndarray[Any, Any], dim: int | None, k: int) -> np.ndarray[Any, Any]:
    return a if dim is None else np.take(a, k, axis=dim)


def test_vmap_equals_stacking_the_loop_over_the_batch(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 30))
    @given(call=batched_calls())
    def law(call: Any) -> None:
        body, size, args, dims = call
        f = counted(body)
        batched = jax.vmap(f, in_axes=dims)(*args)
        for k in range(size):
            close([b[k] for b in batched], f(*[_take(a, d, k) for a, d in zip(args, dims)]))

    law()


def test_a_batched_predicate_keeps_going_while_any_lane_is_unfinished() -> None:
    f: Fn = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)  # noqa: E731
    np.testing.assert_array_equal(jax.vmap(f)(np.array([1.0, 3.0, 20.0], np.float32)), [16.0, 12.0, 20.0])
    closed = jax.make_jaxpr(jax.vmap(f))(np.ones(3, np.float32))
    assert count(closed) == 1 and len(closed.eqns) == 1  # no loop over the batch, no extra equation
    assert closed.eqns[0].params["cond_jaxpr"].out_avals[0].str_short() == "bool[3]"


def test_an_unbatched_predicate_keeps_one_loop_of_the_batched_body() -> None:
    f: Fn = lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))  # noqa: E731
    x = np.array([1.0, 2.0, 4.0], np.float32)
    i, out = jax.vmap(f, in_axes=(None, 0))(3, x)
    np.testing.assert_array_equal(i, [3, 3, 3])  # unbatched inside; vmap broadcasts it on the way out
    close(out, x * 1.5**3)
    (eqn,) = [e for e in jax.make_jaxpr(jax.vmap(f, in_axes=(None, 0)))(3, x).eqns if e.primitive is while_p]
    assert eqn.params["cond_jaxpr"].out_avals[0].shape == ()


def test_nested_vmap_with_the_inner_predicate_unbatched() -> None:
    # The outer vmap batches the predicate; the inner one batches only a
    # carry, which then sits after the predicate's axis (a prefix of every carry).
    def f(x: Any, y: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0, c[1] + y), (x, 0.0))

    xs, ys = np.array([1.0, 3.0], np.float32), np.array([1.0, 2.0, 3.0], np.float32)
    a, b = jax.vmap(jax.vmap(f, in_axes=(None, 0)), in_axes=(0, None))(xs, ys)
    assert a.shape == (2, 3) and b.shape == (2, 3)
    for i, x in enumerate(xs):
        for j, y in enumerate(ys):
            close([a[i, j], b[i, j]], f(x, y))


def test_vmap_of_fori_loop_with_batched_trip_counts() -> None:
    f: Fn = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0 + i, x)  # noqa: E731
    xs, ns = np.array([1.0, 1.0, 3.0], np.float32), np.array([0, 2, 5], np.int32)
    close(jax.vmap(f)(xs, ns), np.stack([f(x, int(n)) for x, n in zip(xs, ns)]))


def test_vmap_with_a_named_axis_reaches_collectives_in_the_body() -> None:
    f: Fn = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0 + lax.psum(c, "i") * 0.01, x)  # noqa: E731
    xs = np.array([1.0, 3.0, 20.0], np.float32)
    out = jax.vmap(f, axis_name="i")(xs)
    # Reference: the same loop, lanes frozen by hand, psum over all lanes (finished ones included).
    c = xs.copy()
    while (c < 10.0).any():
        c = np.where(c < 10.0, c * 2.0 + c.sum() * 0.01, c)
    close(out, c)


def test_vmap_and_jvp_compose() -> None:
    def f(x: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0, jnp.sin(c[1]) * c[0]), (x, x))

    xs, ts = np.array([1.0, 3.0, 20.0], np.float32), np.array([1.0, -1.0, 0.5], np.float32)
    by_lane = [jax.jvp(f, (x,), (t,)) for x, t in zip(xs, ts)]
    want = jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *by_lane)
    close(jax.vmap(lambda x, t: jax.jvp(f, (x,), (t,)))(xs, ts), want)
    close(jax.jvp(jax.vmap(f), (xs,), (ts,)), want)
    close(jax.jit(jax.vmap(lambda x, t: jax.jvp(f, (x,), (t,))))(xs, ts), want)


# ---------------------------------------------------------------------------
# jit


def test_transformations_compose_with_jit() -> None:
    def f(x: Any, y: Any) -> Any:
        return looped(lambda x, y: jnp.sin(x) * y + x, 3)(x, y)

    x, y = np.array([0.1, 0.5, -1.0], np.float32), np.float32(0.7)
    t = (np.ones(3, np.float32), np.float32(0.0))
    want = jax.jvp(f, (x, y), t)
    close(jax.jit(lambda x, y: jax.jvp(f, (x, y), t))(x, y), want)
    close(jax.jvp(jax.jit(f), (x, y), t), want)
    close(jax.jvp(lambda x, y: jax.jit(f)(x, y), (x, y), t), want)
    close(jax.jit(jax.vmap(f, in_axes=(0, None)))(np.stack([x, x]), y), np.stack([f(x, y)] * 2))
    close(jax.vmap(jax.jit(f), in_axes=(0, None))(np.stack([x, x]), y), np.stack([f(x, y)] * 2))
