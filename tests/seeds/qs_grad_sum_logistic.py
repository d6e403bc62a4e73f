# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, lines 34-35 (imports) and 162-167.
# Changes: line 36 (`from jax import random`) is left out: nothing here uses
# it (minijax.random comes with a later issue). The seed does not show the
# output: it is JAX's.
import minijax.numpy as jnp
from minijax import grad, jit, vmap


def sum_logistic(x):
  return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

x_small = jnp.arange(3.)
derivative_fn = grad(sum_logistic)
print(derivative_fn(x_small))
