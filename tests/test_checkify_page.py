"""JAX's "The checkify transformation" page runs unchanged on minijax and shows what JAX shows.

The page's 16 code cells (tests/pages/checkify_cells.txt, from JAX's
docs/debugging/checkify_guide.md) run as tests/page_harness.py describes.
Several of the page's cells fail in JAX 0.10.2 itself (a Python int passed as a
format argument to ``check``, ``pmap`` over more devices than the CPU has,
``pjit`` and ``mesh`` never defined, ``checkify(f)`` called on the module):
minijax must fail the same way, with the same error and message (but for the
``pmap`` cell, where JAX's message is an internal one, and the boolean
conversion of a tracer, where minijax's message adds the fixes: the same error type),
and print what JAX prints everywhere else. tests/test_checkify_page_oracle.py checks
against real JAX.

To regenerate the expectation (oracle environment, from the repository root):
    python tests/test_checkify_page.py --write-expected
"""

from __future__ import annotations

import sys

import pytest
from page_harness import Page

pytest.importorskip("matplotlib", reason="matplotlib (the page runner draws on Agg) is not installed")
pytest.importorskip("scipy", reason="scipy (the page runner patches scipy.datasets) is not installed")

PAGE = Page(
    "checkify", cell_count=16, rtol=1e-6,
    different_messages=(
        # JAX 0.10.2's pmap over 3 entries on its 1 CPU device fails inside its shard_map with an
        # internal message ("cannot select an axis to squeeze out ..."); minijax's pmap says what is wrong.
        ("4", "pmap over more entries than devices"),
        # minijax's TracerBoolConversionError names the fixes and links minijax's docs, not JAX's.
        ("6", "tracer bool conversion: minijax's message adds the fixes"),
    ),
)

test_the_page_runs_on_minijax_and_shows_what_jax_shows = PAGE.main_test()
test_the_stored_cells_are_the_pages_code_only = PAGE.cells_test()

if __name__ == "__main__":
    PAGE.write_expected_main(sys.argv[1:], __doc__)
