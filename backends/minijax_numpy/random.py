"""NumPy implementation of threefry2x32 (and random_bits' helpers)."""
