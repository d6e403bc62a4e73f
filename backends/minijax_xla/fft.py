"""Lowering rule of the ``fft`` primitive (``minijax/primitives/fft.py``): one ``stablehlo.fft``."""

from __future__ import annotations

from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax.primitives.fft import FftType
from minijax_xla.lowering import LoweringRuleContext, register

Value = Any  # an ir.Value


@register("fft")
def _fft(ctx: LoweringRuleContext, x: Value, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> list[Value]:
    return [hlo.fft(x, hlo.FftTypeAttr.get(fft_type.name), ir.DenseI64ArrayAttr.get(list(fft_lengths)))]
