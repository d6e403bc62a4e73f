# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 475-484: `divide` branches on the value of `y`, so
# under jit it needs `y` static; jax.grad(divide)(3., 2.) works because grad
# uses concrete tracers.
# Changes: the branch is written with lax.cond (the structured control flow
# the page points to), which works under jit without static_argnums and under
# grad; the calls are added.
import minijax as jax
from minijax import lax

def divide(x, y):
  return lax.cond(y >= 1., lambda x, y: x / y, lambda x, y: 0. * x, x, y)

print(jax.jit(divide)(3., 2.))
print(jax.jit(divide)(3., 0.5))
print(jax.grad(divide)(3., 2.))
print(jax.grad(divide, argnums=1)(3., 2.))
print(jax.grad(divide)(3., 0.5))
print(jax.make_jaxpr(divide)(3., 2.))
