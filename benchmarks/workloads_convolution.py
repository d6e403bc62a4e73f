"""Convolution workloads (issue 18), for ``benchmarks/run.py``.

One 2-D convolution as in a CNN layer: batch 32, 64x64 images with 32
channels, a 3x3 kernel to 64 channels, NHWC/HWIO layouts, 'SAME' padding,
float32.

``conv2d_fwd``: a cached ``jit`` of ``lax.conv_general_dilated``, blocked on
(NumPy: the same convolution as im2col + one matmul). Target: at most 1.05x
JAX's time (both hand XLA one convolution).

``conv2d_grad``: a cached ``jit`` of the convolution's vjp with respect to
both operands, given a cotangent, blocked on (two transposed convolutions).
Target: at most 1.05x JAX's. NumPy has no column.

``conv2d_numpy_backend``: the same convolution on minijax's NumPy reference
backend (``jit(..., backend="numpy")``), against the plain NumPy im2col +
matmul of the NumPy column. Target: at most 3x NumPy's time. JAX has no
column.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BATCH, SIZE, IN_CHANNELS, OUT_CHANNELS, WINDOW = 32, 64, 32, 64, 3
LAYOUT = ("NHWC", "HWIO", "NHWC")


def _data() -> tuple[Any, Any, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZE, SIZE, IN_CHANNELS)).astype(np.float32)
    w = rng.standard_normal((WINDOW, WINDOW, IN_CHANNELS, OUT_CHANNELS)).astype(np.float32)
    ct = rng.standard_normal((BATCH, SIZE, SIZE, OUT_CHANNELS)).astype(np.float32)
    return x, w, ct


def im2col_conv(x: Any, w: Any) -> Any:
    """The plain NumPy convolution the NumPy column times: 'SAME' padding, every 3x3
    window of every image as one row of a matrix (im2col), times the kernel as a matrix."""
    import numpy as np

    pad = WINDOW // 2
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (WINDOW, WINDOW), axis=(1, 2))  # N H W C kh kw
    rows = windows.transpose(0, 1, 2, 4, 5, 3).reshape(BATCH * SIZE * SIZE, WINDOW * WINDOW * IN_CHANNELS)
    return (rows @ w.reshape(-1, OUT_CHANNELS)).reshape(BATCH, SIZE, SIZE, OUT_CHANNELS)


def _conv(lib: Any) -> Callable[[Any, Any], Any]:
    lax = lib.jax.lax
    return lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=LAYOUT)


def conv2d_fwd(lib: Any) -> tuple[Callable[[], Any], int]:
    x, w, _ = _data()
    if lib.jax is None:
        return (lambda: im2col_conv(x, w)), 1
    xd, wd = lib.jax.device_put(x), lib.jax.device_put(w)
    run = lib.jax.jit(_conv(lib))
    run(xd, wd).block_until_ready()
    return (lambda: run(xd, wd).block_until_ready()), 1


def conv2d_grad(lib: Any) -> tuple[Callable[[], Any], int] | None:
    if lib.jax is None:
        return None
    x, w, ct = _data()
    conv = _conv(lib)
    xd, wd, ctd = (lib.jax.device_put(a) for a in (x, w, ct))
    run = lib.jax.jit(lambda x, w, ct: lib.jax.vjp(conv, x, w)[1](ct))

    def call() -> Any:
        return [g.block_until_ready() for g in run(xd, wd, ctd)]

    call()
    return call, 1


def conv2d_numpy_backend(lib: Any) -> tuple[Callable[[], Any], int] | None:
    x, w, _ = _data()
    if lib.jax is None:
        return (lambda: im2col_conv(x, w)), 1
    if lib.name != "minijax":
        return None
    run = lib.jax.jit(_conv(lib), backend="numpy")
    run(x, w).block_until_ready()
    return (lambda: run(x, w).block_until_ready()), 1


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "conv2d_fwd": (conv2d_fwd, "cached jit(conv) f32[32,64,64,32] * f32[3,3,32,64] NHWC SAME (NumPy: im2col + matmul)", "s"),
    "conv2d_grad": (conv2d_grad, "cached jit(vjp(conv)) w.r.t. input and kernel, same shapes", "s"),
    "conv2d_numpy_backend": (conv2d_numpy_backend, "the same conv on minijax's NumPy backend (NumPy: im2col + matmul)", "s"),
}
