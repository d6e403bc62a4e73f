"""Real multi-device execution on the xla backend (issue 17): arrays laid out over a mesh of
8 CPU devices hold one buffer per device, and jit over them compiles one SPMD program
(``num_partitions=8``) that runs on all eight.

The xla backend only (the NumPy backend simulates devices: tests/test_sharding.py);
``eight`` builds an 8-device xla backend in this process, as tests/test_sharding.py does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
from minijax.backend import Device
from minijax.sharding import NamedSharding, PartitionSpec as P

pytest.importorskip("jaxlib")
pytestmark = pytest.mark.single_backend  # its own 8-CPU xla backend, named explicitly

_made: list[Any] = []


def eight_cpus() -> Any:
    """An 8-CPU xla backend (not registered: its devices are named explicitly), made once."""
    if not _made:
        from minijax_xla.backend import XlaBackend

        class EightCpus(XlaBackend):
            name = "xla_spmd_eight_cpus"

        _made.append(EightCpus(num_cpu_devices=8))
    return _made[0]


@pytest.fixture
def devices() -> list[Device]:
    return eight_cpus().devices()


X = np.arange(64, dtype=np.float32).reshape(16, 4)


def held_blocks(x: Any) -> list[int]:
    """Where each device's block lives in memory: the same each time it is asked for when the
    array holds its blocks (rather than deriving them from a whole value)."""
    return [s.data._buf.unsafe_buffer_pointer() for s in x.addressable_shards]


def test_a_sharded_array_holds_one_block_per_device(devices: list[Device]) -> None:
    backend = eight_cpus()
    mesh = jax.make_mesh((2, 4), ("x", "y"), devices=devices)
    x = jax.device_put(X, NamedSharding(mesh, P("x", "y")))
    # Eight blocks of 8x1, one per device, held by the array.
    assert held_blocks(x) == held_blocks(x)
    for shard in x.addressable_shards:
        assert shard.data.shape == (8, 1)
        assert backend.buffer_device(shard.data._buf) is shard.device
        np.testing.assert_array_equal(np.asarray(shard.data), X[shard.index])
    np.testing.assert_array_equal(np.asarray(x), X)
    # Eager operations see the whole value.
    np.testing.assert_array_equal(np.asarray(x * 2 + 1), X * 2 + 1)


def test_a_replicated_array_holds_a_copy_per_device(devices: list[Device]) -> None:
    backend = eight_cpus()
    mesh = jax.make_mesh((8,), ("i",), devices=devices)
    r = jax.device_put(X, NamedSharding(mesh, P()))
    assert held_blocks(r) == held_blocks(r)
    assert len(set(held_blocks(r))) == 8
    assert sorted(d.id for d in r.devices()) == list(range(8))
    for shard in r.addressable_shards:
        assert backend.buffer_device(shard.data._buf) is shard.device
        np.testing.assert_array_equal(np.asarray(shard.data), X)


def test_resharding_moves_the_blocks(devices: list[Device]) -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), devices=devices)
    x = jax.device_put(X, NamedSharding(mesh, P("x", "y")))
    y = jax.device_put(x, NamedSharding(mesh, P("y", "x")))
    assert [s.data.shape for s in y.addressable_shards] == [(4, 2)] * 8
    for shard in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), X[shard.index])
    z = jax.reshard(y, NamedSharding(mesh, P(None, "y")))
    np.testing.assert_array_equal(np.asarray(z), X)
    one = jax.device_put(z, devices[3])
    assert one.devices() == {devices[3]}
    np.testing.assert_array_equal(np.asarray(one), X)
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)
