"""Primitives (being written)."""
