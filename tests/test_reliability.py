"""Reliability: leaked tracers, NaN/inf checks, threads, bounded caches, no buffer kept alive.

Every test runs on each backend (tests/conftest.py). The XLA-only hazards
(what jaxlib would crash on or compute garbage from) are in
test_reliability_xla.py; the fuzzing suite in test_fuzz.py.
"""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import dispatch, errors, lax
from minijax.api import checking_leaks, debug_infs, debug_nans
from minijax.backend import get_backend
from minijax.caching import BoundedCache
from minijax.config import config, config_context, enable_x64, trace_cache_size

# --- leaked tracers ---------------------------------------------------------------------

_saved: list[Any] = []


def _keep(x: Any) -> Any:
    _saved.append(x)
    return x


# Where a tracer can come from: (transformation, how it runs _keep, what the message names).
SOURCES: dict[str, tuple[Callable[[], Any], str]] = {
    "jit": (lambda: jax.jit(_keep)(1.0), "jit of _keep"),
    "make_jaxpr": (lambda: jax.make_jaxpr(_keep)(1.0), "jit of _keep"),
    "vmap": (lambda: jax.vmap(_keep)(jnp.ones(3)), "vmap"),
    "grad": (lambda: jax.grad(_keep)(1.0), "linearize"),
    "vjp": (lambda: jax.vjp(_keep, 1.0), "linearize"),
    "jvp": (lambda: jax.jvp(_keep, (1.0,), (1.0,)), "jvp"),
    "cond": (lambda: lax.cond(True, _keep, lambda a: a, 1.0), "cond of _keep"),
    "scan": (lambda: lax.scan(lambda c, x: (_keep(c), x), 1.0, jnp.ones(2)), "scan of <lambda>"),
    "while_loop": (lambda: lax.while_loop(lambda c: c < 0, _keep, 1.0), "while_body of _keep"),
    "checkpoint": (lambda: jax.grad(jax.checkpoint(_keep))(1.0), "checkpoint of _keep"),
}

# Where it can be used afterwards: every path must notice the tracer is dead.
USES: dict[str, Callable[[Any], Any]] = {
    "eager": lambda t: t + 1.0,
    "jnp": lambda t: jnp.where(True, t, 0.0),
    "jit argument": lambda t: jax.jit(jnp.sin)(t),
    "jit closure": lambda t: jax.jit(lambda y: y + t)(1.0),
    "vmap closure": lambda t: jax.vmap(lambda y: y + t)(jnp.ones(2)),
    "grad argument": lambda t: jax.grad(jnp.sin)(t),
    "grad closure": lambda t: jax.grad(lambda y: y * t)(1.0),
    "cond operand": lambda t: lax.cond(True, lambda a: a, lambda a: a, t),
    "make_jaxpr closure": lambda t: jax.make_jaxpr(lambda y: y * t)(1.0),
    "float": float,
    "int": int,
}


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("use", list(USES))
def test_a_leaked_tracer_raises_unexpected_tracer_error_naming_its_transformation(source: str, use: str) -> None:
    run, names = SOURCES[source]
    _saved.clear()
    jax.clear_caches()  # jit's traces are cached by function (as in JAX): trace _keep anew
    run()
    leaked = _saved[0]
    _saved.clear()
    if use == "float" or (use == "int" and source not in ("grad", "vjp", "jvp")):
        # An abstract tracer has no value to give: JAX's ConcretizationTypeError;
        # float() never reads one, not even a JVP tracer's (as in JAX). int() of
        # a JVP tracer would read its primal: leaked, it must not hand it out.
        with pytest.raises(errors.ConcretizationTypeError):
            USES[use](leaked)
        return
    with pytest.raises(errors.UnexpectedTracerError) as info:
        USES[use](leaked)
    message = str(info.value)
    assert names in message and "leaked" in message and "docs/errors.md#unexpectedtracererror" in message


