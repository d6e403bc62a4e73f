"""Every primitive has every rule it should, a NumPy implementation, and a spec section."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import minijax  # noqa: F401  (registers every primitive)
from minijax import core
from minijax.backend import get_backend

# The rule-table checks name each backend themselves: one run each
# (tests/conftest.py). The spec's examples compute, and run on every backend.
single = pytest.mark.single_backend

SPEC = pathlib.Path(__file__).resolve().parent.parent / "spec"


def spec_pages() -> dict[str, list[str]]:
    """page name (without .md) -> the primitives it specifies, in order."""
    pages = {}
    for page in sorted((SPEC / "primitives").glob("*.md")):
        parts = re.split(r"^## +`?([A-Za-z0-9_-]+)`? *$", page.read_text(), flags=re.M)
        pages[page.stem] = parts[1::2]
    return pages


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
def test_each_page_specifies_the_primitives_of_its_module():
    # One name for a family everywhere: minijax/primitives/<f>.py, the backends' <f>.py, spec/primitives/<f>.md.
    from minijax.testing.checks import families

    by_module: dict[str, set[str]] = {}
    for name, module in families().items():
        by_module.setdefault(module, set()).add(name)
    assert {page: set(names) for page, names in spec_pages().items()} == by_module


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

def _rule_tables():
    from minijax.interpreters import ad, batching

    return ad, batching


@single
@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_every_primitive_has_a_jvp_rule(prim):
    ad, _ = _rule_tables()
    assert prim in ad.primitive_jvps or prim in ad.trace_jvp_rules, f"{prim.name} has no jvp rule"


# Which primitives are linear (and so need a transpose rule) is derived, not
# listed: those whose sampler says so (minijax.testing.samplers, whose linear
# cases the transposition law checks), and those a linearization puts into a
# linear jaxpr -- found by linearizing a program for each primitive that has
# no sampler but can appear there (the ones that hold jaxprs, the collectives).


def _linear_jaxpr_primitives(f, *args, axis_env=()):
    """The primitives the linear jaxpr of ``f`` at ``args`` applies to linear
    values: the equations a backward pass transposes (it evaluates the others)."""
    import minijax as jax
    from minijax.interpreters import ad
    from minijax.jaxpr import Var

    found: set[str] = set()

    def collect(jaxpr):
        linear = set(jaxpr.invars)
        for eqn in jaxpr.eqns:
            if any(isinstance(a, Var) and a in linear for a in eqn.invars):
                found.add(eqn.primitive.name)
                linear.update(eqn.outvars)

    def linearized(*xs):
        outs, lin = ad.linearize_flat(lambda *a: [f(*a)], xs)
        collect(lin.jaxpr.jaxpr)
        return outs

    jax.make_jaxpr(linearized, axis_env=axis_env)(*args)
    return found


def _programs_with_unsampled_linear_primitives():
    import minijax as jax
    import minijax.numpy as jnp
    from minijax import lax

    @jax.custom_vjp
    def custom(x):
        return jnp.sin(x)

    custom.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (g * c,))
    x = np.float32(1.5)
    return [
        (lambda x: jax.jit(lambda y: y * 2.0)(x), (x,), ()),
        (lambda x: jax.checkpoint(lambda y: jnp.sin(y) * 2.0)(x), (x,), ()),
        (custom, (x,), ()),
        (lambda x: lax.cond(x > 0, lambda y: y * 2.0, lambda y: -y, x), (x,), ()),
        (lambda x: lax.scan(lambda c, _: (c * 2.0, c), x, None, length=3)[0], (x,), ()),
        (lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x), (x, np.int32(3)), ()),
        (lambda x: lax.psum(x, "i"), (x,), (("i", 2),)),
        (lambda x: lax.all_gather(x, "i"), (x,), (("i", 2),)),
        (lambda x: lax.psum_scatter(jnp.stack([x, x]), "i"), (x,), (("i", 2),)),
    ]


def linear_primitive_names() -> set[str]:
    from minijax.testing.samplers import SAMPLERS

    names = {name for name, sampler in SAMPLERS.items() if sampler.linear}
    for f, args, axis_env in _programs_with_unsampled_linear_primitives():
        names |= _linear_jaxpr_primitives(f, *args, axis_env=axis_env)
    return names


@single
def test_the_programs_find_the_linear_primitives_that_have_no_sampler():
    # (so that the derivation above does find them: a program that stopped
    # staging its primitive on the tangent side would make the check below vacuous)
    found = linear_primitive_names()
    for name in ("jit", "remat2", "custom_lin", "cond", "scan", "while", "psum", "all_gather", "reduce_scatter"):
        assert name in found, name


@single
@pytest.mark.parametrize("name", sorted(linear_primitive_names()))
def test_every_linear_primitive_has_a_transpose_rule(name):
    ad, _ = _rule_tables()
    assert core.primitive_registry[name] in ad.transpose_rules, f"{name} is linear but has no transpose rule"


@single
@pytest.mark.parametrize("prim", public_primitives(), ids=lambda p: p.name)
def test_every_primitive_has_a_batching_rule(prim):
    _, batching = _rule_tables()
    assert prim in batching.primitive_batchers or prim in batching.trace_batch_rules, f"{prim.name} has no batching rule"
