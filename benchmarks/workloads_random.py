"""Random-number workloads (issue 7), for ``benchmarks/run.py``.

``random_normal_1e6``: a cached ``jit(lambda k: random.normal(k, (10**6,)))``
on a fixed key, blocked on (NumPy: ``Generator.standard_normal``, another
algorithm, for scale). minijax and JAX run the same program: threefry2x32
over a million counters, the mantissa trick, ``erf_inv``. The target is at
most 1.1x JAX's time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

NORMAL_SIZE = 10**6


def random_normal_1e6(lib: Any) -> tuple[Callable[[], Any], int]:
    if lib.jax is None:
        import numpy as np

        rng = np.random.default_rng(0)
        return (lambda: rng.standard_normal(NORMAL_SIZE, dtype=np.float32)), 1
    random = lib.jax.random
    key = random.key(0)
    jitted = lib.jax.jit(lambda k: random.normal(k, (NORMAL_SIZE,)))
    jitted(key).block_until_ready()
    return (lambda: jitted(key).block_until_ready()), 1


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "random_normal_1e6": (random_normal_1e6, "cached jit(random.normal(key, (1e6,))), blocked", "s"),
}
