"""``jax.extend``: the names JAX offers to libraries that build on its internals.

minijax's IR is the thing itself: ``jax.extend.core.Jaxpr`` is
``minijax.jaxpr.Jaxpr``, ``Primitive`` is ``minijax.core.Primitive`` and so
on (no second copy of the IR). The parts that reach into XLA's C++ internals
(``mlir``, ``lowering``, ``sharding``, ``xla``, ``pallas``,
``ifrt_programs``) exist and raise NotImplementedError naming what is missing.
"""

from __future__ import annotations

from minijax.extend import (
    backend,
    core,
    ifrt_programs,
    linear_util,
    lowering,
    mlir,
    pallas,
    random,
    sharding,
    source_info_util,
    xla,
)

__all__ = [
    "backend",
    "core",
    "ifrt_programs",
    "linear_util",
    "lowering",
    "mlir",
    "pallas",
    "random",
    "sharding",
    "source_info_util",
    "xla",
]
