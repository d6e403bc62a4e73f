# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 107-112 (notes page lines
# 100-105): the usual shape of a grad call, with the parameters in a pytree;
# the returned gradients are a nested dictionary of the same structure.
# Changes: the page's code is a sketch (the body of `loss_fn` is `...`, and
# `params`, `data_batch` are not defined); here they are filled in with the
# smallest example of what line 112 describes: a nested dictionary of arrays
# for a linear model, on the page's `x`, `y` (lines 69 and 94). The output is
# JAX's.
import minijax as jax
import minijax.numpy as jnp

x = jnp.asarray([1.0, 2.0, 3.0, 4.0])
y = jnp.asarray([1.1, 2.1, 3.1, 4.1])


def loss_fn(params, data):
  inputs, targets = data
  prediction = params["linear"]["w"] * inputs + params["linear"]["b"]
  return jnp.sum((prediction - targets)**2)

params = {"linear": {"w": jnp.asarray(1.0), "b": jnp.asarray(0.0)}}
data_batch = (x, y)

grads = jax.grad(loss_fn)(params, data_batch)
print(grads)
print(jax.tree_util.tree_structure(grads) == jax.tree_util.tree_structure(params))
