# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, line 195 (grad and jit composed to any depth), with
# the imports of lines 34-35 and `sum_logistic` from lines 162-163.
# Changes: line 36 (`from jax import random`) is left out: nothing here uses
# it. The seed does not show the output: it is JAX's.
import minijax.numpy as jnp
from minijax import grad, jit, vmap


def sum_logistic(x):
  return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

print(grad(jit(grad(jit(grad(sum_logistic)))))(1.0))
