"""Lowering rules for the complex-number primitives (``minijax/primitives/complex.py``).

``complex``, ``real`` and ``imag`` are one StableHLO op each; ``conj`` is
``complex(real(x), -imag(x))`` (of a real operand: ``complex(x, 0)``), as JAX
lowers it.
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir.dialects import stablehlo as hlo

from minijax_xla.elementwise import _constant, _operands_at_result_shape
from minijax_xla.lowering import LoweringRuleContext, register

Value = Any  # an ir.Value


@register("real")
def _real(ctx: LoweringRuleContext, x: Value) -> list[Value]:
    return [hlo.real(x)]


@register("imag")
def _imag(ctx: LoweringRuleContext, x: Value) -> list[Value]:
    return [hlo.imag(x)]


@register("complex")
def _complex(ctx: LoweringRuleContext, x: Value, y: Value) -> list[Value]:
    return [hlo.complex(*_operands_at_result_shape(ctx, [x, y]))]


@register("conj")
def _conj(ctx: LoweringRuleContext, x: Value, *, input_dtype: Any) -> list[Value]:
    aval = ctx.avals_in[0]
    if aval.dtype.kind == "c":
        return [hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))]
    return [hlo.complex(x, _constant(0, aval.dtype, aval.shape))]
