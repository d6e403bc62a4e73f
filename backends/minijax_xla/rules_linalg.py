"""XLA lowerings for the linalg primitives (issue 7)."""
