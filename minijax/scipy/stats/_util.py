"""Shared pieces of the ``jax.scipy.stats`` distributions."""

from __future__ import annotations

from minijax.numpy.ufuncs import lax_const as lax_const
from minijax.numpy.util import promote_args_inexact as promote_args_inexact

__all__ = ["lax_const", "promote_args_inexact"]
