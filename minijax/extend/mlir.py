"""``jax.extend.mlir``: every name exists and raises NotImplementedError: minijax builds its StableHLO in backends/minijax_xla and offers no MLIR module objects to transform."""

from __future__ import annotations

from minijax.extend._unsupported import unsupported

_WHY = "minijax builds its StableHLO in backends/minijax_xla and offers no MLIR module objects to transform"

deserialize_portable_artifact = unsupported("extend.mlir", "deserialize_portable_artifact", _WHY)
hlo_to_stablehlo = unsupported("extend.mlir", "hlo_to_stablehlo", _WHY)
lower_with_sharding_in_types = unsupported("extend.mlir", "lower_with_sharding_in_types", _WHY)
refine_polymorphic_shapes = unsupported("extend.mlir", "refine_polymorphic_shapes", _WHY)
serialize_portable_artifact = unsupported("extend.mlir", "serialize_portable_artifact", _WHY)

__all__ = ["deserialize_portable_artifact", "hlo_to_stablehlo", "lower_with_sharding_in_types", "refine_polymorphic_shapes", "serialize_portable_artifact"]
