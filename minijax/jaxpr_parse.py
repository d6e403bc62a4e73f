"""Reading jaxprs back from their text form (the inverse of ``minijax.jaxpr``).

``parse_jaxpr(str(jaxpr))`` rebuilds a jaxpr that prints to the same text and
evaluates to the same values. The grammar is in ``spec/jaxpr.md``. Three
things the text does not say are recovered as follows:

* **Weak types** are not printed. Inputs and literals read back strongly
  typed; each equation's results take the weak-type flag its primitive's
  abstract-eval rule gives them.
* **Hidden params** (those a ``param_filters`` entry leaves out) are restored
  by the primitive's entry in ``param_completers``.
* **Constant values** are not printed. A top-level jaxpr with constvars comes
  back as an open ``Jaxpr`` (or closed over ``consts=`` when given); a nested
  closed jaxpr's constants read back as ``UnknownConst`` placeholders.

The text may come from anyone (a shared reproducer, a case corpus), so reading
it never runs code it names: param values are built from a closed list of
literal forms (numbers, None, booleans, strings, dtype names, tuples, lists,
jaxprs, NumPy's ``dtype('int8')`` and ``np.float32(0.5)`` spellings, and
``Name(k=v, ...)`` / ``Name.MEMBER`` for classes registered by name in
``param_constructors``); nesting is limited to ``MAX_NESTING`` levels; the
time taken is linear in the text's length; and every malformed text raises
``JaxprSyntaxError``.
"""

from __future__ import annotations

import ast
import bisect
import enum
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import Primitive, ShapedArray, primitive_registry
from minijax.jaxpr import Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, literal_value, name_sharing_params
from minijax.shape_poly import DimExpr, parse_dim, parse_shape

__all__ = [
    "MAX_NESTING",
    "JaxprSyntaxError",
    "UnknownConst",
    "open_jaxpr_params",
    "param_completers",
    "param_constructors",
    "param_parsers",
    "parse_jaxpr",
    "parse_param_value",
]

# How many brackets, braces and jaxprs may be open within one another. The
# reader is recursive, and each level costs a few Python frames; this keeps a
# hostile text to a JaxprSyntaxError well before Python's recursion limit.
# Printed programs nest far less: a level per nested jaxpr and a few per param.
MAX_NESTING = 100


class JaxprSyntaxError(ValueError):
    """The text is not a jaxpr: the message gives the line, column and what was expected."""


