"""``minijax.dlpack``: arrays in and out through the DLPack protocol, as ``jax.dlpack`` provides it.

``from_dlpack(x)`` takes any object with ``__dlpack__`` and
``__dlpack_device__`` (a NumPy array, a minijax Array, ...) and returns a
minijax Array; minijax Arrays export themselves (``np.from_dlpack(x)``)
through ``Array.__dlpack__``. minijax's buffers are not shared with the
producer: the value is read on the host and placed on the device, so
``copy=False`` (a request for a view) is refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax import dtypes
from minijax.api import device_put
from minijax.array import Array

__all__ = ["from_dlpack", "is_supported_dtype"]

# The dtypes a DLPack tensor can carry into minijax (JAX's list without the complex ones minijax lacks).
_SUPPORTED = frozenset(
    np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                          np.float16, dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
                          np.bool_)  # fmt: skip
)


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of ``dtype`` can pass through DLPack."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in _SUPPORTED


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Any:
    """A minijax Array holding the value of a DLPack-exporting array (NumPy, minijax, ...)."""
    if not (hasattr(external_array, "__dlpack__") and hasattr(external_array, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods.")
    if copy is False:
        raise ValueError(
            "from_dlpack(copy=False) asks for a view of the producer's buffer, but minijax always copies the value "
            "into its own buffer. Set copy=True or copy=None."
        )
    if isinstance(external_array, Array):
        host = np.asarray(external_array)
    else:
        host = np.from_dlpack(external_array)
    if not is_supported_dtype(host.dtype):
        raise TypeError(f"from_dlpack: DLPack tensors of dtype {host.dtype} are not supported.")
    return device_put(np.array(host, dtype=dtypes.canonicalize_dtype(host.dtype)), device)
