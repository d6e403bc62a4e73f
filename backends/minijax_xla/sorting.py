"""Lowering rules: sort, top_k and the cumulative reductions (``spec/primitives/sorting.md``).

- ``sort`` is one ``stablehlo.sort`` whose comparator implements the spec's
  order, as JAX's does: float keys are canonicalized (-0.0 becomes 0.0, every
  NaN the positive quiet NaN) and then compared in the IEEE total order, so
  that zeros tie and NaNs go last; several keys compare lexicographically.
- ``top_k`` is ``chlo.top_k`` on the last axis (a transpose around it for
  another axis), which orders by the IEEE total order and breaks ties by
  index, the reference's meaning.
- The cumulative reductions are what JAX lowers them to on CPU: a
  ``stablehlo.reduce_window`` whose window covers the whole axis, padded by
  n - 1 identities before it (after it when reversed). XLA recognises this
  form and rewrites it into a log-depth prefix scan. float16/bfloat16 sums,
  products and logsumexps are computed in float32 (the reference's
  accumulation) and rounded once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, stablehlo as hlo

from minijax import dtypes
from minijax.primitives.reductions import reduction_identity
from minijax_xla.jaxlib_api import tensor_type
from minijax_xla.lowering import LoweringRuleContext, constant, ir_type, register

Value = ir.Value[Any]
DType = np.dtype[Any]

_F32 = np.dtype(np.float32)


def _is_float(dt: DType) -> bool:
    return dtypes.issubdtype(dt, np.floating)


def _compare(a: Value, b: Value, direction: str, kind: str) -> Value:
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction), compare_type=hlo.ComparisonTypeAttr.get(kind))


def _compare_kind(dt: DType) -> str:
    if _is_float(dt):
        return "TOTALORDER"
    return "SIGNED" if dtypes.issubdtype(dt, np.signedinteger) else "UNSIGNED"  # bool (i1) as 0/1


# ---------------------------------------------------------------------------
# sort


def _canonical(x: Value, dt: DType) -> Value:
    """A float key with -0.0 made 0.0 and every NaN made the positive quiet NaN."""
    zero, nan = constant(0, dt), constant(np.nan, dt)
    x = hlo.select(_compare(x, zero, "EQ", "FLOAT"), zero, x)
    return hlo.select(_compare(x, x, "NE", "FLOAT"), nan, x)


def _less_than(lhs: Sequence[Value], rhs: Sequence[Value], key_dtypes: Sequence[DType]) -> Value:
    """Lexicographic ``lhs < rhs`` over the keys (the first key most significant)."""
    result: Value | None = None
    # A complex key is two float keys: its real part, then its imaginary part (JAX's order).
    split: list[tuple[Value, Value, DType]] = []
    for a, b, dt in zip(lhs, rhs, key_dtypes):
        if dt.kind == "c":
            part = np.dtype(np.finfo(dt).dtype)
            split += [(hlo.real(a), hlo.real(b), part), (hlo.imag(a), hlo.imag(b), part)]
        else:
            split.append((a, b, dt))
    for a, b, dt in reversed(split):
        if _is_float(dt):
            a, b = _canonical(a, dt), _canonical(b, dt)
        kind = _compare_kind(dt)
        less = _compare(a, b, "LT", kind)
        result = less if result is None else hlo.or_(less, hlo.and_(_compare(a, b, "EQ", kind), result))
    assert result is not None  # sort C4: at least one key
    return result


@register("sort")
def _sort(ctx: LoweringRuleContext, *operands: Value, dimension: int, is_stable: bool, num_keys: int) -> list[Value]:
    op = hlo.SortOp([ir_type(a) for a in ctx.avals_out], list(operands), dimension=int(dimension), is_stable=bool(is_stable))
    scalars = [tensor_type((), a.dtype) for a in ctx.avals_in]
    # The comparator's arguments come in pairs: (lhs_0, rhs_0, lhs_1, rhs_1, ...).
    block = op.comparator.blocks.append(*[t for s in scalars for t in (s, s)])
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        key_dtypes = [a.dtype for a in ctx.avals_in[:num_keys]]
        hlo.return_([_less_than(args[0 : 2 * num_keys : 2], args[1 : 2 * num_keys : 2], key_dtypes)])
    return list(op.results)


# ---------------------------------------------------------------------------
# top_k


@register("top_k")
def _top_k(ctx: LoweringRuleContext, x: Value, *, k: int, axis: int) -> list[Value]:
    ndim = ctx.avals_in[0].ndim
    perm = list(range(ndim))
    perm[axis], perm[-1] = perm[-1], perm[axis]  # a swap: its own inverse
    moved = axis != ndim - 1
    if moved:
        x = hlo.transpose(x, perm)
    values_aval, indices_aval = ctx.avals_out
    shape = [values_aval.shape[p] for p in perm]
    types = [tensor_type(shape, values_aval.dtype), tensor_type(shape, indices_aval.dtype)]
    values, indices = chlo.top_k(x, int(k), results=types)
    if moved:
        values, indices = hlo.transpose(values, perm), hlo.transpose(indices, perm)
    return [values, indices]


# ---------------------------------------------------------------------------
# Cumulative reductions


def _logaddexp(a: Value, b: Value) -> Value:
    """log(exp(a) + exp(b)) as the reference computes it: max + log1p(exp(-|a - b|)),
    and a + b where a - b is NaN (two infinities of one sign, or a NaN)."""
    delta = hlo.subtract(a, b)
    stable = hlo.add(hlo.maximum(a, b), hlo.log_plus_one(hlo.exponential(hlo.negate(hlo.abs(delta)))))
    return hlo.select(hlo.compare(delta, delta, hlo.ComparisonDirectionAttr.get("NE")), hlo.add(a, b), stable)


# name -> (the scalar combiner, the identity's name in reduction_identity, widen float16/bfloat16)
_CUMULATIVE: dict[str, tuple[Callable[[Value, Value], Value], str, bool]] = {
    "cumsum": (hlo.add, "reduce_sum", True),
    "cumprod": (hlo.multiply, "reduce_prod", True),
    "cummax": (hlo.maximum, "reduce_max", False),
    "cummin": (hlo.minimum, "reduce_min", False),
    "cumlogsumexp": (_logaddexp, "reduce_max", True),  # log(0) = -inf: max's identity
}


def _convert(x: Value, shape: Sequence[int], src: DType, dst: DType) -> Value:
    return x if src == dst else hlo.convert(tensor_type(shape, dst), x)


def _cumulative_rule(name: str) -> Callable[..., list[Value]]:
    combine, identity, widen = _CUMULATIVE[name]

    def rule(ctx: LoweringRuleContext, x: Value, *, axis: int, reverse: bool) -> list[Value]:
        aval = ctx.avals_in[0]
        n = aval.shape[axis]
        if not isinstance(n, int):  # jax.export's symbolic dimension: the window below needs its size
            raise NotImplementedError(
                f"xla backend: {name} along a symbolic dimension ({aval.str_short()}, axis {axis}) cannot be lowered "
                "by minijax (its reduce_window needs a static size); export with that dimension concrete"
            )
        if n == 0:
            return [x]
        dt = aval.dtype
        work = _F32 if widen and _is_float(dt) and dt.itemsize == 2 else dt
        x = _convert(x, aval.shape, dt, work)
        window = [1] * aval.ndim
        window[axis] = n
        padding = np.zeros((aval.ndim, 2), np.int64)
        padding[axis] = (0, n - 1) if reverse else (n - 1, 0)
        op = hlo.ReduceWindowOp(
            [tensor_type(aval.shape, work)],
            [x],
            [constant(reduction_identity(identity, work), work)],
            window,
            window_strides=[1] * aval.ndim,
            padding=ir.DenseIntElementsAttr.get(cast(Any, padding)),  # an (ndim, 2) int64 array (numpy's stubs miss Buffer)
        )
        scalar = tensor_type((), work)
        block = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            hlo.return_([combine(*block.arguments)])
        return [_convert(op.results[0], aval.shape, work, dt)]

    return rule


for _name in _CUMULATIVE:
    register(_name)(_cumulative_rule(_name))
