"""SPMD programs beyond plain jit on the xla backend (issue 17, spmdx):
``with_sharding_constraint`` inside ``jit``, SPMD ahead of time (``Lowered``/``Compiled``),
donation of sharded arguments, and pmap's result shardings (JAX 0.10 has no ``PmapSharding``:
its pmap results carry a NamedSharding over a one-axis mesh).

The xla backend only, on tests/test_spmd.py's 8-CPU backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.backend import Device
from minijax.sharding import AxisType, NamedSharding, PartitionSpec as P

pytest.importorskip("jaxlib")
from test_spmd import X, eight_cpus, held_blocks  # noqa: E402  (after the importorskip, on purpose)

pytestmark = pytest.mark.single_backend  # its own 8-CPU xla backend, named explicitly


@pytest.fixture
def devices() -> list[Device]:
    return eight_cpus().devices()


def auto_mesh(devices: list[Device], shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
    return jax.make_mesh(shape, names, devices=devices, axis_types=(AxisType.Auto,) * len(names))


# --- with_sharding_constraint inside jit ------------------------------------------------


def test_a_sharding_constraint_sets_the_layout_xla_gives(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (2, 4), ("x", "y"))
    a = jax.device_put(X, NamedSharding(mesh, P("x")))
    plain = jax.jit(lambda a: a * 2 + 1)
    assert plain(a).sharding.spec == P("x")  # propagated from the argument
    constrained = jax.jit(lambda a: lax.with_sharding_constraint(a * 2, NamedSharding(mesh, P(None, "y"))) + 1)
    r = constrained(a)
    assert r.sharding == NamedSharding(mesh, P(None, "y"))
    assert [s.data.shape for s in r.addressable_shards] == [(16, 1)] * 8
    assert held_blocks(r) == held_blocks(r)
    np.testing.assert_array_equal(np.asarray(r), X * 2 + 1)


def test_a_sharding_constraint_partitions_a_program_of_unsharded_arguments(devices: list[Device]) -> None:
    # As in JAX: the constraint's mesh is the program's, the arguments are laid out on it.
    mesh = auto_mesh(devices, (8,), ("x",))
    s = NamedSharding(mesh, P("x"))
    f = jax.jit(lambda a: lax.with_sharding_constraint(a * 2, s) + 1)
    for _ in range(2):  # (the second call: the cached program, not a one-device fast path)
        r = f(X)
        assert r.sharding == s
        assert [s.data.shape for s in r.addressable_shards] == [(2, 4)] * 8
        np.testing.assert_array_equal(np.asarray(r), X * 2 + 1)


def test_a_sharding_constraint_is_an_equation_and_survives_transformations(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (8,), ("x",))
    s = NamedSharding(mesh, P("x"))

    def f(a: Any) -> Any:
        return lax.with_sharding_constraint(jnp.sin(a), s)

    text = str(jax.make_jaxpr(f)(X))
    assert "sharding_constraint[" in text and "unconstrained_dims=frozenset({})" in text
    assert "context_mesh=Mesh()" in text and "layout=None" in text
    assert f"sharding={s!r}" in text
    # jvp/grad: the tangent and the cotangent are constrained as the primal is (as in JAX).
    assert str(jax.make_jaxpr(jax.grad(lambda a: f(a).sum()))(X)).count("sharding_constraint[") == 2
    g = jax.jit(jax.grad(lambda a: f(a).sum()))(X)
    np.testing.assert_allclose(np.asarray(g), np.cos(X), rtol=1e-6)
    # vmap: the mapped dimension is left to the partitioner.
    batched = str(jax.make_jaxpr(jax.vmap(f))(np.ones((3, 16, 4), np.float32)))
    assert "spec=P(UNCONSTRAINED, 'x', None)" in batched and "unconstrained_dims=frozenset({0})" in batched
    v = jax.jit(jax.vmap(f))(np.ones((3, 16, 4), np.float32))
    np.testing.assert_allclose(np.asarray(v), np.sin(np.ones((3, 16, 4))), rtol=1e-6)
    assert v.sharding.spec == P(None, "x")


def test_a_sharding_constraint_of_the_wrong_rank_is_jaxs_error(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (2, 4), ("x", "y"))
    with pytest.raises(ValueError, match="implies that it has a rank of at least 2, but it is 1"):
        jax.jit(lambda a: lax.with_sharding_constraint(a, NamedSharding(mesh, P("x", "y"))))(np.ones(8, np.float32))


# --- SPMD ahead of time --------------------------------------------------------------------


def test_lowered_shows_the_spmd_module_and_compiled_runs_it(devices: list[Device]) -> None:
    backend = eight_cpus()
    mesh = auto_mesh(devices, (2, 4), ("x", "y"))
    a = jax.device_put(X, NamedSharding(mesh, P("x")))
    w = jax.device_put(np.eye(4, dtype=np.float32), NamedSharding(mesh, P()))
    f = jax.jit(lambda w, a: jnp.tanh(a @ w), out_shardings=NamedSharding(mesh, P("x", "y")))
    lowered = f.lower(w, a)
    text = lowered.as_text()
    assert text.startswith("module @jit__lambda attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32}")
    assert 'mhlo.sharding = "{replicated}"' in text  # w
    assert 'mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"' in text  # a: P("x")
    assert 'mhlo.sharding = "{devices=[2,4]<=[8]}"' in text  # the result: P("x", "y")
    compiles = backend.stats["compiles"]
    compiled = lowered.compile()
    assert backend.stats["compiles"] == compiles + 1
    assert compiled.input_shardings == ((NamedSharding(mesh, P()), NamedSharding(mesh, P("x"))), {})
    assert compiled.output_shardings == NamedSharding(mesh, P("x", "y"))
    assert "num_partitions=8" in compiled.as_text() and "f32[8,1]" in compiled.as_text()  # one device's block
    r = compiled(w, a)
    assert r.sharding == NamedSharding(mesh, P("x", "y"))
    np.testing.assert_allclose(np.asarray(r), np.tanh(X), rtol=1e-6)
    assert f(w, a).sharding == r.sharding and backend.stats["compiles"] == compiles + 1  # the same program
    with pytest.raises(ValueError, match="Passed sharding: .*spec=P\\('y',\\).*\n  Required sharding: .*spec=P\\('x',\\)"):
        compiled(w, jax.device_put(X, NamedSharding(mesh, P("y"))))


def test_in_shardings_lay_out_the_lowered_arguments(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (2, 4), ("x", "y"))
    h = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("y")))
    lowered = h.lower(X)
    assert 'mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"' in lowered.as_text()
    compiled = lowered.compile()
    assert compiled.input_shardings == ((NamedSharding(mesh, P("y")),), {})
    assert compiled.output_shardings == NamedSharding(mesh, P("y"))
    np.testing.assert_array_equal(np.asarray(compiled(jax.device_put(X, NamedSharding(mesh, P("y"))))), X * 2)


def test_a_one_device_compiled_gives_single_device_shardings() -> None:
    one = jax.jit(lambda a, b: {"x": a + b, "y": (a, a)}).lower(np.ones(3, np.float32), 2.0).compile()
    device = jax.devices()[0]
    single = jax.sharding.SingleDeviceSharding(device)
    assert one.input_shardings == ((single, single), {})
    assert one.output_shardings == {"x": single, "y": (single, single)}


# --- donation on the SPMD path -------------------------------------------------------------


def test_a_donated_sharded_argument_gives_its_buffers_and_is_deleted(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (8,), ("x",))
    a = jax.device_put(X, NamedSharding(mesh, P("x")))
    blocks = held_blocks(a)
    f = jax.jit(lambda a: a * 2, donate_argnums=0)
    assert "tf.aliasing_output = 0" in f.lower(a).as_text()
    r = f(a)
    assert a.is_deleted()
    assert held_blocks(r) == blocks  # the result lives in the donated buffers
    np.testing.assert_array_equal(np.asarray(r), X * 2)
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(a)
    b = jax.device_put(X, NamedSharding(mesh, P("x")))
    with pytest.raises(RuntimeError, match="is donated, but the same array is also passed as argument 1"):
        jax.jit(lambda a, b: (a + b, a), donate_argnums=0)(b, b)
    assert not b.is_deleted()


# --- pmap's results ----------------------------------------------------------------------


def test_pmap_results_are_laid_out_along_out_axes_as_in_jax(devices: list[Device]) -> None:
    r = jax.pmap(lambda v: v * 2, devices=devices)(X[:8])
    assert r.sharding.mesh.axis_names == ("_internal_pmap_axis_name",)
    assert r.sharding.spec == P("_internal_pmap_axis_name")
    # A result the partitioner would replicate (a psum over the mapped axis) is still one slice
    # per device, as pmap stacks it.
    s = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i", devices=devices)(X[:8])
    assert s.sharding.mesh.axis_names == ("i",) and s.sharding.spec == P("i")
    assert [sh.index for sh in s.addressable_shards][:2] == [(slice(0, 1), slice(None)), (slice(1, 2), slice(None))]
    np.testing.assert_array_equal(np.asarray(s), np.broadcast_to(X[:8].sum(0), (8, 4)))
    t = jax.pmap(lambda v: v + 1, in_axes=1, out_axes=1, devices=devices[:4])(X[:, :4])
    assert t.sharding.spec == P(None, "_internal_pmap_axis_name") and t.sharding.num_devices == 4


# --- the hot path of calls on sharded arrays ----------------------------------------------


def test_a_cached_call_on_sharded_arrays_takes_the_fast_path(devices: list[Device], monkeypatch: Any) -> None:
    mesh = auto_mesh(devices, (2, 4), ("x", "y"))
    w = jax.device_put(np.eye(4, dtype=np.float32), NamedSharding(mesh, P()))
    by_x = jax.device_put(X, NamedSharding(mesh, P("x")))
    by_y = jax.device_put(X, NamedSharding(mesh, P("y")))
    f = jax.jit(lambda w, a: (a @ w, a.sum()))
    first = f(w, by_x)
    other = f(w, by_y)
    slow = type(f)._call

    def refuse(self: Any, args: Any, kwargs: Any) -> Any:
        raise AssertionError("the cached call went through _call")

    monkeypatch.setattr(type(f), "_call", refuse)
    for a, spec in ((by_x, P("x")), (by_y, P("y"))):  # each layout its own program, its own result layout
        out, total = f(w, a)
        assert out.sharding == NamedSharding(mesh, spec) and total.sharding.spec == P()
        np.testing.assert_array_equal(np.asarray(out), X)
        assert float(total) == X.sum()
    assert first[0].sharding.spec == P("x") and other[0].sharding.spec == P("y")
    # A donated argument is consumed on the fast path too.
    monkeypatch.setattr(type(f), "_call", slow)
    g = jax.jit(lambda a: a + 1, donate_argnums=0)
    g(jax.device_put(X, NamedSharding(mesh, P("x"))))
    monkeypatch.setattr(type(f), "_call", refuse)
    b = jax.device_put(X, NamedSharding(mesh, P("x")))
    blocks = held_blocks(b)
    r = g(b)
    assert b.is_deleted() and held_blocks(r) == blocks


def test_many_queued_steps_with_collectives_do_not_abort_the_process(devices: list[Device]) -> None:
    # XLA's CPU collectives abort the process when executions queued back to back starve one
    # another's rendezvous (fewer cores than devices); the SPMD runner starts one at a time.
    # MINIJAX_SPMD_STEPS sets the loop's length (2000 aborted before the fix, ~1 s after).
    import os

    mesh = auto_mesh(devices, (8,), ("batch",))
    xs = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
    ys = xs @ np.array([1.0, -2.0, 0.5], np.float32)
    step = jax.jit(lambda w, x, y: w - 0.1 * jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w))
    w = jax.device_put(np.zeros(3, np.float32), NamedSharding(mesh, P()))
    x = jax.device_put(xs, NamedSharding(mesh, P("batch")))
    y = jax.device_put(ys, NamedSharding(mesh, P("batch")))
    for _ in range(int(os.environ.get("MINIJAX_SPMD_STEPS", "2000"))):
        w = step(w, x, y)
    np.testing.assert_allclose(np.asarray(w), [1.0, -2.0, 0.5], rtol=1e-4)
