# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 80-87 (outputs at 84 and 87): eagerly exp(100.)
# overflows to inf; under jit XLA cancels log(exp(x)) and returns x.
from minijax import jit
import minijax.numpy as jnp

def f(x):
  return jnp.log(jnp.exp(x))
x = 100.0
print(f(x))

print(jit(f)(x))
