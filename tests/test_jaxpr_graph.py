"""minijax.jaxpr_graph: the DOT / Mermaid drawing of a jaxpr."""

from __future__ import annotations

import doctest
import importlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.jaxpr import DropVar, Literal, Var, naming_of
from minijax.jaxpr_graph import jaxpr_graph

pytestmark = pytest.mark.single_backend  # tracing only: computes nothing


def f(x: Any) -> tuple[Any, Any]:
    return jnp.sin(x) * 2.0 + x, x


def test_dot_of_a_small_program() -> None:
    closed = jax.make_jaxpr(f)(np.ones(3, np.float32))
    assert jaxpr_graph(closed) == "\n".join(
        [
            'digraph "jaxpr" {',
            '  node [fontname="monospace"];',
            '  edge [fontname="monospace"];',
            '  input0 [label="a:f32[3]", shape=ellipse, style=filled, fillcolor="#e3f2fd"];',
            '  eqn0 [label="sin", shape=box, style="rounded,filled", fillcolor="#fff8e1"];',
            '  eqn1 [label="mul", shape=box, style="rounded,filled", fillcolor="#fff8e1"];',
            '  literal0 [label="2.0:f32[]", shape=plaintext];',
            '  eqn2 [label="add", shape=box, style="rounded,filled", fillcolor="#fff8e1"];',
            '  output0 [label="out[0]", shape=ellipse, style=filled, fillcolor="#e8f5e9"];',
            '  output1 [label="out[1]", shape=ellipse, style=filled, fillcolor="#e8f5e9"];',
            "  input0 -> eqn0;",
            '  eqn0 -> eqn1 [label="b:f32[3]"];',
            "  literal0 -> eqn1;",
            '  eqn1 -> eqn2 [label="c:f32[3]"];',
            "  input0 -> eqn2;",
            '  eqn2 -> output0 [label="d:f32[3]"];',
            "  input0 -> output1;",
            "}",
        ]
    )


def test_mermaid_of_a_small_program() -> None:
    closed = jax.make_jaxpr(f)(np.ones(3, np.float32))
    assert jaxpr_graph(closed.jaxpr, format="mermaid") == "\n".join(
        [
            "flowchart TD",
            '  input0(["a:f32[3]"])',
            '  eqn0["sin"]',
            '  eqn1["mul"]',
            '  literal0[/"2.0:f32[]"/]',
            '  eqn2["add"]',
            '  output0(["out[0]"])',
            '  output1(["out[1]"])',
            "  input0 --> eqn0",
            '  eqn0 -->|"b:f32[3]"| eqn1',
            "  literal0 --> eqn1",
            '  eqn1 -->|"c:f32[3]"| eqn2',
            "  input0 --> eqn2",
            '  eqn2 -->|"d:f32[3]"| output0',
            "  input0 --> output1",
        ]
    )


def _dot_edges(dot: str) -> list[tuple[str, str, str]]:
    return [(a, b, label or "") for a, b, label in re.findall(r"^  (\w+) -> (\w+)(?: \[label=\"(.*)\"\])?;$", dot, re.M)]


def _dot_labels(dot: str) -> dict[str, str]:
    return dict(re.findall(r"^  (\w+) \[label=\"(.*?)\", ", dot, re.M))


