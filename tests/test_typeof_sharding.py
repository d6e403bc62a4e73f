"""``jax.typeof(x).sharding`` for a value with no placement of its own (issue 24, Optax's alias_test).

JAX gives every aval a sharding: a traced or never-placed value is replicated over the empty
abstract mesh. Optax's ``tree_random_like`` passes it to a sampler as ``out_sharding``
(14 of Optax's alias tests failed on it), so the samplers take it as no placement.
"""

from __future__ import annotations

import numpy as np

import minijax as jax
import minijax.numpy as jnp


def test_an_unplaced_value_has_the_empty_meshs_replicated_sharding() -> None:
    seen = []
    x = jnp.zeros((3, 2))
    seen.append(jax.typeof(x).sharding)
    jax.jit(lambda v: seen.append(jax.typeof(v).sharding))(x)
    for sharding in seen:
        assert sharding.mesh.axis_names == () and tuple(sharding.spec) == (None, None)
    assert jax.typeof(x) == jax.typeof(jnp.ones((3, 2)))  # still the plain aval for comparisons
    assert str(jax.typeof(x)) == "float32[3,2]"


def test_a_sampler_takes_that_sharding_as_no_placement() -> None:
    x = jnp.zeros(2)
    key = jax.random.key(0)
    got = jax.random.normal(key, (2,), out_sharding=jax.typeof(x).sharding)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.random.normal(key, (2,))))
    got = jax.jit(lambda k, v: jax.random.uniform(k, v.shape, out_sharding=jax.typeof(v).sharding))(key, x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.random.uniform(key, (2,))))
