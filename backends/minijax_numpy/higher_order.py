"""NumPy implementations of primitives that carry jaxprs (jit; later control flow)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from minijax_numpy.table import HIGHER_ORDER

if TYPE_CHECKING:
    from minijax_numpy.backend import NumpyBackend


def _jit(backend: NumpyBackend, params: dict[str, Any]) -> Callable[..., Any]:
    closed = params["jaxpr"]
    return backend.compile_jaxpr(closed.jaxpr, closed.consts)


HIGHER_ORDER["jit"] = _jit
