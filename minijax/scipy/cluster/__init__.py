"""``jax.scipy.cluster``: vector quantization (``vq.vq``)."""

from minijax.scipy.cluster import vq as vq

__all__ = ["vq"]
