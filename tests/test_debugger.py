"""jax.debug.breakpoint and its text debugger, jdb (minijax/debugger.py), on each backend.

The debugger reads its commands from ``stdin=`` and writes to ``stdout=``
(keyword arguments of ``breakpoint`` that go to the debugger, as in JAX), so
the sessions here are scripted.
"""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax


def test_p_shows_the_value_a_traced_variable_has_when_the_program_runs() -> None:
    out = io.StringIO()

    def run(x: Any, commands: str) -> Any:
        def g(x: Any) -> Any:
            y = jnp.sin(x) * 2
            jax.debug.breakpoint(stdin=io.StringIO(commands), stdout=out)
            return y + 1
        return jax.jit(g)(x)

    result = run(jnp.float32(0.5), "p y\npp x\ny * 10\np nothing\nc\n")
    np.testing.assert_allclose(np.asarray(result), np.sin(0.5) * 2 + 1, rtol=1e-6)
    text = out.getvalue()
    assert text.startswith("Entering jdb:\n")
    lines = [line.removeprefix("(jdb) ") for line in text.splitlines()[1:]]
    assert lines[0] == repr(jnp.float32(np.sin(np.float32(0.5)) * 2))
    assert lines[1] == repr(jnp.float32(0.5))
    assert lines[2] == repr(jnp.float32(np.sin(np.float32(0.5)) * 2) * 10)
    assert lines[3] == "*** NameError: name 'nothing' is not defined"


def test_frames_up_down_list_and_where() -> None:
    out = io.StringIO()

    def inner(x: Any) -> Any:
        z = x * 3
        jax.debug.breakpoint(stdin=io.StringIO("p z\nu\np a\nd\nd\nw\nl\nc\n"), stdout=out)
        return z

    def outer(a: Any) -> Any:
        return inner(a + 1)

    jax.jit(outer)(jnp.float32(1.0))
    text = out.getvalue()
    assert repr(jnp.float32(6.0)) in text  # z, in inner
    assert repr(jnp.float32(1.0)) in text  # a, one frame up, in outer
    assert "At bottommost frame." in text
    assert re.search(r"^->  \s+jax\.debug\.breakpoint\(", text, re.M)  # the breakpoint's line, marked
    assert "Traceback:" in text and "return inner(a + 1)" in text


def test_quit_or_the_end_of_input_stops_the_program_with_xlas_runtime_error() -> None:
    for commands in ("q\n", ""):
        out = io.StringIO()

        def f(x: Any) -> Any:
            jax.debug.breakpoint(stdin=io.StringIO(commands), stdout=out)  # noqa: B023
            return x

        with pytest.raises(jax.errors.JaxRuntimeError, match="CpuCallback error calling callback"):
            np.asarray(jax.jit(f)(1.0))
        assert out.getvalue() == "Entering jdb:\n(jdb) "


def test_a_breakpoint_in_a_cond_branch_stops_only_when_the_branch_runs() -> None:
    out = io.StringIO()

    def check(z: Any) -> Any:
        def bad(z: Any) -> None:
            jax.debug.breakpoint(stdin=io.StringIO("p z\nc\n"), stdout=out)

        lax.cond(jnp.isfinite(z).all(), lambda z: None, bad, z)
        return z

    f = jax.jit(lambda x, y: check(x / y))
    np.testing.assert_array_equal(np.asarray(f(2.0, 1.0)), 2.0)
    assert out.getvalue() == ""
    f(2.0, 0.0)
    assert repr(jnp.float32(np.inf)) in out.getvalue()


def test_eager_breakpoint_and_the_token_form() -> None:
    out = io.StringIO()
    x = jnp.arange(3.0)
    jax.debug.breakpoint(stdin=io.StringIO("p x\nc\n"), stdout=out)
    assert repr(x) in out.getvalue()

    out2 = io.StringIO()

    def f(x: Any) -> Any:
        y = x + 1
        y = jax.debug.breakpoint(token=y, stdin=io.StringIO("p y\nc\n"), stdout=out2)
        return y * 2

    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), (np.arange(3.0) + 1) * 2)
    assert repr(x + 1) in out2.getvalue()
    with pytest.raises(ValueError, match="mutually exclusive"):
        jax.debug.breakpoint(token=x, ordered=True)


def test_registered_debuggers_and_the_choice_of_backend() -> None:
    from minijax import debugger

    seen: list[Any] = []
    name = f"test_recorder_{len(debugger._debuggers)}"  # the registry is the process's: one name per test run
    debugger.register_debugger(name, lambda frames, thread_id, **kw: seen.append(frames), -5)
    with pytest.raises(ValueError, match="already registered"):
        debugger.register_debugger(name, lambda *a, **k: None, 0)

    def f(x: Any) -> Any:
        w = x + 2
        jax.debug.breakpoint(backend=name)
        return w

    jax.jit(f)(jnp.float32(1.0))
    (frames,) = seen
    assert frames[0].locals["w"] == 3.0 and frames[0].filename == __file__
    assert all("minijax" not in fr.filename.split("/")[-2:-1] for fr in frames)  # minijax's frames filtered
