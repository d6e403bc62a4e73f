"""Regenerate the figures in docs/figures/ from the pages that show them.

A page shows a figure as ``![...](../figures/NAME)`` and its own code writes
``NAME`` into the working directory (tests/test_docs.py checks that it still
does, and that the committed figure has the same format and size). This script
runs each such English page's code blocks in a temporary directory, exactly as
the test does, and copies the figures it made into docs/figures/:

    python tools/make_figures.py

The Korean pages carry the same code (a test checks it) and show the same
files, so they are not run again.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_docs import DOCS, FIGURES, figures_of, run_page  # noqa: E402


def main() -> int:
    FIGURES.mkdir(exist_ok=True)
    for page in sorted(DOCS.rglob("*.md")):
        if page.is_relative_to(DOCS / "ko"):
            continue
        names = figures_of(page.read_text(encoding="utf-8"))
        if not names:
            continue
        with tempfile.TemporaryDirectory() as workdir:
            for block, _, outcome in run_page(page, Path(workdir)):
                if outcome["error"] is not None:
                    print(f"{page.relative_to(ROOT)}:{block.line} raised:\n{outcome['error']}", file=sys.stderr)
                    return 1
            for name in names:
                shutil.copyfile(Path(workdir) / name, FIGURES / name)
                print(f"docs/figures/{name} <- {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
