# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, lines 81-83 (`size` comes from line 66).
# Changes: `%timeit` becomes a plain call, whose result is kept; the last
# line is an added check (the seed prints nothing here: its output is a
# timing).
import numpy as np

import minijax as jax
import minijax.numpy as jnp

size = 3000

x = np.random.normal(size=(size, size)).astype(np.float32)
out = jnp.dot(x, x.T).block_until_ready()

# check: the product is a device array of the right shape and dtype
print(isinstance(out, jax.Array), out.shape, out.dtype)
