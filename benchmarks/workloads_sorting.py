"""Sorting workloads (issue 7), for ``benchmarks/run.py``.

``sort_1e6``: a cached ``jit(jnp.sort)`` of one million random float32
values, blocked on (NumPy: ``np.sort``). The target is at most 1.1x JAX's
time: both compile to XLA's sort with the same comparator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SORT_SIZE = 1_000_000


def sort_1e6(lib: Any) -> tuple[Callable[[], Any], int]:
    import numpy as np

    x = np.random.default_rng(0).standard_normal(SORT_SIZE).astype(np.float32)
    if lib.jax is None:
        return (lambda: np.sort(x)), 1
    xd = lib.jax.device_put(x)
    jitted = lib.jax.jit(lib.jnp.sort)
    jitted(xd).block_until_ready()
    return (lambda: jitted(xd).block_until_ready()), 1


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "sort_1e6": (sort_1e6, "cached jit(jnp.sort), f32[1e6] random, blocked", "s"),
}
