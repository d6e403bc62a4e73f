"""The XLA backend's infrastructure: devices, put/get, eager ops, jit, donation, checks.

Primitive coverage is tested per family elsewhere; this file tests the
machinery with a handful of elementwise ops.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")


from minijax_xla import jaxlib_api
from minijax_xla.lowering import LOWERINGS, LoweringRuleContext, lower_jaxpr

import minijax as jax
import minijax.numpy as jnp
from minijax.array import Array
from minijax.backend import get_backend
from minijax.config import enable_x64
from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from minijax.primitives import elementwise as ew

pytestmark = pytest.mark.single_backend  # compares the xla backend with numpy, by name


def _register_stand_in_rules() -> None:
    """Rules for the ops these tests use, only where the rule files lack them."""
    from jaxlib.mlir.dialects import stablehlo as hlo
    from minijax_xla.backend import load_rules
    from minijax_xla.lowering import ir_type

    load_rules()
    stand_ins: dict[str, Any] = {
        "add": lambda ctx, x, y: [hlo.add(x, y)],
        "mul": lambda ctx, x, y: [hlo.multiply(x, y)],
        "sin": lambda ctx, x, **_: [hlo.sine(x)],
        "convert_element_type": lambda ctx, x, **_: [hlo.convert(ir_type(ctx.avals_out[0]), x)],
    }
    for name, rule in stand_ins.items():
        LOWERINGS.setdefault(name, rule)


_register_stand_in_rules()

XLA = get_backend("xla")
DEVICE = XLA.devices()[0]
NUMPY = get_backend("numpy")


def on_xla(x: Any, dtype: Any = None) -> Any:
    # Any, not Array: Array's operators are attached at import time, so a
    # type checker does not see them.
    return jax.device_put(np.asarray(x, dtype=dtype), DEVICE)


def is_xla_buffer(x: Array) -> bool:
    return x._backend is XLA and type(x._buf).__name__ == "ArrayImpl"


# --- devices ------------------------------------------------------------------


def test_devices() -> None:
    devices = XLA.devices()
    assert len(devices) >= 1
    assert devices[0].platform == "cpu" and devices[0].id == 0
    assert devices[0].backend is XLA
    assert XLA.name == "xla" and XLA.platform == "cpu"
    assert XLA.priority > NUMPY.priority  # XLA is the default wherever jaxlib imports
    assert repr(devices[0]) == "CpuDevice(id=0)"


def test_info_lists_xla_when_registered() -> None:
    import io

    from minijax.cli import info

    out = io.StringIO()
    info(out)
    assert "xla: platform cpu, priority 10, devices [CpuDevice(id=0)]" in out.getvalue()


# --- put / get -------------------------------------------------------------------

DTYPES = [
    np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32,
    np.float16, ml_dtypes.bfloat16, np.float32,
]  # fmt: skip
DTYPES_X64 = [np.int64, np.uint64, np.float64]


@pytest.mark.parametrize("dtype", DTYPES + DTYPES_X64, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (5,), (2, 3)], ids=str)
def test_put_get_round_trip(dtype: Any, shape: tuple[int, ...]) -> None:
    host = (np.arange(int(np.prod(shape))) % 7).reshape(shape).astype(dtype)
    buf = XLA.put(host)
    back = XLA.get(buf)
    assert back.dtype == np.dtype(dtype) and back.shape == shape
    np.testing.assert_array_equal(back.astype(np.float64), host.astype(np.float64))
    assert not back.flags.writeable


def test_put_copies_the_host_array() -> None:
    host = np.zeros(16, np.float32)  # 64-byte aligned: ZERO_COPY would alias it
    x = on_xla(host)
    host[0] = 42.0
    assert np.asarray(x)[0] == 0.0


def test_put_non_contiguous() -> None:
    host = np.arange(16, dtype=np.int32).reshape(4, 4)[:, ::2]
    np.testing.assert_array_equal(np.asarray(on_xla(host)), host)


def test_unsupported_dtype_in_module_raises_type_error() -> None:
    with pytest.raises(TypeError, match="does not support dtype float6_e2m3fn"):
        jaxlib_api.element_type(np.dtype(ml_dtypes.float6_e2m3fn))


# --- eager ------------------------------------------------------------------------


def test_eager_add_matches_numpy() -> None:
    a, b = np.arange(8, dtype=np.float32), np.linspace(-1, 1, 8, dtype=np.float32)
    z = on_xla(a) + on_xla(b)
    assert is_xla_buffer(z)  # stays on device
    assert z.device is DEVICE and z.devices() == {DEVICE}
    np.testing.assert_array_equal(np.asarray(z), a + b)
    assert z.dtype == np.float32


def test_eager_bfloat16_result_reads_back() -> None:
    a = np.array([1.5, 2.25, -3.0], ml_dtypes.bfloat16)
    z = on_xla(a) * on_xla(a)
    assert z.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(np.asarray(z), a * a)


def test_eager_runner_cached_per_signature() -> None:
    x = on_xla(np.ones(3, np.float32))
    before = len(XLA._eager_cache)  # type: ignore[attr-defined]
    _ = x + x
    _ = x + x
    after = len(XLA._eager_cache)  # type: ignore[attr-defined]
    assert after - before <= 1


# --- jit ----------------------------------------------------------------------------


def program(x: Any, y: Any) -> Any:
    return jnp.sin(x) * y + x


def test_jit_matches_numpy_backend() -> None:
    a = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    b = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    got = jax.jit(program, backend="xla")(on_xla(a), on_xla(b))
    want = jax.jit(program, backend="numpy")(a, b)
    assert is_xla_buffer(got)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


def test_jit_accepts_host_and_numpy_backend_arguments() -> None:
    a = np.arange(4, dtype=np.float32)
    f = jax.jit(program, backend="xla")
    got = f(a, jax.device_put(a))  # numpy-backend Array and host array
    assert is_xla_buffer(got)
    np.testing.assert_allclose(np.asarray(got), np.sin(a) * a + a, rtol=1e-6)


def test_jit_backend_holds_on_repeated_calls() -> None:
    # The second and later calls take jit's hot path: it must still run where backend= says.
    a = on_xla(np.arange(4, dtype=np.float32))
    f = jax.jit(program, backend="numpy")
    results = [f(a, a) for _ in range(3)]
    assert not any(is_xla_buffer(r) for r in results)
    for r in results:
        np.testing.assert_allclose(np.asarray(r), np.sin(np.arange(4, dtype=np.float32)) * np.arange(4) + np.arange(4), rtol=1e-6)
    g = jax.jit(program, backend="xla")
    assert all(is_xla_buffer(g(a, a)) for _ in range(3))


def test_lower_as_text_is_stablehlo() -> None:
    x = on_xla(np.ones(4, np.float32))
    text = jax.jit(program, backend="xla").lower(x, x).as_text()
    assert "stablehlo" in text and "func.func" in text and "@main" in text


def test_nested_jit_lowers_to_a_call_and_runs() -> None:
    inner = jax.jit(lambda a: jnp.sin(a) * a)

    def outer(a: Any) -> Any:
        return inner(a) + inner(a + a)

    x = np.linspace(0, 1, 5, dtype=np.float32)
    f = jax.jit(outer, backend="xla")
    text = f.lower(x).as_text()
    assert "func.call" in text or "call @" in text
    assert "private" in text
    want = np.sin(x) * x + np.sin(x + x) * (x + x)
    np.testing.assert_allclose(np.asarray(f(on_xla(x))), want, rtol=1e-6)


@pytest.mark.parametrize("size", [1, 100], ids=["inline", "parameter"])
def test_closed_over_consts(size: int) -> None:
    c_host = np.linspace(1, 2, size, dtype=np.float32)
    c = jax.device_put(c_host)

    def f(x: Any) -> Any:
        return x * c + 1.0

    x = np.full(size, 3.0, np.float32)
    got = jax.jit(f, backend="xla")(on_xla(x))
    np.testing.assert_allclose(np.asarray(got), x * c_host + 1.0, rtol=1e-6)


def test_jit_output_that_is_an_input_or_literal() -> None:
    f = jax.jit(lambda x: (x, 2.0), backend="xla")
    x = on_xla(np.arange(3, dtype=np.int32))
    y, two = f(x)
    np.testing.assert_array_equal(np.asarray(y), np.arange(3))
    assert float(two) == 2.0


def test_jit_several_outputs_and_zero_size() -> None:
    f = jax.jit(lambda a, b: (a + b, a * b, jnp.sin(b)), backend="xla")
    empty = np.zeros((0, 3), np.float32)
    s, p, sb = f(on_xla(empty), on_xla(empty))
    assert s.shape == p.shape == sb.shape == (0, 3)
    a, b = np.float32(1.5), np.float32(-2.0)
    s, p, sb = f(on_xla(a), on_xla(b))
    assert (float(s), float(p)) == (-0.5, -3.0) and s.shape == ()
    np.testing.assert_allclose(float(sb), np.sin(b), rtol=1e-6)


# --- readiness, deletion, donation ------------------------------------------------------


def test_block_until_ready_and_is_ready() -> None:
    x = on_xla(np.ones((64, 64), np.float32))
    y = jax.jit(program, backend="xla")(x, x)
    assert y.block_until_ready() is y
    assert y.is_ready() is True
    assert XLA.is_ready(y._buf)


def test_deleted_array_raises() -> None:
    x = on_xla(np.ones(4, np.float32))
    x.delete()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        x.is_ready()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        _ = x + 1.0


def test_buffer_deleted_under_the_array_raises() -> None:
    # An XLA buffer donated behind minijax's back: get and execute both
    # report the deletion instead of XLA's obscure error or a 0-d object array.
    x = on_xla(np.ones(4, np.float32))
    x._buf.delete()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        _ = x + x
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        x.block_until_ready()


def test_donated_array_is_deleted_after_jit() -> None:
    f = jax.jit(lambda x: x * 2.0, backend="xla", donate_argnums=0)
    x = on_xla(np.arange(4, dtype=np.float32))
    y = f(x)
    np.testing.assert_array_equal(np.asarray(y), [0.0, 2.0, 4.0, 6.0])
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(x)


def _one_op(prim: Any, avals: list[ShapedArray], out: ShapedArray) -> ClosedJaxpr:
    invars = [Var(a) for a in avals]
    outvar = Var(out)
    return ClosedJaxpr(Jaxpr([], invars, [outvar], [JaxprEqn(list(invars), [outvar], prim, {})]), [])


def test_compile_with_donation_reuses_the_buffer() -> None:
    aval = ShapedArray((256,), np.float32)
    run = XLA.compile(_one_op(ew.add_p, [aval, aval], aval), donated_invars=[True, False])
    a, b = XLA.put(np.ones(256, np.float32)), XLA.put(np.ones(256, np.float32))
    pointer = a.unsafe_buffer_pointer()
    (out,) = run([a, b])
    assert a.is_deleted() and not b.is_deleted()
    assert out.unsafe_buffer_pointer() == pointer
    np.testing.assert_array_equal(XLA.get(out), np.full(256, 2.0, np.float32))
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        run([a, b])


def test_input_aval_check() -> None:
    aval = ShapedArray((4,), np.float32)
    run = XLA.compile(_one_op(ew.add_p, [aval, aval], aval))
    good = XLA.put(np.ones(4, np.float32))
    same_bytes = XLA.put(np.ones(4, np.int32))
    with pytest.raises(TypeError, match=r"argument 1 is i32\[4\].*compiled for f32\[4\]"):
        run([good, same_bytes])
    with pytest.raises(TypeError, match="shape|compiled for"):
        run([good, XLA.put(np.ones(5, np.float32))])
    with pytest.raises(TypeError, match="takes 2 arguments"):
        run([good])


# --- lowering errors ----------------------------------------------------------------------


def test_missing_rule_names_the_primitive() -> None:
    from minijax.core import Primitive

    prim = Primitive("no_such_op_for_xla")
    aval = ShapedArray((2,), np.float32)
    with pytest.raises(NotImplementedError, match="no lowering rule for primitive 'no_such_op_for_xla'"):
        lower_jaxpr(_one_op(prim, [aval], aval))


def test_failing_rule_is_reraised_with_the_equation() -> None:
    from minijax.core import Primitive

    prim = Primitive("xla_test_failing_op")

    def rule(ctx: LoweringRuleContext, x: Any) -> list[Any]:
        raise ValueError("bad parameter")

    LOWERINGS["xla_test_failing_op"] = rule
    try:
        aval = ShapedArray((2,), np.float32)
        with pytest.raises(ValueError, match="bad parameter(.|\n)*xla_test_failing_op"):
            lower_jaxpr(_one_op(prim, [aval], aval))
    finally:
        del LOWERINGS["xla_test_failing_op"]


# --- x64 ---------------------------------------------------------------------------------


def test_x64_program_runs_on_xla() -> None:
    with enable_x64(True):
        big = np.array([2**40, -(2**35), 7], np.int64)
        xi = on_xla(big)
        assert xi.dtype == np.int64
        np.testing.assert_array_equal(np.asarray(xi + xi), big + big)
        xf = on_xla(np.array([1.0, 1e-10], np.float64))
        got = jax.jit(lambda a: a * 3.0 + 1.0, backend="xla")(xf)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(got), np.array([4.0, 1.0 + 3e-10]))


def test_jit_without_backend_follows_the_data() -> None:
    # As in JAX: computation happens where the (committed) arguments live.
    f = jax.jit(lambda v: v * 2.0)
    on_xla = jax.device_put(np.arange(3.0, dtype=np.float32), get_backend("xla").devices()[0])
    y = f(on_xla)
    assert y._backend is get_backend("xla") and is_xla_buffer(y)
    z = f(jax.device_put(np.arange(3.0, dtype=np.float32), NUMPY.devices()[0]))
    assert z._backend is get_backend("numpy")
    np.testing.assert_array_equal(np.asarray(y), np.asarray(z))
    assert f._cache_size() == 2  # one trace per backend


def test_the_default_backend_is_chosen_by_flag_and_environment() -> None:
    import subprocess
    import sys

    from minijax.config import config_context

    with config_context(minijax_backend="xla"):
        assert jnp.ones(2)._backend is get_backend("xla")
        assert jax.default_backend() == "cpu"
    with config_context(minijax_backend="numpy"):
        assert jnp.ones(2)._backend is get_backend("numpy")
    program = "import minijax.numpy as jnp; print(jnp.ones(2)._backend.name)"
    env = {**__import__("os").environ, "MINIJAX_BACKEND": "xla"}
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "xla", out.stderr
    # With neither flag nor variable, XLA is the default because jaxlib imports here.
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("MINIJAX_BACKEND", "JAX_PLATFORMS")}
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "xla", out.stderr


def test_float0_values_put_on_xla_read_back_as_float0() -> None:
    # jaxlib knows no float0: the backend puts booleans and keeps the label
    # itself (jaxlib 0.11+ refuses to relabel the buffer's own aval).
    zeros = np.zeros((2, 3), jax.dtypes.float0)
    buffer = XLA.put(zeros)
    assert jaxlib_api.buffer_aval(buffer) == ShapedArray((2, 3), jax.dtypes.float0)
    back = XLA.get(buffer)
    assert back.dtype == jax.dtypes.float0 and back.shape == (2, 3)
    plain = XLA.put(np.zeros((2, 3), np.bool_))
    assert jaxlib_api.buffer_aval(plain).dtype == np.bool_  # an ordinary bool buffer keeps its dtype
    # A gradient with respect to an integer input is float0 zeros, on XLA too.
    g = jax.grad(lambda x, n: x * n, argnums=1, allow_int=True)(jnp.float32(2.0), jnp.int32(3))
    assert g.dtype == jax.dtypes.float0 and g.shape == ()
