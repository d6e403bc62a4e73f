"""Sharding in types (issue 17): traced values over Explicit mesh axes carry their sharding, each
staged primitive's result gets its sharding from the operands' by a rule (minijax/sharding_rules.py
_SHARDING_RULES), and conflicting operands raise JAX's ShardingTypeError. The printed types are
JAX 0.10.2's (tests/test_sharding_types_oracle.py compares them)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.backend import Device
from minijax.mesh import ShardingTypeError
from minijax.sharding import AxisType, NamedSharding, PartitionSpec as P
from tests.test_sharding import eight


@pytest.fixture
def mesh(backend_name: str) -> Any:
    devices: list[Device] = eight(backend_name)
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2, devices=devices)


def _program(seen: list[str]) -> Any:
    def f(a: Any) -> Any:
        seen.append(str(jax.typeof(a)))
        s = jnp.sin(a) + 1.0
        seen.append(str(jax.typeof(s)))
        t = s.sum(0)
        seen.extend([str(jax.typeof(t)), str(jax.typeof(s.T)), str(jax.typeof(s.astype(jnp.int32)))])
        seen.append(str(jax.typeof(jnp.broadcast_to(t, (3, 4)))))
        return t

    return f


EXPECTED_TYPES = [
    "float32[8@x,4@y]", "float32[8@x,4@y]", "float32[4@y]", "float32[4@y,8@x]", "int32[8@x,4@y]", "float32[3,4@y]",
]  # fmt: skip

EXPECTED_JAXPR = """{ lambda ; a:f32[8@x,4@y]. let
    b:f32[8@x,4@y] = sin a
    c:f32[8@x,4@y] = add b 1.0:f32[]
    d:f32[4@y] = reduce_sum[axes=(0,) out_sharding=None] c
    _:f32[4@y,8@x] = transpose[permutation=(1, 0)] c
    _:i32[8@x,4@y] = convert_element_type[new_dtype=int32 weak_type=False] c"""


def test_traced_values_carry_explicit_shardings(mesh: Any) -> None:
    a = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("x", "y")))
    seen: list[str] = []
    text = str(jax.make_jaxpr(_program(seen))(a))
    assert seen == EXPECTED_TYPES
    assert text.startswith(EXPECTED_JAXPR)


def test_auto_axes_stay_out_of_the_types(backend_name: str) -> None:
    auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2, devices=eight(backend_name))
    a = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(auto, P("x", "y")))
    seen: list[str] = []
    jax.make_jaxpr(lambda v: seen.append(str(jax.typeof(v + 1))))(a)
    assert seen == ["float32[8,4]"]


def test_elementwise_operands_must_agree(mesh: Any) -> None:
    a = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("x", "y")))
    b = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("y", "x")))
    c = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("x", None)))
    with pytest.raises(ShardingTypeError, match=r"add got incompatible shardings for broadcasting: \('x', 'y'\), \('y', 'x'\)\."):
        jax.make_jaxpr(lambda u, v: u + v)(a, b)
    seen: list[str] = []
    jax.make_jaxpr(lambda u, v: seen.append(str(jax.typeof(u * v))))(a, c)
    assert seen == ["float32[8@x,8@y]"]


def test_jit_traces_again_for_another_explicit_layout(mesh: Any) -> None:
    seen: list[str] = []
    f = jax.jit(lambda u, v: (seen.append(str(jax.typeof(u))), u + v)[1])
    xy = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("x", "y")))
    yx = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("y", "x")))
    np.testing.assert_array_equal(np.asarray(f(xy, xy)), np.full((8, 8), 2.0, np.float32))
    assert seen == ["float32[8@x,8@y]"]
    with pytest.raises(ShardingTypeError, match="add got incompatible shardings"):
        f(xy, yx)
    f(yx, yx)
    f(yx, yx)  # traced once per layout
    assert seen == ["float32[8@x,8@y]", "float32[8@x,8@y]", "float32[8@y,8@x]"]


def test_slices_keep_the_layout_and_concatenated_operands_must_agree(mesh: Any) -> None:
    a = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("x", "y")))
    b = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("y", "x")))
    seen: list[str] = []
    jax.make_jaxpr(lambda u: seen.extend([str(jax.typeof(u[2:6])), str(jax.typeof(jnp.concatenate([u, u], 1)))]))(a)
    assert seen == ["float32[4@x,8@y]", "float32[8@x,16@y]"]
    with pytest.raises(ShardingTypeError, match=r"out dim \(3\) is not divisible by mesh axes \(2\) with spec \(x\)"):
        jax.make_jaxpr(lambda u: u[1:4])(a)
    with pytest.raises(ShardingTypeError, match="All operands should have the same sharding"):
        jax.make_jaxpr(lambda u, v: jnp.concatenate([u, v], 1))(a, b)


def test_contracting_dimensions_split_on_both_sides_ask_for_out_sharding(mesh: Any) -> None:
    a = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("x", "y")))
    w = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(mesh, P("y", None)))
    r = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(mesh, P(None, "x")))
    with pytest.raises(ShardingTypeError, match=r"specify the output sharding via the `out_sharding` parameter"):
        jax.make_jaxpr(jnp.matmul)(a, w)
    with pytest.raises(ShardingTypeError, match=r"produces an illegally sharded result: f32\[8@x,8@x\]"):
        jax.make_jaxpr(jnp.matmul)(jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("x"))), r)
