# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, line 101 (output at lines 102-103),
# with `x`, `y` and `sum_squared_error` from lines 69 and 89-94; notes page
# lines 91-95.
# Changes: the notebook display becomes print(repr(...)) (one line, where the
# notebook wraps it). The 101 page shows the old `DeviceArray` name; today's
# JAX (and the notes page) print `Array`.
import minijax as jax
import minijax.numpy as jnp

x = jnp.asarray([1.0, 2.0, 3.0, 4.0])


def sum_squared_error(x, y):
  return jnp.sum((x-y)**2)

y = jnp.asarray([1.1, 2.1, 3.1, 4.1])

print(repr(jax.grad(sum_squared_error, argnums=(0, 1))(x, y)))  # Find gradient wrt both x & y
