"""JAX's "Custom derivative rules for JAX-transformable Python functions" page runs unchanged on minijax.

The page's 78 code cells (tests/pages/custom_derivatives_cells.txt, from JAX's
docs/notebooks/Custom_derivative_rules_for_Python_code.md at jax-v0.10.2) run
as tests/page_harness.py describes: the printed output, the errors (type and
message) and the bound arrays equal JAX's; printed numbers may differ from
JAX's by float32 rounding (the NumPy backend's exp rounds 1 ulp away from
XLA's in one of the page's sigmoid values). The page's ``pdb`` example only
defines the breakpointing rule; its ``jax.grad(foo)(3.)`` is in a non-executed
block, so nothing waits on a debugger. tests/test_custom_derivatives_page_oracle.py
checks against real JAX.

To regenerate the expectation (oracle environment, from the repository root):
    python tests/test_custom_derivatives_page.py --write-expected
"""

from __future__ import annotations

import sys

from page_harness import Page

PAGE = Page("custom_derivatives", cell_count=78, rtol=1e-5, print_rtol=1e-6)

test_the_page_runs_on_minijax_and_shows_what_jax_shows = PAGE.main_test()
test_the_stored_cells_are_the_pages_code_only = PAGE.cells_test()

if __name__ == "__main__":
    PAGE.write_expected_main(sys.argv[1:], __doc__)
