"""``jax.extend.sharding``: every name exists and raises NotImplementedError: minijax compiles for one device at a time and has no GSPMD shardings."""

from __future__ import annotations

from minijax.extend._unsupported import unsupported

_WHY = "minijax compiles for one device at a time and has no GSPMD shardings"

GSPMDSharding = unsupported("extend.sharding", "GSPMDSharding", _WHY)
get_hlo_sharding_from_serialized_proto = unsupported("extend.sharding", "get_hlo_sharding_from_serialized_proto", _WHY)
get_op_sharding_from_serialized_proto = unsupported("extend.sharding", "get_op_sharding_from_serialized_proto", _WHY)
get_serialized_proto_from_hlo_sharding = unsupported("extend.sharding", "get_serialized_proto_from_hlo_sharding", _WHY)
xla_client = unsupported("extend.sharding", "xla_client", _WHY)

__all__ = ["GSPMDSharding", "get_hlo_sharding_from_serialized_proto", "get_op_sharding_from_serialized_proto", "get_serialized_proto_from_hlo_sharding", "xla_client"]
