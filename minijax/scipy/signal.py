"""``jax.scipy.signal``: N-d convolution and correlation on ``lax.conv_general_dilated``, and ``detrend``.

As in JAX, ``method='auto'`` always means ``'direct'``: one convolution, with
the smaller input flipped as the kernel and the larger as a one-feature image.
``method='fft'`` is ``fftconvolve``: the product of the inputs' spectra
(``jnp.fft.rfftn`` of real inputs, ``fftn`` of complex ones) at the full
output size, transformed back and cut to the mode's window. The spectral
functions (``stft``, ``istft``, ``csd``, ``welch``) cut the signal into
overlapping windowed segments and transform each (see ``_spectrum``).
"""

from __future__ import annotations

import importlib
import operator
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.numpy import linalg
from minijax.numpy.util import canonicalize_axis, check_arraylike, promote_dtypes_inexact
from minijax.typing import ArrayLike
from minijax.vectorization import vmap

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft", "welch"]

ModeString = Literal["full", "same", "valid"]

def fftconvolve(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", axes: Sequence[int] | None = None) -> Array:
    """The N-d convolution of ``in1`` and ``in2`` through the FFT (``scipy.signal.fftconvolve``).

    ``axes``: the axes convolved (all by default); along the others the inputs
    must have equal sizes and are convolved slice by slice.
    """
    check_arraylike("fftconvolve", in1, in2)
    a, b = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    if a.ndim != b.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("same", "full", "valid"):
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    if axes is None:
        return _fftconvolve_all(a, b, mode)
    picked = tuple(canonicalize_axis(ax, a.ndim) for ax in ((axes,) if isinstance(axes, int) else axes))
    others = sorted(set(range(a.ndim)) - set(picked))
    if any(a.shape[i] != b.shape[i] for i in others):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={a.shape} in2.shape={b.shape} axes={picked}")
    fn: Any = lambda x, y: _fftconvolve_all(x, y, mode)  # noqa: E731
    for ax in others:  # the axes not convolved are batch axes: vmap over each, as JAX does
        fn = vmap(fn, in_axes=ax, out_axes=ax)
    out: Array = fn(a, b)
    return out


def _fftconvolve_all(in1: Any, in2: Any, mode: str) -> Array:
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the other in every dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        conv = in1 * in2  # an outer product: no FFT needed
    elif jnp.iscomplexobj(in1) or jnp.iscomplexobj(in2):
        conv = jnp.fft.ifftn(jnp.fft.fftn(in1, full_shape) * jnp.fft.fftn(in2, full_shape), full_shape)
    else:
        conv = jnp.fft.irfftn(jnp.fft.rfftn(in1, full_shape) * jnp.fft.rfftn(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
    starts = [(full - size) // 2 for full, size in zip(full_shape, out_shape)]
    out: Array = lax.slice(conv, starts, [st + size for st, size in zip(starts, out_shape)])
    return out


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
        return fftconvolve(in1, in2, mode=mode)
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


# ---------------------------------------------------------------------------
# fft (issue 19): the spectral functions, JAX 0.10.2's signatures and defaults


def _window(window: Any, nperseg: int | None, length: int, dtype: Any) -> tuple[Any, int]:
    """The window as an array of ``dtype`` and the segment length (JAX's rules:
    a named window with no ``nperseg`` spans the whole signal)."""
    if isinstance(window, (str, tuple)):
        n = length if nperseg is None else int(nperseg)
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, using nperseg={length}", stacklevel=4)
            n = length
        if isinstance(window, str) and window == "hann":
            # The periodic Hann window, computed without SciPy.
            values = np.ones(1) if n == 1 else np.sin(np.linspace(0, np.pi, n, endpoint=False)) ** 2
        else:
            try:
                scipy_signal = importlib.import_module("scipy.signal")  # optional: only for other windows
            except ImportError as err:
                raise ImportError(f"scipy must be available to use {window=}") from err
            values = scipy_signal.get_window(window, n)
        return jnp.array(values, dtype=dtype), n
    win = jnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _segments(x: Any, nperseg: int, step: int) -> Any:
    """``x[..., L]`` as ``[..., segments, nperseg]``: the segments starting every ``step`` samples."""
    starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
    return x[..., starts[:, None] + np.arange(nperseg)[None, :]]


def _odd_extension(x: Any, n: int, axis: int = -1) -> Any:
    """``x`` extended by ``n`` samples at each end, point-reflected about its end values."""
    if n < 1:
        return x
    if n > x.shape[axis] - 1:
        raise ValueError(
            f"The extension length n ({n}) is too big. It must not exceed x.shape[axis]-1, which is {x.shape[axis] - 1}."
        )
    first, last = lax.slice_in_dim(x, 0, 1, axis=axis), lax.slice_in_dim(x, x.shape[axis] - 1, None, axis=axis)
    before = jnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    after = jnp.flip(lax.slice_in_dim(x, x.shape[axis] - n - 1, x.shape[axis] - 1, axis=axis), axis=axis)
    return jnp.concatenate((2 * first - before, x, 2 * last - after), axis=axis)


def _extend(boundary: str | None, x: Any, n: int) -> Any:
    pads = [(0, 0)] * (x.ndim - 1) + [(n, n)]
    if boundary == "even":
        return jnp.pad(x, pads, "reflect")
    if boundary == "odd":
        return _odd_extension(x, n)
    if boundary == "constant":
        return jnp.pad(x, pads, "edge")
    if boundary == "zeros":
        return jnp.pad(x, pads, "constant", constant_values=0.0)
    return x


_BOUNDARIES = ["even", "odd", "constant", "zeros", None]


def _static_int(value: Any, what: str) -> int:
    try:
        return operator.index(value) if not isinstance(value, (float, np.floating)) else int(value)
    except TypeError:
        raise TypeError(f"{what} must be a concrete integer, got {value!r}") from None


def _spectrum(x: ArrayLike, y: ArrayLike | None, fs: ArrayLike, window: Any, nperseg: int | None,
              noverlap: int | None, nfft: int | None, detrend_type: Any, return_onesided: bool, scaling: str,
              axis: int, mode: str, boundary: str | None = None, padded: bool = False) -> tuple[Any, Any, Any]:
    """Frequencies, segment times and the windowed FFTs of ``x``'s segments (``mode='stft'``), or
    their power spectral densities (``'psd'``; cross spectral densities with ``y``)."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {_BOUNDARIES}")
    axis = canonicalize_axis(_static_int(axis, "axis of windowed-FFT"), np.ndim(x))
    if y is None:
        check_arraylike("spectral_helper", x)
        (xs,) = promote_dtypes_inexact(jnp.asarray(x))
        ys = xs
        outer: tuple[int, ...] = xs.shape[:axis] + xs.shape[axis + 1 :]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        xs, ys = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(y))
        if xs.ndim != ys.ndim:
            raise ValueError(f"two-arguments must have the same rank ({xs.ndim} vs {ys.ndim}).")
        try:
            outer = jnp.broadcast_shapes(xs.shape[:axis] + xs.shape[axis + 1 :], ys.shape[:axis] + ys.shape[axis + 1 :])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = np.result_type(xs.dtype, np.complex64)
    freq_dtype = np.finfo(result_dtype).dtype
    nperseg_int: int | None = None
    if nperseg is not None:
        nperseg_int = _static_int(nperseg, "nperseg of windowed-FFT")
        if nperseg_int < 1:
            raise ValueError("nperseg must be a positive integer")
    win, seg = _window(window, nperseg_int, xs.shape[axis], xs.dtype)
    overlap = seg // 2 if noverlap is None else _static_int(noverlap, "noverlap of windowed-FFT")
    n_fft = seg if nfft is None else _static_int(nfft, "nfft of windowed-FFT")
    if xs.size == 0 or (y is not None and ys.size == 0):
        shape = xs.shape if y is None else outer[:axis] + (min(xs.shape[axis], ys.shape[axis]),) + outer[axis:]
        return jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype), jnp.zeros(shape, result_dtype)
    xs = jnp.moveaxis(xs, axis, -1)
    if y is not None:
        ys = jnp.moveaxis(ys, axis, -1) if ys.ndim > 1 else ys
        if xs.shape[-1] != ys.shape[-1]:  # the shorter one is zero-padded
            longest = max(xs.shape[-1], ys.shape[-1])
            xs = jnp.pad(xs, [(0, 0)] * (xs.ndim - 1) + [(0, longest - xs.shape[-1])])
            ys = jnp.pad(ys, [(0, 0)] * (ys.ndim - 1) + [(0, longest - ys.shape[-1])])
    if n_fft < seg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if overlap >= seg:
        raise ValueError("noverlap must be less than nperseg.")
    step = seg - overlap
    if boundary is not None:
        xs = _extend(boundary, xs, seg // 2)
        if y is not None:
            ys = _extend(boundary, ys, seg // 2)
    if padded:
        extra = (-(xs.shape[-1] - seg) % step) % seg
        xs = jnp.pad(xs, [(0, 0)] * (xs.ndim - 1) + [(0, extra)])
        if y is not None:
            ys = jnp.pad(ys, [(0, 0)] * (ys.ndim - 1) + [(0, extra)])
    if isinstance(detrend_type, str):
        detrend_fn: Any = lambda d: detrend(d, type=detrend_type, axis=-1)  # noqa: E731
    elif callable(detrend_type):
        detrend_fn = detrend_type
    elif not detrend_type:
        detrend_fn = lambda d: d  # noqa: E731
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")
    if scaling == "density":
        scale: Any = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    scale = jnp.asarray(scale).astype(np.result_type(jnp.asarray(scale).dtype, np.complex64))
    two_sided = not return_onesided
    if return_onesided and (jnp.iscomplexobj(xs) or (y is not None and jnp.iscomplexobj(ys))):
        two_sided = True
        warnings.warn("Input data is complex, switching to return_onesided=False", stacklevel=4)
    if two_sided:
        freqs = jnp.fft.fftfreq(n_fft, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp.fft.rfftfreq(n_fft, 1 / fs, dtype=freq_dtype)

    def transform(signal: Any) -> Any:
        frames = signal[..., None] if seg == 1 and overlap == 0 else _segments(signal, seg, step)
        frames = detrend_fn(frames)
        if jnp.iscomplexobj(win):
            frames = frames.astype(np.result_type(frames.dtype, np.complex64))
        frames = win * frames
        return jnp.fft.fft(frames, n=n_fft) if two_sided else jnp.fft.rfft(frames.real, n=n_fft)

    result = transform(xs)
    if y is not None:
        result = jnp.conjugate(result) * transform(ys)
    elif mode == "psd":
        result = jnp.conjugate(result) * result
    result = result * scale
    if not two_sided and mode == "psd":
        # The one-sided spectrum folds in the negative frequencies: double all but DC (and Nyquist).
        end = None if n_fft % 2 else -1
        result = result.at[..., 1:end].mul(2)
    time = jnp.arange(seg / 2, xs.shape[-1] - seg / 2 + 1, seg - overlap, dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - (seg / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = result.real
    return freqs, time, jnp.moveaxis(result, -1, axis)


def stft(x: ArrayLike, fs: ArrayLike = 1.0, window: str = "hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: bool = False, return_onesided: bool = True,
         boundary: str | None = "zeros", padded: bool = True, axis: int = -1) -> tuple[Array, Array, Array]:
    """The short-time Fourier transform: frequencies, segment times and ``Zxx[..., freq, time]``."""
    return _spectrum(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum", axis,
                     mode="stft", boundary=boundary, padded=padded)


def _median_bias(n: int) -> float:
    """How much larger the mean of ``n`` periodograms is than their median (Allen et al.)."""
    even = np.arange(2.0, n, 2)
    return float(1 + np.sum(1.0 / (even + 1) - 1.0 / even))


def csd(x: ArrayLike, y: ArrayLike | None, fs: ArrayLike = 1.0, window: str = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant", return_onesided: bool = True,
        scaling: str = "density", axis: int = -1, average: str = "mean") -> tuple[Array, Array]:
    """The cross power spectral density of ``x`` and ``y`` by Welch's method (averaged periodograms)."""
    freqs, _, pxy = _spectrum(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
                              mode="psd")
    if y is not None:
        pxy = pxy + 0j  # complex even when x and y are real
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = np.asarray(_median_bias(pxy.shape[-1])).astype(pxy.dtype)
                if jnp.iscomplexobj(pxy):
                    pxy = jnp.median(jnp.real(pxy), axis=-1) + 1j * jnp.median(jnp.imag(pxy), axis=-1)
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x: ArrayLike, fs: ArrayLike = 1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant", return_onesided: bool = True,
          scaling: str = "density", axis: int = -1, average: str = "mean") -> tuple[Array, Array]:
    """The power spectral density of ``x`` by Welch's method."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft, detrend=detrend,
                     return_onesided=return_onesided, scaling=scaling, axis=axis, average=average)
    return freqs, pxx.real


def _overlap_add(frames: Any, step: int) -> Any:
    """``frames[..., n, length]`` summed into one signal, frame i starting at ``i * step``."""
    *batch, count, length = frames.shape
    size = step * (count - 1) + length
    positions = (np.arange(count)[:, None] * step + np.arange(length)[None, :]).ravel()
    flat = frames.reshape((*batch, count * length))
    return jnp.zeros((*batch, size), frames.dtype).at[..., positions].add(flat)


def istft(Zxx: ArrayLike, fs: ArrayLike = 1.0, window: str = "hann", nperseg: int | None = None,  # noqa: N803 (SciPy's name)
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True, boundary: bool = True,
          time_axis: int = -1, freq_axis: int = -2) -> tuple[Array, Array]:
    """The inverse short-time Fourier transform: times and the signal (windowed overlap-add)."""
    check_arraylike("istft", Zxx)
    z = jnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, z.ndim)
    time_axis = canonicalize_axis(time_axis, z.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    z = z.astype(np.result_type(z.dtype, np.complex64))
    n_default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    seg = _static_int(nperseg or n_default, "nperseg: segment length of STFT")
    if seg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        n_fft = n_default + (1 if input_onesided and seg == n_default + 1 else 0)  # odd nperseg: no FFT padding
    else:
        n_fft = _static_int(nfft, "nfft of STFT")
    if n_fft < seg:
        raise ValueError(f"FFT length ({n_fft}) must be longer than nperseg ({seg}).")
    overlap = _static_int(noverlap or seg // 2, "noverlap of STFT")
    if overlap >= seg:
        raise ValueError("noverlap must be less than nperseg.")
    step = seg - overlap
    if time_axis != z.ndim - 1 or freq_axis != z.ndim - 2:
        rest = tuple(i for i in range(z.ndim) if i not in (time_axis, freq_axis))
        z = jnp.transpose(z, rest + (freq_axis, time_axis))
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    frames = inverse(z, axis=-2, n=nfft)[..., :seg, :]
    if isinstance(window, (str, tuple)):
        win, _ = _window(window, seg, seg, frames.dtype)
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != seg:
            raise ValueError(f"window must have length of {seg}")
    frames = frames * win.sum()  # undoes stft's 'spectrum' scaling
    column = win.reshape((1,) * (frames.ndim - 2) + (seg, 1))
    x = _overlap_add(jnp.swapaxes(frames * column, -2, -1), step)
    squares = jnp.repeat(column * column, frames.shape[-1], axis=-1)
    norm = _overlap_add(jnp.swapaxes(squares, -2, -1), step)
    if boundary:
        x = x[..., seg // 2 : -(seg // 2)]
        norm = norm[..., seg // 2 : -(seg // 2)]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = jnp.moveaxis(x, -1, time_axis)
    time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
