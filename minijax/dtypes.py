"""Dtypes, weak types and JAX's type promotion lattice (mirrors ``jax.dtypes``).

Supported dtypes: bool, int8/16/32/64, uint8/16/32/64, float16, bfloat16,
float32, float64, complex64, complex128, and ``float0`` (the tangent type of integer and bool values);
also ml_dtypes' narrow types JAX exports (``float8_*``, ``float6_*``,
``float4_e2m1fn``, ``int1/2/4``, ``uint1/2/4``), which only promote implicitly
with weak Python scalars (and float8 etc. with integers, through ``f*``).

Two ideas shape this module:

* **Canonicalization.** With ``jax_enable_x64`` off (the default) the 64-bit
  dtypes do not exist for values: int64/uint64/float64 become int32/uint32/
  float32. ``canonicalize_dtype`` applies that mapping.

* **Weak types.** A Python scalar like ``2`` or ``2.5`` has no dtype of its own;
  it adopts the dtype of the array it meets (``int8_array * 2`` stays int8).
  Values derived only from Python scalars stay "weakly typed". Promotion is
  the join on a small lattice where Python ``int`` and ``float`` are the nodes
  ``i*`` and ``f*`` below every concrete integer and floating dtype; see
  https://docs.jax.dev/en/latest/type_promotion.html.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

import ml_dtypes
import numpy as np

from minijax.config import explicit_x64_dtypes, read, x64_enabled

__all__ = [
    "DTypeLike",
    "ExtendedDType",
    "TypePromotionError",
    "bfloat16",
    "canonicalize_dtype",
    "check_user_dtype_supported",
    "default_complex_dtype",
    "default_float_dtype",
    "default_int_dtype",
    "default_uint_dtype",
    "dtype",
    "dtype_from_short_name",
    "extended",
    "finfo",
    "float0",
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
    "narrow_dtypes",
    "uint1",
    "uint2",
    "uint4",
    "iinfo",
    "itemsize_bits",
    "is_python_scalar",
    "is_weakly_typed",
    "issubdtype",
    "prng_key",
    "promote_types",
    "python_scalar_dtypes",
    "register_extended_dtype",
    "result_type",
    "scalar_type_of",
    "short_dtype_name",
    "supported_dtypes",
]

# Anything that names a dtype: np.dtype, "float32", np.float32, int, bfloat16.
DTypeLike: TypeAlias = Any

bfloat16: type[Any] = ml_dtypes.bfloat16

# The narrow types (ml_dtypes'), in JAX's order within each group.
float8_e3m4: type[Any] = ml_dtypes.float8_e3m4
float8_e4m3: type[Any] = ml_dtypes.float8_e4m3
float8_e8m0fnu: type[Any] = ml_dtypes.float8_e8m0fnu
float8_e4m3b11fnuz: type[Any] = ml_dtypes.float8_e4m3b11fnuz
float8_e4m3fn: type[Any] = ml_dtypes.float8_e4m3fn
float8_e4m3fnuz: type[Any] = ml_dtypes.float8_e4m3fnuz
float8_e5m2: type[Any] = ml_dtypes.float8_e5m2
float8_e5m2fnuz: type[Any] = ml_dtypes.float8_e5m2fnuz
float6_e2m3fn: type[Any] = ml_dtypes.float6_e2m3fn
float6_e3m2fn: type[Any] = ml_dtypes.float6_e3m2fn
float4_e2m1fn: type[Any] = ml_dtypes.float4_e2m1fn
int1: type[Any] = ml_dtypes.int1
int2: type[Any] = ml_dtypes.int2
int4: type[Any] = ml_dtypes.int4
uint1: type[Any] = ml_dtypes.uint1
uint2: type[Any] = ml_dtypes.uint2
uint4: type[Any] = ml_dtypes.uint4

# The dtype of tangents of integer/bool values: zero bytes per element, so a
# float0 array carries only a shape. Defined the way JAX defines it so that
# values are interchangeable.
float0: np.dtype[Any] = np.dtype([("float0", np.void, 0)])


# ---------------------------------------------------------------------------
# Extended dtypes: element types that are not numbers (PRNG keys)


class extended(np.generic):
    """Scalar type above every extended dtype: ``issubdtype(key.dtype, extended)``."""


class prng_key(extended):
    """Scalar type of PRNG key dtypes: ``issubdtype(key.dtype, prng_key)``."""


class ExtendedDType:
    """An element type whose values are not numbers, like ``key<fry>`` (JAX's extended dtypes).

    An aval may carry one in place of an ``np.dtype``. Backends never see it
    as such: each element is stored as one element of the *physical* NumPy
    dtype ``dtype`` (NumPy converts an object with a ``dtype`` attribute to
    that dtype, so ``np.asarray(x, dtype=key_dtype)`` and the XLA element-type
    table need no special case). Shape operations (reshape, slicing, gather,
    select, concatenate, while/cond carries) therefore work on extended
    values unchanged; only the primitives that look inside an element (the
    random primitives) know the packing. A subclass sets ``type`` (the scalar
    type for ``issubdtype``), ``name`` and ``dtype``.
    """

    type: type = extended
    name: str = "extended"
    # The physical element dtype (what backends store per element).
    dtype: np.dtype[Any] = np.dtype(np.uint64)
    kind: str = "V"

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def host_repr_data(self, physical: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """What ``repr`` shows of an array of this dtype, given its physical values."""
        return physical

    def reduce_array(self, physical: np.ndarray[Any, Any]) -> tuple[Any, ...]:
        """``__reduce__`` of an array of this dtype (for pickle), given its physical values."""
        raise NotImplementedError(f"arrays of dtype {self.name} cannot be pickled")

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


# name -> extended dtype, for the jaxpr parser (``key<fry>``).
_EXTENDED_BY_NAME: dict[str, ExtendedDType] = {}


def register_extended_dtype(dt: ExtendedDType) -> None:
    """Make ``dt`` known by its name (``dtype_from_short_name``, printing)."""
    _EXTENDED_BY_NAME[dt.name] = dt


class TypePromotionError(ValueError):
    """Raised when dtypes cannot be promoted implicitly (e.g. in strict mode)."""


# ---------------------------------------------------------------------------
# The supported dtypes and their names

_bool = np.dtype(np.bool_)
_i8, _i16, _i32, _i64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
_u8, _u16, _u32, _u64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
_f16, _bf16, _f32, _f64 = (np.dtype(t) for t in (np.float16, bfloat16, np.float32, np.float64))
_c64, _c128 = np.dtype(np.complex64), np.dtype(np.complex128)

_FLOAT8: tuple[np.dtype[Any], ...] = tuple(
    np.dtype(t)
    for t in (
        float8_e3m4, float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz,
        float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
    )
)
_FLOAT6: tuple[np.dtype[Any], ...] = (np.dtype(float6_e2m3fn), np.dtype(float6_e3m2fn))
_FLOAT4: tuple[np.dtype[Any], ...] = (np.dtype(float4_e2m1fn),)
_SIGNED_N: tuple[np.dtype[Any], ...] = tuple(np.dtype(t) for t in (int1, int2, int4))
_UNSIGNED_N: tuple[np.dtype[Any], ...] = tuple(np.dtype(t) for t in (uint1, uint2, uint4))
_NARROW_FLOATS = _FLOAT8 + _FLOAT6 + _FLOAT4
_NARROW_INTS = _SIGNED_N + _UNSIGNED_N


def _narrow_short_name(dt: np.dtype[Any]) -> str:
    # JAX abbreviates the kind only: float8_e4m3fn -> f8_e4m3fn, uint4 -> u4.
    return dt.name.replace("float", "f").replace("uint", "u").replace("int", "i")

# Short names as they appear in jaxpr text (``f32[3]``, ``bool[]``, ...).
_SHORT_NAMES: dict[np.dtype[Any], str] = {
    _bool: "bool",
    _i8: "i8", _i16: "i16", _i32: "i32", _i64: "i64",
    _u8: "u8", _u16: "u16", _u32: "u32", _u64: "u64",
    _f16: "f16", _bf16: "bf16", _f32: "f32", _f64: "f64",
    _c64: "c64", _c128: "c128",
    float0: "float0",
    **{d: _narrow_short_name(d) for d in _NARROW_FLOATS + _NARROW_INTS},
}
_FROM_SHORT_NAME: dict[str, np.dtype[Any]] = {v: k for k, v in _SHORT_NAMES.items()}

# Every dtype a minijax value may have.
_VALID_DTYPES: frozenset[np.dtype[Any]] = frozenset(_SHORT_NAMES)

_FLOATING: frozenset[np.dtype[Any]] = frozenset({_f16, _bf16, _f32, _f64, *_NARROW_FLOATS})
_COMPLEX: frozenset[np.dtype[Any]] = frozenset({_c64, _c128})

# x64 off: each 64-bit dtype is replaced by its 32-bit counterpart.
_TO_32_BIT: dict[np.dtype[Any], np.dtype[Any]] = {_i64: _i32, _u64: _u32, _f64: _f32, _c128: _c64}

# dtype -> canonical dtype, one table per x64 setting, so that
# canonicalize_dtype of an np.dtype is a single dict lookup.
_CANONICAL_X64: dict[Any, np.dtype[Any]] = {d: d for d in _VALID_DTYPES}
_CANONICAL_X32: dict[Any, np.dtype[Any]] = {d: _TO_32_BIT.get(d, d) for d in _VALID_DTYPES}

# Python scalar type -> the (uncanonicalized) dtype it stands for.
python_scalar_dtypes: Mapping[type, np.dtype[Any]] = {bool: _bool, int: _i64, float: _f64, complex: _c128}


def supported_dtypes() -> tuple[np.dtype[Any], ...]:
    """The standard dtypes minijax arrays may have: float0 and the narrow ones excluded."""
    return tuple(d for d in _SHORT_NAMES if d != float0 and d not in _NARROW)


def narrow_dtypes() -> tuple[np.dtype[Any], ...]:
    """The ml_dtypes narrow dtypes (float8_*, float6_*, float4_e2m1fn, int1/2/4, uint1/2/4)."""
    return _NARROW_FLOATS + _NARROW_INTS


_NARROW: frozenset[np.dtype[Any]] = frozenset(_NARROW_FLOATS + _NARROW_INTS)


def short_dtype_name(dtype: DTypeLike) -> str:
    """The jaxpr spelling of a dtype: ``f32``, ``i8``, ``u64``, ``bool``, ``bf16``."""
    try:
        return _SHORT_NAMES[dtype]
    except (KeyError, TypeError):
        if isinstance(dtype, ExtendedDType):
            return dtype.name
        return _SHORT_NAMES[_to_np_dtype(dtype)]


def dtype_from_short_name(name: str) -> np.dtype[Any]:
    """Inverse of ``short_dtype_name``, for the jaxpr parser."""
    try:
        return _FROM_SHORT_NAME[name]
    except KeyError:
        if name in _EXTENDED_BY_NAME:
            return _EXTENDED_BY_NAME[name]  # type: ignore[return-value]  # stands in for an np.dtype
        raise ValueError(
            f"Unknown dtype short name {name!r}; expected one of {sorted(_FROM_SHORT_NAME)}."
        ) from None


# ---------------------------------------------------------------------------
# Validation and canonicalization


def _to_np_dtype(x: DTypeLike) -> np.dtype[Any]:
    """Turn a dtype specifier into an np.dtype that minijax supports, or raise."""
    if isinstance(x, ExtendedDType):
        return x  # type: ignore[return-value]  # an extended dtype stands in for an np.dtype
    try:
        dt = np.dtype(x)
    except TypeError as e:
        raise TypeError(f"dtype {x!r} not understood") from e
    if dt in _VALID_DTYPES:
        return dt
    raise TypeError(
        f"Value '{x}' with dtype {dt} is not a valid JAX array type. minijax supports "
        "bool, int8/16/32/64, uint8/16/32/64, float16, bfloat16, float32, float64, complex64 "
        "and complex128, "
        "and ml_dtypes' float8_*/float6_*/float4_e2m1fn/int1/int2/int4/uint1/uint2/uint4."
    )


def canonicalize_dtype(dtype: DTypeLike, allow_extended_dtype: bool = False) -> np.dtype[Any]:
    """The dtype values of ``dtype`` actually get under the current x64 setting.

    With x64 off, int64 -> int32, uint64 -> uint32, float64 -> float32,
    complex128 -> complex64.
    Accepts anything ``np.dtype`` accepts, including ``int``, ``float``, ``bool``
    and strings; raises TypeError for dtypes JAX does not support.
    """
    del allow_extended_dtype  # extended dtypes (PRNG keys) are canonical as they are
    table = _CANONICAL_X64 if x64_enabled() else _CANONICAL_X32
    # Fast path: np.dtype keys. A hit through numpy's lenient __eq__ (say
    # "int32" == np.dtype("int32")) is still the right answer.
    try:
        return table[dtype]
    except (KeyError, TypeError):
        if isinstance(dtype, ExtendedDType):
            return dtype  # type: ignore[return-value]  # stands in for an np.dtype
        return table[_to_np_dtype(dtype)]


def default_int_dtype() -> np.dtype[Any]:
    return _i64 if x64_enabled() else _i32


def default_uint_dtype() -> np.dtype[Any]:
    return _u64 if x64_enabled() else _u32


def default_float_dtype() -> np.dtype[Any]:
    return _f64 if x64_enabled() else _f32


def default_complex_dtype() -> np.dtype[Any]:
    return _c128 if x64_enabled() else _c64


def to_complex_dtype(dtype: DTypeLike) -> np.dtype[Any]:
    """The complex dtype holding ``dtype``'s values (JAX's ``dtypes.to_complex_dtype``): complex128
    for float64 (and, through the default float, 64-bit integers under x64), complex64 for the
    narrower floats; a complex dtype stays. Canonicalized (complex64 without x64)."""
    dt = np.dtype(dtype)
    if issubdtype(dt, np.complexfloating):
        return canonicalize_dtype(dt)
    if not issubdtype(dt, np.floating):
        dt = promote_types(dt, default_float_dtype())
    return canonicalize_dtype(np.complex128 if dt == np.float64 else np.complex64)


def _explicit_dtype(dt: np.dtype[Any], fun_name: str | None, stacklevel: int) -> np.dtype[Any]:
    """Canonicalize a dtype the user asked for by name (``dtype=jnp.float64``).

    Unlike silent canonicalization of values, an explicit request for a 64-bit
    dtype with x64 off is surprising, so JAX warns (or errors, or allows it,
    per ``jax_explicit_x64_dtypes``). ``stacklevel`` counts from the caller
    of this function, as in ``warnings.warn``.
    """
    narrow = _TO_32_BIT.get(dt)
    if narrow is None or x64_enabled():
        return dt
    mode = explicit_x64_dtypes.value
    if mode == "allow":
        return dt
    where = f" requested in {fun_name}" if fun_name else ""
    if mode == "error":
        raise ValueError(
            f"Explicitly requested dtype {dt}{where} is not available. To enable more "
            "dtypes, set the jax_enable_x64 or jax_explicit_x64_dtypes configuration "
            "options."
        )
    warnings.warn(
        f"Explicitly requested dtype {dt}{where} is not available, and will be "
        f"truncated to dtype {narrow}. To enable more dtypes, set the jax_enable_x64 "
        "configuration option or the JAX_ENABLE_X64 shell environment variable. "
        "See https://github.com/jax-ml/jax#current-gotchas for more.",
        UserWarning,
        stacklevel=stacklevel + 1,
    )
    return narrow


def check_user_dtype_supported(dtype: DTypeLike, fun_name: str | None = None) -> np.dtype[Any]:
    """Validate a user-supplied ``dtype=`` argument and return its canonical form.

    Python types give the default dtype of their kind (``int`` -> int32 with
    x64 off, silently); an explicit 64-bit dtype with x64 off warns.
    """
    if dtype is None:
        raise ValueError("dtype must be specified.")
    if isinstance(dtype, type) and dtype in python_scalar_dtypes:
        return canonicalize_dtype(python_scalar_dtypes[dtype])
    if hasattr(dtype, "aval") or isinstance(dtype, np.ndarray):
        raise ValueError(
            "Passing an array as a dtype argument is not supported; instead of "
            "dtype=arr use dtype=arr.dtype."
        )
    return _explicit_dtype(_to_np_dtype(dtype), fun_name, stacklevel=3)


# ---------------------------------------------------------------------------
# The dtype of a value, and weak types


def is_python_scalar(x: Any) -> bool:
    """True for Python ``bool``, ``int``, ``float`` and ``complex`` values (not NumPy scalars)."""
    return type(x) in python_scalar_dtypes


def is_weakly_typed(x: Any) -> bool:
    """Whether ``x`` promotes like a Python scalar.

    True for Python int and float (and complex, as in JAX; bool is a full
    dtype, never weak), and for
    minijax values whose ``aval.weak_type`` is set; also accepts abstract
    values that carry ``weak_type`` themselves.
    """
    t = type(x)
    if t is int or t is float or t is complex:
        return True
    aval = getattr(x, "aval", None)
    if aval is not None:
        return bool(getattr(aval, "weak_type", False))
    return bool(getattr(x, "weak_type", False))


def _python_scalar_dtype(t: type) -> np.dtype[Any]:
    # A Python scalar's dtype is the default of its kind under the x64 flag.
    if t is bool:
        return _bool
    if t is int:
        return default_int_dtype()
    if t is complex:
        return default_complex_dtype()
    return default_float_dtype()


def dtype(x: Any, *, canonicalize: bool = False) -> np.dtype[Any]:
    """The dtype of a value or of a dtype specifier.

    Python scalars and the types ``int``/``float`` give the default dtype
    (already canonical); values with ``.aval`` or ``.dtype`` give theirs;
    strings, np.dtypes and scalar types are parsed. ``canonicalize=True``
    applies the x64 mapping to the result.
    """
    if x is None:
        raise ValueError("Invalid argument to dtype: None.")
    t = type(x)
    if t in python_scalar_dtypes:
        return _python_scalar_dtype(t)
    if isinstance(x, type) and x in python_scalar_dtypes:
        return _python_scalar_dtype(x)
    if isinstance(x, ExtendedDType):
        return x  # type: ignore[return-value]  # stands in for an np.dtype
    if isinstance(x, (str, np.dtype, type)):
        dt = _to_np_dtype(x)
    else:
        aval = getattr(x, "aval", None)
        found = getattr(aval if aval is not None else x, "dtype", None)
        if isinstance(found, ExtendedDType):
            return found  # type: ignore[return-value]  # stands in for an np.dtype
        if isinstance(found, np.dtype):
            dt = _to_np_dtype(found)
        else:
            try:
                guess = np.result_type(x)
            except TypeError as e:
                raise TypeError(f"Cannot determine dtype of {x!r}") from e
            dt = _to_np_dtype(guess)
    return canonicalize_dtype(dt) if canonicalize else dt


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float or complex) matching ``x``'s dtype."""
    dt = dtype(x)
    if dt == _bool:
        return bool
    if dt.kind in "iu":
        return int
    if dt in _FLOATING:
        return float
    if dt in _COMPLEX:
        return complex
    raise TypeError(f"Invalid scalar value {x!r}: dtype {dt} has no Python scalar type.")


