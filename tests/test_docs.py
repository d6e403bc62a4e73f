"""Every ```python block in docs/ runs, and prints what the page says it prints.

A page's python blocks run in order in one namespace, in a fresh interpreter
(so one page's flags or imports cannot leak into another), in an empty
temporary directory (so a page cannot write into the repository). A ```text
block that comes right after a python block is that block's expected stdout,
and must match exactly; so is a ```mermaid block (a diagram the site draws,
e.g. the output of ``jaxpr_graph(..., format="mermaid")``).

Figures: a page shows a figure as ``![...](.../figures/NAME)``, and its own
code must write ``NAME`` into the working directory. The committed copy in
docs/figures/ is made by ``tools/make_figures.py``, which runs the same code;
the test checks that the page still makes the figure, in the committed
figure's format and pixel size.

The Korean pages (docs/ko/) must carry the English pages' code blocks
unchanged (so they are not run a second time). Links between pages must resolve, and the site's navigation
(mkdocs.yml) must list every page that exists and only those.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.single_backend  # each page runs in its own interpreter, on the default backend

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FIGURES = DOCS / "figures"
PAGES = sorted(DOCS.rglob("*.md"))

# Pages with a Korean translation at docs/ko/<name>.
TRANSLATED = [
    "complex.md",  # complex (issue 19)
    "index.md",
    "install.md",
    "first-program.md",
    "101/index.md",
    "101/accelerated-numpy.md",
    "101/jit.md",
    "101/grad.md",
    "101/vmap.md",
    "101/pytrees.md",
    "101/random-numbers.md",
    "101/control-flow.md",
    "101/state.md",
    "101/training.md",
    "101/sharp-bits.md",
    "example-libraries.md",
    "ecosystem.md",  # compat (issue 24)
    "refs.md",  # refs (issue 24)
    "convolutions.md",
    "windowed-reductions.md",
    "image.md",
    "custom-interpreters.md",  # extend (issue 20)
    "checkpointing.md",  # remat (issue 20)
    "aot.md",  # stagesx (issue 20)
    "checkify.md",  # checkify (issue 20)
    "parallelism.md",  # sharding (issue 17)
]

# The pages whose code runs. A Korean translation carries its English page's
# blocks unchanged, outputs included (test_korean_pages_carry_the_same_code),
# so running it again would test nothing new.
RUN_PAGES = [p for p in PAGES if not p.is_relative_to(DOCS / "ko")]

# Languages of the expected-output blocks that may follow a python block.
OUTPUT_LANGS = ("text", "mermaid")

FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]*figures/([^)\s/]+))\)")


@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the opening fence
    start: int  # offset of the opening fence
    end: int  # offset just past the closing fence


def blocks_of(text: str) -> list[Block]:
    return [
        Block(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1, m.start(), m.end())
        for m in FENCE.finditer(text)
    ]


def examples_of(text: str) -> list[tuple[Block, str | None]]:
    """Each python block with its expected stdout (None when none is given)."""
    blocks = blocks_of(text)
    examples: list[tuple[Block, str | None]] = []
    for i, block in enumerate(blocks):
        if block.lang != "python":
            continue
        expected = None
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        if nxt is not None and nxt.lang in OUTPUT_LANGS and not text[block.end : nxt.start].strip():
            expected = nxt.code
        examples.append((block, expected))
    return examples


def figures_of(text: str) -> list[str]:
    """The file names of the figures (docs/figures/NAME) a page shows."""
    return [name for _, name in IMAGE.findall(text)]


# Runs in the child interpreter: reads [[name, code], ...] from stdin, runs
# each in one namespace, and reports each block's stdout (or its traceback).
RUNNER = r"""
import contextlib, io, json, sys, traceback
blocks = json.load(sys.stdin)
namespace = {"__name__": "__main__"}
results = []
for name, code in blocks:
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            exec(compile(code, name, "exec"), namespace)
    except BaseException:
        results.append({"out": buffer.getvalue(), "error": traceback.format_exc()})
        break
    results.append({"out": buffer.getvalue(), "error": None})
sys.__stdout__.write(json.dumps(results))
"""


def run_page(page: Path, workdir: Path) -> list[tuple[Block, str | None, dict[str, str | None]]]:
    """Run a page's python blocks in ``workdir``; each example with its outcome."""
    examples = examples_of(page.read_text(encoding="utf-8"))
    rel = page.relative_to(ROOT)
    payload = [[f"{rel}:{block.line}", block.code] for block, _ in examples]
    result = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=workdir,
        # Matplotlib draws into files only; no display is needed or wanted.
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert result.returncode == 0, result.stderr
    outcomes = json.loads(result.stdout)
    return [(block, expected, outcome) for (block, expected), outcome in zip(examples, outcomes)]


