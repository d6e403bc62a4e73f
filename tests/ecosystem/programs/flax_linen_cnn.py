"""A Flax linen CNN (Conv, pooling, BatchNorm, Dropout) trained 20 steps with Optax; prints the losses as JSON.

Plain JAX code: run with real JAX, or on minijax with ``minijax run``.
"""

import json

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        # (No bias before BatchNorm: its gradient is zero up to rounding, which Adam would amplify.)
        x = nn.Conv(features=4, kernel_size=(3, 3), use_bias=False)(x)
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = nn.Conv(features=8, kernel_size=(3, 3), padding="VALID")(x)
        x = nn.relu(x)
        x = nn.max_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dropout(rate=0.25, deterministic=not train)(x)
        return nn.Dense(3)(x)


rng = np.random.default_rng(0)
images = rng.normal(size=(16, 12, 12, 1)).astype(np.float32)
labels = rng.integers(0, 3, size=16)

model = CNN()
variables = model.init({"params": jax.random.PRNGKey(0), "dropout": jax.random.PRNGKey(1)}, images, train=False)
params, batch_stats = variables["params"], variables["batch_stats"]
tx = optax.adam(1e-2)
opt_state = tx.init(params)


@jax.jit
def step(params, batch_stats, opt_state, key):
    def loss_fn(params):
        logits, updates = model.apply({"params": params, "batch_stats": batch_stats}, images, train=True,
                                      rngs={"dropout": key}, mutable=["batch_stats"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, updates["batch_stats"]

    (loss, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), batch_stats, opt_state, loss


losses = []
key = jax.random.PRNGKey(2)
for _ in range(20):
    key, sub = jax.random.split(key)
    params, batch_stats, opt_state, loss = step(params, batch_stats, opt_state, sub)
    losses.append(float(loss))
eval_logits = model.apply({"params": params, "batch_stats": batch_stats}, images, train=False)
print(json.dumps({"losses": losses, "eval_logit_sum": float(jnp.sum(eval_logits))}))
