# ruff: noqa
# mypy: ignore-errors
# Seed: quickstart.ko.md, lines 34-36 (imports), 53 (`key`), 225-230, 240-244,
# 255-260 and 271-276.
# Changes: each `%timeit` becomes a plain call, whose result is kept; the
# last lines are an added check (the seed's output is timings): the three
# batched products agree, and their shape.
import minijax.numpy as jnp
from minijax import grad, jit, vmap
from minijax import random

key = random.PRNGKey(0)

mat = random.normal(key, (150, 100))
batched_x = random.normal(key, (10, 100))

def apply_matrix(v):
  return jnp.dot(mat, v)

def naively_batched_apply_matrix(v_batched):
  return jnp.stack([apply_matrix(v) for v in v_batched])

print('Naively batched')
naive = naively_batched_apply_matrix(batched_x).block_until_ready()

@jit
def batched_apply_matrix(v_batched):
  return jnp.dot(v_batched, mat.T)

print('Manually batched')
manual = batched_apply_matrix(batched_x).block_until_ready()

@jit
def vmap_batched_apply_matrix(v_batched):
  return vmap(apply_matrix)(v_batched)

print('Auto-vectorized with vmap')
auto = vmap_batched_apply_matrix(batched_x).block_until_ready()

# check
print(naive.shape, manual.shape, auto.shape)
print(bool(jnp.allclose(naive, manual, atol=1e-4, rtol=1e-4)), bool(jnp.allclose(naive, auto, atol=1e-4, rtol=1e-4)))
