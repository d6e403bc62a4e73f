"""Ahead-of-time stages (jax.stages), jax.export, transfer guards, live_arrays and jax.profiler,
on every backend (docs/aot.md)."""

from __future__ import annotations

import gzip
import json
import logging
import os
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import export
from minijax.config import config_context


def _backend(name: str) -> Any:
    return config_context(minijax_backend=name)


ROOT = pathlib.Path(__file__).resolve().parents[1]


def _f(x: Any, y: Any) -> Any:
    return {"a": jnp.sin(x) * y, "b": x.sum()}


# --- stages ------------------------------------------------------------------------------------


def test_traced_lowered_compiled_carry_the_structures(backend_name: str) -> None:
    x = jnp.ones((2, 3))
    traced = jax.jit(_f).trace(x, 2.0)
    assert isinstance(traced, jax.stages.Traced)
    assert traced.fun_name == "_f"
    assert str(traced.jaxpr).count("sin") == 1
    lowered = traced.lower()
    compiled = lowered.compile()
    assert isinstance(lowered, jax.stages.Lowered) and isinstance(compiled, jax.stages.Compiled)
    for stage in (traced, lowered, compiled):
        assert str(stage.in_tree) == "PyTreeDef(((*, *), {}))"
        assert str(stage.out_tree) == "PyTreeDef({'a': *, 'b': *})"
        info = stage.out_info
        assert (info["a"].shape, info["a"].dtype, info["b"].shape) == ((2, 3), np.float32, ())
        (ax, ay), kw = stage.args_info
        assert kw == {} and isinstance(ax, jax.stages.ArgInfo)
        assert (ax.shape, ax.dtype, ax.donated) == ((2, 3), np.float32, False)
        assert repr(ay) == "ArgInfo(_aval=ShapedArray(float32[], weak_type=True), donated=False)"
    out = compiled(x, 3.0)
    np.testing.assert_allclose(out["a"], np.sin(1.0) * 3.0 * np.ones((2, 3)), rtol=1e-6)
    assert isinstance(jax.jit(_f), jax.stages.Wrapped)


def test_donated_arguments_show_in_args_info(backend_name: str) -> None:
    lowered = jax.jit(lambda a, b: a + b, donate_argnums=1).lower(jnp.ones(3), jnp.ones(3))
    (a, b), _ = lowered.args_info
    assert (a.donated, b.donated) == (False, True)
    assert lowered.donate_argnums == (1,)


def test_compiled_rejects_other_argument_types_with_jaxs_error(backend_name: str) -> None:
    compiled = jax.jit(_f).lower(jnp.ones((2, 3)), 2.0).compile()
    with pytest.raises(TypeError, match=r"Argument types differ .*\nArgument 'x' compiled with float32\[2,3\] and called with float32\[3,3\]"):
        compiled(jnp.ones((3, 3)), 2.0)
    with pytest.raises(TypeError, match=r"called with int32\[2,3\]"):
        compiled(jnp.ones((2, 3), jnp.int32), 2.0)
    with pytest.raises(TypeError, match="Function compiled with input pytree does not match"):
        compiled(jnp.ones((2, 3)))


def test_compiled_takes_only_the_non_static_arguments(backend_name: str) -> None:
    # JAX's ahead-of-time page: the static argument is part of the program, so the
    # compiled function is called with the others only (the static ones are refused).
    def f(x, y):
        return 2 * x + y

    compiled = jax.jit(f, static_argnums=0).trace(7, 8).lower().compile()
    assert repr(compiled(5)) == "Array(19, dtype=int32, weak_type=True)"
    with pytest.raises(TypeError, match="seen tuple of length 1 but now given tuple of length 2"):
        compiled(7, 5)
    with pytest.raises(TypeError, match=r"Argument 'y' compiled with int32\[\] and called with float32\[\]"):
        compiled(5.0)
    by_name = jax.jit(f, static_argnames="x").trace(x=7, y=8).lower().compile()
    assert int(by_name(y=5)) == 19


