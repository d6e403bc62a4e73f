# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 167-183 (outputs at 177 and
# 210-ish: a TypeError).
# Changes: the notebook display of `x` becomes print(repr(x)); the error the
# page shows as a traceback is caught and printed. Today's JAX words the
# message differently from the page's.
import numpy as np

import minijax.numpy as jnp

x = np.array([1, 2, 3])

def in_place_modify(x):
  x[0] = 123
  return None

in_place_modify(x)
print(repr(x))

try:
  in_place_modify(jnp.array(x))  # Raises error when we cast input to jnp.ndarray
except TypeError as e:
  print(f"{type(e).__name__}: {e}")