class UnknownConst:
    """The value of a nested jaxpr's constvar, which the text does not contain."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UnknownConst({self.aval.str_short()})"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        raise ValueError(
            f"UnknownConst({self.aval.str_short()}): this constant of a nested jaxpr was "
            "read from jaxpr text, which does not hold constant values; replace it in "
            "the ClosedJaxpr's consts before evaluating."
        )


# --- tables primitive modules extend ----------------------------------------------

# (primitive name, param name) -> reader of that param's text; "*" as the
# primitive name applies to every primitive. The reader gets the value's text
# (up to the first whitespace outside brackets) and the parse context (pass it
# on to ``parse_param_value``). Whatever it raises becomes a JaxprSyntaxError.
ParamParser = Callable[[str, "_Context"], Any]
param_parsers: dict[tuple[str, str], ParamParser] = {}

# Primitive name -> fn(params, in_avals, out_avals) returning the full params,
# restoring what the primitive's ``param_filters`` entry does not print.
ParamCompleter = Callable[[dict[str, Any], list[ShapedArray], list[ShapedArray]], dict[str, Any]]
param_completers: dict[str, ParamCompleter] = {}

# Class name -> the class, for param values printed as ``Name(k=v, ...)`` (built
# by calling the class) or ``Name.MEMBER`` (an enum member, or a data attribute
# defined in the class's own body). Only classes are looked up, only by a plain
# name, and only one level deep: the text cannot reach anything else through
# them. NumPy's spellings (``dtype('int8')``, ``np.float32(0.5)``) are read by
# the parser itself, from the dtypes minijax supports.
param_constructors: dict[str, type] = {}

# (primitive name, param name) of params holding an open Jaxpr; every other
# jaxpr-valued param reads back as a ClosedJaxpr.
open_jaxpr_params: set[tuple[str, str]] = set()


# --- reading characters --------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Primitive names may contain dashes (JAX's `scatter-add`).
_PRIM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*")
_VAR = re.compile(r"[a-z]+|_")
# A dtype is a short name (``f32``, the narrow ``f8_e4m3fn``) or an extended dtype's name (``key<fry>``).
# Dimensions are integers, or (jax.export's symbolic shapes) expressions such as ``b``, ``2*b + 1``, ``floordiv(b, 2)``.
_TYPE = re.compile(r"([a-z]+[0-9]*(?:_[a-z0-9]+)?|key<[a-z0-9]+>)\[((?:[0-9]+(?:,[0-9]+)*)?|[0-9_ ()*+^,-]*[A-Za-z][A-Za-z0-9_ ()*+^,-]*)\]")
_BINDER = re.compile(r"([a-z]+|_):(" + _TYPE.pattern + ")")
_NUMBER = r"-?(?:[0-9]+(?:\.[0-9]*)?(?:e[+-]?[0-9]+)?)"
# A complex literal is Python's repr of a complex: ``1j``, ``(2+0j)``, ``(nan-infj)``.
_REAL_PART = rf"(?:-?inf|nan|{_NUMBER})"
_COMPLEX = rf"\({_REAL_PART}[-+](?:inf|nan|[0-9]+(?:\.[0-9]*)?(?:e[+-]?[0-9]+)?)j\)|{_REAL_PART}j"
_LITERAL = re.compile(rf"({_COMPLEX}|-?inf|nan|True|False|{_NUMBER}):")
_INT = re.compile(r"-?[0-9]+")
_KWARG = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_FLOAT = re.compile(r"-?(?:[0-9]+\.[0-9]*(?:e[+-]?[0-9]+)?|[0-9]+e[+-]?[0-9]+|inf)|nan")
_WS = re.compile(r"\s*")
# What ``_Reader.scan`` stops at, and the rest of a quoted string after its opening quote.
_SPECIAL = re.compile(r"[\s()\[\]{}'\"]")
_QUOTED = {q: re.compile(rf"(?:[^{q}\\]|\\.)*{q}", re.DOTALL) for q in "'\""}
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# A bare word of the value grammar: up to whitespace, a bracket or a comma.
_WORD = re.compile(r"[^\s,()\[\]{}]+")


class _Source:
    """What the readers of one text share: where its lines start (found once, so a
    column is a bisection, not a scan back) and the types and literal values read
    so far, by spelling."""

    __slots__ = ("text", "_starts", "types", "literals", "dim_names")

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self.types: dict[str, ShapedArray] = {}
        # The dimension variables the types name (a shape-polymorphic jaxpr): params' shapes may name them too.
        self.dim_names: set[str] = set()
        self.literals: dict[str, tuple[Any, ShapedArray]] = {}

    def column(self, pos: int) -> int:
        if self._starts is None:
            self._starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        return pos - self._starts[bisect.bisect_right(self._starts, pos) - 1]


class _Reader:
    """A cursor over ``text[pos:end]`` that reports errors with line and column."""

    def __init__(self, text: str, pos: int = 0, end: int | None = None, lines: _Source | None = None) -> None:
        self.text = text
        self.pos = pos
        self.end = len(text) if end is None else end
        self.lines = _Source(text) if lines is None else lines

    def error(self, message: str, pos: int | None = None) -> JaxprSyntaxError:
        at = min(self.pos if pos is None else pos, len(self.text))
        line_no = self.text.count("\n", 0, at) + 1
        line_start = self.text.rfind("\n", 0, at) + 1
        line_end = self.text.find("\n", at)
        line = self.text[line_start : len(self.text) if line_end < 0 else line_end]
        col = at - line_start
        if len(line) > 160:  # show the neighbourhood of a long line, not all of it
            cut = max(0, col - 80)
            line, col = line[cut : cut + 160], col - cut
        return JaxprSyntaxError(f"jaxpr text, line {line_no}, column {at - line_start + 1}: {message}\n  {line}\n  {' ' * col}^")

    def found(self) -> str:
        return repr(self.text[self.pos : min(self.end, self.pos + 12)] or "end of text")

    def skip_ws(self) -> bool:
        """Skip whitespace; say whether a newline was among it."""
        start = self.pos
        if start >= self.end or not self.text[start].isspace():
            return False
        m = _WS.match(self.text, start, self.end)
        self.pos = m.end() if m is not None else start
        return self.text.find("\n", start, self.pos) >= 0

    def column(self) -> int:
        return self.lines.column(self.pos)

    def done(self) -> bool:
        self.skip_ws()
        return self.pos >= self.end

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < self.end else ""

    def at(self, s: str) -> bool:
        self.skip_ws()
        return self.text.startswith(s, self.pos, self.end)

    def expect(self, s: str, what: str | None = None) -> None:
        if not self.at(s):
            raise self.error(f"expected {what or repr(s)}, found {self.found()}")
        self.pos += len(s)

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        m = pattern.match(self.text, self.pos, self.end)
        if m is not None:
            self.pos = m.end()
        return m

    def require(self, pattern: re.Pattern[str], what: str) -> re.Match[str]:
        self.skip_ws()
        m = self.match(pattern)
        if m is None:
            raise self.error(f"expected {what}, found {self.found()}")
        return m

    def at_in_keyword(self) -> bool:
        """At the ``in (`` that ends a jaxpr's equations (a variable may be called ``in``)."""
        if not self.at("in"):
            return False
        m = _WS.match(self.text, self.pos + 2, self.end)
        after = m.end() if m is not None else self.pos + 2
        return self.text.startswith("(", after, self.end)

    def value_extent(self) -> int:
        """Where the param value starting here ends: at top-level whitespace or an unmatched closer."""
        return self.scan(self.pos, stop_at_space=True)

    def scan(self, start: int, stop_at_space: bool = False) -> int:
        """The first position from ``start``, outside quoted strings and brackets
        opened after ``start``, of an unmatched closer (or of whitespace, with
        ``stop_at_space``); the end if there is none. One pass, jumping over
        runs of ordinary characters."""
        text, end, depth, i = self.text, self.end, 0, start
        while True:
            m = _SPECIAL.search(text, i, end)
            if m is None:
                return end
            i, c = m.start(), m.group()
            if c in "'\"":
                q = _QUOTED[c].match(text, i + 1, end)
                if q is None:  # unterminated: runs to the end
                    return end
                i = q.end()
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    return i
                depth -= 1
            elif stop_at_space and depth == 0:
                return i
            i += 1


class _Context:
    """What a parse shares across nesting levels: the jaxprs printed ahead, by name,
    and how deeply the reader is nested.

    A ``let`` definition may use one defined after it (they come in order of
    first use, so a jaxpr precedes the jaxprs it calls); each is therefore
    read on first reference, from the text span found by a first pass.
    """

    def __init__(self, text: str = "", lines: _Source | None = None) -> None:
        self.text = text
        self.lines = _Source(text) if lines is None else lines
        self.spans: dict[str, tuple[int, int]] = {}
        self.shared: dict[str, ClosedJaxpr] = {}
        self.reading: set[str] = set()
        # The result types of the equation whose name-sharing jaxpr is read next.
        self.out_hint: list[tuple[str, ShapedArray]] | None = None
        self.depth = 0
        # (primitive, operand types, params) -> the results' types, for
        # ``_with_weak_types``: programs repeat the same few equations.
        self.abstract_evals: dict[Any, list[Any] | None] = {}

    def enter(self, r: _Reader, pos: int) -> None:
        """One more level of nesting, opened at ``pos``; pair with ``leave``."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            self.depth -= 1
            raise r.error(
                f"nesting deeper than {MAX_NESTING} levels (brackets, braces and jaxprs within "
                "one another); the jaxpr parser reads at most that many",
                pos,
            )

    def leave(self) -> None:
        self.depth -= 1

    def get_shared(self, name: str) -> ClosedJaxpr | None:
        if name in self.shared or name not in self.spans:
            return self.shared.get(name)
        start, end = self.spans[name]
        r = _Reader(self.text, start, end, self.lines)
        if name in self.reading:
            raise r.error(f"jaxpr {name} refers to itself")
        self.reading.add(name)
        hint, self.out_hint = self.out_hint, None  # a hint is for inline jaxprs only
        jaxpr = _parse_jaxpr(r, self)
        self.out_hint = hint
        self.shared[name] = ClosedJaxpr(jaxpr, [UnknownConst(v.aval) for v in jaxpr.constvars])
        return self.shared[name]


# --- jaxprs ----------------------------------------------------------------------------


def parse_jaxpr(text: str, consts: Sequence[Any] | None = None) -> ClosedJaxpr | Jaxpr:
    """Read a jaxpr printed by ``str(jaxpr)`` (or written by hand in that format).

    Returns a ClosedJaxpr when the jaxpr has no constvars (or ``consts`` gives
    their values), and the open Jaxpr otherwise. Malformed text raises
    ``JaxprSyntaxError``; reading never runs code the text names.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_jaxpr takes the jaxpr's text as a str, got {type(text).__name__}")
    r = _Reader(text)
    ctx = _Context(text, r.lines)
    try:
        while r.at("let "):
            r.pos += 4
            eq = text.find(" = {", r.pos)
            if eq < 0:
                raise r.error("expected 'let NAME = { lambda ... } in'")
            name = text[r.pos : eq]
            if name in ctx.spans:
                raise r.error(f"jaxpr {name} is defined twice")
            r.pos = eq + 3
            start = r.pos
            r.pos = _matching_brace(r)
            ctx.spans[name] = (start, r.pos)
            r.expect("in", "'in' after a 'let NAME = {...}' definition")
        # A definition uses those after it (the jaxprs it calls): reading them
        # last first finds each one's callees already read, with no recursion.
        for name in reversed(ctx.spans):
            ctx.get_shared(name)
        jaxpr = _parse_jaxpr(r, ctx)
        if not r.done():
            raise r.error("unexpected text after the jaxpr")
    except RecursionError:
        # Only when the caller's own stack was already nearly full: MAX_NESTING
        # keeps the reader's recursion well inside Python's limit.
        raise r.error("the text nests too deeply for the Python stack left to the parser", 0) from None
    if consts is not None:
        return ClosedJaxpr(jaxpr, consts)
    return ClosedJaxpr(jaxpr, []) if not jaxpr.constvars else jaxpr


def _matching_brace(r: _Reader) -> int:
    """The position just after the ``}`` matching the ``{`` at ``r.pos``."""
    if r.peek() != "{":
        raise r.error(f"expected '{{' opening a jaxpr, found {r.found()}")
    end = r.scan(r.pos + 1)
    if end >= r.end or r.text[end] != "}":
        raise r.error("'{' without a matching '}'")
    return end + 1


class _Scope:
    """The variables of one jaxpr by name. Nested jaxprs are closed: each has its own scope."""

    def __init__(self, r: _Reader) -> None:
        self.r = r
        self.vars: dict[str, Var] = {}
        # ``_`` binders, in order. In the jaxpr being printed they are results
        # nobody reads; in a nested jaxpr they are results named after an unused
        # result of the equation holding it (spec N3), which its outputs -- and
        # maybe its equations -- read as ``_``. The text cannot say which ``_``
        # is meant; see ``lookup``.
        self.underscores: list[Var] = []
        self.read_underscores: set[Var] = set()
        self.output_underscores: set[Var] = set()
        # For ``lookup_output`` in amortized constant time: the positions in
        # ``underscores`` of the binders of each (shape, dtype), and how far
        # each list has been passed over for binders already read by an output.
        self._by_type: dict[tuple[Any, Any], list[int]] | None = None
        self._fresh_from: dict[Any, int] = {}
        self._first_seen: dict[Any, int] = {}

    def define(self, name: str, aval: ShapedArray, pos: int) -> Var:
        v = Var(aval)
        if name == "_":
            self.underscores.append(v)
        elif name in self.vars:
            raise self.r.error(f"variable {name} is defined twice", pos)
        self.vars[name] = v
        return v

    def lookup(self, name: str, pos: int) -> Var:
        """The variable a name reads; ``_`` in an equation is the latest ``_`` bound before it."""
        v = self.vars.get(name)
        if v is None:
            raise self.r.error(f"variable {name} is used but not defined", pos)
        if name == "_":
            self.read_underscores.add(v)
        return v

    def lookup_output(self, index: int, hint: list[tuple[str, ShapedArray]] | None) -> Var:
        """The ``_`` binder the ``index``-th output (an ``_``) reads.

        ``hint`` is the holding equation's results (name, type). Where that
        result is ``_`` too, the output is a ``_`` binder no earlier output
        read; where it has a name, one an earlier output read (a fresh one would
        have taken the result's name); the first such of the result's type, if
        any has it. Any such choice of the right types prints back to the same
        text. Bookkeeping per type keeps each call amortized O(1): a program
        with many ``_`` outputs reads in linear time.
        """
        name, want = hint[index] if hint is not None and index < len(hint) else ("_", None)
        if self._by_type is None:
            self._by_type = {}
            for j, u in enumerate(self.underscores):
                self._by_type.setdefault((u.aval.shape, u.aval.dtype), []).append(j)
        key = None if want is None else (want.shape, want.dtype)
        fresh_any, seen_any = self._first_fresh(None), self._first_seen.get(None)
        use_fresh = fresh_any is not None if name == "_" else seen_any is None
        if use_fresh:
            typed = None if key is None else self._first_fresh(key)
            i: int | None = fresh_any if typed is None else typed
        else:
            typed = None if key is None else self._first_seen.get(key)
            i = seen_any if typed is None else typed
        assert i is not None  # callers check that there are ``_`` binders
        v = self.underscores[i]
        if v not in self.output_underscores:
            self.output_underscores.add(v)
            for k in (None, (v.aval.shape, v.aval.dtype)):
                if i < self._first_seen.get(k, len(self.underscores)):
                    self._first_seen[k] = i
        self.read_underscores.add(v)
        return v

    def _first_fresh(self, key: tuple[Any, Any] | None) -> int | None:
        """The first ``_`` binder (of type ``key``, or of any type) no output has read yet."""
        assert self._by_type is not None
        if key is not None and key not in self._by_type:
            return None
        candidates: Sequence[int] = range(len(self.underscores)) if key is None else self._by_type[key]
        j = self._fresh_from.get(key, 0)
        # Binders are only ever marked read, so the pointer only moves forward.
        while j < len(candidates) and self.underscores[candidates[j]] in self.output_underscores:
            j += 1
        self._fresh_from[key] = j
        return candidates[j] if j < len(candidates) else None


def _parse_type(r: _Reader) -> ShapedArray:
    m = r.require(_TYPE, "a type like f32[3,4]")
    return _type(r, m, 0)


def _type(r: _Reader, m: re.Match[str], group: int) -> ShapedArray:
    """The type a ``_TYPE`` (``group`` 0) or ``_BINDER`` (``group`` 2) match spells."""
    spelling = r.text[m.start(group) : m.end()]
    known = r.lines.types.get(spelling)
    if known is not None:
        return known
    dtype_name, dims_text = m.group(group + 1), m.group(group + 2)
    try:
        dtype = dtypes.dtype_from_short_name(dtype_name)
    except (ValueError, TypeError) as e:
        raise r.error(str(e), m.start(group)) from None
    try:
        if dims_text and not dims_text.replace(",", "").isdigit():
            dims: tuple[Any, ...] = parse_shape(dims_text)
            for d in dims:
                if isinstance(d, DimExpr):
                    r.lines.dim_names |= d.variables()
        else:
            dims = tuple(int(d) for d in dims_text.split(",")) if dims_text else ()
        aval = r.lines.types[spelling] = ShapedArray(dims, dtype)
        return aval
    except (ValueError, TypeError, OverflowError) as e:  # a dimension too long to read, or refused
        raise r.error(f"bad type {spelling[:40]!r}: {e}", m.start(group)) from None


def _parse_binder(r: _Reader) -> tuple[str, ShapedArray, int]:
    r.skip_ws()
    m = _BINDER.match(r.text, r.pos, r.end)
    if m is not None:  # the common case in one match; the steps below say what is wrong otherwise
        r.pos = m.end()
        return m.group(1), _type(r, m, 2), m.start()
    m = r.require(_VAR, "a variable name")
    r.expect(":", f"':' and a type after {m.group()}")
    return m.group(), _parse_type(r), m.start()


def _parse_binders(r: _Reader, scope: _Scope, terminator: str) -> list[Var]:
    out = []
    while not r.at(terminator):
        name, aval, pos = _parse_binder(r)
        out.append(scope.define(name, aval, pos))
    r.expect(terminator)
    return out


def _parse_atom(r: _Reader, scope: _Scope) -> Atom:
    r.skip_ws()
    m = _VAR.match(r.text, r.pos, r.end)
    if m is not None and not r.text.startswith(":", m.end(), r.end):  # a variable (inf:f32[] is not)
        r.pos = m.end()
        return scope.lookup(m.group(), m.start())
    lit = r.match(_LITERAL)
    if lit is not None:
        typed = _TYPE.match(r.text, r.pos, r.end)
        if typed is not None:  # the usual spelling, maybe read before: programs repeat their constants
            known = r.lines.literals.get(r.text[lit.start() : typed.end()])
            if known is not None:
                r.pos = typed.end()
                return Literal(*known)
        aval = _parse_type(r)
        if aval.shape:
            raise r.error(f"literals are scalars; got type {aval.str_short()}", lit.start())
        text = lit.group(1)
        try:
            value: Any = {"True": True, "False": False}.get(text)
            if value is None:
                value = int(text) if _INT.fullmatch(text) else complex(text) if text.endswith(("j", "j)")) else float(text)
            val = literal_value(value, aval)
        except (ValueError, TypeError, OverflowError) as e:  # out of the dtype's range, too many digits
            raise r.error(f"literal {text[:40]}:{aval.str_short()} cannot be read: {e}", lit.start()) from None
        r.lines.literals[r.text[lit.start() : r.pos]] = (val, aval)
        return Literal(val, aval)
    m = r.require(_VAR, "a variable or a literal like 2.0:f32[]")
    return scope.lookup(m.group(), m.start())


def _parse_jaxpr(r: _Reader, ctx: _Context) -> Jaxpr:
    out_hint, ctx.out_hint = ctx.out_hint, None
    scope = _Scope(r)
    r.skip_ws()
    ctx.enter(r, r.pos)
    try:
        r.expect("{", "'{' opening a jaxpr")
        r.expect("lambda")
        constvars = _parse_binders(r, scope, ";")
        invars = _parse_binders(r, scope, ".")
        r.expect("let")
        eqns: list[JaxprEqn] = []
        eqn_column: int | None = None
        while True:
            r.skip_ws()
            c = r.peek()
            if c == "i" and r.at_in_keyword():
                break
            if c in ("}", ""):
                raise r.error("expected an equation or 'in (' ending the equations")
            eqn_column = r.column() if eqn_column is None else eqn_column
            eqns.append(_parse_eqn(r, scope, ctx, eqn_column))
        r.expect("in")
        r.expect("(")
        outvars: list[Atom] = []
        while not r.at(")"):
            if r.at("_") and not _VAR.match(r.text, r.pos + 1, r.end) and scope.underscores:
                r.pos += 1
                outvars.append(scope.lookup_output(len(outvars), out_hint))
            else:
                outvars.append(_parse_atom(r, scope))
            if not r.at(")"):
                r.expect(",", "',' or ')' in the output list")
        r.expect(")")
        r.expect("}", "'}' closing the jaxpr")
    finally:
        ctx.leave()
    _drop_unread_underscores(scope, eqns)
    return Jaxpr(constvars, invars, outvars, eqns)


def _drop_unread_underscores(scope: _Scope, eqns: list[JaxprEqn]) -> None:
    unread = {v for v in scope.underscores if v not in scope.read_underscores}
    if unread:
        for eqn in eqns:
            eqn.outvars = [DropVar(v.aval) if v in unread else v for v in eqn.outvars]


def _at_eqn_start(r: _Reader, newline: bool, eqn_column: int) -> bool:
    """Is the text here the first binder of the next equation (rather than an operand)?"""
    if newline and r.column() <= eqn_column:
        # Operands continued on a new line are indented deeper than the
        # equations; anything at the equations' column starts one (an
        # equation without results starts with its primitive's name).
        return True
    m = _VAR.match(r.text, r.pos, r.end)
    if m is None or not r.text.startswith(":", m.end(), r.end):
        return False
    if m.group() in ("inf", "nan"):
        # Also a literal's spelling (inf:f32[]); a binder starts a line at the
        # equations' column.
        return newline and r.column() <= eqn_column
    return True


def _parse_eqn(r: _Reader, scope: _Scope, ctx: _Context, eqn_column: int) -> JaxprEqn:
    binders = []
    m = _VAR.match(r.text, r.pos, r.end)
    if m is not None and r.text.startswith(":", m.end(), r.end):  # results, then '='
        while not r.at("="):
            binders.append(_parse_binder(r))
        r.expect("=")
    prim_match = r.require(_PRIM_NAME, "a primitive name")
    prim = primitive_registry.get(prim_match.group())
    if prim is None:
        raise r.error(
            f"unknown primitive {prim_match.group()!r}: no primitive of that name is registered "
            "(import the module that defines it before parsing)",
            prim_match.start(),
        )
    if r.peek() == "[":
        if prim.name in name_sharing_params:
            ctx.out_hint = [(name, aval) for name, aval, _ in binders]
        params = _parse_params(r, prim, ctx)
        ctx.out_hint = None
    else:
        params = {}
    invars: list[Atom] = []
    text, end = r.text, r.end
    while True:
        newline = r.skip_ws()
        if r.pos >= end:
            break
        c = text[r.pos]
        if c == ";":
            r.pos += 1
            break
        if c in "}]" or (c == "i" and r.at_in_keyword()) or _at_eqn_start(r, newline, eqn_column):
            break
        invars.append(_parse_atom(r, scope))
    in_avals = [a.aval for a in invars]
    out_avals = [aval for _, aval, _ in binders]
    completer = param_completers.get(prim.name)
    if completer is not None:
        try:
            params = completer(params, in_avals, out_avals)
        except Exception as e:  # a param of the wrong kind for the primitive: say where
            raise r.error(f"{prim.name}: its params cannot be read ({type(e).__name__}: {e})", prim_match.start()) from e
    out_avals = _with_weak_types(prim, in_avals, params, out_avals, ctx.abstract_evals)
    outvars = [scope.define(name, aval, pos) for (name, _, pos), aval in zip(binders, out_avals)]
    return JaxprEqn(invars, outvars, prim, params)


def _with_weak_types(
    prim: Primitive,
    in_avals: list[ShapedArray],
    params: dict[str, Any],
    declared: list[ShapedArray],
    memo: dict[Any, list[Any] | None],
) -> list[ShapedArray]:
    """The declared result types, weakly typed where the primitive's rule says so.

    When the rule fails or disagrees on shape or dtype, the declared types
    stand as written, and ``check_jaxpr`` reports the disagreement.
    """
    try:
        key = (prim, tuple(in_avals), tuple((k, _typed(v)) for k, v in params.items()))
        computed = memo[key]
    except TypeError:  # an unhashable param value: not remembered
        computed = _abstract_eval(prim, in_avals, params)
    except KeyError:
        computed = memo[key] = _abstract_eval(prim, in_avals, params)
    if computed is None or len(computed) != len(declared):
        return declared
    return [
        d.update(weak_type=c.weak_type)
        if isinstance(c, ShapedArray) and (c.shape, c.dtype) == (d.shape, d.dtype) and c.weak_type != d.weak_type
        else d
        for c, d in zip(computed, declared)
    ]


def _typed(value: Any) -> Any:
    """A param value as a key that tells apart values Python calls equal (``1``, ``True``, ``1.0``)."""
    kind = type(value)
    if kind is tuple or kind is list:
        return kind, tuple(_typed(v) for v in value)
    return kind, value


def _abstract_eval(prim: Primitive, in_avals: list[ShapedArray], params: dict[str, Any]) -> list[Any] | None:
    try:
        out = prim.abstract_eval(*in_avals, **params)
        return list(out) if prim.multiple_results else [out]
    except Exception:  # the text is checked by check_jaxpr, not here
        return None


# --- params ------------------------------------------------------------------------------


def _parse_params(r: _Reader, prim: Primitive, ctx: _Context) -> dict[str, Any]:
    r.expect("[")
    params: dict[str, Any] = {}
    while not r.at("]"):
        m = r.require(_IDENT, "a param name or ']'")
        key = m.group()
        if key in params:
            raise r.error(f"param {key} is given twice", m.start())
        r.expect("=", f"'=' after param name {key}")
        start = r.pos
        parser = param_parsers.get((prim.name, key)) or param_parsers.get(("*", key))
        if parser is not None:
            end = r.value_extent()
            if start == end:
                raise r.error(f"expected a value for param {key}")
            try:
                params[key] = parser(r.text[start:end], ctx)
            except JaxprSyntaxError:
                raise
            except Exception as e:  # the primitive's own reader refused the value: say where
                raise r.error(f"param {key}: {type(e).__name__}: {e}", start) from None
            r.pos = end
        else:
            if r.pos >= r.end or r.text[r.pos].isspace() or r.text[r.pos] in ")]}":
                raise r.error(f"expected a value for param {key}")
            params[key] = _parse_value(r, ctx, prim.name, key)
            # A value ends at whitespace or at the ']' closing the params.
            if r.pos < r.end and not (r.text[r.pos].isspace() or r.text[r.pos] == "]"):
                raise r.error(f"unexpected text in the value of param {key}")
    r.expect("]")
    return params


def parse_param_value(text: str, ctx: _Context | None = None, prim_name: str = "", key: str = "") -> Any:
    """Read one param value with the generic value grammar (for ``param_parsers`` entries)."""
    if ctx is None:
        ctx = _Context(text)
    r = _Reader(text, lines=ctx.lines if ctx.text == text else None)
    try:
        value = _parse_value(r, ctx, prim_name, key)
    except RecursionError:
        raise r.error("the text nests too deeply for the Python stack left to the parser", 0) from None
    if not r.done():
        raise r.error("unexpected text after the value")
    return value


def _parse_value(r: _Reader, ctx: _Context, prim_name: str, key: str) -> Any:
    r.skip_ws()
    if r.lines.dim_names:  # a shape-polymorphic jaxpr: its shape params may name dimension variables
        dim = _symbolic_dim(r)
        if dim is not None:
            return dim
    c = r.peek()
    if c == "{":
        jaxpr = _parse_jaxpr(r, ctx)
        if (prim_name, key) in open_jaxpr_params:
            return jaxpr
        return ClosedJaxpr(jaxpr, [UnknownConst(v.aval) for v in jaxpr.constvars])
    # ``c`` is "" at the end of the text, and "" is in every string.
    if c and c in "([":
        return _parse_sequence(r, ctx, prim_name, key)
    if c and c in "'\"":
        return _parse_quoted(r)
    start = r.pos
    m = r.match(_WORD)
    if m is None:
        raise r.error(f"expected a param value, found {r.found()}")
    word = m.group()
    if r.peek() == "(":
        return _parse_call(r, ctx, word, start)
    return _interpret_word(r, ctx, word, prim_name, key, start)


def _parse_sequence(r: _Reader, ctx: _Context, prim_name: str, key: str) -> Any:
    # Tuples and lists print like Python's; a tuple of jaxprs separates them
    # with line breaks instead of commas, so either separator is accepted.
    opener = r.peek()
    closer = ")" if opener == "(" else "]"
    ctx.enter(r, r.pos)
    try:
        r.pos += 1
        items: list[Any] = []
        trailing_comma = False
        while not r.at(closer):
            if r.done():
                raise r.error(f"expected {closer!r} closing the {opener!r}")
            items.append(_parse_value(r, ctx, prim_name, key))
            trailing_comma = r.at(",")
            if trailing_comma:
                r.pos += 1
        r.expect(closer)
    finally:
        ctx.leave()
    if opener == "(" and len(items) == 1 and not trailing_comma and _as_jaxpr_like(items[0]) is None:
        return items[0]  # parentheses around a single value, as in Python
    return tuple(items) if opener == "(" else items


def _symbolic_dim(r: _Reader) -> DimExpr | None:
    """A symbolic dimension (``b``, ``2*b + 1``) as an item of a sequence param, or None (r unmoved)."""
    r.skip_ws()
    depth, end = 0, r.pos
    while end < r.end:
        ch = r.text[end]
        if depth == 0 and ch in ",)]":
            break
        if ch in "{[\"'\n":
            return None
        depth += ch == "("
        depth -= ch == ")"
        end += 1
    text = r.text[r.pos : end].strip()
    names = set(_IDENT.findall(text)) - {"floordiv", "mod"}
    if not names or not names <= r.lines.dim_names:
        return None
    try:
        d = parse_dim(text)
    except ValueError:
        return None
    if not isinstance(d, DimExpr):
        return None
    r.pos = end
    return d


def _as_jaxpr_like(value: Any) -> Jaxpr | ClosedJaxpr | None:
    return value if isinstance(value, (Jaxpr, ClosedJaxpr)) else None


def _parse_quoted(r: _Reader) -> str:
    start = r.pos
    m = _QUOTED[r.peek()].match(r.text, start + 1, r.end)
    if m is None:
        raise r.error("unterminated string", start)
    r.pos = m.end()
    # One Python string literal, delimited above: ast.literal_eval only
    # decodes it (escapes included), it evaluates nothing.
    try:
        value = ast.literal_eval(r.text[start : r.pos])
    except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
        raise r.error(f"bad string literal: {e}", start) from None
    if not isinstance(value, str):
        raise r.error("expected a string literal", start)
    return value


# NumPy's own spellings, which Python's str() of a tuple shows: ``dtype('int8')``,
# ``dtype(bfloat16)``, ``np.float32(0.5)``, ``np.True_``. Only minijax's dtypes.
_DTYPES_BY_NAME = {d.name: d for d in dtypes.supported_dtypes() + dtypes.narrow_dtypes()}
_NUMPY_SCALARS: dict[str, type] = {
    f"np.{d.type.__name__}": d.type for d in dtypes.supported_dtypes() if d.type.__module__ == "numpy"
}
_WORDS: dict[str, Any] = {
    "None": None,
    "True": True,
    "False": False,
    "np.True_": np.True_,
    "np.False_": np.False_,
}


def _numpy_dtype(r: _Reader, args: list[Any], kwargs: dict[str, Any], start: int) -> np.dtype[Any]:
    if len(args) == 1 and not kwargs:
        (arg,) = args
        if isinstance(arg, np.dtype) and arg in _DTYPES_BY_NAME.values():
            return arg
        if isinstance(arg, str) and arg in _DTYPES_BY_NAME:
            return _DTYPES_BY_NAME[arg]
    raise r.error(f"dtype(...) takes the name of one of minijax's dtypes: {', '.join(_DTYPES_BY_NAME)}", start)


def _numpy_scalar(r: _Reader, name: str, args: list[Any], kwargs: dict[str, Any], start: int) -> Any:
    if len(args) != 1 or kwargs or type(args[0]) not in (int, float, bool):
        raise r.error(f"{name}(...) takes one number", start)
    try:
        return _NUMPY_SCALARS[name](args[0])
    except (OverflowError, ValueError, TypeError) as e:
        raise r.error(f"{name}({args[0]!r}): {e}", start) from None


def _registered(r: _Reader, name: str, start: int) -> type:
    cls = param_constructors.get(name)
    if not isinstance(cls, type):
        raise r.error(
            f"unknown param value constructor {name!r}: only classes registered by name in "
            "minijax.jaxpr_parse.param_constructors (by the module that defines them) are read back",
            start,
        )
    return cls


def _parse_call(r: _Reader, ctx: _Context, name: str, start: int) -> Any:
    # Decide what is called before reading the arguments: an unknown name is
    # an error at once, and nothing else is ever looked up.
    if name == "dtype" or name in _NUMPY_SCALARS:
        cls: type | None = None
    else:
        cls = _registered(r, name, start)
    ctx.enter(r, r.pos)
    try:
        r.expect("(")
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        while not r.at(")"):
            if r.done():
                raise r.error(f"expected ')' closing {name}(")
            m = _KWARG.match(r.text, r.pos, r.end)
            if m is not None:
                r.pos = m.end()
                if m.group(1) in kwargs:
                    raise r.error(f"{name}: argument {m.group(1)} is given twice", m.start())
                kwargs[m.group(1)] = _parse_value(r, ctx, "", m.group(1))
            else:
                args.append(_parse_value(r, ctx, "", ""))
            if not r.at(")"):
                r.expect(",", "',' or ')' in a constructor call")
        r.expect(")")
    finally:
        ctx.leave()
    if name == "dtype":
        return _numpy_dtype(r, args, kwargs, start)
    if cls is None:
        return _numpy_scalar(r, name, args, kwargs, start)
    try:
        return cls(*args, **kwargs)
    except Exception as e:  # a registered class refusing these arguments: say where
        raise r.error(f"{name}(...): {type(e).__name__}: {e}", start) from None


def _member(r: _Reader, name: str, member: str, start: int) -> Any:
    """``Name.MEMBER`` of a registered class: an enum member or a data attribute of its own body."""
    cls = _registered(r, name, start)
    if issubclass(cls, enum.Enum):
        found = cls.__members__.get(member)
        if found is not None:
            return found
    elif _IDENT.fullmatch(member) and not member.startswith("_"):
        value = vars(cls).get(member)
        if value is not None and not callable(value) and not hasattr(value, "__get__"):
            return value
    raise r.error(f"{name} has no member {member!r}", start)


def _interpret_word(r: _Reader, ctx: _Context, word: str, prim_name: str, key: str, start: int) -> Any:
    if word in _WORDS:
        return _WORDS[word]
    if _INT.fullmatch(word):
        try:
            return int(word)
        except ValueError as e:  # more digits than Python converts
            raise r.error(f"integer {word[:20]}... cannot be read: {e}", start) from None
    if _FLOAT.fullmatch(word):
        return float(word)
    if word in _DTYPES_BY_NAME:
        return _DTYPES_BY_NAME[word]
    shared = ctx.get_shared(word)
    if shared is not None:
        return shared.jaxpr if (prim_name, key) in open_jaxpr_params else shared
    if _DOTTED.fullmatch(word):
        # ``Name.MEMBER`` is always a lookup in the registry, never a string:
        # an unregistered Name is an error, as it is in ``Name(...)``, and so
        # is any longer chain of attributes.
        head, _, member = word.partition(".")
        if "." in member:
            raise r.error(f"unknown name {word!r} in a param value: only Name.MEMBER of a registered class is read", start)
        return _member(r, head, member, start)
    return word


def _raw_string(text: str, ctx: _Context) -> str:
    return text


# A ``name`` param is always a string, even when it reads like a number or dtype.
param_parsers[("*", "name")] = _raw_string
