# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 128-149: @jit on a method fails, because `self` is
# not a valid JAX type.
# Changes: the error the page shows as a traceback is caught and printed.
import minijax.numpy as jnp
from minijax import jit

class CustomClass:
  def __init__(self, x: jnp.ndarray, mul: bool):
    self.x = x
    self.mul = mul

  @jit  # <---- How to do this correctly?
  def calc(self, y):
    if self.mul:
      return self.x * y
    return y

c = CustomClass(2, True)
try:
  c.calc(3)  # doctest: +SKIP
except TypeError as e:
  print(f"{type(e).__name__}: {e}")
