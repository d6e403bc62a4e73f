"""jax.ops segment reductions, jax.flatten_util.ravel_pytree and tree_util's
last three names, on each backend.

Values against a NumPy reference (``np.add.at`` & co.), the transformations
(jit with a static ``num_segments``, grad, vmap over data and over ids), and
the errors. The comparison with real JAX is in
tests/test_jnp_structural_more_oracle.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import tree_util
from minijax.errors import ConcretizationTypeError
from minijax.flatten_util import ravel_pytree

UFUNCS = {"segment_sum": (np.add, 0.0), "segment_prod": (np.multiply, 1.0),
          "segment_max": (np.maximum, -np.inf), "segment_min": (np.minimum, np.inf)}  # fmt: skip


def reference(op: str, data: np.ndarray, ids: np.ndarray, n: int) -> np.ndarray:
    ufunc, identity = UFUNCS[op]
    out = np.full((n, *data.shape[1:]), identity, data.dtype)
    keep = (ids >= 0) & (ids < n)  # FILL_OR_DROP: out-of-range ids are dropped
    ufunc.at(out, ids[keep], data[keep])
    return out


@pytest.mark.parametrize("op", sorted(UFUNCS))
@pytest.mark.parametrize("bucket_size", [None, 3])
def test_segment_ops_match_reference(op: str, bucket_size: int | None) -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((10, 2)).astype(np.float32)
    ids = rng.integers(-1, 6, 10).astype(np.int32)
    got = getattr(jax.ops, op)(data, ids, 5, bucket_size=bucket_size)
    np.testing.assert_allclose(np.asarray(got), reference(op, data, ids, 5), rtol=1e-5)
    assert got.dtype == np.float32 and got.shape == (5, 2)


def test_segment_defaults_dtypes_and_modes() -> None:
    ids = np.array([0, 0, 1, 3])
    # num_segments defaults to max(id) + 1 (concrete ids only).
    assert jax.ops.segment_sum(np.arange(4), ids).shape == (4,)
    assert jax.ops.segment_max(np.array([3, -1], np.int8), np.array([1, 1]), 3).tolist() == [-128, 3, -128]
    assert jax.ops.segment_min(np.array([True, False]), np.array([0, 1]), 3).tolist() == [True, False, True]
    clipped = jax.ops.segment_sum(np.arange(4.0), np.array([0, 9, -3, 1]), 2, mode="clip")
    assert clipped.tolist() == [2.0, 4.0]
    weak = jax.ops.segment_sum(2.0, np.array([0]), 2)
    assert weak.dtype == np.float32 and not weak.weak_type  # the output is a full() of the dtype, as in JAX
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        jax.ops.segment_sum(np.arange(3.0), np.array([0, 1, 1]), -1)
    with pytest.raises(ConcretizationTypeError, match="num_segments"):
        jax.jit(lambda d, s: jax.ops.segment_sum(d, s))(np.arange(3.0), np.array([0, 1, 1]))


def test_segment_transformations() -> None:
    ids = np.array([0, 1, 1, 2, 0])
    jitted = jax.jit(jax.ops.segment_sum, static_argnums=2)(np.arange(5.0), ids, 3)
    assert jitted.tolist() == [4.0, 3.0, 3.0]
    g = jax.grad(lambda d: jnp.sum(jax.ops.segment_sum(d, ids, 3) ** 2))(jnp.arange(5.0))
    np.testing.assert_allclose(np.asarray(g), 2 * np.array([4.0, 3.0, 3.0, 3.0, 4.0]))
    gmax = jax.grad(lambda d: jnp.sum(jax.ops.segment_max(d, ids, 3)))(jnp.array([1.0, 3.0, 2.0, 5.0, 4.0]))
    assert gmax.tolist() == [0.0, 1.0, 0.0, 1.0, 1.0]
    batched = jax.vmap(lambda d: jax.ops.segment_sum(d, ids, 3))(np.ones((2, 5), np.float32))
    assert batched.tolist() == [[2.0, 2.0, 1.0]] * 2
    by_ids = jax.vmap(lambda s: jax.ops.segment_sum(np.arange(3.0), s, 2))(np.array([[0, 1, 1], [1, 1, 0]]))
    assert by_ids.tolist() == [[0.0, 3.0], [2.0, 1.0]]


def test_ravel_pytree_dtypes_and_unravel_checks() -> None:
    tree = {"a": 1.0, "b": np.arange(3), "c": (np.ones((2, 2), np.float16),)}
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (8,) and flat.dtype == np.float32 and not flat.weak_type
    back = unravel(flat)
    assert back["b"].dtype == np.int32 and back["c"][0].shape == (2, 2) and back["c"][0].dtype == np.float16
    with pytest.raises(TypeError, match="unravel function given array of dtype int32, but expected dtype float32"):
        unravel(jnp.arange(8))
    same_flat, same_unravel = ravel_pytree([np.ones(2, np.float32), np.zeros((1, 2), np.float32)])
    # One dtype: the unravel function keeps whatever dtype it is given.
    assert same_unravel(jnp.arange(4))[1].dtype == np.int32
    with pytest.raises(ValueError, match="Sum of sizes"):
        same_unravel(jnp.ones(5))
    empty, empty_unravel = ravel_pytree({})
    assert empty.shape == (0,) and empty.dtype == np.float32 and empty_unravel(empty) == {}
    assert ravel_pytree([1.0, 2.0])[0].weak_type
    assert unravel == ravel_pytree(tree)[1]  # equal for equal structures: usable as a static argument
    g = jax.grad(lambda t: jnp.sum(ravel_pytree(t)[0] ** 2))({"a": 1.0, "b": jnp.ones(2)})
    assert float(g["a"]) == 2.0 and g["b"].tolist() == [2.0, 2.0]


@pytest.mark.single_backend
def test_tree_util_last_three() -> None:
    keyed, aux = tree_util.flatten_one_level_with_keys({"x": 1, "y": [2]})
    assert [str(k) for k, _ in keyed] == ["['x']", "['y']"] and [v for _, v in keyed] == [1, [2]]
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tree_util.flatten_one_level_with_keys(1)
    pairs = tree_util.tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5])
    assert pairs == ((1, 2), (3, (4, 5)))  # halves, as JAX splits them
    assert jax.tree.reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="Must specify identity"):
        jax.tree.reduce_associative(lambda a, b: a + b, [])
    registry = tree_util.default_registry
    leaves, treedef = registry.flatten({"a": (1, 2)})
    assert leaves == [1, 2] and treedef == jax.tree.structure({"a": (1, 2)})
    assert registry.is_node(tuple) and not registry.is_node(int) and registry.flatten_one_level(1) is None

    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: Any
        kind: str = jax.tree.static(default="add")

    assert dataclasses.fields(Op)[1].metadata["static"] is True
    leaves, treedef = jax.tree.flatten(Op(jnp.ones(2)))
    assert len(leaves) == 1 and jax.tree.unflatten(treedef, leaves).kind == "add"
