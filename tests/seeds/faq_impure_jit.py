# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 18-26 with the `@jit` line switched on, as the page
# asks (output at lines 39-42): the print runs once, at trace time, and the
# traced value of the global `y` (0) is baked in.
from minijax import jit

y = 0

@jit   # Different behavior with jit
def impure_func(x):
  print("Inside:", y)
  return x + y

for y in range(3):
  print("Result:", impure_func(y))
