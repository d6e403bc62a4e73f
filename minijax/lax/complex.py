"""``lax`` complex-number operations: ``complex``, ``real``, ``imag``, ``conj`` and their primitives."""

from __future__ import annotations

from typing import Any

from minijax.primitives import complex as _prims
from minijax.primitives.complex import complex_p, conj_p, imag_p, real_p

ArrayLike = Any
Array = Any


def complex(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001  # JAX's name
    """``x + i y`` of two float32 (or two float64) operands: complex64 (complex128)."""
    return _prims.complex(x, y)


def real(x: ArrayLike) -> Array:
    """The real part of a complex operand."""
    return _prims.real(x)


def imag(x: ArrayLike) -> Array:
    """The imaginary part of a complex operand."""
    return _prims.imag(x)


def conj(x: ArrayLike) -> Array:
    """The complex conjugate; a float32/float64 operand becomes complex with a zero imaginary part."""
    return _prims.conj(x)


__all__ = ["complex", "complex_p", "conj", "conj_p", "imag", "imag_p", "real", "real_p"]
