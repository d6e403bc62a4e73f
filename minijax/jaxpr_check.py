"""The jaxpr type checker: is a jaxpr well formed and does every equation typecheck?

The rules (``spec/jaxpr.md``, "Typing"):

* every variable is bound once -- as a constvar, an input, or an equation
  result -- and is bound before it is read;
* literals are scalars whose value has the literal's dtype;
* each equation's result types are exactly what its primitive's abstract-eval
  rule computes from the operand types and the params: same shape, same dtype,
  same weak-type flag, and as many results as the rule gives;
* every output is bound (or a literal);
* jaxprs held in params are checked by the same rules, each on its own (they
  are closed: they see none of the outer variables);
* a ClosedJaxpr's consts match its constvars in shape and dtype.

``check_declared_types`` is the cheaper check every compilation makes: each
equation declares the result types its primitive gives (a hand-built or
parsed jaxpr may not), and no result is too large to allocate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from minijax.core import ShapedArray, get_aval, shape_size
from minijax.errors import JaxprTypeError
from minijax.jaxpr import (
    Atom,
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    NameContext,
    Var,
    naming_of,
    pp_eqn_with_names,
    subjaxprs,
)

# Primitive name -> the context in which the jaxprs its equations hold are checked: a
# shard_map binds its mesh axes' names there, which the types of collectives such as
# all_to_all depend on (minijax/shard_map.py registers it).
nested_context: dict[str, Callable[[dict[str, Any]], AbstractContextManager[None]]] = {}


def nested(name: str, params: dict[str, Any]) -> AbstractContextManager[None]:
    """The context in which the jaxprs in ``params`` of a ``name`` equation are checked."""
    make = nested_context.get(name)
    return nullcontext() if make is None else make(params)


def _nested(eqn: JaxprEqn) -> AbstractContextManager[None]:
    return nested(eqn.primitive.name, eqn.params)


__all__ = [
    "MAX_BYTES",
    "MAX_DIMENSION",
    "JaxprTypeError",
    "check_declared_types",
    "check_jaxpr",
    "check_result_sizes",
    "result_bytes",
]


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Raise JaxprTypeError unless ``jaxpr`` (and every jaxpr nested in it) typechecks."""
    if isinstance(jaxpr, ClosedJaxpr):
        _check_consts(jaxpr)
        jaxpr = jaxpr.jaxpr
    _Checker(jaxpr).run()


def _describe(aval: ShapedArray) -> str:
    return aval.str_short() + (" (weakly typed)" if aval.weak_type else "")


def _check_consts(closed: ClosedJaxpr) -> None:
    for i, (v, c) in enumerate(zip(closed.jaxpr.constvars, closed.consts)):
        try:
            aval = get_aval(c)
        except TypeError:
            continue  # a value minijax cannot type (e.g. a placeholder): nothing to compare
        if (aval.shape, aval.dtype) != (v.aval.shape, v.aval.dtype):
            raise JaxprTypeError(
                f"check_jaxpr: constant {i} has type {aval.str_short()} but its constvar is "
                f"declared {v.aval.str_short()}; pass consts matching the jaxpr's constvars."
            )


class _Checker:
    def __init__(self, jaxpr: Jaxpr) -> None:
        self.jaxpr = jaxpr
        self.bound: set[Var] = set()
        self._names: NameContext | None = None

    def names(self) -> NameContext:
        """The names ``str(jaxpr)`` prints (worked out only when reporting an error)."""
        if self._names is None:
            self._names = naming_of(self.jaxpr)
        return self._names

    def name(self, v: Var) -> str:
        return self.names().name(v)

    def fail(self, message: str, eqn: JaxprEqn | None = None) -> JaxprTypeError:
        where = f"\n  in equation: {pp_eqn_with_names(eqn, self.names())}" if eqn is not None else ""
        return JaxprTypeError(f"check_jaxpr: {message}{where}")

    def bind(self, v: Var, what: str, eqn: JaxprEqn | None = None) -> None:
        if isinstance(v, DropVar):
            return
        if v in self.bound:
            raise self.fail(f"variable {self.name(v)}:{v.aval.str_short()} ({what}) is bound more than once", eqn)
        self.bound.add(v)

    def read(self, atom: Atom, what: str, eqn: JaxprEqn | None = None) -> ShapedArray:
        if isinstance(atom, Literal):
            self.check_literal(atom, eqn)
        elif isinstance(atom, DropVar):
            raise self.fail(f"{what} reads a dropped result '_', which has no value", eqn)
        elif atom not in self.bound:
            raise self.fail(
                f"{what} reads variable {self.name(atom)}:{atom.aval.str_short()}, which is not bound before it", eqn
            )
        return atom.aval

    def check_literal(self, lit: Literal, eqn: JaxprEqn | None) -> None:
        if lit.aval.shape:
            raise self.fail(f"literal {lit.val!r} has non-scalar type {lit.aval.str_short()}; literals are scalars", eqn)
        dtype = getattr(lit.val, "dtype", None)
        if dtype is not None and dtype != lit.aval.dtype:
            raise self.fail(f"literal {lit.val!r} holds a {dtype} value but is typed {lit.aval.str_short()}", eqn)

    def run(self) -> None:
        for v in self.jaxpr.constvars:
            self.bind(v, "constvar")
        for v in self.jaxpr.invars:
            self.bind(v, "input")
        for eqn in self.jaxpr.eqns:
            self.check_eqn(eqn)
        for i, atom in enumerate(self.jaxpr.outvars):
            self.read(atom, f"output {i}")

    def check_eqn(self, eqn: JaxprEqn) -> None:
        name = eqn.primitive.name
        in_avals = [self.read(a, f"operand {i} of {name}", eqn) for i, a in enumerate(eqn.invars)]
        for sub in subjaxprs(eqn.params):
            try:
                with _nested(eqn):
                    _Checker(sub).run()
            except JaxprTypeError as e:
                raise self.fail(f"a jaxpr in the params of {name} does not typecheck:\n{e}", eqn) from None
        try:
            out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        except (TypeError, ValueError, IndexError, NotImplementedError) as e:
            raise self.fail(f"{name} rejects its operands {_avals(in_avals)}: {type(e).__name__}: {e}", eqn) from None
        computed: list[ShapedArray] = list(out) if eqn.primitive.multiple_results else [out]
        if len(computed) != len(eqn.outvars):
            raise self.fail(f"{name} produces {len(computed)} results but the equation binds {len(eqn.outvars)}", eqn)
        for i, (want, v) in enumerate(zip(computed, eqn.outvars)):
            if want != v.aval:
                raise self.fail(
                    f"result {i} of {name} is declared {_describe(v.aval)} but {name} applied to "
                    f"{_avals(in_avals)} gives {_describe(want)}",
                    eqn,
                )
        for v in eqn.outvars:
            self.bind(v, f"result of {name}", eqn)


