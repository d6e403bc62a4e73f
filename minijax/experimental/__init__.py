"""``minijax.experimental``: what JAX keeps under ``jax.experimental`` (today: ``io_callback``)."""

from minijax.callbacks import io_callback as io_callback

__all__ = ["io_callback"]
