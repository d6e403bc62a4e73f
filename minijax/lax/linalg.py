"""``jax.lax.linalg``: the decompositions as primitives (issue 7)."""

__all__: list[str] = []
