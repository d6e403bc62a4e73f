"""``jax.extend.lowering``: every name exists and raises NotImplementedError: minijax's XLA backend lowers through its own rule tables (backends/minijax_xla), not JAX's lowering contexts."""

from __future__ import annotations

from minijax.extend._unsupported import unsupported

_WHY = "minijax's XLA backend lowers through its own rule tables (backends/minijax_xla), not JAX's lowering contexts"

JaxIrContext = unsupported("extend.lowering", "JaxIrContext", _WHY)
LoweringRuleContext = unsupported("extend.lowering", "LoweringRuleContext", _WHY)
upstream_dialects = unsupported("extend.lowering", "upstream_dialects", _WHY)

__all__ = ["JaxIrContext", "LoweringRuleContext", "upstream_dialects"]
