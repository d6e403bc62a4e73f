"""The NumPy reference backend: every primitive is a few lines of NumPy.

It is the ground truth for semantics. ``compile`` interprets the jaxpr with
each equation's implementation looked up once, at compile time.
"""

from __future__ import annotations

from minijax_numpy.backend import NumpyBackend


def make_backend() -> NumpyBackend:
    """Entry point of the ``minijax.backends`` group."""
    return NumpyBackend()


__all__ = ["NumpyBackend", "make_backend"]