@pytest.mark.parametrize(
    "fun, args",
    [
        (f, (np.ones(3, np.float32),)),
        (lambda x, y: jnp.dot(x, y) - jnp.sum(y), (np.ones((2, 3), np.float32), np.ones(3, np.float32))),
        (jax.grad(lambda x: jnp.sin(x) * x), (1.0,)),  # has unused results, printed `_`
        (lambda x: lax.split(x, [1, 2]), (np.ones(3, np.float32),)),  # one equation, two results
        (lambda x: x + jnp.array([1.0, 2.0, 3.0]), (np.ones(3, np.float32),)),  # a constvar
        (lambda x: lax.cond(x > 0, lambda v: v * 2.0, lambda v: -v, x), (1.0,)),  # a nested jaxpr
    ],
)
def test_every_use_of_a_variable_is_one_arrow_from_its_producer(fun: Callable[..., Any], args: tuple[Any, ...]) -> None:
    jaxpr = jax.make_jaxpr(fun)(*args).jaxpr
    dot = jaxpr_graph(jaxpr)
    labels = _dot_labels(dot)
    names = naming_of(jaxpr)
    # Rebuild the expected arrows from the jaxpr itself.
    producer: dict[Var, str] = {}
    for i, v in enumerate(jaxpr.constvars):
        producer[v] = f"const{i}"
        assert labels[f"const{i}"] == f"{names.name(v)}:{v.aval.str_short()}"
    for i, v in enumerate(jaxpr.invars):
        producer[v] = f"input{i}"
        assert labels[f"input{i}"] == f"{names.name(v)}:{v.aval.str_short()}"
    expected: list[tuple[str, str, str]] = []
    literals = 0

    def arrow(atom: Var | Literal, target: str) -> None:
        nonlocal literals
        if isinstance(atom, Literal):
            expected.append((f"literal{literals}", target, ""))
            literals += 1
            return
        source = producer[atom]
        expected.append((source, target, f"{names.name(atom)}:{atom.aval.str_short()}" if source.startswith("eqn") else ""))

    for k, eqn in enumerate(jaxpr.eqns):
        assert labels[f"eqn{k}"] == eqn.primitive.name
        for atom in eqn.invars:
            arrow(atom, f"eqn{k}")
        for v in eqn.outvars:
            if not isinstance(v, DropVar):
                producer[v] = f"eqn{k}"
    for i, atom in enumerate(jaxpr.outvars):
        arrow(atom, f"output{i}")
    assert sorted(_dot_edges(dot)) == sorted(expected)
    # The Mermaid drawing has the same nodes and arrows.
    mermaid = jaxpr_graph(jaxpr, format="mermaid")
    mermaid_edges = re.findall(r"^  (\w+) -->(?:\|\"(.*)\"\|)? (\w+)$", mermaid, re.M)
    assert sorted((a, b, label) for a, label, b in mermaid_edges) == sorted(expected)
    assert len(re.findall(r"^  \w+[\[(]", mermaid, re.M)) == len(labels)


def test_unused_results_have_no_arrows() -> None:
    jaxpr = jax.make_jaxpr(jax.grad(lambda x: jnp.sin(x) * x))(1.0).jaxpr
    assert "_:f32[]" in str(jaxpr)
    assert "_:" not in jaxpr_graph(jaxpr)


def test_a_nested_jaxpr_is_one_box_and_can_be_drawn_on_its_own() -> None:
    closed = jax.make_jaxpr(lambda x: lax.cond(x > 0, lambda v: v * 2.0, lambda v: -v, x))(1.0)
    dot = jaxpr_graph(closed)
    assert '[label="cond", shape=box' in dot
    assert "neg" not in dot
    (cond_eqn,) = [e for e in closed.eqns if e.primitive.name == "cond"]
    false_branch = cond_eqn.params["branches"][0]
    assert '[label="neg", shape=box' in jaxpr_graph(false_branch)


def test_the_graph_name_is_quoted() -> None:
    closed = jax.make_jaxpr(lambda x: x)(1.0)
    assert jaxpr_graph(closed, name='my "f"').startswith('digraph "my \\"f\\"" {')


def test_bad_arguments_raise_with_the_fix() -> None:
    with pytest.raises(TypeError, match=r"jaxpr_graph: expected a Jaxpr or ClosedJaxpr, got function.*make_jaxpr"):
        jaxpr_graph(f)  # type: ignore[arg-type]
    closed = jax.make_jaxpr(f)(1.0)
    with pytest.raises(ValueError, match=r"format must be 'dot' or 'mermaid', got 'svg'"):
        jaxpr_graph(closed, format="svg")  # type: ignore[arg-type]


def test_the_docstring_example_runs() -> None:
    # The module, not the function: minijax exports ``jaxpr_graph`` (the
    # function) under the module's name, which ``import ... as`` would find first.
    module = importlib.import_module("minijax.jaxpr_graph")
    result = doctest.testmod(module, verbose=False)
    assert result.attempted >= 1
    assert result.failed == 0
