# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, lines 94-98 (`size` from line 66, `np` from line 81).
# Changes: `%timeit` becomes a plain call, whose result is kept; the last
# lines are an added check (the seed prints nothing here: its output is a
# timing).
import numpy as np

import minijax as jax
import minijax.numpy as jnp

size = 3000

from minijax import device_put

x = np.random.normal(size=(size, size)).astype(np.float32)
x = device_put(x)
out = jnp.dot(x, x.T).block_until_ready()

# check: device_put gave a device array, and the product is one too
print(isinstance(x, jax.Array), x.shape, x.dtype)
print(isinstance(out, jax.Array), out.shape, out.dtype)
