"""Small public names of jax, jax.lax, jax.dtypes and jax.errors that JAX 0.10 exports: the lax
primitives under JAX's names, lax.reciprocal/dtype/broadcast_like, the type aliases,
dtypes.itemsize_bits, errors.JaxprTypeError, the process queries and copy_to_host_async."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax


def test_lax_names_its_primitives_as_jax_does() -> None:
    names = {"cond_p": "cond", "scan_p": "scan", "while_p": "while", "linear_solve_p": "custom_linear_solve",
             "sort_p": "sort", "top_k_p": "top_k", "cumsum_p": "cumsum", "cumprod_p": "cumprod",
             "cummax_p": "cummax", "cummin_p": "cummin", "cumlogsumexp_p": "cumlogsumexp",
             "conv_general_dilated_p": "conv_general_dilated"}
    assert {attr: getattr(lax, attr).name for attr in names} == names
    jaxpr = jax.make_jaxpr(lambda x: lax.cumsum(x))(jnp.ones(3))
    assert jaxpr.eqns[0].primitive is lax.cumsum_p


def test_reciprocal_dtype_and_broadcast_like(backend_name: str) -> None:
    assert "integer_pow[y=-1]" in str(jax.make_jaxpr(lax.reciprocal)(2.0))
    assert float(lax.reciprocal(4.0)) == 0.25
    assert lax.dtype(1.0) == np.float32 and lax.dtype(np.int64) == np.int32 and lax.dtype(jnp.ones(2)) == np.float32
    out = lax.broadcast_like(jnp.arange(3.0), jnp.ones((2, 3)))
    assert out.shape == (2, 3) and np.asarray(out).tolist() == [[0.0, 1.0, 2.0]] * 2
    assert lax.broadcast_like(jnp.ones((1, 3)), jnp.zeros((4, 3))).shape == (4, 3)
    with pytest.raises(ValueError, match=r"cannot broadcast an array of shape \(2,\) to the shape \(3,\)"):
        lax.broadcast_like(jnp.ones(2), jnp.ones(3))


def test_itemsize_bits_counts_narrow_types_in_bits() -> None:
    bits = [jax.dtypes.itemsize_bits(d) for d in
            (jnp.int4, jnp.float32, jnp.bool_, "float16", jnp.uint2, ml_dtypes.float4_e2m1fn, jnp.complex64)]
    assert bits == [4, 32, 8, 16, 2, 4, 64]
    with pytest.raises(ValueError, match="dtype cannot be None"):
        jax.dtypes.itemsize_bits(None)


def test_jaxpr_type_error_is_the_checkers_error() -> None:
    from minijax.jaxpr_check import JaxprTypeError

    assert jax.errors.JaxprTypeError is JaxprTypeError and issubclass(JaxprTypeError, TypeError)


def test_one_process_and_the_renamed_queries() -> None:
    assert (jax.process_index(), jax.process_count(), jax.process_indices()) == (0, 1, [0])
    for old, value in (("host_count", 1), ("host_id", 0), ("host_ids", [0])):
        with pytest.warns(UserWarning, match=f"jax.{old} has been renamed"):
            assert getattr(jax, old)() == value


def test_copy_to_host_async_starts_every_array_leaf(backend_name: str) -> None:
    tree = {"a": jnp.ones(3), "b": [2.0, "not an array"]}
    assert jax.copy_to_host_async(tree) is tree
    assert jax.Shard is type(jnp.ones(2).addressable_shards[0])
