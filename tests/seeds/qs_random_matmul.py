# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, lines 34-36 (imports), 53 (`key`) and 66-68.
# Changes: `%timeit` becomes a plain call, whose result is kept; the last
# lines are an added check (the seed's output is a timing): the shapes and
# dtypes, and the product's symmetry (x x^T is symmetric up to rounding).
import minijax.numpy as jnp
from minijax import grad, jit, vmap
from minijax import random

key = random.PRNGKey(0)

size = 3000
x = random.normal(key, (size, size), dtype=jnp.float32)
out = jnp.dot(x, x.T).block_until_ready()  # GPU에서 실행

# check
print(x.shape, x.dtype, out.shape, out.dtype)
print(bool(jnp.allclose(out, out.T, rtol=1e-5, atol=1e-3)))
