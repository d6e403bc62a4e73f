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
from minijax import lax
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


# ---------------------------------------------------------------------------
# out_sharding= arguments: the result's type carries the sharding, eager and jitted results are laid
# out so on both backends, with the values the same computation has without it.

OUT_SHARDING: list[tuple[str, Any, tuple[Any, ...], str]] = [
    ("dot", lambda u: jnp.dot(u, u, out_sharding=P("x", None)), (8, 8), "float32[8@x,8]"),
    ("einsum", lambda u: jnp.einsum("ij,jk->ki", u, u, out_sharding=P("y")), (8, 8), "float32[8@y,8]"),
    ("matmul", lambda u: jnp.matmul(u, u.T, out_sharding=P(None, "y")), (8, 8), "float32[8,8@y]"),
    ("tensordot", lambda u: jnp.tensordot(u, u, 1, out_sharding=P(None, "x")), (8, 8), "float32[8,8@x]"),
    ("dot_general", lambda u: lax.dot_general(u, u, (((0,), (0,)), ((), ())), out_sharding=P("y", "x")), (8, 8),
     "float32[8@y,8@x]"),
    ("zeros_like", lambda u: jnp.zeros_like(u, out_sharding=P("x", "y")) + u, (8, 8), "float32[8@x,8@y]"),
    ("full", lambda u: jnp.full((8, 4), 2.0, out_sharding=P("x", "y")) * u[:, :4], (8, 8), "float32[8@x,4@y]"),
    ("arange", lambda u: jnp.arange(8, out_sharding=P("x")) + u.astype(jnp.int32), (8,), "int32[8@x]"),
    ("reshape", lambda u: jnp.reshape(u, (4, 16), out_sharding=P("x")), (8, 8), "float32[4@x,16]"),
    ("broadcast", lambda u: lax.broadcast(u, (2,), out_sharding=P(None, "x", "y")), (8, 8), "float32[2,8@x,8@y]"),
    ("reduce_sum", lambda u: lax.reduce_sum(u, (0,), out_sharding=P("y")), (8, 8), "float32[8@y]"),
]


