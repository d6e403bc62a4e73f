"""The jaxpr IR: variables, literals, equations, jaxprs, their evaluation and their text form.

The parser of the text form is ``minijax/jaxpr_parse.py``; the type checker
``minijax/jaxpr_check.py``. ``spec/jaxpr.md`` is the grammar.
"""

from __future__ import annotations

import collections
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minijax import dtypes, pretty as pp, source_info
from minijax.core import Primitive, ShapedArray, get_aval, register_unmemoised_param_type
from minijax.source_info import SourceInfo

_var_ids = itertools.count()


class Var:
    """A variable: a binder in a jaxpr, with an abstract value. Identity is the object."""

    __slots__ = ("aval", "count")

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval
        self.count = next(_var_ids)

    # JAX's repr: the aval with its full dtype name (``Var(id=7):float32[3]``),
    # what custom interpreters print when they show ``eqn.invars``.
    def __repr__(self) -> str:
        return f"Var(id={self.count}):{self.aval.str_short(short_dtypes=False)}"


class DropVar(Var):
    """An equation output that nothing uses; printed as ``_``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


class Literal:
    """A scalar constant written inline in the jaxpr text, e.g. ``2.0:f32[]``."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray) -> None:
        self.val = val
        self.aval = aval

    # JAX's repr shows the value as ``str`` shows it (``Literal(1.0)``); a weakly
    # typed integer of the default integer dtype is a Python int in JAX's
    # jaxprs, which prints itself with its dtype (``TypedInt(1, dtype=int32)``).
    def __repr__(self) -> str:
        val = self.val
        if np.ndim(val) == 0 and self.aval.weak_type and self.aval.dtype == dtypes.default_int_dtype():
            return f"Literal(TypedInt({int(val)}, dtype={self.aval.dtype.name}))"
        return f"Literal({np.asarray(val)})"


Atom = Var | Literal


class JaxprEqn:
    """``outvars = primitive[params] invars``."""

    __slots__ = ("invars", "outvars", "primitive", "params", "source_info")

    def __init__(
        self,
        invars: list[Atom],
        outvars: list[Var],
        primitive: Primitive,
        params: dict[str, Any],
        source_info: SourceInfo | None = None,
    ) -> None:
        self.invars = invars
        self.outvars = outvars
        self.primitive = primitive
        self.params = params
        # Where the user's code bound it (minijax/source_info.py); not part of the program.
        self.source_info = source_info

    def replace(self, **changes: Any) -> JaxprEqn:
        fields = {s: getattr(self, s) for s in self.__slots__}
        fields.update(changes)
        return JaxprEqn(**fields)

    def __repr__(self) -> str:
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
        return pp_jaxpr_str(self)

    __repr__ = __str__

    def pretty_print(self, **kwargs: Any) -> str:
        return str(self)


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    # Weakly referenced by caches of compiled programs, which must not keep it
    # (and its consts) alive.
    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> None:
        if len(jaxpr.constvars) != len(consts):
            raise ValueError(
                f"ClosedJaxpr: {len(jaxpr.constvars)} constvars but {len(consts)} consts"
            )
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def literals(self) -> list[Any]:
        """JAX's other name for ``consts``: the values of the constvars."""
        return self.consts

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
    """A literal's value as an operand to bind: a weakly typed literal of a
    default dtype becomes a Python scalar, which is what keeps it weak (NumPy
    scalars are strong). (A weak literal of another dtype, such as float16,
    has no Python scalar of its type: it binds as its NumPy scalar.)"""
    val = lit.val
    if lit.aval.weak_type and isinstance(val, np.generic):
        scalar = val.item()
        if type(scalar) in (bool, int, float, complex) and get_aval(scalar) == lit.aval:
            return scalar
    return val


