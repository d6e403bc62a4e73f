"""Every primitive has every rule it should, a NumPy implementation, and a spec section."""

from __future__ import annotations

import pathlib
import re

import pytest

import minijax  # noqa: F401  (registers every primitive)
from minijax import core
from minijax.backend import get_backend

SPEC = pathlib.Path(__file__).resolve().parent.parent / "spec"


def spec_sections() -> dict[str, str]:
    """primitive name -> the text of its section, over all family pages."""
    sections: dict[str, str] = {}
    for page in sorted((SPEC / "primitives").glob("*.md")):
        parts = re.split(r"^## +`?([A-Za-z0-9_]+)`? *$", page.read_text(), flags=re.M)
        for name, body in zip(parts[1::2], parts[2::2]):
            assert name not in sections, f"primitive {name} is specified twice"
            sections[name] = body
    return sections


def public_primitives() -> list[core.Primitive]:
    # Primitives made by tests (names starting with "test_") are not part of minijax.
    return [p for n, p in sorted(core.primitive_registry.items()) if not n.startswith("test_")]


@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_every_primitive_has_an_abstract_eval_rule(prim):
    assert prim in core.abstract_eval_rules


@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_the_numpy_backend_implements_every_primitive(prim):
    assert get_backend("numpy").supports(prim)


@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_the_xla_backend_lowers_every_primitive(prim):
    pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")
    assert get_backend("xla").supports(prim)


def test_registry_and_spec_agree():
    specified = set(spec_sections())
    registered = {p.name for p in public_primitives()}
    assert sorted(registered - specified) == [], "primitives missing from spec/primitives/"
    assert sorted(specified - registered) == [], "spec sections for primitives that do not exist"


@pytest.mark.parametrize("name", sorted(spec_sections()))
def test_every_spec_section_has_the_fixed_form(name):
    body = spec_sections()[name]
    for heading in ("Semantics", "Inputs", "Outputs", "Constraints", "Example"):
        assert heading in body, f"{name}: section lacks {heading}"
    assert re.search(r"\(C1\)|\bC1\b", body), f"{name}: constraints are not labelled C1, C2, ..."
    assert "```python" in body, f"{name}: no executable example"
