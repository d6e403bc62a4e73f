# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 130-133 (the error at line
# 143), with `x`, `y` and `sum_squared_error` from lines 69 and 89-94.
# Changes: the error the page shows as a traceback is caught and its type and
# message printed; the page shows the old `DeviceArray` name.
import minijax as jax
import minijax.numpy as jnp

x = jnp.asarray([1.0, 2.0, 3.0, 4.0])


def sum_squared_error(x, y):
  return jnp.sum((x-y)**2)

y = jnp.asarray([1.1, 2.1, 3.1, 4.1])


def squared_error_with_aux(x, y):
  return sum_squared_error(x, y), x-y

try:
  jax.grad(squared_error_with_aux)(x, y)
except TypeError as e:
  print(f"{type(e).__name__}: {e}")