# ---------------------------------------------------------------------------
# The promotion lattice
#
# Nodes are the short dtype names plus "i*", "f*" and "c*", the weak types
# (Python int, float and complex). Each node lists the nodes directly above it; the promotion
# of a set of types is their least upper bound (join).

_WEAK_NODES = frozenset({"i*", "f*", "c*"})
_INT_NODES = ("u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64")
_FLOAT_NODES = ("bf16", "f16", "f32", "f64")
_COMPLEX_NODES = ("c64", "c128")
_NARROW_FLOAT_NODES = tuple(_narrow_short_name(d) for d in _NARROW_FLOATS)
_NARROW_INT_NODES = tuple(_narrow_short_name(d) for d in _NARROW_INTS)

_STANDARD_EDGES: dict[str, tuple[str, ...]] = {
    "bool": ("i*",),
    # Narrow integers and floats sit just above the weak types and below
    # nothing: they meet only Python scalars (and, for the floats, anything
    # that reaches f*), as in JAX.
    "i*": ("u8", "i8", *_NARROW_INT_NODES),
    "u8": ("u16", "i16"),
    "u16": ("u32", "i32"),
    "u32": ("u64", "i64"),
    "u64": ("f*",),
    "i8": ("i16",),
    "i16": ("i32",),
    "i32": ("i64",),
    "i64": ("f*",),
    "f*": ("bf16", "f16", "c*", *_NARROW_FLOAT_NODES),
    **{n: () for n in _NARROW_FLOAT_NODES + _NARROW_INT_NODES},
    "bf16": ("f32",),
    "f16": ("f32",),
    "f32": ("f64", "c64"),
    "f64": ("c128",),
    "c*": ("c64",),
    "c64": ("c128",),
    "c128": (),
}

