"""Running a conformance check: the runner of each kind of check, and ``replay``.

A check's ``kind`` says how a backend is judged on it (see
``minijax.testing.checks``); ``run_check`` looks the runner up in ``RUNNERS``
and turns whatever the backend raises into an ``Outcome``.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable

import numpy as np

from minijax.backend import Backend
from minijax.config import enable_x64
from minijax.testing import laws, programs
from minijax.testing.checks import (
    Check,
    Outcome,
    Unsupported,
    backend_named,
    first_line,
    load_reproducer,
    require_support,
    run_jit,
    run_primitive,
    run_program,
    verdict,
)
from minijax.testing.loading import DEFAULT_MAX_BYTES

__all__ = ["RUNNERS", "replay", "run_check"]


def _run_law(check: Check, backend: Backend, reference: Backend) -> Outcome:
    # A law relates a backend's results to each other: the reference is not consulted.
    return laws.run_law(check, backend)


# kind -> runner(check, backend, reference)
RUNNERS: dict[str, Callable[[Check, Backend, Backend], Outcome]] = {
    "primitive": run_primitive,
    "jit": run_jit,
    "program": run_program,
    "jvp": _run_law,
    "vjp": _run_law,
    "transpose": _run_law,
    "vmap": _run_law,
    "nested": programs.run_nested,
}


def run_check(check: Check, backend: Backend, reference: Backend) -> Outcome:
    """Judge ``backend`` on ``check`` (see minijax.testing.checks); never raises for the backend's failures."""
    with enable_x64(check.x64):
        try:
            require_support(backend, check.jaxpr.jaxpr)
            return RUNNERS[check.kind](check, backend, reference)
        except Unsupported as e:
            return Outcome("unsupported", message=str(e))
        except Exception as e:  # the backend (or a rule it exercised) raised: a failure, with its message
            return Outcome("error", np.inf, f"raised {type(e).__name__}: {first_line(e)}")


def replay(
    directory: pathlib.Path,
    backend: str | None = None,
    reference: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> tuple[Outcome, str]:
    """Re-run the reproducer in ``directory`` (on the backends it names unless given): the outcome and verdict.

    The reproducer is validated first (``load_reproducer``); one that needs more than ``max_bytes``
    is refused with a ``ReproducerError`` before anything is allocated for it."""
    check, meta = load_reproducer(directory, max_bytes)
    backend_name = backend or str(meta["backend"])
    reference_name = reference or str(meta["reference"])
    outcome = run_check(check, backend_named(backend_name), backend_named(reference_name))
    return outcome, verdict(check, outcome, backend_name, reference_name)
