"""The remaining scalar-type names JAX exports (issue 21).

A module of their own because ``bool`` shadows the builtin here: ``jnp.bool``
is ``jnp.bool_`` itself, ``double``/``single`` are ``float64``/``float32``,
and the non-numeric abstract classes are NumPy's own, as in JAX.
"""

import numpy as np

from minijax.numpy.scalar_types import bool_, float32, float64

__all__ = ["bool", "character", "double", "flexible", "object_", "single"]

bool = bool_  # noqa: A001  (NumPy's name)
double = float64
single = float32
character = np.character
flexible = np.flexible
object_ = np.object_
