"""``minijax.experimental``: what JAX keeps under ``jax.experimental`` (today: ``io_callback``)."""

from minijax.callbacks import io_callback as io_callback

# sharding (issue 17): jax.experimental.shard_map
from minijax.experimental import shard_map as shard_map

__all__ = ["io_callback"]

# checkify (issue 20): jax.experimental.checkify
# jax.experimental.ode: odeint
# mproc (issue 17): jax.experimental.multihost_utils
from minijax.experimental import (  # noqa: E402
    checkify as checkify,
    multihost_utils as multihost_utils,  # noqa: E402
    ode as ode,
)
