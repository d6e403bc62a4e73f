"""PRNG key types: the ``key<fry>`` dtype, the implementation registry, the key flags.

A PRNG implementation (``PRNGImpl``) names an algorithm and the shape of one
key's data: threefry2x32 keys are two uint32 words. A *typed key array*
(``random.key(0)``) has the extended dtype ``KeyTy(impl)``, printed
``key<fry>``, and the shape of the array of keys (``()`` for one key); a
*raw key* (``random.PRNGKey(0)``) is the uint32 data itself, shape
``(..., 2)``. The random primitives (``minijax.primitives.random``) take and
make typed keys; ``minijax.random`` wraps raw keys on the way in and unwraps
them on the way out, as JAX does.

Physical representation (the one place this is decided): on every backend a
key array of shape ``S`` is a buffer of shape ``S`` with one uint64 element
per key, holding key word 0 in the high 32 bits and word 1 in the low 32 bits.
``KeyTy.dtype`` (uint64) is that physical element type, so NumPy and the XLA
element-type table see a plain uint64 array and every shape operation
(reshape, slicing, gather, select, concatenate, loop carries) works on keys
unchanged. Only the random primitives' implementations look inside a key:
``pack_host``/``unpack_host`` here, and the same two-line packing in
``backends/minijax_numpy/random.py`` and ``backends/minijax_xla/random.py``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from minijax import config as config_module, dtypes
from minijax.core import primitive_named

__all__ = [
    "KeyTy",
    "PRNGImpl",
    "default_prng_impl",
    "is_key_dtype",
    "pack_host",
    "prngs",
    "resolve_prng_impl",
    "threefry_prng_impl",
    "unpack_host",
]


@dataclasses.dataclass(frozen=True)
class PRNGImpl:
    """A PRNG algorithm: its registry ``name``, the ``tag`` key dtypes print, one key's data shape."""

    name: str
    tag: str
    key_shape: tuple[int, ...]

    def __str__(self) -> str:  # jaxprs print ``impl=fry``
        return self.tag


threefry_prng_impl = PRNGImpl(name="threefry2x32", tag="fry", key_shape=(2,))

# The implementations minijax runs, by name.
prngs: dict[str, PRNGImpl] = {threefry_prng_impl.name: threefry_prng_impl}

# JAX's implementations, in the order JAX registers them (its error messages
# list them so); all but threefry2x32 are refused with NotImplementedError.
_JAX_IMPLS = ("philox2x32", "philox4x32", "threefry2x32", "rbg", "unsafe_rbg", "threefry4x32")
_UNSUPPORTED_IMPLS = tuple(n for n in _JAX_IMPLS if n not in prngs)


class KeyTy(dtypes.ExtendedDType):
    """The dtype of typed PRNG key arrays: ``key<fry>`` for threefry2x32."""

    type = dtypes.prng_key
    dtype = np.dtype(np.uint64)  # physical element: both key words packed

    def __init__(self, impl: PRNGImpl) -> None:
        self._impl = impl
        self.name = f"key<{impl.tag}>"

    @property
    def impl(self) -> PRNGImpl:
        return self._impl

    def host_repr_data(self, physical: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        return unpack_host(physical)

    def reduce_array(self, physical: np.ndarray[Any, Any]) -> tuple[Any, ...]:
        return (_keys_from_data, (unpack_host(physical), self._impl.name))

    def __eq__(self, other: object) -> bool:
        return type(other) is KeyTy and other._impl == self._impl

    def __hash__(self) -> int:
        return hash(("KeyTy", self._impl))


for _impl in prngs.values():
    dtypes.register_extended_dtype(KeyTy(_impl))


def _keys_from_data(data: np.ndarray[Any, Any], impl_name: str) -> Any:
    """Keys again from their uint32 data (how a pickled key array is rebuilt).

    ``random_wrap`` is a primitive of minijax/primitives/random.py, which is
    built on this module: it is named, not imported (``core.primitive_named``).
    """
    return primitive_named("random_wrap").bind(data, impl=prngs[impl_name])


def is_key_dtype(dtype: Any) -> bool:
    return isinstance(dtype, KeyTy)


# --- the physical packing, on the host -------------------------------------------


def pack_host(data: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """uint32 key data of shape ``S + (2,)`` -> the physical uint64 array of shape ``S``."""
    words = np.asarray(data, dtype=np.uint32)
    return (words[..., 0].astype(np.uint64) << np.uint64(32)) | words[..., 1].astype(np.uint64)


def unpack_host(physical: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The physical uint64 array of shape ``S`` -> uint32 key data of shape ``S + (2,)``."""
    p = np.asarray(physical, dtype=np.uint64)
    hi = (p >> np.uint64(32)).astype(np.uint32)
    lo = (p & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return np.stack([hi, lo], axis=-1)


# --- flags -----------------------------------------------------------------------------


def _parse_impl_name(name: str, value: object) -> str:
    text = str(value)
    if text not in prngs and text not in _UNSUPPORTED_IMPLS:
        raise ValueError(f"{name}: unknown PRNG implementation {text!r}; expected one of {sorted(prngs)}")
    return text


def _parse_bool(name: str, value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _parse_legacy(name: str, value: object) -> str:
    text = str(value)
    if text not in ("allow", "warn", "error"):
        raise ValueError(f"{name} must be one of 'allow', 'warn', 'error', got {text!r}")
    return text


# The flags JAX reads in jax.random, defined here beside the code that reads them.
default_prng_impl_flag = config_module._define(
    "jax_default_prng_impl", "threefry2x32", _parse_impl_name,
    "The PRNG implementation of new keys. minijax implements 'threefry2x32'; "
    "JAX's other implementations raise NotImplementedError when used.",
)
threefry_partitionable = config_module._define(
    "jax_threefry_partitionable", True, _parse_bool,
    "Threefry bit generation as JAX 0.5+ does it by default (True); the older "
    "scheme (False) is not implemented.",
)
legacy_prng_key = config_module._define(
    "jax_legacy_prng_key", "allow", _parse_legacy,
    "What to do when a raw uint32 key is passed to a jax.random function: "
    "'allow', 'warn' or 'error'.",
)
enable_custom_prng = config_module._define(
    "jax_enable_custom_prng", False, _parse_bool,
    "A raw uint32 key passed to a jax.random function warns (FutureWarning) and "
    "split/fold_in of it return typed key arrays rather than raw keys.",
)
use_high_dynamic_range_gumbel = config_module._define(
    "jax_use_high_dynamic_range_gumbel", False, _parse_bool,
    "Default mode of random.gumbel (and choice/categorical): 'high' when True, else 'low'.",
)


def resolve_prng_impl(spec: Any = None) -> PRNGImpl:
    """The implementation named by ``spec``: None (the default), a name, a PRNGImpl or a KeyTy."""
    if spec is None:
        spec = default_prng_impl_flag.value
    if isinstance(spec, PRNGImpl):
        return spec
    if isinstance(spec, KeyTy):
        return spec.impl
    if isinstance(spec, str):
        if spec in prngs:
            return prngs[spec]
        if spec in _UNSUPPORTED_IMPLS:
            raise NotImplementedError(
                f"PRNG implementation {spec!r} (jax_default_prng_impl / impl=) is not implemented "
                "by minijax; use 'threefry2x32', JAX's default."
            )
        names = ", ".join(f'"{n}"' for n in _JAX_IMPLS)
        raise ValueError(f'unrecognized PRNG implementation "{spec}". Did you mean one of: {names}?')
    raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


def default_prng_impl() -> PRNGImpl:
    """The implementation ``jax_default_prng_impl`` names."""
    return resolve_prng_impl(None)
