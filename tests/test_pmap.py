"""pmap: jit(vmap) with the mapped axis bound to a name, limited to the device count."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp


def test_pmap_maps_the_leading_axis() -> None:
    out = jax.pmap(lambda x: x * 2 + 1)(jnp.arange(3.0).reshape(1, 3))
    np.testing.assert_array_equal(np.asarray(out), [[1.0, 3.0, 5.0]])
    assert out.shape == (1, 3) and out.dtype == jnp.float32


def test_collectives_see_the_pmapped_axis_name() -> None:
    f = jax.pmap(lambda x: x / jax.lax.psum(x, "devices"), axis_name="devices")
    np.testing.assert_allclose(np.asarray(f(jnp.full((1, 2), 4.0))), [[1.0, 1.0]])
    index = jax.pmap(lambda x: x + jax.lax.axis_index("i"), axis_name="i")(jnp.zeros((1,)))
    np.testing.assert_array_equal(np.asarray(index), [0.0])


def test_in_axes_out_axes_and_static_arguments() -> None:
    f = jax.pmap(lambda x, y, n: (x * y) ** n, in_axes=(0, None, None), static_broadcasted_argnums=2)
    out = f(jnp.full((1, 2), 2.0), jnp.array([1.0, 3.0]), 2)
    np.testing.assert_array_equal(np.asarray(out), [[4.0, 36.0]])
    g = jax.pmap(lambda x: x.sum(), in_axes=1)
    np.testing.assert_array_equal(np.asarray(g(jnp.ones((3, 1)))), [3.0])
    h = jax.pmap(lambda x: jnp.stack([x, x]), out_axes=1)
    assert h(jnp.ones((1, 4))).shape == (2, 1, 4)


def test_a_mapped_axis_longer_than_the_device_count_is_an_error() -> None:
    count = len(jax.local_devices())
    with pytest.raises(ValueError, match=f"size {count + 1}, but only {count} device"):
        jax.pmap(lambda x: x)(jnp.ones((count + 1, 2)))


def test_donated_arguments_are_deleted_but_keywords_are_never_donated() -> None:
    f = jax.pmap(lambda p, s: (p - s, s * 2), donate_argnums=(0, 1))
    params = jax.device_put(np.ones((1, 3), np.float32))
    state = jax.device_put(np.ones((1, 3), np.float32))
    new_params, _ = f(params, state)
    np.testing.assert_array_equal(np.asarray(new_params), np.zeros((1, 3)))
    assert params.is_deleted() and state.is_deleted()
    kept = jax.device_put(np.ones((1, 3), np.float32))
    f(p=kept, s=jax.device_put(np.ones((1, 3), np.float32)))
    assert not kept.is_deleted()


def test_static_and_donated_together_is_an_error() -> None:
    with pytest.raises(ValueError, match="both static and donated"):
        jax.pmap(lambda x: x, static_broadcasted_argnums=0, donate_argnums=0)


def test_pmap_composes_with_grad_inside() -> None:
    f = jax.pmap(jax.grad(lambda x: (x**2).sum()))
    np.testing.assert_allclose(np.asarray(f(jnp.array([[1.0, 2.0]]))), [[2.0, 4.0]])
