"""Shared test configuration: hypothesis profiles, markers, and one run per backend.

Profiles: ``default`` (40 examples per property, random), ``ci`` (the same,
derandomized so that a CI run is reproducible; chosen when ``CI`` is set), and
``thorough`` (1000 examples) for hunting bugs. ``HYPOTHESIS_PROFILE`` picks one.

Backends: every test runs once per available backend -- ``numpy`` always,
``xla`` when jaxlib imports -- with that backend as minijax's default for the
test (the backend leads the test id: ``test_f[numpy]``, ``test_g[xla-abs]``).
The suites are written once and parametrised, not copied per backend; a test
that needs the name takes the ``backend_name`` fixture. A test that names its
backends itself (the registry, the XLA differential tests) or computes nothing
(packaging, pytrees, dtype rules) opts out with ``@pytest.mark.single_backend``
(or a module-level ``pytestmark``): it runs once, on whatever the default
backend is. Oracle tests (``@pytest.mark.oracle``) run once too. On a backend
other than numpy, hypothesis tests draw a quarter of the profile's examples
(see ``OTHER_BACKEND_EXAMPLES``).

``--backend NAME`` (repeatable) restricts the runs to the named backends, e.g.
``pytest --backend xla`` for the whole suite on XLA only.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from minijax.backend import get_backend
from minijax.config import config


def _share_compiled_bytecode() -> None:
    """Let the Python subprocesses the tests start (doc pages, seed scripts, processes of a
    distributed run: several hundred) import minijax from compiled bytecode.

    With ``PYTHONDONTWRITEBYTECODE`` set, as on some machines, every one of them
    compiled all of minijax from source again (about 0.35 s of CPU each). The
    bytecode goes to a folder of its own outside the tree (``PYTHONPYCACHEPREFIX``),
    so the tree stays as that setting keeps it. Python checks each file against
    its source, so a stale one is recompiled, never used.
    """
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        folder = os.path.join(tempfile.gettempdir(), f"minijax-tests-pycache-{os.getuid()}")
        os.environ["PYTHONPYCACHEPREFIX"] = folder
        del os.environ["PYTHONDONTWRITEBYTECODE"]


_share_compiled_bytecode()

_COMMON: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}

settings.register_profile("default", max_examples=40, **_COMMON)
settings.register_profile("ci", max_examples=40, derandomize=True, **_COMMON)
settings.register_profile("thorough", max_examples=1000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))

# The backends the suite knows how to run on, in the order their runs appear.
KNOWN_BACKENDS = ("numpy", "xla")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        action="append",
        choices=KNOWN_BACKENDS,
        default=None,
        help="run the backend-parametrised tests on this backend only (repeatable); "
        "default: every backend that loads here",
    )


@functools.cache
def _loads(name: str) -> bool:
    """Whether backend ``name`` can be created here (xla needs jaxlib)."""
    try:
        get_backend(name)
    except Exception:  # jaxlib missing, or a broken install: that backend's runs are left out
        return False
    return True


def backends_to_test(config: pytest.Config) -> list[str]:
    wanted: list[str] | None = config.getoption("--backend")
    names = [n for n in KNOWN_BACKENDS if wanted is None or n in wanted]
    available = [n for n in names if _loads(n)]
    if wanted is not None and available != names:
        missing = sorted(set(names) - set(available))
        raise pytest.UsageError(f"--backend asked for {missing}, which cannot be loaded here (xla needs jaxlib)")
    return available


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend_name" not in metafunc.fixturenames:
        return
    # Oracle tests compare with real JAX in their own environment: one run.
    if any(metafunc.definition.get_closest_marker(m) for m in ("single_backend", "oracle")):
        return
    names = backends_to_test(metafunc.config)
    # Module scope: a module's tests are grouped by backend, so module-scoped
    # fixtures (e.g. the seed scripts' runs) can depend on the backend too.
    metafunc.parametrize("backend_name", names, ids=names, indirect=True, scope="module")


@pytest.fixture(scope="module")
def backend_name(request: pytest.FixtureRequest) -> str | None:
    """The backend this test runs on, or None for a single-backend test."""
    name: str | None = getattr(request, "param", None)
    return name


@pytest.fixture(autouse=True)
def _run_on_backend(
    request: pytest.FixtureRequest, backend_name: str | None, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Make ``backend_name`` minijax's default backend for one test.

    The flag's global value is set (so threads the test starts see it too)
    and restored afterwards; the environment variable is set as well, so that
    a subprocess the test starts (doc pages, seed scripts) runs on the same
    backend.
    """
    if backend_name is None:
        yield
        return
    monkeypatch.setenv("MINIJAX_BACKEND", backend_name)
    previous = config.read("minijax_backend")
    config.update("minijax_backend", backend_name)
    try:
        with _examples_for(backend_name, request.function):
            yield
    finally:
        config.update("minijax_backend", previous)


# Hypothesis examples on a backend other than the reference, as a fraction of
# the profile's count. An eager op on xla compiles one executable per new
# signature (~10 ms), and property tests draw a new signature almost every
# example: at full count the xla runs would cost ~8x the numpy ones. The
# properties still run on xla, with fewer examples; the XLA differential tests
# (tests/test_xla_*.py, single-backend) explore XLA against NumPy at full count.
REFERENCE_BACKEND = "numpy"
OTHER_BACKEND_EXAMPLES = 0.25


@contextlib.contextmanager
def _examples_for(backend_name: str, test: Any) -> Iterator[None]:
    """Fewer hypothesis examples for ``test`` while it runs on a non-reference backend.

    Hypothesis fixes a test's settings when ``@given`` decorates it, so the
    count is changed on the decorated function for this call and put back.
    (``_hypothesis_internal_use_settings`` is hypothesis's attribute for
    them; were it renamed, the tests would run at full count: slower, not wrong.)
    """
    current = getattr(test, "_hypothesis_internal_use_settings", None)
    if backend_name == REFERENCE_BACKEND or not isinstance(current, settings):
        yield
        return
    fewer = max(1, int(current.max_examples * OTHER_BACKEND_EXAMPLES))
    test._hypothesis_internal_use_settings = settings(current, max_examples=fewer)
    try:
        yield
    finally:
        test._hypothesis_internal_use_settings = current
