"""The import graph: no cycles, no module importing a later layer (tools/import_graph.py has the layers)."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import textwrap
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.single_backend


def _load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


graph = _load_tool()


def test_every_module_is_in_exactly_one_layer() -> None:
    misplaced = {m: graph.layers_of(m) for m in graph.module_files() if len(graph.layers_of(m)) != 1}
    assert misplaced == {}


def test_the_import_graph_has_no_cycles() -> None:
    assert graph.cycles(graph.imports()) == []


def test_no_module_imports_a_later_layer() -> None:
    found = [f"{i.importer} -> {i.imported} (line {i.line})" for i in graph.upward(graph.imports())]
    assert found == []


def test_imports_inside_functions_are_only_for_optional_dependencies() -> None:
    # The CLI's testing commands need hypothesis, and the XLA package's loader
    # needs jaxlib: both are optional, so those imports wait for their use.
    inside = {(i.importer, i.imported) for i in graph.imports() if i.in_function}
    assert inside <= {
        ("minijax.cli", "minijax.testing.conformance"),
        ("minijax.cli", "minijax.testing.checks"),
        ("minijax.cli", "minijax.testing.runner"),
        ("minijax_xla", "minijax_xla.backend"),
    }


def test_the_checks_see_every_kind_of_import(tmp_path: pathlib.Path) -> None:
    # A tiny tree with a cycle made of a function-level import and a
    # TYPE_CHECKING one, and an engine module importing a library.
    (tmp_path / "minijax" / "lax").mkdir(parents=True)
    (tmp_path / "minijax" / "__init__.py").write_text("")
    (tmp_path / "minijax" / "lax" / "__init__.py").write_text("")
    (tmp_path / "minijax" / "core.py").write_text("def f():\n    from minijax import jaxpr\n")
    (tmp_path / "minijax" / "jaxpr.py").write_text(textwrap.dedent("""
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from . import core
        import minijax.lax.structural
    """))
    (tmp_path / "minijax" / "lax" / "structural.py").write_text("")
    found = graph.imports(tmp_path)
    assert graph.cycles(found) == [["minijax.core", "minijax.jaxpr"]]
    assert [(i.importer, i.imported) for i in graph.upward(found)] == [("minijax.jaxpr", "minijax.lax.structural")]
    assert [(i.importer, i.in_function) for i in found if i.imported == "minijax.jaxpr"] == [("minijax.core", True)]


def test_the_reading_guide_names_every_layer() -> None:
    text = (ROOT / "docs" / "reading-the-core.md").read_text()
    for layer, _ in graph.LAYERS:
        assert layer in text, f"docs/reading-the-core.md does not mention the layer {layer!r}"
