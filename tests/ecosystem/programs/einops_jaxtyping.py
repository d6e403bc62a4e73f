"""einops and jaxtyping under jit; prints JSON."""

import json

import einops
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int


@jax.jit
def f(x):
    y = einops.rearrange(x, "b (h w) c -> b c h w", h=2)
    z = einops.reduce(y, "b c h w -> b c", "mean")
    return einops.repeat(z, "b c -> b c r", r=3), einops.einsum(x, x, "b n c, b n d -> b c d")


x = jnp.asarray(np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3))
repeated, gram = f(x)
checks = {
    "float_ok": isinstance(x, Float[Array, "b n c"]),
    "int_rejected": not isinstance(x, Int[Array, "b n c"]),
    "rank_rejected": not isinstance(x, Float[Array, "b n"]),
}
print(json.dumps({"repeated": np.asarray(repeated).tolist(), "gram_sum": float(jnp.sum(gram)), "checks": checks}))
