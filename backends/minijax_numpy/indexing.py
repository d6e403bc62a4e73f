"""NumPy implementations of gather and scatter."""
