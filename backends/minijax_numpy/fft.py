"""NumPy implementation of the ``fft`` primitive (``minijax/primitives/fft.py``).

``numpy.fft`` computes in double precision; the result is rounded back to the
operand's precision (complex64 stays complex64, float32 comes back from IRFFT
as float32), as ``spec/primitives/fft.md`` specifies. Like XLA, IRFFT reads
only the first ``n // 2 + 1`` entries of the last axis (numpy.fft's ``n``
crops or zero-pads it), and takes the imaginary part of the zero (and, for
even ``n``, the Nyquist) frequency as zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax.primitives.fft import FftType
from minijax_numpy.table import impl

Array = np.ndarray[Any, Any]


@impl("fft")
def _fft(x: Array, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Array:
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.FFT:
        return np.asarray(np.fft.fftn(x, axes=axes), x.dtype)
    if fft_type == FftType.IFFT:
        return np.asarray(np.fft.ifftn(x, axes=axes), x.dtype)
    if fft_type == FftType.RFFT:
        complex_dtype = np.result_type(x.dtype, np.complex64)
        return np.asarray(np.fft.rfftn(x, axes=axes), complex_dtype)
    real_dtype = np.finfo(x.dtype).dtype
    return np.asarray(np.fft.irfftn(x, s=fft_lengths, axes=axes), real_dtype)
