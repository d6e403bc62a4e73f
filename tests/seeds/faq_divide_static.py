# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 478-482: Python control flow on an argument needs
# that argument static under jit.
# Changes: the page shows no calls; the calls are added. Without
# static_argnums the branch on a tracer raises TracerBoolConversionError (its
# message names the file and line, so only the type and first line print).
import minijax as jax

def divide(x, y):
  return x / y if y >= 1. else 0.

print(jax.jit(divide, static_argnums=1)(3., 2.))
print(jax.jit(divide, static_argnums=1)(3., 0.5))

try:
  jax.jit(divide)(3., 2.)
except jax.errors.TracerBoolConversionError as e:
  print(type(e).__name__, str(e).splitlines()[0])
