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


def _call(param: str) -> Callable[[NumpyBackend, dict[str, Any]], Callable[..., Any]]:
    """Primitives that call one jaxpr held in ``param`` (custom_jvp_call, checkpoint, ...)."""

    def compile_call(backend: NumpyBackend, params: dict[str, Any]) -> Callable[..., Any]:
        closed = params[param]
        return backend.compile_jaxpr(closed.jaxpr, closed.consts)

    return compile_call


HIGHER_ORDER["jit"] = _jit
HIGHER_ORDER["custom_jvp_call"] = _call("call_jaxpr")
HIGHER_ORDER["custom_vjp_call"] = _call("call_jaxpr")
HIGHER_ORDER["remat2"] = _call("jaxpr")