# x64 off: u32 joined with a signed integer stops at i32 instead of forming an
# i64 that could only be truncated again (the result after canonicalization
# is the same; this keeps the join itself 32-bit, as JAX does).
_X32_EDGES = {**_STANDARD_EDGES, "u32": ("u64", "i32")}

# jax_numpy_dtype_promotion='strict': only weak Python scalars promote
# implicitly (into any integer or floating type, and int into float).
_STRICT_EDGES: dict[str, tuple[str, ...]] = {
    "bool": (),
    "i*": ("f*", *_INT_NODES, *_NARROW_INT_NODES),
    "f*": ("c*", *_FLOAT_NODES, *_NARROW_FLOAT_NODES),
    "c*": _COMPLEX_NODES,
    **{n: () for n in _INT_NODES + _FLOAT_NODES + _COMPLEX_NODES + _NARROW_INT_NODES + _NARROW_FLOAT_NODES},
}


def _upper_bounds(edges: Mapping[str, Iterable[str]]) -> dict[str, frozenset[str]]:
    """Each node's set of upper bounds (itself included): transitive closure."""

    def walk(node: str) -> frozenset[str]:
        result = {node}
        for parent in edges[node]:
            result |= walk(parent)
        return frozenset(result)

    return {node: walk(node) for node in edges}


