"""The fast Fourier transform primitive: ``fft`` (``FftType`` FFT, IFFT, RFFT, IRFFT).

``spec/primitives/fft.md`` specifies it; the shape and dtype rule cites its
constraint labels. Names, params and messages are JAX 0.10.2's: the params
are ``fft_type`` (an ``FftType``, printed as its number) and ``fft_lengths``
(the sizes of the trailing axes transformed, a tuple of ints).

All four kinds are linear over the reals. FFT and IFFT are symmetric linear
maps (the DFT matrix equals its transpose), so each is its own transpose. The
real kinds are not square: the transpose of RFFT is an IRFFT of the
conjugated cotangent with the interior frequencies halved (IRFFT counts each
of them twice, RFFT's output keeps only one of each Hermitian pair), times the
transform size; the transpose of IRFFT is the conjugate of an RFFT with the
interior frequencies doubled, over the transform size.
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import ShapedArray, get_aval
from minijax.interpreters import ad, batching
from minijax.jaxpr_parse import param_completers
from minijax.primitives import complex as cx, elementwise as ew, structural as sp
from minijax.primitives.common import standard_primitive


class FftType(enum.IntEnum):
    """Which transform ``fft`` computes (``lax.FftType``)."""

    FFT = 0  # complex to complex, forward
    IFFT = 1  # complex to complex, inverse (scaled by 1/n)
    RFFT = 2  # real to complex, forward: the last axis keeps n // 2 + 1 frequencies
    IRFFT = 3  # complex to real, inverse of RFFT


_FFT_TYPE_NAMES = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT, "irfft": FftType.IRFFT}


def fft_type_of(value: Any) -> FftType:
    """``value`` as an ``FftType``: a member, or its name in lower or upper case (JAX's strings)."""
    if isinstance(value, str):
        member = _FFT_TYPE_NAMES.get(value.lower() if value.isupper() else value)
        if member is None:
            raise ValueError(f"Unknown FFT type '{value}'")
        return member
    if isinstance(value, FftType):
        return value
    raise TypeError(f"Unknown FFT type value '{value}'")


def _lengths(fft_lengths: Any) -> tuple[int, ...]:
    try:
        return tuple(operator.index(n) for n in fft_lengths)
    except TypeError:
        raise TypeError(f"fft: fft_lengths must be a sequence of integers, got {fft_lengths!r}") from None


def _fft_rule(x: ShapedArray, *, fft_type: Any, fft_lengths: Any) -> ShapedArray:
    if not isinstance(fft_type, FftType):  # fft C1
        raise TypeError(f"fft: fft_type must be a lax.FftType, got {fft_type!r}")
    lengths = _lengths(fft_lengths)
    k = len(lengths)
    if k == 0:  # fft C2: lax.fft returns its operand for no lengths, never binding the primitive
        raise ValueError("fft: fft_lengths must name at least one dimension")
    if k > x.ndim:  # fft C2
        raise ValueError(
            f"FFT input shape {x.shape} must have at least as many input dimensions as fft_lengths {lengths}."
        )
    minor = x.shape[x.ndim - k :]
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):  # fft C3
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if minor != lengths:  # fft C4
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to fft_lengths {lengths}")
        shape = x.shape[: x.ndim - k] + lengths[:-1] + (lengths[-1] // 2 + 1,)  # fft C7
        return ShapedArray(shape, ew.complex_dtype(x.dtype), x.weak_type)
    if not dtypes.issubdtype(x.dtype, np.complexfloating):  # fft C3
        kind = "IRFFT" if fft_type == FftType.IRFFT else "FFT"
        raise ValueError(f"{kind} input must be complex64 or complex128, got {x.dtype}")
    if fft_type == FftType.IRFFT:
        if minor[:-1] != lengths[:-1]:  # fft C5
            raise ValueError(
                f"IRFFT input shape {x.shape} minor dimensions must be equal to all except the last "
                f"fft_length, got fft_lengths={lengths}"
            )
        return ShapedArray(x.shape[: x.ndim - k] + lengths, ew.real_dtype(x.dtype), x.weak_type)  # fft C7
    if minor != lengths:  # fft C6
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to fft_lengths {lengths}")
    return x  # fft C7: FFT and IFFT keep the operand's aval


fft_p = standard_primitive("fft", _fft_rule)


def fft(x: Any, fft_type: FftType, fft_lengths: Sequence[int]) -> Any:
    """Bind ``fft`` (the operand already of the kind's dtype; no empty ``fft_lengths``)."""
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=tuple(fft_lengths))


# ---------------------------------------------------------------------------
# Transposes (jvp: the primitive is linear), batching


def _hermitian_weights(ct: Any, n_freq: int, n_last: int, value: float) -> Any:
    """``value`` at the interior frequencies of RFFT's last axis, 1 at 0 (and at n/2 for even n),
    broadcast along ``ct``'s last axis with ``ct``'s dtype."""
    weights = np.full((n_freq,), value, get_aval(ct).dtype)
    weights[0] = 1
    if n_last % 2 == 0:
        weights[-1] = 1
    aval = get_aval(ct)
    return sp.broadcast_in_dim(weights, aval.shape, (aval.ndim - 1,))


def _fft_transpose(ct: Any, x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> list[Any]:
    if fft_type in (FftType.FFT, FftType.IFFT):
        return [fft(ct, fft_type, fft_lengths)]
    size = math.prod(fft_lengths)
    ct_aval = get_aval(ct)
    if fft_type == FftType.RFFT:
        halved = ew._div(cx.conj(ct), _hermitian_weights(ct, ct_aval.shape[-1], fft_lengths[-1], 2.0))
        out = fft(halved, FftType.IRFFT, fft_lengths)
        return [ew._mul(out, np.array(size, ew.real_dtype(ct_aval.dtype)))]
    spectrum = fft(ct, FftType.RFFT, fft_lengths)
    weights = _hermitian_weights(spectrum, get_aval(spectrum).shape[-1], fft_lengths[-1], 2.0)
    scaled = ew._mul(ew._mul(spectrum, weights), np.array(1 / size, get_aval(spectrum).dtype))
    return [cx.conj(scaled)]  # JAX's convention for the cotangent of a complex operand


ad.deflinear(fft_p, _fft_transpose)


def _fft_batcher(vals: Sequence[Any], dims: Sequence[Any], *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> tuple[Any, int]:
    (x,), (bdim,) = vals, dims
    if bdim is None:
        raise ValueError("a batching rule was called with no batched operand")
    # The transformed axes are the trailing ones: a leading batch axis is one more batch axis.
    return fft(batching.moveaxis(x, bdim, 0), fft_type, fft_lengths), 0


batching.primitive_batchers[fft_p] = _fft_batcher


def _complete_fft(params: dict[str, Any], *avals: Any) -> dict[str, Any]:
    return {**params, "fft_type": FftType(params["fft_type"])}  # printed as its number, as JAX prints it


param_completers["fft"] = _complete_fft
