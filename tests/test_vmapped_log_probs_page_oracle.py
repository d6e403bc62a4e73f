"""JAX's vmapped log-probs page, run on real JAX and on minijax: the same output, the same arrays.

The page's cells (tests/pages/vmapped_log_probs_cells.txt) run once with
``import jax`` meaning JAX and once per backend with ``jax`` answered by
``minijax``. Cell by cell the printed output (the ELBO every 10 steps of 1000
SGD steps included), errors, figures and bound arrays must be equal, and every
array and plotted value must agree element by element. The stored expectation
that tests/test_vmapped_log_probs_page.py holds minijax to must be what JAX
shows. Run where JAX is installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_vmapped_log_probs_page_oracle.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import test_vmapped_log_probs_page as page  # noqa: E402  (after the importorskip, on purpose)

pytestmark = pytest.mark.oracle

# After 1000 SGD steps the float32 parameters may differ from JAX's by rounding; relative to the largest magnitude.
RTOL = 1e-5


@pytest.fixture(scope="module")
def jax_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Any]:
    return page.run_page(tmp_path_factory.mktemp("jax") / "out", as_minijax=False)


def test_jax_shows_the_stored_expectation(jax_run: tuple[list[dict[str, Any]], Any]) -> None:
    records, arrays = jax_run
    want = json.loads(page.EXPECTED.read_text(encoding="utf-8"))
    page.conv_page.assert_same_cells(records, want["cells"])
    got = page.conv_page.expectation(records, arrays)
    assert got["summaries"].keys() == want["summaries"].keys()
    for name, stats in want["summaries"].items():
        np.testing.assert_allclose(got["summaries"][name], stats, rtol=1e-9, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_minijax_shows_what_jax_shows(backend: str, jax_run: tuple[list[dict[str, Any]], Any],
                                      tmp_path: Path) -> None:
    want_records, want_arrays = jax_run
    records, arrays = page.run_page(tmp_path / "out", as_minijax=True, env={"MINIJAX_BACKEND": backend})
    page.assert_same_cells(records, want_records)
    assert sorted(arrays.files) == sorted(want_arrays.files)
    for name in want_arrays.files:
        got, want = arrays[name], want_arrays[name]
        assert (got.dtype, got.shape) == (want.dtype, want.shape), name
        if want.dtype.kind == "f" and want.size:
            scale = float(np.abs(want).max()) or 1.0
            np.testing.assert_allclose(got, want, rtol=0, atol=RTOL * scale, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)
