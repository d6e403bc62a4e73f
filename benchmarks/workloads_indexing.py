"""Indexing workloads (issue 7), for ``benchmarks/run.py``.

``gather_1e5``: a cached ``jit(lambda x, i: x[i])`` with ``x`` f32[1e5] and
``i`` int32[1e5] random indices (a gather), blocked on (NumPy: ``x[i]``).

``scatter_add_1e5``: a cached ``jit(lambda x, i, v: x.at[i].add(v))`` with
1e5 random (colliding) indices (a scatter-add), blocked on (NumPy:
``np.add.at`` on a copy).

The target is at most 1.1x JAX's time: both compile to the same
``stablehlo.gather`` / ``stablehlo.scatter`` (plus the wrap of negative
indices) on the XLA backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SIZE = 100_000


def _data() -> tuple[Any, Any, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal(SIZE).astype(np.float32)
    i = rng.integers(0, SIZE, SIZE).astype(np.int32)
    v = rng.standard_normal(SIZE).astype(np.float32)
    return x, i, v


def gather_1e5(lib: Any) -> tuple[Callable[[], Any], int]:
    x, i, _ = _data()
    if lib.jax is None:
        return (lambda: x[i]), 1
    xd, id_ = lib.jax.device_put(x), lib.jax.device_put(i)
    jitted = lib.jax.jit(lambda a, b: a[b])
    jitted(xd, id_).block_until_ready()
    return (lambda: jitted(xd, id_).block_until_ready()), 1


def scatter_add_1e5(lib: Any) -> tuple[Callable[[], Any], int]:
    import numpy as np

    x, i, v = _data()
    if lib.jax is None:

        def numpy_scatter_add() -> Any:
            out = x.copy()
            np.add.at(out, i, v)
            return out

        return numpy_scatter_add, 1
    xd, id_, vd = lib.jax.device_put(x), lib.jax.device_put(i), lib.jax.device_put(v)
    jitted = lib.jax.jit(lambda a, b, c: a.at[b].add(c))
    jitted(xd, id_, vd).block_until_ready()
    return (lambda: jitted(xd, id_, vd).block_until_ready()), 1


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "gather_1e5": (gather_1e5, "cached jit(x[i]), f32[1e5], i int32[1e5] random, blocked", "s"),
    "scatter_add_1e5": (scatter_add_1e5, "cached jit(x.at[i].add(v)), f32[1e5], 1e5 random indices, blocked", "s"),
}
