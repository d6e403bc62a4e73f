"""A small Wadler-style pretty printer: the layout engine behind the jaxpr text.

A document is text, breaks and groups. A group is printed on one line when it
fits in the remaining width; otherwise its breaks become newlines indented to
the current nesting. This is what makes short jaxprs print on one line and long
ones one equation per line, the way JAX prints them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


class Doc:
    def __add__(self, other: Doc) -> Doc:
        return concat([self, other])


@dataclass(frozen=True)
class Text(Doc):
    text: str


@dataclass(frozen=True)
class Break(Doc):
    """A space (or ``text``) when its group is flat; a newline when broken."""

    text: str = " "


@dataclass(frozen=True)
class Concat(Doc):
    children: tuple[Doc, ...]


@dataclass(frozen=True)
class Nest(Doc):
    indent: int
    child: Doc


@dataclass(frozen=True)
class Group(Doc):
    child: Doc


def text(s: str) -> Doc:
    return Text(s)


def brk(s: str = " ") -> Doc:
    return Break(s)


def concat(docs: Iterable[Doc]) -> Doc:
    return Concat(tuple(docs))


def nest(indent: int, doc: Doc) -> Doc:
    return Nest(indent, doc)


def group(doc: Doc) -> Doc:
    return Group(doc)


def join(sep: Doc, docs: Iterable[Doc]) -> Doc:
    out: list[Doc] = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return concat(out)


nil = Concat(())


def _flat_width(doc: Doc, limit: int) -> int:
    """Width of ``doc`` printed flat, stopping early once past ``limit``."""
    width = 0
    stack = [doc]
    while stack and width <= limit:
        d = stack.pop()
        if isinstance(d, Text):
            width += len(d.text)
        elif isinstance(d, Break):
            width += len(d.text)
        elif isinstance(d, Concat):
            stack.extend(reversed(d.children))
        elif isinstance(d, (Nest, Group)):
            stack.append(d.child)
    return width


def format(doc: Doc, width: int = 80) -> str:
    out: list[str] = []
    col = 0
    # (indent, flat?, doc)
    stack: list[tuple[int, bool, Doc]] = [(0, False, doc)]
    while stack:
        indent, flat, d = stack.pop()
        if isinstance(d, Text):
            out.append(d.text)
            col += len(d.text)
        elif isinstance(d, Break):
            if flat:
                out.append(d.text)
                col += len(d.text)
            else:
                out.append("\n" + " " * indent)
                col = indent
        elif isinstance(d, Concat):
            stack.extend((indent, flat, c) for c in reversed(d.children))
        elif isinstance(d, Nest):
            stack.append((indent + d.indent, flat, d.child))
        elif isinstance(d, Group):
            fits = flat or _flat_width(d.child, width - col) <= width - col
            stack.append((indent, fits, d.child))
    return "".join(out)
