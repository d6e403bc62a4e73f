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

Param values are read by one small value grammar (numbers, None, booleans,
dtype names, tuples, lists, jaxprs, ``Name(k=v, ...)`` and ``Name.MEMBER``
for registered classes, and bare words as strings); the tables below let a
primitive module override it where its params need something else.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import Primitive, ShapedArray, primitive_registry
from minijax.jaxpr import Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, literal_value, name_sharing_params

__all__ = [
    "JaxprSyntaxError",
    "UnknownConst",
    "open_jaxpr_params",
    "param_completers",
    "param_constructors",
    "param_parsers",
    "parse_jaxpr",
    "parse_param_value",
]


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
# and the parse context (pass it on to ``parse_param_value``).
ParamParser = Callable[[str, "_Context"], Any]
param_parsers: dict[tuple[str, str], ParamParser] = {}

# Primitive name -> fn(params, in_avals, out_avals) returning the full params,
# restoring what the primitive's ``param_filters`` entry does not print.
ParamCompleter = Callable[[dict[str, Any], list[ShapedArray], list[ShapedArray]], dict[str, Any]]
param_completers: dict[str, ParamCompleter] = {}

# Class name -> the class, for param values printed as ``Name(k=v, ...)`` (built
# by calling it) or ``Name.MEMBER`` (an attribute of it, e.g. an enum member).
# Python's str() of a tuple shows dtypes and NumPy scalars by their repr:
# ``(dtype('int8'),)``, ``(np.float32(0.5),)``.
param_constructors: dict[str, Any] = {"dtype": np.dtype, "np": np, "bfloat16": dtypes.bfloat16}

# (primitive name, param name) of params holding an open Jaxpr; every other
# jaxpr-valued param reads back as a ClosedJaxpr.
open_jaxpr_params: set[tuple[str, str]] = set()


# --- reading characters --------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Primitive names may contain dashes (JAX's `scatter-add`).
_PRIM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*")
_VAR = re.compile(r"[a-z]+|_")
# A dtype is a short name (``f32``) or an extended dtype's name (``key<fry>``).
_TYPE = re.compile(r"([a-z]+[0-9]*|key<[a-z0-9]+>)\[([0-9,]*)\]")
_LITERAL = re.compile(r"(-?inf|nan|True|False|-?[0-9][0-9.]*(?:e[+-]?[0-9]+)?):")
_INT = re.compile(r"-?[0-9]+")
_KWARG = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_FLOAT = re.compile(r"-?(?:[0-9]+\.[0-9]*(?:e[+-]?[0-9]+)?|[0-9]+e[+-]?[0-9]+|inf)|nan")


