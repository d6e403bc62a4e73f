# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 212-222 (outputs at 217, 222).
# Changes: notebook displays become print(repr(...)); the page shows the old
# `DeviceArray` name, today's JAX prints `Array`.
import minijax.numpy as jnp

def jax_in_place_modify(x):
  return x.at[0].set(123)

y = jnp.array([1, 2, 3])
print(repr(jax_in_place_modify(y)))

print(repr(y))
