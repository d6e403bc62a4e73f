"""sort, top_k and the cumulative primitives (issue 7)."""
