"""``jax.interpreters.partial_eval``: the tracing pieces libraries touch.

minijax stages with one tracer (``make_jaxpr``'s); JAX's partial evaluation
with known and unknown values has no counterpart, so its names here raise
when used.
"""

from __future__ import annotations

from typing import Any

from minijax.compat._served.standin import stand_in_class, stand_in_function
from minijax.interpreters.tracing import DynamicJaxprTracer as DynamicJaxprTracer

_WHY = "minijax has no partial evaluation with known and unknown values (it stages whole functions)"
JaxprTracer = stand_in_class("jax.interpreters.partial_eval.JaxprTracer", _WHY)
PartialVal = stand_in_class("jax.interpreters.partial_eval.PartialVal", _WHY)
Val = Any
trace_to_jaxpr_nounits = stand_in_function("jax.interpreters.partial_eval.trace_to_jaxpr_nounits", _WHY)
trace_to_jaxpr_dynamic = stand_in_function(
    "jax.interpreters.partial_eval.trace_to_jaxpr_dynamic", "use jax.make_jaxpr (or jax.extend's tracing)")
dce_jaxpr = stand_in_function("jax.interpreters.partial_eval.dce_jaxpr", "minijax's jit removes dead code itself")
custom_partial_eval_rules: dict[Any, Any] = {}
partial_eval_jaxpr_custom_rules: dict[Any, Any] = {}
dce_rules: dict[Any, Any] = {}
