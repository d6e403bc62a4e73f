# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, line 473: the control-flow primitives (lax.cond, ...)
# introduce abstract tracers for the functions they are given, whether or not
# a JAX transformation is in progress.
# Changes: the page states this without code; the calls are added. A branch
# prints its argument (a tracer, with no jit around), and a Python `if` on the
# argument inside a branch raises TracerBoolConversionError (its message names
# the file and line, so only the type and first line print).
import minijax as jax
import minijax.numpy as jnp
from minijax import lax

def show(x):
  print(x)
  return x + 1.

print(lax.cond(True, show, lambda x: x, 1.))

def python_branch(x):
  if x > 0.:
    return x
  return -x

try:
  lax.cond(True, python_branch, lambda x: x, 2.)
except jax.errors.TracerBoolConversionError as e:
  print(type(e).__name__, str(e).splitlines()[0])

print(lax.cond(True, lambda x: jnp.abs(x), lambda x: x, -2.))
