"""The pytest plugin of the conformance suite: its command-line options.

minijax's ``pytest11`` entry point loads it in every pytest run of an
environment where minijax is installed; run the suite as a test module::

    pytest --pyargs minijax.testing.conformance --minijax-backend=NAME

Each row of the conformance table becomes one test
(``test_conformance[primitive-sin-float32]``); a failing row fails with its
verdict and the path of its reproducer, an unsupported one is skipped. The
plugin only adds options: it changes nothing else in a pytest run.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("minijax", "minijax conformance (pytest --pyargs minijax.testing.conformance)")
    group.addoption("--minijax-backend", dest="minijax_backend", default=None, metavar="NAME",
                    help="the backend to check (or MINIJAX_CONFORMANCE_BACKEND)")
    group.addoption("--minijax-only", dest="minijax_only", default=None, metavar="PRIMS",
                    help="comma-separated primitive names to check (or MINIJAX_CONFORMANCE_ONLY)")
    group.addoption("--minijax-slice", dest="minijax_slice", default=None, metavar="K/N",
                    help="check only the K-th of N slices of the primitives (or MINIJAX_CONFORMANCE_SLICE)")
    group.addoption("--minijax-examples", dest="minijax_examples", default=None, metavar="N",
                    help="hypothesis examples per primitive and dtype (or MINIJAX_CONFORMANCE_EXAMPLES)")
    group.addoption("--minijax-reproducers", dest="minijax_reproducers", default=None, metavar="DIR",
                    help="where failing checks are written (or MINIJAX_CONFORMANCE_REPRODUCERS)")
    group.addoption("--minijax-import", dest="minijax_import", default=None, metavar="MODULES",
                    help="comma-separated modules to import first, e.g. one that registers the backend")  # fmt: skip
