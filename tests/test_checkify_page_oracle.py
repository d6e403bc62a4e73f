"""JAX's "The checkify transformation" page, run on real JAX and on minijax: the same output, the same arrays.

The stored expectation that tests/test_checkify_page.py holds minijax to
must be what JAX shows, and on each backend every array and plotted value must
agree with JAX's element by element (tests/page_harness.py). Run where JAX is
installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_checkify_page_oracle.py
"""

from __future__ import annotations

import pytest

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

from test_checkify_page import PAGE  # noqa: E402  (after the importorskip, on purpose)

pytestmark = pytest.mark.oracle

jax_run, test_jax_shows_the_stored_expectation, test_minijax_shows_what_jax_shows = PAGE.oracle_tests()
