"""``jax.scipy.stats``: so far the normal distribution (``norm``)."""

from minijax.scipy.stats import norm as norm

__all__ = ["norm"]
