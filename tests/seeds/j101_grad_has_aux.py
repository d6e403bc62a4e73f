# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, line 149 (output at lines 150-151),
# with `x`, `y`, `sum_squared_error` and `squared_error_with_aux` from lines
# 69, 89-94 and 130-131.
# Changes: the notebook display becomes print(repr(...)) (one line, where the
# notebook wraps it); the page shows the old `DeviceArray` name.
import minijax as jax
import minijax.numpy as jnp

x = jnp.asarray([1.0, 2.0, 3.0, 4.0])


def sum_squared_error(x, y):
  return jnp.sum((x-y)**2)

y = jnp.asarray([1.1, 2.1, 3.1, 4.1])


def squared_error_with_aux(x, y):
  return sum_squared_error(x, y), x-y

print(repr(jax.grad(squared_error_with_aux, has_aux=True)(x, y)))
