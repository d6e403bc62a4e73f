"""lax.optimization_barrier: the identity on a pytree, staged as one equation the compiler keeps."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax


def test_a_pytree_comes_back_unchanged_eagerly_and_under_jit(backend_name: str) -> None:
    tree = {"a": 1.0, "b": [jnp.arange(3)], "c": ()}
    for out in (lax.optimization_barrier(tree), jax.jit(lax.optimization_barrier)(tree)):
        assert jax.tree.structure(out) == jax.tree.structure(tree)
        assert repr(out["a"]) == "Array(1., dtype=float32, weak_type=True)"
        assert np.asarray(out["b"][0]).tolist() == [0, 1, 2]


def test_it_is_one_equation_and_its_derivatives_pass_through_barriers(backend_name: str) -> None:
    text = str(jax.make_jaxpr(lambda x, n: lax.optimization_barrier((jnp.sin(x), n)))(1.0, np.ones(2, np.int32)))
    assert "d:f32[] e:i32[2] = optimization_barrier c b" in text
    grad_text = str(jax.make_jaxpr(jax.grad(lambda x: lax.optimization_barrier(jnp.sin(x))))(1.0))
    assert grad_text.count("optimization_barrier") == 2  # one for the primal, one for the tangent
    assert float(jax.grad(lambda x: lax.optimization_barrier(jnp.sin(x)))(0.5)) == pytest.approx(np.cos(0.5))
    (ct,) = jax.linear_transpose(lambda x: lax.optimization_barrier(x), 1.0)(2.0)
    assert float(ct) == 2.0


def test_it_batches_each_operand_where_it_is(backend_name: str) -> None:
    xs, c = jax.vmap(lambda x: lax.optimization_barrier([x * 2, 2.0]))(jnp.arange(3.0))
    assert np.asarray(xs).tolist() == [0.0, 2.0, 4.0] and np.asarray(c).tolist() == [2.0, 2.0, 2.0]


def test_a_value_that_is_not_an_array_is_refused_with_jaxs_error() -> None:
    with pytest.raises(TypeError, match="Error interpreting argument to optimization_barrier as a JAX value. The "
                                        "problematic value is of type <class 'str'> and was passed to "
                                        "optimization_barrier at position 1"):
        lax.optimization_barrier((1.0, "abc"))


def test_xla_keeps_the_barrier_in_the_program() -> None:
    pytest.importorskip("minijax_xla", reason="the lowering is the xla backend's")
    text = jax.jit(lambda x: lax.optimization_barrier(jnp.sin(x)) + jnp.sin(x), backend="xla").lower(1.0).as_text()
    assert "stablehlo.optimization_barrier" in text
