"""``lax.fft`` and ``lax.FftType``: the fast Fourier transform over the trailing axes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.primitives import elementwise as ew, fft as _prims
from minijax.primitives.fft import FftType, fft_p
from minijax.stages import jit

ArrayLike = Any
Array = Any


def _inexact(dtype: np.dtype[Any]) -> np.dtype[Any]:
    if dtypes.issubdtype(dtype, np.inexact):
        return dtype
    return dtypes.promote_types(dtype, dtypes.default_float_dtype())


def _complex(dtype: np.dtype[Any]) -> np.dtype[Any]:
    wide = _inexact(dtype) in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128 if wide else np.complex64)


def _fft(x: ArrayLike, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Array:
    dtype = dtypes.dtype(x)
    if fft_type == FftType.RFFT:
        if dtypes.issubdtype(dtype, np.complexfloating):
            raise ValueError("only real valued inputs supported for rfft")
        x = ew.convert_element_type(x, _inexact(dtype))
    else:
        x = ew.convert_element_type(x, _complex(dtype))
    if not fft_lengths:
        return x  # nothing to transform (XLA's fft takes at least one dimension)
    return _prims.fft(x, fft_type, fft_lengths)


_fft.__name__ = "fft"
_fft_jit = jit(_fft, static_argnums=(1, 2))  # JAX stages lax.fft as a jit call of its own


def fft(x: ArrayLike, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Array:
    """The FFT of ``x`` over its last ``len(fft_lengths)`` axes.

    ``fft_type``: ``FftType.FFT``/``IFFT`` (complex to complex; real input is
    made complex), ``RFFT`` (real to complex: the last axis keeps
    ``n // 2 + 1`` frequencies) or ``IRFFT`` (its inverse: the last axis
    becomes ``fft_lengths[-1]``), or the name of one (``'fft'`` or ``'FFT'``, ...).
    """
    typ = _prims.fft_type_of(fft_type)
    return _fft_jit(x, typ, tuple(int(n) for n in fft_lengths))


__all__ = ["FftType", "fft", "fft_p"]
