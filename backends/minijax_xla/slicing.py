"""Lowering rules: slicing primitives (``spec/primitives/slicing.md``).

slice, pad, dynamic_slice and dynamic_update_slice each have a StableHLO op of
the same meaning. The NumPy backend (``backends/minijax_numpy/slicing.py``) is
the reference every rule here agrees with, exactly.

A fact checked against XLA CPU (jaxlib 0.10.2) that the rules rely on:
``stablehlo.dynamic_slice`` / ``dynamic_update_slice`` clamp each start index
to ``[0, operand_dim - window_dim]`` themselves, as minijax's semantics ask,
reading unsigned indices as unsigned and 64-bit indices at full width; so the
indices are passed through untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax_xla.lowering import LoweringRuleContext, register


def _ints(values: Sequence[int]) -> list[int]:
    return [int(v) for v in values]


@register("slice")
def _slice(
    ctx: LoweringRuleContext, x: ir.Value[Any], *, start_indices: Any, limit_indices: Any, strides: Any
) -> list[ir.Value[Any]]:
    steps = [1] * len(start_indices) if strides is None else _ints(strides)
    return [hlo.slice(x, _ints(start_indices), _ints(limit_indices), steps)]


@register("dynamic_slice")
def _dynamic_slice(ctx: LoweringRuleContext, x: ir.Value[Any], *indices: ir.Value[Any], slice_sizes: Any) -> list[ir.Value[Any]]:
    # stablehlo clamps the starts exactly as the semantics ask (module docstring).
    return [hlo.dynamic_slice(x, list(indices), _ints(slice_sizes))]


@register("dynamic_update_slice")
def _dynamic_update_slice(ctx: LoweringRuleContext, x: ir.Value[Any], update: ir.Value[Any], *indices: ir.Value[Any]) -> list[ir.Value[Any]]:
    return [hlo.dynamic_update_slice(x, update, list(indices))]


@register("pad")
def _pad(ctx: LoweringRuleContext, x: ir.Value[Any], padding_value: ir.Value[Any], *, padding_config: Any) -> list[ir.Value[Any]]:
    # stablehlo.pad has the same (low, high, interior) meaning, negative low/high included.
    lows, highs, interiors = (list(column) for column in zip(*padding_config)) if padding_config else ([], [], [])
    return [hlo.pad(x, padding_value, _ints(lows), _ints(highs), _ints(interiors))]
