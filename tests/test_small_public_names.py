"""Small public names libraries use: ``jax.__version_info__``, ``jax.disable_jit``,
``jnp.iscomplexobj``/``isrealobj``, ``jnp.astype``, ``zeros_like`` & co. on a
``ShapeDtypeStruct``, ``lax.broadcast_shapes``. The comparison with real JAX is
test_small_public_names_oracle.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.interpreters.tracing import DynamicJaxprTracer


def test_version_info_is_the_version_as_ints() -> None:
    assert jax.__version_info__ == tuple(int(p) for p in jax.__version__.split("."))
    assert all(type(p) is int for p in jax.__version_info__)


def test_disable_jit_runs_a_jitted_function_op_by_op() -> None:
    seen: list[type] = []

    @jax.jit
    def f(x: Any) -> Any:
        seen.append(type(x))
        return x * 2

    with jax.disable_jit():
        np.testing.assert_array_equal(f(jnp.ones(2)), [2.0, 2.0])
        with jax.disable_jit(False):
            f(jnp.ones(3))
    f(jnp.ones(4))
    assert seen[0] is jax.Array and seen[1] is DynamicJaxprTracer and seen[2] is DynamicJaxprTracer


@pytest.mark.parametrize(
    ("x", "complex_"),
    [(1.0, False), (1j, True), (np.complex64(1), True), (np.ones(2, np.complex64), True), ([1, 2j], True),
     ([1, 2], False), (np.ones(2), False), (None, False), (True, False)],
)  # fmt: skip
def test_iscomplexobj_and_isrealobj_on_host_values(x: Any, complex_: bool) -> None:
    assert jnp.iscomplexobj(x) is complex_
    assert jnp.isrealobj(x) is (not complex_)


def test_iscomplexobj_of_minijax_arrays_is_their_dtype() -> None:
    for x in (jnp.ones(2), jnp.arange(3), jnp.zeros((), bool), jax.random.key(0), jax.random.PRNGKey(0)):
        assert not jnp.iscomplexobj(x) and jnp.isrealobj(x)
    for x in (jnp.ones(2, jnp.complex64), jnp.array(1j), jnp.zeros(2) + 0j):
        assert jnp.iscomplexobj(x) and not jnp.isrealobj(x)
    assert jax.jit(lambda x: x * jnp.isrealobj(x))(jnp.ones(2)).shape == (2,)


def test_astype_converts_any_array_like() -> None:
    out = jnp.astype(np.ones(2), "float16")
    assert isinstance(out, jax.Array) and out.dtype == np.float16
    three = jnp.astype(3, jnp.float32)
    assert isinstance(three, jax.Array) and three.dtype == np.float32 and not three.weak_type
    np.testing.assert_array_equal(jnp.astype(jnp.array([1.5, -2.5]), jnp.int32, copy=True), [1, -2])
    with pytest.raises(TypeError, match="astype requires ndarray or scalar arguments"):
        jnp.astype([1, 2], jnp.int32)


def test_like_functions_accept_a_shape_dtype_struct() -> None:
    s = jax.ShapeDtypeStruct((2, 3), jnp.int32)
    for out, fill in ((jnp.zeros_like(s), 0), (jnp.ones_like(s), 1), (jnp.full_like(s, 3), 3)):
        assert out.shape == (2, 3) and out.dtype == np.int32
        np.testing.assert_array_equal(out, np.full((2, 3), fill))
    assert jnp.empty_like(s).shape == (2, 3)
    assert jnp.ones_like(s, dtype=jnp.float32).dtype == np.float32
    assert jnp.zeros_like(s, shape=(4,)).shape == (4,)
    assert not jnp.zeros_like(jax.ShapeDtypeStruct((2,), jnp.float32, weak_type=True)).weak_type  # (as in JAX)


def test_lax_broadcast_shapes() -> None:
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert lax.broadcast_shapes((2, 3), (4, 2, 1), (5, 1, 1, 1)) == (5, 4, 2, 3)
    assert lax.broadcast_shapes((1,), ()) == (1,)
    assert lax.broadcast_shapes((0,), (1,)) == (0,)
    assert lax.broadcast_shapes([np.int64(3)]) == (3,)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2,\), \(3,\)\]"):
        lax.broadcast_shapes((2,), (3,))
    with pytest.raises(TypeError, match="Only non-negative indices"):
        lax.broadcast_shapes((2,), (-1,))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type"):
        lax.broadcast_shapes((2.0,), (2,))
    with pytest.raises(TypeError, match="at least one shape"):
        lax.broadcast_shapes()