class _Reader:
    """A cursor over ``text[pos:end]`` that reports errors with line and column."""

    def __init__(self, text: str, pos: int = 0, end: int | None = None) -> None:
        self.text = text
        self.pos = pos
        self.end = len(text) if end is None else end

    def error(self, message: str, pos: int | None = None) -> JaxprSyntaxError:
        at = self.pos if pos is None else pos
        line_no = self.text.count("\n", 0, at) + 1
        line_start = self.text.rfind("\n", 0, at) + 1
        line_end = self.text.find("\n", at)
        line = self.text[line_start : len(self.text) if line_end < 0 else line_end]
        col = at - line_start
        return JaxprSyntaxError(f"jaxpr text, line {line_no}, column {col + 1}: {message}\n  {line}\n  {' ' * col}^")

    def skip_ws(self) -> bool:
        """Skip whitespace; say whether a newline was among it."""
        start = self.pos
        while self.pos < self.end and self.text[self.pos].isspace():
            self.pos += 1
        return "\n" in self.text[start : self.pos]

    def column(self) -> int:
        return self.pos - (self.text.rfind("\n", 0, self.pos) + 1)

    def done(self) -> bool:
        self.skip_ws()
        return self.pos >= self.end

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < self.end else ""

    def at(self, s: str) -> bool:
        self.skip_ws()
        return self.text.startswith(s, self.pos) and self.pos + len(s) <= self.end

    def expect(self, s: str, what: str | None = None) -> None:
        if not self.at(s):
            found = self.text[self.pos : min(self.end, self.pos + 12)] or "end of text"
            raise self.error(f"expected {what or repr(s)}, found {found!r}")
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
            found = self.text[self.pos : min(self.end, self.pos + 12)] or "end of text"
            raise self.error(f"expected {what}, found {found!r}")
        return m

    def at_in_keyword(self) -> bool:
        """At the ``in (`` that ends a jaxpr's equations (a variable may be called ``in``)."""
        if not self.at("in"):
            return False
        after = _Reader(self.text, self.pos + 2, self.end)
        after.skip_ws()
        return after.peek() == "("

    def value_extent(self) -> int:
        """Where the param value starting here ends: at top-level whitespace or an unmatched closer."""
        return self.scan(self.pos, lambda c, depth: depth == 0 and (c.isspace() or c in ")]}"))

    def scan(self, start: int, stop: Callable[[str, int], bool]) -> int:
        """The first position from ``start``, outside quoted strings, whose character
        ``c`` satisfies ``stop(c, depth)``; ``depth`` counts the brackets open before it."""
        depth, i, quote = 0, start, ""
        while i < self.end:
            c = self.text[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = ""
            elif stop(c, depth):
                return i
            elif c in "'\"":
                quote = c
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            i += 1
        return i


class _Context:
    """What a parse shares across nesting levels: the jaxprs printed ahead, by name.

    A ``let`` definition may use one defined after it (they come in order of
    first use, so a jaxpr precedes the jaxprs it calls); each is therefore
    read on first reference, from the text span found by a first pass.
    """

    def __init__(self, text: str = "") -> None:
        self.text = text
        self.spans: dict[str, tuple[int, int]] = {}
        self.shared: dict[str, ClosedJaxpr] = {}
        self.reading: set[str] = set()
        # The result types of the equation whose name-sharing jaxpr is read next.
        self.out_hint: list[tuple[str, ShapedArray]] | None = None

    def get_shared(self, name: str) -> ClosedJaxpr | None:
        if name in self.shared or name not in self.spans:
            return self.shared.get(name)
        if name in self.reading:
            raise _Reader(self.text, self.spans[name][0]).error(f"jaxpr {name} refers to itself")
        self.reading.add(name)
        start, end = self.spans[name]
        hint, self.out_hint = self.out_hint, None  # a hint is for inline jaxprs only
        jaxpr = _parse_jaxpr(_Reader(self.text, start, end), self)
        self.out_hint = hint
        self.shared[name] = ClosedJaxpr(jaxpr, [UnknownConst(v.aval) for v in jaxpr.constvars])
        return self.shared[name]


# --- jaxprs ----------------------------------------------------------------------------


def parse_jaxpr(text: str, consts: Sequence[Any] | None = None) -> ClosedJaxpr | Jaxpr:
    """Read a jaxpr printed by ``str(jaxpr)`` (or written by hand in that format).

    Returns a ClosedJaxpr when the jaxpr has no constvars (or ``consts`` gives
    their values), and the open Jaxpr otherwise.
    """
    r = _Reader(text)
    ctx = _Context(text)
    while r.at("let "):
        r.pos += 4
        eq = text.find(" = {", r.pos)
        if eq < 0:
            raise r.error("expected 'let NAME = { lambda ... } in'")
        name = text[r.pos : eq]
        r.pos = eq + 3
        start = r.pos
        r.pos = _matching_brace(r)
        ctx.spans[name] = (start, r.pos)
        r.expect("in", "'in' after a 'let NAME = {...}' definition")
    for name in ctx.spans:
        ctx.get_shared(name)
    jaxpr = _parse_jaxpr(r, ctx)
    if not r.done():
        raise r.error("unexpected text after the jaxpr")
    if consts is not None:
        return ClosedJaxpr(jaxpr, consts)
    return ClosedJaxpr(jaxpr, []) if not jaxpr.constvars else jaxpr


def _matching_brace(r: _Reader) -> int:
    """The position just after the ``}`` matching the ``{`` at ``r.pos``."""
    end = r.scan(r.pos + 1, lambda c, depth: depth == 0 and c == "}")
    if end >= r.end:
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
        read; where it has a name, the output is one an earlier output read
        (a fresh one would have taken the result's name). Any such choice of
        the right types prints back to the same text.
        """
        name, want = hint[index] if hint is not None and index < len(hint) else ("_", None)
        fresh = [v for v in self.underscores if v not in self.output_underscores]
        seen = [v for v in self.underscores if v in self.output_underscores]
        preferred = (fresh or seen) if name == "_" else (seen or fresh)
        matching = [v for v in preferred if want is None or (v.aval.shape, v.aval.dtype) == (want.shape, want.dtype)]
        v = (matching or preferred)[0]
        self.output_underscores.add(v)
        self.read_underscores.add(v)
        return v


def _parse_type(r: _Reader) -> ShapedArray:
    m = r.require(_TYPE, "a type like f32[3,4]")
    try:
        dtype = dtypes.dtype_from_short_name(m.group(1))
    except ValueError as e:
        raise r.error(str(e), m.start()) from None
    dims = tuple(int(d) for d in m.group(2).split(",")) if m.group(2) else ()
    return ShapedArray(dims, dtype)


def _parse_binder(r: _Reader) -> tuple[str, ShapedArray, int]:
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
    lit = r.match(_LITERAL)
    if lit is not None:
        aval = _parse_type(r)
        if aval.shape:
            raise r.error(f"literals are scalars; got type {aval.str_short()}", lit.start())
        text = lit.group(1)
        value: Any = {"True": True, "False": False}.get(text)
        if value is None:
            value = int(text) if _INT.fullmatch(text) else float(text)
        return Literal(literal_value(value, aval), aval)
    m = r.require(_VAR, "a variable or a literal like 2.0:f32[]")
    return scope.lookup(m.group(), m.start())


def _parse_jaxpr(r: _Reader, ctx: _Context) -> Jaxpr:
    out_hint, ctx.out_hint = ctx.out_hint, None
    scope = _Scope(r)
    r.expect("{", "'{' opening a jaxpr")
    r.expect("lambda")
    constvars = _parse_binders(r, scope, ";")
    invars = _parse_binders(r, scope, ".")
    r.expect("let")
    eqns: list[JaxprEqn] = []
    eqn_column: int | None = None
    while not r.at_in_keyword():
        if r.at("}") or r.done():
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
    if m is None or not r.text.startswith(":", m.end()):
        return False
    if m.group() in ("inf", "nan"):
        # Also a literal's spelling (inf:f32[]); a binder starts a line at the
        # equations' column.
        return newline and r.column() <= eqn_column
    return True


def _parse_eqn(r: _Reader, scope: _Scope, ctx: _Context, eqn_column: int) -> JaxprEqn:
    binders = []
    m = _VAR.match(r.text, r.pos, r.end)
    if m is not None and r.text.startswith(":", m.end()):  # results, then '='
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
    while True:
        newline = r.skip_ws()
        if r.peek() == ";":
            r.pos += 1
            break
        if r.done() or r.peek() in "}]" or r.at_in_keyword() or _at_eqn_start(r, newline, eqn_column):
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
    out_avals = _with_weak_types(prim, in_avals, params, out_avals)
    outvars = [scope.define(name, aval, pos) for (name, _, pos), aval in zip(binders, out_avals)]
    return JaxprEqn(invars, outvars, prim, params)


def _with_weak_types(
    prim: Primitive, in_avals: list[ShapedArray], params: dict[str, Any], declared: list[ShapedArray]
) -> list[ShapedArray]:
    """The declared result types, weakly typed where the primitive's rule says so.

    When the rule fails or disagrees on shape or dtype, the declared types
    stand as written, and ``check_jaxpr`` reports the disagreement.
    """
    try:
        out = prim.abstract_eval(*in_avals, **params)
    except Exception:  # the text is checked by check_jaxpr, not here
        return declared
    computed = list(out) if prim.multiple_results else [out]
    if len(computed) != len(declared):
        return declared
    return [
        d.update(weak_type=c.weak_type) if (c.shape, c.dtype) == (d.shape, d.dtype) else d
        for c, d in zip(computed, declared)
    ]


# --- params ------------------------------------------------------------------------------


def _parse_params(r: _Reader, prim: Primitive, ctx: _Context) -> dict[str, Any]:
    r.expect("[")
    params: dict[str, Any] = {}
    while not r.at("]"):
        key = r.require(_IDENT, "a param name or ']'").group()
        r.expect("=", f"'=' after param name {key}")
        start, end = r.pos, r.value_extent()
        if start == end:
            raise r.error(f"expected a value for param {key}")
        parser = param_parsers.get((prim.name, key)) or param_parsers.get(("*", key))
        if parser is not None:
            params[key] = parser(r.text[start:end], ctx)
        else:
            sub = _Reader(r.text, start, end)
            params[key] = _parse_value(sub, ctx, prim.name, key)
            if not sub.done():
                raise sub.error(f"unexpected text in the value of param {key}")
        r.pos = end
    r.expect("]")
    return params


def parse_param_value(text: str, ctx: _Context | None = None, prim_name: str = "", key: str = "") -> Any:
    """Read one param value with the generic value grammar (for ``param_parsers`` entries)."""
    r = _Reader(text)
    value = _parse_value(r, _Context() if ctx is None else ctx, prim_name, key)
    if not r.done():
        raise r.error("unexpected text after the value")
    return value


def _parse_value(r: _Reader, ctx: _Context, prim_name: str, key: str) -> Any:
    r.skip_ws()
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
    while r.pos < r.end and not r.text[r.pos].isspace() and r.text[r.pos] not in ",()[]{}":
        r.pos += 1
    word = r.text[start : r.pos]
    if not word:
        raise r.error("expected a param value")
    if r.peek() == "(":
        return _parse_call(r, ctx, word, start)
    return _interpret_word(r, ctx, word, prim_name, key, start)


def _parse_sequence(r: _Reader, ctx: _Context, prim_name: str, key: str) -> Any:
    # Tuples and lists print like Python's; a tuple of jaxprs separates them
    # with line breaks instead of commas, so either separator is accepted.
    opener = r.peek()
    closer = ")" if opener == "(" else "]"
    r.pos += 1
    items: list[Any] = []
    trailing_comma = False
    while not r.at(closer):
        items.append(_parse_value(r, ctx, prim_name, key))
        trailing_comma = r.at(",")
        if trailing_comma:
            r.pos += 1
    r.expect(closer)
    if opener == "(" and len(items) == 1 and not trailing_comma and _as_jaxpr_like(items[0]) is None:
        return items[0]  # parentheses around a single value, as in Python
    return tuple(items) if opener == "(" else items


def _as_jaxpr_like(value: Any) -> Jaxpr | ClosedJaxpr | None:
    return value if isinstance(value, (Jaxpr, ClosedJaxpr)) else None


def _parse_quoted(r: _Reader) -> str:
    quote = r.peek()
    start = r.pos
    r.pos += 1
    while r.pos < r.end and r.text[r.pos] != quote:
        r.pos += 2 if r.text[r.pos] == "\\" else 1
    if r.pos >= r.end:
        raise r.error("unterminated string", start)
    r.pos += 1
    return str(ast.literal_eval(r.text[start : r.pos]))


def _resolve(name: str) -> Any:
    """``Name`` or ``Name.attr.attr`` through ``param_constructors``; None if unknown."""
    head, *attrs = name.split(".")
    obj = param_constructors.get(head)
    for attr in attrs:
        obj = getattr(obj, attr, None)
    return obj


def _parse_call(r: _Reader, ctx: _Context, name: str, start: int) -> Any:
    cls = _resolve(name)
    if cls is None:
        raise r.error(
            f"unknown param value constructor {name!r}; the module that defines the class "
            "registers it in minijax.jaxpr_parse.param_constructors",
            start,
        )
    r.expect("(")
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    while not r.at(")"):
        r.skip_ws()
        m = _KWARG.match(r.text, r.pos, r.end)
        if m is not None:
            r.pos = m.end()
            kwargs[m.group(1)] = _parse_value(r, ctx, "", m.group(1))
        else:
            args.append(_parse_value(r, ctx, "", ""))
        if not r.at(")"):
            r.expect(",", "',' or ')' in a constructor call")
    r.expect(")")
    return cls(*args, **kwargs)


_DTYPES_BY_NAME = {d.name: d for d in dtypes.supported_dtypes()}
_WORDS: dict[str, Any] = {"None": None, "True": True, "False": False}


def _interpret_word(r: _Reader, ctx: _Context, word: str, prim_name: str, key: str, start: int) -> Any:
    if word in _WORDS:
        return _WORDS[word]
    if _INT.fullmatch(word):
        return int(word)
    if _FLOAT.fullmatch(word):
        return float(word)
    if word in _DTYPES_BY_NAME:
        return _DTYPES_BY_NAME[word]
    shared = ctx.get_shared(word)
    if shared is not None:
        return shared.jaxpr if (prim_name, key) in open_jaxpr_params else shared
    head, dot, member = word.partition(".")
    if dot and head in param_constructors:
        value = _resolve(word)
        if value is None:
            raise r.error(f"{head} has no member {member!r}", start)
        return value
    return word


def _raw_string(text: str, ctx: _Context) -> str:
    return text


# A ``name`` param is always a string, even when it reads like a number or dtype.
param_parsers[("*", "name")] = _raw_string
