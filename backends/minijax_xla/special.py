"""Lowering rules for the special-function primitives (``minijax/primitives/special.py``).

``polygamma``, ``zeta`` and ``bessel_i1e`` are CHLO ops (XLA expands them when
it legalizes the module), as in JAX. XLA has no op for the others: like JAX,
they lower to a computation written with lax ops, here the series and
continued fractions of ``minijax/primitives/special_algorithms.py`` (which the
NumPy reference evaluates in float64), traced to a jaxpr at the operands'
avals and emitted in place.

Every one of them computes in float64 and rounds once to the operand dtype,
as the reference does: the results then agree with the reference's to an ulp
or so, and the inputs that overflow a narrower dtype's intermediate values
(``lgamma`` of a huge ``b`` in float32) keep their finite limits. JAX
computes in the operand dtype (float16 and bfloat16 in float32); float64 is
more accurate than that, and XLA on CPU runs it at about the same speed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, stablehlo as hlo

import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.config import enable_x64
from minijax.core import ShapedArray
from minijax.interpreters.tracing import DebugInfo, trace_to_jaxpr
from minijax.primitives import special_algorithms as alg
from minijax_xla import jaxlib_api
from minijax_xla.lowering import LoweringRuleContext, emit_jaxpr, ir_type, register

Value = Any


class _LaxOps:
    """The ``ops`` namespace of special_algorithms, on traced minijax arrays."""

    where = staticmethod(jnp.where)
    exp = staticmethod(jnp.exp)
    log = staticmethod(jnp.log)
    log1p = staticmethod(jnp.log1p)
    abs = staticmethod(jnp.abs)
    sqrt = staticmethod(jnp.sqrt)
    isnan = staticmethod(jnp.isnan)
    lgamma = staticmethod(lax.lgamma)
    digamma = staticmethod(lax.digamma)
    any = staticmethod(jnp.any)
    loop = staticmethod(lax.while_loop)

    @staticmethod
    def full_like(x: Any, value: float) -> Any:
        return jnp.full_like(x, value)


_OPS = _LaxOps()


_F64 = np.dtype(np.float64)


# Operand dtypes whose subnormals XLA on CPU reads as zero when it computes in them.
_FLUSHED = frozenset({np.dtype(dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)})


def _flush_subnormal(x: Any) -> Any:
    """A subnormal operand as zero, as XLA on CPU reads it in JAX's lowering, which computes in the operand
    dtype (for ``igamma_grad_a(1e-40, x)`` JAX gives the value at 0, NaN); in float64 it would be a normal
    number, and the series would give a value neither the reference's nor JAX's (a fuzz finding)."""
    if np.dtype(x.dtype) not in _FLUSHED:
        return x
    return jnp.where(jnp.abs(x) < float(dtypes.finfo(x.dtype).tiny), jnp.zeros_like(x), x)


def _lower_fun(name: str, fn: Callable[..., Any]) -> None:
    """Register a rule that emits ``fn(*operands, eps=..., tiny=...)``, traced with lax ops on the
    operands broadcast to the result's shape and converted to the compute dtype."""

    def rule(ctx: LoweringRuleContext, *operands: Value) -> list[Value]:
        out = ctx.avals_out[0]
        info = dtypes.finfo(_F64)

        def traced(*xs: Any) -> list[Any]:
            xs = tuple(jnp.broadcast_to(_flush_subnormal(x).astype(_F64), out.shape) for x in xs)
            result = fn(*xs, eps=float(info.eps), tiny=float(info.tiny))
            return [jnp.asarray(result).astype(out.dtype)]

        avals = [ShapedArray(a.shape, a.dtype) for a in ctx.avals_in]
        with enable_x64(True):  # float64 inside, whatever the user's setting
            closed, _ = trace_to_jaxpr(traced, avals, DebugInfo(traced, [f"x{i}" for i in range(len(avals))], name))
        consts = [jaxlib_api.dense_constant(np.asarray(c)) for c in closed.consts]
        return emit_jaxpr(ctx.module_context, closed.jaxpr, consts, list(operands))

    register(name)(rule)


_lower_fun("igamma", lambda a, x, eps, tiny: alg.igamma(_OPS, a, x, eps))
_lower_fun("igammac", lambda a, x, eps, tiny: alg.igammac(_OPS, a, x, eps))
_lower_fun("igamma_grad_a", lambda a, x, eps, tiny: alg.igamma_grad_a(_OPS, a, x, eps))
_lower_fun("regularized_incomplete_beta", lambda a, b, x, eps, tiny: alg.betainc(_OPS, a, b, x, eps, tiny))
_lower_fun("bessel_i0e", lambda x, eps, tiny: alg.bessel_i0e(_OPS, x))


def _broadcast(x: Value, shape: Sequence[int]) -> Value:
    x_type = ir.RankedTensorType(x.type)
    if list(x_type.shape) == list(shape):
        return x
    return hlo.broadcast_in_dim(ir.RankedTensorType.get(list(shape), x_type.element_type), x, list(range(x_type.rank)))


def _chlo_rule(name: str, op: Callable[..., Value]) -> None:
    """One CHLO op, applied in float64 (see the module's docstring) and rounded back."""

    def rule(ctx: LoweringRuleContext, *operands: Value) -> list[Value]:
        out = ctx.avals_out[0]
        wide_type = ir_type(ShapedArray(out.shape, _F64))
        wide = [hlo.convert(wide_type, _broadcast(x, out.shape)) for x in operands]
        result = op(*wide)
        return [hlo.convert(ir_type(out), result) if out.dtype != _F64 else result]

    register(name)(rule)


def _splat(value: float, like: Value) -> Value:
    t = ir.RankedTensorType(like.type)
    return hlo.constant(ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(t.element_type, value)))


def _polygamma(m: Value, x: Value) -> Value:
    """XLA's polygamma, with JAX 0.10.2's values at the poles (x a non-positive
    integer): +inf for odd m, NaN otherwise. XLA's expansion of the poles changed
    between jaxlib releases (0.12 gives -inf for m = 0), so they are written out."""
    result = chlo.polygamma(m, x)
    pole = hlo.and_(
        hlo.compare(x, hlo.floor(x), hlo.ComparisonDirectionAttr.get("EQ")),
        hlo.compare(x, _splat(0.0, x), hlo.ComparisonDirectionAttr.get("LE")),
    )
    odd = hlo.compare(hlo.remainder(m, _splat(2.0, m)), _splat(1.0, m), hlo.ComparisonDirectionAttr.get("EQ"))
    at_pole = hlo.select(odd, _splat(float("inf"), x), _splat(float("nan"), x))
    return hlo.select(pole, at_pole, result)


_chlo_rule("polygamma", _polygamma)
_chlo_rule("zeta", chlo.zeta)
_chlo_rule("bessel_i1e", chlo.bessel_i1e)
