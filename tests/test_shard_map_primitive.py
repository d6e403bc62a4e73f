"""shard_map as one primitive: ``make_jaxpr`` holds one ``shard_map`` equation whose body
is typed on a device's blocks; its rules (abstract eval, jvp, transpose, batching, the
eager rule and the expansion before compilation) give the values NumPy computes here,
on both backends, over meshes of 1, 2, 4 and 8 devices."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_sharding import devices as devices  # noqa: F401  (the fixture)

import minijax as jax
import minijax.numpy as jnp
from minijax.backend import Device
from minijax.shard_map import shard_map_p
from minijax.sharding import AxisType, PartitionSpec as P

SIZES = [1, 2, 4, 8]


def mesh_of(devices: list[Device], n: int) -> Any:
    return jax.make_mesh((n,), ("x",), axis_types=(AxisType.Auto,), devices=devices[:n])


def body(a: Any, b: Any) -> Any:
    # a: this device's rows; b: the same on every device. psum over the mesh.
    return jax.lax.psum(jnp.sin(a) * b, "x"), a * jax.lax.axis_index("x").astype(a.dtype)


def expected(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], n: int) -> tuple[Any, Any]:
    rows = np.split(a, n)
    total = sum(np.sin(r) * b for r in rows)
    return total, np.concatenate([r * i for i, r in enumerate(rows)])


A = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(16, 2)
B = np.array([0.5, -2.0], np.float32)


def smap(n: int, devices: list[Device], check_vma: bool = True) -> Any:
    return jax.shard_map(body, mesh=mesh_of(devices, n), in_specs=(P("x"), P()), out_specs=(P(), P("x")), check_vma=check_vma)


@pytest.mark.parametrize("n", SIZES)
def test_one_equation_with_the_block_typed_body(devices: list[Device], n: int) -> None:
    closed = jax.make_jaxpr(smap(n, devices))(A, B)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is shard_map_p
    assert [a.shape for a in eqn.params["jaxpr"].in_avals] == [(16 // n, 2), (2,)]
    assert [v.aval.shape for v in eqn.outvars] == [(16 // n, 2), (16, 2)]
    assert eqn.params["in_specs"] == (P("x"), P()) and eqn.params["newly_manual_axes"] == frozenset({"x"})


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("jitted", [False, True])
def test_values(devices: list[Device], n: int, jitted: bool) -> None:
    f = smap(n, devices)
    got = (jax.jit(f) if jitted else f)(A, B)
    for g, e in zip(got, expected(A, B, n)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6)


@pytest.mark.parametrize("n", SIZES)
def test_jvp_and_grad(devices: list[Device], n: int) -> None:
    f = smap(n, devices)
    ta = np.full_like(A, 0.25)
    (p0, p1), (t0, t1) = jax.jvp(f, (A, B), (ta, np.zeros_like(B)))
    rows, trows = np.split(A, n), np.split(ta, n)
    np.testing.assert_allclose(np.asarray(t0), sum(np.cos(r) * t * B for r, t in zip(rows, trows)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(t1), np.concatenate([t * i for i, t in enumerate(trows)]), rtol=1e-6)

    def loss(a: Any, b: Any) -> Any:
        s, m = f(a, b)
        return s.sum() + (m * m).sum()

    ga, gb = jax.grad(loss, argnums=(0, 1))(A, B)
    index = np.repeat(np.arange(n, dtype=np.float32), 16 // n)[:, None]
    # d/da: every device's rows feed the replicated psum once (the sum's cotangent is 1).
    np.testing.assert_allclose(np.asarray(ga), np.cos(A) * B + 2 * A * index**2, rtol=1e-5)
    # d/db: b is read on every device: its cotangent is the sum over devices.
    np.testing.assert_allclose(np.asarray(gb), np.sin(A).sum(0), rtol=1e-5)


@pytest.mark.parametrize("n", [2, 4])
def test_transpose_of_the_linear_part(devices: list[Device], n: int) -> None:
    mesh = mesh_of(devices, n)
    f = jax.shard_map(lambda a: jax.lax.psum(a * 3.0, "x"), mesh=mesh, in_specs=P("x"), out_specs=P())
    (ct,) = jax.linear_transpose(f, A)(np.ones((16 // n, 2), np.float32))
    np.testing.assert_allclose(np.asarray(ct), np.full_like(A, 3.0))


@pytest.mark.parametrize("n", SIZES)
def test_vmap(devices: list[Device], n: int) -> None:
    f = smap(n, devices)
    stack = np.stack([A, A * 2, -A])
    s, m = jax.vmap(f, in_axes=(0, None))(stack, B)
    for k in range(3):
        e0, e1 = expected(stack[k], B, n)
        np.testing.assert_allclose(np.asarray(s[k]), e0, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(m[k]), e1, rtol=1e-6)
    (eqn,) = [e for e in jax.make_jaxpr(jax.vmap(f, in_axes=(0, None)))(stack, B).jaxpr.eqns if e.primitive is shard_map_p]
    assert eqn.params["in_specs"] == (P(None, "x"), P())


def test_eager_bind_of_the_equation(devices: list[Device]) -> None:
    # The equation a make_jaxpr printed runs again when evaluated on arrays.
    closed = jax.make_jaxpr(smap(4, devices))(A, B)
    (eqn,) = closed.jaxpr.eqns
    outs = shard_map_p.bind(jax.device_put(A, devices[0]), jax.device_put(B, devices[0]), **eqn.params)
    for g, e in zip(outs, expected(A, B, 4)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6)


def test_abstract_eval_checks_the_operands(devices: list[Device]) -> None:
    closed = jax.make_jaxpr(smap(4, devices))(A, B)
    params = closed.jaxpr.eqns[0].params
    with pytest.raises(ValueError, match=r"names mesh axes \['z'\]"):
        jax.make_jaxpr(lambda a, b: shard_map_p.bind(a, b, **{**params, "in_specs": (P("z"), P())}))(A, B)
    with pytest.raises(ValueError, match="does not divide"):
        jax.make_jaxpr(lambda a, b: shard_map_p.bind(a, b, **params))(A[:6], B)
    with pytest.raises(TypeError, match="does not give the body's input type"):
        jax.make_jaxpr(lambda a, b: shard_map_p.bind(a, b, **params))(A[:8], B)


@pytest.mark.parametrize("n", SIZES)
def test_ppermute_ring_and_its_transpose(devices: list[Device], n: int) -> None:
    mesh = mesh_of(devices, n)
    ring = [(i, (i + 1) % n) for i in range(n)]
    f = jax.shard_map(lambda a: jax.lax.ppermute(a, "x", ring), mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    rows = np.split(A, n)
    np.testing.assert_array_equal(np.asarray(f(A)), np.concatenate(rows[-1:] + rows[:-1]))
    (eqn,) = [e for e in jax.make_jaxpr(f)(A).jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns]
    assert eqn.primitive.name == "ppermute" and eqn.params == {"axis_name": ("x",), "perm": tuple(ring)}
    # grad of <w, f(a)>: each block's cotangent comes back from where it was sent.
    w = np.arange(A.size, dtype=np.float32).reshape(A.shape)
    g = jax.grad(lambda a: (f(a) * w).sum())(A)
    wrows = np.split(w, n)
    np.testing.assert_array_equal(np.asarray(g), np.concatenate(wrows[1:] + wrows[:1]))


def test_ppermute_sends_zeros_where_no_pair_arrives() -> None:
    xs = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    f = jax.vmap(lambda x: jax.lax.ppermute(x, "i", [(3, 0), (0, 2)]), axis_name="i")
    np.testing.assert_array_equal(np.asarray(f(xs)), [[6, 7], [0, 0], [0, 1], [0, 0]])
    (ct,) = jax.linear_transpose(f, xs)(np.ones_like(xs))  # the inverse permutation
    np.testing.assert_array_equal(np.asarray(ct), [[1, 1], [0, 0], [0, 0], [1, 1]])
    with pytest.raises(ValueError, match="sources and destinations must be unique"):
        jax.vmap(lambda x: jax.lax.ppermute(x, "i", [(0, 1), (2, 1)]), axis_name="i")(xs)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("tiled", [True, False])
def test_all_to_all_transposes_the_blocks(devices: list[Device], n: int, tiled: bool) -> None:
    # Rows split over the devices in, columns split over them out: a distributed transpose
    # of the block grid (untiled: the chunks stacked along a new axis instead).
    mesh = mesh_of(devices, n)
    x = np.arange(n * 8 * n * 2, dtype=np.float32).reshape(8 * n, 2 * n)

    def exchange(b: Any) -> Any:
        if tiled:
            return jax.lax.all_to_all(b, "x", 1, 0, tiled=True)
        return jax.lax.all_to_all(b.reshape(8, n, 2), "x", 1, 0)

    f = jax.shard_map(exchange, mesh=mesh, in_specs=P("x"), out_specs=P(None, "x") if tiled else P(None, None, "x"))
    got = np.asarray(jax.jit(f)(x)) if n % 2 else np.asarray(f(x))
    rows = np.split(x, n)  # device j's block
    if tiled:
        want = np.concatenate([np.concatenate([np.split(rows[j], n, axis=1)[i] for j in range(n)], 0) for i in range(n)], 1)
    else:
        want = np.concatenate([np.stack([rows[j].reshape(8, n, 2)[:, i] for j in range(n)], 0) for i in range(n)], 2)
    np.testing.assert_array_equal(got, want)
    # linear: its transpose sends every chunk back (split and concat swapped)
    w = np.arange(want.size, dtype=np.float32).reshape(want.shape)
    g = jax.grad(lambda a: (f(a) * w).sum())(x)
    (lt,) = jax.linear_transpose(f, x)(w)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(lt))
    np.testing.assert_allclose(float((np.asarray(g) * x).sum()), float((want * w).sum()), rtol=1e-6)


def test_all_to_all_under_vmap_of_shard_map(devices: list[Device]) -> None:
    mesh = mesh_of(devices, 2)
    f = jax.shard_map(lambda b: jax.lax.all_to_all(b, "x", 1, 0, tiled=True), mesh=mesh, in_specs=P("x"), out_specs=P(None, "x"))
    stack = np.arange(3 * 4 * 4, dtype=np.float32).reshape(3, 4, 4)
    got = np.asarray(jax.vmap(f)(stack))
    for k in range(3):
        np.testing.assert_array_equal(got[k], np.asarray(f(stack[k])))


def test_all_to_all_errors() -> None:
    xs = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match=r"split_axis \(3\) has to be divisible by the size of the named axis i \(2\)"):
        jax.vmap(lambda x: jax.lax.all_to_all(x, "i", 0, 1, tiled=True), axis_name="i")(xs)
    with pytest.raises(ValueError, match="to equal x.shape\\[split_axis\\], but they are 2 and 3"):
        jax.vmap(lambda x: jax.lax.all_to_all(x, "i", 0, 1), axis_name="i")(xs)
