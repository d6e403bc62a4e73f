"""``jax.extend.xla``: every name exists and raises NotImplementedError: minijax does not expose XLA's HLO pass pipeline."""

from __future__ import annotations

from minijax.extend._unsupported import unsupported

_WHY = "minijax does not expose XLA's HLO pass pipeline"

PipelineStage = unsupported("extend.xla", "PipelineStage", _WHY)
clear_hlo_module_transformation = unsupported("extend.xla", "clear_hlo_module_transformation", _WHY)
register_hlo_module_transformation = unsupported("extend.xla", "register_hlo_module_transformation", _WHY)

__all__ = ["PipelineStage", "clear_hlo_module_transformation", "register_hlo_module_transformation"]