def test_lowered_text_and_analyses_per_backend(backend_name: str) -> None:
    lowered = jax.jit(lambda x: jnp.dot(x, x)).lower(jnp.ones((4, 4)))
    with pytest.raises(ValueError, match="unknown dialect: foo"):
        lowered.as_text(dialect="foo")
    compiled = lowered.compile()
    if backend_name == "xla":
        assert "stablehlo.dot_general" in lowered.as_text()
        assert lowered.as_text(dialect="hlo").startswith("HloModule")
        assert lowered.compiler_ir() is not None and lowered.compiler_ir("hlo") is not None
        before, after = lowered.cost_analysis(), compiled.cost_analysis()
        assert before is not None and after is not None
        assert before["flops"] == after["flops"] == 2 * 4 * 4 * 4
        memory = compiled.memory_analysis()
        assert memory.argument_size_in_bytes == 64 and memory.output_size_in_bytes == 64
    else:  # the jaxpr is the numpy backend's program: no XLA texts nor analyses
        assert "dot_general" in lowered.as_text() and "lambda" in lowered.as_text()
        with pytest.raises(NotImplementedError, match="does not lower to stablehlo"):
            lowered.as_text(dialect="stablehlo")
        assert lowered.compiler_ir() is None
        assert lowered.cost_analysis() is None and compiled.cost_analysis() is None
        assert compiled.memory_analysis() is None
        assert compiled.as_text() == lowered.as_text()


# --- export ------------------------------------------------------------------------------------

_CAPTURED = np.arange(3.0, dtype=np.float32)


def _with_constant(x: Any, y: Any) -> Any:
    return {"a": jnp.sin(x) * y + _CAPTURED, "b": x.sum()}


def _expected(x: np.ndarray[Any, Any], y: float) -> dict[str, Any]:
    return {"a": np.sin(x) * y + _CAPTURED, "b": x.sum()}


def test_export_round_trip_in_process(backend_name: str) -> None:
    exp = export.export(jax.jit(_with_constant))(jax.ShapeDtypeStruct((2, 3), jnp.float32), 2.0)
    assert exp.fun_name == "_with_constant" and exp.platforms == ("cpu",)
    assert [a.str_short() for a in exp.in_avals] == ["f32[2,3]", "f32[]"]
    assert [a.shape for a in exp.out_avals] == [(2, 3), ()]
    blob = exp.serialize()
    assert isinstance(blob, bytearray)
    back = export.deserialize(blob)
    assert (back.in_tree, back.out_tree, back.in_avals, back.out_avals) == (exp.in_tree, exp.out_tree, exp.in_avals, exp.out_avals)
    x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    for e in (exp, back):
        out = e.call(x, 3.0)
        np.testing.assert_allclose(out["a"], _expected(x, 3.0)["a"], rtol=1e-6)
        np.testing.assert_allclose(out["b"], x.sum(), rtol=1e-6)
    # Under transformations the exported program is its jaxpr: jit, grad and vmap see through it.
    np.testing.assert_allclose(jax.jit(back.call)(x, 3.0)["b"], x.sum(), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda v: back.call(v, 1.0)["a"].sum())(x), np.cos(x), rtol=1e-6)
    assert (exp.mlir_module() is not None) if backend_name == "xla" else True


def test_exported_call_checks_arguments_as_jax_does(backend_name: str) -> None:
    exp = export.export(jax.jit(_f))(jax.ShapeDtypeStruct((2, 3), jnp.float32), 2.0)
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[0\]\.shape\[0\] \(expected same constant\): expected \(2, 3\) and called with \(3, 3\)"):
        exp.call(np.ones((3, 3), np.float32), 1.0)
    with pytest.raises(ValueError, match=r"Dtype mismatch for args\[0\]: expected float32 and called with int32"):
        exp.call(np.ones((2, 3), np.int32), 1.0)
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(_f)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a program serialized by minijax"):
        export.deserialize(b"garbage")


def _poly(x: Any) -> Any:
    return jnp.sin(x).sum(axis=1) * 2, jnp.concatenate([x, x]).reshape(-1), x @ jnp.ones((4, 2)), x.T + jnp.zeros(x.shape[::-1])


def test_export_with_a_symbolic_batch_dimension_runs_for_every_batch_size(backend_name: str) -> None:
    (b,) = export.symbolic_shape("b")
    exp = export.export(jax.jit(_poly))(jax.ShapeDtypeStruct((b, 4), jnp.float32))
    assert [repr(a) for a in exp.in_avals] == ["ShapedArray(float32[b,4])"]
    assert [a.str_short() for a in exp.out_avals] == ["f32[b]", "f32[8*b]", "f32[b,2]", "f32[4,b]"]
    for n in (1, 3, 5):
        x = np.arange(4 * n, dtype=np.float32).reshape(n, 4)
        for got, want in zip(exp.call(x), _poly(x)):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5)
    if backend_name == "xla":
        assert "tensor<?x4xf32>" in exp.mlir_module()
        assert "stablehlo.get_dimension_size" in exp.mlir_module()
    x = np.ones((3, 4), np.float32)
    g = jax.grad(lambda x: exp.call(x)[0].sum())(x)
    np.testing.assert_allclose(g, 2 * np.cos(x), rtol=1e-5)
    batched = jax.vmap(exp.call)(np.ones((2, 3, 4), np.float32))
    assert batched[1].shape == (2, 24)


