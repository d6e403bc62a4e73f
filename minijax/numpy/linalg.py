"""``jnp.linalg`` (issue 7)."""

__all__: list[str] = []
