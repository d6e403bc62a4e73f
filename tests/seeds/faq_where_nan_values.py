# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 560-563 and 570-573: the forward values (the page's
# `==> 0.`); the gradients at lines 564 and 574 need grad (not in this slice).
import minijax.numpy as jnp

def my_log(x):
  return jnp.where(x > 0., jnp.log(x), 0.)

print(my_log(0.))  # ==> 0.  # Ok

def safe_for_grad_log(x):
  return jnp.log(jnp.where(x > 0., x, 1.))

print(safe_for_grad_log(0.))  # ==> 0.  # Ok
