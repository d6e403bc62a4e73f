"""``jax.nn``: neural-network functions (``minijax.nn.functions``) and
``jax.nn.initializers`` (``minijax.nn.initializers``)."""

from __future__ import annotations

from minijax.nn import initializers as initializers

# issue 21 (sciother): dot_product_attention and the block-scaled matmuls
from minijax.nn.attention import *  # noqa: F403
from minijax.nn.attention import __all__ as _attention_all
from minijax.nn.functions import *  # noqa: F403
from minijax.nn.functions import __all__ as _functions_all
from minijax.numpy import tanh as tanh

__all__ = [*_functions_all, "initializers", "tanh", *_attention_all]
