"""jit's caches keyed as JAX keys them: by the function (weakly), jit's options, the
static arguments and the argument types -- not by the ``jit(f)`` wrapper object."""

from __future__ import annotations

import functools
import gc
import logging
import threading
import weakref
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import dispatch


def counted() -> tuple[Any, list[int]]:
    """A function whose Python body counts how often it runs (once per trace)."""
    traces = [0]

    def f(x: Any) -> Any:
        traces[0] += 1
        return jnp.sin(x) * 2.0

    return f, traces


def test_fresh_wrappers_reuse_the_trace() -> None:
    f, traces = counted()
    x = jnp.ones(3)
    for _ in range(5):
        y = jax.jit(f)(x)
    assert traces[0] == 1
    np.testing.assert_allclose(np.asarray(y), 2 * np.sin(np.ones(3)), rtol=1e-6)


def test_sharp_bits_scalars_reuse_the_first_trace() -> None:
    f, traces = counted()
    jax.jit(f)(4.0)
    jax.jit(f)(5.0)
    assert traces[0] == 1


def test_types_shapes_and_weak_types_miss() -> None:
    f, traces = counted()
    jax.jit(f)(jnp.ones(3))
    jax.jit(f)(jnp.ones(4))
    jax.jit(f)(jnp.ones(4, jnp.int32))
    jax.jit(f)(jnp.ones((), jnp.float32))
    jax.jit(f)(1.0)  # weak f32[]: another type
    assert traces[0] == 5
    jax.jit(f)(jnp.ones(4, jnp.int32))
    jax.jit(f)(2.0)
    assert traces[0] == 5


def test_fresh_functions_are_traced_again_as_in_jax() -> None:
    """A new function object (a lambda made anew, grad(f), vmap(f), partial(f)) is a new key."""
    f, traces = counted()
    x = jnp.ones(3)
    for make in (lambda: jax.vmap(f), lambda: functools.partial(f), lambda: (lambda y: f(y))):
        traces[0] = 0
        for _ in range(3):
            jax.jit(make())(x)
        assert traces[0] == 3
    # The same grad(f) object, jitted anew each time: one trace.
    traces[0] = 0
    g = jax.grad(lambda y: f(y).sum())
    for _ in range(3):
        jax.jit(g)(x)
    assert traces[0] == 1


def test_options_and_static_values_key_the_cache() -> None:
    traces = [0]

    def f(x: Any, n: int) -> Any:
        traces[0] += 1
        return x * n

    x = jnp.ones(2)
    for _ in range(3):
        jax.jit(f, static_argnums=1)(x, 2)
    assert traces[0] == 1
    jax.jit(f, static_argnums=1)(x, 3)  # another static value
    assert traces[0] == 2
    jax.jit(f, static_argnames="n")(x, n=2)  # other options: another cache
    assert traces[0] == 3
    jax.jit(f)(x, 2)  # no static argument: n is traced
    jax.jit(f, donate_argnums=())(x, 2)  # no donation is no donation
    assert traces[0] == 4


def test_grad_of_an_already_called_jit_reuses_its_trace() -> None:
    f, traces = counted()
    x = jnp.ones(3)
    jax.jit(f)(x)
    jax.grad(lambda y: jax.jit(f)(y).sum())(x)
    assert traces[0] == 1


def test_entries_die_with_the_function() -> None:
    f, traces = counted()
    x = jnp.ones(3)
    jax.jit(f)(x)
    state = jax.jit(f)._state
    assert len(state.cache) == 1
    closed = next(iter(state.cache.values())).closed
    compiled_keys = [k for k in dispatch._compiled.entries if k[0] == id(closed)]
    assert compiled_keys  # its executable
    fun_ref = weakref.ref(f)
    jaxpr_ref = weakref.ref(closed)
    del f, state, closed
    gc.collect()
    assert fun_ref() is None  # nothing minijax keeps holds the function
    assert jaxpr_ref() is None  # nor its trace
    assert not any(k in dispatch._compiled.entries for k in compiled_keys)  # nor its executable


def test_threads_share_one_trace() -> None:
    f, traces = counted()
    x = jnp.ones(3)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                jax.jit(f)(x)
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert traces[0] == 1


def test_unhashable_callable_still_jits() -> None:
    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

        def __call__(self, x: Any) -> Any:
            return x + 1

    assert float(jax.jit(Unhashable())(1.0)) == 2.0


def test_clear_caches_clears_every_cache() -> None:
    f, traces = counted()
    x = jnp.ones(3)
    jax.jit(f)(x)
    jnp.cos(x)  # an eager operation: prepared and cached
    assert len(dispatch._compiled) > 0 and len(dispatch._eager_cache) > 0
    jax.clear_caches()
    assert len(dispatch._compiled) == 0 and len(dispatch._eager_cache) == 0
    jax.jit(f)(x)
    assert traces[0] == 2  # traced again
    jax.jit(f)(x)
    assert traces[0] == 2


def test_explain_cache_misses(caplog: pytest.LogCaptureFixture) -> None:
    f, _ = counted()
    with caplog.at_level(logging.WARNING, logger="minijax.stages"), jax.explain_cache_misses(True):
        jax.jit(f)(jnp.ones(3))
        jax.jit(f)(jnp.ones(3))  # a hit: nothing logged
        jax.jit(f)(jnp.ones(4))
    messages = [r.getMessage() for r in caplog.records if r.name == "minijax.stages"]
    assert len(messages) == 2
    assert messages[0].startswith("TRACING CACHE MISS at ")
    assert "test_jit_cache.py" in messages[0].splitlines()[0]  # the user's call site
    assert "never seen function:" in messages[0] and f"f id={id(f)}" in messages[0]
    assert "all previously seen cache keys differ" in messages[1]
    assert "different input types:" in messages[1]
    assert "* at x, now f32[4] and before f32[3]" in messages[1]


def test_explain_cache_misses_static_argument(caplog: pytest.LogCaptureFixture) -> None:
    def g(x: Any, n: int) -> Any:
        return x * n

    with caplog.at_level(logging.WARNING, logger="minijax.stages"), jax.explain_cache_misses(True):
        jax.jit(g, static_argnums=1)(jnp.ones(2), 2)
        jax.jit(g, static_argnums=1)(jnp.ones(2), 3)
    assert "* at argnum 1, now 3 and before 2" in caplog.records[-1].getMessage()


def test_no_explanation_when_off(caplog: pytest.LogCaptureFixture) -> None:
    f, _ = counted()
    with caplog.at_level(logging.DEBUG, logger="minijax.stages"):
        jax.jit(f)(jnp.ones(5))
    assert not any("TRACING CACHE MISS" in r.getMessage() for r in caplog.records)


def test_log_compiles(caplog: pytest.LogCaptureFixture) -> None:
    def h(x: Any, y: Any) -> Any:
        return x * y

    x = jnp.ones((2, 3))
    with caplog.at_level(logging.WARNING, logger="minijax"), jax.log_compiles():
        jax.jit(h)(x, 2.0)
        jax.jit(h)(x, 2.0)  # cached: no second compile
    compiles = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Compiling ")]
    assert compiles == [
        "Compiling jit(h) with global shapes and types (ShapedArray(float32[2,3]), "
        "ShapedArray(float32[], weak_type=True)). Argument mapping: (UnspecifiedValue, UnspecifiedValue)."
    ]
    assert any(r.getMessage().startswith("Finished tracing h for jit in ") for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="minijax"):
        jax.jit(h)(x, 3)  # a new compile, flag off: nothing at WARNING
    assert not any(r.getMessage().startswith("Compiling ") for r in caplog.records)
