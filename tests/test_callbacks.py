"""Host callbacks: debug.print, debug.callback, pure_callback, io_callback.

Every test runs on each backend (the ``backend`` fixture makes it the
default): eagerly, under ``jit`` (the NumPy interpreter, or XLA's host-callback
custom call) and under ``make_jaxpr``. Printed output is compared line by line
with what JAX prints for the same program (checked against real JAX in
tests/test_callbacks_oracle.py). Unordered prints of one compiled program may
come in any order on XLA (JAX's too), so those are compared as sorted lists.
"""

from __future__ import annotations

import importlib.util
import logging
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import debug
from minijax.array import Array
from minijax.callbacks import effects_barrier, io_callback, pure_callback
from minijax.config import config, enable_x64
from minijax.core import ShapedArray
from minijax.primitives.callbacks import debug_print_p, io_callback_p, pure_callback_p

# Each test names its backend through the fixture below (not the suite-wide
# per-backend run), so that it runs once per backend either way.
pytestmark = pytest.mark.single_backend

BACKENDS = ["numpy"] + (["xla"] if importlib.util.find_spec("jaxlib") is not None else [])
S = jax.ShapeDtypeStruct
SPEC = pathlib.Path(__file__).resolve().parent.parent / "spec" / "primitives" / "callbacks.md"


@pytest.fixture(params=BACKENDS, autouse=True)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    name: str = request.param
    previous = config.read("minijax_backend")
    config.update("minijax_backend", name)
    try:
        yield name
    finally:
        config.update("minijax_backend", previous)


def lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


# ---------------------------------------------------------------------------
# debug.print


def test_print_formats_arrays_kwargs_and_static_arguments_eagerly(capsys: pytest.CaptureFixture[str]) -> None:
    x = jnp.arange(3.0)
    debug.print("x is {} and {y}", x, y=x + 1)
    debug.print("{x:.2f}", x=jnp.float32(1.234))
    debug.print("{} {} {}", x, "static-str", 2)
    debug.print("{a[0]} {b}", a=[x, 1], b={"k": 2})
    debug.print("{0} {0}", x)
    debug.print("{x!r}", x=x)
    debug.print("{x} {y} {z}", x=2.5, y=True, z=None)
    debug.print("plain")
    debug.print("no placeholders", x, 3, skip_format_check=True)
    assert lines(capsys) == [
        "x is [0. 1. 2.] and [1. 2. 3.]",
        "1.23",
        "[0. 1. 2.] static-str 2",
        "[0. 1. 2.] {'k': Array(2, dtype=int32, weak_type=True)}",
        "[0. 1. 2.] [0. 1. 2.]",
        "Array([0., 1., 2.], dtype=float32)",
        "2.5 True None",
        "plain",
        "no placeholders [0. 1. 2.] 3",
    ]


def test_print_under_jit_prints_the_computed_values_at_each_call(capsys: pytest.CaptureFixture[str]) -> None:
    @jax.jit
    def f(x):
        debug.print("x={x} doubled={y}", x=x, y=x * 2)
        return x + 1

    assert capsys.readouterr().out == ""
    out = f(jnp.arange(2.0))
    assert np.asarray(out).tolist() == [1.0, 2.0]
    f(jnp.array([5.0, 6.0]))
    assert lines(capsys) == ["x=[0. 1.] doubled=[0. 2.]", "x=[5. 6.] doubled=[10. 12.]"]


def test_print_in_a_function_returning_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert jax.jit(lambda x: debug.print("only {}", x))(jnp.int32(7)) is None
    assert lines(capsys) == ["only 7"]


def test_ordered_prints_come_in_program_order_under_jit(capsys: pytest.CaptureFixture[str]) -> None:
    def f(x):
        for i in range(12):
            x = jnp.sin(x) if i % 2 else x * 2  # computations between the prints
            debug.print("step {i}: {x}", i=i, x=x, ordered=True)
        return x

    jax.jit(f)(jnp.float32(0.5))
    printed = lines(capsys)
    assert [p.split(":")[0] for p in printed] == [f"step {i}" for i in range(12)]
    eager = []
    x = jnp.float32(0.5)
    for i in range(12):
        x = jnp.sin(x) if i % 2 else x * 2
        eager.append(f"step {i}: {x}")
    assert printed == eager


