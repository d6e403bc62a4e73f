"""``jax.scipy.spatial``: ``transform`` (``Rotation``, ``Slerp``)."""

from minijax.scipy.spatial import transform as transform

__all__ = ["transform"]
