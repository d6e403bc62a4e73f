"""Samplers for the random primitives (see ``minijax.testing.samplers``).

Sampled here: the primitives whose operands are ordinary arrays --
``threefry2x32`` (uint32 words, broadcasting shapes), ``random_seed``
(integer seeds of every integer dtype, negative ones included) and
``random_wrap`` (uint32 key data). None is differentiable and none is linear.

The primitives whose operand is a key array (``random_bits``,
``random_split``, ``random_fold_in``, ``random_unwrap``, ``random_clone``,
``random_gamma``) are not: the law suites build batches by stacking NumPy
operands, and a key array has no NumPy form that round-trips (its uint32 key
data has an extra axis). ``tests/test_random.py`` checks their vmap and jit
laws with key arrays built by minijax itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax.prng import threefry_prng_impl
from minijax.testing.cases import INT, Case, Draw, NDArray, Operand, Sampler, broadcast_operand_shape, case, shape

_U32 = np.dtype(np.uint32)


def _words(rng: np.random.Generator, s: tuple[int, ...], dtype: np.dtype[Any]) -> NDArray:
    """Uniform uint32 words (every bit pattern)."""
    return rng.integers(0, 2**32, size=s, dtype=np.uint64).astype(np.uint32)


def _seeds(rng: np.random.Generator, s: tuple[int, ...], dtype: np.dtype[Any]) -> NDArray:
    """Seeds over the dtype's whole range: negative ones, and 64-bit ones with high bits set."""
    info = np.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max), size=s, endpoint=True, dtype=np.int64 if info.min < 0 else np.uint64).astype(dtype)


def _threefry2x32(draw: Draw, dtype: np.dtype[Any]) -> Case:
    out = shape(draw)
    operands = [Operand(broadcast_operand_shape(draw, out), _U32, _words) for _ in range(4)]
    return case("threefry2x32", {}, operands)


def _random_seed(draw: Draw, dtype: np.dtype[Any]) -> Case:
    return case("random_seed", {"impl": threefry_prng_impl}, [Operand(shape(draw), np.dtype(dtype), _seeds)])


def _random_wrap(draw: Draw, dtype: np.dtype[Any]) -> Case:
    data = (*shape(draw), *threefry_prng_impl.key_shape)
    return case("random_wrap", {"impl": threefry_prng_impl}, [Operand(data, _U32, _words)])


SAMPLERS: dict[str, Sampler] = {
    # The operands are uint32 whatever dtype is drawn: the kind only makes the laws pick it.
    "threefry2x32": Sampler("threefry2x32", _threefry2x32, ("uint",), differentiable=False),
    "random_seed": Sampler("random_seed", _random_seed, INT, differentiable=False),
    "random_wrap": Sampler("random_wrap", _random_wrap, ("uint",), differentiable=False),
}

__all__ = ["SAMPLERS"]

