"""vmap of the elementwise primitives (and ``add_any``, ``stop_gradient``): their batching rules.

The law, for every primitive of the family on cases drawn by its sampler
(``minijax.testing.samplers``: dtypes, shapes, params): ``vmap(f, in_axes)``
applied to stacked operands equals stacking ``f`` over the batch, for random
batch positions (None for some operands, negative ones too), batch sizes 1
to 3 and random ``out_axes``. And the jaxpr of the vmapped primitive has the
primitive once, plus only the moves its rule needs (transposes and
broadcasts). Then the cases where JAX's rules move axes in particular ways,
and vmap composed with jit and the autodiff transforms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.core import Primitive
from minijax.primitives import autodiff as autodiff_prims, elementwise as ew
from minijax.testing.samplers import SAMPLERS, Case
from minijax.testing.strategies import seeds

NDArray = np.ndarray[Any, Any]

FAMILY: list[Primitive] = sorted(
    [p for p in vars(ew).values() if isinstance(p, Primitive)]
    + [autodiff_prims.add_any_p, autodiff_prims.stop_gradient_p],
    key=lambda p: p.name,
)
NAMES = [p.name for p in FAMILY]
# What a batching rule may add around the primitive.
MOVES = {"transpose", "broadcast_in_dim"}


def run_law(backend_name: str | None, examples: int, law: Callable[[st.DataObject, np.random.Generator], None]) -> None:
    """``law`` on ``examples`` hypothesis examples on NumPy, a fifth of them on the other backends
    (where each new shape compiles: a check of the lowerings, while NumPy does the searching)."""
    n = examples if backend_name in (None, "numpy") else max(1, examples // 5)
    settings(max_examples=n, suppress_health_check=[HealthCheck.too_slow])(given(data=st.data(), rng=seeds())(law))()


def assert_same(got: Any, want: NDArray) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if dtypes.issubdtype(want.dtype, np.floating):
        eps = float(dtypes.finfo(want.dtype).eps)
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=4 * eps, atol=4 * eps, equal_nan=True
        )
    else:
        np.testing.assert_array_equal(got, want)


def batch_of(
    case: Case, rng: np.random.Generator, size: int, in_axes: list[int | None]
) -> tuple[list[Any], list[list[Any]]]:
    """Operands stacked at ``in_axes`` (None: one value for all), and each batch element's operands."""
    draws = [case.args(rng) for _ in range(size)]
    elements = [[d[i] if ax is not None else draws[0][i] for i, ax in enumerate(in_axes)] for d in draws]
    stacked = [
        np.stack([e[i] for e in elements], axis=ax) if ax is not None else elements[0][i]
        for i, ax in enumerate(in_axes)
    ]
    return stacked, elements


@st.composite
def batch_axes(draw: st.DrawFn, case: Case) -> list[int | None]:
    """A batch position per operand (negative ones too), at least one operand batched."""
    axes: list[int | None] = [draw(st.one_of(st.none(), st.integers(-a.ndim - 1, a.ndim))) for a in case.avals]
    if all(ax is None for ax in axes):
        i = draw(st.integers(0, len(axes) - 1))
        axes[i] = draw(st.integers(-case.avals[i].ndim - 1, case.avals[i].ndim))
    return axes


# ---------------------------------------------------------------------------
# The law, for every primitive


@pytest.mark.parametrize("name", NAMES)
def test_vmap_matches_stacking(name: str, backend_name: str | None) -> None:
    def law(data: st.DataObject, rng: np.random.Generator) -> None:
        case = data.draw(SAMPLERS[name].cases())
        in_axes = data.draw(batch_axes(case))
        size = data.draw(st.integers(1, 3))
        stacked, elements = batch_of(case, rng, size, in_axes)
        outs = [np.asarray(case.apply(*e)) for e in elements]
        out_axis = data.draw(st.integers(-outs[0].ndim - 1, outs[0].ndim))
        f = jax.vmap(case.apply, in_axes=tuple(in_axes), out_axes=out_axis)
        assert_same(f(*stacked), np.stack(outs, axis=out_axis))
        # The primitive once, plus the moves the rule needs.
        eqns = jax.make_jaxpr(f)(*stacked).eqns
        assert [e.primitive for e in eqns if e.primitive.name not in MOVES] == [case.prim]

    run_law(backend_name, 20, law)


def test_every_primitive_of_the_family_is_tested() -> None:
    assert set(NAMES) <= set(SAMPLERS)
    assert len(NAMES) == 68  # 66 elementwise primitives, add_any and stop_gradient


# ---------------------------------------------------------------------------
# How the rules move axes (JAX's choices, equation for equation)


