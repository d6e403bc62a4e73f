# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 128-129, 158 and 189-212 (outputs at 205 and 212):
# strategy 2, `self` marked static. The page's point: after mutating the
# object, the cached trace is reused and the result is stale (6, not 3).
import minijax.numpy as jnp
from minijax import jit

from functools import partial

class CustomClass:
  def __init__(self, x: jnp.ndarray, mul: bool):
    self.x = x
    self.mul = mul

  # WARNING: this example is broken, as we'll see below. Don't copy & paste!
  @partial(jit, static_argnums=0)
  def calc(self, y):
    if self.mul:
      return self.x * y
    return y

c = CustomClass(2, True)
print(c.calc(3))

c.mul = False
print(c.calc(3))  # Should print 3