def _join_table(edges: Mapping[str, Iterable[str]]) -> dict[tuple[str, str], str | None]:
    """Join of every pair of nodes; None where no least upper bound exists."""
    ub = _upper_bounds(edges)
    table: dict[tuple[str, str], str | None] = {}
    for a in edges:
        for b in edges:
            common = ub[a] & ub[b]
            least = [c for c in common if common <= ub[c]]
            table[a, b] = least[0] if len(least) == 1 else None
    return table


# Precomputed once: promotion is on the path of every binary operation.
_JOINS: dict[tuple[bool, bool], dict[tuple[str, str], str | None]] = {
    # (strict, x64) -> join table
    (False, True): _join_table(_STANDARD_EDGES),
    (False, False): _join_table(_X32_EDGES),
    (True, True): _join_table(_STRICT_EDGES),
    (True, False): _join_table(_STRICT_EDGES),
}

# (dtype, weak) -> lattice node. A weak value sits on its Python type's node;
# weak bool does not exist (bool is always strong).
_NODE: dict[tuple[np.dtype[Any], bool], str] = {}
for _dt, _name in _SHORT_NAMES.items():
    if _dt == float0:
        continue
    _NODE[_dt, False] = _name
    _NODE[_dt, True] = (
        "bool" if _dt == _bool else "f*" if _dt in _FLOATING else "c*" if _dt in _COMPLEX else "i*"
    )
