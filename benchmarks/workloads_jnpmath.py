"""Order-statistics workloads (issue 21), for ``benchmarks/run.py``.

``median_1e6`` / ``percentile_1e6``: a cached ``jit`` of ``jnp.median`` /
``jnp.percentile`` (three percentiles) of one million random float32 values,
blocked on (NumPy: ``np.median`` / ``np.percentile``). Both are a sort and two
gathers; the target is at most 1.1x JAX's time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SIZE = 1_000_000


def _setup(lib: Any, name: str) -> tuple[Callable[[], Any], int]:
    import numpy as np

    x = np.random.default_rng(0).standard_normal(SIZE).astype(np.float32)
    q = np.array([5.0, 50.0, 95.0], np.float32)
    if lib.jax is None:
        fn = (lambda: np.median(x)) if name == "median" else (lambda: np.percentile(x, q))
        return fn, 1
    xd = lib.jax.device_put(x)
    if name == "median":
        jitted = lib.jax.jit(lib.jnp.median)
        jitted(xd).block_until_ready()
        return (lambda: jitted(xd).block_until_ready()), 1
    qd = lib.jax.device_put(q)
    jitted = lib.jax.jit(lib.jnp.percentile)
    jitted(xd, qd).block_until_ready()
    return (lambda: jitted(xd, qd).block_until_ready()), 1


def median_1e6(lib: Any) -> tuple[Callable[[], Any], int]:
    return _setup(lib, "median")


def percentile_1e6(lib: Any) -> tuple[Callable[[], Any], int]:
    return _setup(lib, "percentile")


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "median_1e6": (median_1e6, "cached jit(jnp.median), f32[1e6] random, blocked", "s"),
    "percentile_1e6": (percentile_1e6, "cached jit(jnp.percentile), f32[1e6], q=[5, 50, 95], blocked", "s"),
}