def test_a_tracer_used_from_another_thread_is_reported_not_silently_used() -> None:
    inside, done = threading.Event(), threading.Event()
    box: list[Any] = []
    errors_seen: list[BaseException] = []

    def traced(x: Any) -> Any:
        box.append(x)
        inside.set()
        done.wait(10)
        return x * 2

    def other_thread() -> None:
        inside.wait(10)
        try:
            box[0] + 1.0
        except BaseException as e:  # noqa: B036  (recorded for the main thread to check)
            errors_seen.append(e)
        done.set()

    t = threading.Thread(target=other_thread)
    t.start()
    assert float(jax.jit(traced)(3.0)) == 6.0
    t.join()
    assert len(errors_seen) == 1 and isinstance(errors_seen[0], errors.UnexpectedTracerError)
    assert "outside that transformation" in str(errors_seen[0])


# checking_leaks: the leak is reported when the transformation ends, naming who holds it.

_global_holder: list[Any] = []


class _Box:
    value: Any = None


_box = _Box()


@pytest.mark.parametrize("source", ["jit", "vmap", "grad", "jvp", "cond", "scan"])
def test_checking_leaks_reports_a_leak_when_the_transformation_ends(source: str) -> None:
    run, names = SOURCES[source]
    _saved.clear()
    with checking_leaks(), pytest.raises(errors.UnexpectedTracerError) as info:
        run()
    _saved.clear()
    message = str(info.value)
    assert "Leaked trace" in message and names in message
    assert f"module {__name__} (its global _saved[0])" in message


def test_checking_leaks_names_an_attribute_holder_and_a_closure() -> None:
    def into_attribute(x: Any) -> Any:
        _box.value = x
        return x

    def into_closure(x: Any) -> Any:
        _global_holder.append(lambda: x)
        return x

    with checking_leaks():
        with pytest.raises(errors.UnexpectedTracerError, match=r"its global _box\.value"):
            jax.jit(into_attribute)(1.0)
        with pytest.raises(errors.UnexpectedTracerError, match=r"its global _global_holder\[0\] \(closed over as x\)"):
            jax.jit(into_closure)(1.0)
    _box.value = None
    _global_holder.clear()


def test_checking_leaks_is_the_flag_and_accepts_clean_programs() -> None:
    def loss(w: Any, x: Any) -> Any:
        h = jnp.tanh(x @ w)
        h = lax.cond(jnp.sum(h) > 0, jnp.sin, jnp.cos, h)
        carry, ys = lax.scan(lambda c, v: (c + v, c * v), jnp.zeros(h.shape[1:]), h)
        return jnp.sum(carry) + jnp.sum(ys)

    w, x = jnp.ones((3, 2)) * 0.1, jnp.ones((4, 3))
    expected = jax.grad(loss)(w, x)
    # Each transformation's end scans the heap: a few programs, each touching many transformations.
    with checking_leaks():
        assert config.read("jax_check_tracer_leaks")
        got = jax.jit(jax.grad(loss))(w, x)
        batched = jax.vmap(jax.grad(lambda v: jnp.sum(jnp.sin(v) ** 2)))(jnp.ones((2, 3)))
        (_, aux), _ = jax.value_and_grad(lambda v: (jnp.sum(v**2), {"v": v}), has_aux=True)(jnp.ones(2))
    assert not config.read("jax_check_tracer_leaks")
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(batched), np.sin(2.0) * np.ones((2, 3)), rtol=1e-5)
    assert np.asarray(aux["v"]).tolist() == [1.0, 1.0]


# --- jax_debug_nans / jax_debug_infs --------------------------------------------------------


def _fp_error(f: Callable[[], Any]) -> str:
    with pytest.raises(FloatingPointError) as info:
        f()
    return str(info.value)


