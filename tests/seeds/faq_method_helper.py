# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 128-129 and 158-178 (output at 178): strategy 1,
# a jitted helper with a static argument.
import minijax.numpy as jnp
from minijax import jit

from functools import partial

class CustomClass:
  def __init__(self, x: jnp.ndarray, mul: bool):
    self.x = x
    self.mul = mul

  def calc(self, y):
    return _calc(self.mul, self.x, y)

@partial(jit, static_argnums=0)
def _calc(mul, x, y):
  if mul:
    return x * y
  return y

c = CustomClass(2, True)
print(c.calc(3))
