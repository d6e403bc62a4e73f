"""Inputs that used to kill the process inside XLA, and the sizes behind them.

* Shape sizes are exact (``minijax.core.shape_size``): ``np.prod(..., int64)``
  wrapped, so a reshape of 0 elements to (2**30, 2**30, 16) passed the size
  check and XLA aborted. A result too large to address is refused with a
  ValueError before any backend allocates it.
* Integer ``div``/``rem`` by a constant zero under jit: XLA's constant folder
  died with SIGFPE. The XLA lowering guards the divisor; the results are
  those of the NumPy backend and of XLA at run time.
* A jitted chain of 30,000 operations: XLA's fusion analysis overflowed its
  2 MiB compiler-thread stack. The lowering breaks chains deeper than
  ``MAX_FUSED_DEPTH`` with calls XLA does not inline.

What could crash runs in a fresh interpreter, so a regression fails the test
instead of killing the test run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import config_context
from minijax.core import ShapedArray, shape_size

# The chain length of the long-chain test; its default is the length that
# used to segfault. MINIJAX_TEST_CHAIN_LENGTH=100000 runs the long version.
CHAIN_LENGTH = int(os.environ.get("MINIJAX_TEST_CHAIN_LENGTH", "30000"))


def _run_isolated(code: str, backend: str) -> Any:
    """Run ``code`` on ``backend`` in a fresh interpreter; the JSON it prints last."""
    env = {**os.environ, "MINIJAX_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600, env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"the subprocess died (exit {done.returncode}):\n{done.stdout}\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def _needs_jaxlib(backend: str) -> None:
    if backend == "xla":
        pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")


# --- exact sizes -------------------------------------------------------------------------------


@pytest.mark.single_backend
def test_sizes_of_shapes_past_int64_are_exact() -> None:
    assert shape_size((2**32, 2**32)) == 2**64
    assert shape_size((np.int64(2**32), np.int64(2**32), 3)) == 3 * 2**64  # NumPy ints do not wrap either
    assert shape_size(()) == 1
    assert jax.ShapeDtypeStruct((2**32, 2**32), jnp.float32).size == 2**64
    assert ShapedArray((2**40, 2**40), np.float32).size == 2**80
    # Abstract evaluation of huge shapes is fine, as in JAX; only running them is refused.
    out = jax.eval_shape(lambda x: x.sum(axis=0), jax.ShapeDtypeStruct((2**40, 2**40), jnp.float32))
    assert out.shape == (2**40,)


_SIZE_CASES = """
import json
import minijax as jax, minijax.numpy as jnp
from minijax import lax

def outcome(f):
    try:
        f()
    except Exception as e:
        return [type(e).__name__, str(e)]
    return ["ok", ""]