def eqn_names(f: Callable[..., Any], *args: Any) -> list[str]:
    return [e.primitive.name for e in jax.make_jaxpr(f)(*args).eqns]


def test_same_batch_dims_bind_directly() -> None:
    x, y = np.ones((3, 4), np.float32), np.ones((3, 4), np.float32)
    assert eqn_names(jax.vmap(lax.atan2), x, y) == ["atan2"]
    assert eqn_names(jax.vmap(lax.add, in_axes=(1, 1), out_axes=1), x, y) == ["add"]
    # an unbatched rank-0 operand broadcasts as it is
    assert eqn_names(jax.vmap(lambda a: lax.mul(a, np.float32(2)), in_axes=1, out_axes=1), x) == ["mul"]


def test_unbatched_array_operand_gets_a_leading_unit_axis() -> None:
    x, y = np.arange(12.0, dtype=np.float32).reshape(3, 4), np.arange(4.0, dtype=np.float32)
    f = jax.vmap(lambda a, b: a - b, in_axes=(0, None))
    text = str(jax.make_jaxpr(f)(x, y))
    # NumPy integers in the params, as JAX builds (and prints) them
    assert "f32[1,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b" in text
    np.testing.assert_array_equal(f(x, y), x - y)


def test_different_batch_dims_move_to_the_front() -> None:
    x, y = np.arange(12.0, dtype=np.float32).reshape(4, 3), np.arange(12.0, dtype=np.float32).reshape(3, 4)
    f = jax.vmap(lax.max, in_axes=(1, 0))
    assert eqn_names(f, x, y) == ["transpose", "max"]
    np.testing.assert_array_equal(f(x, y), np.maximum(x.T, y))


def test_batched_scalar_with_array_gets_trailing_unit_axes() -> None:
    s, y = np.arange(3.0, dtype=np.float32), np.ones((3, 4), np.float32)
    f = jax.vmap(lax.div)
    assert "f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a" in str(jax.make_jaxpr(f)(s, y))
    np.testing.assert_array_equal(f(s, y), s[:, None] / y)


def batched_call(f: Callable[..., Any], in_axes: tuple[int | None, ...], per_element: list[list[NDArray]]) -> None:
    """vmap(f) on the elements stacked at ``in_axes`` equals f on each (an operand with axis
    None takes element 0's value for all)."""
    stacked = [
        per_element[0][i] if ax is None else np.stack([e[i] for e in per_element], axis=ax)
        for i, ax in enumerate(in_axes)
    ]
    want = np.stack(
        [
            np.asarray(f(*[e[i] if ax is not None else per_element[0][i] for i, ax in enumerate(in_axes)]))
            for e in per_element
        ]
    )
    np.testing.assert_array_equal(jax.vmap(f, in_axes=in_axes)(*stacked), want)


@pytest.mark.parametrize("which_rank", [0, 1])
@pytest.mark.parametrize(
    "in_axes", [(0, None, None), (0, 0, None), (None, 0, 1), (0, 0, 0), (1, None, 1), (None, None, 0)]
)
def test_select_n_batching(in_axes: tuple[int | None, ...], which_rank: int) -> None:
    rng = np.random.default_rng(0)
    if which_rank == 0 and in_axes[0] == 1:
        in_axes = (0, *in_axes[1:])
    elements = [
        [rng.random((4,) * which_rank) < 0.5, *rng.standard_normal((2, 4)).astype(np.float32)] for _ in range(3)
    ]
    batched_call(lax.select_n, in_axes, elements)


def test_select_n_with_scalar_cases_and_batched_which() -> None:
    which = np.array([0, 2, 1], np.int32)
    f = jax.vmap(lambda w: lax.select_n(w, np.float32(1), np.float32(2), np.float32(3)))
    np.testing.assert_array_equal(f(which), [1, 3, 2])


@pytest.mark.parametrize("bounds_rank", [0, 1])
@pytest.mark.parametrize(
    "in_axes", [(0, None, None), (None, 0, None), (None, None, 0), (0, 1, 0), (0, 0, 0), (1, 0, None)]
)
def test_clamp_batching(in_axes: tuple[int | None, ...], bounds_rank: int) -> None:
    rng = np.random.default_rng(1)
    if bounds_rank == 0:
        in_axes = tuple(0 if i != 1 and ax is not None else ax for i, ax in enumerate(in_axes))
    bound_shape = (3,) * bounds_rank

    def element() -> list[NDArray]:
        lo = rng.uniform(-1, 0, bound_shape).astype(np.float32)
        return [lo, rng.standard_normal(3).astype(np.float32), lo + rng.uniform(0.1, 1, bound_shape).astype(np.float32)]

    batched_call(lax.clamp, in_axes, [element() for _ in range(4)])


