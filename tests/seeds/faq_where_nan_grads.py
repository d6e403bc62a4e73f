# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 560-574 (the page's `==> ...` comments): the
# gradient through an unsafe `jnp.where` branch is NaN, the safe pattern's is 0.
# Changes: the page's `expr ==> value` lines become prints.
import minijax as jax
import minijax.numpy as jnp

def my_log(x):
  return jnp.where(x > 0., jnp.log(x), 0.)

print(my_log(0.))  # ==> 0.  # Ok
print(jax.grad(my_log)(0.))  # ==> NaN

def safe_for_grad_log(x):
  return jnp.log(jnp.where(x > 0., x, 1.))

print(safe_for_grad_log(0.))  # ==> 0.  # Ok
print(jax.grad(safe_for_grad_log)(0.))  # ==> 0.  # Ok
