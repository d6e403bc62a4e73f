"""Shared machinery of the page tests: one of JAX's documentation pages runs unchanged on minijax.

A page's code cells (``tests/pages/<name>_cells.txt``, the code only: the prose
is JAX's and is not copied) run as a notebook would, in a fresh interpreter,
with ``jax`` answered by ``minijax`` (``tests/pages/run_cells.py``). Cell by
cell, the printed output, the error raised, the arrays bound (kind, dtype,
shape) and the figures drawn must equal what JAX shows, stored in
``tests/pages/<name>_expected.json``; the arrays' and plotted data's values
must match JAX's summary statistics (sum, sum of |x|, sum of squares, min,
max) within ``Page.rtol`` of their largest magnitude.

A page test module declares its ``Page`` and takes its tests from it::

    PAGE = Page("convolutions", cell_count=15, rtol=1e-5)
    test_the_page_runs_on_minijax_and_shows_what_jax_shows = PAGE.main_test()
    test_the_stored_cells_are_the_pages_code_only = PAGE.cells_test()

and its ``_oracle`` twin runs the same cells on real JAX (``PAGE.oracle_tests()``):
the stored expectation must be what JAX shows, and minijax's arrays must
match JAX's element by element. ``python tests/test_<name>_page.py
--write-expected`` (in the oracle environment) records the expectation.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

PAGES = Path(__file__).resolve().parent / "pages"
RUNNER = PAGES / "run_cells.py"
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|-?inf")
# Lines of the page's markup that must not be left in the stored cells.
MARKUP = ("+++", "```", ":id:", ":outputId:", ":tags:", "#@")

Records = list[dict[str, Any]]


def summary(array: np.ndarray) -> list[float]:
    if np.iscomplexobj(array):  # the statistics of the real and the imaginary parts together
        array = np.concatenate([array.real.ravel(), array.imag.ravel()])
    values = array.astype(np.float64)
    if values.size == 0:
        return [0.0] * 5
    return [float(values.sum()), float(np.abs(values).sum()), float((values**2).sum()), float(values.min()),
            float(values.max())]


def _printed_tokens(text: str) -> tuple[list[str], list[float]]:
    """The printed text without its numbers or whitespace, and the numbers."""
    numbers = [float(m) for m in NUMBER.findall(text)]
    return re.sub(r"\s+", "", NUMBER.sub("#", text)).split("#"), numbers


@dataclass(frozen=True)
class Page:
    """One of JAX's pages, stored as tests/pages/<name>_cells.txt and <name>_expected.json.

    ``rtol``: arrays agree within ``rtol`` times their largest magnitude (a
    backend may sum in another order). ``print_rtol``: when set, printed
    numbers may differ from JAX's within it (relative, at least 1), for pages
    that print the float32 result of a long computation; otherwise printed
    output must be equal character for character. ``unordered_cells``: cells
    whose printed lines come from unordered callbacks (``jax.debug.print`` in a
    loop: XLA schedules them as it likes, the NumPy backend in program order),
    compared as a sorted list of lines.
    """

    name: str
    cell_count: int
    rtol: float = 1e-5
    print_rtol: float | None = None
    unordered_cells: tuple[str, ...] = ()
    # cell id -> why minijax's error message differs there on purpose: the error's type must still match.
    different_messages: tuple[tuple[str, str], ...] = ()
    # cell id -> why what the cell prints differs on purpose (a class's name): its output is not compared.
    different_output: tuple[tuple[str, str], ...] = ()
    # (cell id, backend) -> why what the cell prints on that backend differs on purpose (XLA's compiled
    # text, which the NumPy backend has none of): its output is not compared there.
    different_output_on: tuple[tuple[str, str, str], ...] = ()
    # cell id -> the missing minijax feature the cell needs (an open issue): minijax must raise
    # NotImplementedError there, and the cell is not compared otherwise. Once the feature lands the cell
    # no longer raises and the test fails until the entry goes.
    known_gaps: tuple[tuple[str, str], ...] = ()

    @property
    def cells(self) -> Path:
        return PAGES / f"{self.name}_cells.txt"

    @property
    def expected(self) -> Path:
        return PAGES / f"{self.name}_expected.json"

    def run(self, out: Path, as_minijax: bool, env: dict[str, str] | None = None) -> tuple[Records, Any]:
        """Run the cells in a fresh interpreter; (the cells' records, their arrays)."""
        command = [sys.executable, str(RUNNER), str(self.cells), str(out)] + (["--as-minijax"] if as_minijax else [])
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

    def expectation(self, records: Records, arrays: Any) -> dict[str, Any]:
        return {"cells": records, "summaries": {name: summary(arrays[name]) for name in sorted(arrays.files)}}

    def load_expected(self) -> dict[str, Any]:
        expected: dict[str, Any] = json.loads(self.expected.read_text(encoding="utf-8"))
        return expected

    def assert_same_cells(self, got: Records, want: Records, *, minijax: bool = True, backend: str | None = None) -> None:
        """Cell by cell: the same output, errors, array kinds/dtypes/shapes and figures (``backend``:
        minijax's, for ``different_output_on``)."""
        assert [c["id"] for c in got] == [c["id"] for c in want], "the run stopped early or the cells changed"
        exact = ("error", "arrays", "figures") + (("stdout",) if self.print_rtol is None else ())
        differing = dict(self.different_messages)
        gaps = dict(self.known_gaps) if minijax else {}  # JAX itself has no gaps
        for g, w in zip(got, want):
            if w["id"] in gaps:
                assert (g["error"] or "").startswith("NotImplementedError"), (
                    f"cell {w['id']} was listed as needing {gaps[w['id']]!r}, but it did not raise "
                    f"NotImplementedError (got {g['error']!r}): remove it from known_gaps")
                continue
            if w["id"] in dict(self.different_output) or (w["id"], backend) in {c[:2] for c in self.different_output_on}:
                g = {**g, "stdout": w["stdout"]}
            if w["id"] in self.unordered_cells:
                g, w = ({**c, "stdout": "".join(sorted(c["stdout"].splitlines(keepends=True)))} for c in (g, w))
            for field in exact:
                if field == "error" and w["id"] in differing and g["error"] and w["error"]:
                    same = g["error"].split(":")[0] == w["error"].split(":")[0]
                    assert same, f"cell {w['id']}: error type differs:\n got {g['error']!r}\nwant {w['error']!r}"
                    continue
                assert g[field] == w[field], f"cell {w['id']}: {field} differs:\n got {g[field]!r}\nwant {w[field]!r}"
            if self.print_rtol is not None:
                self._assert_close_printout(w["id"], g["stdout"], w["stdout"], self.print_rtol)

    @staticmethod
    def _assert_close_printout(cell: str, got: str, want: str, rtol: float) -> None:
        g_text, g_numbers = _printed_tokens(got)
        w_text, w_numbers = _printed_tokens(want)
        assert g_text == w_text and len(g_numbers) == len(w_numbers), (
            f"cell {cell}: output differs:\n got {got!r}\nwant {want!r}")
        for a, b in zip(g_numbers, w_numbers):
            assert math.isclose(a, b, rel_tol=rtol, abs_tol=rtol) or (math.isnan(a) and math.isnan(b)), (
                f"cell {cell}: printed {a} where JAX prints {b}")

    def _without_gaps(self, arrays: dict[str, Any]) -> dict[str, Any]:
        """``arrays`` (keyed ``CELL_INDEX/NAME``) without those of the cells in ``known_gaps``."""
        ids = [cell_id for cell_id, _ in self.read_cells()]
        gap_indices = {str(ids.index(cell_id)) for cell_id, _ in self.known_gaps}
        return {k: v for k, v in arrays.items() if k.split("/")[0] not in gap_indices}

    def assert_close_summaries(self, got: dict[str, list[float]], want: dict[str, list[float]],
                               sizes: dict[str, int]) -> None:
        got, want = self._without_gaps(got), self._without_gaps(want)
        assert sorted(got) == sorted(want)
        for name, w in want.items():
            # The statistics of n elements each within rtol * max|x| agree within n * rtol * max|x| (sum of
            # squares: twice that times max|x|).
            scale = max(abs(w[3]), abs(w[4]), 1e-30)
            n = max(sizes[name], 1)
            r = self.rtol
            tol = [n * r * scale, n * r * scale, 2 * n * r * scale * scale, r * scale, r * scale]
            for g_stat, w_stat, t in zip(got[name], w, tol):
                # (Equal infinities, and NaN against NaN, agree: their difference is NaN.)
                agree = g_stat == w_stat or (math.isnan(g_stat) and math.isnan(w_stat)) or abs(g_stat - w_stat) <= t
                assert agree, (name, got[name], w)

    def read_cells(self) -> list[tuple[str, str]]:
        spec = importlib.util.spec_from_file_location("run_cells", RUNNER)
        assert spec is not None and spec.loader is not None
        runner = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(runner)
        cells: list[tuple[str, str]] = runner.read_cells(self.cells)
        return cells

    # -- the tests a page module exports ------------------------------------------------------------------

    def main_test(self) -> Callable[..., None]:
        """The main suite's test: on each backend, the page shows the stored expectation."""
        page = self

        def test(backend_name: str, tmp_path: Path) -> None:
            records, arrays = page.run(tmp_path / backend_name, as_minijax=True, env={"MINIJAX_BACKEND": backend_name})
            want = page.load_expected()
            page.assert_same_cells(records, want["cells"], backend=backend_name)
            got = page.expectation(records, arrays)
            page.assert_close_summaries(got["summaries"], want["summaries"],
                                        {name: arrays[name].size for name in arrays.files})

        return test

    def cells_test(self) -> Callable[[], None]:
        """The stored file holds the page's code cells only, each valid Python."""
        page = self

        @pytest.mark.single_backend
        def test() -> None:
            cells = page.read_cells()
            assert len(cells) == page.cell_count
            for cell_id, source in cells:
                compile(source, cell_id, "exec")
                assert not any(line.startswith(MARKUP) for line in source.splitlines()), cell_id

        return test

    def oracle_tests(self) -> tuple[Callable[..., Any], Callable[..., None], Callable[..., None]]:
        """(fixture ``jax_run``, JAX shows the stored expectation, minijax matches JAX element by element)."""
        page = self

        @pytest.fixture(scope="module")
        def jax_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Records, Any]:
            return page.run(tmp_path_factory.mktemp("jax") / "out", as_minijax=False)

        def test_jax_shows_the_stored_expectation(jax_run: tuple[Records, Any]) -> None:
            records, arrays = jax_run
            want = page.load_expected()
            page.assert_same_cells(records, want["cells"], minijax=False)
            got = page.expectation(records, arrays)
            # Same program, same XLA: JAX reproduces its own statistics up to summation order in NumPy.
            assert got["summaries"].keys() == want["summaries"].keys()
            for name, stats in want["summaries"].items():
                np.testing.assert_allclose(got["summaries"][name], stats, rtol=1e-9, atol=1e-9, err_msg=name)

        @pytest.mark.parametrize("backend", ["xla", "numpy"])
        def test_minijax_shows_what_jax_shows(backend: str, jax_run: tuple[Records, Any], tmp_path: Path) -> None:
            want_records, want_arrays = jax_run
            records, arrays = page.run(tmp_path / "out", as_minijax=True, env={"MINIJAX_BACKEND": backend})
            page.assert_same_cells(records, want_records, backend=backend)
            names = sorted(page._without_gaps(dict.fromkeys(want_arrays.files)))
            assert sorted(page._without_gaps(dict.fromkeys(arrays.files))) == names
            for name in names:
                got, want = arrays[name], want_arrays[name]
                assert (got.dtype, got.shape) == (want.dtype, want.shape), name
                if want.dtype.kind == "f" and want.size:
                    scale = float(np.abs(want).max()) or 1.0
                    np.testing.assert_allclose(got, want, rtol=0, atol=page.rtol * scale, err_msg=name)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=name)

        return jax_run, test_jax_shows_the_stored_expectation, test_minijax_shows_what_jax_shows

    def write_expected_main(self, argv: list[str], usage: str | None) -> None:
        """``python tests/test_<name>_page.py --write-expected``: record JAX's run (oracle environment)."""
        if argv != ["--write-expected"]:
            sys.exit(usage)
        with tempfile.TemporaryDirectory() as tmp:
            records, arrays = self.run(Path(tmp) / "jax", as_minijax=False)
            self.expected.write_text(json.dumps(self.expectation(records, arrays), indent=1) + "\n", encoding="utf-8")
