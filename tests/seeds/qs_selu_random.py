# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, lines 34-36 (imports), 53 (`key`), 133-137 and 148-149.
# Changes: each `%timeit` becomes a plain call, whose result is kept; the
# last lines are an added check (the seed's output is timings): the jitted
# selu computes what the op-by-op one does, and a few of its values.
import minijax.numpy as jnp
from minijax import grad, jit, vmap
from minijax import random

key = random.PRNGKey(0)

def selu(x, alpha=1.67, lmbda=1.05):
  return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

x = random.normal(key, (1000000,))
y = selu(x).block_until_ready()

selu_jit = jit(selu)
y_jit = selu_jit(x).block_until_ready()

# check
print(x.shape, x.dtype, y_jit.shape, y_jit.dtype)
print(bool(jnp.allclose(y, y_jit, rtol=1e-6, atol=1e-6)))
print(bool((y_jit > -1.67 * 1.05).all()), bool(((y_jit > 0) == (x > 0)).all()))