def test_debug_nans_names_the_first_primitive_making_a_nan_eagerly_and_under_jit() -> None:
    x = jnp.array([0.0, 1.0])
    with debug_nans(True):
        assert _fp_error(lambda: jnp.log(-x)).startswith("invalid value (nan) encountered in log")
        assert _fp_error(lambda: x / x).startswith("invalid value (nan) encountered in div")
        # Under jit the program is re-run op by op: the error names log, not jit.
        msg = _fp_error(lambda: jax.jit(lambda v: jnp.sin(jnp.log(-v)) * 2.0)(x))
        assert msg.startswith("invalid value (nan) encountered in log")
        # ... through nested jits too.
        inner = jax.jit(lambda v: jnp.sqrt(v) + 1.0)
        assert _fp_error(lambda: jax.jit(lambda v: inner(-v) * 2.0)(x)).startswith("invalid value (nan) encountered in sqrt")
        assert _fp_error(lambda: jax.vmap(jnp.log)(-x)).startswith("invalid value (nan) encountered in log")
        # A NaN made on the backward pass: sqrt's derivative at 0 is inf, times 0 is nan.
        assert "(nan) encountered in " in _fp_error(lambda: jax.grad(lambda v: jnp.sqrt(v) * 0.0)(0.0))
        # Clean programs, integer division by zero and infinities are not NaNs.
        assert np.asarray(jax.jit(lambda v: v * 2.0)(x)).tolist() == [0.0, 2.0]
        assert np.asarray(jnp.arange(3) // 0).tolist() == [-1, -2, -2]
        assert float(jnp.log(x)[0]) == -np.inf
    # Off again: NaNs are plain values.
    assert np.isnan(np.asarray(jnp.log(-x))[1])


def test_debug_infs_names_the_primitive_making_an_infinity() -> None:
    x = jnp.array([0.0, 1.0])
    with debug_infs(True):
        assert _fp_error(lambda: 1.0 / x).startswith("invalid value (inf) encountered in div")
        assert _fp_error(lambda: jax.jit(lambda v: jnp.log(v) * 2.0)(x)).startswith("invalid value (inf) encountered in log")
        # As in JAX only a program's outputs are checked: an infinity that does not reach them is fine.
        assert np.asarray(jax.jit(lambda v: jnp.exp(jnp.log(v)))(x)).tolist() == [0.0, 1.0]
        assert np.isnan(np.asarray(jnp.sqrt(-x))[1])  # NaNs are jax_debug_nans' business
    with config_context(jax_debug_infs=True, jax_debug_nans=True):
        assert "(nan)" in _fp_error(lambda: jnp.sqrt(-x))


def test_debug_nans_names_the_program_when_the_inputs_were_donated() -> None:
    f = jax.jit(lambda v: jnp.log(v), donate_argnums=0)
    with debug_nans(True):
        msg = _fp_error(lambda: f(jnp.array([-1.0, 1.0])))
    assert msg.startswith("invalid value (nan) encountered in jit(<lambda>)") and "donated" in msg


def test_debug_nans_is_per_thread_under_a_context_manager() -> None:
    x = jnp.array([-1.0])
    results: list[float] = []

    def elsewhere() -> None:
        results.append(float(jnp.log(x)[0]))  # no check in this thread

    with debug_nans(True):
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
        with pytest.raises(FloatingPointError):
            jnp.log(x)
    assert np.isnan(results[0])


# --- threads ----------------------------------------------------------------------------------


def _programs() -> list[tuple[Callable[[Any], Any], Any]]:
    """Eight different functions on different shapes: jit, grad, vmap and control flow."""
    rng = np.random.default_rng(0)

    def arr(*shape: int) -> Any:
        return jnp.asarray(rng.normal(size=shape).astype(np.float32))

    def mlp_loss(w: Any) -> Any:
        return jnp.sum(jnp.tanh(jnp.ones((5, 3)) @ w) ** 2)

    return [
        (jax.jit(lambda v: jnp.sin(v) * 2.0 + v), arr(7)),
        (jax.grad(mlp_loss), arr(3, 4)),
        (jax.vmap(lambda v: jnp.dot(v, v)), arr(6, 3)),
        (jax.jit(jax.grad(lambda v: jnp.sum(jnp.exp(v) / (1.0 + v**2)))), arr(2, 5)),
        (jax.jit(jax.vmap(jax.grad(lambda v: jnp.sum(jnp.cos(v) * v)))), arr(4, 2)),
        (jax.jit(lambda v: lax.scan(lambda c, e: (c + e, c * e), jnp.zeros(3), v)[1]), arr(5, 3)),
        (jax.jit(lambda v: lax.cond(jnp.sum(v) > 0, jnp.sin, jnp.cos, v)), arr(9)),
        (jax.vmap(lambda v: lax.while_loop(lambda c: c[1] < 4, lambda c: (c[0] * 1.5, c[1] + 1), (v, 0))[0]), arr(8)),
    ]


def _run_in_threads(work: list[Callable[[], Any]]) -> list[Any]:
    """Run each callable on a thread of its own, all released at once; re-raise errors here."""
    barrier = threading.Barrier(len(work))
    results: list[Any] = [None] * len(work)
    failures: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(30)
            results[i] = work[i]()
        except BaseException as e:  # noqa: B036  (re-raised in the main thread)
            failures.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(work))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if failures:
        raise failures[0]
    return results


