"""FFT workloads (issue 19), for ``benchmarks/run.py``.

``fft_2e20``: a cached ``jit(jnp.fft.fft)`` of 2^20 complex64 values,
blocked on (NumPy: ``np.fft.fft``, which computes in complex128). The target
is at most 1.05x JAX's time: both are one XLA ``fft`` op.
``rfft_2e20``: the same for ``jnp.fft.rfft`` of 2^20 float32 values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FFT_SIZE = 1 << 20


def _timed(lib: Any, name: str, x: Any) -> tuple[Callable[[], Any], int]:
    import numpy as np

    if lib.jax is None:
        return (lambda: getattr(np.fft, name)(x)), 1
    xd = lib.jax.device_put(x)
    jitted = lib.jax.jit(getattr(lib.jnp.fft, name))
    jitted(xd).block_until_ready()
    return (lambda: jitted(xd).block_until_ready()), 1


def fft_2e20(lib: Any) -> tuple[Callable[[], Any], int]:
    import numpy as np

    rng = np.random.default_rng(0)
    x = (rng.standard_normal(FFT_SIZE) + 1j * rng.standard_normal(FFT_SIZE)).astype(np.complex64)
    return _timed(lib, "fft", x)


def rfft_2e20(lib: Any) -> tuple[Callable[[], Any], int]:
    import numpy as np

    x = np.random.default_rng(0).standard_normal(FFT_SIZE).astype(np.float32)
    return _timed(lib, "rfft", x)


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "fft_2e20": (fft_2e20, "cached jit(jnp.fft.fft), c64[2^20] random, blocked", "s"),
    "rfft_2e20": (rfft_2e20, "cached jit(jnp.fft.rfft), f32[2^20] random, blocked", "s"),
}
