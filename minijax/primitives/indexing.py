"""gather and scatter primitives (issue 7)."""