def _host(tree: Any) -> list[np.ndarray[Any, Any]]:
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(tree)]


def _call(f: Callable[[Any], Any], x: Any) -> Callable[[], list[np.ndarray[Any, Any]]]:
    return lambda: _host(f(x))


def test_jit_grad_vmap_from_eight_threads_equal_the_serial_results() -> None:
    serial = [_host(f(x)) for f, x in _programs()]  # fresh functions below: traced in the threads
    for _ in range(2):
        got = _run_in_threads([_call(f, x) for f, x in _programs()])
        for want, have in zip(serial, got):
            for w, h in zip(want, have):
                np.testing.assert_array_equal(h, w)


def test_trace_state_and_flags_are_per_thread() -> None:
    """A thread inside a jit trace does not turn another thread's operations into tracers."""
    tracing, release = threading.Event(), threading.Event()
    seen: list[Any] = []

    @jax.jit
    def slow(x: Any) -> Any:
        tracing.set()
        release.wait(10)
        return x + 1.0

    def other() -> None:
        tracing.wait(10)
        y = jnp.ones(2) * 3.0  # eager here, though the main thread is tracing
        seen.append((type(y), np.asarray(y).tolist(), jnp.asarray(np.int64(5)).dtype))
        release.set()

    t = threading.Thread(target=other)
    t.start()
    with enable_x64(True):  # this thread only
        out = slow(jnp.asarray(np.float64(1.0)))
    t.join()
    assert out.dtype == np.float64 and float(out) == 2.0
    (kind, values, int_dtype), = seen
    assert kind is jax.Array and values == [3.0, 3.0] and int_dtype == np.int32


def test_a_function_called_from_eight_threads_is_traced_and_compiled_once(backend_name: str) -> None:
    traces: list[int] = []

    def f(x: Any) -> Any:
        traces.append(1)
        return jnp.cos(x) * 3.0 + x

    jitted = jax.jit(f)
    x = jnp.asarray(np.linspace(0, 1, 13, dtype=np.float32))
    backend = get_backend(backend_name)
    stats = getattr(backend, "stats", None)
    before = stats["compiles"] if stats is not None else 0
    outs = _run_in_threads([lambda: np.asarray(jitted(x))] * 8)
    assert len(traces) == 1
    if stats is not None:  # the xla backend counts what it compiles
        assert stats["compiles"] - before == 1
    for out in outs:
        np.testing.assert_allclose(out, np.cos(np.asarray(x)) * 3 + np.asarray(x), rtol=1e-6)