def _plain(name: str, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The same computation in NumPy."""
    table = {"dot": lambda u: u @ u, "einsum": lambda u: (u @ u).T, "matmul": lambda u: u @ u.T,
             "tensordot": lambda u: u @ u, "dot_general": lambda u: u.T @ u, "zeros_like": lambda u: u,
             "full": lambda u: 2 * u[:, :4], "arange": lambda u: np.arange(8) + u.astype(np.int32),
             "reshape": lambda u: u.reshape(4, 16), "broadcast": lambda u: np.broadcast_to(u, (2, 8, 8)),
             "reduce_sum": lambda u: u.sum(0)}  # fmt: skip
    out: np.ndarray[Any, Any] = table[name](x)
    return out


@pytest.mark.parametrize("name, f, shape, typed", OUT_SHARDING, ids=[c[0] for c in OUT_SHARDING])
def test_out_sharding_arguments(mesh: Any, name: str, f: Any, shape: tuple[int, ...], typed: str) -> None:
    host = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 5
    x = jax.device_put(host, NamedSharding(mesh, P("x", "y") if len(shape) == 2 else P("x")))
    with jax.set_mesh(mesh):
        seen: list[str] = []
        jax.make_jaxpr(lambda u: seen.append(str(jax.typeof(f(u)))))(x)
        assert seen == [typed]
        for result in (f(x), jax.jit(f)(x)):
            assert str(jax.typeof(result)) == typed
            np.testing.assert_allclose(np.asarray(result), _plain(name, host), rtol=1e-6)
            # each device holds the block the type names
            spec = result.sharding.spec
            want = [n // (np.prod([mesh.shape[a] for a in ((e,) if isinstance(e, str) else e)]) if e else 1)
                    for n, e in zip(result.shape, tuple(spec) + (None,) * (result.ndim - len(spec)))]
            assert {s.data.shape for s in result.addressable_shards} == {tuple(want)}
            assert typed.split("[")[1].count("@") == sum(e is not None for e in spec)


def test_with_sharding_constraint_over_explicit_axes_is_an_assert(mesh: Any) -> None:
    a = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("x", "y")))
    with jax.set_mesh(mesh):
        assert "sharding_constraint" not in str(jax.make_jaxpr(lambda u: lax.with_sharding_constraint(u, P("x", "y")))(a))
        with pytest.raises(AssertionError, match=r"acts as an assert when all axes of mesh are of type `Explicit`"):
            jax.make_jaxpr(lambda u: lax.with_sharding_constraint(u, P(None, "x")))(a)
        with pytest.raises(AssertionError, match=r"The array sharding: P\('x', 'y'\) did not match"):
            lax.with_sharding_constraint(a, P(None, "x"))


# ---------------------------------------------------------------------------
# The rules of the other primitives (the types are JAX 0.10.2's: tests/test_sharding_types_oracle.py)

RULES: list[tuple[str, Any, Any, str]] = [
    ("reshape merge", lambda u: u.reshape(32), P("x", "y"), "float32[32@(x,y)]"),
    ("reshape split", lambda u: u.reshape(2, 4, 4), P("x", "y"), "float32[2@x,4,4@y]"),
    ("squeeze", lambda u: jnp.expand_dims(u, 1).squeeze(1), P("x", "y"), "float32[8@x,4@y]"),
    ("rev", lambda u: jnp.flip(u, 0), P("x", "y"), "float32[8@x,4@y]"),
    ("pad", lambda u: jnp.pad(u, ((2, 2), (0, 0))), P("x", "y"), "float32[12@x,4@y]"),
    ("dynamic_slice", lambda u: lax.dynamic_slice(u, (0, 1), (8, 2)), P("x", None), "float32[8@x,2]"),
    ("cumsum", lambda u: jnp.cumsum(u, 1), P("x", None), "float32[8@x,4]"),
    ("sort", lambda u: jnp.sort(u, 1), P("x", None), "float32[8@x,4]"),
    ("argmax", lambda u: jnp.argmax(u, 1), P("x", "y"), "int32[8@x]"),
    ("top_k", lambda u: lax.top_k(u, 2)[1], P("x", None), "int32[8@x,2]"),
    ("gather", lambda u: u[jnp.array([0, 3])], P(None, "y"), "float32[2,4@y]"),
    ("scatter", lambda u: u.at[jnp.array([0, 3])].add(1.0), P(None, "y"), "float32[8,4@y]"),
    ("split", lambda u: jnp.split(u, 2, axis=0)[1], P("x", "y"), "float32[4@x,4@y]"),
    ("stack", lambda u: jnp.stack([u, u]), P("x", "y"), "float32[2,8@x,4@y]"),
    ("scan", lambda u: lax.scan(lambda c, r: (c + r, c * r), u[0], u)[1], P(None, "y"), "float32[8,4@y]"),
]


def _rule_values(name: str, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    c = np.cumsum(x, 0)
    table = {"reshape merge": lambda: x.reshape(32), "reshape split": lambda: x.reshape(2, 4, 4), "squeeze": lambda: x,
             "rev": lambda: x[::-1], "pad": lambda: np.pad(x, ((2, 2), (0, 0))), "dynamic_slice": lambda: x[:, 1:3],
             "cumsum": lambda: np.cumsum(x, 1), "sort": lambda: np.sort(x, 1), "argmax": lambda: np.argmax(x, 1),
             "top_k": lambda: np.argsort(-x, 1, kind="stable")[:, :2], "gather": lambda: x[[0, 3]],
             "scatter": lambda: x + np.isin(np.arange(8), [0, 3])[:, None], "split": lambda: x[4:],
             "stack": lambda: np.stack([x, x]), "scan": lambda: np.concatenate([x[:1], x[:1] + c[:-1]]) * x}  # fmt: skip
    out: np.ndarray[Any, Any] = table[name]()
    return out


@pytest.mark.parametrize("name, f, spec, typed", RULES, ids=[c[0] for c in RULES])
def test_rules_of_the_other_primitives(mesh: Any, name: str, f: Any, spec: Any, typed: str) -> None:
    host = np.random.default_rng(0).permutation(32).reshape(8, 4).astype(np.float32)
    x = jax.device_put(host, NamedSharding(mesh, spec))
    seen: list[str] = []
    jax.make_jaxpr(lambda u: seen.append(str(jax.typeof(f(u)))))(x)
    assert seen == [typed]
    result = jax.jit(f)(x)  # laid out as its type says, on both backends
    assert str(jax.typeof(result)) == typed
    np.testing.assert_allclose(np.asarray(result), _rule_values(name, host), rtol=1e-6)


RULE_ERRORS = [
    ("reshape", lambda u: u.reshape(4, 8), P("x", "y"), "This reshape is not supported. Please specify the sharding"),
    ("cumsum", lambda u: jnp.cumsum(u, 0), P("x", "y"), "Input should be unsharded over the axis being reduced"),
    ("sort", lambda u: jnp.sort(u, 0), P("x", "y"), "Arguments to sort must be unsharded over the sorting dimension"),
    ("top_k", lambda u: lax.top_k(u, 2), P("x", "y"), "The input should be unsharded over the axis along which"),
    ("gather", lambda u: u[jnp.array([0, 3])], P("x", "y"), r"Use `.at\[...\].get\(out_sharding=\)`"),
    ("tile", lambda u: jnp.tile(u, (2, 1)), P("x", "y"), "Operand cannot be sharded on dimension 0"),
    ("dus", lambda u: lax.dynamic_update_slice(u, jnp.zeros((8, 2)), (0, 0)), P("x", None),
     "dynamic_update_slice operand sharding must be equal to update sharding"),
]


@pytest.mark.parametrize("name, f, spec, message", RULE_ERRORS, ids=[c[0] for c in RULE_ERRORS])
def test_rules_refuse_what_jax_refuses(mesh: Any, name: str, f: Any, spec: Any, message: str) -> None:
    x = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, spec))
    with jax.set_mesh(mesh), pytest.raises(ShardingTypeError, match=message):
        jax.make_jaxpr(f)(x)
    with pytest.raises(ValueError, match=r"0th dimension of all xs should be replicated\. Got P\('x', 'y'\)"):
        jax.make_jaxpr(lambda u: lax.scan(lambda c, r: (c, r), 0.0, u))(jax.device_put(np.ones((8, 4), np.float32),
                                                                                      NamedSharding(mesh, P("x", "y"))))


def test_cotangents_of_a_product_with_out_sharding_are_laid_out_as_their_operands(mesh: Any) -> None:
    a = jax.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4), NamedSharding(mesh, P("x", "y")))
    w = jax.device_put(np.ones((4, 6), np.float32), NamedSharding(mesh, P("y", None)))
    with jax.set_mesh(mesh):
        f = jax.grad(lambda u, v: jnp.dot(u, v, out_sharding=P("x", None)).sum(), argnums=(0, 1))
        ga, gw = jax.jit(f)(a, w)
    assert (str(jax.typeof(ga)), str(jax.typeof(gw))) == ("float32[8@x,4@y]", "float32[4@y,6]")
    np.testing.assert_array_equal(np.asarray(ga), np.full((8, 4), 6.0, np.float32))
    np.testing.assert_array_equal(np.asarray(gw), np.broadcast_to(np.arange(32.0).reshape(8, 4).sum(0)[:, None], (4, 6)))


def test_vmap_of_a_product_with_out_sharding_adds_the_batch_axis_layout(mesh: Any) -> None:
    a = jax.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4), NamedSharding(mesh, P("x", None)))
    with jax.set_mesh(mesh):
        f = jax.vmap(lambda v: jnp.dot(v, jnp.ones((4, 4), np.float32), out_sharding=P("y")))
        seen: list[str] = []
        jax.make_jaxpr(lambda u: seen.append(str(jax.typeof(f(u)))))(a)
        out = jax.jit(f)(a)
    assert seen == ["float32[8@x,4@y]"] and str(jax.typeof(out)) == "float32[8@x,4@y]"  # JAX's
    np.testing.assert_array_equal(np.asarray(out), np.repeat(np.arange(32.0).reshape(8, 4).sum(1, keepdims=True), 4, 1))


def test_like_functions_keep_an_explicit_operand_s_layout_without_a_mesh_set(mesh: Any) -> None:
    a = jax.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4), NamedSharding(mesh, P("x", "y")))
    z = jnp.zeros_like(a)  # (no jax.set_mesh: the operand's own mesh)
    assert str(jax.typeof(z)) == "float32[8@x,4@y]" and z.sharding == NamedSharding(mesh, P("x", "y"))
    np.testing.assert_array_equal(np.asarray(jnp.full_like(a, 3.0)), np.full((8, 4), 3.0, np.float32))


def test_a_types_sharding_names_the_abstract_mesh_and_its_explicit_axes_only(backend_name: str) -> None:
    # JAX's parallel page (cells "typeof(x).sharding", inside and outside jit, and under Auto axes).
    devices = eight(backend_name)
    explicit = jax.make_mesh((4, 2), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2, devices=devices)
    x = jax.device_put(np.arange(8.0).reshape(4, 2), NamedSharding(explicit, P("X", "Y")))
    seen = [jax.typeof(x).sharding]
    jax.jit(lambda v: seen.append(jax.typeof(v).sharding))(x)
    for sharding in seen:
        assert sharding.mesh == explicit.abstract_mesh and sharding.spec == P("X", "Y")
        assert "memory_kind" not in repr(sharding) and repr(sharding).startswith("NamedSharding(mesh=AbstractMesh(")
    assert x.sharding.mesh is explicit  # (the array's own sharding keeps its devices)
    mixed = jax.make_mesh((4, 2), ("X", "Y"), axis_types=(AxisType.Auto, AxisType.Explicit), devices=devices)
    y = jax.device_put(np.arange(8.0).reshape(4, 2), NamedSharding(mixed, P("X", "Y")))
    assert jax.typeof(y).sharding.spec == P(None, "Y")  # the compiler places values over Auto axes
    # A type's sharding lays a value out over the concrete mesh of the same axes.
    with jax.set_mesh(explicit):
        z = jax.device_put(np.ones((4, 2)), jax.typeof(x).sharding)
    assert z.sharding == x.sharding


def test_an_illegal_sharding_error_names_the_operation_and_its_inputs(mesh: Any) -> None:
    x = jax.device_put(np.arange(16).reshape(4, 4), NamedSharding(mesh, P("y", None)))
    y = jax.device_put(np.arange(16).reshape(4, 4), NamedSharding(mesh, P(None, "y")))
    with pytest.raises(ShardingTypeError, match=r"^add operation with inputs: i32\[4@y,4\], i32\[4,4@y\] produces an "
                                                r"illegally sharded result: i32\[4@y,4@y\]"):  # fmt: skip
        x + y


def test_reshard_in_a_trace_changes_the_type_and_the_results_layout(backend_name: str) -> None:
    # Checked against JAX 0.10.2: the jaxpr text, the result's type and layout, grad's and vmap's types.
    devices = eight(backend_name)
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2, devices=devices)
    with jax.set_mesh(mesh):
        x = jax.device_put(np.arange(8.0).reshape(4, 2), P("x", None))

        def f(v: Any) -> Any:
            return jax.reshard(v * 2, P(None, "y"))

        assert str(jax.make_jaxpr(f)(x)) == (
            "{ lambda ; a:f32[4@x,2]. let\n"
            "    b:f32[4@x,2] = mul a 2.0:f32[]\n"
            "    c:f32[4,2@y] = reshard b\n"
            "  in (c,) }"
        )
        out = jax.jit(f)(x)
        assert str(jax.typeof(out)) == "float32[4,2@y]" and out.sharding.spec == P(None, "y")
        np.testing.assert_array_equal(np.asarray(out), np.arange(8.0).reshape(4, 2) * 2)
        g = jax.jit(jax.grad(lambda v: jnp.sum(jnp.sin(f(v)))))(x)
        assert str(jax.typeof(g)) == "float32[4@x,2]"  # the cotangent goes back to the operand's layout
        np.testing.assert_allclose(np.asarray(g), 2 * np.cos(np.arange(8.0).reshape(4, 2) * 2), rtol=1e-6)
        vm = jax.jit(jax.vmap(lambda r: jax.reshard(r * 3, P("y"))))(x)
        assert str(jax.typeof(vm)) == "float32[4@x,2@y]"  # the mapped dimension keeps the operand's layout
        np.testing.assert_array_equal(np.asarray(vm), np.arange(8.0).reshape(4, 2) * 3)
        with pytest.raises(ValueError, match="more than the rank"):
            jax.jit(lambda v: jax.reshard(v, P(None, None, "y")))(x)


def test_explicit_axes_types_traced_arguments_over_the_switched_axes(backend_name: str) -> None:
    # JAX's parallel page: explicit_axes inside a jit over Auto axes.
    from minijax.sharding import explicit_axes

    devices = eight(backend_name)
    auto = jax.make_mesh((4, 2), ("X", "Y"), axis_types=(AxisType.Auto,) * 2, devices=devices)
    seen: list[str] = []

    @explicit_axes
    def g(y: Any) -> Any:
        seen.append(str(jax.typeof(y)))
        z = y * 2
        seen.append(str(jax.typeof(z)))
        return z

    @jax.jit
    def f(a: Any) -> Any:
        z = g(jnp.sin(a), in_sharding=P("X", "Y"))
        seen.append(str(jax.typeof(z)))
        return z + 1

    with jax.set_mesh(auto):
        x = jax.device_put(np.arange(16.0).reshape(4, 4), P("X", "Y"))
        out = f(x)
    assert seen == ["float32[4@X,4@Y]", "float32[4@X,4@Y]", "float32[4,4]"]
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(16.0).reshape(4, 4)) * 2 + 1, rtol=1e-6)


def test_a_reshard_onto_an_abstract_mesh_of_other_axes_inside_jit(mesh: Any) -> None:
    # (JAX's parallel page) The result is laid out over the program's devices arranged as that mesh.
    x = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4), NamedSharding(mesh, P("x", "y")))

    @jax.jit
    def f(v: Any) -> Any:
        other = jax.sharding.AbstractMesh((8,), ("A",), (AxisType.Explicit,))
        with jax.sharding.use_abstract_mesh(other):
            return jax.reshard(v, P("A", None)) * 2

    with jax.set_mesh(mesh):
        z = f(x)
    assert str(jax.typeof(z)) == "float32[8@A,4]"
    assert z.sharding.mesh.axis_names == ("A",) and list(z.sharding.mesh.devices.flat) == list(mesh.devices.flat)
    np.testing.assert_array_equal(np.asarray(z), np.arange(32).reshape(8, 4) * 2)
