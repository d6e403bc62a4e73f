"""Batching rules of the reductions and dot_general (minijax/primitives/reductions.py).

Laws, on random shapes, axes, dimension numbers, batch positions (None for
some operands) and batch sizes (1 included):
- vmap(f)(xs) equals stacking f over the batch;
- a vmapped jaxpr has the unbatched function's equations plus moves only
  (transposes), no loop over the batch;
- vmap composes with jit, grad and itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st
from test_ad_reductions import DotCase, dot_cases, law, rand, shape_and_axes

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.interpreters import batching
from minijax.primitives import reductions as rp

F32 = np.dtype(np.float32)


def stacked(f: Callable[..., Any], args: list[np.ndarray], in_axes: list[int | None], size: int) -> np.ndarray:
    """The reference: f applied to each batch element, results stacked on axis 0."""
    outs = []
    for i in range(size):
        sliced = [a if d is None else np.take(a, i, axis=d) for a, d in zip(args, in_axes)]
        outs.append(np.asarray(f(*sliced)))
    return np.stack(outs)


def batched(seed: int, shape: tuple[int, ...], dtype: np.dtype[Any], bdim: int | None, size: int) -> np.ndarray:
    """A random operand of the unbatched ``shape``, with a batch axis of ``size`` inserted at ``bdim``."""
    full = shape if bdim is None else shape[:bdim] + (size,) + shape[bdim:]
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return np.asarray(rng.random(full) < 0.5)
    if dtype.kind in "iu":
        return rng.integers(-50 if dtype.kind == "i" else 0, 50, size=full).astype(dtype)
    return rand(seed, full, dtype)


def assert_same(actual: Any, expected: np.ndarray) -> None:
    actual = np.asarray(actual)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(actual, expected)


def primitive_names(jaxpr: Any) -> list[str]:
    return [eqn.primitive.name for eqn in jaxpr.jaxpr.eqns]


def only_moves_added(f: Callable[..., Any], vf: Callable[..., Any], args: list[Any], batched_args: list[Any]) -> None:
    """vmap adds no equations but transposes (the moves a rule or out_axes needs)."""
    plain = primitive_names(jax.make_jaxpr(f)(*args))
    vmapped = [n for n in primitive_names(jax.make_jaxpr(vf)(*batched_args)) if n != "transpose"]
    assert vmapped == [n for n in plain if n != "transpose"]


# ---------------------------------------------------------------------------
# Reductions and argmax/argmin

REDUCTION_DTYPES: dict[str, list[np.dtype[Any]]] = {
    "reduce_sum": [F32, np.dtype(np.int32)],
    "reduce_prod": [F32, np.dtype(np.int32)],
    "reduce_max": [F32, np.dtype(np.int8), np.dtype(np.bool_)],
    "reduce_min": [F32, np.dtype(np.uint8), np.dtype(np.bool_)],
    "reduce_and": [np.dtype(np.bool_), np.dtype(np.int32)],
    "reduce_or": [np.dtype(np.bool_), np.dtype(np.uint16)],
    "reduce_xor": [np.dtype(np.bool_), np.dtype(np.int8)],
}


@pytest.mark.parametrize("name", sorted(REDUCTION_DTYPES))
@law(case=shape_and_axes(min_side=0), bdim=st.integers(0, 3), size=st.integers(1, 3), data=st.data())
def test_vmap_of_reduction(name: str, case: Any, bdim: int, size: int, data: st.DataObject) -> None:
    shape, axes = case
    bdim = min(bdim, len(shape))
    dtype = data.draw(st.sampled_from(REDUCTION_DTYPES[name]))
    prim = rp.REDUCTION_PRIMITIVES[name]

    def f(x: Any) -> Any:
        return prim.bind(x, axes=axes, out_sharding=None) if name == "reduce_sum" else prim.bind(x, axes=axes)

    xs = batched(data.draw(st.integers(0, 2**32 - 1)), shape, dtype, bdim, size)
    vf = jax.vmap(f, in_axes=bdim)
    assert_same(jax.jit(vf)(xs), stacked(f, [xs], [bdim], size))
    only_moves_added(f, vf, [np.take(xs, 0, axis=bdim)], [xs])


@pytest.mark.parametrize("fn", [lax.argmax, lax.argmin], ids=["argmax", "argmin"])
@law(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), bdim=st.integers(0, 3), size=st.integers(1, 3), data=st.data())
def test_vmap_of_arg_reduction(fn: Callable[..., Any], shape: tuple[int, ...], bdim: int, size: int, data: st.DataObject) -> None:
    bdim = min(bdim, len(shape))
    axis = data.draw(st.integers(0, len(shape) - 1))
    dtype: np.dtype[Any] = data.draw(st.sampled_from([F32, np.dtype(np.int8)]))
    xs = batched(data.draw(st.integers(0, 2**32 - 1)), shape, dtype, bdim, size)

    def f(x: Any) -> Any:
        return fn(x, axis, np.int32)

    vf = jax.vmap(f, in_axes=bdim)
    assert_same(jax.jit(vf)(xs), stacked(f, [xs], [bdim], size))
    only_moves_added(f, vf, [np.take(xs, 0, axis=bdim)], [xs])


def test_reduction_rule_output_dims() -> None:
    """The batch axis keeps its place among the surviving axes (no move needed)."""
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    rule = batching.primitive_batchers[rp.reduce_max_p]
    for bdim, axes, out_dim in [(0, (0, 2), 0), (2, (0, 2), 1), (3, (2, 0), 1), (1, (), 1), (1, (2,), 1)]:
        out, d = rule([x], [bdim], axes=axes)
        assert d == out_dim
        # The rule's result is f of each slice, stacked along the reported dimension.
        expected = stacked(lambda s, axes=axes: lax.reduce_max(s, axes), [x], [bdim], x.shape[bdim])
        np.testing.assert_array_equal(np.moveaxis(np.asarray(out), d, 0), expected)


# ---------------------------------------------------------------------------
# dot_general


@law(case=dot_cases(), dims=st.tuples(st.integers(-1, 4), st.integers(-1, 4)), size=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_vmap_of_dot_general(case: DotCase, dims: tuple[int, int], size: int, seed: int) -> None:
    lshape, rshape, dn = case
    # -1 stands for "not batched"; at least one operand is.
    lbd = None if dims[0] < 0 else min(dims[0], len(lshape))
    rbd = None if dims[1] < 0 and lbd is not None else min(max(dims[1], 0), len(rshape))
    a = batched(seed, lshape, F32, lbd, size)
    b = batched(seed + 1, rshape, F32, rbd, size)

    def f(a: Any, b: Any) -> Any:
        return lax.dot_general(a, b, dn)

    vf = jax.vmap(f, in_axes=(lbd, rbd))
    assert_same(jax.jit(vf)(a, b), stacked(f, [a, b], [lbd, rbd], size))
    unbatched = [x if d is None else np.take(x, 0, axis=d) for x, d in ((a, lbd), (b, rbd))]
    only_moves_added(f, vf, unbatched, [a, b])


def test_vmap_of_dot_general_keeps_its_params() -> None:
    a = rand(0, (4, 2, 3), np.dtype(np.float16))
    b = rand(1, (3, 5), np.dtype(np.float16))

    def f(a: Any, b: Any) -> Any:
        return lax.dot_general(a, b, (((1,), (0,)), ((), ())), precision=lax.Precision.HIGHEST, preferred_element_type=np.float32)

    vf = jax.vmap(f, in_axes=(0, None))
    (eqn,) = jax.make_jaxpr(vf)(a, b).jaxpr.eqns
    assert eqn.params["precision"] == (lax.Precision.HIGHEST, lax.Precision.HIGHEST)
    assert eqn.params["preferred_element_type"] == np.float32
    out = vf(a, b)
    assert out.dtype == np.float32
    assert_same(out, stacked(f, [a, b], [0, None], 4))


def test_quickstart_apply_matrix() -> None:
    """The quickstart's example: vmap(apply_matrix) equals the manually batched product."""
    mat = rand(0, (150, 100), F32)
    batched_x = rand(1, (10, 100), F32)

    def apply_matrix(v: Any) -> Any:
        return jnp.dot(mat, v)

    expected = jnp.dot(batched_x, mat.T)
    np.testing.assert_allclose(jax.vmap(apply_matrix)(batched_x), expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(jax.jit(jax.vmap(apply_matrix))(batched_x), expected, rtol=1e-5, atol=1e-4)
    assert primitive_names(jax.make_jaxpr(jax.vmap(apply_matrix))(batched_x)) == ["dot_general", "transpose"]


# ---------------------------------------------------------------------------
# Composition with jit, grad and itself


def _loss(w: Any, x: Any) -> Any:
    h = jnp.dot(x, w)
    return jnp.sum(jnp.max(h, axis=1) * jnp.sum(h, axis=1)) + jnp.prod(jnp.sum(w, axis=0))


def test_vmap_of_grad_is_per_example_gradients() -> None:
    w = rand(0, (3, 4), F32) / 2
    xs = rand(1, (5, 2, 3), F32)
    g = jax.grad(_loss)
    expected = stacked(g, [w, xs], [None, 0], 5)
    assert_same(jax.vmap(g, in_axes=(None, 0))(w, xs), expected)
    assert_same(jax.jit(jax.vmap(g, in_axes=(None, 0)))(w, xs), expected)
    assert_same(jax.vmap(jax.jit(g), in_axes=(None, 0))(w, xs), expected)
    # Batched weights too: each example its own w.
    ws = rand(2, (5, 3, 4), F32) / 2
    assert_same(jax.vmap(g)(ws, xs), stacked(g, [ws, xs], [0, 0], 5))


def test_grad_of_vmap() -> None:
    w = rand(0, (3, 4), F32) / 2
    xs = rand(1, (5, 2, 3), F32)

    def total(w: Any) -> Any:
        return jnp.sum(jax.vmap(_loss, in_axes=(None, 0))(w, xs))

    expected = sum(np.asarray(jax.grad(_loss)(w, xs[i])) for i in range(5))
    np.testing.assert_allclose(jax.grad(total)(w), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(jax.jit(jax.grad(total))(w), expected, rtol=1e-4, atol=1e-4)


def test_nested_vmap() -> None:
    a = rand(0, (2, 3, 4, 5), F32)  # batch axes 0 and 2 of a, contract over the last
    b = rand(1, (5, 4, 6), F32)  # batch axis 1 of b: the inner vmap's

    def f(a: Any, b: Any) -> Any:
        return lax.reduce_max(jnp.dot(a, b), (0,))

    vf = jax.vmap(jax.vmap(f, in_axes=(1, 1)), in_axes=(0, None))
    expected = np.stack([np.stack([np.asarray(f(a[i, :, j], b[:, j])) for j in range(4)]) for i in range(2)])
    np.testing.assert_allclose(vf(a, b), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jax.jit(vf)(a, b), expected, rtol=1e-5, atol=1e-5)
