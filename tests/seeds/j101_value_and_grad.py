# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, line 118 (output at lines 119-120),
# with `x`, `y` and `sum_squared_error` from lines 69 and 89-94.
# Changes: the notebook display becomes print(repr(...)) (one line, where the
# notebook wraps it); the page shows the old `DeviceArray` name. Line 124 is
# a statement about any f, not code to run, so it is left out.
import minijax as jax
import minijax.numpy as jnp

x = jnp.asarray([1.0, 2.0, 3.0, 4.0])


def sum_squared_error(x, y):
  return jnp.sum((x-y)**2)

y = jnp.asarray([1.1, 2.1, 3.1, 4.1])

print(repr(jax.value_and_grad(sum_squared_error)(x, y)))
