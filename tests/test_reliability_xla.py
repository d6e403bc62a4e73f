"""Each hazard the jaxlib facts note lists, triggered through minijax's API: minijax's clear error.

``notes/xla-via-jaxlib.md`` lists what crashes the process or silently
computes garbage inside jaxlib. minijax must check for each before XLA sees
it. One test (or a few) per hazard, named after it:

====================================================  ==========================================
hazard (note section)                                 minijax's guard
====================================================  ==========================================
gotcha 2: an executable runs any same-size input      the runner checks every argument's aval
gotcha 3: device_put may alias the NumPy buffer       puts copy (IMMUTABLE_ONLY_DURING_CALL)
gotcha 4: np.asarray of a deleted array is junk       deleted arrays raise; ml_dtypes read right
gotcha 5: callback results unchecked; a module with   results checked against result_shape_dtypes;
  a callback compiled without it segfaults            modules checked before compiling
gotcha 6: collective_permute + channel_handle aborts  modules checked before compiling
section 5: deleted/donated buffers, wrong arity,      checked before execute, JAX's messages
  donating an argument passed twice
section 6: x64 narrowing and Python int overflow      puts keep 64 bits; OverflowError
section 2: out-of-range case index runs last branch   the same on both backends (switch clamps)
====================================================  ==========================================

Tests whose failure would crash the interpreter run in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")

import ml_dtypes  # noqa: E402

import minijax as jax  # noqa: E402
import minijax.numpy as jnp  # noqa: E402
from minijax import lax  # noqa: E402
from minijax.backend import get_backend  # noqa: E402
from minijax.config import config_context, enable_x64  # noqa: E402
from minijax.core import ShapedArray  # noqa: E402
from minijax.jaxpr import ClosedJaxpr  # noqa: E402

pytestmark = pytest.mark.single_backend  # every test names the xla backend itself

XLA = get_backend("xla")


@pytest.fixture(autouse=True)
def _on_xla() -> Any:
    with config_context(minijax_backend="xla"):
        yield


def _run_isolated(code: str) -> str:
    """Run ``code`` in a fresh interpreter (a crash there fails this test, not the run); its stdout."""
    env = {**os.environ, "MINIJAX_BACKEND": "xla", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300, env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"the subprocess died (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


# --- gotcha 2: executables do not check input dtypes ---------------------------------------------


def test_an_executable_refuses_an_argument_of_another_dtype_of_the_same_size() -> None:
    closed = jax.make_jaxpr(lambda v: v * 2.0)(np.ones(4, np.float32))
    run = XLA.compile(closed)
    good = XLA.put(np.arange(4, dtype=np.float32))
    assert np.asarray(XLA.get(run([good])[0])).tolist() == [0.0, 2.0, 4.0, 6.0]
    for wrong in (np.arange(4, dtype=np.int32), np.arange(4, dtype=np.uint32), np.ones(2, np.float64), np.ones(5, np.float32)):
        with pytest.raises(TypeError, match=r"argument 0 is .* compiled for f32\[4\]"):
            run([XLA.put(wrong)])
    with pytest.raises(TypeError, match="takes 1 arguments, got 2"):
        run([good, good])


def test_a_compiled_function_refuses_arguments_of_other_types() -> None:
    compiled = jax.jit(lambda v: v + 1.0).lower(jnp.ones(4)).compile()
    with pytest.raises(TypeError, match="Argument types differ from the types for which this computation was compiled"):
        compiled(jnp.ones(4, jnp.int32))
    with pytest.raises(TypeError, match="Argument types differ from the types for which this computation was compiled"):
        compiled(jnp.ones(3))
    assert np.asarray(compiled(jnp.zeros(4))).tolist() == [1.0] * 4


def test_an_ill_typed_hand_built_jaxpr_is_refused_before_xla_runs_it() -> None:
    # sin declared to return int32: the lowering's type check refuses it
    # (else the result handler would read f32 bytes as int32).
    closed = jax.make_jaxpr(jnp.sin)(np.ones(3, np.float32))
    eqn = closed.eqns[0]
    eqn.outvars[0].aval = ShapedArray((3,), np.int32)
    with pytest.raises(RuntimeError, match="produced tensor<3xf32>, expected tensor<3xi32>"):
        XLA.compile(ClosedJaxpr(closed.jaxpr, []))


# --- gotcha 3: a put may alias the host buffer ----------------------------------------------------


def _aligned(n: int) -> np.ndarray[Any, Any]:
    """A float32 array whose data is 64-byte aligned: the case jaxlib aliases by default."""
    raw = np.zeros(n * 4 + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    out = raw[start : start + n * 4].view(np.float32)
    assert out.ctypes.data % 64 == 0
    return out


@pytest.mark.parametrize("put", [jnp.asarray, jnp.array, jax.device_put, lambda h: jax.device_put(h, jax.devices()[0])])
def test_mutating_the_host_array_after_a_put_does_not_change_the_array(put: Any) -> None:
    host = _aligned(256)
    host[:] = 1.0
    x = put(host)
    host[:] = 7.0
    assert float(jnp.sum(x)) == 256.0 and np.asarray(x)[0] == 1.0


# --- gotcha 4: reading deleted arrays, ml_dtypes ----------------------------------------------------


@pytest.mark.parametrize(
    "use",
    [
        pytest.param(np.asarray, id="np.asarray"),
        pytest.param(lambda x: x + 1.0, id="eager"),
        pytest.param(lambda x: jax.jit(jnp.sin)(x), id="jit"),
        pytest.param(lambda x: x.block_until_ready(), id="block_until_ready"),
        pytest.param(lambda x: x.is_ready(), id="is_ready"),
        pytest.param(lambda x: jax.device_put(x, jax.devices()[0]), id="device_put"),
        pytest.param(lambda x: float(x[0]), id="float"),
        pytest.param(lambda x: x.tolist(), id="tolist"),
    ],
)
def test_a_deleted_array_raises_instead_of_reading_junk(use: Any) -> None:
    x = jnp.arange(3.0)
    x.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]"):
        use(x)
    assert "deleted" in repr(x)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_small_float_results_read_back_as_numbers(dtype: Any) -> None:
    x = jnp.arange(5, dtype=dtype) * 3
    host = np.asarray(x)
    assert host.dtype == np.dtype(dtype) and host.shape == (5,)
    assert host.astype(np.float32).tolist() == [0.0, 3.0, 6.0, 9.0, 12.0]
    assert np.asarray(jax.jit(lambda v: v / 2)(x)).astype(np.float32).tolist() == [0.0, 1.5, 3.0, 4.5, 6.0]


# --- section 5: donation --------------------------------------------------------------------------


def test_a_donated_array_is_deleted_and_reusing_it_raises() -> None:
    f = jax.jit(lambda v: v * 2.0, donate_argnums=0)
    x = jnp.arange(4.0)
    y = f(x)
    assert x.is_deleted() and np.asarray(y).tolist() == [0.0, 2.0, 4.0, 6.0]
    for use in (lambda: f(x), lambda: np.asarray(x), lambda: x + 1.0):
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            use()


def test_donating_an_array_also_passed_as_another_argument_is_refused_before_execution() -> None:
    f = jax.jit(lambda a, b: a + b, donate_argnums=0)
    x = jnp.arange(3.0)
    with pytest.raises(RuntimeError, match=r"jit\(<lambda>\): argument 0 \(flattened\) is donated, but the same array is also passed as argument 1"):
        f(x, x)
    # Nothing was executed or deleted: x is intact and the call works with a copy.
    assert not x.is_deleted() and np.asarray(f(x, x.copy())).tolist() == [0.0, 2.0, 4.0]


# --- gotcha 5: host callbacks ----------------------------------------------------------------------


def _callback_program(result: Any) -> Any:
    return jax.jit(lambda v: jax.pure_callback(lambda _: result, jax.ShapeDtypeStruct((3,), jnp.float32), v))


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (np.zeros(4, np.float32), r"Incorrect output shape for return value #0: Expected: \(3,\), Actual: \(4,\)"),
        (np.zeros(3, np.int32), "Incorrect output dtype for return value #0: Expected: float32, Actual: int32"),
        (np.zeros((3, 1), np.float32), "Incorrect output shape"),
        ("text", "pure_callback"),
    ],
)
def test_a_callback_result_of_the_wrong_type_raises_instead_of_truncating(result: Any, message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        np.asarray(_callback_program(result)(jnp.ones(3)))


def test_a_callback_that_raises_makes_the_call_raise() -> None:
    def boom(v: Any) -> Any:
        raise ValueError("boom in the callback")

    f = jax.jit(lambda v: jax.pure_callback(boom, jax.ShapeDtypeStruct((3,), jnp.float32), v))
    with pytest.raises(RuntimeError, match="boom in the callback"):
        f(jnp.ones(3))
    g = jax.jit(lambda v: jax.debug.callback(boom, v) or v)
    with pytest.raises(RuntimeError, match="boom in the callback"):
        g(jnp.ones(3)).block_until_ready()


def test_a_module_calling_an_unregistered_host_function_is_refused_not_run() -> None:
    # A lowering rule (a plug-in's, say) that emits the callback custom call
    # without registering the function: XLA would segfault running it.
    out = _run_isolated(
        """
        import minijax as jax, minijax.numpy as jnp
        from minijax.core import Primitive, abstract_eval_rules
        from minijax_xla import jaxlib_api
        from minijax_xla.lowering import ir_type, register

        p = Primitive("test_unregistered_callback")
        abstract_eval_rules[p] = lambda aval: aval

        @register(p.name)
        def rule(ctx, x):
            return jaxlib_api.emit_host_callback(0, [x], [ir_type(ctx.avals_out[0])], has_side_effect=True)

        try:
            jax.jit(lambda v: p.bind(v))(jnp.ones(3))
        except jaxlib_api.UnsafeModuleError as e:
            print("refused:", e)
        """
    )
    assert "refused: xla backend: refusing to compile" in out and "host callbacks" in out


def test_a_collective_permute_with_a_channel_handle_is_refused_not_run() -> None:
    out = _run_isolated(
        """
        import numpy as np
        import minijax as jax, minijax.numpy as jnp
        from jaxlib.mlir import ir
        from jaxlib.mlir.dialects import stablehlo as hlo
        from minijax.core import Primitive, abstract_eval_rules
        from minijax_xla import jaxlib_api
        from minijax_xla.lowering import register

        p = Primitive("test_channel_permute")
        abstract_eval_rules[p] = lambda aval: aval

        @register(p.name)
        def rule(ctx, x):
            pairs = ir.DenseIntElementsAttr.get(np.array([[0, 0]], np.int64))
            return [hlo.collective_permute(x, pairs, channel_handle=hlo.ChannelHandle.get(1, 1))]

        try:
            jax.jit(lambda v: p.bind(v))(jnp.ones(3))
        except jaxlib_api.UnsafeModuleError as e:
            print("refused:", e)
        """
    )
    assert "refused:" in out and "channel_handle" in out


def test_callbacks_never_go_through_the_persistent_cache(tmp_path: Any) -> None:
    # A stored executable does not hold the Python functions: loading one and
    # running it would crash. Two processes share a cache directory.
    code = f"""
        import numpy as np, minijax as jax, minijax.numpy as jnp
        jax.config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        f = jax.jit(lambda v: jax.pure_callback(lambda a: np.asarray(a) * 2, jax.ShapeDtypeStruct((3,), jnp.float32), v) + 1.0)
        print(np.asarray(f(np.arange(3.0, dtype=np.float32))).tolist())  # a host input: no other program
        """
    assert _run_isolated(code).strip() == "[1.0, 3.0, 5.0]"
    assert _run_isolated(code).strip() == "[1.0, 3.0, 5.0]"
    assert not [p for p in os.listdir(tmp_path) if p.startswith("minijax-")], "a program with a callback was cached"


# --- section 6: 64-bit values ------------------------------------------------------------------------


def test_64_bit_values_are_not_narrowed_by_a_put() -> None:
    with enable_x64(True):
        big = jnp.asarray(np.int64(2**33) + 5)
        fine = jnp.asarray(np.float64(1.0) + 1e-10)
        assert big.dtype == np.int64 and int(big) == 2**33 + 5
        assert fine.dtype == np.float64 and float(fine) - 1.0 > 0
        assert int(jax.jit(lambda v: v + 1)(big)) == 2**33 + 6


def test_a_python_int_too_large_for_the_dtype_raises_overflow_error() -> None:
    with pytest.raises(OverflowError, match="too large to convert to int32"):
        jnp.ones(3, jnp.int32) + 2**40
    with pytest.raises(OverflowError):
        jax.jit(lambda v: v)(2**40)


# --- section 2: case with an out-of-range index ---------------------------------------------------------


@pytest.mark.parametrize("index", [-7, -1, 0, 1, 2, 3, 100])
def test_switch_clamps_its_index_as_on_the_numpy_backend(index: int) -> None:
    branches = [lambda v: v + 1.0, lambda v: v * 10.0, lambda v: v - 100.0]
    expected = branches[min(max(index, 0), 2)](1.0)
    assert float(lax.switch(index, branches, 1.0)) == expected
    assert float(jax.jit(lambda i: lax.switch(i, branches, 1.0))(index)) == expected
    with config_context(minijax_backend="numpy"):
        assert float(jax.jit(lambda i: lax.switch(i, branches, 1.0))(index)) == expected


def test_the_backend_counts_its_live_buffers_and_executables() -> None:
    before = XLA.live_buffer_count()  # type: ignore[attr-defined]
    xs = [jnp.full((5,), float(i)) for i in range(3)]
    assert XLA.live_buffer_count() - before == 3  # type: ignore[attr-defined]
    del xs
    assert XLA.live_buffer_count() == before  # type: ignore[attr-defined]
    assert XLA.live_executable_count() > 0  # type: ignore[attr-defined]
