"""JAX's "Gradient checkpointing with jax.checkpoint" page runs unchanged on minijax and shows what JAX shows.

The page's 34 code cells (tests/pages/gradient_checkpointing_cells.txt, from
JAX's docs/gradient-checkpointing.md at jax-v0.10.2) run as
tests/page_harness.py describes: every ``print_saved_residuals`` list (the
residual types, their sources, the file:line:column and function of the
equation that made them) equals JAX's. The page's ``print_fwd_bwd`` draws a
rich table for Jupyter (``force_jupyter=True``): without IPython rich shows
nothing, in JAX as in minijax, so those cells check that the code runs
(``jax.vjp``'s pullback flattens into its residuals and unflattens again).
tests/test_gradient_checkpointing_page_oracle.py checks against real JAX.

To regenerate the expectation (oracle environment, from the repository root):
    python tests/test_gradient_checkpointing_page.py --write-expected
"""

from __future__ import annotations

import sys

import pytest
from page_harness import Page

pytest.importorskip("rich", reason="rich (the page draws its forward/backward tables with it) is not installed")

PAGE = Page("gradient_checkpointing", cell_count=34, rtol=1e-5)

test_the_page_runs_on_minijax_and_shows_what_jax_shows = PAGE.main_test()
test_the_stored_cells_are_the_pages_code_only = PAGE.cells_test()

if __name__ == "__main__":
    PAGE.write_expected_main(sys.argv[1:], __doc__)
