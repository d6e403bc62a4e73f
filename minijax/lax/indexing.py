"""lax.gather, lax.scatter* and their dimension numbers (issue 7)."""

__all__: list[str] = []
