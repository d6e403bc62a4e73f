"""``minijax.lax``: thin public wrappers that bind primitives."""

from minijax.lax.ops import *  # noqa: F403
