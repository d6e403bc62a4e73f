# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 89-94 and 130-131: the value
# the page shows inside the error of line 133 ("Output was (...)").
# Changes: calls the function directly instead of through grad (not in this
# slice) and prints its output. The page shows the old `DeviceArray` name.
import minijax as jax
import minijax.numpy as jnp

x = jnp.asarray([1.0, 2.0, 3.0, 4.0])


def sum_squared_error(x, y):
  return jnp.sum((x-y)**2)

y = jnp.asarray([1.1, 2.1, 3.1, 4.1])


def squared_error_with_aux(x, y):
  return sum_squared_error(x, y), x-y

print(squared_error_with_aux(x, y))