def _avals(avals: list[ShapedArray]) -> str:
    return "(" + ", ".join(_describe(a) for a in avals) + ")"


# The largest dimension a result may have: XLA's shapes index with int32 on the
# way to the device, and no host holds 2**31 elements of a dimension anyway.
MAX_DIMENSION = 2**31 - 1

# The most bytes an array may take: XLA and NumPy count an array's bytes in an
# int64, and XLA aborts the whole process (it does not raise) when the count of
# a shape in a program overflows. Like NumPy, the count leaves out dimensions of
# size 0: XLA multiplies in order, so (2**40, 2**40, 0) overflows before the 0.
MAX_BYTES = 2**63 - 1


def result_bytes(aval: ShapedArray) -> int:
    """What ``check_result_sizes`` compares with MAX_BYTES: the bytes of ``aval``
    with its zero-sized dimensions left out (at least one byte an element)."""
    return shape_size(d for d in aval.shape if d) * max(1, aval.dtype.itemsize)


def check_result_sizes(where: str, avals: Sequence[ShapedArray]) -> None:
    """Refuse results no backend can allocate (a params typo like size=2**40) with a
    ValueError naming the operation, instead of MemoryError or an overflow inside XLA."""
    for aval in avals:
        if any(d > MAX_DIMENSION for d in aval.shape):
            raise ValueError(
                f"{where}: result shape {aval.shape} has a dimension larger than {MAX_DIMENSION}, "
                "which no backend can allocate; check the operation's shape or size parameters."
            )
        nbytes = result_bytes(aval)
        if nbytes > MAX_BYTES:
            takes = "would take" if aval.size else "has no elements, but its other dimensions count"
            raise ValueError(
                f"{where}: result {aval.str_short()} {takes} {nbytes} bytes, more than the "
                f"{MAX_BYTES} (2**63 - 1) that any backend can address; check the operation's "
                "shape or size parameters."
            )


def check_declared_types(jaxpr: Jaxpr, where: str) -> None:
    """Raise JaxprTypeError unless every equation (nested ones too) declares the
    result types its primitive gives for the operand types it declares.

    Traced jaxprs always do; a hand-built or parsed one may not, and a backend
    would then compute one type and label the result another (the NumPy
    backend casts, XLA refuses to lower). Checked once per compilation; unlike
    ``check_jaxpr`` it trusts the binding structure and compares shapes and
    dtypes only.
    """
    for eqn in jaxpr.eqns:
        in_avals = [a.aval for a in eqn.invars]
        out = eqn.primitive.abstract_eval_cached(in_avals, eqn.params)
        given = list(out) if eqn.primitive.multiple_results else [out]
        declared = [v.aval for v in eqn.outvars]
        check_result_sizes(eqn.primitive.name, given)
        if len(given) != len(declared) or any(
            (g.shape, g.dtype) != (d.shape, d.dtype) for g, d in zip(given, declared)
        ):
            raise JaxprTypeError(
                f"{where}: the equation `{eqn}` declares results "
                f"({', '.join(d.str_short() for d in declared)}), but {eqn.primitive.name} of "
                f"({', '.join(a.str_short() for a in in_avals)}) gives ({', '.join(g.str_short() for g in given)}). "
                "Fix the jaxpr (minijax.jaxpr_check.check_jaxpr checks one in full)."
            )
        with _nested(eqn):
            for sub in subjaxprs(eqn.params):
                check_declared_types(sub, where)
