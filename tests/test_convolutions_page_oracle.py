"""JAX's "Generalized Convolutions" page, run on real JAX and on minijax: the same output, the same arrays.

The page's code cells (tests/pages/convolutions_cells.txt) run once with
``import jax`` meaning JAX and once, per backend, with ``jax`` answered by
``minijax`` (tests/pages/run_cells.py). Cell by cell the printed output,
errors, figures and the arrays each cell binds (kind, dtype, shape) must be
equal, and every array and every plotted value must agree element by element
(within float32 rounding of the convolutions' sums, relative to the array's
largest magnitude). The expectation that tests/test_convolutions_page.py holds
minijax to without JAX must be what JAX shows. Run where JAX is installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_convolutions_page_oracle.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import test_convolutions_page as page  # noqa: E402  (after the importorskip, on purpose)

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def jax_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Any]:
    return page.run_page(tmp_path_factory.mktemp("jax") / "out", as_minijax=False)


def test_jax_shows_the_stored_expectation(jax_run: tuple[list[dict[str, Any]], Any]) -> None:
    records, arrays = jax_run
    want = json.loads(page.EXPECTED.read_text(encoding="utf-8"))
    page.assert_same_cells(records, want["cells"])
    got = page.expectation(records, arrays)
    # Same program, same XLA: JAX reproduces its own statistics up to summation order in NumPy.
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
            np.testing.assert_allclose(got, want, rtol=0, atol=page.RTOL * scale, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)