def test_unordered_prints_of_a_compiled_program_all_happen(capsys: pytest.CaptureFixture[str]) -> None:
    def f(x):
        for i in range(6):
            debug.print("unordered {i} {x}", i=i, x=x + i)
        return x

    jax.jit(f)(jnp.float32(1.0))
    assert sorted(lines(capsys)) == [f"unordered {i} {1.0 + i}" for i in range(6)]


def test_print_options_are_those_in_force_when_traced(capsys: pytest.CaptureFixture[str]) -> None:
    with np.printoptions(precision=2):
        f = jax.jit(lambda x: debug.print("{}", x))
        f(jnp.array([1 / 3, 2 / 3]))  # traced (and run) with precision 2
    f(jnp.array([1 / 3, 2 / 3]))  # replayed: still the traced options
    debug.print("{}", jnp.array([1 / 3]))  # eager, now: the current options
    assert lines(capsys) == ["[0.33 0.67]", "[0.33 0.67]", "[0.33333334]"]


def test_print_two_call_form_and_log(capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    printer = debug.print(ordered=True)
    assert callable(printer)
    printer("two-call {}", jnp.int32(3))
    with caplog.at_level(logging.INFO, logger="minijax.debug"):
        debug.log("logged {x}", x=jnp.float32(1.5))
    assert lines(capsys) == ["two-call 3"]
    (record,) = [r for r in caplog.records if r.name == "minijax.debug"]
    assert record.getMessage() == "logged 1.5"
    assert record.levelno == logging.INFO and record.pathname == __file__


def test_print_rejects_bad_format_arguments() -> None:
    x = jnp.arange(3.0)
    with pytest.raises(ValueError, match=r"unused positional arguments: \[Array\(\[0., 1., 2.\], dtype=float32\)\]"):
        debug.print("{}", x, x)
    with pytest.raises(ValueError, match=r"unused keyword arguments: \['y'\].*f-string"):
        debug.print("{}", x, y=x)
    with pytest.raises(IndexError):  # what str.format raises for a missing positional
        debug.print("{} {}", x)
    with pytest.raises(TypeError, match="the format must be a str, got int"):
        debug.print(3, x)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"unexpected arguments in the two-call form: args=\(\) kwargs=\{'y': 3\}"):
        debug.print(ordered=True, y=3)
    with pytest.raises(ValueError, match="unused positional"):  # checked at trace time, under jit too
        jax.jit(lambda v: debug.print("no field", v))(x)


def test_a_format_error_at_print_time_is_the_one_str_format_raises() -> None:
    # The format spec applies to each value, as in JAX: ".2f" does not fit an array.
    with pytest.raises(TypeError, match="unsupported format string"):
        debug.print("{x:.2f}", x=jnp.arange(2.0))


def test_print_inside_nested_jit(capsys: pytest.CaptureFixture[str]) -> None:
    inner = jax.jit(lambda x: (debug.print("inner {}", x), x * 3)[1])
    out = jax.jit(lambda x: inner(x + 1))(jnp.int32(1))
    assert int(out) == 6 and lines(capsys) == ["inner 2"]


# ---------------------------------------------------------------------------
# debug.callback


def test_callback_receives_arrays_static_arguments_and_kwargs() -> None:
    calls: list[tuple[Any, ...]] = []

    def record(a, n, s, *, kw):
        calls.append((type(a), np.asarray(a).tolist(), type(n), int(n), s, np.asarray(kw).tolist()))
        return "ignored"

    x = jnp.arange(3.0)
    assert debug.callback(record, x, 2, "s", kw=x * 2) is None
    jax.jit(lambda v: debug.callback(record, v, 2, "s", kw=v * 2))(x)
    want = (Array, [0.0, 1.0, 2.0], Array, 2, "s", [0.0, 2.0, 4.0])
    assert calls == [want, want]


def test_callback_two_call_form_and_order() -> None:
    seen: list[int] = []

    def f(x):
        for i in range(8):
            debug.callback(ordered=True)(lambda v, i=i: seen.append(i), x)
        return x

    jax.jit(f)(jnp.float32(0.0))
    assert seen == list(range(8))


