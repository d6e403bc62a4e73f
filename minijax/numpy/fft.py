"""``jax.numpy.fft``: NumPy's FFT functions on ``lax.fft``.

Every transform goes through ``_transform``: the axes are moved last (the
primitive transforms trailing axes), the operand is cropped or zero-padded to
the requested sizes, and the result is scaled for ``norm`` (``'backward'``,
the default: no scaling of the forward transform and ``1/n`` of the inverse;
``'ortho'``: ``1/sqrt(n)`` both ways; ``'forward'``: ``1/n`` of the forward
transform). More than three axes are transformed in groups of at most three,
the most XLA's FFT takes at once. Real input computes in the default complex
dtype (float32 -> complex64; float64 under x64 -> complex128), as in JAX.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.lax.fft import FftType, fft as lax_fft
from minijax.numpy import creation, matrix_ops, reductions, shape_ops, ufuncs_math
from minijax.numpy.padding import pad
from minijax.numpy.util import check_arraylike, promote_dtypes_inexact, to_inexact_dtype

ArrayLike = Any
Array = Any
Shape = Sequence[int]

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift", "ihfft",
    "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]  # fmt: skip


def _norm_factor(sizes: Array, func_name: str, norm: str) -> Array | int:
    """What a transform of ``sizes`` is multiplied by for ``norm``."""
    if norm == "backward":
        return 1  # a weak 1, as JAX's constant array(1) reaches the product
    (sizes,) = promote_dtypes_inexact(sizes)
    inverse = func_name.startswith("i")
    if norm == "ortho":
        root = ufuncs_math.sqrt(reductions.prod(sizes))
        return root if inverse else 1 / root
    if norm == "forward":
        total = reductions.prod(sizes)
        return total if inverse else 1 / total
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _transform(func_name: str, fft_type: FftType, a: ArrayLike, s: Shape | None, axes: Sequence[int] | None,
               norm: str | None) -> Array:
    full_name = f"jax.numpy.fft.{func_name}"
    check_arraylike(full_name, a)
    arr = creation.asarray(a)
    if s is not None:
        s = tuple(map(operator.index, s))
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    given_axes = axes
    if axes is None:
        picked: Sequence[int] = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    else:
        picked = axes
    if len(picked) != len(set(picked)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {picked}.")
    if given_axes is not None:
        picked = tuple(range(arr.ndim - len(picked), arr.ndim))
        arr = shape_ops.moveaxis(arr, tuple(given_axes), picked)
    sizes: list[int]
    if s is not None:
        wanted = list(arr.shape)
        for axis, n in zip(picked, s):
            wanted[axis] = n
        if fft_type == FftType.IRFFT:
            wanted[-1] = wanted[-1] // 2 + 1  # IRFFT reads the non-redundant half
        arr = arr[tuple(slice(n) for n in wanted)]
        arr = pad(arr, [(0, n - have) for n, have in zip(wanted, arr.shape)])
        sizes = list(s)
    elif fft_type == FftType.IRFFT:
        sizes = [arr.shape[axis] for axis in picked[:-1]]
        if picked:
            sizes.append(max(0, 2 * (arr.shape[picked[-1]] - 1)))
    else:
        sizes = [arr.shape[axis] for axis in picked]
    out = _in_groups(arr, fft_type, sizes)
    if norm is not None:
        out = out * _norm_factor(creation.array(sizes, dtype=out.dtype), func_name, norm)
    if given_axes is not None:
        out = shape_ops.moveaxis(out, picked, tuple(given_axes))
    return out


def _in_groups(arr: Array, fft_type: FftType, sizes: Sequence[int]) -> Array:
    """``lax.fft`` over the last ``len(sizes)`` axes, at most three at a time."""
    if len(sizes) <= 3:
        return lax_fft(arr, fft_type, tuple(sizes))
    n = 2 if len(sizes) == 4 else 3  # the last group; the rest (at least two) recursively
    outer = tuple(range(arr.ndim - len(sizes), arr.ndim - n))
    moved = tuple(range(arr.ndim - len(sizes) + n, arr.ndim))
    if fft_type in (FftType.RFFT, FftType.FFT):
        # The real-to-complex step first (it defines the complex result), then the other axes.
        arr = lax_fft(arr, fft_type, tuple(sizes)[-n:])
        arr = shape_ops.moveaxis(arr, outer, moved)
        arr = _in_groups(arr, FftType.FFT, sizes[:-n])
        return shape_ops.moveaxis(arr, moved, outer)
    # The inverse: the complex axes first, the complex-to-real step last.
    arr = shape_ops.moveaxis(arr, outer, moved)
    arr = _in_groups(arr, FftType.IFFT, sizes[:-n])
    arr = shape_ops.moveaxis(arr, moved, outer)
    return lax_fft(arr, fft_type, tuple(sizes)[-n:])


def _one_axis(func_name: str, axis: Any) -> None:
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{func_name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use {full_name}n. Got axis = {axis!r}.")


def _transform_1d(func_name: str, fft_type: FftType, a: ArrayLike, n: int | None, axis: int | None,
                  norm: str | None) -> Array:
    _one_axis(func_name, axis)
    return _transform(func_name, fft_type, a, None if n is None else [n], None if axis is None else [axis], norm)


def _transform_2d(func_name: str, fft_type: FftType, a: ArrayLike, s: Shape | None, axes: Sequence[int],
                  norm: str | None) -> Array:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _transform(func_name, fft_type, a, s, axes, norm)


def fftn(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The N-d discrete Fourier transform over ``axes`` (all by default), cropped or padded to ``s``."""
    return _transform("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The inverse of ``fftn``."""
    return _transform("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The N-d transform of a real array; the last axis keeps ``n // 2 + 1`` frequencies."""
    return _transform("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The inverse of ``rfftn``: a real array (the last axis ``2 * (m - 1)`` long unless ``s`` says)."""
    return _transform("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-D discrete Fourier transform along ``axis`` (cropped or zero-padded to ``n``)."""
    return _transform_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of ``fft``."""
    return _transform_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-D transform of a real array: ``n // 2 + 1`` frequencies."""
    return _transform_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of ``rfft``: ``n`` real values (``2 * (m - 1)`` by default)."""
    return _transform_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The transform of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    conj_a = ufuncs_math.conj(a)
    _one_axis("hfft", axis)
    size = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _transform_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * size


def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of ``hfft``: the first half of a Hermitian spectrum of a real signal."""
    _one_axis("ihfft", axis)
    arr = creation.asarray(a)
    size = arr.shape[axis] if n is None else n
    out = _transform_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return ufuncs_math.conj(out) * (1 / size)


def fft2(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Array:
    """The 2-D discrete Fourier transform over ``axes``."""
    return _transform_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Array:
    """The inverse of ``fft2``."""
    return _transform_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Array:
    """The 2-D transform of a real array."""
    return _transform_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Array:
    """The inverse of ``rfft2``."""
    return _transform_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(func_name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{func_name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(
            f"The d argument of jax.numpy.fft.{func_name} only takes a single value. Got d = {list(d)}."
        )


def fftfreq(n: int, d: ArrayLike = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an ``n``-point FFT with spacing ``d``: ``[0, 1, ..., -1] / (d n)``."""
    out_dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("fftfreq", n, d)
    work = np.dtype(dtypes.finfo(to_inexact_dtype(np.dtype(out_dtype))).dtype)
    i = creation.arange(n, dtype=work, device=device)
    k = (i + n // 2) % n - n // 2
    result = k.astype(work) / creation.array(d * n, dtype=work, device=device)
    return result.astype(out_dtype)


def rfftfreq(n: int, d: ArrayLike = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an ``n``-point ``rfft``: ``[0, 1, ..., n // 2] / (d n)``."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("rfftfreq", n, d)
    k = creation.arange(0, n // 2 + 1, dtype=dtype)
    result = k / creation.array(d * n, dtype=dtype)
    if device is not None:
        return result.to_device(device)
    return result


def _shifts(name: str, x: ArrayLike, axes: None | int | Sequence[int], sign: int) -> Array:
    check_arraylike(name, x)
    arr = creation.asarray(x)
    shift: int | list[int]
    if axes is None:
        axes = tuple(range(arr.ndim))
        shift = [sign * (dim // 2) for dim in arr.shape]
    elif isinstance(axes, int):
        shift = sign * (arr.shape[axes] // 2)
    else:
        shift = [sign * (arr.shape[ax] // 2) for ax in axes]
    return matrix_ops.roll(arr, shift, axes)


def fftshift(x: ArrayLike, axes: None | int | Sequence[int] = None) -> Array:
    """``x`` with the zero frequency moved to the centre of ``axes`` (all by default)."""
    return _shifts("fftshift", x, axes, 1)


def ifftshift(x: ArrayLike, axes: None | int | Sequence[int] = None) -> Array:
    """The inverse of ``fftshift``."""
    return _shifts("ifftshift", x, axes, -1)
