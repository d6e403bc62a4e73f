"""``minijax.lax``: the public wrappers that bind primitives, named as in ``jax.lax``."""

from minijax.lax import elementwise as _elementwise, reductions as _reductions, structural as _structural
from minijax.lax.elementwise import *  # noqa: F403
from minijax.lax.reductions import *  # noqa: F403
from minijax.lax.structural import *  # noqa: F403

__all__ = [*_elementwise.__all__, *_reductions.__all__, *_structural.__all__]