def test_callback_rejects_a_non_callable_and_two_call_extras() -> None:
    with pytest.raises(TypeError, match="must be callable, but got an object of type int"):
        debug.callback(3, jnp.float32(1.0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be callable, but got an object of type Array"):
        debug.callback(jnp.float32(1.0), ordered=True)  # the callback left out
    with pytest.raises(TypeError, match="two-call form"):
        debug.callback(ordered=True, extra=1)


def test_an_exception_in_a_debug_callback_reaches_the_caller() -> None:
    def boom(x):
        raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError, match="boom"):
        debug.callback(boom, jnp.float32(1.0))
    with pytest.raises((ZeroDivisionError, RuntimeError), match="boom"):  # XLA reports it as a RuntimeError
        jax.jit(lambda x: debug.callback(boom, x))(jnp.float32(1.0))


# ---------------------------------------------------------------------------
# pure_callback


def test_pure_callback_eager_and_jit() -> None:
    x = jnp.arange(3.0)
    seen: list[type] = []

    def sin(a):
        seen.append(type(a))
        return np.sin(a)

    want = np.sin(np.arange(3.0, dtype=np.float32))
    eager = pure_callback(sin, S((3,), np.float32), x)
    jitted = jax.jit(lambda v: pure_callback(sin, S(v.shape, v.dtype), v))(x)
    for out in (eager, jitted):
        assert isinstance(out, Array) and out.dtype == np.float32 and not out.weak_type
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    assert seen == [Array, Array]


def test_pure_callback_pytrees_in_and_out_and_keyword_arguments() -> None:
    def f(pair, *, scale):
        a, b = pair
        return {"sum": np.asarray(a) + np.asarray(b), "scaled": (np.asarray(a) * np.asarray(scale)).astype(np.int32)}

    shapes = {"sum": S((2,), np.int32), "scaled": S((2,), np.int32)}
    args = (jnp.array([1, 2]), jnp.array([10, 20]))
    for run in (
        lambda: pure_callback(f, shapes, args, scale=jnp.int32(3)),
        lambda: jax.jit(lambda p, s: pure_callback(f, shapes, p, scale=s))(args, jnp.int32(3)),
    ):
        out = run()
        assert sorted(out) == ["scaled", "sum"]
        assert np.asarray(out["sum"]).tolist() == [11, 22] and np.asarray(out["scaled"]).tolist() == [3, 6]


def test_pure_callback_takes_results_at_their_canonical_dtype() -> None:
    # float64 and Python scalars become float32/int32 with x64 off, as in JAX.
    x = jnp.float32(1.0)
    out = jax.jit(
        lambda v: pure_callback(
            lambda a: (np.ones(3, np.float64), 1.5, 7), (S((3,), np.float32), S((), np.float32), S((), np.int32)), v
        )
    )(x)
    assert [o.dtype for o in out] == [np.float32, np.float32, np.int32]
    assert [np.asarray(o).tolist() for o in out] == [[1.0, 1.0, 1.0], 1.5, 7]


def test_pure_callback_with_x64() -> None:
    with enable_x64(True):
        x = jnp.arange(3.0)
        assert x.dtype == np.float64
        out = jax.jit(lambda v: pure_callback(lambda a: np.asarray(a) * 2, S((3,), np.float64), v))(x)
        assert out.dtype == np.float64 and np.asarray(out).tolist() == [0.0, 2.0, 4.0]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize(
    ("result", "message"),
    [
        (np.ones(4, np.float32), r"Incorrect output shape for return value #0: Expected: \(3,\), Actual: \(4,\)"),
        (np.ones(3, np.int32), "Incorrect output dtype for return value #0: Expected: float32, Actual: int32"),
        ((np.ones(3, np.float32), 1), "Mismatched number of outputs from callback. Expected: 1, Actual: 2"),
    ],
    ids=["shape", "dtype", "count"],
)
def test_pure_callback_checks_what_the_callback_returns(jit: bool, result: Any, message: str) -> None:
    def f(x):
        return pure_callback(lambda a: result, S((3,), np.float32), x)

    with pytest.raises(RuntimeError, match=message):
        out = (jax.jit(f) if jit else f)(jnp.ones(3))
        np.asarray(out)  # never reached: the call raises


def test_an_exception_in_pure_callback_is_xlas_runtime_error_eagerly_and_under_jit() -> None:
    def f(x):
        return pure_callback(lambda a: 1 / 0, S((), np.float32), x)

    for g in (f, jax.jit(f)):
        with pytest.raises(jax.errors.JaxRuntimeError) as info:
            np.asarray(g(jnp.float32(1.0)))
        text = str(info.value)
        assert text.startswith("INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):")
        assert text.rstrip().endswith("ZeroDivisionError: division by zero")


def test_an_exception_in_debug_callback_passes_through_eagerly_and_is_xlas_error_under_jit() -> None:
    def cb(x: Any) -> None:
        raise ValueError("boom")

    def f(x: Any) -> Any:
        jax.debug.callback(cb, x)
        return x

    with pytest.raises(ValueError, match="boom"):
        f(1.0)
    with pytest.raises(jax.errors.JaxRuntimeError, match="CpuCallback error calling callback") as info:
        np.asarray(jax.jit(f)(1.0))
    assert "ValueError: boom" in str(info.value)


def test_pure_callback_rejects_bad_arguments() -> None:
    x = jnp.ones(3)
    ok = S((3,), np.float32)
    with pytest.raises(ValueError, match="64-bit types when `jax_enable_x64` is disabled"):
        pure_callback(lambda a: a, S((3,), np.float64), x)
    with pytest.raises(ValueError, match="vmap_method must be one of .* but got: bad"):
        pure_callback(lambda a: a, ok, x, vmap_method="bad")
    with pytest.raises(NotImplementedError, match="sharding=1 is not supported"):
        pure_callback(lambda a: a, ok, x, sharding=1)
    with pytest.raises(TypeError, match=r"type <class 'str'> and was passed to pure_callback at position 1"):
        pure_callback(lambda a, s: a, ok, x, "str")
    with pytest.raises(TypeError, match="must be callable"):
        pure_callback(3, ok, x)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must have a shape and a dtype"):
        pure_callback(lambda a: a, 3, x)


def test_pure_callback_passes_unknown_keywords_to_the_callback_as_jax_does() -> None:
    # JAX 0.10.2 has no `vectorized` argument: like any other keyword it goes to the callback.
    got: dict[str, Any] = {}

    def f(a, **kwargs):
        got.update(kwargs)
        return a

    pure_callback(f, S((3,), np.float32), jnp.ones(3), vectorized=True)
    assert list(got) == ["vectorized"] and bool(got["vectorized"]) is True


def test_pure_callback_with_no_operands_and_empty_results() -> None:
    f = jax.jit(lambda: pure_callback(lambda: np.float32(3), S((), np.float32)))
    assert float(f()) == 3.0
    g = jax.jit(lambda x: pure_callback(lambda a: np.zeros((0, 3), np.float32), S((0, 3), np.float32), x))
    assert g(jnp.ones(2)).shape == (0, 3)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float16", "bfloat16", "int32"])
def test_pure_callback_round_trips_every_dtype(dtype: str) -> None:
    x = jnp.ones((2, 2), dtype)
    out = jax.jit(lambda v: pure_callback(lambda a: np.asarray(a), S(v.shape, v.dtype), v))(x)
    assert out.dtype == x.dtype and np.array_equal(np.asarray(out), np.asarray(x))


def test_pure_callback_sees_row_major_values_after_a_transpose() -> None:
    # XLA could give a transposed operand a column-major layout; the call asks for row major.
    x = jnp.arange(6.0).reshape(2, 3)
    seen: list[list[list[float]]] = []

    def f(a):
        seen.append(np.asarray(a).tolist())
        return np.asarray(a)[::-1].copy()

    out = jax.jit(lambda v: pure_callback(f, S((3, 2), np.float32), v.T))(x)
    assert seen == [[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]]
    assert np.asarray(out).tolist() == [[2.0, 5.0], [1.0, 4.0], [0.0, 3.0]]


def test_a_callback_may_compute_with_the_arrays_it_gets() -> None:
    out = jax.jit(lambda v: pure_callback(lambda a: jnp.sin(a) * 2, S((3,), np.float32), v))(jnp.ones(3))
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(np.ones(3, np.float32)), rtol=1e-6)