def _common(x: Any) -> Any:
    return (x.mean(0), jnp.var(x), jnp.argmax(x, 0), jnp.argmin(x, 1), jnp.cumsum(x, 1), jnp.where(x > 0, x, 0.0),
            jax.nn.softmax(x), x.astype(jnp.int32), jnp.arange(4)[None] + x, x.reshape(x.shape[0], 2, 2), jnp.sort(x, 0))


def test_common_primitives_export_with_a_symbolic_dimension(backend_name: str) -> None:
    exp = export.export(jax.jit(_common))(jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), jnp.float32))
    assert "dim_as_value[dim=b]" in str(exp.jaxpr())
    for n in (1, 4):
        x = np.random.RandomState(n).randn(n, 4).astype(np.float32)
        for got, want in zip(exp.call(x), _common(x)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_variable_is_solved_from_a_multiple(backend_name: str) -> None:
    exp = export.export(jax.jit(lambda x: x.reshape(-1, 2).sum(1)))(jax.ShapeDtypeStruct(export.symbolic_shape("2*b"), jnp.float32))
    assert repr(exp.out_avals[0]) == "ShapedArray(float32[b])"
    np.testing.assert_allclose(exp.call(np.arange(6, dtype=np.float32)), [1, 5, 9])
    with pytest.raises(ValueError, match="Division had remainder 1 when computing the value of 'b'"):
        exp.call(np.arange(5, dtype=np.float32))


def test_symbolic_export_checks_arguments_as_jax_does(backend_name: str) -> None:
    exp = export.export(jax.jit(lambda x, y: x + y))(*export.symbolic_args_specs((np.ones((2, 4)), np.ones((2, 4))), "b, 4"))
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[0\].shape\[1\] \(expected same constant\)"):
        exp.call(np.ones((3, 5), np.float32), np.ones((3, 5), np.float32))
    with pytest.raises(ValueError, match="Rank mismatch"):
        exp.call(np.ones((3,), np.float32), np.ones((3,), np.float32))
    with pytest.raises(ValueError, match=r"Found inconsistency between dimension size args\[1\].shape\[0\] \(= 2\)"):
        exp.call(np.ones((3, 4), np.float32), np.ones((2, 4), np.float32))


def test_dimension_expressions_follow_jaxs_arithmetic_and_comparisons() -> None:
    b, c = export.symbolic_shape("b, c")
    assert [str(e) for e in (2 * b, b + 1, b - 1, b // 2, b % 2, b * b, -b, (b + 1) * (b - 1), 4 * b // 2)] == [
        "2*b", "b + 1", "b - 1", "floordiv(b, 2)", "mod(b, 2)", "b^2", "- b", "b^2 - 1", "2*b"]
    assert (b + c) == (c + b) and b != 3 and b >= 1 and b + 1 > b
    with pytest.raises(jax.errors.InconclusiveDimensionOperation, match="'b' >= '2' is inconclusive"):
        bool(b >= 2)
    with pytest.raises(jax.errors.InconclusiveDimensionOperation, match="requires a constant"):
        int(b)
    assert export.symbolic_shape("b, 2*b + 1, floordiv(c, 2)") == (b, 2 * b + 1, c // 2)
    assert (2 * b + 1).evaluate({"b": 3}) == 7


def test_an_op_that_cannot_be_polymorphic_raises_inconclusive(backend_name: str) -> None:
    (b,) = export.symbolic_shape("b")
    with pytest.raises(jax.errors.InconclusiveDimensionOperation):
        export.export(jax.jit(lambda x: x[: x.shape[0] // 2]))(jax.ShapeDtypeStruct((b, 4), jnp.float32))


_POLY_CHILD = """
import json, sys, numpy as np
from minijax import export
exp = export.deserialize(open(sys.argv[1], "rb").read())
outs = [exp.call(np.ones((n, 4), np.float32))[1].shape for n in (2, 6)]
print(json.dumps([repr(exp.in_avals[0]), [list(s) for s in outs]]))
"""


def test_symbolic_export_round_trips_with_its_jaxpr(backend_name: str) -> None:
    """The payload's jaxpr names the dimension variables in its types and shape params; read back,
    it runs (and differentiates) for any batch size."""
    (b,) = export.symbolic_shape("b")
    exp = export.deserialize(export.export(jax.jit(_poly))(jax.ShapeDtypeStruct((b, 4), jnp.float32)).serialize())
    text = str(exp.jaxpr())
    assert "a:f32[b,4]" in text and "new_sizes=(8*b,)" in text
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_allclose(exp.call(x)[1], _poly(x)[1])
    np.testing.assert_allclose(jax.grad(lambda x: exp.call(x)[1].sum())(x), np.full((2, 4), 2.0))


@pytest.mark.single_backend
@pytest.mark.parametrize("there", ["xla", "numpy"])
def test_symbolic_export_runs_in_another_process(tmp_path: pathlib.Path, there: str) -> None:
    pytest.importorskip("jaxlib")
    (b,) = export.symbolic_shape("b")
    with _backend("xla"):
        exp = export.export(jax.jit(_poly))(jax.ShapeDtypeStruct((b, 4), jnp.float32))
    path = tmp_path / "poly.minijax-export"
    path.write_bytes(exp.serialize())
    env = dict(os.environ, MINIJAX_BACKEND=there, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'backends'}")
    done = subprocess.run([sys.executable, "-c", _POLY_CHILD, str(path)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    aval, shapes = json.loads(done.stdout.strip().splitlines()[-1])
    assert aval == "ShapedArray(float32[b,4])"
    assert shapes == [[16], [48]]


_CHILD = """
import json, sys, numpy as np
import minijax as jax
from minijax import export
exp = export.deserialize(open(sys.argv[1], "rb").read())
x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
out = exp.call(x, 3.0)
from minijax.backend import default_device
print(json.dumps([default_device().backend.name, exp.fun_name, np.asarray(out["a"]).tolist(), float(out["b"])]))
"""


@pytest.mark.single_backend
@pytest.mark.parametrize("there", ["xla", "numpy"])
def test_exported_program_runs_in_another_process(tmp_path: pathlib.Path, there: str) -> None:
    """Exported on XLA here, run from its bytes in a fresh process on ``there``: StableHLO
    compiled by XLA, or the jaxpr on the NumPy backend."""
    pytest.importorskip("jaxlib")
    with _backend("xla"):
        exp = export.export(jax.jit(_with_constant))(jax.ShapeDtypeStruct((2, 3), jnp.float32), 2.0)
    path = tmp_path / "f.minijax-export"
    path.write_bytes(exp.serialize())
    env = dict(os.environ, MINIJAX_BACKEND=there, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'backends'}")
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    backend, name, a, b = json.loads(done.stdout.strip().splitlines()[-1])
    assert (backend, name) == (there, "_with_constant")
    x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(a, _expected(x, 3.0)["a"], rtol=1e-6)
    np.testing.assert_allclose(b, x.sum(), rtol=1e-6)


@pytest.mark.single_backend
def test_xla_runs_the_exported_stablehlo_not_the_jaxpr() -> None:
    """The StableHLO in the payload is what XLA runs: a payload whose jaxpr says something
    else still computes the StableHLO's function there (and the jaxpr's on numpy)."""
    pytest.importorskip("jaxlib")
    with _backend("xla"):
        sin = export.export(jax.jit(jnp.sin))(jax.ShapeDtypeStruct((3,), jnp.float32))
        cos = export.export(jax.jit(jnp.cos))(jax.ShapeDtypeStruct((3,), jnp.float32))
        mixed = export.Exported(sin.fun_name, sin.in_tree, sin.in_avals, sin.out_tree, sin.out_avals, sin.platforms,
                                cos._jaxpr_text, sin.mlir_module(), [])
        mixed = export.deserialize(mixed.serialize())
        x = np.array([0.1, 0.2, 0.3], np.float32)
        np.testing.assert_allclose(mixed.call(x), np.sin(x), rtol=1e-6)
    with _backend("numpy"):
        np.testing.assert_allclose(mixed.call(x), np.cos(x), rtol=1e-6)


# --- transfer guards, live_arrays ----------------------------------------------------------------


def test_transfer_guard_disallows_implicit_host_to_device(backend_name: str) -> None:
    x = jnp.ones(3)
    f = jax.jit(lambda a: a * 2)
    f(x)
    with jax.transfer_guard("disallow"):
        f(x)  # no transfer: the argument is on the device already
        jax.device_put(np.ones(3))  # explicit: allowed
        np.asarray(x)  # a CPU array is read in place, as in JAX
        with pytest.raises(jax.errors.JaxRuntimeError, match=r"^INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray\(float32\[3\]\), dst_sharding=SingleDeviceSharding\(device=CpuDevice\(id=0\), memory_kind=device\)$"):
            f(np.ones(3, np.float32))
        with pytest.raises(jax.errors.JaxRuntimeError, match="Disallowed host-to-device"):
            jnp.array(np.ones(3))
    with jax.transfer_guard_host_to_device("disallow_explicit"), pytest.raises(jax.errors.JaxRuntimeError):
        jax.device_put(np.ones(3))
    f(np.ones(3, np.float32))  # allowed again after the block
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        with jax.transfer_guard("sometimes"):
            pass


def test_transfer_guard_log_logs(backend_name: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="minijax.transfer_guard"), jax.transfer_guard("log"):
        out = jax.jit(lambda a: a + 1)(np.ones(2, np.float32))
    np.testing.assert_allclose(out, 2.0)
    assert any("host-to-device transfer: aval=ShapedArray(float32[2])" in r.getMessage() for r in caplog.records)
    jax.config.update("jax_transfer_guard", "disallow")
    try:
        with pytest.raises(jax.errors.JaxRuntimeError):
            jnp.zeros(2) + np.ones(2)
    finally:
        jax.config.update("jax_transfer_guard", None)


def test_live_arrays_holds_the_arrays_alive_now(backend_name: str) -> None:
    a = jnp.arange(5.0)
    assert any(b is a for b in jax.live_arrays())
    assert any(b is a for b in jax.live_arrays(backend_name))
    marker = id(a)
    a.delete()
    assert all(id(b) != marker for b in jax.live_arrays())


# --- profiler ----------------------------------------------------------------------------------


@pytest.mark.single_backend
def test_profiler_writes_a_trace_perfetto_reads(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("jaxlib")

    @jax.profiler.annotate_function
    def step(v: Any) -> Any:
        return jax.jit(lambda a: a * 2)(v)

    with _backend("xla"):
        with jax.profiler.trace(tmp_path, create_perfetto_trace=True):
            with jax.profiler.TraceAnnotation("minijax-span"), jax.profiler.StepTraceAnnotation("train", step_num=1):
                step(jnp.ones(3)).block_until_ready()
        with pytest.raises(RuntimeError, match="No profile started"):
            jax.profiler.stop_trace()
        memory = jax.profiler.device_memory_profile()
    (run,) = (tmp_path / "plugins" / "profile").iterdir()
    assert list(run.glob("*.xplane.pb"))
    with gzip.open(run / "perfetto_trace.json.gz") as f:
        events = json.load(f)["traceEvents"]
    names = {e.get("name") for e in events}
    assert {"minijax-span", "train"} <= names and any("step" in str(n) for n in names)
    assert gzip.decompress(memory)  # a pprof protocol buffer


@pytest.mark.single_backend
def test_profiler_without_a_profiling_backend_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from minijax import profiler

    monkeypatch.setattr(profiler, "_profiler_backend", lambda name=None: None)
    with pytest.raises(NotImplementedError, match="needs a backend with a profiler"):
        jax.profiler.start_trace("/nonexistent")
    with pytest.raises(NotImplementedError, match="memory profiler"):
        jax.profiler.device_memory_profile()
    with jax.profiler.TraceAnnotation("nothing"):  # annotations stay harmless
        pass


@pytest.mark.single_backend
def test_transfer_guard_device_to_device() -> None:
    pytest.importorskip("jaxlib")
    from minijax_xla.backend import XlaBackend

    from minijax.array import Array

    class TwoCpus(XlaBackend):
        name = "xla_two_cpus_guard"

    d0, d1 = TwoCpus(num_cpu_devices=2).devices()
    on0 = jax.device_put(np.ones(3, np.float32), d0)
    on1 = jax.device_put(np.ones(3, np.float32), d1)
    loose = Array(on0._buf, on0.aval, on0._backend, d0, committed=False)  # follows a committed argument
    add = jax.jit(lambda a, b: a + b)
    with jax.transfer_guard_device_to_device("disallow"):
        assert jax.device_put(on0, d1).devices() == {d1}  # explicit: allowed
        with pytest.raises(jax.errors.JaxRuntimeError, match=r"^INVALID_ARGUMENT: Disallowed device-to-device transfer: aval=ShapedArray\(float32\[3\]\)"):
            add(on1, loose)  # moves ``loose`` to d1 implicitly
    with jax.transfer_guard_device_to_device("disallow_explicit"), pytest.raises(jax.errors.JaxRuntimeError, match="device-to-device"):
        jax.device_put(on0, d1)
    np.testing.assert_allclose(add(on1, loose), 2.0)  # allowed again after the blocks


@pytest.mark.single_backend
def test_transfer_guard_device_to_host_off_the_cpu() -> None:
    """A CPU array is read in place (no guard, as in JAX); an array on another platform is
    copied to the host, which the device-to-host guard watches (a stand-in GPU device here)."""
    from minijax.array import Array
    from minijax.backend import Device, get_backend

    numpy_backend = get_backend("numpy")
    x = jax.device_put(np.arange(3.0, dtype=np.float32), numpy_backend.devices()[0])
    gpu = Device(numpy_backend, 0, "gpu", "stand-in")
    elsewhere = Array(x._buf, x.aval, numpy_backend, gpu)
    with jax.transfer_guard_device_to_host("disallow"):
        np.testing.assert_allclose(np.asarray(x), [0, 1, 2])
        with pytest.raises(jax.errors.JaxRuntimeError, match=r"^INVALID_ARGUMENT: Disallowed device-to-host transfer: aval=ShapedArray\(float32\[3\]\)"):
            np.asarray(elsewhere)
        with pytest.raises(jax.errors.JaxRuntimeError, match="device-to-host"):
            elsewhere.tolist()
        np.testing.assert_allclose(jax.device_get(elsewhere), [0, 1, 2])  # explicit: allowed
    np.testing.assert_allclose(np.asarray(elsewhere), [0, 1, 2])


def test_export_for_other_platforms_and_the_platform_check(backend_name: str) -> None:
    # JAX's export page: a program exported for the TPU only refuses to run here unless the
    # platform check is disabled; one exported for several platforms runs wherever one of them is.
    check = export.DisabledSafetyCheck
    assert (str(check.platform()), check.custom_call("x").is_custom_call(), check.platform().is_custom_call()) == (
        "platform", "x", None)
    tpu_only = export.export(jax.jit(jax.lax.cos), platforms=["tpu"])(1.0)
    assert tpu_only.platforms == ("tpu",)
    with pytest.raises(ValueError, match=r"Function 'cos' was exported for platforms '\('tpu',\)' but it is used "
                                         r"on '\('cpu',\)'"):
        tpu_only.call(1.0)
    unchecked = export.export(jax.jit(jax.lax.cos), platforms=["tpu"], disabled_checks=[check.platform()])(1.0)
    assert float(unchecked.call(1.0)) == pytest.approx(np.cos(1.0))
    again = export.deserialize(unchecked.serialize())
    assert again.disabled_safety_checks == (check.platform(),) and float(again.call(0.0)) == 1.0
    several = export.export(jax.jit(jax.lax.cos), platforms=["TPU", "cpu", "cuda"])(1.0)
    assert several.platforms == ("TPU", "cpu", "cuda") and float(several.call(0.0)) == 1.0
    assert export.export(jax.jit(jax.lax.cos), platforms=[])(1.0).platforms == (export.default_export_platform(),)


def test_a_program_with_cpu_kernels_is_not_exported_for_another_platform() -> None:
    pytest.importorskip("minijax_xla", reason="the LAPACK custom calls are the xla backend's lowering")
    inv = jax.jit(jnp.linalg.inv, backend="xla")
    with pytest.raises(NotImplementedError, match=r"for platforms \('cuda',\): the program calls cpu kernels"):
        export.export(inv, platforms=["cuda"])(jnp.eye(2))
    assert export.export(inv, platforms=["cpu"])(jnp.eye(2)).platforms == ("cpu",)


def test_dim_as_value_checks_its_dimension() -> None:
    from minijax.primitives.structural import dim_as_value_p

    with pytest.raises(TypeError, match="dim_as_value dim must be an integer"):  # dim_as_value C1
        dim_as_value_p.bind(dim=2.5)
    with pytest.raises(OverflowError, match="dim_as_value: dim=1099511627776 does not fit"):  # dim_as_value C2
        dim_as_value_p.bind(dim=1 << 40)
    assert int(dim_as_value_p.bind(dim=7)) == 7
