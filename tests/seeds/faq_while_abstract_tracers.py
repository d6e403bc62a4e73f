# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, line 473: the control-flow primitives (lax.while_loop,
# lax.fori_loop, ...) introduce abstract tracers for the functions they are
# given, whether or not a JAX transformation is in progress.
# Changes: the page states this without code; the calls are added. The loop
# body prints its argument (a tracer, with no jit around); a Python `if` on
# the carry inside cond_fun raises TracerBoolConversionError (its message
# names the file and line, so only the type and first line print); the
# structured comparison works; a traced trip count makes fori_loop a
# while_loop, whose body sees an abstract index too.
import minijax as jax
import minijax.numpy as jnp
from minijax import lax

def body(x):
  print(x)
  return x * 2.

print(lax.while_loop(lambda x: x < 10., body, 1.))

def python_cond(x):
  if x < 10.:
    return True
  return False

try:
  lax.while_loop(python_cond, lambda x: x * 2., 1.)
except jax.errors.TracerBoolConversionError as e:
  print(type(e).__name__, str(e).splitlines()[0])

print(lax.while_loop(lambda x: x < 10., lambda x: x * 2., 1.))

def fori_body(i, x):
  print(i)
  return x + i

print(lax.fori_loop(0, 4, fori_body, 0))
print(jax.jit(lambda n: lax.fori_loop(0, n, fori_body, 0))(4))
