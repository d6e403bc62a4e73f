"""Draw a jaxpr as a data-flow graph: Graphviz DOT, or Mermaid for the browser.

``jaxpr_graph(jaxpr)`` returns the text of a graph whose boxes are the
equations and whose arrows are the variables flowing between them, named as
``print(jaxpr)`` names them, so that the picture and the text can be read side
by side. DOT is rendered by Graphviz (``dot -Tsvg``); Mermaid is rendered by
GitHub and by the documentation site without any program installed.

Nested jaxprs (the branches of a ``cond``, the body of a ``scan``) are drawn
as one box, like their equation in the text; draw one of them by passing it
(``eqn.params["jaxpr"]``) to ``jaxpr_graph`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal as FormatName

from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, NameContext, Var, format_literal_value, naming_of

GraphFormat = FormatName["dot", "mermaid"]

# Node kinds, and how each format draws them. Inputs and outputs are rounded,
# equations are boxes, constants (constvars) cylinders, literals bare text.
NodeKind = FormatName["input", "const", "literal", "eqn", "output"]

_DOT_SHAPES: dict[str, str] = {
    "input": 'shape=ellipse, style=filled, fillcolor="#e3f2fd"',
    "const": 'shape=cylinder, style=filled, fillcolor="#f3e5f5"',
    "literal": "shape=plaintext",
    "eqn": 'shape=box, style="rounded,filled", fillcolor="#fff8e1"',
    "output": 'shape=ellipse, style=filled, fillcolor="#e8f5e9"',
}

# Mermaid wraps a node's label in brackets that choose its shape.
_MERMAID_BRACKETS: dict[str, tuple[str, str]] = {
    "input": ("([", "])"),
    "const": ("[(", ")]"),
    "literal": ("[/", "/]"),
    "eqn": ("[", "]"),
    "output": ("([", "])"),
}


@dataclass
class _Graph:
    """Nodes and edges in drawing order, independent of the output format."""

    nodes: list[tuple[str, NodeKind, str]] = field(default_factory=list)  # (id, kind, label)
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, label)
    counts: dict[str, int] = field(default_factory=dict)  # kind -> nodes of that kind so far

    def node(self, kind: NodeKind, label: str) -> str:
        """Add a node; its id is its kind and a number (``eqn3``), stable from run to run."""
        n = self.counts.get(kind, 0)
        self.counts[kind] = n + 1
        node_id = f"{kind}{n}"
        self.nodes.append((node_id, kind, label))
        return node_id


def _build(jaxpr: Jaxpr, names: NameContext) -> _Graph:
    graph = _Graph()
    # Which node produces each variable (an input, a constant or an equation),
    # and whether that node is an equation.
    producer: dict[Var, tuple[str, bool]] = {}

    def binder(v: Var) -> str:
        return f"{names.name(v)}:{v.aval.str_short()}"

    for v in jaxpr.constvars:
        producer[v] = (graph.node("const", binder(v)), False)
    for v in jaxpr.invars:
        producer[v] = (graph.node("input", binder(v)), False)

    def connect(atom: Var | Literal, target: str) -> None:
        if isinstance(atom, Literal):
            literal = graph.node("literal", f"{format_literal_value(atom.val, atom.aval)}:{atom.aval.str_short()}")
            graph.edges.append((literal, target, ""))
            return
        source, from_eqn = producer[atom]
        # An arrow out of an equation carries the variable it defines; an arrow
        # out of an input or constant needs no label, the node already says it.
        graph.edges.append((source, target, binder(atom) if from_eqn else ""))

    for eqn in jaxpr.eqns:
        node = graph.node("eqn", eqn.primitive.name)
        for atom in eqn.invars:
            connect(atom, node)
        for v in eqn.outvars:
            if not isinstance(v, DropVar):
                producer[v] = (node, True)
    for i, atom in enumerate(jaxpr.outvars):
        connect(atom, graph.node("output", f"out[{i}]"))
    return graph


def _quote(label: str, format: GraphFormat) -> str:
    if format == "dot":
        return '"' + label.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return '"' + label.replace('"', "#quot;") + '"'


def _to_dot(graph: _Graph, name: str) -> str:
    lines = [f"digraph {_quote(name, 'dot')} {{", '  node [fontname="monospace"];', '  edge [fontname="monospace"];']
    lines += [f"  {node_id} [label={_quote(label, 'dot')}, {_DOT_SHAPES[kind]}];" for node_id, kind, label in graph.nodes]
    for source, target, label in graph.edges:
        attrs = f" [label={_quote(label, 'dot')}]" if label else ""
        lines.append(f"  {source} -> {target}{attrs};")
    return "\n".join([*lines, "}"])


def _to_mermaid(graph: _Graph) -> str:
    lines = ["flowchart TD"]
    for node_id, kind, label in graph.nodes:
        opening, closing = _MERMAID_BRACKETS[kind]
        lines.append(f"  {node_id}{opening}{_quote(label, 'mermaid')}{closing}")
    for source, target, label in graph.edges:
        arrow = f" -->|{_quote(label, 'mermaid')}| " if label else " --> "
        lines.append(f"  {source}{arrow}{target}")
    return "\n".join(lines)


def jaxpr_graph(jaxpr: Jaxpr | ClosedJaxpr, *, format: GraphFormat = "dot", name: str = "jaxpr") -> str:
    """The data-flow graph of ``jaxpr`` as Graphviz DOT (``format="dot"``) or Mermaid (``format="mermaid"``).

    One node per input, constant, literal operand, equation and output; one
    arrow per use of a variable, labelled with the variable as ``print(jaxpr)``
    names it (``b:f32[3]``). ``name`` is the DOT graph's name. Nested jaxprs
    are drawn as their equation's box.

    >>> import minijax as jax
    >>> print(jaxpr_graph(jax.make_jaxpr(lambda x: x * 2.0)(1.0), format="mermaid"))
    flowchart TD
      input0(["a:f32[]"])
      eqn0["mul"]
      literal0[/"2.0:f32[]"/]
      output0(["out[0]"])
      input0 --> eqn0
      literal0 --> eqn0
      eqn0 -->|"b:f32[]"| output0
    """
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(
            f"jaxpr_graph: expected a Jaxpr or ClosedJaxpr, got {type(jaxpr).__name__}. "
            "Get one with jax.make_jaxpr(f)(*args)."
        )
    if format not in ("dot", "mermaid"):
        raise ValueError(f"jaxpr_graph: format must be 'dot' or 'mermaid', got {format!r}")
    graph = _build(jaxpr, naming_of(jaxpr))
    return _to_dot(graph, name) if format == "dot" else _to_mermaid(graph)


__all__ = ["GraphFormat", "jaxpr_graph"]
