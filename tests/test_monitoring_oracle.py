"""jax.monitoring against real JAX: the same names and keywords for a jit call's trace and compile."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402  (after the importorskip)

pytestmark = pytest.mark.oracle

# Events JAX records and minijax does not: lowering is timed within the backend's compile.
JAX_ONLY = ("/jax/core/compile/jaxpr_to_mlir_module_duration",)


def _durations(lib: Any) -> list[tuple[str, dict[str, Any]]]:
    seen: list[tuple[str, dict[str, Any]]] = []

    def listener(event: str, duration: float, **kwargs: Any) -> None:
        if event.startswith("/jax/core/") and event not in JAX_ONLY:
            seen.append((event, kwargs))

    lib.monitoring.register_event_duration_secs_listener(listener)
    try:
        def scaled_sum(x: Any) -> Any:
            return (x * 2).sum()

        lib.jit(scaled_sum)(np.ones(3, np.float32))
        lib.jit(scaled_sum)(np.ones(3, np.float32))
    finally:
        lib.monitoring.unregister_event_duration_listener(listener)
    return seen


def test_a_jit_call_reports_what_jax_reports() -> None:
    assert _durations(minijax) == _durations(jax)
    public = {n for n in dir(jax.monitoring) if not n.startswith("_")}
    assert public <= set(dir(minijax.monitoring)), sorted(public - set(dir(minijax.monitoring)))
