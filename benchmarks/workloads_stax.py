"""The CNN training step of issue 18, for ``benchmarks/run.py``.

``cnn_train_step``: one cached ``jit`` step of a LeNet-style CNN written with
``example_libraries.stax`` (Conv 5x5x8 SAME, Relu, MaxPool 2x2, Conv 5x5x16,
Relu, AvgPool 2x2, Flatten, Dense 32, Relu, Dense 10, LogSoftmax) trained with
``optimizers.adam``: the loss's value and gradient and the Adam update, on a
batch of 32 28x28x1 images, blocked on. The target is at most 1.05x JAX's
time: both hand XLA the convolutions, windowed reductions and their
transposes, so the ratio is about what minijax hands XLA. No NumPy column.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

BATCH = 32


def cnn_train_step(lib: Any) -> tuple[Callable[[], Any], int] | None:
    import numpy as np

    if lib.jax is None:
        return None
    stax = importlib.import_module(f"{lib.name}.example_libraries.stax")
    optimizers = importlib.import_module(f"{lib.name}.example_libraries.optimizers")
    jax, jnp = lib.jax, lib.jnp
    init_fun, predict = stax.serial(
        stax.Conv(8, (5, 5), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Conv(16, (5, 5)), stax.Relu, stax.AvgPool((2, 2), strides=(2, 2)),
        stax.Flatten, stax.Dense(32), stax.Relu, stax.Dense(10), stax.LogSoftmax,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    images = jax.device_put(rng.normal(size=(BATCH, 28, 28, 1)).astype(np.float32))
    labels = jax.device_put(np.eye(10, dtype=np.float32)[rng.integers(0, 10, size=BATCH)])
    _, params = init_fun(jax.random.PRNGKey(0), (-1, 28, 28, 1))
    opt_init, opt_update, get_params = optimizers.adam(1e-3)

    def loss(p: Any, x: Any, y: Any) -> Any:
        return -jnp.mean(jnp.sum(predict(p, x) * y, axis=1))

    def train_step(i: Any, state: Any, x: Any, y: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(get_params(state), x, y)
        return value, opt_update(i, grads, state)

    step = jax.jit(train_step)
    state = opt_init(params)
    i = jax.device_put(np.int32(0))
    jax.block_until_ready(step(i, state, images, labels))
    return (lambda: jax.block_until_ready(step(i, state, images, labels))), 1


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "cnn_train_step": (cnn_train_step, "cached jit(value_and_grad + adam) of a stax LeNet CNN, 28x28x1 batch 32", "s"),
}
