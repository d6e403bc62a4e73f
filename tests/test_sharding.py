"""The sharding API (``jax.sharding``, ``make_mesh``, ``set_mesh``, ``device_put`` with
shardings, shards, ``jit``'s shardings, ``visualize_array_sharding``), on 8 CPU devices.

Each test runs once per backend (tests/conftest.py); ``devices`` builds an
8-device backend of the same kind in this process (not registered), so the
meshes below use its devices explicitly. What real JAX prints for the same
programs is checked by tests/test_sharding_oracle.py.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.backend import Device
from minijax.sharding import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding


def eight_devices(backend_name: str) -> list[Device]:
    if backend_name == "xla":
        from minijax_xla.backend import XlaBackend

        class EightCpus(XlaBackend):
            name = "xla_eight_cpus"

        return EightCpus(num_cpu_devices=8).devices()
    from minijax_numpy.backend import NumpyBackend

    return NumpyBackend(num_devices=8).devices()


_made: dict[str, list[Device]] = {}


def eight(backend_name: str) -> list[Device]:
    """The 8 devices of this kind of backend, made once (clients are not free)."""
    if backend_name not in _made:
        _made[backend_name] = eight_devices(backend_name)
    return _made[backend_name]


@pytest.fixture
def devices(backend_name: str) -> list[Device]:
    return eight(backend_name)


def auto_mesh(devices: list[Device], shape: tuple[int, ...] = (2, 4), names: tuple[str, ...] = ("x", "y")) -> Mesh:
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape), devices=devices)


X = np.arange(32, dtype=np.float32).reshape(8, 4)


# --- meshes and specs --------------------------------------------------------------


def test_make_mesh_is_explicit_by_default_and_prints_as_jax(devices: list[Device]) -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), devices=devices)
    assert repr(mesh) == "Mesh(axis_sizes=(2, 4), axis_names=('x', 'y'), axis_types=(Explicit, Explicit))"
    assert str(mesh) == "Mesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))"
    assert dict(mesh.shape) == {"x": 2, "y": 4} and mesh.size == 8 and mesh.devices.shape == (2, 4)
    assert list(mesh.devices.flat) == devices
    assert repr(mesh.abstract_mesh) == (
        "AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit), device_kind=cpu, num_cores=None, platform=cpu)"
    )
    assert str(auto_mesh(devices)) == "Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto))"
    assert repr(AbstractMesh((2, 4), ("a", "b"))) == "AbstractMesh('a': 2, 'b': 4, axis_types=(Auto, Auto))"
    assert [repr(t) for t in AxisType] == ["Auto", "Explicit", "Manual"]
    assert Mesh(np.array(devices).reshape(4, 2), ("a", "b")).axis_types == (AxisType.Auto, AxisType.Auto)


def test_partition_spec_reprs_and_equality() -> None:
    assert [repr(p) for p in (P(), P("x"), P("x", None), P(("x",), None), P((), "x"), P("x", ("a", "b")))] == [
        "P()", "P('x',)", "P('x', None)", "P('x', None)", "P(None, 'x')", "P('x', ('a', 'b'))",
    ]  # fmt: skip
    assert P("x") != P("x", None) and P("x") == P("x") and len(P("x", None)) == 2 and P("x", None)[0] == "x"
    assert jax.P is P


def test_mesh_and_spec_errors(devices: list[Device]) -> None:
    with pytest.raises(ValueError, match=r"Number of devices 8 must be >= the product of mesh_shape \(4, 4\)"):
        jax.make_mesh((4, 4), ("x", "y"), devices=devices)
    with pytest.raises(ValueError, match=r"devices.ndim == 2 and len\(axis_names\) == 1"):
        jax.make_mesh((2, 4), ("x",), devices=devices)
    mesh = auto_mesh(devices)
    with pytest.raises(ValueError, match=r"Resource axis: z of P\('z',\) is not found in mesh: \('x', 'y'\)"):
        NamedSharding(mesh, P("z"))
    with pytest.raises(Exception, match=r"duplicate entries for `x`") as e:
        NamedSharding(mesh, P("x", "x"))
    assert type(e.value).__name__ == "DuplicateSpecError"
    with pytest.raises(ValueError, match=r"partitioned 2 times, but the dimension size is 3") as e:
        jax.device_put(np.zeros((3, 4)), NamedSharding(mesh, P("x")))
    assert type(e.value).__name__ == "IndivisibleError"
    explicit = jax.make_mesh((2, 4), ("x", "y"), devices=devices)
    with pytest.raises(ValueError, match=r"partitioned 2 times, but does not evenly divide the dimension size 3"):
        jax.device_put(np.zeros((3, 4)), NamedSharding(explicit, P("x")))
    with pytest.raises(ValueError, match=r"only valid for values of rank at least 2, but was applied to a value of rank 1"):
        jax.device_put(np.zeros(4), NamedSharding(mesh, P("x", None)))


# --- sharded arrays ------------------------------------------------------------------


def test_device_put_with_a_named_sharding_derives_the_shards(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    sharding = NamedSharding(mesh, P("x", "y"))
    x = jax.device_put(X, sharding)
    assert x.sharding == sharding and x.devices() == set(devices) and not x.is_fully_replicated
    assert x.device == sharding and x.committed  # JAX's .device of a multi-device array is its sharding
    np.testing.assert_array_equal(np.asarray(x), X)
    shards = x.addressable_shards
    assert [s.device for s in shards] == devices
    for k, shard in enumerate(shards):
        i, j = divmod(k, 4)
        assert shard.index == (slice(4 * i, 4 * i + 4), slice(j, j + 1)) and shard.replica_id == 0
        np.testing.assert_array_equal(np.asarray(shard.data), X[shard.index])
        assert shard.data.devices() == {devices[k]} and shard.data.sharding == SingleDeviceSharding(devices[k])
    np.testing.assert_array_equal(np.asarray(x.addressable_data(5)), X[4:8, 1:2])
    # P('x') splits rows over x only: the four devices along y hold the same rows (replica ids 0..3).
    rows = jax.device_put(X, NamedSharding(mesh, P("x")))
    assert [s.replica_id for s in rows.addressable_shards] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert NamedSharding(mesh, P("x")).shard_shape((8, 4)) == (4, 4)
    assert jax.device_put(X, NamedSharding(mesh, P())).is_fully_replicated
    # Computations on a sharded array give the right values.
    np.testing.assert_allclose(np.asarray(jnp.sin(x) * 2), np.sin(X) * 2, rtol=1e-6)


def test_typeof_prints_explicit_axes(devices: list[Device]) -> None:
    explicit = jax.make_mesh((2, 4), ("x", "y"), devices=devices)
    x = jax.device_put(X, NamedSharding(explicit, P("x", "y")))
    assert str(jax.typeof(x)) == "float32[8@x,4@y]" and repr(jax.typeof(x)) == "ShapedArray(float32[8@x,4@y])"
    assert str(jax.typeof(jax.device_put(X, NamedSharding(explicit, P(("x", "y")))))) == "float32[8@(x,y),4]"
    assert str(jax.typeof(jax.device_put(X, NamedSharding(auto_mesh(devices), P("x"))))) == "float32[8,4]"
    assert jax.typeof(x) == jax.typeof(X)  # the sharding prints, but avals compare by shape and dtype
    assert str(jax.typeof(jax.device_put(1.0))) == "~float32[]"


def test_set_mesh_as_setter_and_context(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    assert str(jax.sharding.get_mesh()) == "Mesh()" and repr(jax.sharding.get_abstract_mesh()) == "AbstractMesh((), axis_types=())"
    with jax.set_mesh(mesh) as m:
        assert m is mesh and jax.sharding.get_mesh() is mesh
        assert jax.sharding.get_abstract_mesh() == mesh.abstract_mesh
        assert jax.device_put(X, P("x")).sharding == NamedSharding(mesh, P("x"))
        with jax.sharding.use_abstract_mesh(AbstractMesh((8,), ("z",))):
            assert jax.sharding.get_abstract_mesh().axis_names == ("z",)
        assert jax.sharding.get_abstract_mesh() == mesh.abstract_mesh
    assert jax.sharding.get_mesh().empty and repr(jax.sharding.get_mesh()) == "Mesh(axis_sizes=(), axis_names=())"
    with mesh:
        assert jax.sharding.get_mesh() is mesh
    jax.set_mesh(mesh)  # the setter form
    try:
        assert jax.sharding.get_mesh() is mesh
    finally:
        jax.sharding.set_mesh(Mesh(np.empty((), dtype=object), ()))
    assert jax.sharding.get_mesh().empty
    with pytest.raises(ValueError, match="no mesh is set"):
        jax.device_put(X, P("x"))


def test_jit_shardings_reshard_and_constraints(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    rows, cols = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "y"))
    f = jax.jit(lambda a, b: a @ b, in_shardings=(rows, cols), out_shardings=NamedSharding(mesh, P("x", "y")))
    a, b = X, X.T.copy()
    out = f(a, b)
    np.testing.assert_allclose(np.asarray(out), a @ b)
    assert out.sharding == NamedSharding(mesh, P("x", "y"))
    with jax.set_mesh(mesh):
        assert jax.jit(lambda v: v + 1, out_shardings=P("y"))(X).sharding == NamedSharding(mesh, P("y"))
        with pytest.raises(ValueError, match="reshard cannot contain axis names that are of type Auto or Manual"):
            jax.reshard(X, P("x"))
    explicit = jax.make_mesh((2, 4), ("x", "y"), devices=devices)
    with jax.set_mesh(explicit):
        moved = jax.reshard(np.ones((8, 8)), P(None, ("x", "y")))
    assert moved.addressable_shards[7].index == (slice(None), slice(7, 8))
    assert str(jax.typeof(moved)) == "float32[8,8@(x,y)]"
    constrained = jax.jit(lambda v: jax.lax.with_sharding_constraint(v * 2, rows))(X)
    np.testing.assert_array_equal(np.asarray(constrained), X * 2)
    assert jax.lax.with_sharding_constraint(X, rows).sharding == rows
    with pytest.raises(ValueError, match="in_shardings has 1 entries"):
        jax.jit(lambda p, q: p, in_shardings=(rows,))(X, X)


def test_make_array_from_callback_and_single_device_arrays(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    sharding = NamedSharding(mesh, P("x", "y"))
    seen: list[Any] = []

    def block(index: Any) -> np.ndarray[Any, Any]:
        seen.append(index)
        return X[index]

    x = jax.make_array_from_callback((8, 4), sharding, block)
    np.testing.assert_array_equal(np.asarray(x), X)
    assert x.sharding == sharding and len(seen) == 8
    blocks = [jax.device_put(X[idx], d) for d, idx in sharding.devices_indices_map((8, 4)).items()]
    y = jax.make_array_from_single_device_arrays((8, 4), sharding, blocks)
    np.testing.assert_array_equal(np.asarray(y), X)
    with pytest.raises(ValueError, match="8 addressable devices but 2 arrays"):
        jax.make_array_from_single_device_arrays((8, 4), sharding, blocks[:2])
    with pytest.raises(ValueError, match=r"callback returned an array of shape \(8, 4\)"):
        jax.make_array_from_callback((8, 4), sharding, lambda index: X)


# What JAX 0.10.2 draws for these layouts (tests/test_sharding_oracle.py checks it still does).
GRID = """\
┌───────┬───────┬───────┬───────┐
│       │       │       │       │
│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │
│       │       │       │       │
│       │       │       │       │
├───────┼───────┼───────┼───────┤
│       │       │       │       │
│ CPU 4 │ CPU 5 │ CPU 6 │ CPU 7 │
│       │       │       │       │
│       │       │       │       │
└───────┴───────┴───────┴───────┘
┌───────────┬───────────┐
│CPU 0,1,2,3│CPU 4,5,6,7│
└───────────┴───────────┘
"""


def test_visualize_array_sharding_draws_as_jax(devices: list[Device]) -> None:
    pytest.importorskip("rich")
    mesh = auto_mesh(devices)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        jax.debug.visualize_array_sharding(jax.device_put(X, NamedSharding(mesh, P("x", "y"))))
        jax.debug.visualize_array_sharding(jax.device_put(np.arange(8.0), NamedSharding(mesh, P("x"))))
    assert out.getvalue() == GRID
    seen: list[Any] = []
    jax.debug.inspect_array_sharding(jax.device_put(X, NamedSharding(mesh, P("x"))), callback=seen.append)
    assert seen == [NamedSharding(mesh, P("x"))]


@pytest.mark.single_backend
def test_numpy_backend_simulates_the_host_device_count(monkeypatch: pytest.MonkeyPatch) -> None:
    from minijax_numpy.backend import NumpyBackend, host_device_count

    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x --xla_force_host_platform_device_count=4")
    assert host_device_count() == 4
    assert [repr(d) for d in NumpyBackend().devices()] == [f"CpuDevice(id={i})" for i in range(4)]
    monkeypatch.setenv("XLA_FLAGS", "")
    assert host_device_count() == 1


def test_auto_and_explicit_axes_lay_out_results_and_arguments(devices: list[Device]) -> None:
    from minijax.sharding import auto_axes, explicit_axes

    mesh = jax.make_mesh((2, 4), ("x", "y"), devices=devices)
    with jax.set_mesh(mesh):
        x = jax.device_put(X, P("x", "y"))
        doubled = auto_axes(lambda a: a * 2, out_sharding=P("x", None))(x)
        assert str(jax.typeof(doubled)) == "float32[8@x,4]"
        np.testing.assert_array_equal(np.asarray(doubled), X * 2)
        seen: list[Any] = []
        explicit_axes(lambda a: seen.append(a.sharding) or a, in_sharding=P(None, "y"))(x)
        assert seen == [NamedSharding(mesh, P(None, "y"))]


def test_device_put_takes_a_tree_of_shardings(devices: list[Device]) -> None:
    mesh = jax.make_mesh((8,), ("x",), devices=devices)
    rows, whole = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())
    (a, b), c = jax.device_put(((np.ones(8), np.ones(16)), np.ones((8, 2))), (rows, whole))
    assert (a.sharding, b.sharding, c.sharding) == (rows, rows, whole)
    placed = jax.device_put({"w": np.ones(3)}, {"w": devices[3]})
    assert placed["w"].devices() == {devices[3]}


def test_shardings_are_a_prefix_of_the_values_structure(devices: list[Device]) -> None:
    mesh = auto_mesh(devices)
    rows = NamedSharding(mesh, P("x"))
    out = jax.jit(lambda v: {"a": v, "b": (v, v)}, out_shardings={"a": rows, "b": None})(X)
    assert out["a"].sharding == rows and not isinstance(out["b"][0].sharding, NamedSharding)
    first, second = jax.reshard(((X, X), X), (NamedSharding(mesh, P(None, "y")), rows))
    assert [a.sharding.spec for a in (*first, second)] == [P(None, "y"), P(None, "y"), P("x")]
    with pytest.raises(ValueError, match="do not match the structure of the value"):
        jax.jit(lambda v: v, out_shardings=(rows, rows))(X)


def test_unreduced_specs_print_and_are_refused_clearly(devices: list[Device]) -> None:
    spec = P("X", None, unreduced={"Y"})
    assert repr(spec) == "P('X', None, unreduced={'Y'})" and spec.unreduced == frozenset({"Y"}) and spec != P("X", None)
    with pytest.raises(ValueError, match="partitions cannot overlap with unreduced axes"):
        P("X", unreduced={"X"})
    mesh = jax.make_mesh((4, 2), ("X", "Y"), devices=devices)
    with pytest.raises(NotImplementedError, match="unreduced or reduced mesh axes"):
        jax.device_put(X, jax.NamedSharding(mesh, spec))


def test_call_time_shardings_and_abstract_meshes(devices: list[Device]) -> None:
    from minijax.sharding import auto_axes

    mesh = jax.make_mesh((4, 2), ("X", "Y"), devices=devices)
    with jax.set_mesh(mesh):
        add = auto_axes(lambda a, b: a + b)
        out = add(X, X, out_sharding=P("X", None))  # out_sharding given per call, as in JAX
        assert out.sharding == NamedSharding(mesh, P("X", None))

        @jax.jit
        def f(v: Any) -> Any:
            with jax.sharding.use_abstract_mesh(AbstractMesh((8,), ("A",), (AxisType.Explicit,))):
                return jax.reshard(v, P("A", None)) * 2  # a spec over the abstract mesh, inside a trace

        np.testing.assert_array_equal(np.asarray(f(X)), X * 2)


def test_auto_and_explicit_axes_retype_the_mesh_and_the_arrays_inside(devices: list[Device]) -> None:
    # JAX's parallel page: inside auto_axes the mesh's axes are Auto, so operands split along the
    # same axis in different dimensions add (the compiler chooses); explicit_axes is the reverse.
    from minijax.sharding import AxisType, auto_axes, explicit_axes

    explicit = jax.make_mesh((4, 2), ("x", "y"), devices=devices)
    with jax.set_mesh(explicit):
        a = jax.device_put(np.arange(16).reshape(4, 4), P("x", None))
        b = jax.device_put(np.arange(16).reshape(4, 4), P(None, "x"))
        seen: list[Any] = []

        @auto_axes
        def add(u: Any, v: Any) -> Any:
            seen.append(jax.sharding.get_abstract_mesh().axis_types)
            return u + v

        total = add(a, b, out_sharding=P("x", None))
        assert seen == [(AxisType.Auto, AxisType.Auto)]
        assert str(jax.typeof(total)) == "int32[4@x,4]"
        np.testing.assert_array_equal(np.asarray(total), np.asarray(a) + np.asarray(b))
        assert jax.sharding.get_abstract_mesh().axis_types == (AxisType.Explicit, AxisType.Explicit)
    auto = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto), devices=devices)
    with jax.set_mesh(auto):
        c = jax.device_put(np.arange(8.0).reshape(4, 2), P("x", "y"))
        assert str(jax.typeof(c)) == "float32[4,2]"  # Auto axes stay out of the types
        inside: list[str] = []

        @explicit_axes
        def double(u: Any) -> Any:
            inside.append(str(jax.typeof(u)))
            return u * 2

        out = double(c, in_sharding=P("x", "y"))
        assert inside == ["float32[4@x,2@y]"]
        assert str(jax.typeof(out)) == "float32[4,2]"  # retyped back over the caller's Auto axes
        np.testing.assert_array_equal(np.asarray(out), np.arange(8.0).reshape(4, 2) * 2)


def test_auto_and_explicit_axes_need_their_sharding_and_explicit_axes_a_mesh() -> None:
    # JAX's errors (checked on JAX 0.10.2); with no mesh at all, auto_axes just calls the function.
    from minijax.sharding import auto_axes, explicit_axes

    with pytest.raises(TypeError, match="Missing required keyword argument: 'out_sharding'"):
        auto_axes(lambda x: x)(1.0)
    with pytest.raises(TypeError, match="Missing required keyword argument: 'in_sharding'"):
        explicit_axes(lambda x: x)(1.0)
    with pytest.raises(ValueError, match="Context mesh cannot be empty"):
        explicit_axes(lambda x: x, in_sharding=P())(1.0)
    assert auto_axes(lambda x: x * 2, out_sharding=P())(1.5) == 3.0
