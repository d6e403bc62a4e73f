# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 18-26 (output at lines 30-35), as written: without jit.
y = 0

# @jit   # Different behavior with jit
def impure_func(x):
  print("Inside:", y)
  return x + y

for y in range(3):
  print("Result:", impure_func(y))
