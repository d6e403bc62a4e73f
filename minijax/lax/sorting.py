"""lax.sort, sort_key_val, top_k, cumsum/cumprod/cummax/cummin/cumlogsumexp (issue 7)."""

__all__: list[str] = []
