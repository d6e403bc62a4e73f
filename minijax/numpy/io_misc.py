"""``jnp``'s input/output, printing, dtype-query and buffer names.

``save``, ``savez``, ``array_repr``, ``array_str`` and ``iterable`` are
NumPy's own functions (as in JAX: they work on minijax Arrays through
``__array__``). ``load`` wraps ``np.load`` to return an Array and recover
bfloat16 (which ``np.save`` writes as raw 2-byte voids). ``fromiter`` and
``fromfile`` raise, as JAX's do: reading an iterator or a file is a side
effect that a traced function would repeat or skip.
"""

from __future__ import annotations

import os
from typing import IO, Any

import numpy as np

from minijax import dtypes
from minijax.dlpack import from_dlpack as _from_dlpack
from minijax.numpy.creation import array, asarray
from minijax.numpy.util import check_arraylike

__all__ = [
    "array_repr", "array_str", "copy", "from_dlpack", "frombuffer", "fromfile", "fromiter", "fromstring",
    "get_printoptions", "isdtype", "iterable", "load", "printoptions", "save", "savez", "set_printoptions",
]  # fmt: skip

array_repr = np.array_repr
array_str = np.array_str
save = np.save
savez = np.savez
iterable = np.iterable


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """NumPy's ``printoptions`` context manager (Arrays print through NumPy)."""
    return np.printoptions(*args, **kwargs)


def get_printoptions() -> dict[str, Any]:
    """NumPy's current print options, which Arrays print with."""
    return dict(np.get_printoptions())


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """Set NumPy's print options, which Arrays print with."""
    np.set_printoptions(*args, **kwargs)


def load(file: IO[bytes] | str | os.PathLike[Any], *args: Any, **kwargs: Any) -> Any:
    """``np.load``, with a single saved array returned as an Array (bfloat16 recovered)."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == "V2":
            out = out.view(dtypes.bfloat16)
        try:
            out = asarray(out)
        except (TypeError, ValueError):  # a dtype minijax has no arrays of: NumPy's array, as JAX leaves it
            pass
    return out


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """The bytes of ``buffer`` read as a 1-D array of ``dtype`` (``np.frombuffer``, then on the device)."""
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """The numbers in the text ``string`` separated by ``sep`` (``np.fromstring``, then on the device)."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for use with JIT and other "
        "JAX transformations. Consider using jnp.asarray(np.fromiter(...)) instead, although care should be taken "
        "if np.fromiter is used within a jax transformations because of its potential side-effect of consuming the "
        "iterable object."
    )


def fromfile(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for use with JIT and other "
        "JAX transformations. Consider using jnp.asarray(np.fromfile(...)) instead, although care should be taken "
        "if np.fromfile is used within a jax transformations because of its potential side-effect of consuming the "
        "file object."
    )


def copy(a: Any, order: str | None = None) -> Any:
    """A copy of ``a`` as a new Array."""
    check_arraylike("copy", a)
    return array(a, copy=True, order=order)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An Array holding the value of a DLPack-exporting array (``minijax.dlpack.from_dlpack``)."""
    return _from_dlpack(x, device=device, copy=copy)


_BOOL = {np.dtype(np.bool_)}
_SIGNED = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)}
_UNSIGNED = {np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}
_FLOAT: set[np.dtype[Any]] = {np.dtype(t) for t in (np.float16, dtypes.bfloat16, np.float32, np.float64)}
_COMPLEX: set[np.dtype[Any]] = {np.dtype(np.complex64), np.dtype(np.complex128)}
_KINDS: dict[str, set[np.dtype[Any]]] = {
    "bool": _BOOL,
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED | _UNSIGNED,
    "real floating": _FLOAT,
    "complex floating": _COMPLEX,
    "numeric": _SIGNED | _UNSIGNED | _FLOAT | _COMPLEX,
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a kind name ('bool', 'integral', 'real floating', ...), a dtype, or a
    tuple of those (the Array API's ``isdtype``; bfloat16 counts as real floating)."""
    the_dtype = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    options: set[np.dtype[Any]] = set()
    for k in kinds:
        if isinstance(k, str) and k in _KINDS:
            options |= _KINDS[k]
            continue
        try:
            options.add(np.dtype(k))
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(
                    f"Unrecognized kind={k!r} expected one of {list(_KINDS)}, or a compatible input for jnp.dtype()"
                ) from e
            raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}") from e
    return the_dtype in options
