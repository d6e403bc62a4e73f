"""``jax.scipy.signal``: N-d convolution and correlation on ``lax.conv_general_dilated``, and ``detrend``.

As in JAX, ``method='auto'`` always means ``'direct'``: one convolution, with
the smaller input flipped as the kernel and the larger as a one-feature image.
The FFT-based parts of JAX's module (``fftconvolve``, ``method='fft'``,
``stft``/``istft``/``welch``/``csd``) need ``jnp.fft``, which minijax does not
have yet: ``fftconvolve`` and ``method='fft'`` raise ``NotImplementedError``,
the spectral functions are not defined.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy import linalg
from minijax.numpy.util import check_arraylike, promote_dtypes_inexact
from minijax.typing import ArrayLike

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]

ModeString = Literal["full", "same", "valid"]

_NO_FFT = "minijax has no FFT yet (jnp.fft): {what} is not available; use method='direct' (or 'auto')."


def fftconvolve(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", axes: Sequence[int] | None = None) -> Array:
    """Convolution through the FFT: not available until minijax has ``jnp.fft``."""
    raise NotImplementedError(_NO_FFT.format(what="fftconvolve"))


def _convolve_nd(in1: Any, in2: Any, mode: str, *, precision: Any) -> Array:
    if mode not in ("full", "same", "valid"):
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {in1.shape} and {in2.shape}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    first_shape = in2.shape  # 'same' centres the output on in1: the pads count from the original in2
    if swap:
        in1, in2 = in2, in1
    kernel_shape = in2.shape
    if mode == "valid":
        padding = [(0, 0) for _ in kernel_shape]
    elif mode == "same":
        padding = [(k - 1 - (o - 1) // 2, k - o + (o - 1) // 2) for k, o in zip(kernel_shape, first_shape)]
    else:
        padding = [(k - 1, k - 1) for k in kernel_shape]
    result: Any = lax.conv_general_dilated(
        in1[None, None], jnp.flip(in2)[None, None], (1,) * in1.ndim, padding, precision=precision
    )
    out: Array = result[0, 0]
    return out


def _as_arrays(name: str, *args: ArrayLike) -> list[Array]:
    check_arraylike(name, *args)
    return [jnp.asarray(a) for a in args]


def convolve(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", method: str = "auto",
             precision: Any = None) -> Array:
    """The N-d convolution of ``in1`` and ``in2`` (``scipy.signal.convolve``).

    ``mode``: ``'full'`` (every overlap), ``'same'`` (centred, ``in1``'s
    shape) or ``'valid'`` (full overlaps only). Inputs are promoted to an
    inexact dtype; one must be at least as large as the other in every
    dimension.
    """
    if method == "fft":
        raise NotImplementedError(_NO_FFT.format(what="method='fft'"))
    if method not in ("direct", "auto"):
        raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")
    a, b = _as_arrays("convolve", in1, in2)
    return _convolve_nd(a, b, mode, precision=precision)


def convolve2d(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", boundary: str = "fill",
               fillvalue: float = 0, precision: Any = None) -> Array:
    """The 2-D convolution (``scipy.signal.convolve2d``); only ``boundary='fill'`` with ``fillvalue=0``."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("convolve2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("convolve2d() only supports 2-dimensional inputs.")
    a, b = _as_arrays("convolve2d", in1, in2)
    return _convolve_nd(a, b, mode, precision=precision)


def correlate(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", method: str = "auto",
              precision: Any = None) -> Array:
    """The N-d cross-correlation (``scipy.signal.correlate``): ``convolve`` with ``in2`` flipped and conjugated."""
    a, b = _as_arrays("correlate", in1, in2)
    return convolve(a, jnp.flip(jnp.conjugate(b)), mode, precision=precision, method=method)


def correlate2d(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", boundary: str = "fill",
                fillvalue: float = 0, precision: Any = None) -> Array:
    """The 2-D cross-correlation (``scipy.signal.correlate2d``); only ``boundary='fill'`` with ``fillvalue=0``.

    Which input slides over which follows SciPy (and JAX): when ``in1`` is the
    smaller one in every dimension the roles swap, and for ``'full'`` the
    result is conjugated.
    """
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("correlate2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("correlate2d() only supports 2-dimensional inputs.")
    a, b = _as_arrays("correlate2d", in1, in2)
    out: Array
    swap = all(s1 <= s2 for s1, s2 in zip(a.shape, b.shape))
    same_shape = a.shape == b.shape
    if mode == "valid" and swap and not same_shape:
        out = _convolve_nd(jnp.flip(b), jnp.conjugate(a), mode, precision=precision)
    elif mode == "full" and swap:
        out = jnp.conjugate(_convolve_nd(jnp.flip(b), jnp.conjugate(a), mode, precision=precision))
    else:
        out = jnp.flip(_convolve_nd(jnp.flip(a), jnp.conjugate(b), mode, precision=precision))
    return out


def detrend(data: ArrayLike, axis: int = -1, type: str = "linear",  # noqa: A002 (SciPy's name)
            bp: int | Sequence[int] | np.ndarray = 0, overwrite_data: None = None) -> Array:
    """Remove the mean (``type='constant'``) or a least-squares line from ``data`` along ``axis``.

    With breakpoints ``bp``, a separate line is fitted between consecutive
    breakpoints (piecewise linear trend).
    """
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (arr,) = promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        out: Array = arr - arr.mean(axis, keepdims=True)
        return out
    n = arr.shape[axis]
    # The breakpoints are static: NumPy, not the device.
    breaks = np.sort(np.unique(np.r_[0, bp, n]))
    if breaks[0] < 0 or breaks[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    moved = jnp.moveaxis(arr, axis, 0)
    shape = moved.shape
    flat = moved.reshape(n, -1)
    for start, stop in zip(breaks[:-1], breaks[1:]):
        npts = int(stop - start)
        design = jnp.vstack([
            jnp.ones(npts, dtype=flat.dtype),
            jnp.arange(1, npts + 1, dtype=flat.dtype) / np.asarray(npts).astype(flat.dtype),
        ]).T
        segment = slice(int(start), int(stop))
        coef = linalg.lstsq(design, flat[segment])[0]
        flat = flat.at[segment].add(-jnp.matmul(design, coef, precision=lax.Precision.HIGHEST))
    result: Array = jnp.moveaxis(flat.reshape(shape), 0, axis)
    return result
