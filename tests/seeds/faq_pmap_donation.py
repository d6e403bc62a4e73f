# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 497 and 518: buffer donation through pmap. The page
# shows only the call; update_fn, params and state are made up here (one
# device: a leading axis of size 1), and the results are printed.
import numpy as np
import minijax as jax

def update_fn(params, state):
  return params - 0.1 * state, state * 0.5

params = jax.device_put(np.ones((1, 3), np.float32))
state = jax.device_put(np.full((1, 3), 2.0, np.float32))
params, state = jax.pmap(update_fn, donate_argnums=(0, 1))(params, state)
print(params)
print(state)

# Called with keyword arguments, nothing is donated (the page's warning).
old_params = params
params, state = jax.pmap(update_fn, donate_argnums=(0, 1))(params=params, state=state)
print(params)
print(old_params.is_deleted())
