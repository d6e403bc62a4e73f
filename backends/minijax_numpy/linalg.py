"""NumPy implementations of the linear-algebra primitives."""
