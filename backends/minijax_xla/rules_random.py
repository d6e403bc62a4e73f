"""XLA lowerings for the random primitives (issue 7)."""