del _dt, _name


def _join(nodes: list[str], table: Mapping[tuple[str, str], str | None]) -> str | None:
    acc = nodes[0]
    for node in nodes[1:]:
        joined = table[acc, node]
        if joined is None:
            return None
        acc = joined
    return acc


def _node_dtype(node: str, x64: bool) -> np.dtype[Any]:
    if node == "i*":
        return _i64 if x64 else _i32
    if node == "f*":
        return _f64 if x64 else _f32
    if node == "c*":
        return _c128 if x64 else _c64
    return _FROM_SHORT_NAME[node]


def _weak_result_dtype(dt: np.dtype[Any], x64: bool) -> np.dtype[Any]:
    """A weak result is only a kind (int/uint/float/complex): it gets that kind's default."""
    if dt in _FLOATING:
        return _f64 if x64 else _f32
    if dt in _COMPLEX:
        return _c128 if x64 else _c64
    if dt.kind == "u":
        return _u64 if x64 else _u32
    if dt.kind == "i":
        return _i64 if x64 else _i32
    return dt


def _nodes_of(pairs: Iterable[tuple[np.dtype[Any], bool]]) -> list[str]:
    nodes = []
    for dt, weak in pairs:
        node = _NODE.get((dt, weak))
        if node is None:
            raise ValueError(f"dtype={dt!r} is not a valid dtype for JAX type promotion.")
        nodes.append(node)
    return nodes


