# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 21-25 (output at line 29);
# also jax-as-accelerated-numpy-notes.ko.md, lines 9-19.
import minijax as jax
import minijax.numpy as jnp

x = jnp.arange(10)
print(x)
