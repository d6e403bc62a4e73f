"""shard_map on XLA as a manual region (issue 17): a program over the mesh's devices lowers
the equation as JAX does (``@SPMDFullToShardShape``, the body on one device's block,
``@SPMDShardToFullShape``) and its collectives as XLA's cross-device operations. Every
program here also runs on the NumPy backend, the executable spec (each device's body in
lockstep, backends/minijax_numpy/shard_map.py), and the two must agree exactly; and the
compiled program must hold the collective itself (not an equivalent XLA derived).

The xla backend against the NumPy one, on 8 devices each (tests/test_sharding.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_sharding import eight

import minijax as jax
import minijax.numpy as jnp
from minijax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

pytest.importorskip("jaxlib")
pytestmark = pytest.mark.single_backend  # names its two backends itself

MESHES = [((8,), ("x",)), ((2, 4), ("x", "y")), ((4, 2), ("x", "y")), ((2, 2, 2), ("x", "y", "z"))]


def mesh_of(kind: str, shape: tuple[int, ...], names: tuple[str, ...]) -> Mesh:
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape), devices=eight(kind))


def both(build: Callable[[Mesh], Callable[..., Any]], shape: tuple[int, ...], names: tuple[str, ...],
         *args: Any) -> tuple[Any, Any, Mesh]:  # fmt: skip
    """The program ``build(mesh)`` jitted and run on each backend's mesh: (xla's values, numpy's, xla mesh)."""
    outs = []
    for kind in ("xla", "numpy"):
        mesh = mesh_of(kind, shape, names)
        outs.append(jax.tree.map(np.asarray, jax.jit(build(mesh))(*args)))
    return outs[0], outs[1], mesh_of("xla", shape, names)


def compiled_text(build: Callable[[Mesh], Callable[..., Any]], shape: tuple[int, ...], names: tuple[str, ...],
                  *args: Any) -> tuple[str, str]:  # fmt: skip
    """The StableHLO module and XLA's compiled program of ``build(mesh)`` on the xla mesh."""
    lowered = jax.jit(build(mesh_of("xla", shape, names))).lower(*args)
    return lowered.as_text(), lowered.compile().as_text()


def assert_same(xla: Any, ref: Any) -> None:
    for a, b in zip(jax.tree.leaves(xla), jax.tree.leaves(ref)):
        np.testing.assert_array_equal(a, b)


X = np.arange(8 * 16, dtype=np.float32).reshape(8, 16) - 40.0


def smap(body: Callable[..., Any], mesh: Mesh, in_specs: Any, out_specs: Any, **kw: Any) -> Callable[..., Any]:
    return jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


# --- each collective, over every subset and order of the mesh's axes -------------------------


def _axis_sets(names: tuple[str, ...]) -> list[tuple[str, ...]]:
    sets = [(n,) for n in names] + [names, tuple(reversed(names))]
    return list(dict.fromkeys(sets))


@pytest.mark.parametrize("shape,names", MESHES)
@pytest.mark.parametrize("name", ["psum", "pmax", "pmin"])
def test_all_reduce_over_named_and_positional_axes(shape: Any, names: Any, name: str) -> None:
    reduce = getattr(jax.lax, name)
    spec = P(names[0], names[1:] or None)
    for axes in _axis_sets(names):
        def build(mesh: Mesh, axes: Any = axes) -> Callable[..., Any]:
            def body(b: Any) -> Any:
                return reduce(b, axes), reduce(b, (0, *axes))  # (a positional axis too: a local reduce first)

            return smap(body, mesh, spec, (P(), P()), check_vma=False)

        xla, ref, _ = both(build, shape, names, X)
        assert_same(xla, ref)
    stablehlo, hlo = compiled_text(build, shape, names, X)
    assert "SPMDFullToShardShape" in stablehlo and '"stablehlo.all_reduce"' in stablehlo
    assert " all-reduce(" in hlo or " all-reduce-start(" in hlo


@pytest.mark.parametrize("shape,names", MESHES)
@pytest.mark.parametrize("tiled", [False, True])
def test_all_gather_and_psum_scatter(shape: Any, names: Any, tiled: bool) -> None:
    spec = P(names, None)  # rows split over every axis: 8 blocks of 1x16
    for axes in _axis_sets(names):
        size = int(np.prod([dict(zip(names, shape))[a] for a in axes]))

        def build(mesh: Mesh, axes: Any = axes, size: int = size) -> Callable[..., Any]:
            def body(b: Any) -> Any:
                g0 = jax.lax.all_gather(b, axes, axis=0, tiled=tiled)
                g1 = jax.lax.all_gather(b, axes, axis=1, tiled=tiled)
                wide = jnp.tile(b, (1, size)) if tiled else jnp.broadcast_to(b[0], (size, 16))
                s = jax.lax.psum_scatter(wide * (1 + jax.lax.axis_index(axes)), axes,
                                         scatter_dimension=1 if tiled else 0, tiled=tiled)  # fmt: skip
                return g0, g1, s

            return smap(body, mesh, spec, (P(), P(), P(names)), check_vma=False)

        xla, ref, _ = both(build, shape, names, X)
        assert_same(xla, ref)
    _, hlo = compiled_text(build, shape, names, X)
    assert " all-gather(" in hlo or " all-gather-start(" in hlo
    assert " reduce-scatter(" in hlo


