"""Windowed-reduction workloads (issue 18), for ``benchmarks/run.py``.

``max_pool_grad``: a cached ``jit(value_and_grad(...))`` of 2x2/stride-2 max
pooling over f32[32, 64, 64, 32] (NHWC) -- the forward reduce_window_max and
its gradient, select_and_scatter_add -- blocked on. Both libraries hand XLA
the same two ops, so the ratio is about what minijax hands XLA and its
dispatch. NumPy: the same computation on a (32, 32, 2, 32, 2, 32) view, the
gradient going to each window's first maximum.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

POOL_SHAPE = (32, 64, 64, 32)


def _numpy_max_pool_value_and_grad(x: Any) -> Any:
    import numpy as np

    n, h, w, c = x.shape
    windows = x.reshape(n, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4).reshape(n, h // 2, w // 2, c, 4)
    first = windows.argmax(axis=-1)
    pooled = np.take_along_axis(windows, first[..., None], -1)[..., 0]
    grad = np.zeros_like(windows)
    np.put_along_axis(grad, first[..., None], 1.0, -1)
    grad = grad.reshape(n, h // 2, w // 2, c, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(x.shape)
    return pooled.sum(), grad


def max_pool_grad(lib: Any) -> tuple[Callable[[], Any], int]:
    import numpy as np

    x = np.random.default_rng(0).standard_normal(POOL_SHAPE).astype(np.float32)
    if lib.jax is None:
        return (lambda: _numpy_max_pool_value_and_grad(x)), 1
    lax = lib.jax.lax

    def loss(x: Any) -> Any:
        return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum()

    step = lib.jax.jit(lib.jax.value_and_grad(loss))
    xd = lib.jax.device_put(x)
    lib.jax.block_until_ready(step(xd))
    return (lambda: lib.jax.block_until_ready(step(xd))), 1


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "max_pool_grad": (max_pool_grad, "cached jit(value_and_grad) of 2x2/s2 max pooling, f32[32,64,64,32] NHWC", "s"),
}