def test_an_eager_operation_new_to_eight_threads_is_compiled_once(backend_name: str) -> None:
    x = jnp.asarray(np.arange(17, dtype=np.float32))  # a shape no other test uses
    prepared: list[tuple[str, tuple[Any, ...]]] = []
    original = dispatch._prepare

    def counting(prim: Any, device: Any, in_avals: Any, params: Any) -> Any:
        prepared.append((prim.name, tuple(in_avals)))
        return original(prim, device, in_avals, params)

    dispatch._prepare = counting  # type: ignore[assignment]
    try:
        outs = _run_in_threads([lambda: np.asarray(lax.atan2(x, x + 1.0))] * 8)
    finally:
        dispatch._prepare = original  # type: ignore[assignment]
    # Each signature prepared (and, on xla, compiled) once, not once per thread.
    assert len(prepared) == len(set(prepared)) and ("atan2", (x.aval, x.aval)) in prepared
    for out in outs:
        np.testing.assert_allclose(out, np.arctan2(np.asarray(x), np.asarray(x) + 1), rtol=1e-6)


# --- bounded caches ---------------------------------------------------------------------------


@contextmanager
def _small_caches(executables: int, traces: int) -> Iterator[None]:
    with config_context(minijax_executable_cache_size=executables, minijax_trace_cache_size=traces):
        yield


def test_bounded_cache_drops_the_least_recently_used_and_makes_each_key_once() -> None:
    cache: BoundedCache[str, int] = BoundedCache("test", trace_cache_size)
    made: list[str] = []

    def make(key: str) -> Callable[[], int]:
        def value() -> int:
            made.append(key)
            return len(made)

        return value

    with config_context(minijax_trace_cache_size=3):
        for key in "abc":
            cache.get_or_make(key, make(key))
        assert cache.get("a") == 1  # a is used: b is now the least recently used
        cache.get_or_make("d", make("d"))
        assert "b" not in cache and {"a", "c", "d"} <= set(cache.entries)
        assert cache.get_or_make("a", make("a")) == 1 and made == ["a", "b", "c", "d"]
        assert len(cache) == 3 and cache.evictions == 1
    with pytest.raises(ValueError, match="at least 1"):
        config.update("minijax_trace_cache_size", 0)


def test_bounded_cache_waits_for_one_maker_and_retries_after_a_failure() -> None:
    cache: BoundedCache[str, str] = BoundedCache("test", trace_cache_size)
    started, go = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow() -> str:
        calls.append(1)
        started.set()
        go.wait(10)
        return "value"

    def failing() -> str:
        calls.append(1)
        raise ValueError("no")

    def release() -> str:
        started.wait(10)
        go.set()
        return cache.get_or_make("k", slow)

    assert _run_in_threads([lambda: cache.get_or_make("k", slow)] * 4 + [release]) == ["value"] * 5
    assert len(calls) == 1
    calls.clear()
    for _ in range(2):
        with pytest.raises(ValueError):
            cache.get_or_make("bad", failing)
    assert len(calls) == 2 and "bad" not in cache  # failures are not cached


def test_jit_and_dispatch_caches_stay_bounded_over_many_shapes(backend_name: str) -> None:
    f = jax.jit(lambda v: jnp.sin(v) * 2.0 + 1.0)
    backend = get_backend(backend_name)
    live = getattr(backend, "live_executable_count", None)
    for n in range(1, 13):  # more eager signatures than the small caches below hold
        jnp.full((n,), 1.0) + 1.0
    with _small_caches(executables=8, traces=4):
        # Lowering the size flags trimmed every cache at once.
        assert len(dispatch._eager_cache) <= 8 and len(dispatch._compiled) <= 8
        if live is not None:
            assert len(backend._eager_cache) <= 8  # type: ignore[attr-defined]
        before = live() if live is not None else 0
        for n in range(1, 41):
            x = np.full((n,), 0.5, np.float32)  # a host array: no eager op per shape
            np.testing.assert_allclose(np.asarray(f(x)), np.sin(0.5) * 2 + 1, rtol=1e-6)
        assert len(f._cache) <= 4 and len(f._fast_cache) <= 4
        assert len(dispatch._eager_cache) <= 8 and len(dispatch._compiled) <= 8
        if live is not None:  # xla: the executables of evicted entries are gone
            gc.collect()
            assert live() - before <= 4 + 8
            assert len(backend._eager_cache) <= 8  # type: ignore[attr-defined]
    assert f._cache.evictions > 0


