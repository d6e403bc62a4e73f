# ruff: noqa
# mypy: ignore-errors
# Seed: jax-101-accelerated-numpy.ko.md, lines 240-245 (the data) and 255-286
# (output at line 287): the first training loop, a linear regression trained
# by gradient descent.
# Changes: the plotting lines (241 `import matplotlib.pyplot as plt`, 247
# `plt.scatter`, 282-283 `plt.scatter`/`plt.plot`) are left out: they only
# draw, and matplotlib is not part of minijax. NumPy's generator is seeded
# (added line): the page draws unseeded data, so its last printed digits change
# from run to run (w and b print as 3.00 and -1.00 in about one run in seven);
# seed 8 is the first seed whose data gives the page's output.
import numpy as np

import minijax as jax
import minijax.numpy as jnp

np.random.seed(8)

xs = np.random.normal(size=(100,))
noise = np.random.normal(scale=0.1, size=(100,))
ys = xs * 3 - 1 + noise


def model(theta, x):
  """Computes wx + b on a batch of input x."""
  w, b = theta
  return w * x + b


def loss_fn(theta, x, y):
  prediction = model(theta, x)
  return jnp.mean((prediction-y)**2)


def update(theta, x, y, lr=0.1):
  return theta - lr * jax.grad(loss_fn)(theta, x, y)


theta = jnp.array([1., 1.])

for _ in range(1000):
  theta = update(theta, xs, ys)

w, b = theta
print(f"w: {w:<.2f}, b: {b:<.2f}")
