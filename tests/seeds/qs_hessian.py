# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, lines 205-207 (hessian from jacfwd and jacrev), with
# the imports of lines 34-35 and `sum_logistic`, `x_small` from lines 162-165.
# Changes: line 36 (`from jax import random`) is left out: nothing here uses
# it. The page only defines `hessian`; the calls at the end are added (on the
# page's own `sum_logistic`), and their output is JAX's.
import minijax.numpy as jnp
from minijax import grad, jit, vmap


def sum_logistic(x):
  return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

x_small = jnp.arange(3.)

from minijax import jacfwd, jacrev
def hessian(fun):
  return jit(jacfwd(jacrev(fun)))

h = hessian(sum_logistic)(x_small)
print(h.shape, h.dtype)
print(h)
