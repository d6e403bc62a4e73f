"""jit traces as often as real JAX does for the same programs: fresh jit(f) wrappers of
one function share its cache; a fresh function (lambda, grad(f), vmap(f), partial) does not."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402  (after the importorskip)

pytestmark = pytest.mark.oracle


def _f_of(lib: Any, counter: list[int]) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        counter[0] += 1
        return lib.numpy.sin(x) * 2.0

    return f


def _loss_of(lib: Any, counter: list[int]) -> Callable[[Any], Any]:
    def loss(p: Any) -> Any:
        counter[0] += 1
        return lib.numpy.sum(p**2)

    return loss


def _power_of(lib: Any, counter: list[int]) -> Callable[..., Any]:
    def power(x: Any, n: int) -> Any:
        counter[0] += 1
        return x**n

    return power


# Each program: (lib, x, f, loss, power) -> None, run three times over.
PROGRAMS: dict[str, Callable[[Any, Any, Any, Any, Any], Any]] = {
    "jit(f)": lambda lib, x, f, loss, power: lib.jit(f)(x),
    "sharp bits 4. then 5.": lambda lib, x, f, loss, power: (lib.jit(f)(4.0), lib.jit(f)(5.0)),
    "jit(grad(loss))": lambda lib, x, f, loss, power: lib.jit(lib.grad(loss))(x),
    "jit(value_and_grad(loss))": lambda lib, x, f, loss, power: lib.jit(lib.value_and_grad(loss))(x),
    "jit(vmap(f))": lambda lib, x, f, loss, power: lib.jit(lib.vmap(f))(x),
    "jit(partial(f))": lambda lib, x, f, loss, power: lib.jit(functools.partial(f))(x),
    "jit(lambda)": lambda lib, x, f, loss, power: lib.jit(lambda y: f(y))(x),
    "jit(jit(f))": lambda lib, x, f, loss, power: lib.jit(lib.jit(f))(x),
    "grad of jit(f)": lambda lib, x, f, loss, power: (lib.jit(f)(x), lib.grad(lambda y: lib.jit(f)(y).sum())(x)),
    "dtypes": lambda lib, x, f, loss, power: (lib.jit(f)(x), lib.jit(f)(x.astype("int32")), lib.jit(f)(1.0)),
    "shapes": lambda lib, x, f, loss, power: (lib.jit(f)(x), lib.jit(f)(x[:2])),
    "static args": lambda lib, x, f, loss, power: (
        lib.jit(power, static_argnums=1)(x, 2),
        lib.jit(power, static_argnums=1)(x, 3),
        lib.jit(power, static_argnames="n")(x, n=2),
    ),
    "no donation is no donation": lambda lib, x, f, loss, power: (lib.jit(f)(x), lib.jit(f, donate_argnums=())(x)),
}


def _traces(lib: Any, program: Callable[..., Any]) -> int:
    counter = [0]
    f, loss, power = _f_of(lib, counter), _loss_of(lib, counter), _power_of(lib, counter)
    x = lib.numpy.ones(3)
    for _ in range(3):
        program(lib, x, f, loss, power)
    return counter[0]


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_trace_counts_match_jax(name: str) -> None:
    program = PROGRAMS[name]
    assert _traces(minijax, program) == _traces(jax, program)


def test_log_compiles_line_matches_jax(caplog: pytest.LogCaptureFixture) -> None:
    def h(x: Any, y: Any) -> Any:
        return x * y

    lines: dict[str, list[str]] = {}
    for lib in (jax, minijax):
        caplog.clear()
        with caplog.at_level(logging.WARNING), lib.log_compiles():
            lib.jit(h)(lib.numpy.ones((2, 3)), 2.0)
        lines[lib.__name__] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Compiling jit(h)")]
    assert len(lines["jax"]) == 1
    assert lines["minijax"] == lines["jax"]


def test_explain_cache_misses_reason_matches_jax(caplog: pytest.LogCaptureFixture) -> None:
    def g(x: Any) -> Any:
        return x + 1

    reasons: dict[str, list[str]] = {}
    for lib in (jax, minijax):
        caplog.clear()
        with caplog.at_level(logging.WARNING), lib.explain_cache_misses(True):
            lib.jit(g)(lib.numpy.ones(3))
            lib.jit(g)(lib.numpy.ones(4))
        messages = [r.getMessage() for r in caplog.records if r.getMessage().startswith("TRACING CACHE MISS")]
        # The first line names the call site (this file, another line per library); the rest is the reason.
        reasons[lib.__name__] = [m.split("\n", 1)[1] for m in messages]
    assert len(reasons["jax"]) == 2
    assert reasons["minijax"][1] == reasons["jax"][1]
    assert reasons["minijax"][0].split(" id=")[0] == reasons["jax"][0].split(" id=")[0]
