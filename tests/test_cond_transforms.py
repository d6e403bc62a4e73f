"""cond through jvp, linearize, grad, transposition, vmap and jit.

Random programs are ``lax.switch`` over branches built from a small
vocabulary of differentiable operations; each transformed program must equal
the same transformation of its Python meaning (the selected branch called
directly), and derivatives must match finite differences. The rules are the
same on every backend, so the xla runs use fewer examples (each new program
compiles there). Constraint and rule names are those of
spec/primitives/cond.md, section cond.
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
from minijax.config import config, enable_x64
from minijax.primitives.cond import cond_p
from minijax.testing import check_grads
from minijax.testing.gradients import inner_product

Branch = Callable[[Any, Any], Any]

# Operations on (x: f[3], y: f[]) -> f[3], smooth on [-2, 2].
VOCAB: list[Branch] = [
    lambda x, y: jnp.sin(x) * y,
    lambda x, y: x * x - y,
    lambda x, y: x,
    lambda x, y: jnp.exp(0.25 * x) + y,
    lambda x, y: x[::-1] * 2.0,
    lambda x, y: (x * y).sum() + x,
    lambda x, y: jnp.full_like(x, 7.0),
    lambda x, y: jnp.tanh(x) * x,
]


def compose(a: int, b: int) -> Branch:
    return lambda x, y: VOCAB[b](VOCAB[a](x, y), y)


def clamp(i: int, n: int) -> int:
    return min(max(i, 0), n - 1)


@st.composite
def programs(draw: st.DrawFn, dtype: Any = np.float32) -> tuple[list[Branch], int, np.ndarray[Any, Any], Any]:
    """(branches, index, x, y): 1 to 4 branches, an index possibly out of range."""
    picks = draw(st.lists(st.tuples(st.integers(0, len(VOCAB) - 1), st.integers(0, len(VOCAB) - 1)), min_size=1, max_size=4))
    index = draw(st.integers(-2, len(picks) + 1))
    x = np.asarray(draw(st.lists(st.floats(-2, 2), min_size=3, max_size=3)), dtype)
    y = np.asarray(draw(st.floats(-2, 2)), dtype)[()]
    return [compose(a, b) for a, b in picks], index, x, y


def switch(branches: list[Branch]) -> Callable[..., Any]:
    return lambda i, x, y: lax.switch(i, branches, x, y)


def meaning(branches: list[Branch]) -> Callable[..., Any]:
    """The Python meaning of ``switch(branches)``: call the selected branch."""
    return lambda i, x, y: branches[clamp(i, len(branches))](x, y)


def loss(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda i, x, y: jnp.sum(jnp.sin(f(i, x, y)))


def examples(backend_name: str | None, n: int) -> int:
    """``n`` examples on the reference backend, 2 on xla (each program compiles there)."""
    return 2 if backend_name == "xla" else n


def close(actual: Any, desired: Any, tol: float = 1e-5) -> None:
    if isinstance(desired, list) and not isinstance(actual, (list, tuple)):
        desired = np.asarray(desired)  # a list of numbers is one array
    for a, d in zip(jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(desired)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(d), rtol=tol, atol=tol)


@pytest.fixture
def x64() -> Iterator[None]:
    previous = config.read("jax_enable_x64")
    config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        config.update("jax_enable_x64", previous)


# ---------------------------------------------------------------------------
# Forward and reverse mode


def test_grad_and_jvp_equal_those_of_the_python_meaning(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 30))
    @given(program=programs())
    def law(program: Any) -> None:
        branches, i, x, y = program
        f, g = switch(branches), meaning(branches)
        close(jax.grad(loss(f), argnums=(1, 2))(i, x, y), jax.grad(loss(g), argnums=(1, 2))(i, x, y))
        tx, ty = np.ones_like(x), np.float32(0.5)
        close(jax.jvp(lambda x, y: f(i, x, y), (x, y), (tx, ty)), jax.jvp(lambda x, y: g(i, x, y), (x, y), (tx, ty)))

    law()


def test_derivatives_match_finite_differences(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 15))
    @given(program=programs())
    def law(program: Any) -> None:
        branches, i, x, y = program
        check_grads(lambda x, y: lax.switch(i, branches, x, y), (x, y), order=1, modes=("fwd", "rev"))

    law()


def test_second_derivatives_match_finite_differences_in_float64(x64: None, backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 10))
    @given(program=programs(np.float64))
    def law(program: Any) -> None:
        branches, i, x, y = program
        def f(x: Any, y: Any) -> Any:
            return lax.switch(i, branches, x, y)

        assert f(x, y).dtype == np.float64
        check_grads(f, (x, y), order=2, modes=("fwd", "rev"))

    law()


def test_hessian_equals_the_hessian_of_the_taken_branch() -> None:
    def f(x: Any) -> Any:
        return lax.cond(x.sum() > 0, lambda x: jnp.sin(x).sum() * x[0], lambda x: (x**3).sum(), x)

    x = np.array([0.5, -0.2, 0.3], np.float32)
    close(jax.hessian(f)(x), jax.hessian(lambda x: jnp.sin(x).sum() * x[0])(x))
    close(jax.hessian(f)(-x), jax.hessian(lambda x: (x**3).sum())(-x))
    close(jax.grad(jax.grad(lambda y: lax.cond(y > 0, jnp.sin, jnp.cos, y)))(0.7), -np.sin(np.float32(0.7)))


def test_tangents_of_integer_outputs_are_float0_and_zero_tangents_stay_symbolic() -> None:
    def f(x: Any, n: Any) -> Any:
        return lax.cond(n > 0, lambda x, n: (x * n, n + 1), lambda x, n: (x, n), x, n)

    (out, m), (t_out, t_m) = jax.jvp(f, (1.5, 2), (1.0, np.zeros((), jax.dtypes.float0)))
    assert (float(out), int(m), float(t_out)) == (3.0, 3, 2.0)
    assert t_m.dtype == jax.dtypes.float0
    # The jvp cond returns both primal outputs and one tangent: none for the integer.
    closed = jax.make_jaxpr(lambda x, n: jax.jvp(lambda x: f(x, n), (x,), (x,)))(1.5, 2)
    (eqn,) = [e for e in closed.eqns if e.primitive is cond_p]
    assert [v.aval.str_short() for v in eqn.outvars] == ["f32[]", "i32[]", "f32[]"]


def test_linearize_stages_a_known_cond_and_a_tangent_cond() -> None:
    def f(x: Any) -> Any:
        return lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * x, jnp.cos, x)

    x = np.array([0.3, 0.4], np.float32)
    out, f_lin = jax.linearize(f, x)
    t = np.array([1.0, -2.0], np.float32)
    close(f_lin(t), jax.jvp(f, (x,), (t,))[1])
    close(out, f(x))
    lin = jax.make_jaxpr(f_lin)(t)
    (tangent_cond,) = [e for e in lin.eqns if e.primitive is cond_p]
    # (index, residual slots: sin x and cos x merged by type with ..., tangent)
    assert tangent_cond.invars[-1] is lin.jaxpr.invars[0]
    known = jax.make_jaxpr(lambda x: jax.linearize(f, x)[0])(x)
    (known_cond,) = [e for e in known.eqns if e.primitive is cond_p]
    assert len(known_cond.outvars) > 1  # the output, then the residuals
    assert any(e.primitive.name == "empty2" for b in known_cond.params["branches"] for e in b.eqns)


def test_residuals_are_merged_by_type_and_filled_with_empty2() -> None:
    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda x: jnp.sin(x), lambda x: jnp.cos(x), x)

    closed = jax.make_jaxpr(jax.grad(f, argnums=1))(True, 1.0)
    known, tangent = [e for e in closed.eqns if e.primitive is cond_p]
    # Each branch has one f32[] residual: they share one slot.
    assert [v.aval.str_short() for v in known.outvars] == ["f32[]", "f32[]"]
    for branch in known.params["branches"]:
        assert [e.primitive.name for e in branch.eqns][-1] == "empty2"
    assert len(tangent.invars) == 3  # index, the residual, the cotangent


def test_transposition_drops_zero_cotangents_and_the_operands_they_needed() -> None:
    def f(p: Any, x: Any, y: Any) -> Any:
        a, b = lax.cond(p, lambda x, y: (jnp.sin(x), x * y), lambda x, y: (x, y), x, y)
        return a

    closed = jax.make_jaxpr(jax.grad(f, argnums=(1, 2)))(True, 1.0, 2.0)
    transposed = [e for e in closed.eqns if e.primitive is cond_p][-1]
    assert len(transposed.invars) == 3 and len(transposed.outvars) == 1  # index, cos x, cotangent -> dx
    dx, dy = jax.grad(f, argnums=(1, 2))(True, 1.0, 2.0)
    assert np.isclose(float(dx), np.cos(1.0)) and float(dy) == 0.0


@pytest.mark.parametrize("linear_branches", [True, False])
def test_transposition_law(linear_branches: bool, backend_name: str | None) -> None:
    # <ct, L(t)> == <L^T(ct), t> for the tangent cond linearize makes (and, with
    # linear branches, for a cond that is linear itself).
    rng = np.random.default_rng(0)
    if linear_branches:
        branches: list[Branch] = [lambda x, y: x * 2.0 - y, lambda x, y: -x[::-1], lambda x, y: x.sum() + y * x * 0 + x]
    else:
        branches = [compose(0, 1), compose(3, 7), compose(5, 4)]
    x, y = rng.standard_normal(3).astype(np.float32), np.float32(0.7)
    for i in range(3):
        def f(x: Any, y: Any, i: int = i) -> Any:
            return lax.switch(i, branches, x, y)

        _, f_lin = jax.linearize(f, x, y)
        _, f_vjp = jax.vjp(f, x, y)
        t = (rng.standard_normal(3).astype(np.float32), np.float32(rng.standard_normal()))
        ct = rng.standard_normal(3).astype(np.float32)
        lhs = inner_product(ct, f_lin(*t))
        rhs = inner_product(f_vjp(ct), t)
        assert np.isclose(lhs, rhs, rtol=1e-4), (i, lhs, rhs)
        cts = f_vjp(ct)
        assert [(np.shape(c), np.asarray(c).dtype) for c in cts] == [((3,), np.dtype(np.float32)), ((), np.dtype(np.float32))]


# ---------------------------------------------------------------------------
# vmap


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[Branch], np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any], tuple[Any, ...]]:
    """A program with a batch: indices, xs (batched on axis 0, 1 or not), ys (batched or not)."""
    branches, _, _, _ = draw(programs())
    size = draw(st.integers(1, 3))
    idx = np.asarray(draw(st.lists(st.integers(-1, len(branches)), min_size=size, max_size=size)), np.int32)
    xs = np.asarray(draw(st.lists(st.floats(-2, 2, width=32), min_size=3 * size, max_size=3 * size)), np.float32).reshape(size, 3)
    ys = np.asarray(draw(st.lists(st.floats(-2, 2, width=32), min_size=size, max_size=size)), np.float32)
    in_axes = (draw(st.sampled_from([0, None])), draw(st.sampled_from([0, 1, None])), draw(st.sampled_from([0, None])))
    if in_axes[1] == 1:
        xs = xs.T
    return branches, idx, xs, ys, in_axes


def test_vmap_equals_stacking_the_python_meaning(backend_name: str | None) -> None:
    @settings(max_examples=examples(backend_name, 30))
    @given(batch=batches())
    def law(batch: Any) -> None:
        branches, idx, xs, ys, (ax_i, ax_x, ax_y) = batch
        ax_i = 0 if ax_i is None and ax_x is None and ax_y is None else ax_i
        args = (idx if ax_i is not None else int(idx[0]), xs if ax_x is not None else xs[0], ys if ax_y is not None else ys[0])

        def element(k: int) -> tuple[Any, ...]:
            def pick(v: Any, ax: Any) -> Any:
                return v if ax is None else np.take(v, k, axis=ax)

            return int(pick(args[0], ax_i)), pick(args[1], ax_x), pick(args[2], ax_y)

        in_axes = (ax_i, ax_x, ax_y)
        g = meaning(branches)
        out = jax.vmap(switch(branches), in_axes=in_axes)(*args)
        close(out, np.stack([g(*element(k)) for k in range(len(idx))]))
        # And their gradients (vmap of grad).
        grads = jax.vmap(jax.grad(loss(switch(branches)), argnums=(1, 2)), in_axes=in_axes)(*args)
        for k in range(len(idx)):
            close([g_[k] for g_ in grads], jax.grad(loss(g), argnums=(1, 2))(*element(k)))

    law()


def test_a_batched_index_selects_and_an_unbatched_one_keeps_the_cond() -> None:
    f = switch([lambda x, y: x * y, lambda x, y: x - y])
    xs, ys = np.ones((2, 3), np.float32), np.ones(2, np.float32)
    batched = jax.make_jaxpr(jax.vmap(f))(np.array([0, 1]), xs, ys)
    assert not [e for e in batched.eqns if e.primitive is cond_p]
    names = [e.primitive.name for e in batched.eqns]
    assert names[-1] == "select_n" and names.count("stop_gradient") == 4  # 2 operands x 2 branches
    unbatched = jax.make_jaxpr(jax.vmap(f, in_axes=(None, 0, 0)))(1, xs, ys)
    (eqn,) = [e for e in unbatched.eqns if e.primitive is cond_p]
    assert [b.in_avals[0].shape for b in eqn.params["branches"]] == [(2, 3), (2, 3)]


def test_the_gradient_of_an_unselected_branch_does_not_leak_nan_under_vmap() -> None:
    # The branches see their operands through stop_gradient where not selected.
    def safe_log(x: Any) -> Any:
        return lax.cond(x > 0, jnp.log, lambda x: 0.0 * x, x)

    xs = np.array([0.0, 2.0], np.float32)
    close(jax.vmap(jax.grad(safe_log))(xs), [0.0, 0.5])
    close(jax.grad(lambda xs: jax.vmap(safe_log)(xs).sum())(xs), [0.0, 0.5])
    close(jax.grad(lambda xs: jax.vmap(safe_log)(xs).sum())(np.array([-1.0, 2.0], np.float32)), [0.0, 0.5])


def test_collectives_inside_branches_see_the_vmapped_axis() -> None:
    xs = np.arange(3, dtype=np.float32)
    # No operand is batched, but the branch reads the axis.
    out = jax.vmap(lambda x: lax.cond(True, lambda: lax.axis_index("i"), lambda: 0), axis_name="i")(xs)
    np.testing.assert_array_equal(out, [0, 1, 2])
    out = jax.vmap(lambda x: lax.cond(x > 0, lambda x: lax.psum(x, "i"), lambda x: x * 10, x), axis_name="i")(xs)
    np.testing.assert_array_equal(out, [0.0, 3.0, 3.0])


def test_nested_vmap() -> None:
    ps = np.array([[True, False], [False, True]])
    xs = np.arange(4, dtype=np.float32).reshape(2, 2)
    out = jax.vmap(jax.vmap(lambda p, x: lax.cond(p, lambda x: x * 2.0, lambda x: -x, x)))(ps, xs)
    np.testing.assert_array_equal(out, np.where(ps, xs * 2, -xs))


# ---------------------------------------------------------------------------
# Compositions with jit


def test_transformations_compose_with_jit(backend_name: str | None) -> None:
    branches = [compose(0, 3), compose(1, 5), compose(7, 2)]
    f = switch(branches)
    x, y = np.array([0.3, -1.2, 0.8], np.float32), np.float32(0.6)
    for i in [1] if backend_name == "xla" else range(3):  # the index is traced: one compilation serves all
        want = jax.grad(loss(f), argnums=(1, 2))(i, x, y)
        close(jax.jit(jax.grad(loss(f), argnums=(1, 2)))(i, x, y), want)
        close(jax.grad(loss(jax.jit(f)), argnums=(1, 2))(i, x, y), want)
        close(jax.jit(jax.grad(jax.jit(loss(f)), argnums=(1, 2)))(i, x, y), want)
    idx, xs = np.array([2, 0, 1]), np.stack([x, -x, 2 * x])
    want_v = jax.vmap(f, in_axes=(0, 0, None))(idx, xs, y)
    close(jax.jit(jax.vmap(f, in_axes=(0, 0, None)))(idx, xs, y), want_v)
    close(jax.vmap(jax.jit(f), in_axes=(0, 0, None))(idx, xs, y), want_v)
    close(jax.jit(jax.vmap(jax.grad(loss(f), argnums=1), in_axes=(0, 0, None)))(idx, xs, y), jax.vmap(jax.grad(loss(f), argnums=1), in_axes=(0, 0, None))(idx, xs, y))


def test_a_branch_closing_over_a_differentiated_value() -> None:
    def f(x: Any, y: Any) -> Any:
        return lax.cond(x.sum() > 0, lambda x: x * y, lambda x: x - y, x)

    x = np.array([1.0, 2.0], np.float32)
    close(jax.grad(lambda y: f(x, y).sum())(3.0), 3.0)
    close(jax.grad(lambda y: f(-x, y).sum())(3.0), -2.0)
    close(jax.vmap(lambda y: f(x, y))(np.array([1.0, 2.0], np.float32)), [[1.0, 2.0], [2.0, 4.0]])


def test_float64_results_under_x64(x64: None) -> None:
    with enable_x64(True):
        out = jax.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(np.float64(0.5))
        assert out.dtype == np.float64 and np.isclose(float(out), np.cos(0.5), rtol=1e-14)
