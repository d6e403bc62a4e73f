"""NumPy implementations of sort, top_k and the cumulative primitives."""
