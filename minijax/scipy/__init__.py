"""``jax.scipy``: so far ``jax.scipy.special``'s most used functions."""

from minijax.scipy import special as special

__all__ = ["special"]
