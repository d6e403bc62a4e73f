# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 522-529: donating a list argument donates every
# buffer in it.
# Changes: `List[Array]` is spelled `list` (the page does not import them);
# prints the result and which inputs were donated.
import numpy as np
import minijax as jax

def add_ones(xs: list):
  return [x + 1 for x in xs]

xs = [jax.device_put(np.ones((2, 3))), jax.device_put(np.ones((3, 4)))]
# Execute `add_ones` with donation of all the buffers for `xs`.
# The outputs have the same shape and type as the elements of `xs`,
# so they will share those buffers.
z = jax.jit(add_ones, donate_argnums=0)(xs)
print(z)
print([a.is_deleted() for a in xs])
