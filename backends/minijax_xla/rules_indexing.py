"""XLA lowerings for the indexing primitives (issue 7)."""
