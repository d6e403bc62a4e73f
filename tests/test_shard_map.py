"""``jax.shard_map``: blocks per in_specs, the body once per block with the mesh axes
as named axes, results assembled per out_specs; its collectives, transformations
and errors. Every expected value is computed here with NumPy from the blocks.

Runs once per backend on an 8-device backend of the same kind (tests/test_sharding.py).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from test_sharding import auto_mesh, devices as devices, eight  # noqa: F401  (devices: the fixture)

import minijax as jax
import minijax.numpy as jnp
from minijax.backend import Device
from minijax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

X = np.arange(32, dtype=np.float32).reshape(8, 4)


def blocks(x: np.ndarray[Any, Any], rows: int, cols: int) -> list[list[np.ndarray[Any, Any]]]:
    """x cut into a rows x cols grid of blocks."""
    return [np.hsplit(r, cols) for r in np.vsplit(x, rows)]


def test_blocks_and_psum(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    seen: list[tuple[int, ...]] = []

    def body(b: Any) -> Any:
        seen.append(b.shape)
        return jax.lax.psum(b, "y")

    out = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", None))(X)
    assert seen == [(4, 1)]  # the body sees one device's block
    expected = np.concatenate([sum(row) for row in blocks(X, 2, 4)])
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert out.sharding == NamedSharding(mesh, P("x", None))


def test_axis_index_and_a_sharded_matmul(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    where = jax.shard_map(lambda b: b * 0 + jax.lax.axis_index("x") * 10 + jax.lax.axis_index("y"),
                          mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))(np.zeros((2, 4), np.int32))  # fmt: skip
    np.testing.assert_array_equal(np.asarray(where), [[0, 1, 2, 3], [10, 11, 12, 13]])
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    matmul = jax.shard_map(lambda a, b: jax.lax.psum(a @ b, "y"), mesh=mesh,
                           in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))  # fmt: skip
    np.testing.assert_allclose(np.asarray(matmul(X, w)), X @ w, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(matmul)(X, w)), X @ w, rtol=1e-6)


def test_collectives_across_blocks(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (4,), ("i",))
    x = np.arange(16, dtype=np.float32).reshape(4, 4)

    def run(body: Any, arg: Any = x, out: Any = None) -> np.ndarray[Any, Any]:
        out_specs = P("i") if out is None else out
        return np.asarray(jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=out_specs)(arg))

    shifted = run(lambda b: jax.lax.ppermute(b, "i", [(0, 1), (1, 2), (2, 0)]))
    np.testing.assert_array_equal(shifted, np.stack([x[2], x[0], x[1], np.zeros(4)]))
    np.testing.assert_array_equal(run(lambda b: jax.lax.pmax(b, "i"), out=P()), x.max(0, keepdims=True))
    np.testing.assert_array_equal(run(lambda b: jax.lax.pmin(b, "i"), out=P()), x.min(0, keepdims=True))
    np.testing.assert_allclose(run(lambda b: jax.lax.pmean(b, "i"), out=P()), x.mean(0, keepdims=True))
    # psum_scatter: member k keeps chunk k of the sum.
    np.testing.assert_array_equal(run(lambda b: jax.lax.psum_scatter(b, "i", scatter_dimension=1, tiled=True)),
                                  x.sum(0).reshape(4, 1))  # fmt: skip
    y = np.arange(64, dtype=np.float32).reshape(16, 4)
    tiled = run(lambda b: jax.lax.all_to_all(b, "i", 0, 1, tiled=True), y)
    mine = [np.split(b, 4, axis=0) for b in np.split(y, 4)]  # mine[j][i]: member j's chunk i
    np.testing.assert_array_equal(tiled, np.concatenate([np.concatenate([mine[j][i] for j in range(4)], 1) for i in range(4)]))
    untiled = run(lambda b: jax.lax.all_to_all(b.reshape(4, 1, 4), "i", 0, 2), y)
    assert untiled.shape == (4, 4, 4)
    np.testing.assert_array_equal(untiled[1], np.stack([y[4 * j + 1] for j in range(4)], -1))
    with pytest.raises(ValueError, match="sources and destinations must be unique"):
        run(lambda b: jax.lax.ppermute(b, "i", [(0, 1), (1, 1)]))
    with pytest.raises(ValueError, match=r"to equal x.shape\[split_axis\], but they are 4 and 3"):
        run(lambda b: jax.lax.all_to_all(b, "i", 0, 1), np.zeros((12, 4), np.float32))


def test_transformations_of_shard_map(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    f = jax.shard_map(lambda b: jax.lax.psum(jnp.sin(b), "y"), mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", None))

    def reference(x: Any) -> Any:  # the same function without shard_map
        return jnp.sin(x).sum(1, keepdims=True)

    np.testing.assert_allclose(np.asarray(jax.jit(f)(X)), np.asarray(reference(X)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda x: f(x).sum())(X)), np.cos(X), rtol=1e-5)
    tangent = np.ones_like(X)
    np.testing.assert_allclose(np.asarray(jax.jvp(f, (X,), (tangent,))[1]),
                               np.asarray(jax.jvp(reference, (X,), (tangent,))[1]), rtol=1e-5)  # fmt: skip
    stacked = np.stack([X, 2 * X])
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(stacked)), np.stack([reference(X), reference(2 * X)]), rtol=1e-6)
    # ppermute's derivative sends the cotangent back the other way.
    ring = jax.shard_map(lambda b: jax.lax.ppermute(b, "y", [(k, (k + 1) % 4) for k in range(4)]),
                         mesh=mesh, in_specs=P(None, "y"), out_specs=P(None, "y"))  # fmt: skip
    weights = np.arange(32, dtype=np.float32).reshape(8, 4)
    g = jax.grad(lambda x: (ring(x) * weights).sum())(X)
    np.testing.assert_array_equal(np.asarray(g), np.roll(weights, -1, axis=1))


def test_decorator_set_mesh_axis_names_and_check_vma(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    with jax.set_mesh(mesh):

        @jax.shard_map(in_specs=P("x"), out_specs=P("x"))
        def double(b: Any) -> Any:
            return b * 2

        assert double(X).sharding == NamedSharding(mesh, P("x"))
        np.testing.assert_array_equal(np.asarray(double(X)), X * 2)
    partial = jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"), out_specs=P(), axis_names={"x"})
    np.testing.assert_array_equal(np.asarray(partial(X)), X[:4] + X[4:])
    # check_vma=False: an output claimed replicated over y is read from y's first member.
    loose = jax.shard_map(lambda b: b, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"), check_vma=False)
    np.testing.assert_array_equal(np.asarray(loose(X)), X[:, :1])
    from minijax.experimental.shard_map import shard_map as old_shard_map

    np.testing.assert_array_equal(np.asarray(old_shard_map(lambda b: b + 1, mesh, P("x"), P("x"))(X)), X + 1)


def test_explicit_axes_check_the_arguments_layout(devices: list[Device]) -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), devices=devices)
    placed = jax.device_put(X, NamedSharding(mesh, P("x", "y")))
    out = jax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))(placed)
    assert str(jax.typeof(out)) == "float32[8@x,4@y]"
    inferred = jax.shard_map(lambda b: b + 1, mesh=mesh, out_specs=P("x", "y"))(placed)  # in_specs from the layout
    np.testing.assert_array_equal(np.asarray(inferred), X + 1)
    with pytest.raises(ValueError, match=r"P\('x', 'y'\) does not match the specs of the input: P\(None, None\)"):
        jax.shard_map(lambda b: b, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))(X)


def test_shard_map_errors(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)

    def sm(in_specs: Any, out_specs: Any, body: Any = lambda b: b) -> Any:
        return jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs)

    with pytest.raises(ValueError, match=r"implies that the corresponding output value is replicated across mesh axis 'y'"):
        sm(P("x", "y"), P("x"))(X)
    with pytest.raises(ValueError, match=r"(?s)must refer to an axis marked as manual .*in_specs refers to 'z'"):
        sm(P("x", "z"), P("x"))(X)
    with pytest.raises(ValueError, match=r"(?s)in_specs is P\(.x., .y., None\) which has length 3.*parameter 'b', has shape float32\[8,4\], which has rank 2"):
        sm(P("x", "y", None), P("x"))(X)
    with pytest.raises(ValueError, match=r"out_specs is P\('x', 'y', None\) which has length 3, but <lambda>\(\*args\) has shape float32\[4,1\]"):
        sm(P("x", "y"), P("x", "y", None))(X)
    with pytest.raises(ValueError, match=r"maps array axis 0 \(of size 6\) to mesh axis 'y' \(of size 4\), but 4 does not evenly divide 6"):
        sm(P("y", "x"), P("y", "x"))(np.zeros((6, 4), np.float32))
    with pytest.raises(ValueError, match="pytree structure error"):
        sm((P("x"), P("x")), P("x"))(X)
    with pytest.raises(ValueError, match="The context mesh cannot be empty"):
        jax.shard_map(lambda b: b, in_specs=P("x"), out_specs=P("x"))(X)


# --- differential: random meshes and specs ------------------------------------------------


@st.composite
def mesh_and_specs(draw: Any) -> tuple[tuple[int, ...], P]:
    shape = draw(st.sampled_from([(1,), (2,), (4,), (8,), (2, 2), (2, 4), (4, 2), (1, 8)]))
    names = ("a", "b")[: len(shape)]
    # Each array dimension gets some of the mesh axes, each axis used at most once.
    placements = draw(st.lists(st.sampled_from([0, 1, None]), min_size=len(names), max_size=len(names)))
    dims: list[list[str]] = [[], []]
    for name, dim in zip(names, placements):
        if dim is not None:
            dims[dim].append(name)
    spec = P(*(tuple(d) if len(d) > 1 else (d[0] if d else None) for d in dims))
    return shape, spec


@settings(max_examples=15)
@given(case=mesh_and_specs(), seed=st.integers(0, 2**16))
def test_blocks_match_shards_and_psum_matches_numpy(backend_name: str, case: Any, seed: int) -> None:
    shape, spec = case
    devices = eight(backend_name)
    mesh = auto_mesh(devices[: int(np.prod(shape))], shape, ("a", "b")[: len(shape)])
    x = np.random.default_rng(seed).integers(-9, 9, (8, 8)).astype(np.float32)
    sharding = NamedSharding(mesh, spec)
    placed = jax.device_put(x, sharding)
    # The body's blocks, in device order, are the shards device_put derives.
    seen = jax.shard_map(lambda b: b[None], mesh=mesh, in_specs=spec, out_specs=P(mesh.axis_names))(placed)
    for k, shard in enumerate(placed.addressable_shards):
        np.testing.assert_array_equal(np.asarray(seen)[k], np.asarray(shard.data))
        np.testing.assert_array_equal(np.asarray(shard.data), x[shard.index])
    # psum over every axis of the identity-sharded blocks: the sum of the distinct blocks
    # times the number of devices holding each.
    total = jax.shard_map(lambda b: jax.lax.psum(b, mesh.axis_names), mesh=mesh, in_specs=spec, out_specs=P())(x)
    distinct = {tuple((s.start, s.stop) for s in sh.index): x[sh.index] for sh in placed.addressable_shards}
    replicas = len(placed.addressable_shards) // len(distinct)
    np.testing.assert_array_equal(np.asarray(total), replicas * sum(distinct.values()))
    # Round trip: out_specs = in_specs gives the array back, laid out as asked.
    back = jax.shard_map(lambda b: b, mesh=mesh, in_specs=spec, out_specs=spec)(x)
    np.testing.assert_array_equal(np.asarray(back), x)
    assert back.sharding == sharding


def test_mesh_devices_are_used_in_order(devices: list[Device]) -> None:
    mesh = Mesh(np.array(devices[::-1]).reshape(2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    placed = jax.device_put(X, NamedSharding(mesh, P("x", "y")))
    assert [s.device for s in placed.addressable_shards] == devices[::-1]
    for (i, j), shard in zip(itertools.product(range(2), range(4)), placed.addressable_shards):
        np.testing.assert_array_equal(np.asarray(shard.data), blocks(X, 2, 4)[i][j])


def test_vmap_spmd_axis_name_inside_shard_map(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    f = jax.shard_map(lambda b: jax.vmap(lambda r: jax.lax.psum(r, "y"), spmd_axis_name="x")(b),
                      mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))  # fmt: skip
    np.testing.assert_array_equal(np.asarray(f(X)), X.sum(1, keepdims=True))


def test_in_specs_are_inferred_from_the_arguments_types_under_jit(devices: list[Device]) -> None:
    # Under jit a traced argument's layout over Explicit axes is in its type (as in JAX).
    mesh = jax.make_mesh((2, 4), ("x", "y"), devices=devices)
    placed = jax.device_put(X, NamedSharding(mesh, P("x", "y")))
    whole = jax.device_put(X, NamedSharding(mesh, P()))
    total = jax.shard_map(lambda b, w: jax.lax.psum(b.sum(), ("x", "y")) + w.sum(), mesh=mesh, out_specs=P())
    assert float(total(placed, whole)) == X.sum() * 2
    assert float(jax.jit(total)(placed, whole)) == X.sum() * 2
    grads = jax.jit(jax.grad(total, argnums=(0, 1)))(placed, whole)
    np.testing.assert_array_equal(np.asarray(grads[0]), np.ones_like(X))
    np.testing.assert_array_equal(np.asarray(grads[1]), np.ones_like(X))  # (an invariant value, read once)
    # A result's type names the Explicit axes its out_specs entry splits it over, as JAX's does.
    split = jax.shard_map(lambda b, w: b * w, mesh=mesh, in_specs=(P("x", "y"), P()), out_specs=P("x", "y"))
    (eqn,) = jax.make_jaxpr(split)(placed, X[:4, :1]).eqns
    assert str(eqn.outvars[0].aval.str_short()) == "f32[8@x,4@y]"
    # Over Auto axes the types say nothing: in_specs must be given (JAX's TypeError).
    auto = auto_mesh(devices)
    untyped = jax.shard_map(lambda b: jax.lax.psum(b.sum(), ("x", "y")), mesh=auto, out_specs=P())
    with pytest.raises(TypeError, match="in_specs argument must be a pytree of `jax.sharding.PartitionSpec`"):
        jax.jit(untyped)(jax.device_put(X, NamedSharding(auto, P("x", "y"))))


def test_pcast_to_varying_keeps_the_value_and_makes_it_vary(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (2,), ("i",))
    x = np.arange(6, dtype=np.float32)
    same = jax.shard_map(lambda v: jax.lax.pcast(v, "i", to="varying"), mesh=mesh, in_specs=P(), out_specs=P("i"))(x)
    np.testing.assert_array_equal(np.asarray(same), np.concatenate([x, x]))
    with pytest.raises(ValueError, match="replicated across mesh axis 'i'"):
        jax.shard_map(lambda v: jax.lax.pcast(v, "i", to="varying"), mesh=mesh, in_specs=P(), out_specs=P())(x)
    with pytest.raises(ValueError, match="Allowed `to` values"):
        jax.shard_map(lambda v: jax.lax.pcast(v, "i", to="sideways"), mesh=mesh, in_specs=P(), out_specs=P())(x)
