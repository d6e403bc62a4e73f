"""random_bits and threefry2x32: the primitives under minijax.random (issue 7)."""
