# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 371-384.
# Changes: `%timeit` / `%time` become plain calls (the last one's result is
# kept); the last lines are an added check (the page's output is timings):
# x - mean is zero up to rounding (the exact rounding is XLA's business, so
# only its size is checked).
import numpy as np
import minijax.numpy as jnp
import minijax as jax

def f(x):  # function we're benchmarking (works in both NumPy & JAX)
  return x.T @ (x - x.mean(axis=0))

x_np = np.ones((1000, 1000), dtype=np.float32)  # same as JAX default dtype
f(x_np)  # measure NumPy runtime

x_jax = jax.device_put(x_np)  # measure JAX device transfer time
f_jit = jax.jit(f)
f_jit(x_jax).block_until_ready()  # measure JAX compilation time
out = f_jit(x_jax).block_until_ready()  # measure JAX runtime

print(isinstance(out, jax.Array), out.shape, out.dtype)
print(bool(np.abs(np.asarray(out)).max() < 1e-3))
