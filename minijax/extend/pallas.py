"""``jax.extend.pallas``: every name exists and raises NotImplementedError: minijax has no Pallas."""

from __future__ import annotations

from minijax.extend._unsupported import unsupported

_WHY = "minijax has no Pallas"

GridMapping = unsupported("extend.pallas", "GridMapping", _WHY)
register_lowering_rule = unsupported("extend.pallas", "register_lowering_rule", _WHY)

__all__ = ["GridMapping", "register_lowering_rule"]
