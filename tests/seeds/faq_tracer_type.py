# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 654-663: the type of a traced argument under jit.
# The page shows an older module path; the expected text is today's JAX's.
import minijax as jax
import minijax.numpy as jnp

@jax.jit
def f(x):
  print(type(x))
  return x

f(jnp.arange(5))
