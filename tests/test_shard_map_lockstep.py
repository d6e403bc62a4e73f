"""The NumPy backend runs a shard_map's body once per device, in lockstep, with the
collectives across the device list (backends/minijax_numpy/shard_map.py): the
executable spec of shard_map. Each program here runs on both backends (the XLA
one as a vectorized SPMD program) and must agree."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_sharding import eight

import minijax as jax
import minijax.numpy as jnp
from minijax.sharding import AxisType, PartitionSpec as P

pytestmark = pytest.mark.single_backend  # each test runs both backends itself

lax = jax.lax
X = np.linspace(-2.0, 2.0, 64, dtype=np.float32).reshape(8, 8)


def both(program: Any, *args: Any, shape: tuple[int, ...] = (2, 4)) -> list[np.ndarray[Any, Any]]:
    """The program's results on the NumPy backend, jitted so that the backends run the staged
    ``shard_map`` equation (checked equal to XLA's, and to an eager call's on each backend, which
    runs the body one primitive at a time: minijax/shard_map_eager.py)."""
    outs = {}
    for kind in ("numpy", "xla"):
        mesh = jax.make_mesh(shape, ("x", "y")[: len(shape)], axis_types=(AxisType.Auto,) * len(shape), devices=eight(kind))
        f = program(mesh)
        outs[kind] = [np.asarray(o) for o in jax.tree_util.tree_leaves(jax.jit(f)(*args))]
        outs[kind + " eager"] = [np.asarray(o) for o in jax.tree_util.tree_leaves(f(*args))]
    for other in ("xla", "numpy eager", "xla eager"):
        for a, b in zip(outs["numpy"], outs[other], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    return outs["numpy"]


def smap(body: Any, in_specs: Any, out_specs: Any, **kw: Any) -> Any:
    return lambda mesh: jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


@pytest.fixture
def lockstep_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a test whose shard_map falls back to the vectorized program on NumPy."""
    import minijax_numpy.shard_map as numpy_shard_map

    def refuse(params: Any) -> Any:
        raise AssertionError("the NumPy backend fell back to the vectorized program")

    monkeypatch.setattr(numpy_shard_map, "per_device_program", refuse)


def test_all_reduces_over_one_and_both_axes(lockstep_only: None) -> None:
    def body(b: Any) -> Any:
        return lax.psum(b, "y"), lax.psum(b, ("x", "y")), lax.pmax(b, "x"), lax.pmin(b.sum(0), "y"), lax.pmean(b, "x")

    row_sum, total, col_max, mins, mean = both(smap(body, P("x", "y"), (P("x"), P(), P(None, "y"), P("x"), P(None, "y"))), X)
    blocks = X.reshape(2, 4, 4, 2)  # [x, row, y, col]
    np.testing.assert_allclose(row_sum, blocks.sum(2).reshape(8, 2), rtol=1e-6)
    np.testing.assert_allclose(total, blocks.sum((0, 2)), rtol=1e-6)
    np.testing.assert_allclose(col_max, X.reshape(2, 4, 8).max(0), rtol=1e-6)
    np.testing.assert_allclose(mean, X.reshape(2, 4, 8).mean(0), rtol=1e-6)
    np.testing.assert_allclose(mins, blocks.sum(1).min(1).reshape(4), rtol=1e-6)  # per x: min over y of column sums


