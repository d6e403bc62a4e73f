# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 44-46; notes page lines 39-40.
# Changes: `%timeit` becomes a plain call, whose result is kept; the last
# line is an added check (the seed's output is a timing). The int32 sum of
# squares wraps around.
import minijax as jax
import minijax.numpy as jnp

long_vector = jnp.arange(int(1e7))

out = jnp.dot(long_vector, long_vector).block_until_ready()

print(repr(out))
