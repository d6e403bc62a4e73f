"""``jax.scipy.fft``: the discrete cosine transform (type 2) and its inverse, through ``jnp.fft``.

As in JAX 0.10.2, only type 2 exists (other types raise
``NotImplementedError``) and ``norm`` is ``None``/``'backward'`` (SciPy's
unnormalized ``y[k] = 2 sum x[n] cos(pi k (2n + 1) / (2N))``) or ``'ortho'``.

Method (Makhoul's): reordering ``x`` as its even-indexed entries followed by
its odd-indexed ones reversed turns the DCT into one complex FFT of the same
length, ``y[k] = 2 Re(exp(-i pi k / (2N)) FFT(v)[k])``; the inverse undoes
each step (an inverse FFT of the twiddled coefficients, then the reordering
undone). The N-d transforms apply the 1-d one axis by axis (it is separable).
Complex input transforms its real and imaginary parts separately.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes, lax
from minijax.numpy import creation, fft as jnp_fft, ufuncs_math
from minijax.numpy.util import canonicalize_axes, canonicalize_axis, check_arraylike, promote_dtypes_inexact

Array = Any

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name: str, x: Any, type: int, norm: str | None) -> Array:  # noqa: A002 (SciPy's name)
    check_arraylike(name, x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")
    return creation.asarray(x)


def _resized(x: Array, n: int | None, axis: int) -> Array:
    """``x`` cropped or zero-padded to ``n`` entries along ``axis``."""
    if n is None or n == x.shape[axis]:
        return x
    config = [(0, n - x.shape[axis] if a == axis else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, np.array(0, x.dtype), config)


def _reorder(n: int) -> np.ndarray[Any, Any]:
    """The positions Makhoul's reordering reads: evens ascending, then odds descending."""
    return np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])


def _along(values: np.ndarray[Any, Any], ndim: int, axis: int, dtype: Any) -> Array:
    """A 1-d constant laid along ``axis`` of an ``ndim``-d array (size 1 elsewhere)."""
    shape = [1] * ndim
    shape[axis] = values.shape[0]
    return np.asarray(values.reshape(shape), dtype)


def _twiddle(n: int, ndim: int, axis: int, dtype: Any, sign: float) -> Array:
    return _along(np.exp(sign * 0.5j * np.pi * np.arange(n) / n), ndim, axis, dtype)


def _ortho_scale(n: int, ndim: int, axis: int, dtype: Any) -> Array:
    """The 'ortho' DCT's factors: ``1/sqrt(4N)`` at k = 0, ``1/sqrt(2N)`` elsewhere."""
    factors = np.full(n, 1 / np.sqrt(2.0 * n))
    factors[0] = 1 / np.sqrt(4.0 * n)
    return _along(factors, ndim, axis, dtype)


def _complex_parts(fn: Any, x: Array, **kwargs: Any) -> Array | None:
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(fn(ufuncs_math.real(x), **kwargs), fn(ufuncs_math.imag(x), **kwargs))
    return None


def dct(x: Array, type: int = 2, n: int | None = None, axis: int = -1,  # noqa: A002 (SciPy's name)
        norm: str | None = None) -> Array:
    """The discrete cosine transform (type 2) along ``axis``, ``x`` cropped or zero-padded to ``n``."""
    x = _check("dct", x, type, norm)
    parts = _complex_parts(dct, x, type=type, n=n, axis=axis, norm=norm)
    if parts is not None:
        return parts
    axis = canonicalize_axis(axis, x.ndim)
    x = _resized(x, n, axis)
    size = x.shape[axis]
    v = creation.asarray(x).take(_reorder(size), axis=axis) if size else x
    spectrum = jnp_fft.fft(v, axis=axis)
    out = 2 * ufuncs_math.real(spectrum * _twiddle(size, x.ndim, axis, spectrum.dtype, -1.0))
    if norm == "ortho":
        out = out * _ortho_scale(size, x.ndim, axis, out.dtype)
    return out


def idct(x: Array, type: int = 2, n: int | None = None, axis: int = -1,  # noqa: A002 (SciPy's name)
         norm: str | None = None) -> Array:
    """The inverse of ``dct`` (a type-3 DCT, scaled) along ``axis``."""
    x = _check("idct", x, type, norm)
    parts = _complex_parts(idct, x, type=type, n=n, axis=axis, norm=norm)
    if parts is not None:
        return parts
    axis = canonicalize_axis(axis, x.ndim)
    x = _resized(x, n, axis)
    (x,) = promote_dtypes_inexact(x)
    size = x.shape[axis]
    # The coefficients as twice the FFT of the reordered signal needs them: 'backward' halves
    # the k = 0 term (the real part of the inverse FFT counts it twice); 'ortho' also undoes its factors.
    k = np.arange(size)
    if norm == "ortho":
        scale = np.sqrt(np.where(k == 0, float(size), 2.0 * size))
    else:
        scale = np.where(k == 0, 0.5, 1.0)
    twiddled = x * _along(scale, x.ndim, axis, x.dtype)
    twiddled = twiddled * _twiddle(size, x.ndim, axis, np.result_type(x.dtype, np.complex64), 1.0)
    v = ufuncs_math.real(jnp_fft.ifft(twiddled, axis=axis))
    return v.take(np.argsort(_reorder(size)), axis=axis) if size else v


def _axes_and_sizes(x: Array, s: Any, axes: Sequence[int] | None) -> tuple[tuple[int, ...], list[int] | None]:
    sizes: list[int] | None = None
    if s is not None:
        try:
            sizes = list(s)
        except TypeError:
            sizes = [operator.index(s)]
        if len(sizes) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(sizes)}")
    if axes is None:
        picked = tuple(range(x.ndim - len(sizes), x.ndim)) if sizes is not None else tuple(range(x.ndim))
    else:
        picked = canonicalize_axes(axes, x.ndim)
    return picked, sizes


def dctn(x: Array, type: int = 2, s: Sequence[int] | None = None,  # noqa: A002 (SciPy's name)
         axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The N-d DCT (type 2) over ``axes`` (all by default), cropped or zero-padded to ``s``."""
    x = _check("dctn", x, type, norm)
    parts = _complex_parts(dctn, x, type=type, s=s, axes=axes, norm=norm)
    if parts is not None:
        return parts
    picked, sizes = _axes_and_sizes(x, s, axes)
    for i, axis in enumerate(picked):
        x = dct(x, n=None if sizes is None else sizes[i], axis=axis, norm=norm)
    return x


def idctn(x: Array, type: int = 2, s: Sequence[int] | None = None,  # noqa: A002 (SciPy's name)
          axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The inverse of ``dctn``."""
    x = _check("idctn", x, type, norm)
    parts = _complex_parts(idctn, x, type=type, s=s, axes=axes, norm=norm)
    if parts is not None:
        return parts
    picked, sizes = _axes_and_sizes(x, s, axes)
    for i, axis in enumerate(picked):
        x = idct(x, n=None if sizes is None else sizes[i], axis=axis, norm=norm)
    return x
