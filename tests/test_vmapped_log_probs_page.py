"""JAX's "Autobatching for Bayesian inference" page (vmapped log-probs) runs unchanged on minijax.

The page's code cells (tests/pages/vmapped_log_probs_cells.txt, copied from
JAX's docs/notebooks/vmapped_log_probs.md) run as a notebook would, in a fresh
interpreter with ``jax`` answered by ``minijax`` (tests/pages/run_cells.py,
the runner of the convolutions page). Every cell's printed output (among them
the caught shape error's message and the ELBO printed every 10 SGD steps),
the arrays it binds (kind, dtype, shape) and the figure it draws must equal
JAX's, stored in tests/pages/vmapped_log_probs_expected.json; the arrays' and
plotted data's summary statistics must match to float32 accuracy.
tests/test_vmapped_log_probs_page_oracle.py checks the stored expectation
against real JAX and compares every array element by element.

To regenerate the expectation (oracle environment, from the repository root):
    python tests/test_vmapped_log_probs_page.py --write-expected
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "tests" / "pages"
CELLS = PAGES / "vmapped_log_probs_cells.txt"
RUNNER = PAGES / "run_cells.py"
EXPECTED = PAGES / "vmapped_log_probs_expected.json"

pytest.importorskip("matplotlib", reason="matplotlib (the page plots) is not installed")
pytest.importorskip("scipy", reason="scipy (the page draws its data set with scipy.special.expit) is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_convolutions_page as conv_page  # noqa: E402  (the shared comparison helpers)


def run_page(out: Path, as_minijax: bool, env: dict[str, str] | None = None) -> tuple[list[dict[str, Any]], Any]:
    """Run the cells in a fresh interpreter; (the cells' records, their arrays)."""
    command = [sys.executable, str(RUNNER), str(CELLS), str(out)] + (["--as-minijax"] if as_minijax else [])
    result = subprocess.run(
        command,
        cwd=out.parent,
        env={**os.environ, "MPLBACKEND": "Agg", "JAX_PLATFORMS": "cpu", **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    records = json.loads((out / "cells.json").read_text(encoding="utf-8"))
    return records, np.load(out / "arrays.npz")


NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|-?inf")
# Printed float32 values (the ELBO after up to 1000 SGD steps, the batched log-joints) may differ from JAX's in
# the last digits where a backend sums in another order; relative to the value (at least 1).
PRINT_RTOL = 1e-4


def _tokens(text: str) -> tuple[list[str], list[float]]:
    """The printed text without its numbers or whitespace, and the numbers."""
    numbers = [float(m) for m in NUMBER.findall(text)]
    return re.sub(r"\s+", "", NUMBER.sub("#", text)).split("#"), numbers


def assert_same_cells(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    """Cell by cell: the same errors, arrays (kind, dtype, shape) and figures; the same printed text, whose
    numbers agree within ``PRINT_RTOL``."""
    assert [c["id"] for c in got] == [c["id"] for c in want], "the run stopped early or the cells changed"
    for g, w in zip(got, want):
        for field in ("error", "arrays", "figures"):
            assert g[field] == w[field], f"cell {w['id']}: {field} differs:\n got {g[field]!r}\nwant {w[field]!r}"
        g_text, g_numbers = _tokens(g["stdout"])
        w_text, w_numbers = _tokens(w["stdout"])
        assert g_text == w_text and len(g_numbers) == len(w_numbers), (
            f"cell {w['id']}: output differs:\n got {g['stdout']!r}\nwant {w['stdout']!r}")
        for a, b in zip(g_numbers, w_numbers):
            assert math.isclose(a, b, rel_tol=PRINT_RTOL, abs_tol=PRINT_RTOL) or (math.isnan(a) and math.isnan(b)), (
                f"cell {w['id']}: printed {a} where JAX prints {b}")


@pytest.fixture(scope="module")
def page_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vmapped_log_probs_page")


def test_the_page_runs_on_minijax_and_shows_what_jax_shows(backend_name: str, page_dir: Path) -> None:
    records, arrays = run_page(page_dir / backend_name, as_minijax=True, env={"MINIJAX_BACKEND": backend_name})
    want = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert_same_cells(records, want["cells"])
    got = conv_page.expectation(records, arrays)
    conv_page.assert_close_summaries(got["summaries"], want["summaries"],
                                     {name: arrays[name].size for name in arrays.files})


@pytest.mark.single_backend
def test_the_stored_cells_are_the_pages_code_only() -> None:
    # The page's prose is JAX's and is not copied: the file holds the 13 code cells, each valid Python.
    spec = importlib.util.spec_from_file_location("run_cells", RUNNER)
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    cells = runner.read_cells(CELLS)
    assert len(cells) == 13
    for cell_id, source in cells:
        compile(source, cell_id, "exec")
        assert not any(line.startswith(("+++", "```", ":id:", ":outputId:")) for line in source.splitlines())


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-expected"]:
        sys.exit(__doc__)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        records, arrays = run_page(Path(tmp) / "jax", as_minijax=False)
        EXPECTED.write_text(json.dumps(conv_page.expectation(records, arrays), indent=1) + "\n", encoding="utf-8")
