# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 24 and 35 (notebook display of
# `x`); jax-as-accelerated-numpy-notes.ko.md, lines 13 and 27-29.
# Changes: the notebook's display of `x` becomes print(repr(x)). The 101 page
# shows the old name `DeviceArray(...)`; today's JAX (and the notes page,
# line 29) show `Array(...)`.
import minijax as jax
import minijax.numpy as jnp

x = jnp.arange(10)
print(repr(x))