def test_clamp_of_a_scalar_with_only_the_upper_bound_batched() -> None:
    # (JAX's rule fails here: it broadcasts x only to a batched lower bound.)
    hi = np.array([0.5, 2.0, 3.0], np.float32)
    got = jax.vmap(lambda h: lax.clamp(np.float32(0), np.float32(1), h))(hi)
    np.testing.assert_array_equal(got, [0.5, 1.0, 1.0])


def test_bitcast_to_a_wider_dtype_with_the_batch_dimension_last() -> None:
    # The wider dtype consumes the minor axis: the batch axis must move out of its way.
    x = np.arange(8, dtype=np.uint8).reshape(2, 2, 2)  # element shape (2, 2), batch on axis 2
    f = jax.vmap(lambda e: lax.bitcast_convert_type(e, np.uint16), in_axes=2)
    want = np.stack([x[:, :, i].copy().view(np.uint16)[:, 0] for i in range(2)])
    np.testing.assert_array_equal(f(x), want)
    narrow = jax.vmap(lambda e: lax.bitcast_convert_type(e, np.uint8), in_axes=1)(
        np.arange(6, dtype=np.uint16).reshape(3, 2)
    )
    assert narrow.shape == (2, 3, 2)


def test_add_any_batch_dims_meet() -> None:
    x, y = np.ones((2, 3), np.float32), np.arange(6.0, dtype=np.float32).reshape(3, 2)
    f = jax.vmap(autodiff_prims.add_any_p.bind, in_axes=(0, 1), out_axes=1)  # JAX's rule: x moves to y's batch axis
    assert eqn_names(f, x, y) == ["transpose", "add_any"]
    np.testing.assert_array_equal(f(x, y), (x + y.T).T)
    g = jax.vmap(autodiff_prims.add_any_p.bind, in_axes=(None, 1))
    text = str(jax.make_jaxpr(g)(x[0], y))
    assert "broadcast_in_dim[broadcast_dimensions=(np.int64(0),)]" in text  # inserted at the other's batch axis
    np.testing.assert_array_equal(g(x[0], y), (x[0][:, None] + y).T)


def test_nested_vmap() -> None:
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    f = jax.vmap(jax.vmap(lambda a, b: jnp.tanh(a) * b, in_axes=(0, 1)), in_axes=(0, None))
    np.testing.assert_allclose(f(x, y), np.tanh(x) * y.T[None], rtol=1e-6)


# ---------------------------------------------------------------------------
# Composition with jit and the autodiff transforms


def f_smooth(x: Any, y: Any) -> Any:
    return jnp.sum(jnp.sin(x) * jnp.exp(-y) + lax.logistic(x * y) - jnp.maximum(x, y) / (1 + y * y))


def test_vmap_of_grad_equals_stacked_grads() -> None:
    rng = np.random.default_rng(2)
    xs, ys = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    g = jax.grad(f_smooth, argnums=(0, 1))
    got = jax.vmap(g)(xs, ys)
    for i in range(4):
        want = g(xs[i], ys[i])
        np.testing.assert_allclose(got[0][i], want[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[1][i], want[1], rtol=1e-5, atol=1e-6)
    # and with an unbatched argument
    got_x = jax.vmap(jax.grad(f_smooth), in_axes=(0, None))(xs, ys[0])
    np.testing.assert_allclose(got_x, np.stack([jax.grad(f_smooth)(x, ys[0]) for x in xs]), rtol=1e-5, atol=1e-6)


def test_grad_of_vmap() -> None:
    xs = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    g = jax.grad(lambda xs: jax.vmap(lambda x: jnp.sum(jnp.tanh(x) ** 2))(xs).sum())(xs)
    np.testing.assert_allclose(g, 2 * np.tanh(xs) * (1 - np.tanh(xs) ** 2), rtol=1e-5)


def test_vmap_and_jit_compose() -> None:
    rng = np.random.default_rng(3)
    xs, ys = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    f = jax.vmap(lambda x, y: jnp.where(x > y, lax.atan2(x, y), jnp.cbrt(x)), in_axes=(0, None))
    want = f(xs, ys)
    np.testing.assert_allclose(jax.jit(f)(xs, ys), want, rtol=1e-6)
    np.testing.assert_allclose(
        jax.vmap(jax.jit(lambda x, y: jnp.where(x > y, lax.atan2(x, y), jnp.cbrt(x))), in_axes=(0, None))(xs, ys),
        want,
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        jax.jit(jax.vmap(jax.grad(lambda x: jnp.sinc(x))))(xs[:, 0]), jax.vmap(jax.grad(jnp.sinc))(xs[:, 0]), rtol=1e-5
    )
