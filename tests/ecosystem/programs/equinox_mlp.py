"""An Equinox MLP trained 20 steps with Optax (filter_jit, filter_value_and_grad, error_if); prints JSON."""

import json

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

model = eqx.nn.MLP(in_size=4, out_size=1, width_size=16, depth=2, key=jax.random.PRNGKey(0))
rng = np.random.default_rng(0)
x = rng.normal(size=(32, 4)).astype(np.float32)
y = np.cos(x[:, :1] * 2.0).astype(np.float32)
tx = optax.adamw(3e-3)
opt_state = tx.init(eqx.filter(model, eqx.is_inexact_array))


@eqx.filter_jit
def step(model, opt_state):
    def loss_fn(model):
        pred = jax.vmap(model)(x)
        loss = jnp.mean((pred - y) ** 2)
        return eqx.error_if(loss, ~jnp.isfinite(loss), "the loss is not finite")

    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates, opt_state = tx.update(grads, opt_state, eqx.filter(model, eqx.is_inexact_array))
    return eqx.apply_updates(model, updates), opt_state, loss


losses = []
for _ in range(20):
    model, opt_state, loss = step(model, opt_state)
    losses.append(float(loss))

# error_if raises when its condition holds (eagerly here).
try:
    eqx.error_if(jnp.float32(1.0), jnp.bool_(True), "boom")
    raised = False
except Exception as error:  # JAX raises an XlaRuntimeError; minijax its own error
    raised = "boom" in str(error)
print(json.dumps({"losses": losses, "error_if_raised": raised}))
