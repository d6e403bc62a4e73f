"""Lowering of ``check``: a ``debug_check`` lowers to nothing; any other cannot
be lowered (``checkify.checkify`` must discharge it first). JAX lowers it to
a host callback only with ``jax_experimental_unsafe_xla_runtime_errors``,
which minijax does not have; without it JAX raises this same error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jaxlib.mlir import ir

from minijax.primitives.checkify import functionalization_error
from minijax_xla.lowering import LoweringRuleContext, register


@register("check")
def _check(ctx: LoweringRuleContext, *operands: ir.Value[Any], err_tree: Any, debug: bool) -> Sequence[ir.Value[Any]]:
    if not debug:
        raise functionalization_error()
    return []