def _promotion_error(nodes: list[str], strict: bool) -> TypePromotionError:
    shown = ", ".join(nodes)
    narrow = _narrow_promotion_error(nodes, strict)
    if narrow is not None:
        return narrow
    if strict:
        return TypePromotionError(
            f"Input dtypes ({shown}) have no implicit dtype promotion path when "
            "jax_numpy_dtype_promotion='strict'. Cast the inputs explicitly to "
            "the dtype you want (x.astype(...)), or set "
            "jax_numpy_dtype_promotion='standard'."
        )
    return TypePromotionError(
        f"Input dtypes ({shown}) have no implicit dtype promotion path. "
        "Cast the inputs explicitly to the dtype you want."
    )


def _narrow_promotion_error(nodes: list[str], strict: bool) -> TypePromotionError | None:
    """JAX's own wording when a narrow dtype is what blocks promotion (not in strict mode)."""
    if strict:
        return None
    kinds = (
        (_FLOAT8, "8-bit floats", "float32"),
        (_FLOAT6, "6-bit floats", "float32"),
        (_FLOAT4, "4-bit floats", "float32"),
        (_NARROW_INTS, "1-bit, 2-bit and 4-bit integers", "int32"),
    )
    seen = [n for i, n in enumerate(nodes) if n not in nodes[:i]]
    for group, what, target in kinds:
        if any(_FROM_SHORT_NAME.get(n) in group for n in seen):
            names = tuple(_node_name(n) for n in seen)
            return TypePromotionError(
                f"Input dtypes {names} have no available implicit dtype promotion path. "
                f"To avoid unintended promotion, {what} do not support implicit promotion. "
                "If you'd like your inputs to be promoted to another type, you can do so "
                f"explicitly using e.g. x.astype('{target}')"
            )
    return None


def _node_name(node: str) -> str:
    if node == "i*":
        return str(int)
    if node == "f*":
        return str(float)
    if node == "c*":
        return str(complex)
    return _FROM_SHORT_NAME[node].name


def _lattice_join(nodes: list[str], strict: bool, x64: bool) -> str:
    """Join lattice nodes under the given promotion mode and x64 setting."""
    out = _join(nodes, _JOINS[strict, x64])
    if out is None:
        raise _promotion_error(nodes, strict)
    return out


