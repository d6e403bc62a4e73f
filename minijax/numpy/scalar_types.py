"""Scalar types (``jnp.float32``, ``jnp.int8``, ...), ``jnp.ndarray`` and dtype utilities.

``jnp.float32`` plays two roles, as in JAX: it names a dtype
(``jnp.zeros(3, dtype=jnp.float32)``, ``np.dtype(jnp.float32)``) and it
converts values (``jnp.float32(1)`` is ``Array(1., dtype=float32)``, never a
NumPy scalar, so the result can live on a device and be traced). A NumPy
scalar type cannot do the second, so each one is a small class whose
metaclass makes calling it convert, and which compares equal to (and hashes
like) the NumPy type it stands for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax import core, dtypes
from minijax.array import Array
from minijax.numpy.creation import asarray

__all__ = [
    "bfloat16",
    "bool_",
    "can_cast",
    "ComplexWarning",
    "cdouble",
    "complex128",
    "complex64",
    "complex_",
    "complexfloating",
    "csingle",
    "dtype",
    "e",
    "euler_gamma",
    "finfo",
    "float16",
    "float32",
    "float64",
    "float_",
    "floating",
    "generic",
    "iinfo",
    "inexact",
    "inf",
    "int16",
    "int32",
    "int64",
    "int8",
    "int_",
    "integer",
    "iscomplexobj",
    "isrealobj",
    "issubdtype",
    "isscalar",
    "nan",
    "ndarray",
    "newaxis",
    "number",
    "pi",
    "promote_types",
    "result_type",
    "signedinteger",
    "uint",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "unsignedinteger",
    # narrow: the ml_dtypes narrow types
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "int1",
    "int2",
    "int4",
    "uint1",
    "uint2",
    "uint4",
]


class _ScalarMeta(type):
    """Metaclass of the scalar types: calling one converts to an Array of its dtype."""

    dtype: np.dtype[Any]

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: object) -> bool:
        return cls is other or other is cls.dtype.type

    def __ne__(cls, other: object) -> bool:
        return not cls == other

    def __call__(cls, x: Any) -> Any:
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        # Like JAX: NumPy scalars of this type are instances; Arrays are not.
        return isinstance(instance, cls.dtype.type)


def _make_scalar_type(np_type: type) -> _ScalarMeta:
    name = np.dtype(np_type).name
    doc = f"A {name} scalar type: ``{name}(x)`` converts ``x`` to an Array of dtype {name}."
    return _ScalarMeta(name, (object,), {"dtype": np.dtype(np_type), "__module__": "minijax.numpy", "__doc__": doc})


bool_ = _make_scalar_type(np.bool_)
int8 = _make_scalar_type(np.int8)
int16 = _make_scalar_type(np.int16)
int32 = _make_scalar_type(np.int32)
int64 = _make_scalar_type(np.int64)
uint8 = _make_scalar_type(np.uint8)
uint16 = _make_scalar_type(np.uint16)
uint32 = _make_scalar_type(np.uint32)
uint64 = _make_scalar_type(np.uint64)
float16 = _make_scalar_type(np.float16)
bfloat16 = _make_scalar_type(dtypes.bfloat16)
float32 = _make_scalar_type(np.float32)
float64 = _make_scalar_type(np.float64)
complex64 = _make_scalar_type(np.complex64)
complex128 = _make_scalar_type(np.complex128)
# narrow: ml_dtypes' narrow types, as JAX exports them.
float8_e3m4 = _make_scalar_type(dtypes.float8_e3m4)
float8_e4m3 = _make_scalar_type(dtypes.float8_e4m3)
float8_e4m3b11fnuz = _make_scalar_type(dtypes.float8_e4m3b11fnuz)
float8_e4m3fn = _make_scalar_type(dtypes.float8_e4m3fn)
float8_e4m3fnuz = _make_scalar_type(dtypes.float8_e4m3fnuz)
float8_e5m2 = _make_scalar_type(dtypes.float8_e5m2)
float8_e5m2fnuz = _make_scalar_type(dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _make_scalar_type(dtypes.float8_e8m0fnu)
float6_e2m3fn = _make_scalar_type(dtypes.float6_e2m3fn)
float6_e3m2fn = _make_scalar_type(dtypes.float6_e3m2fn)
float4_e2m1fn = _make_scalar_type(dtypes.float4_e2m1fn)
int1 = _make_scalar_type(dtypes.int1)
int2 = _make_scalar_type(dtypes.int2)
int4 = _make_scalar_type(dtypes.int4)
uint1 = _make_scalar_type(dtypes.uint1)
uint2 = _make_scalar_type(dtypes.uint2)
uint4 = _make_scalar_type(dtypes.uint4)
# NumPy's default-precision aliases, as JAX spells them (64-bit names).
float_ = float64
int_ = int64
uint = uint64
complex_ = complex128
csingle = complex64
cdouble = complex128

# NumPy's warning for casting complex values to real (JAX re-exports NumPy's).
ComplexWarning = np.exceptions.ComplexWarning

# The abstract scalar classes are NumPy's own (issubdtype understands them).
generic = np.generic
number = np.number
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger

dtype = np.dtype


# As in JAX, jnp.ndarray is the Array type itself (tracers are registered
# as Arrays, so isinstance checks hold inside transformations too).
ndarray = Array


# ---------------------------------------------------------------------------
# Dtype functions


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """``np.issubdtype`` that knows JAX's extra dtypes (bfloat16 is floating)."""
    return dtypes.issubdtype(arg1, arg2)


