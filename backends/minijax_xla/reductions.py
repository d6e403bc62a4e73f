"""Lowering rules: reductions, argmax/argmin and dot_general (``spec/primitives/reductions.md``).

Every reduction becomes a ``stablehlo.reduce`` whose region combines two
scalars; the init value is the monoid's identity, which is also what reducing
an empty axis gives. reduce_sum belongs to the structural family (as in
``minijax/primitives/``) and is registered by ``structural.py``, with the
rule ``monoid_rule`` below builds. The NumPy backend
(``backends/minijax_numpy/reductions.py``) is the reference.

Accumulation follows the spec's conventions, not XLA's defaults: XLA CPU adds
float16/bfloat16 in the narrow type, so sums and products of those dtypes are
lowered as convert to float32, reduce, convert back (one rounding at the end),
and dot_general converts its operands to the dtype the reference accumulates
in before contracting. max/min/and/or/xor are exact in any type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax import dtypes
from minijax.primitives.reductions import Precision, dot_accumulation_dtypes, dot_input_dtype, reduction_identity
from minijax_xla.elementwise import complex_minmax
from minijax_xla.jaxlib_api import tensor_type
from minijax_xla.lowering import LoweringRuleContext, build_combiner, constant, iota, register

DType = np.dtype[Any]
Combiner = Callable[[ir.Value[Any], ir.Value[Any]], ir.Value[Any]]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _is_float(dt: DType) -> bool:
    return dtypes.issubdtype(dt, np.floating)


def _convert(x: ir.Value[Any], shape: Sequence[int], src: DType, dst: DType) -> ir.Value[Any]:
    return x if src == dst else hlo.convert(tensor_type(shape, dst), x)


def _reduce(
    operands: Sequence[ir.Value[Any]],
    inits: Sequence[ir.Value[Any]],
    operand_dtypes: Sequence[DType],
    out_shape: Sequence[int],
    axes: Sequence[int],
    combine: Callable[[list[ir.Value[Any]], list[ir.Value[Any]]], list[ir.Value[Any]]],
) -> list[ir.Value[Any]]:
    """A (variadic) ``stablehlo.reduce`` over ``axes``.

    ``combine(accumulators, elements)`` builds the region body from 0-d values
    and returns one new accumulator per operand.
    """
    op = hlo.ReduceOp(
        [tensor_type(out_shape, dt) for dt in operand_dtypes], list(operands), list(inits), [int(a) for a in axes]
    )
    build_combiner(op.regions[0], operand_dtypes, combine)
    return list(op.results)


# ---------------------------------------------------------------------------
# The monoid reductions


def monoid_rule(name: str, combiner: Combiner, widen: bool) -> Callable[..., list[ir.Value[Any]]]:
    """The rule of the monoid reduction ``name``: a reduce whose region applies
    the scalar ``combiner``; with ``widen``, float16/bfloat16 accumulate in
    float32. (structural.py uses it for reduce_sum.)"""

    def rule(ctx: LoweringRuleContext, x: ir.Value[Any], *, axes: Any, out_sharding: Any = None) -> list[ir.Value[Any]]:
        aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
        dt = aval_in.dtype
        # The spec's accumulation: float16/bfloat16 sums and products in float32, rounded once.
        acc = _F32 if widen and _is_float(dt) and dt.itemsize == 2 else dt
        x = _convert(x, aval_in.shape, dt, acc)
        init = constant(reduction_identity(name, dt), acc)
        combine = combiner
        if dt.kind == "c" and name in _COMPLEX_MINMAX:  # lexicographic, as the elementwise max/min
            direction = _COMPLEX_MINMAX[name]
            combine = lambda a, b: complex_minmax(a, b, direction, dt)  # noqa: E731
        (result,) = _reduce([x], [init], [acc], aval_out.shape, axes, lambda a, b: [combine(a[0], b[0])])
        return [_convert(result, aval_out.shape, acc, aval_out.dtype)]

    return rule


_COMPLEX_MINMAX = {"reduce_max": "GT", "reduce_min": "LT"}

# name -> (the scalar combiner, whether float16/bfloat16 accumulate in float32).
_MONOIDS: dict[str, tuple[Combiner, bool]] = {
    "reduce_prod": (hlo.multiply, True),
    # stablehlo.maximum/minimum propagate NaN and order -0.0 below +0.0 (and
    # on i1 they are or/and), which is the reference's meaning.
    "reduce_max": (hlo.maximum, False),
    "reduce_min": (hlo.minimum, False),
    "reduce_and": (hlo.and_, False),
    "reduce_or": (hlo.or_, False),
    "reduce_xor": (hlo.xor, False),
}

for _name, (_combiner, _widen) in _MONOIDS.items():
    register(_name)(monoid_rule(_name, _combiner, _widen))


# ---------------------------------------------------------------------------
# argmax, argmin: a variadic reduce over (value, index) pairs


def _compare(a: ir.Value[Any], b: ir.Value[Any], direction: str, dt: DType) -> ir.Value[Any]:
    if _is_float(dt):
        kind = "FLOAT"
    elif dtypes.issubdtype(dt, np.signedinteger):
        kind = "SIGNED"
    else:  # unsigned integers and bool (i1 read as 0/1)
        kind = "UNSIGNED"
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction), compare_type=hlo.ComparisonTypeAttr.get(kind))


def _arg_rule(name: str) -> Callable[..., list[ir.Value[Any]]]:
    better = "GT" if name == "argmax" else "LT"

    def rule(ctx: LoweringRuleContext, x: ir.Value[Any], *, axes: Any, index_dtype: Any) -> list[ir.Value[Any]]:
        aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
        dt = aval_in.dtype
        (axis,) = axes
        # Count in a type wide enough for the axis, so ties compare true
        # positions; narrow index dtypes wrap at the end, as in the reference.
        n = aval_in.shape[axis]
        count = np.dtype(np.int32) if not isinstance(n, int) or n <= np.iinfo(np.int32).max else np.dtype(np.int64)
        indices = iota(tensor_type(aval_in.shape, count), aval_in.shape, int(axis))

        def combine(acc: list[ir.Value[Any]], elem: list[ir.Value[Any]]) -> list[ir.Value[Any]]:
            # A total order on (value, index): NaN beats every number, then the
            # better value, then (among equal values or two NaNs) the lower index.
            # Commutative and associative, so XLA may combine in any order.
            (a, ia), (b, ib) = acc, elem
            a_wins = _compare(a, b, better, dt)
            same = _compare(a, b, "EQ", dt)
            if _is_float(dt):
                a_nan, b_nan = _compare(a, a, "NE", dt), _compare(b, b, "NE", dt)
                a_wins = hlo.or_(a_wins, hlo.and_(a_nan, hlo.not_(b_nan)))
                same = hlo.or_(same, hlo.and_(a_nan, b_nan))
            pick_a = hlo.or_(a_wins, hlo.and_(same, _compare(ia, ib, "LT", count)))
            return [hlo.select(pick_a, a, b), hlo.select(pick_a, ia, ib)]

        # The init pair loses to every element: the worst value and the largest index.
        worst = reduction_identity("reduce_max" if name == "argmax" else "reduce_min", dt)
        inits = [constant(worst, dt), constant(np.iinfo(count).max, count)]
        _, index = _reduce([x, indices], inits, [dt, count], aval_out.shape, [axis], combine)
        return [_convert(index, aval_out.shape, count, aval_out.dtype)]

    return rule


register("argmax")(_arg_rule("argmax"))
register("argmin")(_arg_rule("argmin"))


# ---------------------------------------------------------------------------
# dot_general


_PRECISIONS = {Precision.DEFAULT: "DEFAULT", Precision.HIGH: "HIGH", Precision.HIGHEST: "HIGHEST"}


def precision_config(precision: Sequence[Precision]) -> ir.ArrayAttr:
    """The ``precision_config`` attribute of a dot_general or convolution: one entry per operand."""
    return ir.ArrayAttr.get([hlo.PrecisionAttr.get(_PRECISIONS[p]) for p in precision])


@register("dot_general")
def _dot_general(
    ctx: LoweringRuleContext,
    lhs: ir.Value[Any],
    rhs: ir.Value[Any],
    *,
    dimension_numbers: Any,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any = None,
) -> list[ir.Value[Any]]:
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_aval, rhs_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    in_dtype = dot_input_dtype(lhs_aval.dtype, rhs_aval.dtype)
    stage, work = dot_accumulation_dtypes(in_dtype, out_aval.dtype)

    def prepare(x: ir.Value[Any], dt: DType, shape: Sequence[int]) -> ir.Value[Any]:
        for src, dst in ((dt, in_dtype), (in_dtype, stage), (stage, work)):
            x = _convert(x, shape, src, dst)
        return x

    lhs = prepare(lhs, lhs_aval.dtype, lhs_aval.shape)
    rhs = prepare(rhs, rhs_aval.dtype, rhs_aval.shape)
    numbers = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb),
        rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc),
        rhs_contracting_dimensions=list(rc),
    )
    config = None
    if precision is not None:
        config = precision_config(precision)
    product = hlo.dot_general(tensor_type(out_aval.shape, work), lhs, rhs, numbers, precision_config=config)
    if out_aval.dtype == np.bool_:
        # "nonzero", also for NaN (a convert to i1 would not promise that).
        zeros = hlo.broadcast_in_dim(tensor_type(out_aval.shape, work), constant(0, work), [])
        return [_compare(product, zeros, "NE", work)]
    # Float -> integer converts truncate, saturate and send NaN to 0 on XLA
    # (checked), which is the reference's rule.
    return [_convert(product, out_aval.shape, work, out_aval.dtype)]
