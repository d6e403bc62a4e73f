"""Names under JAX's private ``jax._src`` that JAX's own documentation imports.

Only what a page imports lives here (``jax._src.util.safe_map``): JAX's pages
run unchanged on minijax, ``jax.X`` answered by ``minijax.X``.
"""
