"""The modules ``minijax.compat`` serves under JAX's names (``jax``, ``jax.core``, ``jax.interpreters.*``, ...).

Each is small and built only from minijax's public modules (and, for the
extension points, ``minijax.extend``): see ``minijax/compat/__init__.py``.
"""
