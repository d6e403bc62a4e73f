"""A Flax nnx MLP (and a small CNN) trained 20 steps with Optax through nnx.Optimizer; prints the losses as JSON."""

import json

import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.linear1 = nnx.Linear(8, 16, rngs=rngs)
        self.linear2 = nnx.Linear(16, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear2(nnx.gelu(self.linear1(x)))


class CNN(nnx.Module):
    def __init__(self, rngs):
        self.conv = nnx.Conv(1, 4, kernel_size=(3, 3), rngs=rngs)
        self.linear = nnx.Linear(4 * 4 * 4, 3, rngs=rngs)

    def __call__(self, x):
        x = nnx.relu(self.conv(x))
        x = nnx.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        return self.linear(x.reshape((x.shape[0], -1)))


def train(model, loss_of_output, x, y):
    optimizer = nnx.Optimizer(model, optax.sgd(0.05, momentum=0.9), wrt=nnx.Param)

    @nnx.jit
    def step(model, optimizer):
        def loss_fn(model):
            return loss_of_output(model(x), y)

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    return [float(step(model, optimizer)) for _ in range(20)]


rng = np.random.default_rng(0)
x = rng.normal(size=(32, 8)).astype(np.float32)
y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)
mlp_losses = train(MLP(nnx.Rngs(0)), lambda out, y: jnp.mean((out - y) ** 2), x, y)

images = rng.normal(size=(8, 8, 8, 1)).astype(np.float32)
labels = rng.integers(0, 3, size=8)
cnn_losses = train(CNN(nnx.Rngs(1)),
                   lambda out, y: optax.softmax_cross_entropy_with_integer_labels(out, y).mean(), images, labels)
print(json.dumps({"losses": mlp_losses, "cnn_losses": cnn_losses}))
