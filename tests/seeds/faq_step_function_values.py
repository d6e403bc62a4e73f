# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 596-608 (output in the comment at 608).
# Changes: `df = jax.vmap(jax.grad(f))` and its print (603, 610) are left
# out: vmap and grad are not in this slice.
import minijax as jax
import numpy as np
import minijax.numpy as jnp

def f(x):
  return (x > 0).astype(float)

x = jnp.array([-1.0, -0.5, 0.0, 0.5, 1.0])

print(f"f(x)  = {f(x)}")
# f(x)  = [0. 0. 0. 1. 1.]
