"""``jax.nn.initializers`` (issue 7)."""
