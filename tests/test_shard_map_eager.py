"""An eager shard_map (called on concrete arrays) runs its body one primitive at a time over every
device's blocks, as JAX's does (minijax/shard_map_eager.py): printing a value shows each device's
block, ``jax.typeof`` the mesh axes it varies over, and the varying-axes rules decide which
out_specs may leave an axis out. Its results are those of the same shard_map under jit.

Runs once per backend on an 8-device backend of the same kind (tests/test_sharding.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_sharding import auto_mesh, devices as devices  # noqa: F401  (devices: the fixture)

import minijax as jax
import minijax.numpy as jnp
from minijax.backend import Device
from minijax.sharding import NamedSharding, PartitionSpec as P

X = np.arange(32, dtype=np.float32).reshape(8, 4)


def test_printing_a_value_shows_each_devices_block(devices: list[Device], capsys: pytest.CaptureFixture[str]) -> None:
    mesh = auto_mesh(devices, (2,), ("i",))

    def body(b: Any) -> Any:
        print(b)
        total = jax.lax.psum(b, "i")
        print(total)
        return total

    out = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P())(np.arange(6.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(out), [3.0, 5.0, 7.0])
    d0, d1 = devices[:2]
    assert capsys.readouterr().out == (
        f"On {d0} at mesh coordinates (i,) = (0,):\n[0. 1. 2.]\n\nOn {d1} at mesh coordinates (i,) = (1,):\n[3. 4. 5.]\n\n"
        f"On {d0} at mesh coordinates (i,) = (0,):\n[3. 5. 7.]\n\nOn {d1} at mesh coordinates (i,) = (1,):\n[3. 5. 7.]\n\n"
    )


def test_a_two_axis_mesh_names_every_coordinate(devices: list[Device], capsys: pytest.CaptureFixture[str]) -> None:
    mesh = auto_mesh(devices[:4], (2, 2), ("i", "j"))
    jax.shard_map(lambda b: (print(b), b)[1], mesh=mesh, in_specs=P("i", "j"), out_specs=P("i", "j"))(np.arange(16).reshape(4, 4))
    printed = capsys.readouterr().out
    assert printed.startswith(f"On {devices[0]} at mesh coordinates (i, j,) = (0, 0):\n[[0 1]\n [4 5]]\n\n")
    assert f"On {devices[3]} at mesh coordinates (i, j,) = (1, 1):\n[[10 11]\n [14 15]]\n" in printed


def test_typeof_shows_the_axes_a_value_varies_over(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (4, 2), ("i", "j"))
    seen: dict[str, Any] = {}

    def body(b: Any, w: Any) -> Any:
        seen["b"], seen["w"] = jax.typeof(b), jax.typeof(w)
        seen["psum_j"] = jax.typeof(jax.lax.psum(b, "j"))
        seen["psum_all"] = jax.typeof(jax.lax.psum(b, ("i", "j")))
        seen["gathered"] = jax.typeof(jax.lax.all_gather(w, "j"))
        seen["index"] = jax.typeof(jax.lax.axis_index("j"))
        seen["mixed"] = jax.typeof(w * b)
        seen["cast"] = jax.typeof(jax.lax.pcast(w, "i", to="varying"))
        return jax.lax.psum(b, "j")

    jax.shard_map(body, mesh=mesh, in_specs=(P("i", "j"), P()), out_specs=P("i"))(X, np.ones((2,), np.float32))
    assert str(seen["b"]) == "float32[2,2]{V:(i,j)}" and seen["b"].manual_axis_type.varying == {"i", "j"}
    assert str(seen["w"]) == "float32[2]" and seen["w"].manual_axis_type.varying == set()
    assert str(seen["psum_j"]) == "float32[2,2]{V:i}"
    assert str(seen["psum_all"]) == "float32[2,2]"
    assert str(seen["gathered"]) == "float32[2,2]{V:j}"  # (a gathered value varies along its axis, as in JAX)
    assert str(seen["index"]) == "int32[]{V:j}"
    assert str(seen["mixed"]) == "float32[2,2]{V:(i,j)}"
    assert str(seen["cast"]) == "float32[2]{V:i}"


def test_an_out_spec_may_leave_out_only_invariant_axes(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (2, 4), ("x", "y"))
    gathered = jax.shard_map(lambda b: jax.lax.all_gather(b, "y", tiled=True), mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))
    for call in (gathered, jax.jit(gathered)):  # (the staged check runs the body the same way)
        with pytest.raises(ValueError, match="replicated across mesh axis 'y'"):
            call(X)
    lenient = jax.shard_map(lambda b: jax.lax.all_gather(b, "y", axis=1, tiled=True), mesh=mesh, in_specs=P("x", "y"),
                            out_specs=P("x"), check_vma=False)  # fmt: skip
    np.testing.assert_array_equal(np.asarray(lenient(X)), X)
    # A psum inside a jitted function of the body makes its result invariant, as its value shows.
    inner = jax.jit(lambda b: jax.lax.psum(b, "y") * 2)
    summed = jax.shard_map(lambda b: inner(b), mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))
    np.testing.assert_array_equal(np.asarray(summed(X)), X.reshape(8, 4, 1).sum(1) * 2)


@pytest.mark.parametrize("check_vma", [True, False])
def test_eager_results_are_the_jitted_results(devices: list[Device], check_vma: bool) -> None:
    mesh = auto_mesh(devices)

    def body(a: Any, w: Any) -> Any:
        local = jnp.tanh(a @ w) + jax.lax.axis_index("y")
        ring = jax.lax.ppermute(local, "y", [(i, (i + 1) % 4) for i in range(4)])
        scanned = jax.lax.scan(lambda c, r: (c + jax.lax.psum(r, "x"), c), jnp.zeros(local.shape[1:]), ring)
        return jax.lax.pmean(ring, "x"), scanned[0], jax.lax.all_to_all(local, "x", 0, 0, tiled=True)

    f = jax.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), P("y")), out_specs=(P(None, "y"), P("y"), P("x", "y")),
                      check_vma=check_vma)  # fmt: skip
    w = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    eager, jitted = f(X, w), jax.jit(f)(X, w)
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-6, atol=1e-6)
        assert e.sharding == j.sharding


def test_explicit_axes_arguments_and_result_types(devices: list[Device]) -> None:
    mesh = jax.make_mesh((4, 2), ("x", "y"), devices=devices)  # Explicit axes
    a = jax.device_put(X, NamedSharding(mesh, P("x", "y")))
    b = jax.device_put(np.ones((4, 3), np.float32), NamedSharding(mesh, P("y", None)))

    def matmul(a_block: Any, b_block: Any) -> Any:
        return jax.lax.psum(a_block @ b_block, "y")

    c = jax.shard_map(matmul, mesh=mesh, in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))(a, b)
    np.testing.assert_allclose(np.asarray(c), X @ np.ones((4, 3), np.float32))
    assert str(jax.typeof(c)) == "float32[8@x,3]"
    # in_specs inferred from the arguments' layouts
    c2 = jax.shard_map(matmul, mesh=mesh, out_specs=P("x", None))(a, b)
    np.testing.assert_array_equal(np.asarray(c2), np.asarray(c))


def test_a_leaked_value_is_reported(devices: list[Device]) -> None:
    mesh = auto_mesh(devices, (2,), ("i",))
    kept: list[Any] = []
    jax.shard_map(lambda b: (kept.append(b), b)[1], mesh=mesh, in_specs=P("i"), out_specs=P("i"))(np.arange(4.0))
    with pytest.raises(jax.errors.UnexpectedTracerError):
        jnp.sin(kept[0])


def test_an_eager_collective_runs_across_the_devices(backend_name: str, devices: list[Device], monkeypatch: Any) -> None:
    # As in JAX, each collective of an eager body is a jitted shard_map over the mesh: the backend
    # runs it across the devices (XLA's all-reduce; the NumPy backend's lockstep, watched here).
    mesh = auto_mesh(devices)
    bodies: list[str] = []
    if backend_name == "numpy":
        import minijax_numpy.calls as numpy_calls

        lockstep = numpy_calls.HIGHER_ORDER["shard_map"]

        def watched(backend: Any, params: Any) -> Any:
            bodies.append(" ".join(e.primitive.name for e in params["jaxpr"].jaxpr.eqns))
            return lockstep(backend, params)

        monkeypatch.setitem(numpy_calls.HIGHER_ORDER, "shard_map", watched)
    body = lambda b: jax.lax.psum(jnp.cos(b), "y") + jax.lax.ppermute(b, "x", [(0, 1), (1, 0)])  # noqa: E731
    f = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    x = np.linspace(-1, 1, 16 * 12, dtype=np.float32).reshape(16, 12)  # (a shape no other test compiles)
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(jax.jit(f)(x)), rtol=1e-6)
    if backend_name == "numpy":
        assert any("psum" in b and "cos" not in b for b in bodies), bodies  # (the psum alone, across devices)
        assert any("ppermute" in b for b in bodies), bodies