def image_size(path: Path) -> tuple[str, int, int]:
    """(format, width, height) of a PNG or SVG file."""
    data = path.read_bytes()
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        width, height = struct.unpack(">II", data[16:24])
        return "png", width, height
    match = re.search(rb'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', data)
    assert match is not None, f"{path.name} is neither a PNG nor a matplotlib SVG"
    return "svg", round(float(match.group(1))), round(float(match.group(2)))


def test_the_pages_exist() -> None:
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    for name in ["index.md", "install.md", "first-program.md", "reading-the-core.md", *TRANSLATED]:
        assert name in names, f"docs/{name} is missing"
    for name in TRANSLATED:
        assert f"ko/{name}" in names, f"docs/ko/{name} is missing"


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_code_blocks_run_and_print_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    text = page.read_text(encoding="utf-8")
    examples = examples_of(text)
    if not examples:
        assert not figures_of(text), f"{page.relative_to(ROOT)} shows figures but has no code to make them"
        return
    rel = page.relative_to(ROOT)
    results = run_page(page, tmp_path)
    for block, expected, outcome in results:
        where = f"{rel}, block at line {block.line}"
        assert outcome["error"] is None, f"{where} raised:\n{outcome['error']}"
        if expected is not None:
            assert outcome["out"] == expected, f"{where} printed:\n{outcome['out']}\nbut the page shows:\n{expected}"
    assert len(results) == len(examples)
    for name in figures_of(text):
        made, committed = tmp_path / name, FIGURES / name
        assert made.is_file(), f"{rel} shows figures/{name}, but its code does not write {name}"
        assert committed.is_file(), f"docs/figures/{name} is missing: run python tools/make_figures.py"
        assert image_size(made) == image_size(committed), (
            f"docs/figures/{name} is stale (the page now draws {image_size(made)}, the committed figure is "
            f"{image_size(committed)}): run python tools/make_figures.py"
        )


def test_figures_are_all_shown() -> None:
    shown = {name for page in PAGES for name in figures_of(page.read_text(encoding="utf-8"))}
    committed = {p.name for p in FIGURES.iterdir()} if FIGURES.is_dir() else set()
    assert committed <= shown, f"docs/figures/ holds figures no page shows: {sorted(committed - shown)}"


@pytest.mark.parametrize("name", TRANSLATED)
def test_korean_pages_carry_the_same_code(name: str) -> None:
    english = [(b.lang, b.code) for b in blocks_of((DOCS / name).read_text(encoding="utf-8"))]
    korean = [(b.lang, b.code) for b in blocks_of((DOCS / "ko" / name).read_text(encoding="utf-8"))]
    assert korean == english, f"docs/ko/{name} must have the code blocks of docs/{name}, unchanged and in order"


@pytest.mark.parametrize("name", TRANSLATED)
def test_korean_pages_show_the_same_figures(name: str) -> None:
    english = figures_of((DOCS / name).read_text(encoding="utf-8"))
    assert figures_of((DOCS / "ko" / name).read_text(encoding="utf-8")) == english


def test_every_korean_page_is_listed_as_translated() -> None:
    korean = {p.relative_to(DOCS / "ko").as_posix() for p in (DOCS / "ko").rglob("*.md")}
    assert korean == set(TRANSLATED), "docs/ko/ and TRANSLATED disagree"


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", [*PAGES, ROOT / "README.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))  # code is not links
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to missing {target}"


# --- the site's navigation (mkdocs.yml) -------------------------------------------------

NAV_ENTRY = re.compile(r"^\s*- (?:[^:\n]+: )?([\w./-]+\.md)\s*$", re.M)


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav lists, as paths in the site (``spec/`` is the repository's spec/)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:\n") :]
    return NAV_ENTRY.findall(nav)


def site_source(entry: str) -> Path:
    return ROOT / entry if entry.startswith("spec/") else DOCS / entry


def test_the_nav_lists_pages_that_exist() -> None:
    entries = nav_pages()
    assert len(entries) == len(set(entries)), "mkdocs.yml lists a page twice"
    missing = [e for e in entries if not site_source(e).is_file()]
    assert not missing, f"mkdocs.yml's nav lists pages that do not exist: {missing}"


def test_every_page_is_in_the_nav() -> None:
    listed = set(nav_pages())
    english = [p.relative_to(DOCS).as_posix() for p in PAGES if not p.is_relative_to(DOCS / "ko")]
    spec = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "spec").rglob("*.md"))]
    missing = sorted(set(english + spec) - listed)
    assert not missing, f"pages missing from mkdocs.yml's nav: {missing}"


