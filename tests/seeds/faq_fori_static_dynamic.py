# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 473 and 484: fori_loop is one of the control-flow
# primitives; like `divide`, whether its trip count is a concrete value
# decides what it becomes. With concrete bounds fori_loop is a scan and
# jax.grad works; with a traced bound it is a while_loop, which only
# forward-mode differentiation goes through.
# Changes: the page names fori_loop without code; this example is added.
# The jaxprs show the two forms; the reverse-mode error is caught and printed.
import minijax as jax
from minijax import lax

def power(x, n):
  return lax.fori_loop(0, n, lambda i, c: c * x, 1.)

print(power(2., 3))
print(jax.grad(power)(2., 3))
print(jax.make_jaxpr(power, static_argnums=1)(2., 3))
print(jax.jit(power)(2., 3))
print(jax.make_jaxpr(power)(2., 3))
print(jax.jvp(lambda x: jax.jit(power)(x, 3), (2.,), (1.,)))
try:
  jax.grad(jax.jit(power))(2., 3)
except ValueError as e:
  print(type(e).__name__, e)
