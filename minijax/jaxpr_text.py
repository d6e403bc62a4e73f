"""Printing jaxprs in JAX's text format.

Names are given in order of first appearance (a, b, ..., z, ba, bb, ...), and
a nested jaxpr (say jit's) reuses the names of the outer equation's operands
and results for its own binders, so a reader can follow values across levels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax import pretty as pp
from minijax.core import ShapedArray
from minijax.jaxpr import Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var


def _encode_name(n: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'ba': base 26 with letters for digits."""
    digits = []
    while True:
        n, r = divmod(n, 26)
        digits.append(chr(ord("a") + r))
        if n == 0:
            break
    return "".join(reversed(digits))


class NameContext:
    def __init__(self) -> None:
        self.names: dict[Var, str] = {}
        self.counter = 0

    def fresh(self) -> str:
        name = _encode_name(self.counter)
        self.counter += 1
        return name

    def name(self, v: Var) -> str:
        if isinstance(v, DropVar):
            return "_"
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = self.fresh()
        return name


def format_literal_value(val: Any, aval: ShapedArray) -> str:
    """How a scalar constant is written: ``2.0``, ``1e-05``, ``inf``, ``True``, ``3``."""
    x = np.asarray(val).item() if not isinstance(val, (bool, int, float)) else val
    if aval.dtype == np.bool_:
        return str(bool(x))
    if dtypes.issubdtype(aval.dtype, np.integer):
        return str(int(x))
    f = float(x)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return repr(f)


def pp_atom(atom: Atom, ctx: NameContext) -> str:
    if isinstance(atom, Literal):
        return f"{format_literal_value(atom.val, atom.aval)}:{atom.aval.str_short()}"
    return ctx.name(atom)


def pp_binder(v: Var, ctx: NameContext) -> str:
    return f"{ctx.name(v)}:{v.aval.str_short()}"


def _pp_vars(binders: list[str], sep: str = " ") -> pp.Doc:
    return pp.nest(2, pp.group(pp.join(pp.text(sep.rstrip()) + pp.brk(), [pp.text(b) for b in binders]))) if sep != " " else pp.nest(2, pp.group(pp.join(pp.brk(), [pp.text(b) for b in binders])))


# --- parameters -----------------------------------------------------------------

# Per-primitive choice of which params are shown and in what order. JAX hides
# some defaults (e.g. broadcast_in_dim's shape) to keep jaxprs readable.
ParamFilter = Callable[[dict[str, Any]], list[tuple[str, Any]]]
param_filters: dict[str, ParamFilter] = {}


def _default_param_filter(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return sorted(params.items())


def format_param_value(value: Any) -> str:
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({format_param_value(value[0])},)"
        return "(" + ", ".join(format_param_value(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(format_param_value(v) for v in value) + "]"
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


def _pp_param(key: str, value: Any, ctx: NameContext, eqn: JaxprEqn | None) -> pp.Doc:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        jaxpr = value.jaxpr if isinstance(value, ClosedJaxpr) else value
        return pp.text(f"{key}=") + pp_jaxpr_doc(jaxpr, ctx, eqn)
    if isinstance(value, tuple) and value and all(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value):
        docs = [pp_jaxpr_doc(v.jaxpr if isinstance(v, ClosedJaxpr) else v, ctx, eqn) for v in value]
        return pp.text(f"{key}=(") + pp.nest(2, pp.concat([pp.brk(""), pp.join(pp.brk(), docs)])) + pp.brk("") + pp.text(")")
    return pp.text(f"{key}={format_param_value(value)}")


def pp_eqn_doc(eqn: JaxprEqn, ctx: NameContext) -> pp.Doc:
    lhs = " ".join(pp_binder(v, ctx) if not isinstance(v, DropVar) else f"_:{v.aval.str_short()}" for v in eqn.outvars)
    shown = param_filters.get(eqn.primitive.name, _default_param_filter)(eqn.params)
    args = [pp_atom(a, ctx) for a in eqn.invars]
    params_doc: pp.Doc = pp.nil
    if shown:
        kvs = [_pp_param(k, v, ctx, eqn) for k, v in shown]
        params_doc = pp.group(
            pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), kvs)])) + pp.brk("") + pp.text("]")
        )
    return pp.concat([
        pp.text(lhs),
        pp.text(" = "),
        pp.text(eqn.primitive.name),
        params_doc,
        pp.text(" "),
        pp.text(" ".join(args)),
    ])


def pp_jaxpr_doc(jaxpr: Jaxpr, ctx: NameContext, outer_eqn: JaxprEqn | None = None) -> pp.Doc:
    if outer_eqn is not None:
        _inherit_names(jaxpr, ctx, outer_eqn)
    constvars = [pp_binder(v, ctx) for v in jaxpr.constvars]
    invars = [pp_binder(v, ctx) for v in jaxpr.invars]
    eqns = [pp_eqn_doc(e, ctx) for e in jaxpr.eqns]
    outs = [pp_atom(v, ctx) for v in jaxpr.outvars]
    outvars = pp.text("(" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")")
    return pp.group(
        pp.nest(2, pp.concat([
            pp.text("{ lambda "),
            _pp_vars(constvars),
            pp.text("; "),
            _pp_vars(invars),
            pp.text(". let"),
            pp.nest(2, pp.brk() + pp.join(pp.brk(), eqns)),
            pp.brk(),
            pp.text("in "),
            outvars,
        ])) + pp.text(" }")
    )


def _inherit_names(jaxpr: Jaxpr, ctx: NameContext, eqn: JaxprEqn) -> None:
    """Give a nested jaxpr's binders the names of the equation's own values.

    Only when the nested jaxpr's inputs line up one-to-one with the
    equation's operands (as for jit), and each name is used once.
    """
    if len(jaxpr.invars) == len(eqn.invars):
        for inner, outer in zip(jaxpr.invars, eqn.invars):
            if isinstance(outer, Var) and outer in ctx.names and inner not in ctx.names:
                ctx.names[inner] = ctx.names[outer]
    if len(jaxpr.outvars) == len(eqn.outvars):
        inner_inputs = set(jaxpr.invars) | set(jaxpr.constvars)
        for inner_out, outer_out in zip(jaxpr.outvars, eqn.outvars):
            if (
                isinstance(inner_out, Var)
                and inner_out not in inner_inputs
                and inner_out not in ctx.names
                and not isinstance(outer_out, DropVar)
                and outer_out in ctx.names
            ):
                ctx.names[inner_out] = ctx.names[outer_out]


def pp_jaxpr_str(jaxpr: Jaxpr, width: int = 80) -> str:
    return pp.format(pp_jaxpr_doc(jaxpr, NameContext()), width)


def pp_eqn_str(eqn: JaxprEqn, width: int = 80) -> str:
    return pp.format(pp_eqn_doc(eqn, NameContext()), width)


def pp_avals(avals: Sequence[ShapedArray]) -> str:
    return ", ".join(a.str_short() for a in avals)
