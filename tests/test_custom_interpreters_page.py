"""JAX's "Writing custom Jaxpr interpreters in JAX" page runs unchanged on minijax and shows what JAX shows.

The page's 14 code cells (tests/pages/custom_interpreters_cells.txt, from JAX's
docs/notebooks/Writing_custom_interpreters_in_Jax.md) run as
tests/page_harness.py describes: the printed jaxprs, their variables'
reprs (``jaxpr.invars``, ``eqn.invars``: JAX's dtype names), the closed
jaxpr's ``literals`` and the arrays bound equal JAX's; printed numbers and
array values agree within a float32 ulp or two (the NumPy backend rounds
log/arctanh's gradients differently in the last place). The page
imports ``jax.extend.core`` and ``jax._src.util.safe_map``: minijax has both.
tests/test_custom_interpreters_page_oracle.py checks against real JAX.

To regenerate the expectation (oracle environment, from the repository root):
    python tests/test_custom_interpreters_page.py --write-expected
"""

from __future__ import annotations

import sys

import pytest
from page_harness import Page

pytest.importorskip("matplotlib", reason="matplotlib (the page runner draws on Agg) is not installed")
pytest.importorskip("scipy", reason="scipy (the page runner patches scipy.datasets) is not installed")

PAGE = Page("custom_interpreters", cell_count=14, rtol=1e-5, print_rtol=1e-6)

test_the_page_runs_on_minijax_and_shows_what_jax_shows = PAGE.main_test()
test_the_stored_cells_are_the_pages_code_only = PAGE.cells_test()

if __name__ == "__main__":
    PAGE.write_expected_main(sys.argv[1:], __doc__)