@pytest.mark.parametrize("shape,names", MESHES)
def test_ppermute_all_to_all_and_axis_index(shape: Any, names: Any) -> None:
    sizes = dict(zip(names, shape))
    spec = P(names[0], names[1:] or None)
    for axes in _axis_sets(names):
        n = int(np.prod([sizes[a] for a in axes]))
        ring = [(i, (i + 1) % n) for i in range(n)]
        partial = [(0, n - 1)] if n > 1 else [(0, 0)]  # (the others receive zeros)

        def build(mesh: Mesh, axes: Any = axes, ring: Any = ring, partial: Any = partial, n: int = n) -> Callable[..., Any]:
            def body(b: Any) -> Any:
                rows = jnp.tile(b, (n, 1))  # a split axis the group's size divides
                return (jax.lax.ppermute(b, axes, ring), jax.lax.ppermute(b, axes, partial),
                        jax.lax.all_to_all(rows, axes, 0, 1, tiled=True),
                        jax.lax.axis_index(axes) + jnp.zeros((1, 1), jnp.int32))  # fmt: skip

            return smap(body, mesh, spec, (spec, spec, spec, P(names)), check_vma=False)

        xla, ref, _ = both(build, shape, names, X)
        assert_same(xla, ref)
        # axis_index counts the devices of a group in row-major order along the axes as given
        expected = np.zeros(shape, np.int32)
        for coords in np.ndindex(*shape):
            expected[coords] = np.ravel_multi_index([coords[names.index(a)] for a in axes], [sizes[a] for a in axes])
        np.testing.assert_array_equal(xla[3].ravel(), expected.ravel())
    _, hlo = compiled_text(build, shape, names, X)
    assert " collective-permute(" in hlo or " collective-permute-start(" in hlo
    assert " all-to-all(" in hlo


# --- where the body's collectives sit ---------------------------------------------------------


def test_collectives_inside_scan_while_and_cond() -> None:
    def build(mesh: Mesh) -> Callable[..., Any]:
        def body(b: Any) -> Any:
            def step(c: Any, _: Any) -> Any:
                c = jax.lax.ppermute(c, "y", [(i, (i + 1) % 4) for i in range(4)]) + jax.lax.psum(c, "x")
                return c * 0.5, jax.lax.pmax(c.sum(), ("x", "y"))

            c, ys = jax.lax.scan(step, b, None, length=3)
            w = jax.lax.while_loop(lambda v: jax.lax.psum(v[0, 0], "y") < 1e4, lambda v: v * 2 + 1, jnp.abs(b))
            k = jax.lax.cond(jax.lax.axis_index("x") == 0, lambda v: jax.lax.psum(v, "y"), lambda v: -v, b)
            return c, ys, w, k

        return smap(body, mesh, P("x", "y"), (P("x", "y"), P(), P("x", "y"), P("x", "y")), check_vma=False)

    xla, ref, _ = both(build, (2, 4), ("x", "y"), X)
    assert_same(xla, ref)
    stablehlo, _ = compiled_text(build, (2, 4), ("x", "y"), X)
    assert "SPMDFullToShardShape" in stablehlo and "stablehlo.while" in stablehlo


