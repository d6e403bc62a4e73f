# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 478-479 and 484: jax.grad(divide)(3., 2.) works,
# although `divide` branches on the value of `y` in Python, because grad uses
# concrete tracers.
# Changes: the page states the result without showing it; the call is printed,
# and so is the gradient with respect to `y` and the one on the other branch.
import minijax as jax

def divide(x, y):
  return x / y if y >= 1. else 0.

print(jax.grad(divide)(3., 2.))
print(jax.grad(divide, argnums=1)(3., 2.))
print(jax.grad(divide)(3., 0.5))
