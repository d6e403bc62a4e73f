"""JAX's "Autobatching for Bayesian inference" page (vmapped log-probs) runs unchanged on minijax.

The page's 13 code cells (tests/pages/vmapped_log_probs_cells.txt, from JAX's
docs/notebooks/vmapped_log_probs.md) run as tests/page_harness.py describes.
The page prints float32 results of long computations (the ELBO every 10 of
1000 SGD steps, batched log-joints), which may differ from JAX's in the last
digits where a backend sums in another order: printed numbers agree within
1e-4 (relative, at least 1), the rest of the printout exactly.
tests/test_vmapped_log_probs_page_oracle.py checks against real JAX.

To regenerate the expectation (oracle environment, from the repository root):
    python tests/test_vmapped_log_probs_page.py --write-expected
"""

from __future__ import annotations

import sys

import pytest
from page_harness import Page

pytest.importorskip("matplotlib", reason="matplotlib (the page plots) is not installed")
pytest.importorskip("scipy", reason="scipy (the page draws its data set with scipy.special.expit) is not installed")

PAGE = Page("vmapped_log_probs", cell_count=13, rtol=1e-5, print_rtol=1e-4)

test_the_page_runs_on_minijax_and_shows_what_jax_shows = PAGE.main_test()
test_the_stored_cells_are_the_pages_code_only = PAGE.cells_test()

if __name__ == "__main__":
    PAGE.write_expected_main(sys.argv[1:], __doc__)
