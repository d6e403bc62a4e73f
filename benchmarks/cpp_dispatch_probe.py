"""Would jaxlib's C++ ``PjitFunction`` make minijax's cached calls cheaper? (issue 23)

JAX's cached ``jit`` call runs in C++: ``jaxlib._jax.pjit(...)`` returns a
``PjitFunction`` whose ``__call__`` computes the arguments' signature, looks it
up, executes and wraps the results without Python; on a miss it calls a Python
``cache_miss`` that returns the outputs plus "fastpath data" (the executable,
the output avals, shardings, committedness, the output tree) for next time.

minijax's Arrays are Python objects around a jaxlib ``ArrayImpl``, and the C++
path accepts only ``ArrayImpl`` arguments (it tests the exact type) and returns
``ArrayImpl`` results. So the most it could do for minijax is replace the
executable call of the existing fast path (``execute_sharded`` +
``consume_with_handlers``, with the signature already matched in Python) by the
C++ call (which matches the signature again, in C++), with the Python unwrapping
and wrapping left around it. This script measures exactly that, in one process,
interleaved, on the ``jit_dispatch`` workload (``a * b + 1.0``, f32[8], blocked):

- ``minijax jit``: ``f(x, y).block_until_ready()`` as minijax runs it today;
- ``C++ pjit, wrapped``: a ``PjitFunction`` holding the same executable, fed the
  Arrays' buffers, its result wrapped in a minijax Array (the least Python the
  C++ path needs);
- ``execute_sharded, wrapped``: the same least Python around today's executable
  call (no key, no checks: not a sound call path, a floor);
- ``C++ pjit, bare`` and ``execute_sharded, bare``: the two executable calls
  alone on the buffers, blocked;
- the two ``block_until_ready`` methods on a ready result.

Run: ``python benchmarks/cpp_dispatch_probe.py [--rounds N]`` (XLA backend).
It sets jaxlib's ``jax_jit`` config states (disable_jit, x64, post hook) to
constants, which only JAX would otherwise set: run it in a process of its own.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import timeit
from typing import Any

import numpy as np

import minijax
from minijax.array import Array

FastpathData = collections.namedtuple(
    "FastpathData",
    "xla_executable out_pytree_def in_shardings out_shardings out_avals out_committed "
    "kept_var_bitvec in_device_local_layouts const_args",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--number", type=int, default=3000)
    options = parser.parse_args()

    import jaxlib._jax as cpp  # (jaxlib, not jax: minijax never imports jax)

    x = minijax.device_put(np.arange(8, dtype=np.float32))
    y = x
    f = minijax.jit(lambda a, b: a * b + 1.0)
    f(x, y).block_until_ready()
    (entry, hot), _ = next(iter(f._fast_entries.values()))
    device = x._device
    backend = device.backend
    executable = backend._loaded[entry.executable(device)]  # the LoadedExecutable behind the runner
    pjrt = backend._pjrt_device(device)
    registry = cpp.pytree.default_registry()
    cpp.jax_jit.set_disable_jit_state(cpp.config.Config("probe_disable_jit", False))
    cpp.jax_jit.set_enable_x64_state(cpp.config.Config("probe_x64", False))
    cpp.jax_jit.set_post_hook_state(cpp.config.Config("probe_post_hook", None))
    sharding = cpp.SingleDeviceSharding(pjrt)
    n_out = len(entry.out_avals)
    _, out_tree = registry.flatten(list(range(n_out)))

    def cache_miss(*bufs: Any) -> tuple[Any, Any, bool]:
        n = len(bufs)
        data = FastpathData(executable, out_tree, [sharding] * n, [sharding] * n_out, list(entry.out_avals),
                            [False] * n_out, [True] * n, [None] * n, [])  # fmt: skip
        return hot(list(bufs)), data, False

    def no_fallback(*args: Any) -> Any:
        raise AssertionError("the probe passes only buffers already on the executable's device")

    pjit_f = cpp.pjit(
        "f", None, cache_miss, [], [], object(), registry, no_fallback, cpp.PjitFunctionCache(capacity=16)
    )
    bufs = [x._buf, y._buf]
    np.testing.assert_array_equal(np.asarray(pjit_f(*bufs)[0]), np.asarray(f(x, y)))
    aval = entry.out_avals[0]
    wait = cpp.ArrayImpl.block_until_ready

    def wrapped(a: Array, b: Array) -> Array:
        return Array(pjit_f(a._buf, b._buf)[0], aval, backend, device, False)

    def wrapped_python(a: Array, b: Array) -> Array:
        return Array(hot([a._buf, b._buf])[0], aval, backend, device, False)

    out = f(x, y)
    cases = {
        "minijax jit": lambda: f(x, y).block_until_ready(),
        "C++ pjit, wrapped": lambda: wrapped(x, y).block_until_ready(),
        "execute_sharded, wrapped": lambda: wrapped_python(x, y).block_until_ready(),
        "C++ pjit, bare": lambda: wait(pjit_f(*bufs)[0]),
        "execute_sharded, bare": lambda: wait(hot(bufs)[0]),
        "Array.block_until_ready": lambda: out.block_until_ready(),
        "ArrayImpl.block_until_ready": lambda: wait(out._buf),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    gc.disable()
    for _ in range(options.rounds):
        for name, case in cases.items():
            best = min(timeit.repeat(case, number=options.number, repeat=3))
            times[name].append(best / options.number * 1e6)
    gc.enable()
    print(f"load average {os.getloadavg()[0]:.1f}; µs per call, min / median over {options.rounds} interleaved rounds")
    base = times["minijax jit"]
    for name, values in times.items():
        ratios = sorted(v / b for v, b in zip(values, base))
        print(f"  {name:24s} {min(values):7.2f} / {sorted(values)[len(values) // 2]:7.2f}"
              f"   ÷ minijax jit: {ratios[len(ratios) // 2]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
