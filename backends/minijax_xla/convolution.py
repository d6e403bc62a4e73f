"""Lowering rule: conv_general_dilated (``spec/primitives/convolution.md``).

One ``stablehlo.convolution`` carrying the dimension numbers, strides,
padding, dilations and group counts as they are. As dot_general's lowering
does, the operands are first converted to the dtype the reference
accumulates in (float16/bfloat16 -> float32; integers with a floating result
-> that float), so XLA's result is the reference's; for float32 and float64
operands nothing is added and XLA sees exactly what JAX hands it. A boolean
result is "some product nonzero", computed in int32 and compared with 0.
The NumPy backend (``backends/minijax_numpy/convolution.py``) is the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax.primitives.reductions import Precision, dot_accumulation_dtypes
from minijax_xla.jaxlib_api import tensor_type
from minijax_xla.lowering import LoweringRuleContext, constant, register
from minijax_xla.reductions import precision_config

DType = np.dtype[Any]

def _convert(x: ir.Value[Any], shape: Sequence[int], src: DType, dst: DType) -> ir.Value[Any]:
    return x if src == dst else hlo.convert(tensor_type(shape, dst), x)


@register("conv_general_dilated")
def _conv_general_dilated(
    ctx: LoweringRuleContext,
    lhs: ir.Value[Any],
    rhs: ir.Value[Any],
    *,
    window_strides: Any,
    padding: Any,
    lhs_dilation: Any,
    rhs_dilation: Any,
    dimension_numbers: Any,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any = None,
) -> list[ir.Value[Any]]:
    lhs_aval, rhs_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    stage, work = dot_accumulation_dtypes(lhs_aval.dtype, out_aval.dtype)
    if work == np.bool_:
        work = np.dtype(np.int32)  # XLA has no boolean convolution on every platform; count instead
    for src, dst in ((lhs_aval.dtype, stage), (stage, work)):
        lhs = _convert(lhs, lhs_aval.shape, src, dst)
        rhs = _convert(rhs, rhs_aval.shape, src, dst)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    numbers = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=int(lhs_spec[0]),
        input_feature_dimension=int(lhs_spec[1]),
        input_spatial_dimensions=[int(i) for i in lhs_spec[2:]],
        kernel_output_feature_dimension=int(rhs_spec[0]),
        kernel_input_feature_dimension=int(rhs_spec[1]),
        kernel_spatial_dimensions=[int(i) for i in rhs_spec[2:]],
        output_batch_dimension=int(out_spec[0]),
        output_feature_dimension=int(out_spec[1]),
        output_spatial_dimensions=[int(i) for i in out_spec[2:]],
    )
    nsp = len(window_strides)
    pads = np.array(padding, np.int64).reshape(nsp, 2)
    if any(int(d) > 1 for d in lhs_dilation) and any(
        lhs_aval.shape[lhs_spec[2 + i]] == 1 and rhs_aval.shape[rhs_spec[2 + i]] > 1 for i in range(nsp)
    ):
        # XLA's CPU algebraic simplifier aborts the process (a failed CHECK,
        # "Window dimensions do not match RHS shape"; JAX 0.10.2 aborts too) on
        # an lhs dilation beside a size-1 lhs axis that a wider kernel spans.
        # Spelling the dilation out as interior padding avoids it. (Its holes
        # are then real zeros, so an inf kernel tap over one gives NaN here.)
        interior = [0] * len(lhs_aval.shape)
        for i, d in enumerate(lhs_dilation):
            interior[lhs_spec[2 + i]] = int(d) - 1
        edges = [0] * len(lhs_aval.shape)
        lhs = hlo.pad(lhs, constant(0, work), edges, edges, interior)
        lhs_dilation = (1,) * nsp
    # None is written out as (DEFAULT, DEFAULT), as JAX does: XLA gets JAX's very op.
    pair = (Precision.DEFAULT, Precision.DEFAULT) if precision is None else precision
    config = precision_config(pair)
    i64 = ir.IntegerType.get_signless(64)
    product = hlo.convolution(
        tensor_type(out_aval.shape, work),
        lhs,
        rhs,
        dimension_numbers=numbers,
        feature_group_count=ir.IntegerAttr.get(i64, int(feature_group_count)),
        batch_group_count=ir.IntegerAttr.get(i64, int(batch_group_count)),
        window_strides=[int(s) for s in window_strides],
        padding=ir.DenseIntElementsAttr.get(cast(Any, pads)),  # an (n, 2) int64 array (numpy's stubs miss Buffer)
        lhs_dilation=[int(d) for d in lhs_dilation],
        rhs_dilation=[int(d) for d in rhs_dilation],
        window_reversal=[False] * nsp,
        precision_config=config,
    )
    if out_aval.dtype == np.bool_:
        zeros = hlo.broadcast_in_dim(tensor_type(out_aval.shape, work), constant(0, work), [])
        ne = hlo.ComparisonDirectionAttr.get("NE")
        return [hlo.compare(product, zeros, ne, compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))]
    # Float -> integer converts truncate, saturate and send NaN to 0 on XLA, the reference's rule.
    return [_convert(product, out_aval.shape, work, out_aval.dtype)]
