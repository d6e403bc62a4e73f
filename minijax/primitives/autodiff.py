"""The primitives of differentiation itself: ``add_any``, ``custom_lin`` and ``stop_gradient``,
and the identities that only a compiler or a checkpoint reads: ``name`` and ``optimization_barrier``.

``add_any`` is the sum of two tangents (or cotangents) of one type, and
``custom_lin`` the tangent side of a ``custom_vjp`` function under
linearize: the autodiff machinery (minijax/interpreters/ad.py) stages both
itself. ``stop_gradient`` is the identity whose derivative is zero.
``spec/primitives/autodiff.md`` is the written specification.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax.array import device_put_value
from minijax.core import ShapedArray, get_aval
from minijax.interpreters import ad, batching
from minijax.jaxpr import param_filters
from minijax.primitives.common import standard_primitive

# ---------------------------------------------------------------------------
# add_any


def _add_any_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape or x.dtype != y.dtype:  # add_any C1
        raise TypeError(f"add_any: both operands must have one type, got {x.str_short()} and {y.str_short()}")
    return x  # typed like its first operand, weak type included, as in JAX


add_any_p = standard_primitive("add_any", _add_any_abstract_eval)


def _add_any_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [ct, ct]


def _add_any_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim]) -> tuple[Any, batching.BatchDim]:
    # Both operands have one type, so an unbatched one only needs the batch axis
    # (inserted where the other operand has it: no transpose).
    (x, y), (dx, dy) = vals, dims
    if dx == dy:
        return add_any_p.bind(x, y), dx
    if dx is None:
        assert dy is not None
        return add_any_p.bind(batching.broadcast(x, get_aval(y).shape[dy], dy), y), dy
    if dy is None:
        return add_any_p.bind(x, batching.broadcast(y, get_aval(x).shape[dx], dx)), dx
    return add_any_p.bind(batching.moveaxis(x, dx, dy), y), dy


ad.deflinear(add_any_p, _add_any_transpose)
batching.primitive_batchers[add_any_p] = _add_any_batcher


# ---------------------------------------------------------------------------
# custom_lin: (residuals, tangents) -> tangents of a custom_vjp function.
# It is only ever transposed (which calls the function's bwd), never evaluated.


def _custom_lin_abstract_eval(*avals: ShapedArray, out_avals: Sequence[ShapedArray], **_: Any) -> list[ShapedArray]:
    return list(out_avals)


custom_lin_p = standard_primitive("custom_lin", _custom_lin_abstract_eval, multiple_results=True)
param_filters["custom_lin"] = lambda params: [(k, params[k]) for k in ("bwd", "in_zeros", "num_res", "symbolic_zeros")]

_NO_FORWARD_MODE = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def _custom_lin_transpose(
    cts: Sequence[Any], *args: Any, bwd: Any, in_zeros: Sequence[bool], num_res: int, symbolic_zeros: bool,
    res_is_array: Sequence[bool] = (), **_: Any,
) -> list[Any]:
    # A scalar Array residual is inlined into the linear jaxpr as a literal and
    # comes back here as a Python scalar; bwd must see the Array fwd returned.
    residuals = [
        device_put_value(r) if is_arr and isinstance(r, (bool, int, float, complex, np.generic)) else r
        for r, is_arr in zip(args[:num_res], res_is_array or [False] * num_res)
    ]
    if not symbolic_zeros:
        cts = [ad.instantiate_zeros(ct) for ct in cts]
    cts_in = list(bwd(list(residuals), list(cts)))
    linear_args = args[num_res:]
    # Inputs whose tangent was a symbolic zero were not passed when symbolic_zeros is on.
    if symbolic_zeros:
        cts_in = [ct for ct, z in zip(cts_in, in_zeros) if not z]
    return [None] * num_res + cts_in[: len(linear_args)]


def _custom_lin_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim], **params: Any) -> tuple[Any, Any]:
    # Batching custom_lin means evaluating the tangent map of a custom_vjp
    # function, which is forward mode.
    raise TypeError(_NO_FORWARD_MODE)


ad.primitive_jvps[custom_lin_p] = _custom_lin_jvp
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
batching.primitive_batchers[custom_lin_p] = _custom_lin_batcher


# ---------------------------------------------------------------------------
# stop_gradient


def _stop_gradient_rule(x: ShapedArray) -> ShapedArray:
    return x


stop_gradient_p = standard_primitive("stop_gradient", _stop_gradient_rule)
ad.defjvp_zero(stop_gradient_p)
batching.defvectorized(stop_gradient_p)


# ---------------------------------------------------------------------------
# name (jax.ad_checkpoint.checkpoint_name)


def _name_rule(x: ShapedArray, *, name: str) -> ShapedArray:
    # name C1: the name is a string (JAX takes any hashable; its printer shows str()).
    return x


name_p = standard_primitive("name", _name_rule)


def _name_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str) -> tuple[Any, Any]:
    # Only the primal carries the name: a checkpoint policy asks about primal values, and the
    # tangent is then linear (no name equation ever needs transposing).
    return name_p.bind(primals[0], name=name), tangents[0]


ad.primitive_jvps[name_p] = _name_jvp
batching.defvectorized(name_p)


# ---------------------------------------------------------------------------
# optimization_barrier: the identity on any number of operands, which XLA may
# not look through (no fusion, no common-subexpression elimination across it).


def _optimization_barrier_rule(*avals: ShapedArray) -> list[ShapedArray]:
    return list(avals)


optimization_barrier_p = standard_primitive("optimization_barrier", _optimization_barrier_rule, multiple_results=True)


def _optimization_barrier_transpose(cts: Sequence[Any], *operands: Any) -> list[Any]:
    # The identity's transpose, behind a barrier of its own (as JAX's is).
    return list(optimization_barrier_p.bind(*(ad.instantiate_zeros(ct) for ct in cts)))


def _optimization_barrier_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim]) -> tuple[Any, Any]:
    return optimization_barrier_p.bind(*vals), list(dims)


# Linear in every operand: the tangents pass through a barrier of their own.
ad.deflinear(optimization_barrier_p, _optimization_barrier_transpose)
batching.primitive_batchers[optimization_barrier_p] = _optimization_barrier_batcher


__all__ = ["add_any_p", "custom_lin_p", "name_p", "optimization_barrier_p", "stop_gradient_p"]
