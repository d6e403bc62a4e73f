# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, lines 34-36 (imports) and 53-55.
# Changes: none. The seed's shown output is JAX's of its day; this is
# today's JAX's (the same PRNG and the same numbers).
import minijax.numpy as jnp
from minijax import grad, jit, vmap
from minijax import random

key = random.PRNGKey(0)
x = random.normal(key, (10,))
print(x)
