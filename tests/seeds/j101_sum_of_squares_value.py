# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 60-71 (output at line 74);
# notes page lines 51-65.
# Changes: the grad lines (67, 73) are left out: grad is not in this slice.
import minijax as jax
import minijax.numpy as jnp


def sum_of_squares(x):
  return jnp.sum(x**2)

x = jnp.asarray([1.0, 2.0, 3.0, 4.0])

print(sum_of_squares(x))
