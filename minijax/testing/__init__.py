"""Public testing utilities (hypothesis strategies, the conformance suite)."""