big = (2**30, 2**30, 16)
cases = {
    "jnp.reshape": lambda: jnp.zeros((0,)).reshape(big),
    "jnp.reshape under jit": lambda: jax.jit(lambda x: x.reshape(big))(jnp.zeros((0,))),
    "lax.reshape": lambda: lax.reshape(jnp.zeros((0,)), big),
    "make_jaxpr of jnp.reshape": lambda: jax.make_jaxpr(lambda x: x.reshape(big))(jnp.zeros((0,))),
    "zeros": lambda: jnp.zeros((2**31 - 1, 2**31 - 1, 4)),
    "zeros under jit": lambda: jax.jit(lambda: jnp.zeros((2**31 - 1, 2**31 - 1, 4)))(),
    "broadcast_to": lambda: jnp.broadcast_to(jnp.float32(1), (2**30, 2**30, 2**30)),
    "broadcast_to under jit": lambda: jax.jit(lambda x: jnp.broadcast_to(x, (2**30, 2**30, 8)))(1.0),
    "empty with huge dimensions": lambda: jnp.zeros((2**31 - 1, 2**31 - 1, 2**31 - 1, 0)),
    "largest addressable int8 dimension": lambda: jax.eval_shape(lambda: jnp.zeros((2**31 - 1,), jnp.int8)),
}
print(json.dumps({name: outcome(f) for name, f in cases.items()}))
"""


@pytest.mark.single_backend
@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_shapes_too_large_to_address_raise_before_any_backend_allocates(backend: str) -> None:
    _needs_jaxlib(backend)
    got = _run_isolated(_SIZE_CASES, backend)
    # JAX's error for jnp.reshape, word for word (it computes the sizes exactly too).
    jax_reshape = (
        "cannot reshape array of shape (0,) (size 0) into shape (1073741824, 1073741824, 16) "
        "(size 18446744073709551616)"
    )
    for name in ("jnp.reshape", "jnp.reshape under jit", "make_jaxpr of jnp.reshape"):
        assert got[name] == ["TypeError", jax_reshape], name
    kind, message = got["lax.reshape"]
    assert kind == "ValueError" and "18446744073709551616" in message  # reshape C2, with the exact size
    for name in ("zeros", "zeros under jit", "broadcast_to", "broadcast_to under jit", "empty with huge dimensions"):
        kind, message = got[name]
        assert kind == "ValueError", (name, got[name])
        assert message.startswith("broadcast_in_dim: result f32[") and "(2**63 - 1)" in message, (name, message)
    assert "has no elements" in got["empty with huge dimensions"][1]
    assert got["largest addressable int8 dimension"][0] == "ok"


# --- integer division by zero --------------------------------------------------------------------

_DIVISIONS: list[tuple[str, list[int], list[int]]] = [
    ("int32", [7, -7, 0, -(2**31), -(2**31), 5], [0, 0, 0, -1, 0, 3]),
    ("int8", [7, -7, 0, -128, 127], [0, 0, 0, -1, 0]),
    ("uint32", [7, 0, 2**32 - 1, 9], [0, 0, 0, 4]),
    ("uint8", [7, 0, 255], [0, 0, 0]),
]


def _division_results(constant: bool) -> dict[str, list[list[int]]]:
    """div and rem of each row of _DIVISIONS under jit: both operands constants
    (folded by XLA), or passed in (computed at run time)."""
    out = {}
    for dtype, xs, ys in _DIVISIONS:
        x, y = np.array(xs, dtype), np.array(ys, dtype)
        if constant:
            q, r = jax.jit(lambda x=x, y=y: (lax.div(x, y), lax.rem(x, y)))()  # (closed over: constants)
        else:
            q, r = jax.jit(lambda a, b: (lax.div(a, b), lax.rem(a, b)))(x, y)
        out[dtype] = [np.asarray(q).tolist(), np.asarray(r).tolist()]
    return out


def test_integer_division_by_a_constant_zero_under_jit_gives_the_runtime_results(backend_name: str) -> None:
    _needs_jaxlib(backend_name)
    code = f"""
        import json, sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_sizes_and_crashes import _division_results
        print(json.dumps(_division_results(True)))
    """
    folded = _run_isolated(code, backend_name)
    at_run_time = _division_results(False)
    with config_context(minijax_backend="numpy"):
        reference = _division_results(False)
    assert folded == at_run_time == reference
    # XLA's semantics, which JAX shares at run time: x / 0 has every bit set, x % 0 is x,
    # and INT_MIN / -1 is INT_MIN with remainder 0.
    assert reference["int32"] == [[-1, -1, -1, -(2**31), -1, 1], [7, -7, 0, 0, -(2**31), 2]]
    assert reference["uint8"] == [[255, 255, 255], [7, 0, 255]]


# --- long chains -----------------------------------------------------------------------------


@pytest.mark.single_backend
def test_a_long_jitted_chain_compiles_and_runs_on_xla() -> None:
    pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")
    got = _run_isolated(
        f"""
        import json, time
        import minijax as jax
        from minijax import lax

        def chain(x):
            for _ in range({CHAIN_LENGTH}):
                x = lax.sin(x)
            return x

        start = time.perf_counter()
        value = float(jax.jit(chain)(0.5))
        print(json.dumps([value, time.perf_counter() - start]))
        """,
        "xla",
    )
    value, seconds = got
    print(f"{CHAIN_LENGTH} chained sin: traced, compiled and run in {seconds:.1f} s")
    reference = np.float32(0.5)
    for _ in range(CHAIN_LENGTH):
        reference = np.sin(reference)
    np.testing.assert_allclose(value, reference, rtol=1e-3)


@pytest.mark.single_backend
def test_chains_are_broken_only_past_the_fused_depth_and_through_nested_calls() -> None:
    pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")
    from minijax_xla.lowering import MAX_FUSED_DEPTH

    def chain(n: int) -> Any:
        def f(x: Any) -> Any:
            for _ in range(n):
                x = lax.sin(x)
            return x

        return f

    def breaks(f: Any) -> int:
        with config_context(minijax_backend="xla"):
            text = jax.jit(f).lower(np.float32(0.5)).as_text()
        return text.count('call @fusion_break')

    assert breaks(chain(MAX_FUSED_DEPTH - 1)) == 0  # an ordinary program is lowered as it always was
    assert breaks(chain(3 * MAX_FUSED_DEPTH)) == 3
    # XLA inlines nested jits, so their chains add up: three calls of a jit
    # of 2/3 of the depth make a chain twice as deep as the limit.
    inner = jax.jit(chain(2 * MAX_FUSED_DEPTH // 3))
    assert breaks(lambda x: inner(inner(inner(x)))) >= 1
