"""XLA lowerings for the sorting primitives (issue 7)."""