def _dtype_and_weak(x: Any) -> tuple[np.dtype[Any], bool]:
    """(dtype, weak_type) of one argument of result_type.

    Values that already exist (minijax arrays, tracers, avals) keep their
    dtype even if it is 64-bit with x64 off: once formed, it is respected.
    NumPy values are canonicalized silently; explicit dtype specifiers are
    canonicalized with the "explicitly requested dtype" warning.
    """
    # Hot path first: minijax Array and Tracer carry an aval.
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, bool(getattr(aval, "weak_type", False))
    t = type(x)
    if t is int or t is float or t is complex:
        return _python_scalar_dtype(t), True
    if t is bool:
        return _bool, False
    if x is None:  # NumPy's convention: None stands for the default float
        return default_float_dtype(), False
    if x is int or x is float or x is complex:  # the types themselves promote like their values
        return _python_scalar_dtype(x), True
    if x is bool:
        return _bool, False
    if isinstance(x, (np.ndarray, np.generic)):
        return canonicalize_dtype(x.dtype), False
    if isinstance(x, (str, np.dtype, type)):
        return _explicit_dtype(_to_np_dtype(x), "result_type", stacklevel=3), False
    if isinstance(x, ExtendedDType):
        return x, False  # type: ignore[return-value]  # stands in for an np.dtype
    found = getattr(x, "dtype", None)
    if isinstance(found, np.dtype):
        weak = getattr(x, "weak_type", None)
        if weak is not None:  # an abstract value (ShapedArray): take it as is
            return _to_np_dtype(found), bool(weak)
        return canonicalize_dtype(found), False  # some other library's array
    return canonicalize_dtype(dtype(x)), False


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype JAX computes in when ``args`` meet in one operation.

    Arguments may be arrays, tracers, Python scalars, NumPy values, dtypes,
    strings or the types int/float/bool. Returns an np.dtype, or
    ``(dtype, weak_type)`` when ``return_weak_type_flag`` is set.

    The result is weak only when it lands on a weak node (i.e. every input
    was a Python scalar or weak value). Weak results use the default dtype
    of their kind, so they are always canonical.
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    # A plain loop, not a comprehension, so warning stacklevels are the same
    # on every Python version (3.11 gives comprehensions their own frame).
    pairs = []
    for a in args:
        pairs.append(_dtype_and_weak(a))
    # On every binary op: answer from the cache when these (dtype, weak)
    # inputs were seen before under the same flags.
    key = (tuple(pairs), x64_enabled(), read("jax_numpy_dtype_promotion"))
    out = _RESULT_CACHE.get(key)
    if out is None:
        out = _promote(*key)
    return out if return_weak_type_flag else out[0]


# (((dtype, weak), ...), x64, promotion mode) -> (dtype, weak)
_RESULT_CACHE: dict[tuple[Any, ...], tuple[np.dtype[Any], bool]] = {}


def _promote(
    pairs: tuple[tuple[np.dtype[Any], bool], ...], x64: bool, mode: str
) -> tuple[np.dtype[Any], bool]:
    """result_type's computation. Remembers its answer in _RESULT_CACHE."""
    if any(isinstance(d, ExtendedDType) for d, _ in pairs):
        return _promote_extended(pairs)
    strict = mode == "strict"
    out_dtype, out_weak = pairs[0]
    cacheable = True
    if len(pairs) > 1:
        all_weak = all(w for _, w in pairs)
        if not all_weak and all(d == out_dtype for d, _ in pairs):
            # The common case of same-dtype operands; also lets float0 through.
            out_weak = False
        else:
            if all_weak and not strict:
                # Every input weak: promote their strong dtypes and mark the
                # result weak (so two weak uint8 give a weak unsigned result,
                # where joining i* nodes would give a signed one).
                node = _lattice_join(_nodes_of((d, False) for d, _ in pairs), strict, x64)
                out_weak = True
            else:
                node = _lattice_join(_nodes_of(pairs), strict, x64)
                out_weak = node in _WEAK_NODES
            out_dtype = _node_dtype(node, x64)
            if not x64 and out_dtype in _TO_32_BIT:
                # Only 64-bit inputs that already exist lead here. Like JAX,
                # treat the result as an explicit request: warn and narrow
                # (per jax_explicit_x64_dtypes), so warn on every call.
                out_dtype = _explicit_dtype(out_dtype, "result_type", stacklevel=3)
                cacheable = False
    if out_dtype == _bool:
        out_weak = False
    elif out_weak:
        out_dtype = _weak_result_dtype(out_dtype, x64)
    result = (out_dtype, out_weak)
    if cacheable:
        if len(_RESULT_CACHE) > 4096:  # bound memory for unusual n-ary calls
            _RESULT_CACHE.clear()
        _RESULT_CACHE[pairs, x64, mode] = result
    return result


