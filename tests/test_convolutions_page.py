"""JAX's "Generalized Convolutions" page runs unchanged on minijax and shows what JAX shows.

The page's 15 code cells (tests/pages/convolutions_cells.txt, from JAX's
docs/notebooks/convolutions.md) run as tests/page_harness.py describes: the
printed output, errors, bound arrays and figures equal JAX's, and the arrays'
values match JAX's statistics within 1e-5 of their largest magnitude (the
NumPy backend sums convolutions in another order than XLA: a few float32
ulps). tests/test_convolutions_page_oracle.py checks against real JAX.

To regenerate the expectation (oracle environment, from the repository root):
    python tests/test_convolutions_page.py --write-expected
"""

from __future__ import annotations

import sys

import pytest
from page_harness import Page

pytest.importorskip("matplotlib", reason="matplotlib (the page plots) is not installed")
pytest.importorskip("scipy", reason="scipy (the page loads an image from scipy.datasets) is not installed")

PAGE = Page("convolutions", cell_count=15, rtol=1e-5)

test_the_page_runs_on_minijax_and_shows_what_jax_shows = PAGE.main_test()
test_the_stored_cells_are_the_pages_code_only = PAGE.cells_test()

if __name__ == "__main__":
    PAGE.write_expected_main(sys.argv[1:], __doc__)