def test_the_readme_documents_the_docs_build() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Documentation\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    assert section is not None, "README.md has no '## Documentation' section"
    assert "mkdocs build --strict" in section.group(1)
    script = (ROOT / "tools" / "build_docs.sh").read_text(encoding="utf-8")
    assert "mkdocs build --strict" in script


def test_expected_output_pairs_are_found() -> None:
    # The pairing rule itself: text right after python is its output; a text
    # block separated by prose is not; a mermaid block right after is too.
    page = "```python\nprint(1)\n```\n```text\n1\n```\n\nprose\n\n```python\nx = 2\n```\nsome words\n```text\nnot output\n```\n"
    (first, out1), (second, out2) = examples_of(page)
    assert (first.code, out1) == ("print(1)\n", "1\n")
    assert (second.code, out2) == ("x = 2\n", None)
    ((third, out3),) = examples_of("```python\nprint('flowchart TD')\n```\n\n```mermaid\nflowchart TD\n```\n")
    assert out3 == "flowchart TD\n"


def test_figure_sizes_are_read() -> None:
    with tempfile.TemporaryDirectory() as d:
        png = Path(d) / "a.png"
        png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + struct.pack(">II", 640, 480) + b"\x08\x06\x00\x00\x00")
        assert image_size(png) == ("png", 640, 480)
        svg = Path(d) / "a.svg"
        svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="460.8pt" height="345.6pt" viewBox="0 0 1 1">')
        assert image_size(svg) == ("svg", 461, 346)


# --- the site's staging step (tools/docs_stage.py, run by the MkDocs hooks) -----------


def _load_stager() -> Any:
    spec = importlib.util.spec_from_file_location("docs_stage", ROOT / "tools" / "docs_stage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Stager


def test_staging_rewrites_links_that_leave_their_part_of_the_tree(tmp_path: Path) -> None:
    root, stage = tmp_path / "repo", tmp_path / "stage"
    files = {
        "docs/index.md": "[install](install.md) [spec](../spec/jaxpr.md#grammar) [core](../minijax/core.py) "
        "[한국어](ko/index.md)\n\n```python\nprint('[not a link](../spec/jaxpr.md)')\n```\n\n[ref]: ../spec/jaxpr.md\n",
        "docs/install.md": "# Install\n",
        "docs/101/jit.md": "[prims](../../minijax/primitives/) [korean](../ko/101/jit.md)\n",
        "docs/ko/index.md": "[설치](install.md) [English](../index.md) [spec](../../spec/jaxpr.md)\n",
        "docs/ko/install.md": "# 설치\n",
        "docs/ko/101/jit.md": "[영어](../../101/jit.md)\n",
        "docs/figures/a.png": "png",
        "spec/jaxpr.md": "# Grammar\n[docs](../docs/install.md) [sibling](primitives/x.md)\n",
        "spec/primitives/x.md": "# X\n",
        "minijax/core.py": "x = 1\n",
        "minijax/primitives/__init__.py": "",
        "minijax/primitives/sin.py": "y = '```'\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    stage.mkdir()
    _load_stager()(root, stage).run()

    def staged(name: str) -> str:
        return (stage / name).read_text(encoding="utf-8")

    assert staged("index.md") == (
        "[install](install.md) [spec](spec/jaxpr.md#grammar) [core](source/minijax/core.py.md) "
        "[한국어](ko/)\n\n```python\nprint('[not a link](../spec/jaxpr.md)')\n```\n\n[ref]: spec/jaxpr.md\n"
    )
    assert staged("101/jit.md") == "[prims](../source/minijax/primitives/index.md) [korean](../../ko/101/jit/)\n"
    assert staged("ko/index.md") == "[설치](install.md) [English](../) [spec](../spec/jaxpr.md)\n"
    assert staged("ko/101/jit.md") == "[영어](../../../101/jit/)\n"
    assert staged("spec/jaxpr.md") == "# Grammar\n[docs](../install.md) [sibling](primitives/x.md)\n"
    assert (stage / "figures" / "a.png").read_text() == "png"
    # Source pages: files shown in a code block, directories listed with links.
    assert staged("source/minijax/core.py.md").endswith('# `minijax/core.py`\n\n```python linenums="1"\nx = 1\n```\n')
    assert "````python" in staged("source/minijax/primitives/sin.py.md")  # a longer fence than the file's backticks
    listing = staged("source/minijax/primitives/index.md")
    assert "[`__init__.py`](__init__.py.md)" in listing and "[`sin.py`](sin.py.md)" in listing
    assert (stage / "source" / "minijax" / "primitives" / "__init__.py.md").is_file()
