"""JAX's "Sharp Bits" page runs unchanged on minijax and shows what JAX shows.

The page's 39 code cells (tests/pages/sharp_bits_cells.txt, from JAX's
docs/notebooks/Common_Gotchas_in_JAX.md) run as tests/page_harness.py
describes. The page is mostly about what goes wrong, so most of what it checks
is behaviour rather than numbers: impure functions under ``jit`` (a leaked
tracer, a print that runs once, a global read at trace time — which needs jit's
cache to reuse the first trace for ``jit(f)(4.)`` then ``jit(f)(5.)``),
in-place updates and ``.at[]``, out-of-bounds indexing, non-array inputs,
random numbers, control flow under ``jit``, dynamic shapes, NaNs and
double precision. Each cell's printout and error (type and first line) must
equal JAX's. tests/test_sharp_bits_page_oracle.py checks against real JAX.

To regenerate the expectation (oracle environment, from the repository root):
    python tests/test_sharp_bits_page.py --write-expected
"""

from __future__ import annotations

import sys

import pytest
from page_harness import Page

pytest.importorskip("matplotlib", reason="matplotlib (the page runner's figure backend) is not installed")
pytest.importorskip("scipy", reason="scipy (the page runner stands in for scipy.datasets) is not installed")

PAGE = Page("sharp_bits", cell_count=39, rtol=1e-6)

test_the_page_runs_on_minijax_and_shows_what_jax_shows = PAGE.main_test()
test_the_stored_cells_are_the_pages_code_only = PAGE.cells_test()

if __name__ == "__main__":
    PAGE.write_expected_main(sys.argv[1:], __doc__)