# --- no reference keeps a buffer alive ---------------------------------------------------------


def _buffer_tracker(backend_name: str) -> Callable[[Any], Callable[[], bool]]:
    """``track(array)`` -> a function telling whether that array's buffer is still alive."""
    backend = get_backend(backend_name)
    if hasattr(backend, "live_buffer_count"):
        # XLA buffers cannot be weakly referenced: count the client's live arrays.
        def track_xla(array: Any) -> Callable[[], bool]:
            before = backend.live_buffer_count()  # type: ignore[attr-defined]
            return lambda: backend.live_buffer_count() >= before  # type: ignore[attr-defined]

        return track_xla

    def track_numpy(array: Any) -> Callable[[], bool]:
        ref = weakref.ref(array._buf)
        return lambda: ref() is not None

    return track_numpy


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: jnp.sin(jnp.arange(6.0)) * 2.0, id="eager"),
        pytest.param(lambda: jax.jit(lambda v: (v * 2.0, v + 1.0))(jnp.ones(5))[0], id="jit"),
        pytest.param(lambda: jax.grad(lambda v: jnp.sum(jnp.sin(v)))(jnp.ones(4)), id="grad"),
        pytest.param(lambda: jax.vmap(lambda v: v @ v)(jnp.ones((3, 2))), id="vmap"),
        pytest.param(lambda: lax.scan(lambda c, v: (c + v, c), 0.0, jnp.ones(3))[1], id="scan"),
        pytest.param(lambda: jax.device_put(np.ones(7, np.float32)), id="device_put"),
    ],
)
def test_dropping_an_array_frees_its_buffer_without_the_garbage_collector(backend_name: str, make: Callable[[], Any]) -> None:
    track = _buffer_tracker(backend_name)
    make()  # warm the caches: compiled programs may hold constants of their own
    gc.collect()
    gc.disable()  # only reference counting: a reference cycle would keep the buffer
    try:
        x = make()
        alive = track(x)
        repr(x), np.asarray(x), x.block_until_ready()
        del x
        assert not alive()
    finally:
        gc.enable()


def test_a_jitted_function_and_its_captured_array_are_freed_together(backend_name: str) -> None:
    track = _buffer_tracker(backend_name)

    def use_and_drop() -> Callable[[], bool]:
        big = jnp.arange(100.0)
        alive = track(big)
        f = jax.jit(lambda v: v + big)
        np.testing.assert_allclose(np.asarray(f(jnp.ones(100))), np.arange(100.0) + 1)
        return alive  # f and big go with this frame

    gc.collect()
    gc.disable()
    try:
        alive = use_and_drop()
    finally:
        gc.enable()
    # No cache keeps the program (nor with it the constant) past the function.
    gc.collect()
    assert not alive()


def test_donating_an_argument_passed_twice_is_refused_on_every_backend() -> None:
    f = jax.jit(lambda a, b: a * b, donate_argnums=0)
    x = jnp.arange(3.0)
    with pytest.raises(RuntimeError, match="is donated, but the same array is also passed as argument 1"):
        f(x, x)
    assert not x.is_deleted()
    assert np.asarray(f(x, x.copy())).tolist() == [0.0, 1.0, 4.0] and x.is_deleted()
