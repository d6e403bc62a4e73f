"""The pages of tests/test_doc_pages.py, run on real JAX and on minijax: the same output, the same arrays.

The stored expectation each page is held to must be what JAX shows, and on
each backend every array must agree with JAX's element by element
(tests/page_harness.py). Run where JAX is installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_doc_pages_oracle.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

from test_doc_pages import BY_NAME  # noqa: E402  (after the importorskip, on purpose)

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module", params=sorted(BY_NAME))
def page_and_jax_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    page = BY_NAME[request.param]
    return page, page.run(tmp_path_factory.mktemp("jax") / "out", as_minijax=False)


def test_jax_shows_the_stored_expectation(page_and_jax_run: tuple[Any, Any]) -> None:
    page, jax_run = page_and_jax_run
    page.oracle_tests()[1](jax_run)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_minijax_shows_what_jax_shows(backend: str, page_and_jax_run: tuple[Any, Any], tmp_path: Path) -> None:
    page, jax_run = page_and_jax_run
    page.oracle_tests()[2](backend, jax_run, tmp_path)
