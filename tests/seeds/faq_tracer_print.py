# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 435-442: under jit the argument is a tracer, and
# printing it shows its abstract value; the result is 1.
# Changes: prints the result as well. The page shows an old tracer text
# (Traced<ShapedArray(float32[])>); the expected text is today's JAX's.
import minijax as jax
import minijax.numpy as jnp

def func(x):
  print(x)
  return jnp.cos(x)

res = jax.jit(func)(0.)
print(res)
