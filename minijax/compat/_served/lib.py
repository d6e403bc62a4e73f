"""``jax.lib``: JAX's handle on jaxlib. minijax drives jaxlib only through its XLA backend."""

from __future__ import annotations