def _promote_extended(pairs: tuple[tuple[np.dtype[Any], bool], ...]) -> tuple[np.dtype[Any], bool]:
    """Extended dtypes (keys) do not promote: only the same extended dtype meets itself."""
    ext = next(d for d, _ in pairs if isinstance(d, ExtendedDType))
    # The extended dtype on the left of ==: an np.dtype on the left would
    # convert it to its physical dtype and compare that.
    if not all(ext == d for d, _ in pairs):
        raise ValueError(f"dtype={ext!r} is not a valid dtype for JAX type promotion.")
    return ext, False


def promote_types(a: DTypeLike, b: DTypeLike) -> np.dtype[Any]:
    """``jnp.promote_types``: the join of two dtypes on JAX's lattice.

    The Python types ``int`` and ``float`` stand for the weak nodes (so
    ``promote_types('uint8', int)`` is uint8). Like JAX, the result is not
    canonicalized: the lattice is the x64 one or the 32-bit one depending on
    the flag, but a 64-bit input (or a weak-only result) yields a 64-bit dtype.
    """
    strict = read("jax_numpy_dtype_promotion") == "strict"
    out = _lattice_join([_promote_types_node(a), _promote_types_node(b)], strict, x64_enabled())
    if out == "i*":
        return _i64
    if out == "f*":
        return _f64
    if out == "c*":
        return _c128
    return _FROM_SHORT_NAME[out]


def _promote_types_node(x: DTypeLike) -> str:
    if x is int:
        return "i*"
    if x is float:
        return "f*"
    if x is complex:
        return "c*"
    dt = _to_np_dtype(x)
    node = _NODE.get((dt, False))
    if node is None:
        raise ValueError(f"dtype={dt!r} is not a valid dtype for JAX type promotion.")
    return node


# ---------------------------------------------------------------------------
# Dtype hierarchy and limits


def _scalar_type(x: DTypeLike) -> type:
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    if isinstance(x, ExtendedDType):
        return x.type
    return np.dtype(x).type


@functools.lru_cache(maxsize=256)
def _issubdtype(a: type, b: type) -> bool:
    try:
        da = np.dtype(a)
    except TypeError:  # an abstract type (np.floating, np.generic): NumPy's answer
        return bool(np.issubdtype(a, b))
    if a is bfloat16 or da in _NARROW_FLOATS:
        # NumPy does not place ml_dtypes' floats under np.floating; JAX does.
        return b in (a, np.floating, np.inexact, np.number, np.generic)
    if da in _SIGNED_N:
        return b in (a, np.signedinteger, np.integer, np.number, np.generic)
    if da in _UNSIGNED_N:
        return b in (a, np.unsignedinteger, np.integer, np.number, np.generic)
    return bool(np.issubdtype(a, b))


def issubdtype(a: DTypeLike, b: DTypeLike) -> bool:
    """``np.issubdtype`` that also knows bfloat16 and the narrow types' kinds."""
    return _issubdtype(_scalar_type(a), _scalar_type(b))


# ml_dtypes ships no annotations for finfo; its finfo subclasses np.finfo.
_ml_finfo: Any = ml_dtypes.finfo


def finfo(dtype: DTypeLike) -> np.finfo[Any]:
    """Machine limits of a floating dtype; unlike np.finfo, knows bfloat16."""
    result: np.finfo[Any] = _ml_finfo(_to_np_dtype(dtype))
    return result


def itemsize_bits(dtype: DTypeLike) -> int:
    """Bits per element of ``dtype``: 4 for int4 (``np.dtype.itemsize`` says a whole byte), 8 for bool
    (a byte each), twice the parts' width for a complex type."""
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    if np.dtype(dtype) == np.dtype(bool):  # np.dtype: JAX's message for what is not a dtype
        return 8
    if issubdtype(dtype, np.integer):
        return int(iinfo(dtype).bits)
    if issubdtype(dtype, np.floating):
        return int(finfo(dtype).bits)
    if issubdtype(dtype, np.complexfloating):
        return 2 * int(finfo(dtype).bits)
    raise ValueError(f"unexpected input: {dtype=}")


# ml_dtypes' iinfo also knows int1/int2/int4 and their unsigned twins.
_ml_iinfo: Any = ml_dtypes.iinfo


def iinfo(int_type: DTypeLike) -> np.iinfo[Any]:
    """Machine limits of an integer dtype (the narrow ones too)."""
    dt = _to_np_dtype(int_type)
    if dt in _NARROW_INTS:
        result: np.iinfo[Any] = _ml_iinfo(dt)
        return result
    return np.iinfo(dt)
