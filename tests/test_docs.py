"""Every ```python block in docs/ runs, and prints what the page says it prints.

A page's python blocks run in order in one namespace, in a fresh interpreter
(so one page's flags or imports cannot leak into another). A ```text block
that comes right after a python block is that block's expected stdout, and
must match exactly. The Korean pages must carry the English pages' code
blocks unchanged.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
TRANSLATED = ["index.md", "install.md", "first-program.md"]

FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


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
        if nxt is not None and nxt.lang == "text" and not text[block.end : nxt.start].strip():
            expected = nxt.code
        examples.append((block, expected))
    return examples


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


def test_the_pages_exist() -> None:
    names = {str(p.relative_to(DOCS)) for p in PAGES}
    for name in ["index.md", "install.md", "first-program.md", "reading-the-core.md"]:
        assert name in names, f"docs/{name} is missing"
        assert f"ko/{name}" in names or name not in TRANSLATED, f"docs/ko/{name} is missing"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_code_blocks_run_and_print_what_the_page_shows(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    examples = examples_of(text)
    if not examples:
        return
    rel = page.relative_to(ROOT)
    payload = [[f"{rel}:{block.line}", block.code] for block, _ in examples]
    result = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    outcomes = json.loads(result.stdout)
    for (block, expected), outcome in zip(examples, outcomes):
        where = f"{rel}, block at line {block.line}"
        assert outcome["error"] is None, f"{where} raised:\n{outcome['error']}"
        if expected is not None:
            assert outcome["out"] == expected, f"{where} printed:\n{outcome['out']}\nbut the page shows:\n{expected}"
    assert len(outcomes) == len(examples)


@pytest.mark.parametrize("name", TRANSLATED)
def test_korean_pages_carry_the_same_code(name: str) -> None:
    english = [(b.lang, b.code) for b in blocks_of((DOCS / name).read_text(encoding="utf-8"))]
    korean = [(b.lang, b.code) for b in blocks_of((DOCS / "ko" / name).read_text(encoding="utf-8"))]
    assert korean == english, f"docs/ko/{name} must have the code blocks of docs/{name}, unchanged and in order"


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", [*PAGES, ROOT / "README.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to missing {target}"


def test_expected_output_pairs_are_found() -> None:
    # The pairing rule itself: text right after python is its output; a text
    # block separated by prose is not.
    page = "```python\nprint(1)\n```\n```text\n1\n```\n\nprose\n\n```python\nx = 2\n```\nsome words\n```text\nnot output\n```\n"
    (first, out1), (second, out2) = examples_of(page)
    assert (first.code, out1) == ("print(1)\n", "1\n")
    assert (second.code, out2) == ("x = 2\n", None)
