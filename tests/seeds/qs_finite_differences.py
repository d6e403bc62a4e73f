# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, lines 178-184, with `sum_logistic` and `x_small`
# from lines 162-165.
# Changes: the grad lines of the cell at 158-167 are left out (grad is not in
# this slice); the seed does not show the output: it is JAX's.
import minijax.numpy as jnp


def sum_logistic(x):
  return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

x_small = jnp.arange(3.)


def first_finite_differences(f, x):
  eps = 1e-3
  return jnp.array([(f(x + eps * v) - f(x - eps * v)) / (2 * eps)
                   for v in jnp.eye(len(x))])


print(first_finite_differences(sum_logistic, x_small))
