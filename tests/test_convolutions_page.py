"""JAX's "Generalized Convolutions" page runs unchanged on minijax and shows what JAX shows.

The page's code cells (tests/pages/convolutions_cells.txt, copied from JAX's
docs/notebooks/convolutions.md) run as a notebook would, in a fresh
interpreter with ``jax`` answered by ``minijax`` (tests/pages/run_cells.py).
Every cell's printed output, the arrays it binds (kind, dtype, shape) and the
figures it draws (titles, how many lines/images/scatters) must equal JAX's,
stored in tests/pages/convolutions_expected.json; the values of those arrays
and of the plotted data must match JAX's summary statistics (sum, sum of
absolute values, sum of squares, min, max) to float32 accuracy.
tests/test_convolutions_page_oracle.py checks the stored expectation against
real JAX, and compares every array element by element.

To regenerate the expectation (oracle environment, from the repository root):
    python tests/test_convolutions_page.py --write-expected
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "tests" / "pages"
CELLS = PAGES / "convolutions_cells.txt"
RUNNER = PAGES / "run_cells.py"
EXPECTED = PAGES / "convolutions_expected.json"

# Arrays are compared relative to their largest magnitude: the NumPy backend
# sums convolutions in another order than XLA (a few float32 ulps).
RTOL = 1e-5

pytest.importorskip("matplotlib", reason="matplotlib (the page plots) is not installed")
pytest.importorskip("scipy", reason="scipy (the page loads an image from scipy.datasets) is not installed")


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


def summary(array: np.ndarray) -> list[float]:
    values = array.astype(np.float64)
    if values.size == 0:
        return [0.0] * 5
    return [float(values.sum()), float(np.abs(values).sum()), float((values**2).sum()), float(values.min()),
            float(values.max())]


def expectation(records: list[dict[str, Any]], arrays: Any) -> dict[str, Any]:
    return {"cells": records, "summaries": {name: summary(arrays[name]) for name in sorted(arrays.files)}}


def assert_same_cells(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    """Cell by cell: the same output, errors, array kinds/dtypes/shapes and figures."""
    assert [c["id"] for c in got] == [c["id"] for c in want], "the run stopped early or the cells changed"
    for g, w in zip(got, want):
        for field in ("stdout", "error", "arrays", "figures"):
            assert g[field] == w[field], f"cell {w['id']}: {field} differs:\n got {g[field]!r}\nwant {w[field]!r}"


def assert_close_summaries(got: dict[str, list[float]], want: dict[str, list[float]], sizes: dict[str, int]) -> None:
    assert sorted(got) == sorted(want)
    for name, w in want.items():
        # The statistics of n elements each within RTOL * max|x| agree within n * RTOL * max|x| (sum of squares:
        # twice that times max|x|).
        scale = max(abs(w[3]), abs(w[4]), 1e-30)
        n = max(sizes[name], 1)
        tol = [n * RTOL * scale, n * RTOL * scale, 2 * n * RTOL * scale * scale, RTOL * scale, RTOL * scale]
        for g_stat, w_stat, t in zip(got[name], w, tol):
            assert abs(g_stat - w_stat) <= t, (name, got[name], w)


@pytest.fixture(scope="module")
def page_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("convolutions_page")


def test_the_page_runs_on_minijax_and_shows_what_jax_shows(backend_name: str, page_dir: Path) -> None:
    records, arrays = run_page(page_dir / backend_name, as_minijax=True, env={"MINIJAX_BACKEND": backend_name})
    want = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert_same_cells(records, want["cells"])
    got = expectation(records, arrays)
    assert_close_summaries(got["summaries"], want["summaries"], {name: arrays[name].size for name in arrays.files})


@pytest.mark.single_backend
def test_the_stored_cells_are_the_pages_code_only() -> None:
    # The page's prose is JAX's and is not copied: the file holds the 15 code cells, each valid Python.
    spec = importlib.util.spec_from_file_location("run_cells", RUNNER)
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    cells = runner.read_cells(CELLS)
    assert len(cells) == 15
    for cell_id, source in cells:
        compile(source, cell_id, "exec")
        assert not any(line.startswith(("+++", "```", ":id:", "#")) and not line.startswith("# ")
                       for line in source.splitlines())

if __name__ == "__main__":
    if sys.argv[1:] != ["--write-expected"]:
        sys.exit(__doc__)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        records, arrays = run_page(Path(tmp) / "jax", as_minijax=False)
        EXPECTED.write_text(json.dumps(expectation(records, arrays), indent=1) + "\n", encoding="utf-8")