def bind_equation(eqn: JaxprEqn, args: Sequence[Any]) -> Any:
    return eqn.primitive.bind(*args, **eqn.params)


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any, bind: Callable[[JaxprEqn, Sequence[Any]], Any] = bind_equation) -> list[Any]:
    """Evaluate ``jaxpr`` by binding each equation's primitive on the current trace.

    Under no transformation that computes on the default backend; under a
    transformation it replays the program into that transformation. A pass
    that must treat some equations differently gives its own ``bind`` (scan's
    linearization binds the loop-invariant ones outside the loop).
    """
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    env: dict[Var, Any] = {}
    positions = source_info.override_stack()

    def read(atom: Atom) -> Any:
        return literal_operand(atom) if isinstance(atom, Literal) else env[atom]

    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        if eqn.source_info is None:
            outs = bind(eqn, [read(a) for a in eqn.invars])
        else:  # replayed equations keep the user's position (minijax/source_info.py)
            positions.append(eqn.source_info)
            try:
                outs = bind(eqn, [read(a) for a in eqn.invars])
            finally:
                positions.pop()
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


# Jaxprs in params hash by identity and hold their consts: never memoised.
register_unmemoised_param_type(Jaxpr)
register_unmemoised_param_type(ClosedJaxpr)

# ===========================================================================
# The text form: printing jaxprs in JAX's text format, byte for byte. (A
# reader following the transformations can stop here: nothing above this
# line depends on what follows but ``__str__``.)
#
# ``spec/jaxpr.md`` states the grammar, the naming rules and the layout rules
# this section implements. In short:
#
# * Layout comes from a document of text, breaks and groups (``minijax.pretty``)
#   whose shape copies the one JAX builds, so that the same width logic (80
#   columns) puts the same line breaks in the same places.
# * Variables are named in order of first appearance: ``a`` .. ``z``, ``ba`` ...
#   Equation results nothing reads are printed ``_`` (in the top-level jaxpr only).
# * A jaxpr held by a ``jit`` equation reuses the equation's names for its own
#   binders where it can (``name_sharing_params``).
# * A nested jaxpr referenced more than once in the whole tree, or with more
#   than 10 equations, is printed once, ahead of the program, as
#   ``let NAME = { ... } in``, and referred to by ``NAME``.
# --- parameters -----------------------------------------------------------------

# Per-primitive choice of which params are shown and in what order. JAX hides
# some params (e.g. broadcast_in_dim's shape when it can be read off the
# result type) to keep jaxprs readable. Primitive modules register here; the
# default shows every param, sorted by name. The parser's ``param_completers``
# (minijax.jaxpr_parse) restore what a filter hides.
ParamFilter = Callable[[dict[str, Any]], list[tuple[str, Any]]]
param_filters: dict[str, ParamFilter] = {}

# Primitive name -> the param holding a jaxpr whose binders take the names of
# the equation's operands and results when printed (JAX does this for jit
# only; minijax/primitives/calls.py registers it).
name_sharing_params: dict[str, str] = {}


