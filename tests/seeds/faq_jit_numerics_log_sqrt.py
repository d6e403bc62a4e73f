# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 59-68 (outputs at 65 and 68): XLA rewrites
# log(sqrt(x)) as 0.5 * log(x) under jit, which changes the last digit.
from minijax import jit
import minijax.numpy as jnp
def f(x):
  return jnp.log(jnp.sqrt(x))
x = jnp.pi
print(f(x))

print(jit(f)(x))
