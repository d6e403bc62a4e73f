"""``jax.extend.random``: PRNG implementations and the threefry hash, as minijax has them.

minijax runs one PRNG implementation, threefry2x32 (JAX's default). The rbg
implementations exist as descriptions (their names and key shapes) so code
can name them; seeding with them raises NotImplementedError, as
``jax.random.key(..., impl='rbg')`` does. ``define_prng_impl`` (a PRNG of
one's own) is not implemented.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax import numpy as jnp
from minijax.extend._unsupported import unsupported
from minijax.primitives.random import random_seed as _random_seed_bind, threefry2x32_p
from minijax.prng import PRNGImpl, prngs, threefry_prng_impl

__all__ = [
    "define_prng_impl", "random_seed", "rbg_prng_impl", "seed_with_impl", "threefry2x32_p", "threefry_2x32",
    "threefry_prng_impl", "unsafe_rbg_prng_impl",
]  # fmt: skip

rbg_prng_impl = PRNGImpl(name="rbg", tag="rbg", key_shape=(4,))
unsafe_rbg_prng_impl = PRNGImpl(name="unsafe_rbg", tag="urbg", key_shape=(4,))

define_prng_impl = unsupported(
    "extend.random", "define_prng_impl", "minijax's PRNG implementations are built into its random primitives"
)


def random_seed(seeds: Any, impl: PRNGImpl) -> Any:
    """Keys of implementation ``impl`` seeded by ``seeds`` (one key per seed)."""
    if prngs.get(impl.name) is not impl:
        raise NotImplementedError(
            f"PRNG implementation {impl.name!r} is not implemented by minijax; use threefry_prng_impl"
        )
    seeds = jnp.asarray(np.int64(seeds)) if isinstance(seeds, int) else jnp.asarray(seeds)
    return _random_seed_bind(seeds, impl)


def seed_with_impl(impl: PRNGImpl, seed: Any) -> Any:
    """One key of implementation ``impl`` from the scalar ``seed``."""
    return random_seed(seed, impl)


def threefry_2x32(keypair: Any, count: Any) -> Any:
    """The Threefry-2x32 hash of the uint32 array ``count`` under the key ``keypair`` (two uint32
    scalars): an array of ``count``'s shape. The flattened counts, padded with a zero to an even
    length, are hashed as two halves (the first half as each pair's first word)."""
    key1, key2 = keypair
    dtypes = [jnp.asarray(x).dtype for x in (key1, key2, count)]
    if any(d != np.uint32 for d in dtypes):
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {dtypes}")
    count = jnp.asarray(count)
    flat = count.ravel()
    n = flat.shape[0]
    padded = jnp.concatenate([flat, jnp.zeros((n % 2,), np.uint32)])
    half = padded.shape[0] // 2
    hi, lo = threefry2x32_p.bind(key1, key2, padded[:half], padded[half:])
    return jnp.concatenate([hi, lo])[:n].reshape(count.shape)
