# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 506-510 and 541-552: donations that no output can
# use give a UserWarning.
# Changes: the warnings (on stderr in JAX) are caught and their first line
# printed; the page shows an older wording (f32[2,3]{1,0}).
import warnings

import numpy as np
import minijax as jax

def add(x, y):
  return x + y

x = jax.device_put(np.ones((2, 3)))
y = jax.device_put(np.ones((2, 3)))

with warnings.catch_warnings(record=True) as caught:
  warnings.simplefilter("always")
  # Execute `add` with donation of the buffers for both `x` and `y`.
  # One of those buffers will be used for the result, but the other will
  # not be used.
  z = jax.jit(add, donate_argnums=(0, 1))(x, y)
for w in caught:
  print(f"{w.category.__name__}: {str(w.message).splitlines()[0]}")

x = jax.device_put(np.ones((2, 3)))
with warnings.catch_warnings(record=True) as caught:
  warnings.simplefilter("always")
  y = jax.device_put(np.ones((1, 3)))  # `y` has different shape than the output
  # Execute `add` with donation of the buffer for `y`.
  z = jax.jit(add, donate_argnums=(1,))(x, y)
for w in caught:
  print(f"{w.category.__name__}: {str(w.message).splitlines()[0]}")
print(z)
