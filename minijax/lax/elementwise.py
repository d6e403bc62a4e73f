"""Public lax wrappers (being written)."""

__all__: list[str] = []