def test_a_training_step_with_grad_over_the_mesh() -> None:
    w0 = np.linspace(-1, 1, 16 * 4, dtype=np.float32).reshape(16, 4)

    def build(mesh: Mesh) -> Callable[..., Any]:
        def local_loss(w: Any, x: Any) -> Any:
            return jax.lax.pmean(jnp.sum(jnp.tanh(x @ w) ** 2), "x")

        loss = smap(local_loss, mesh, (P(), P("x")), P())

        def step(w: Any, x: Any) -> Any:
            value, g = jax.value_and_grad(loss)(w, x)
            return w - 0.1 * g, value

        return step

    xla, ref, _ = both(build, (8,), ("x",), w0, X)
    np.testing.assert_allclose(xla[0], ref[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xla[1], ref[1], rtol=1e-5)


# --- jit of a shard_map compiles over the shard_map's mesh --------------------------------------


def test_jit_holding_a_shard_map_runs_over_its_mesh() -> None:
    def build(mesh: Mesh) -> Callable[..., Any]:
        inner = smap(lambda b: jax.lax.psum(b, "y") * 2, mesh, P("x", "y"), P("x"))
        return lambda a: inner(a + 1) - 1

    for kind in ("xla", "numpy"):
        mesh = mesh_of(kind, (2, 4), ("x", "y"))
        out = jax.jit(build(mesh))(jnp.asarray(X))  # an argument on one device
        assert out.sharding.mesh == mesh and out.sharding.spec[0] == "x"
        assert [s.device for s in out.addressable_shards] == list(mesh.devices.flat)
    stablehlo, _ = compiled_text(build, (2, 4), ("x", "y"), X)
    assert "mhlo.num_partitions = 8" in stablehlo and "@SPMDShardToFullShape" in stablehlo


# --- where it is not a manual region: the per-device program, the same values -------------------


def test_partly_manual_and_other_device_orders_run_the_per_device_program() -> None:
    def partly(mesh: Mesh) -> Callable[..., Any]:
        return smap(lambda b: jax.lax.psum(b, "x") * jax.lax.axis_index("x"), mesh, P("x"), P(), axis_names={"x"}, check_vma=False)

    xla, ref, _ = both(partly, (2, 4), ("x", "y"), X)
    assert_same(xla, ref)
    stablehlo, _ = compiled_text(partly, (2, 4), ("x", "y"), X)
    assert "SPMDFullToShardShape" not in stablehlo

    # a shard_map over the mesh's devices in another order than the program's
    devices = eight("xla")
    program_mesh = mesh_of("xla", (8,), ("i",))
    reordered = Mesh(np.array(devices[::-1]), ("x",), axis_types=(AxisType.Auto,))
    inner = smap(lambda b: jax.lax.psum(b, "x") + jax.lax.axis_index("x"), reordered, P("x"), P("x"), check_vma=False)
    f = jax.jit(lambda a: inner(a), in_shardings=NamedSharding(program_mesh, P("i")))
    with pytest.raises(ValueError, match="incompatible devices"):
        f(X)
    got = np.asarray(jax.jit(inner)(X))
    np.testing.assert_array_equal(got, np.repeat(X.reshape(8, 1, 16).sum(0, keepdims=True), 8, 0).reshape(8, 16)
                                  + np.arange(8, dtype=np.float32)[:, None])  # fmt: skip


def test_a_body_calling_back_into_python_runs_per_device() -> None:
    seen: list[Any] = []

    def build(mesh: Mesh) -> Callable[..., Any]:
        def body(b: Any) -> Any:
            s = jax.lax.psum(b, "x")
            return jax.pure_callback(lambda v: (seen.append(v.shape), v * 3)[1], jax.ShapeDtypeStruct(s.shape, s.dtype), s)

        return smap(body, mesh, P("x"), P(), check_vma=False)

    xla, ref, _ = both(build, (8,), ("x",), X)
    assert_same(xla, ref)
    np.testing.assert_array_equal(xla, X.sum(0, keepdims=True) * 3)
    assert seen


def test_pmap_is_a_shard_map_over_its_devices() -> None:
    # As in JAX 0.10: the body on each device's slice, its collectives the mesh axis's (on XLA, the
    # cross-device operations of a manual region).
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    outs = []
    for kind in ("xla", "numpy"):
        f = jax.pmap(lambda v: jax.lax.psum(v, "i") * jax.lax.axis_index("i"), axis_name="i", devices=eight(kind)[:4])
        outs.append(np.asarray(f(x)))
        text = str(jax.make_jaxpr(f)(x))
        assert "jit[\n      name=_fun" in text and "shard_map[" in text and "in_specs=(P('i',),)" in text
        assert "d:f32[3] = squeeze[dimensions=(0,)] c" in text
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], x.sum(0) * np.arange(4, dtype=np.float32)[:, None])
    f = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i", devices=eight("xla")[:4])
    hlo = jax.jit(f).lower(x).compile().as_text()
    assert " all-reduce(" in hlo or " all-reduce-start(" in hlo


def test_nested_pmaps_and_transformations_of_pmap() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
    for kind in ("xla", "numpy"):
        devices = eight(kind)
        inner = jax.pmap(lambda v: jax.lax.psum(v, "j") + jax.lax.psum(v, "i"), axis_name="j", devices=devices[:4])
        nested = jax.pmap(inner, axis_name="i", devices=devices[:2])
        np.testing.assert_array_equal(np.asarray(nested(x)), x.sum(1, keepdims=True) + x.sum(0, keepdims=True))
        squares = jax.pmap(lambda a: jax.lax.psum(a**2, "i"), axis_name="i", devices=devices[:4])
        np.testing.assert_array_equal(np.asarray(jax.grad(lambda v, f=squares: f(v).sum())(x[0])), 8 * x[0])
        index = jax.pmap(lambda a: a * jax.lax.axis_index("i"), axis_name="i", devices=devices[:4])
        np.testing.assert_array_equal(np.asarray(jax.vmap(index)(x)), x * np.arange(4, dtype=np.float32)[:, None])
