"""The segment-reduction workload of issue 21 (``jax.ops``).

``segment_sum_1e6``: a cached ``jit(lambda d, s: jax.ops.segment_sum(d, s,
1000))`` with ``d`` f32[1e6] and ``s`` int32[1e6] random segment ids in
``[0, 1000)``, blocked on (NumPy: ``np.add.at`` into zeros). Both libraries
compile it to one ``stablehlo.scatter`` with an add region into a filled
f32[1000]; the target is at most 1.1x JAX's time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SIZE = 1_000_000
SEGMENTS = 1_000


def segment_sum_1e6(lib: Any) -> tuple[Callable[[], Any], int]:
    import numpy as np

    rng = np.random.default_rng(0)
    data = rng.standard_normal(SIZE).astype(np.float32)
    ids = rng.integers(0, SEGMENTS, SIZE).astype(np.int32)
    if lib.jax is None:

        def numpy_segment_sum() -> Any:
            out = np.zeros(SEGMENTS, np.float32)
            np.add.at(out, ids, data)
            return out

        return numpy_segment_sum, 1
    dd, sd = lib.jax.device_put(data), lib.jax.device_put(ids)
    segment_sum = lib.jax.ops.segment_sum
    jitted = lib.jax.jit(lambda d, s: segment_sum(d, s, SEGMENTS))
    jitted(dd, sd).block_until_ready()
    return (lambda: jitted(dd, sd).block_until_ready()), 1


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "segment_sum_1e6": (segment_sum_1e6, "cached jit(jax.ops.segment_sum), f32[1e6] into 1e3 segments, blocked", "s"),
}
