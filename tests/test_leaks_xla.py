"""No growth on XLA: repeated calls, a training loop and captured constants (issue 22, items 5 and 6).

* jaxlib queues the Python objects its worker threads are done with (the
  traceback it records for each execution, a transfer's host array) and frees
  them only when asked; minijax asks after every execution.
* A jitted function's captured arrays are passed to its program as they are
  (held once) and no cache outlives the function.
* A program that fails (out of memory) raises ``minijax.errors.JaxRuntimeError``
  with XLA's status text at the first read of a result.

The loops run as long as issue 22 asks by default (100,000 calls, 20,000 steps:
about 3 s together); MINIJAX_LEAK_CALLS and MINIJAX_LEAK_STEPS change that.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")


import minijax as jax  # noqa: E402
import minijax.numpy as jnp  # noqa: E402
from minijax import errors  # noqa: E402
from minijax.backend import get_backend  # noqa: E402
from minijax.config import config_context  # noqa: E402

pytestmark = pytest.mark.single_backend  # every test names the xla backend itself

XLA = get_backend("xla")
CALLS = int(os.environ.get("MINIJAX_LEAK_CALLS", "100000"))
STEPS = int(os.environ.get("MINIJAX_LEAK_STEPS", "20000"))
# What a loop may leave behind whatever its length, in Python-heap blocks:
# objects jaxlib holds for release later (one per call before issue 22) ...
PENDING_BOUND = 50
# ... and all blocks, which include what CPython keeps for reuse (up to 2,000
# freed tuples of each length) and caches settling; a leak of one object per
# call grows past this at the default lengths.
BLOCKS_BOUND = 2500


@pytest.fixture(autouse=True)
def _on_xla() -> Iterator[None]:
    with config_context(minijax_backend="xla"):
        yield


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Growth:
    """What a loop left behind (see ``_growth``)."""

    def __init__(self, blocks: int, pending: int, objects: int, buffers: int, rss: float) -> None:
        self.blocks, self.pending, self.objects, self.buffers, self.rss = blocks, pending, objects, buffers, rss

    def __repr__(self) -> str:
        return (
            f"blocks +{self.blocks}, of which held by jaxlib for release {self.pending}; gc objects "
            f"+{self.objects}; device buffers +{self.buffers}; RSS +{self.rss:.1f} MiB"
        )


def _growth(loop: Callable[[], Any]) -> Growth:
    """What ``loop()`` leaves behind: Python-heap blocks (and how many of them
    jaxlib holds until it is told to release them), gc-tracked objects, live
    device buffers and MiB of RSS. Python's collector is off meanwhile: only
    what minijax releases itself is released."""
    from jaxlib import xla_client  # (loaded by now: after the backend, as its logging wants)

    gc.collect()
    collect = xla_client._xla.collect_garbage
    collect()
    blocks, objects, buffers, rss = sys.getallocatedblocks(), len(gc.get_objects()), XLA.live_buffer_count(), _rss_mib()
    gc.disable()
    try:
        loop()
        after = sys.getallocatedblocks()
        grown = Growth(after - blocks, 0, len(gc.get_objects()) - objects, XLA.live_buffer_count() - buffers, _rss_mib() - rss)
        collect()
        grown.pending = after - sys.getallocatedblocks()
    finally:
        gc.enable()
    return grown


def test_cached_jit_calls_leave_nothing_behind() -> None:
    f = jax.jit(lambda x: x * 2.0 + 1.0)
    x = jnp.ones((4,))
    for _ in range(100):
        y = f(x)
    y.block_until_ready()
    executables = XLA.live_executable_count()

    def loop() -> None:
        y = f(x)
        for _ in range(CALLS):
            y = f(x)
        y.block_until_ready()

    grown = _growth(loop)
    assert grown.pending < PENDING_BOUND and grown.blocks < BLOCKS_BOUND, f"{CALLS} cached calls: {grown}"
    assert grown.objects < 50 and grown.buffers == 0, f"{CALLS} cached calls: {grown}"
    assert XLA.live_executable_count() == executables
    assert grown.rss < 16, f"{CALLS} cached calls: {grown}"


def test_a_training_loop_leaves_nothing_behind() -> None:
    rng = np.random.default_rng(0)
    shapes = [(32, 64), (64,), (64, 10), (10,)]
    params = [jnp.asarray(rng.normal(size=s).astype(np.float32) * 0.1) for s in shapes]
    inputs = jnp.asarray(rng.normal(size=(128, 32)).astype(np.float32))
    targets = jnp.asarray(rng.normal(size=(128, 10)).astype(np.float32))

    def loss(p: list[Any], x: Any, y: Any) -> Any:
        h = jnp.tanh(x @ p[0] + p[1])
        return jnp.mean((h @ p[2] + p[3] - y) ** 2)

    @jax.jit
    def step(p: list[Any], x: Any, y: Any) -> list[Any]:
        grads = jax.grad(loss)(p, x, y)
        return [w - 0.01 * g for w, g in zip(p, grads)]

    for _ in range(50):
        params = step(params, inputs, targets)
    start = float(loss(params, inputs, targets))
    state = {"params": params}
    del params

    def loop() -> None:
        p = state["params"]
        for _ in range(STEPS):
            p = step(p, inputs, targets)
        p[0].block_until_ready()
        state["params"] = p

    grown = _growth(loop)
    assert float(loss(state["params"], inputs, targets)) < start  # it trained
    assert grown.pending < PENDING_BOUND and grown.blocks < BLOCKS_BOUND, f"{STEPS} training steps: {grown}"
    assert grown.objects < 50 and grown.buffers == 0, f"{STEPS} training steps: {grown}"
    assert grown.rss < 16, f"{STEPS} training steps: {grown}"


def test_a_transfer_releases_its_host_array_at_once() -> None:
    host = np.arange(1 << 16, dtype=np.float32)
    alive = weakref.ref(host)
    gc.disable()  # (Python's collector also tells jaxlib to release)
    try:
        on_device = jnp.asarray(host)
        del host
        assert alive() is None  # jaxlib does not keep the host copy until the next call
    finally:
        gc.enable()
    assert float(on_device[3]) == 3.0


def _close_over(value: Any) -> Any:
    return jax.jit(lambda v: v + value)


@pytest.mark.parametrize("kind", ["minijax", "numpy"])
def test_a_captured_array_goes_with_its_function(kind: str) -> None:
    host = np.arange(1000.0, dtype=np.float32)
    captured = jnp.asarray(host) if kind == "minijax" else host
    alive = weakref.ref(captured)
    f = _close_over(captured)
    np.testing.assert_allclose(np.asarray(f(jnp.ones(1000))), host + 1)
    buffers = XLA.live_buffer_count()
    del captured, host
    gc.collect()
    assert alive() is not None  # the function still needs it
    np.testing.assert_allclose(np.asarray(f(jnp.ones(1000)))[:3], [1.0, 2.0, 3.0])
    del f
    gc.collect()
    assert alive() is None  # no cache of compiled programs keeps it
    # Nor its device copy (numpy) or buffer (minijax): the program held one.
    assert XLA.live_buffer_count() == buffers - 1


def test_an_array_captured_by_a_nested_jit_goes_with_the_functions() -> None:
    def make() -> tuple[Any, Any]:
        captured = jnp.arange(1000.0)
        inner = jax.jit(lambda v: v + captured)
        outer = jax.jit(lambda v: inner(v) * 2.0)
        np.testing.assert_allclose(np.asarray(outer(jnp.ones(1000)))[:3], [2.0, 4.0, 6.0])
        return weakref.ref(captured), outer

    alive, outer = make()
    gc.collect()
    assert alive() is not None
    del outer
    gc.collect()
    assert alive() is None  # no memo of abstract evaluation keeps the inner jaxpr


def test_a_module_embedding_large_constants_has_a_context_of_its_own() -> None:
    # An MLIR context keeps every attribute built in it: the large constant of
    # a nested function must not stay in the shared one after the program goes.
    from minijax_xla import jaxlib_api
    from minijax_xla.lowering import PRIVATE_CONTEXT_MIN_BYTES, lower_jaxpr

    def nested_over(size: int) -> Any:
        captured = jnp.arange(float(size))
        inner = jax.jit(lambda v: v + captured)
        return jax.make_jaxpr(lambda v: inner(v) * 2.0)(jnp.ones(size))

    big = nested_over(PRIVATE_CONTEXT_MIN_BYTES // 4 + 1)
    small = nested_over(100)
    assert lower_jaxpr(big)[0].context is not jaxlib_api.mlir_context()
    assert lower_jaxpr(small)[0].context is jaxlib_api.mlir_context()


def test_a_captured_array_is_held_once() -> None:
    captured = jnp.arange(1000.0)
    f = _close_over(captured)
    x = jnp.ones(1000)
    buffers = XLA.live_buffer_count()
    out = f(x)
    # The one new buffer is the result: the program reads the captured
    # array's own buffer instead of a copy of it.
    assert XLA.live_buffer_count() == buffers + 1
    del out
    assert XLA.live_buffer_count() == buffers
    # Deleting the Array keeps the program working (as in JAX): the buffer
    # stays while the program needs it.
    captured.delete()
    np.testing.assert_allclose(np.asarray(f(x))[:3], [1.0, 2.0, 3.0])


def test_a_captured_array_donated_elsewhere_still_serves_its_function() -> None:
    # The program shares the captured array's buffer: a program given that
    # array with donation takes over a copy instead, and both answers are
    # right (as in JAX, where the donated array reads as deleted).
    captured = jnp.arange(1000.0)
    f = _close_over(captured)
    x = jnp.ones(1000)
    f(x)
    doubled = jax.jit(lambda v: v * 2.0, donate_argnums=0)(captured)
    assert captured.is_deleted()
    np.testing.assert_allclose(np.asarray(doubled)[:3], [0.0, 2.0, 4.0])
    np.testing.assert_allclose(np.asarray(f(x))[:3], [1.0, 2.0, 3.0])
    # Passed to its own function, donated: XLA would refuse a call that
    # donates a buffer it also reads.
    c = jnp.arange(1000.0)
    g = jax.jit(lambda v: v + c, donate_argnums=0)
    np.testing.assert_allclose(np.asarray(g(c))[:3], [0.0, 2.0, 4.0])
    np.testing.assert_allclose(np.asarray(g(x))[:3], [1.0, 2.0, 3.0])


def test_a_captured_buffer_deleted_underneath_is_named() -> None:
    captured = jnp.arange(1000.0)
    f = _close_over(captured)
    x = jnp.ones(1000)
    f(x)
    captured._buf.delete()  # the runtime's buffer itself, which no public API deletes
    with pytest.raises(RuntimeError, match=r"an array captured by the jitted function \(float32\[1000\]\) has had its"):
        f(x)


# Run in a fresh interpreter: before issue 22 reading such a result aborted
# the process inside XLA. The address space is capped, so the program's
# 4 TB allocation fails at once whatever the machine's overcommit policy.
_OUT_OF_MEMORY = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
import numpy as np
import minijax as jax, minijax.numpy as jnp
from minijax import errors

def huge(x):
    return jnp.broadcast_to(x, (1_000_000, 1_000_000)) + 1.0

x = jnp.ones((1_000_000,))
for name, read in [
    ("np.asarray", lambda: np.asarray(jax.jit(huge)(x))),
    ("repr", lambda: repr(jax.jit(huge)(x))),
    ("a scalar", lambda: float(jax.jit(lambda x: jnp.sum(jnp.sort(huge(x), axis=0)))(x))),
    ("an eager op on it", lambda: float(jax.jit(huge)(x)[0, 0])),
    ("block_until_ready", lambda: jax.jit(huge)(x).block_until_ready()),
]:
    try:
        read()
        print(name, "read fine")
    except errors.JaxRuntimeError as e:
        print(name, "JaxRuntimeError", str(e).splitlines()[0])
    except Exception as e:
        print(name, "other", type(e).__name__, str(e).splitlines()[0])
"""


def test_out_of_memory_raises_jax_runtime_error_at_the_first_read() -> None:
    env = {**os.environ, "MINIJAX_BACKEND": "xla", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_OUT_OF_MEMORY)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, f"the process died ({done.returncode}):\n{done.stderr[-3000:]}"
    lines = done.stdout.splitlines()
    assert len(lines) == 5, done.stdout
    for line in lines:
        assert "JaxRuntimeError" in line and "Out of memory allocating 4000000000000 bytes" in line, line
    assert len(done.stderr.splitlines()) < 10, done.stderr[-3000:]  # no flood from XLA


def test_jax_runtime_error_is_public_and_a_runtime_error() -> None:
    assert "JaxRuntimeError" in errors.__all__
    assert issubclass(errors.JaxRuntimeError, RuntimeError)
