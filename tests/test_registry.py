"""Every primitive has every rule it should, a NumPy implementation, and a spec section."""

from __future__ import annotations

import pathlib
import re

import pytest

import minijax  # noqa: F401  (registers every primitive)
from minijax import core
from minijax.backend import get_backend

# The rule-table checks name each backend themselves: one run each
# (tests/conftest.py). The spec's examples compute, and run on every backend.
single = pytest.mark.single_backend

SPEC = pathlib.Path(__file__).resolve().parent.parent / "spec"


def spec_sections() -> dict[str, str]:
    """primitive name -> the text of its section, over all family pages."""
    sections: dict[str, str] = {}
    for page in sorted((SPEC / "primitives").glob("*.md")):
        parts = re.split(r"^## +`?([A-Za-z0-9_-]+)`? *$", page.read_text(), flags=re.M)
        for name, body in zip(parts[1::2], parts[2::2]):
            assert name not in sections, f"primitive {name} is specified twice"
            sections[name] = body
    return sections


def public_primitives() -> list[core.Primitive]:
    # Primitives made by tests (names starting with "test_") are not part of minijax.
    return [p for n, p in sorted(core.primitive_registry.items()) if not n.startswith("test_")]


@single
@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_every_primitive_has_an_abstract_eval_rule(prim):
    assert prim in core.abstract_eval_rules


@single
@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_the_numpy_backend_implements_every_primitive(prim):
    assert get_backend("numpy").supports(prim)


@single
@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_the_xla_backend_lowers_every_primitive(prim):
    pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")
    assert get_backend("xla").supports(prim)


@single
def test_registry_and_spec_agree():
    specified = set(spec_sections())
    registered = {p.name for p in public_primitives()}
    assert sorted(registered - specified) == [], "primitives missing from spec/primitives/"
    assert sorted(specified - registered) == [], "spec sections for primitives that do not exist"


@single
@pytest.mark.parametrize("name", sorted(spec_sections()))
def test_every_spec_section_has_the_fixed_form(name):
    body = spec_sections()[name]
    for heading in ("Semantics", "Inputs", "Outputs", "Constraints", "Example"):
        assert heading in body, f"{name}: section lacks {heading}"
    assert re.search(r"\(C1\)|\bC1\b", body), f"{name}: constraints are not labelled C1, C2, ..."
    assert "```python" in body, f"{name}: no executable example"


def _examples() -> list[tuple[str, str]]:
    found = []
    for name, body in sorted(spec_sections().items()):
        for code in re.findall(r"^```python\n(.*?)^```", body, flags=re.M | re.S):
            found.append((name, code))
    return found


@pytest.mark.parametrize(("name", "code"), _examples(), ids=[n for n, _ in _examples()])
def test_every_spec_example_runs(name, code):
    exec(compile(code, f"spec example of {name}", "exec"), {"__name__": "spec_example"})


# --- transformation rules ---------------------------------------------------------

# The primitives that are linear in (some of) their operands: each must be
# transposable. (Non-linear primitives never appear applied to a linear
# variable in a linear jaxpr, so they need no transpose rule.)
LINEAR = {
    "add", "add_any", "sub", "neg", "mul", "div", "convert_element_type", "reduce_precision",
    "copy", "select_n", "broadcast_in_dim", "reshape", "transpose", "squeeze", "rev", "slice",
    "dynamic_slice", "dynamic_update_slice", "concatenate", "pad", "split", "tile", "stack",
    "reduce_sum", "dot_general", "jit", "remat2", "custom_lin", "psum", "all_gather", "reduce_scatter",
    "cumsum", "gather", "scatter", "scatter-add", "scatter-sub", "scatter-mul", "while", "cond", "scan",
}  # fmt: skip


def _rule_tables():
    from minijax.interpreters import ad, batching

    return ad, batching


@single
@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_every_primitive_has_a_jvp_rule(prim):
    ad, _ = _rule_tables()
    assert prim in ad.primitive_jvps or prim in ad.trace_jvp_rules, f"{prim.name} has no jvp rule"


@single
@pytest.mark.parametrize("prim", [p for p in public_primitives() if p.name in LINEAR], ids=lambda p: p.name)
def test_every_linear_primitive_has_a_transpose_rule(prim):
    ad, _ = _rule_tables()
    assert prim in ad.transpose_rules, f"{prim.name} is linear but has no transpose rule"


@single
@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_every_primitive_has_a_batching_rule(prim):
    _, batching = _rule_tables()
    assert prim in batching.primitive_batchers or prim in batching.axis_rules, f"{prim.name} has no batching rule"
