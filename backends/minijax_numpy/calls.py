"""NumPy implementations of the call primitives (jit, custom_jvp_call, custom_vjp_call, remat2,
custom_vmap_call).

Each runs its jaxpr, compiled once when the equation is prepared: the custom
rules and remat2's policy matter only to transformations, never to execution.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minijax_numpy.shard_map import compile_shard_map
from minijax_numpy.table import HIGHER_ORDER, JaxprCompiler


def _jit(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., Any]:
    closed = params["jaxpr"]
    return backend.compile_jaxpr(closed.jaxpr, closed.consts)


def _call(param: str) -> Callable[[JaxprCompiler, dict[str, Any]], Callable[..., Any]]:
    """Primitives that call one jaxpr held in ``param`` (custom_jvp_call, custom_vjp_call, remat2)."""

    def compile_call(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., Any]:
        closed = params[param]
        return backend.compile_jaxpr(closed.jaxpr, closed.consts)

    return compile_call


HIGHER_ORDER["jit"] = _jit
HIGHER_ORDER["shard_map"] = compile_shard_map  # the body once per device, in lockstep
HIGHER_ORDER["custom_jvp_call"] = _call("call_jaxpr")
HIGHER_ORDER["custom_vjp_call"] = _call("call_jaxpr")
HIGHER_ORDER["remat2"] = _call("jaxpr")
HIGHER_ORDER["custom_vmap_call"] = _call("call")
