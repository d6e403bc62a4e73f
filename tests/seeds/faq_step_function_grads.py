# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 596-611 (outputs in the comments at 608 and 611):
# a step function's gradient is zero everywhere, computed with vmap of grad.
import minijax as jax
import numpy as np
import minijax.numpy as jnp

def f(x):
  return (x > 0).astype(float)

df = jax.vmap(jax.grad(f))

x = jnp.array([-1.0, -0.5, 0.0, 0.5, 1.0])

print(f"f(x)  = {f(x)}")
# f(x)  = [0. 0. 0. 1. 1.]

print(f"df(x) = {df(x)}")
# df(x) = [0. 0. 0. 0. 0.]
