"""Lowering of the collectives (spec/primitives/collectives.md).

Over positional axes psum, pmax and pmin are reductions: they lower exactly
as reduce_sum, reduce_max and reduce_min do (those primitives' rules, with
the same accumulation). A named axis is never bound on a backend -- the vmap
binding a name rewrites its collectives before anything is lowered -- so a
named axis here is an unbound name: NameError, as JAX raises. (minijax runs
on one device: there is no cross-device all-reduce to emit.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jaxlib.mlir import ir

from minijax.primitives.collectives import positional_reduction, unbound_axis_error
from minijax_xla import reductions, structural  # noqa: F401  (register reduce_sum/max/min, which psum/pmax/pmin use)
from minijax_xla.lowering import LOWERINGS, LoweringRuleContext, register

Values = Sequence[ir.Value[Any]]


def _allreduce(name: str) -> Callable[..., Values]:
    def rule(ctx: LoweringRuleContext, x: ir.Value[Any], *, axes: tuple[Any, ...], axis_index_groups: Any) -> Values:
        reduction, positional = positional_reduction(name, axes)  # NameError for a named axis
        if not positional:
            return [x]
        return LOWERINGS[reduction](ctx, x, axes=positional)

    return rule


def _named_only(name: str) -> Callable[..., Values]:
    def rule(ctx: LoweringRuleContext, *operands: ir.Value[Any], axis_name: Any, **params: Any) -> Values:
        raise unbound_axis_error(name, axis_name if isinstance(axis_name, tuple) else (axis_name,))

    return rule


for _name in ("psum", "pmax", "pmin"):
    register(_name)(_allreduce(_name))
for _name in ("all_gather", "reduce_scatter", "axis_index", "ppermute", "all_to_all"):
    register(_name)(_named_only(_name))
