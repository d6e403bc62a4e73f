"""Host callbacks against real JAX: the same programs print the same lines,
trace to the same jaxpr text and fail with the same error types and messages.

Each program is written once against a namespace holding either library's
functions. The host functions are defined at module level so that their
reprs (which the jaxpr text shows, addresses masked) are the same in both.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

from jax.experimental import io_callback as jax_io_callback  # noqa: E402

import minijax  # noqa: E402
import minijax.callbacks  # noqa: E402
import minijax.debug  # noqa: E402

pytestmark = pytest.mark.oracle


def api(jx: Any) -> types.SimpleNamespace:
    """What the programs use, from ``jax`` or ``minijax``."""
    if jx is jax:
        return types.SimpleNamespace(
            jit=jax.jit, vmap=jax.vmap, make_jaxpr=jax.make_jaxpr, jnp=jax.numpy, debug=jax.debug, S=jax.ShapeDtypeStruct,
            pure_callback=jax.pure_callback, io_callback=jax_io_callback, barrier=jax.effects_barrier,
        )  # fmt: skip
    return types.SimpleNamespace(
        jit=minijax.jit, vmap=minijax.vmap, make_jaxpr=minijax.make_jaxpr, jnp=minijax.numpy, debug=minijax.debug, S=minijax.ShapeDtypeStruct,
        pure_callback=minijax.callbacks.pure_callback, io_callback=minijax.callbacks.io_callback,
        barrier=minijax.callbacks.effects_barrier,
    )  # fmt: skip


def host_sin(x: Any) -> Any:
    return np.sin(np.asarray(x))


def host_pair(x: Any, *, scale: Any) -> Any:
    return np.asarray(x) * np.asarray(scale), np.asarray(x).sum()


def host_add(x: Any, y: Any) -> Any:
    return np.asarray(x) + np.asarray(y)


def host_note(x: Any) -> None:
    return None


def host_wrong_shape(x: Any) -> Any:
    return np.ones(4, np.float32)


def host_wrong_dtype(x: Any) -> Any:
    return np.ones(3, np.int32)


# --- printed output ----------------------------------------------------------------


def print_programs(a: types.SimpleNamespace) -> dict[str, Callable[[], Any]]:
    jnp, debug = a.jnp, a.debug
    x = jnp.arange(3.0)

    def eager() -> None:
        debug.print("x is {} and {y}", x, y=x + 1)
        debug.print("{x:.2f} {n}", x=jnp.float32(1.234), n=7)
        debug.print("{} {} {}", x, "static", 2)
        debug.print("{a[0]} {b}", a=[x, 1], b={"k": 2})
        debug.print("{x!r}", x=x)
        debug.print("{x}", x=jnp.arange(2000.0))
        debug.print("{x} {y} {z}", x=2.5, y=True, z=None)
        debug.print("bare", x, 3, skip_format_check=True)
        debug.print(ordered=True)("two-call {}", x)
        debug.callback(lambda v, s: print("callback", v, s), x, "s")

    def jitted() -> None:
        def f(v: Any) -> Any:
            for i in range(5):
                v = v * 2 if i % 2 else v - 0.375  # exact in float32: the same values in both
                debug.print("step {i}: {v} {r!r}", i=i, v=v, r=v[:1], ordered=True)
            return v

        a.jit(f)(jnp.array([0.0, 0.25, 0.5, 1.0]))
        a.jit(lambda v: debug.print("int {} bool {}", v, v > 1))(jnp.arange(3))

    def printoptions() -> None:
        with np.printoptions(precision=3, suppress=True):
            g = a.jit(lambda v: debug.print("{}", v / 3))
            g(jnp.arange(3.0))
        g(jnp.arange(3.0))

    return {"eager": eager, "jit": jitted, "printoptions": printoptions}


@pytest.mark.parametrize("name", sorted(print_programs(api(minijax))))
def test_printed_lines_match_jax(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    print_programs(api(jax))[name]()
    jax.effects_barrier()
    want = capsys.readouterr().out
    print_programs(api(minijax))[name]()
    got = capsys.readouterr().out
    assert want and got == want


# --- jaxpr text ------------------------------------------------------------------------


def jaxpr_programs(a: types.SimpleNamespace) -> dict[str, tuple[Callable[..., Any], list[Any]]]:
    jnp, debug, S = a.jnp, a.debug, a.S
    x3 = np.ones(3, np.float32)

    def pure(v: Any) -> Any:
        return a.pure_callback(host_sin, S(v.shape, v.dtype), v)

    def pure_tree(v: Any) -> Any:
        out = a.pure_callback(
            host_pair, (S((3,), np.float32), S((), np.float32)), v, scale=2.0, vmap_method="sequential"
        )
        return out[0] + out[1]

    def io(v: Any) -> Any:
        u = a.io_callback(host_sin, S((3,), np.float32), v)
        return a.io_callback(host_sin, S((3,), np.float32), u, ordered=True)

    def prints(v: Any) -> Any:
        debug.print("x is {} and {y}", v, y=v + 1)
        debug.print("{} {} {}", v, "static", 2, ordered=True)
        debug.print("hi")
        return v

    def callbacks(v: Any) -> Any:
        debug.callback(host_note, v)
        debug.callback(host_note, v, ordered=True)
        return jnp.sin(v)

    def batched(method: str) -> Callable[..., Any]:
        def f(v: Any, w: Any) -> Any:
            return a.pure_callback(host_add, S(v.shape, np.float32), v, w, vmap_method=method)

        return a.vmap(f, in_axes=(0, None))

    def batched_print(v: Any) -> Any:
        debug.print("row {}", v)
        return v

    return {
        "vmap_expand_dims": (batched("expand_dims"), [np.ones((2, 3), np.float32), np.float32(1.0)]),
        "vmap_broadcast_all": (batched("broadcast_all"), [np.ones((2, 3), np.float32), np.float32(1.0)]),
        "vmap_legacy_vectorized": (batched("legacy_vectorized"), [np.ones((2, 3), np.float32), np.float32(1.0)]),
        "vmap_print": (a.vmap(batched_print), [np.ones((2, 3), np.float32)]),
        "pure": (pure, [x3]),
        "pure_tree": (pure_tree, [x3]),
        "io": (io, [x3]),
        "prints": (prints, [x3]),
        "callbacks": (callbacks, [x3]),
    }


@pytest.mark.parametrize("name", sorted(jaxpr_programs(api(minijax))))
def test_jaxpr_text_matches_jax(name: str) -> None:
    fn, args = jaxpr_programs(api(jax))[name]
    want = str(jax.make_jaxpr(fn)(*args))
    fn, args = jaxpr_programs(api(minijax))[name]
    assert str(minijax.make_jaxpr(fn)(*args)) == want


# --- errors ------------------------------------------------------------------------------


def error_programs(a: types.SimpleNamespace) -> dict[str, Callable[[], Any]]:
    jnp, S = a.jnp, a.S
    x = jnp.ones(3)
    f32 = S((3,), np.float32)
    return {
        "wrong_shape": lambda: np.asarray(a.jit(lambda v: a.pure_callback(host_wrong_shape, f32, v))(x)),
        "wrong_dtype": lambda: np.asarray(a.pure_callback(host_wrong_dtype, f32, x)),
        "x64_result": lambda: a.pure_callback(host_sin, S((3,), np.float64), x),
        "vmap_method": lambda: a.pure_callback(host_sin, f32, x, vmap_method="vectorized"),
        "unused_argument": lambda: a.debug.print("{}", x, x),
        "unused_keyword": lambda: a.debug.print("{}", x, y=x),
        "missing_argument": lambda: a.debug.print("{} {}", x),
        "two_call_extras": lambda: a.debug.print(ordered=True, y=3),
        "not_callable": lambda: a.debug.callback(3, x),
    }


# The part of the message both libraries must contain (JAX's wording, minijax's prefix aside).
SHARED_MESSAGE = {
    "wrong_shape": "Incorrect output shape for return value #0: Expected: (3,), Actual: (4,)",
    "wrong_dtype": "Incorrect output dtype for return value #0: Expected: float32, Actual: int32",
    "x64_result": "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled",
    "vmap_method": "but got: vectorized",
    "unused_argument": "nused positional arguments",
    "unused_keyword": "nused keyword arguments",
    "missing_argument": "",
    "two_call_extras": "received unexpected arguments in the two-call form: args=() kwargs={'y': 3}",
    "not_callable": "must be callable, but got an object of type",
}


@pytest.mark.parametrize("name", sorted(SHARED_MESSAGE))
def test_errors_match_jax(name: str) -> None:
    with pytest.raises(Exception) as want:
        error_programs(api(jax))[name]()
    with pytest.raises(Exception) as got:
        error_programs(api(minijax))[name]()
    # JAX's runtime errors are its own RuntimeError subclass: compare by the closest builtin type.
    builtin = next(t for t in type(want.value).__mro__ if t.__module__ == "builtins")
    assert isinstance(got.value, builtin), f"JAX raised {type(want.value).__name__}, minijax {type(got.value).__name__}"
    assert SHARED_MESSAGE[name] in str(want.value) and SHARED_MESSAGE[name] in str(got.value)
