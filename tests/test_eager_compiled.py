"""``jnp`` functions run as one cached executable when called eagerly on Arrays (issue 23).

``util.compiled_when_eager`` is an optimisation of calling the function
itself (its ``plain`` attribute): these tests check that the two agree
(values, dtypes, weak types, placement), that a traced call inlines the plain
function (no ``jit`` equation in a jaxpr), and that a repeated eager call
dispatches no primitive of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax import core, dispatch
from minijax.array import Array


def _cases() -> list[tuple[str, Callable[..., Any], Callable[[], list[Any]]]]:
    f32 = lambda *s: minijax.device_put(np.arange(np.prod(s), dtype=np.float32).reshape(s) / 7)  # noqa: E731
    i32 = lambda *s: minijax.device_put(np.arange(np.prod(s), dtype=np.int32).reshape(s) - 2)  # noqa: E731
    b = lambda *s: minijax.device_put(np.arange(np.prod(s)).reshape(s) % 3 == 0)  # noqa: E731
    weak = lambda: jnp.asarray(2.0) * 1.5  # noqa: E731  (a weakly typed f32[])
    return [
        ("dot vectors", jnp.dot, lambda: [f32(3), f32(3)]),
        ("dot mixed", jnp.dot, lambda: [i32(2, 3), f32(3)]),
        ("dot weak", jnp.dot, lambda: [weak(), f32(3)]),
        ("matmul batched", jnp.matmul, lambda: [f32(2, 3, 4), f32(4, 2)]),
        ("matmul bool", jnp.matmul, lambda: [b(2, 2), b(2, 2)]),
        ("vdot", jnp.vdot, lambda: [f32(2, 2), f32(2, 2)]),
        ("inner", jnp.inner, lambda: [i32(3), i32(3)]),
        ("outer", jnp.outer, lambda: [f32(3), i32(2)]),
        ("sum int", jnp.sum, lambda: [i32(2, 3)]),
        ("sum bool", jnp.sum, lambda: [b(5)]),
        ("sum weak", jnp.sum, lambda: [weak()]),
        ("prod", jnp.prod, lambda: [f32(4)]),
        ("max", jnp.max, lambda: [i32(2, 3)]),
        ("min", jnp.min, lambda: [f32(2, 3)]),
        ("all", jnp.all, lambda: [b(4)]),
        ("any", jnp.any, lambda: [i32(4)]),
        ("mean int", jnp.mean, lambda: [i32(2, 3)]),
    ]


def _same(got: Any, want: Any) -> None:
    assert type(got) is Array and type(want) is Array
    assert got.aval == want.aval  # shape, dtype and weak type
    assert got.device == want.device and got.committed == want.committed
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_the_compiled_eager_call_agrees_with_the_plain_function(case: tuple[str, Any, Any]) -> None:
    _, fn, make = case
    args = make()
    want = fn.plain(*args)
    _same(fn(*args), want)
    _same(fn(*args), want)  # (now a cache hit)


@pytest.mark.parametrize("case", _cases()[:4], ids=lambda c: c[0])
def test_a_traced_call_inlines_the_plain_function(case: tuple[str, Any, Any]) -> None:
    _, fn, make = case
    args = make()
    assert str(minijax.make_jaxpr(fn)(*args)) == str(minijax.make_jaxpr(fn.plain)(*args))
    assert "jit" not in str(minijax.make_jaxpr(fn)(*args))


def test_a_repeated_eager_call_dispatches_no_primitive(monkeypatch: pytest.MonkeyPatch) -> None:
    x = minijax.device_put(np.ones((2, 3), np.float32))
    y = minijax.device_put(np.ones((3,), np.int32))
    jnp.dot(x, y)  # the first call traces and compiles
    bound: list[str] = []
    real = dispatch.apply_primitive_fast

    def counting(prim: Any, args: Any, params: Any) -> Any:
        bound.append(prim.name)
        return real(prim, args, params)

    monkeypatch.setattr(core.eval_trace, "process_primitive", counting)
    out = jnp.dot(x, y)
    assert bound == []
    np.testing.assert_array_equal(np.asarray(out), np.full(2, 3.0, np.float32))


def test_other_calls_take_the_plain_function() -> None:
    # Lists are refused as jnp's plain functions refuse them; keyword arguments and host
    # operands give what the plain function gives.
    x = minijax.device_put(np.arange(3.0, dtype=np.float32))
    with pytest.raises(TypeError, match="dot requires ndarray or scalar arguments"):
        jnp.dot([1.0, 2.0, 3.0], x)
    _same(jnp.sum(x, axis=0), jnp.sum.plain(x, axis=0))
    _same(jnp.dot(np.ones(3, np.float32), x), jnp.dot.plain(np.ones(3, np.float32), x))
    with minijax.disable_jit():
        _same(jnp.dot(x, x), jnp.dot.plain(x, x))
