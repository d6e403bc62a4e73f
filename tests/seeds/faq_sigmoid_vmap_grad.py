# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 631-643 (outputs in the comments at 640 and 643):
# jax.nn.sigmoid as a smooth step function, differentiated with vmap of grad.
import minijax as jax
import numpy as np
import minijax.numpy as jnp

def g(x):
  return jax.nn.sigmoid(x)

dg = jax.vmap(jax.grad(g))

x = jnp.array([-10.0, -1.0, 0.0, 1.0, 10.0])

with np.printoptions(suppress=True, precision=2):
  print(f"g(x)  = {g(x)}")
  # g(x)  = [0.   0.27 0.5  0.73 1.  ]

  print(f"dg(x) = {dg(x)}")
  # dg(x) = [0.   0.2  0.25 0.2  0.  ]