# ---------------------------------------------------------------------------
# io_callback


def test_io_callback_runs_in_order_and_even_when_its_result_is_unused() -> None:
    log: list[float] = []

    def record(x):
        log.append(float(x))
        return np.int32(len(log))

    def f(x):
        n = io_callback(record, S((), np.int32), x, ordered=True)
        io_callback(record, S((), np.int32), x + 1, ordered=True)  # result unused: still called
        return n

    assert int(jax.jit(f)(jnp.float32(1.0))) == 1
    assert log == [1.0, 2.0]
    assert int(f(jnp.float32(5.0))) == 3 and log == [1.0, 2.0, 5.0, 6.0]


def test_io_callback_returning_nothing() -> None:
    seen: list[float] = []
    assert jax.jit(lambda x: io_callback(lambda a: seen.append(float(a)), None, x))(jnp.float32(2.0)) is None
    assert seen == [2.0]


def test_io_callback_errors_are_runtime_errors() -> None:
    with pytest.raises(RuntimeError, match="io_callback: Incorrect output shape"):
        jax.jit(lambda x: io_callback(lambda a: np.ones(2, np.float32), S((), np.float32), x))(jnp.float32(0.0))
    with pytest.raises(NotImplementedError, match="io_callback: sharding"):
        io_callback(lambda a: a, S((), np.float32), jnp.float32(0.0), sharding="device")


