"""The jaxpr IR: variables, literals, equations, jaxprs, and their evaluation.

The text form (printing and parsing) lives in ``minijax/jaxpr_text.py``; the
type checker in ``minijax/jaxpr_check.py``. ``spec/jaxpr.md`` is the grammar.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax.core import Primitive, ShapedArray

_var_ids = itertools.count()


class Var:
    """A variable: a binder in a jaxpr, with an abstract value. Identity is the object."""

    __slots__ = ("aval", "count")

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval
        self.count = next(_var_ids)

    def __repr__(self) -> str:
        return f"Var(id={self.count}):{self.aval.str_short()}"


class DropVar(Var):
    """An equation output that nothing uses; printed as ``_``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"_:{self.aval.str_short()}"


class Literal:
    """A scalar constant written inline in the jaxpr text, e.g. ``2.0:f32[]``."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray) -> None:
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val!r}:{self.aval.str_short()})"


Atom = Var | Literal


class JaxprEqn:
    """``outvars = primitive[params] invars``."""

    __slots__ = ("invars", "outvars", "primitive", "params")

    def __init__(
        self,
        invars: list[Atom],
        outvars: list[Var],
        primitive: Primitive,
        params: dict[str, Any],
    ) -> None:
        self.invars = invars
        self.outvars = outvars
        self.primitive = primitive
        self.params = params

    def replace(self, **changes: Any) -> JaxprEqn:
        fields = {s: getattr(self, s) for s in self.__slots__}
        fields.update(changes)
        return JaxprEqn(**fields)

    def __repr__(self) -> str:
        from minijax.jaxpr_text import pp_eqn_str

        return pp_eqn_str(self)


class Jaxpr:
    """A closed-over-nothing function: constvars, invars, equations, outvars."""

    __slots__ = ("constvars", "invars", "outvars", "eqns")

    def __init__(
        self,
        constvars: Sequence[Var],
        invars: Sequence[Var],
        outvars: Sequence[Atom],
        eqns: Sequence[JaxprEqn],
    ) -> None:
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        from minijax.jaxpr_text import pp_jaxpr_str

        return pp_jaxpr_str(self)

    __repr__ = __str__

    def pretty_print(self, **kwargs: Any) -> str:
        return str(self)


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> None:
        if len(jaxpr.constvars) != len(consts):
            raise ValueError(
                f"ClosedJaxpr: {len(jaxpr.constvars)} constvars but {len(consts)} consts"
            )
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[JaxprEqn]:
        return self.jaxpr.eqns

    def __str__(self) -> str:
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **kwargs: Any) -> str:
        return str(self.jaxpr)

    # Closed jaxprs are params of higher-order primitives, which jit caches
    # key on: identity is the right notion of equality for them.
    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


def literal_value(x: Any, aval: ShapedArray) -> Any:
    """The host value stored in a Literal: a NumPy scalar of the aval's dtype."""
    return np.asarray(x, dtype=aval.dtype)[()]


def literal_operand(lit: Literal) -> Any:
    """A literal's value as an operand to bind: weakly typed literals become
    Python scalars, which is what keeps them weak (NumPy scalars are strong)."""
    val = lit.val
    return val.item() if lit.aval.weak_type and isinstance(val, np.generic) else val


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Evaluate ``jaxpr`` by binding each equation's primitive on the current trace.

    Under no transformation that computes on the default backend; under a
    transformation it replays the program into that transformation.
    """
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    env: dict[Var, Any] = {}

    def read(atom: Atom) -> Any:
        return literal_operand(atom) if isinstance(atom, Literal) else env[atom]

    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*(read(a) for a in eqn.invars), **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = (outs,)
        for v, x in zip(eqn.outvars, outs):
            if not isinstance(v, DropVar):
                env[v] = x
    return [read(v) for v in jaxpr.outvars]


def eval_closed_jaxpr(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def subjaxprs(params: dict[str, Any]) -> list[Jaxpr]:
    """The jaxprs found in an equation's params (directly or in tuples)."""
    found: list[Jaxpr] = []
    for value in params.values():
        items = value if isinstance(value, (tuple, list)) else (value,)
        for item in items:
            if isinstance(item, ClosedJaxpr):
                found.append(item.jaxpr)
            elif isinstance(item, Jaxpr):
                found.append(item)
    return found
