"""NumPy implementations: the complex-number primitives (``minijax/primitives/complex.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax_numpy.table import IMPLS, impl

Array = np.ndarray[Any, Any]


def _complex_of(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.result_type(dtype, np.complex64)


IMPLS["real"] = lambda x: np.asarray(x.real)
IMPLS["imag"] = lambda x: np.asarray(x.imag)


@impl("complex")
def _complex(x: Array, y: Array) -> Array:
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), _complex_of(x.dtype))
    out.real, out.imag = x, y  # assigned, not x + 1j*y: inf * 1j would make a NaN real part
    return out


@impl("conj")
def _conj(x: Array, *, input_dtype: Any) -> Array:
    if x.dtype.kind == "c":
        return np.asarray(np.conj(x))
    return np.asarray(_complex(x, np.zeros((), x.dtype)))  # +0 imaginary part, as XLA's complex(x, 0)