def test_effects_barrier_returns_at_once() -> None:
    assert effects_barrier() is None


# ---------------------------------------------------------------------------
# Autodiff


def test_debug_callbacks_under_jvp_and_grad_see_the_primals(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[float] = []

    def f(x):
        debug.print("x={}", x)
        debug.callback(lambda v: seen.append(float(v)), x)
        return x * 2

    assert float(jax.grad(f)(3.0)) == 2.0
    primal, tangent = jax.jvp(f, (3.0,), (1.0,))
    assert (float(primal), float(tangent)) == (6.0, 2.0)
    assert float(jax.jit(jax.grad(f))(4.0)) == 2.0
    assert lines(capsys) == ["x=3.0", "x=3.0", "x=4.0"]
    assert seen == [3.0, 3.0, 4.0]


def test_pure_and_io_callbacks_have_no_derivative() -> None:
    def pure(x):
        return pure_callback(lambda a: a, S((), np.float32), x)

    def io(x):
        return io_callback(lambda a: a, S((), np.float32), x)

    with pytest.raises(ValueError, match=r"Pure callbacks do not support JVP. Please use `jax.custom_jvp`"):
        jax.grad(pure)(1.0)
    with pytest.raises(ValueError, match=r"Pure callbacks do not support JVP"):
        jax.jvp(pure, (1.0,), (1.0,))
    with pytest.raises(ValueError, match=r"IO callbacks do not support JVP."):
        jax.grad(io)(1.0)


# ---------------------------------------------------------------------------
# vmap


def test_vmap_of_debug_print_prints_each_element_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    jax.vmap(lambda x, y: debug.print("x={} y={}", x, y), in_axes=(0, None))(jnp.arange(3.0), 7.0)
    jax.jit(jax.vmap(lambda x: debug.print("row {}", x, ordered=True)))(jnp.arange(4).reshape(2, 2))
    assert lines(capsys) == ["x=0.0 y=7.0", "x=1.0 y=7.0", "x=2.0 y=7.0", "row [0 1]", "row [2 3]"]


@pytest.mark.parametrize(
    ("method", "seen_shapes"),
    [
        ("sequential", [((), ())] * 4),
        ("sequential_unrolled", [((), ())] * 4),
        ("expand_dims", [((4,), (1,))]),
        ("broadcast_all", [((4,), (4,))]),
        ("legacy_vectorized", [((4,), ())]),
    ],
)
def test_vmap_of_pure_callback_follows_vmap_method(method: str, seen_shapes: list[tuple[Any, Any]]) -> None:
    seen: list[tuple[Any, Any]] = []

    def add(x, y):
        seen.append((np.shape(x), np.shape(y)))
        return np.asarray(np.asarray(x) + np.asarray(y), np.float32)

    def f(x, y):
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        return pure_callback(add, S(shape, np.float32), x, y, vmap_method=method)

    out = jax.vmap(f, in_axes=(0, None))(jnp.arange(4.0), jnp.float32(1.0))
    assert np.asarray(out).tolist() == [1.0, 2.0, 3.0, 4.0] and seen == seen_shapes
    jitted = jax.jit(jax.vmap(f, in_axes=(0, None)))(jnp.arange(4.0), jnp.float32(1.0))
    assert np.asarray(jitted).tolist() == [1.0, 2.0, 3.0, 4.0]


def test_vmap_of_pure_callback_needs_a_vmap_method() -> None:
    f = lambda x: pure_callback(lambda a: a, S((), np.float32), x)  # noqa: E731
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(f)(jnp.arange(3.0))


def test_vmap_of_io_callback_calls_once_per_element_unless_ordered() -> None:
    calls: list[float] = []

    def record(x):
        calls.append(float(x))
        return np.asarray(x) * 2

    out = jax.vmap(lambda x: io_callback(record, S((), np.float32), x))(jnp.arange(3.0))
    assert np.asarray(out).tolist() == [0.0, 2.0, 4.0] and calls == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        jax.vmap(lambda x: io_callback(record, S((), np.float32), x, ordered=True))(jnp.arange(3.0))


# ---------------------------------------------------------------------------
# make_jaxpr


def test_make_jaxpr_records_the_callbacks_as_equations_with_jax_params() -> None:
    def cb(a):
        return a

    def f(x):
        debug.print("x={x}", x=x, ordered=True)
        y = pure_callback(cb, S((3,), np.float32), x)
        return io_callback(cb, S((3,), np.float32), y)

    closed = jax.make_jaxpr(f)(jnp.ones(3))
    printed, pure, io = closed.eqns
    assert [e.primitive for e in closed.eqns] == [debug_print_p, pure_callback_p, io_callback_p]
    assert printed.outvars == [] and printed.params["ordered"] is True and printed.params["static_args"] == ()
    assert pure.params["result_avals"] == (ShapedArray((3,), np.float32),)
    assert pure.params["vmap_method"] is None and pure.params["sharding"] is None
    assert io.params["ordered"] is False
    text = str(closed)
    address = re.compile(r" at 0x[0-9a-f]+")
    assert not address.search(text), "addresses are masked as JAX masks them"
    assert (
        "    b:f32[3] = pure_callback[\n"
        "      callback=_FlatCallback(callback_func=<function test_make_jaxpr_records_the_callbacks_as_equations_with_jax_params.<locals>.cb at 0xXXXXXXXXXXXX>, in_tree=PyTreeDef(((*,), {})))\n"
        "      result_avals=(ShapedArray(float32[3]),)\n"
        "      sharding=None\n"
        "      vmap_method=None\n"
        "    ] a\n"
    ) in text


def test_an_equation_without_results_prints_without_equals() -> None:
    text = str(jax.make_jaxpr(lambda x: debug.print("hi {}", x))(jnp.int32(1)))
    assert text.splitlines()[1] == "    debug_print["
    assert "    ] a\n  in () }" in text


# ---------------------------------------------------------------------------
# The spec's examples


def test_the_spec_examples_run() -> None:
    blocks = re.findall(r"^```python\n(.*?)^```", SPEC.read_text(), flags=re.M | re.S)
    assert len(blocks) == 4
    for block in blocks:
        exec(compile(block, str(SPEC), "exec"), {"__name__": "spec_example"})


def test_a_pure_callback_whose_result_is_unused_never_runs_under_jit() -> None:
    # jit drops dead code before any backend sees the program (JAX's external-callbacks page shows it):
    # the reference interpreter must not run what XLA would drop.
    calls = []

    def host() -> np.ndarray:
        calls.append(1)
        return np.int32(0)

    @jax.jit
    def unused() -> float:
        jax.pure_callback(host, np.int32(0))
        return 1.0

    @jax.jit
    def used() -> Any:
        return jax.pure_callback(host, np.int32(0))

    assert float(unused()) == 1.0 and calls == []
    assert int(used()) == 0 and calls == [1]
