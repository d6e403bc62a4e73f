"""``jax.interpreters``: the package of JAX's (mostly deprecated) interpreter modules; see its submodules."""
