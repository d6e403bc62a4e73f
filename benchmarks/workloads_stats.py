"""``jax.scipy.stats`` workloads (issue 21), for ``benchmarks/run.py``.

``norm_logpdf_1e6``: a cached ``jit(jax.scipy.stats.norm.logpdf)`` of one
million float32 values, blocked on (NumPy: the same formula in NumPy). The
target is at most 1.1x JAX's time: both trace the same few elementwise
operations, which XLA fuses into one loop.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from typing import Any

NORM_SIZE = 1_000_000


def norm_logpdf_1e6(lib: Any) -> tuple[Callable[[], Any], int]:
    import numpy as np

    x = np.random.default_rng(0).standard_normal(NORM_SIZE).astype(np.float32)
    if lib.jax is None:
        half_log_two_pi = np.float32(0.5 * math.log(2 * math.pi))
        return (lambda: -0.5 * x * x - half_log_two_pi), 1
    norm = importlib.import_module(f"{lib.name}.scipy.stats").norm
    xd = lib.jax.device_put(x)
    jitted = lib.jax.jit(norm.logpdf)
    jitted(xd).block_until_ready()
    return (lambda: jitted(xd).block_until_ready()), 1


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "norm_logpdf_1e6": (norm_logpdf_1e6, "cached jit(jax.scipy.stats.norm.logpdf), f32[1e6], blocked", "s"),
}
