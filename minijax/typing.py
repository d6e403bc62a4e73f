"""Type aliases for annotating code that uses minijax (like ``jax.typing``)."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np

from minijax.array import ArrayLike

# Anything that names a dtype.
DTypeLike: TypeAlias = str | type[Any] | np.dtype[Any]

__all__ = ["ArrayLike", "DTypeLike"]