def _default_param_filter(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return sorted(params.items())


def format_param_value(value: Any) -> str:
    """A param value as text: Python's ``str`` of it (so ``float32``, ``(1, 2)``, ``None``).

    A NumPy scalar type (``np.float32``, the class) prints as its dtype's name.
    """
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    return str(value)


def format_literal_value(val: Any, aval: ShapedArray) -> str:
    """How a scalar constant is written: ``2.0``, ``1e-05``, ``inf``, ``True``, ``3``, ``(2+0j)``.

    Floats of every width print as the ``repr`` of their exact float64 value,
    so an f32 ``0.1`` prints ``0.10000000149011612`` as JAX prints it.
    """
    if np.ndim(val) != 0:  # not a valid literal (check_jaxpr says so); show it anyway
        return str(np.asarray(val).tolist())
    if aval.dtype == dtypes.float0:  # a zero-size record: JAX shows NumPy's text for it
        return str(np.zeros((), dtypes.float0)[()])
    x = np.asarray(val).item() if not isinstance(val, (bool, int, float)) else val
    if aval.dtype == np.bool_:
        return str(bool(x))
    if dtypes.issubdtype(aval.dtype, np.integer):
        return str(int(x))
    if isinstance(x, complex):  # Python's repr, as JAX prints it: 1j, (2+0j), (nan-infj)
        return repr(x)
    f = float(x)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return repr(f)


# --- names ------------------------------------------------------------------------


def encode_name(n: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'ba': base 26 with letters for digits."""
    digits = []
    while True:
        n, r = divmod(n, 26)
        digits.append(chr(ord("a") + r))
        if n == 0:
            break
    return "".join(reversed(digits))


class NameContext:
    """The names given so far in one printing, and the jaxprs printed ahead as ``let``."""

    def __init__(self) -> None:
        self.names: dict[Var, str] = {}
        self.counter = 0
        # Names the counter must skip: those of the hoisted jaxprs.
        self.taken: set[str] = set()
        # Variables printed as ``_`` (unused results in the top-level jaxpr).
        self.dropped: set[Var] = set()
        # id(jaxpr) -> the name a hoisted (shared) jaxpr is referred to by.
        self.shared: dict[int, str] = {}

    def fresh(self) -> str:
        while True:
            name = encode_name(self.counter)
            self.counter += 1
            if name not in self.taken:
                return name

    def name(self, v: Var) -> str:
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = "_" if v in self.dropped else self.fresh()
        return name


# --- documents ----------------------------------------------------------------------

# Lists of binders and operands fill lines: each separator is a group of its own,
# so a line breaks only where the next item no longer starts within the width.
_FILL_SEP = pp.group(pp.brk())


def _pp_binder(v: Var, ctx: NameContext) -> pp.Doc:
    return pp.text(f"{ctx.name(v)}:{v.aval.str_short()}")


def _pp_atom(atom: Atom, ctx: NameContext) -> pp.Doc:
    if isinstance(atom, Literal):
        return pp.text(f"{format_literal_value(atom.val, atom.aval)}:{atom.aval.str_short()}")
    return pp.text(ctx.name(atom))


def _pp_binders(vs: Sequence[Var], ctx: NameContext) -> pp.Doc:
    return pp.nest(2, pp.group(pp.join(_FILL_SEP, [_pp_binder(v, ctx) for v in vs])))


def _as_jaxpr(value: Any) -> Jaxpr | None:
    if isinstance(value, ClosedJaxpr):
        return value.jaxpr
    return value if isinstance(value, Jaxpr) else None


def _pp_sub_jaxpr(jaxpr: Jaxpr, ctx: NameContext) -> pp.Doc:
    shared_name = ctx.shared.get(id(jaxpr))
    return pp.text(shared_name) if shared_name is not None else pp_jaxpr_doc(jaxpr, ctx)


def _pp_param_value(value: Any, ctx: NameContext) -> pp.Doc:
    jaxpr = _as_jaxpr(value)
    if jaxpr is not None:
        return _pp_sub_jaxpr(jaxpr, ctx)
    if type(value) in (tuple, list) and value and all(_as_jaxpr(v) is not None for v in value):
        docs = [_pp_param_value(v, ctx) for v in value]
        body = pp.concat([pp.text("("), pp.brk(""), pp.join(pp.brk(), docs)])
        return pp.group(pp.nest(2, body) + pp.brk("") + pp.text(")"))
    return pp.text(format_param_value(value))


def _pp_params(eqn: JaxprEqn, ctx: NameContext) -> pp.Doc:
    try:
        shown = param_filters.get(eqn.primitive.name, _default_param_filter)(eqn.params)
    except Exception:  # a hand-built equation's params need not fit the filter: print them as they are
        shown = _default_param_filter(eqn.params)
    if not shown:
        return pp.nil
    kvs = [pp.text(f"{k}=") + _pp_param_value(v, ctx) for k, v in shown]
    body = pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), kvs)])
    return pp.group(pp.nest(2, body) + pp.brk("") + pp.text("]"))


def _share_names(eqn: JaxprEqn, inner: Jaxpr, ctx: NameContext) -> None:
    """Let ``inner``'s binders take the names of ``eqn``'s operands and results.

    The order of naming matters for byte equality with JAX: the operands
    first, then each result that an inner equation (or constvar) computes --
    results that merely pass an input through keep names of their own -- and
    only then the equation's remaining results and the inner jaxpr's own
    variables. A variable that already has a name keeps it, and two inner
    inputs never share one name.
    """
    claimed: set[str] = set()
    for inner_in, outer_in in zip(inner.invars, eqn.invars):
        if isinstance(outer_in, Var):
            name = ctx.name(outer_in)
            if inner_in not in ctx.names and name not in claimed:
                ctx.names[inner_in] = name
                claimed.add(name)
    inner_inputs = set(inner.invars)
    for inner_out, outer_out in zip(inner.outvars, eqn.outvars):
        if isinstance(inner_out, Var) and inner_out not in inner_inputs and inner_out not in ctx.names:
            ctx.names[inner_out] = ctx.name(outer_out)


def pp_eqn_doc(eqn: JaxprEqn, ctx: NameContext) -> pp.Doc:
    key = name_sharing_params.get(eqn.primitive.name)
    if key is not None:
        inner = _as_jaxpr(eqn.params.get(key))
        if inner is not None and id(inner) not in ctx.shared:
            _share_names(eqn, inner, ctx)
    lhs = _pp_binders(eqn.outvars, ctx)  # named before the params' nested jaxprs, as JAX does
    params = _pp_params(eqn, ctx)
    args = pp.nest(2, pp.group(pp.join(_FILL_SEP, [_pp_atom(a, ctx) for a in eqn.invars])))
    if not eqn.outvars:  # JAX writes an equation without results as just its right side
        return pp.concat([pp.text(eqn.primitive.name), params, pp.text(" "), args])
    return pp.concat([lhs, pp.text(f" = {eqn.primitive.name}"), params, pp.text(" "), args])


def pp_jaxpr_doc(jaxpr: Jaxpr, ctx: NameContext) -> pp.Doc:
    constvars = _pp_binders(jaxpr.constvars, ctx)
    invars = _pp_binders(jaxpr.invars, ctx)
    eqns = [pp_eqn_doc(e, ctx) for e in jaxpr.eqns]
    outs = [_pp_atom(a, ctx) for a in jaxpr.outvars]
    outvars = pp.concat([
        pp.text("in ("),
        pp.nest(2, pp.group(pp.join(pp.text(",") + _FILL_SEP, outs))),
        pp.text(",)" if len(outs) == 1 else ")"),
    ])
    body = pp.concat([
        pp.text("{ lambda "),
        constvars,
        pp.text("; "),
        invars,
        pp.text(". let"),
        pp.nest(2, pp.brk() + pp.join(pp.brk("; "), eqns)),
        pp.brk(),
        outvars,
    ])
    return pp.group(pp.nest(2, body) + pp.text(" }"))


# --- shared jaxprs ---------------------------------------------------------------------


def _eqn_sub_jaxprs(eqn: JaxprEqn) -> Iterator[Jaxpr]:
    for value in eqn.params.values():
        # A named tuple of jaxprs (custom_linear_solve's) counts too, as in JAX,
        # though its own text prints them inline.
        for item in value if isinstance(value, (tuple, list)) else (value,):
            jaxpr = _as_jaxpr(item)
            if jaxpr is not None:
                yield jaxpr


# A nested jaxpr with more equations than this is printed ahead even when used once.
MAX_INLINE_EQNS = 10


def _shared_jaxprs(top: Jaxpr) -> list[tuple[Jaxpr, JaxprEqn]]:
    """The jaxprs under ``top`` to print ahead with ``let``, in order of first occurrence.

    Those are the jaxprs occurring more than once in the fully expanded tree,
    and those with more than MAX_INLINE_EQNS equations. Each comes with the
    first equation that holds it (its name is taken from there). A jaxpr
    inside a repeated jaxpr occurs once per occurrence of its parent; counting
    over the DAG of distinct jaxprs (in topological order) gives the same
    counts without expanding the tree.
    """
    children: dict[int, list[Jaxpr]] = {}
    first_use: dict[int, tuple[Jaxpr, JaxprEqn]] = {}
    postorder: list[Jaxpr] = []

    def visit(jaxpr: Jaxpr) -> None:
        kids = children[id(jaxpr)] = []
        for eqn in jaxpr.eqns:
            for sub in _eqn_sub_jaxprs(eqn):
                kids.append(sub)
                if id(sub) not in first_use:
                    first_use[id(sub)] = (sub, eqn)
                    visit(sub)
        postorder.append(jaxpr)

    visit(top)
    counts: dict[int, int] = {id(top): 1}
    for jaxpr in reversed(postorder):
        for sub in children[id(jaxpr)]:
            counts[id(sub)] = counts.get(id(sub), 0) + counts[id(jaxpr)]
    # JAX lists them in breadth-first order: every jaxpr of one level (all
    # four of a custom_linear_solve, say) before those nested in them.
    order: list[int] = []
    queue, queued = collections.deque([top]), {id(top)}
    while queue:
        for sub in children[id(queue.popleft())]:
            if id(sub) not in queued:
                queued.add(id(sub))
                order.append(id(sub))
                queue.append(sub)
    return [first_use[k] for k in order if counts[k] > 1 or len(first_use[k][0].eqns) > MAX_INLINE_EQNS]


def _shared_base_name(eqn: JaxprEqn) -> str:
    # JAX names a hoisted jaxpr after the function it was traced from (the
    # equation's ``name``), with the angle brackets of ``<lambda>`` stripped.
    name = eqn.params.get("name")
    return name.strip("<>") if isinstance(name, str) else "jaxpr"


def _hoist_shared(top: Jaxpr, ctx: NameContext) -> list[Jaxpr]:
    hoisted = []
    uses: dict[str, int] = {}
    for jaxpr, eqn in _shared_jaxprs(top):
        base = _shared_base_name(eqn)
        # Like JAX: a per-base counter, not a check against every name in use.
        n = uses.get(base, 0)
        uses[base] = n + 1
        name = base if n == 0 else f"{base}{n}"
        ctx.shared[id(jaxpr)] = name
        ctx.taken.add(name)
        hoisted.append(jaxpr)
    return hoisted


def _unused_results(jaxpr: Jaxpr) -> set[Var]:
    used = {a for a in jaxpr.outvars if isinstance(a, Var)}
    for eqn in jaxpr.eqns:
        used.update(a for a in eqn.invars if isinstance(a, Var))
    return {v for eqn in jaxpr.eqns for v in eqn.outvars if v not in used or isinstance(v, DropVar)}


def pp_toplevel_jaxpr_doc(jaxpr: Jaxpr, ctx: NameContext | None = None) -> pp.Doc:
    """The document for ``str(jaxpr)``: shared jaxprs first, then the program."""
    ctx = NameContext() if ctx is None else ctx
    parts: list[pp.Doc] = []
    for shared in _hoist_shared(jaxpr, ctx):
        parts += [pp.text(f"let {ctx.shared[id(shared)]} = "), pp_jaxpr_doc(shared, ctx), pp.text(" in"), pp.brk()]
    ctx.dropped = _unused_results(jaxpr)
    parts.append(pp_jaxpr_doc(jaxpr, ctx))
    return pp.concat(parts)


# --- entry points -------------------------------------------------------------------------


def pp_jaxpr_str(jaxpr: Jaxpr, width: int = 80) -> str:
    return pp.format(pp_toplevel_jaxpr_doc(jaxpr), width)


def pp_eqn_str(eqn: JaxprEqn, width: int = 80) -> str:
    """One equation on its own, named afresh (what ``repr(eqn)`` shows)."""
    return pp.format(pp_eqn_doc(eqn, NameContext()), width)


def naming_of(jaxpr: Jaxpr) -> NameContext:
    """The names ``str(jaxpr)`` gives to ``jaxpr``'s variables (for error messages)."""
    ctx = NameContext()
    pp_toplevel_jaxpr_doc(jaxpr, ctx)
    return ctx


def pp_eqn_with_names(eqn: JaxprEqn, ctx: NameContext, width: int = 80) -> str:
    """``eqn`` printed with the names in ``ctx`` (see ``naming_of``)."""
    return pp.format(pp_eqn_doc(eqn, ctx), width)
