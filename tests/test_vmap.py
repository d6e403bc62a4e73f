"""The vmap API and the Jacobian functions (per-primitive batching rules are
tested by family and by tests/test_vmap_laws.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp

rng = np.random.default_rng(0)


def test_vmap_of_matrix_vector_product_equals_manual_batching():
    # The quickstart's example.
    mat = rng.normal(size=(150, 100)).astype(np.float32)
    batched_x = rng.normal(size=(10, 100)).astype(np.float32)

    def apply_matrix(v):
        return jnp.dot(mat, v)

    np.testing.assert_allclose(jax.vmap(apply_matrix)(batched_x), jnp.dot(batched_x, mat.T), rtol=1e-4, atol=1e-4)


def test_in_axes_out_axes_and_none():
    x = rng.normal(size=(3, 4)).astype(np.float32)
    y = rng.normal(size=(3,)).astype(np.float32)
    out = jax.vmap(lambda a, b: a * b, in_axes=(1, None))(x, y)
    np.testing.assert_allclose(out, (x * y[:, None]).T, rtol=1e-6)
    out = jax.vmap(lambda a: a * 2.0, in_axes=1, out_axes=1)(x)
    np.testing.assert_allclose(out, x * 2.0, rtol=1e-6)
    out = jax.vmap(lambda a: a.sum(), in_axes=-1)(x)
    np.testing.assert_allclose(out, x.sum(axis=0), rtol=1e-5)


def test_pytree_in_axes_prefix_and_kwargs():
    params = {"w": rng.normal(size=(5, 3)).astype(np.float32), "b": np.float32(1.0)}
    xs = rng.normal(size=(5, 3)).astype(np.float32)
    out = jax.vmap(lambda p, x: jnp.sum(p["w"] * x) + p["b"], in_axes=({"w": 0, "b": None}, 0))(params, xs)
    np.testing.assert_allclose(out, (params["w"] * xs).sum(axis=1) + 1.0, rtol=1e-5)


def test_unbatched_output_is_broadcast():
    out = jax.vmap(lambda x: 1.0)(np.ones(3, np.float32))
    assert out.shape == (3,) and np.all(np.asarray(out) == 1.0)


def test_axis_size_without_mapped_arguments():
    out = jax.vmap(lambda: jnp.ones(2), axis_size=4)()
    assert out.shape == (4, 2)


def test_nested_vmap():
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    out = jax.vmap(jax.vmap(jnp.sum))(x)
    np.testing.assert_allclose(out, x.sum(axis=2), rtol=1e-5)


def test_vmap_composes_with_jit_and_grad():
    xs = rng.normal(size=(6,)).astype(np.float32)
    per_example = jax.vmap(jax.grad(lambda x: jnp.sin(x) * x))(xs)
    np.testing.assert_allclose(per_example, np.cos(xs) * xs + np.sin(xs), rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(lambda x: jnp.sin(x) * x)))(xs), per_example, rtol=1e-6)
    total = jax.grad(lambda v: jnp.sum(jax.vmap(lambda x: jnp.sin(x) * x)(v)))(xs)
    np.testing.assert_allclose(total, per_example, rtol=1e-5)
    np.testing.assert_allclose(jax.vmap(jax.jit(jnp.sin))(xs), np.sin(xs), rtol=1e-6)


def test_vmapped_jaxpr_has_the_same_equations():
    text = str(jax.make_jaxpr(jax.vmap(lambda x: jnp.sin(x) * 2.0))(np.ones((3, 2), np.float32)))
    assert text.count(" = ") == 2 and "sin" in text and "mul" in text


# --- errors ---------------------------------------------------------------------


def test_inconsistent_sizes_error_lists_each_argument():
    with pytest.raises(ValueError) as info:
        jax.vmap(lambda x, y: x + y)(np.ones(2, np.float32), np.ones(3, np.float32))
    message = str(info.value)
    assert "vmap got inconsistent sizes for array axes to be mapped" in message
    assert "axis 0 of argument x of type float32[2]" in message
    assert "axis 0 of argument y of type float32[3]" in message


def test_axis_out_of_range_error():
    with pytest.raises(ValueError, match="vmap was requested to map its argument along axis 1"):
        jax.vmap(lambda x: x, in_axes=1)(np.ones(3, np.float32))


def test_in_axes_tree_mismatch_error():
    with pytest.raises(ValueError, match=r"len\(in_axes\)=2, len\(args\)=1"):
        jax.vmap(lambda x: x, in_axes=(0, 0))(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or a tuple"):
        jax.vmap(lambda x: x, in_axes="a")(np.ones(3, np.float32))


def test_batched_output_with_out_axes_none_error():
    with pytest.raises(ValueError, match="got axis spec None but output was batched on axis 0"):
        jax.vmap(lambda x: x, out_axes=None)(np.ones(3, np.float32))


def test_no_mapped_argument_error():
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        jax.vmap(lambda x: x, in_axes=None)(np.ones(3, np.float32))


# --- Jacobians --------------------------------------------------------------------


def _f_vec(x):
    return jnp.stack([jnp.sin(x[0]) * x[1], x[0] * x[0] + x[1], jnp.cos(x[1])])


def _jac_f_vec(x):
    return np.array([[np.cos(x[0]) * x[1], np.sin(x[0])], [2 * x[0], 1.0], [0.0, -np.sin(x[1])]])


def test_jacfwd_and_jacrev_agree_with_the_analytic_jacobian():
    x = np.array([0.3, -0.7], np.float32)
    np.testing.assert_allclose(jax.jacfwd(_f_vec)(x), _jac_f_vec(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jacrev(_f_vec)(x), _jac_f_vec(x), rtol=1e-5, atol=1e-6)


def test_jacobians_of_pytrees_and_argnums():
    def f(a, b):
        return {"p": a * b, "q": jnp.sum(a)}

    a = np.array([1.0, 2.0], np.float32)
    b = np.array([3.0, 4.0], np.float32)
    for jac in (jax.jacfwd, jax.jacrev):
        j = jac(f, argnums=(0, 1))(a, b)
        np.testing.assert_allclose(j["p"][0], np.diag(b))
        np.testing.assert_allclose(j["p"][1], np.diag(a))
        np.testing.assert_allclose(j["q"][0], [1.0, 1.0])
        assert j["q"][1].shape == (2,)


def test_hessian_is_symmetric_and_matches_analytic():
    def f(x):
        return jnp.sum(jnp.sin(x) * x[::-1])

    x = np.array([0.1, 0.5, -0.3], np.float32)
    h = np.asarray(jax.hessian(f)(x))
    np.testing.assert_allclose(h, h.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.jacfwd(jax.jacrev(f)))(x), h, rtol=1e-5, atol=1e-6)


def test_jacrev_has_aux():
    j, aux = jax.jacrev(lambda x: (x * x, x + 1), has_aux=True)(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(j, np.diag([2.0, 4.0]))
    np.testing.assert_allclose(aux, [2.0, 3.0])
