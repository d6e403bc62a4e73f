"""NumPy implementations: threefry2x32 and the key primitives (``minijax/primitives/random.py``).

This is the reference for the bits: the XLA lowering (``minijax_xla.random``)
computes the same uint32 words with the same steps. Keys arrive and leave in
their physical form (``minijax.prng``): one uint64 per key, word 0 in the
high half. uint32 arithmetic wraps modulo 2**32 as XLA's does (NumPy wraps
array arithmetic silently).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax.backend import get_backend
from minijax.core import ShapedArray, shape_size
from minijax.prng import KeyTy, PRNGImpl, pack_host, threefry_prng_impl, unpack_host
from minijax.random import random_gamma_jaxpr
from minijax_numpy.table import impl

Array = np.ndarray[Any, Any]

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)

# Rotation distances of the 20 rounds: four rounds per group, the groups
# alternating between these two lists (Salmon et al., "Parallel random numbers:
# as easy as 1, 2, 3", the Threefry-2x32 parameters).
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
# The third word of the key schedule: key1 ^ key2 ^ this constant.
_SCHEDULE_PARITY = 0x1BD11BDA


def _rotate_left(x: Array, r: int) -> Array:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32_words(k1: Array, k2: Array, x1: Array, x2: Array) -> tuple[Array, Array]:
    """The Threefry-2x32 hash of the counter words (x1, x2) under the key (k1, k2), all broadcast together."""
    shape = np.broadcast_shapes(np.shape(k1), np.shape(k2), np.shape(x1), np.shape(x2))
    # 1-d while computing: NumPy warns about (and does not wrap silently) overflow of 0-d scalars.
    # A single key stays one word (broadcast by each operation) rather than a copy per element.
    k1, k2 = (np.asarray(k, _U32).reshape(1) if np.size(k) == 1 else _flat(k, shape) for k in (k1, k2))
    x1, x2 = _flat(x1, shape), _flat(x2, shape)
    if x1.size <= _BLOCK:
        y1, y2 = _threefry_rounds(k1, k2, x1, x2)
    else:  # block by block, so the rounds' temporaries stay in cache (the same words result)
        y1, y2 = np.empty_like(x1), np.empty_like(x2)
        for i in range(0, x1.size, _BLOCK):
            block = slice(i, i + _BLOCK)
            b1, b2 = (k if k.size == 1 else k[block] for k in (k1, k2))
            y1[block], y2[block] = _threefry_rounds(b1, b2, x1[block], x2[block])
    return y1.reshape(shape), y2.reshape(shape)


def _flat(a: Array, shape: tuple[int, ...]) -> Array:
    return np.broadcast_to(np.asarray(a, _U32), shape).reshape(-1)


# Words per block in threefry2x32_words: twenty rounds over a large operand at once
# would send every round's temporaries out to memory and back.
_BLOCK = 1 << 15


def _threefry_rounds(k1: Array, k2: Array, x1: Array, x2: Array) -> tuple[Array, Array]:
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(_SCHEDULE_PARITY))
    x1 = x1 + ks[0]
    x2 = x2 + ks[1]
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x1 = x1 + x2
            x2 = _rotate_left(x2, r) ^ x1
        # Key injection after each group of four rounds: the schedule rotates by one.
        x1 = x1 + ks[(group + 1) % 3]
        x2 = x2 + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x1, x2


@impl("threefry2x32")
def _threefry2x32(k1: Array, k2: Array, x1: Array, x2: Array) -> list[Array]:
    return list(threefry2x32_words(k1, k2, x1, x2))


# --- keys ---------------------------------------------------------------------------------


def _key_words(keys: Array) -> tuple[Array, Array]:
    data = unpack_host(keys)
    return data[..., 0], data[..., 1]


def _pack(hi: Array, lo: Array) -> Array:
    return np.asarray(pack_host(np.stack([hi, lo], axis=-1)))


def _counters(keys_shape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[Array, Array]:
    """The 64-bit index of each element of ``shape`` in row-major order, as (high, low) uint32 words,
    with leading size-1 axes for the key axes."""
    size = shape_size(shape)
    full = (1,) * len(keys_shape) + shape
    if size <= 1 << 32:  # every index fits the low word (the usual case: no 64-bit temporaries)
        return np.zeros(full, _U32), np.arange(size, dtype=_U32).reshape(full)
    index = np.arange(size, dtype=np.uint64).reshape(full)
    return (index >> np.uint64(32)).astype(_U32), (index & np.uint64(0xFFFFFFFF)).astype(_U32)


def _hash_counters(keys: Array, shape: tuple[int, ...]) -> tuple[Array, Array]:
    """Each key (shape S) hashed with the counters of ``shape``: two uint32 arrays of shape S + shape."""
    k1, k2 = _key_words(keys)
    expand = (...,) + (None,) * len(shape)
    hi, lo = _counters(keys.shape, shape)
    return threefry2x32_words(k1[expand], k2[expand], hi, lo)


@impl("random_seed")
def _random_seed(seeds: Array, *, impl: PRNGImpl) -> Array:
    # A 64-bit seed's bits are the key's (word 0 = bits 32..63, word 1 = bits
    # 0..31); a narrower seed is sign- or zero-extended and keeps word 0 zero.
    s = np.asarray(seeds)
    wide = s.astype(np.int64).astype(_U64) if s.dtype.kind == "i" else s.astype(_U64)
    return wide if s.dtype.itemsize == 8 else wide & np.uint64(0xFFFFFFFF)


@impl("random_bits")
def _random_bits(keys: Array, *, bit_width: int, shape: tuple[int, ...]) -> Array:
    bits1, bits2 = _hash_counters(keys, tuple(shape))
    if bit_width == 64:
        return (bits1.astype(_U64) << np.uint64(32)) | bits2.astype(_U64)
    out = bits1 ^ bits2
    return out if bit_width == 32 else out.astype(np.dtype(f"uint{bit_width}"))


@impl("random_split")
def _random_split(keys: Array, *, shape: tuple[int, ...]) -> Array:
    return _pack(*_hash_counters(keys, tuple(shape)))


@impl("random_fold_in")
def _random_fold_in(keys: Array, msgs: Array) -> Array:
    # The data is hashed as the 64-bit counter (0, msg).
    k1, k2 = _key_words(keys)
    return _pack(*threefry2x32_words(k1, k2, np.zeros((), _U32), msgs))


@impl("random_wrap")
def _random_wrap(data: Array, *, impl: PRNGImpl) -> Array:
    return np.asarray(pack_host(data))


@impl("random_unwrap")
def _random_unwrap(keys: Array) -> Array:
    return np.asarray(unpack_host(keys))


@impl("random_clone")
def _random_clone(keys: Array) -> Array:
    return keys


@impl("random_gamma")
def _random_gamma(key: Array, a: Array, *, log_space: bool) -> Array:
    # The program of the primitive's meaning (minijax.random), run by this backend.
    key_aval = ShapedArray(key.shape, KeyTy(threefry_prng_impl))  # physical uint64 keys are threefry keys
    closed = random_gamma_jaxpr(key_aval, ShapedArray(a.shape, a.dtype), log_space)
    (out,) = get_backend("numpy").compile_jaxpr(closed.jaxpr, closed.consts)(key, a)  # type: ignore[attr-defined]
    return np.asarray(out)