def promote_types(a: Any, b: Any) -> np.dtype[Any]:
    """The dtype two dtypes promote to on JAX's lattice (not value-dependent)."""
    return dtypes.promote_types(a, b)


def result_type(*args: Any) -> np.dtype[Any]:
    """The dtype an operation on ``args`` computes in (weak types resolved)."""
    return dtypes.canonicalize_dtype(dtypes.result_type(*args))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """NumPy's casting rules between dtypes (or the dtype of an array)."""
    if type(from_) in (int, float, complex):
        raise TypeError(
            "can_cast() does not support Python ints, floats, and complex because the result "
            "used to depend on the value.\nThis change was part of adopting NEP 50, we may "
            "explicitly allow them again in the future."
        )
    src = dtypes.dtype(from_)
    return bool(np.can_cast(src, dtypes.dtype(to), casting=casting))  # type: ignore[arg-type]


def finfo(dtype: Any) -> np.finfo[Any]:
    """Machine limits of a floating dtype (of an array too); knows bfloat16."""
    return dtypes.finfo(dtypes.dtype(dtype))


def iinfo(int_type: Any) -> np.iinfo[Any]:
    """Machine limits of an integer dtype (of an array too)."""
    return dtypes.iinfo(dtypes.dtype(int_type))


def isscalar(element: Any) -> bool:
    """True for scalars as NumPy counts them (strings too) and for rank-0 arrays."""
    if isinstance(element, (Array, core.Tracer, np.ndarray)):
        return element.ndim == 0
    return bool(np.isscalar(element))


def iscomplexobj(x: Any) -> bool:
    """Whether ``x``'s dtype is complex (its contents do not matter).

    Arrays and tracers are judged by their dtype; NumPy values and Python
    ``complex`` by NumPy's dtype for them, as JAX judges them
    (``jnp.iscomplexobj(1j)`` is True).
    """
    if x is None:
        return False
    found = getattr(x, "dtype", None)
    if found is None:
        found = np.asarray(x).dtype
    return isinstance(found, np.dtype) and bool(np.issubdtype(found, np.complexfloating))


def isrealobj(x: Any) -> bool:
    """``not iscomplexobj(x)``."""
    return not iscomplexobj(x)


# Constants, as in NumPy.
pi = np.pi
e = np.e
euler_gamma = np.euler_gamma
inf = np.inf
nan = np.nan
newaxis = None