def test_gathers_scatters_and_axis_indices(lockstep_only: None) -> None:
    def body(b: Any) -> Any:
        index = lax.axis_index(("x", "y")) * jnp.ones((1,), jnp.int32)
        return (lax.all_gather(b, "y", axis=1, tiled=True), lax.all_gather(b, "y", axis=1), lax.psum_scatter(b, "y", tiled=True),
                index)  # fmt: skip

    # (An all_gather's result varies along its axis, as in JAX: check_vma=False lets its spec leave
    # the axis out, taking the first device's copy.)
    tiled, stacked, scattered, index = both(smap(body, P("x", "y"), (P("x"), P("x"), P("x", "y"), P(("x", "y"))),
                                                 check_vma=False), X)  # fmt: skip
    np.testing.assert_array_equal(tiled, X)
    np.testing.assert_array_equal(stacked, X.reshape(8, 4, 2))
    np.testing.assert_array_equal(index, np.arange(8))
    # Device (x, y) keeps row y of its x-group's sum over y.
    np.testing.assert_allclose(scattered, X.reshape(2, 4, 4, 2).sum(2).reshape(2, 8), rtol=1e-6)


def test_ppermute_and_all_to_all(lockstep_only: None) -> None:
    ring = [(i, (i + 1) % 4) for i in range(4)]

    def body(b: Any) -> Any:
        return lax.ppermute(b, "y", ring), lax.ppermute(b, "y", [(0, 3)]), lax.all_to_all(b, "y", 0, 1, tiled=True)

    shifted, one_pair, exchanged = both(smap(body, P("x", "y"), (P("x", "y"), P("x", "y"), P("x", "y"))), X)
    np.testing.assert_array_equal(shifted, np.roll(X.reshape(8, 4, 2), 1, axis=1).reshape(8, 8))
    assert (one_pair.reshape(8, 4, 2)[:, :3] == 0).all()
    np.testing.assert_array_equal(one_pair.reshape(8, 4, 2)[:, 3], X.reshape(8, 4, 2)[:, 0])
    # Device (x, y) receives row-chunk y of each member's block, side by side in member order.
    blocks = X.reshape(2, 4, 4, 2)  # [x, row, y, col]
    want = np.concatenate([np.concatenate([blocks[x, y : y + 1, j] for j in range(4)], axis=1) for x in range(2) for y in range(4)])
    np.testing.assert_array_equal(exchanged, want.reshape(2, 32))


def test_collectives_inside_a_jitted_function_of_the_body_meet_in_lockstep(lockstep_only: None) -> None:
    inner = jax.jit(lambda b: lax.psum(jnp.sin(b), "y") * 2)
    (out,) = both(smap(lambda b: (inner(b),), P("x", "y"), (P("x"),)), X)
    np.testing.assert_allclose(out, 2 * np.sin(X).reshape(8, 4, 2).sum(1), rtol=1e-5)


def test_a_partly_manual_body(lockstep_only: None) -> None:
    body = lambda b: lax.psum(b * lax.axis_index("y").astype(b.dtype), "y")  # noqa: E731
    (out,) = both(smap(body, P(None, "y"), P(), axis_names={"y"}), X)
    np.testing.assert_allclose(out, sum(X[:, 2 * i : 2 * i + 2] * i for i in range(4)), rtol=1e-6)


def test_gradients_through_the_lockstep_body(lockstep_only: None) -> None:
    def loss(mesh: Any) -> Any:
        f = jax.shard_map(lambda b: lax.psum((b**2).sum(), ("x", "y")), mesh=mesh, in_specs=P("x", "y"), out_specs=P())
        return jax.grad(lambda x: f(x))

    (g,) = both(loss, X)
    np.testing.assert_allclose(g, 2 * X, rtol=1e-6)


def test_a_collective_inside_a_loop_runs_the_vectorized_program() -> None:
    # Per-device runs of a scan could not meet at its psum one step at a time: that body
    # runs as the vectorized program on the NumPy backend too, with the same values.
    def body(b: Any) -> Any:
        return lax.scan(lambda c, row: (c + lax.psum(row, "y"), None), jnp.zeros(b.shape[1:]), b)[0]

    (out,) = both(smap(body, P("x", "y"), P("x")), X)
    np.testing.assert_allclose(out, X.reshape(2, 4, 4, 2).sum(axis=(1, 2)).reshape(-1), rtol=1e-5)  # [x, row, y, col]
