# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 506-513 and 534-537: donating `y`; using `y`
# afterwards is an error.
# Changes: prints `z`; the error the page shows as a comment is caught and
# printed (today's JAX words it differently from the page).
import numpy as np
import minijax as jax

def add(x, y):
  return x + y

x = jax.device_put(np.ones((2, 3)))
y = jax.device_put(np.ones((2, 3)))
# Execute `add` with donation of the buffer for `y`. The result has
# the same shape and type as `y`, so it will share its buffer.
z = jax.jit(add, donate_argnums=(1,))(x, y)
print(z)

try:
  w = y + 1  # Reuses `y` whose buffer was donated above
except RuntimeError as e:
  print(f"{type(e).__name__}: {e}")
