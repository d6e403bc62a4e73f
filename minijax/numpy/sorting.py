"""jnp.sort, argsort, cumsum, searchsorted, unique, nonzero ... (issue 7)."""

__all__: list[str] = []
