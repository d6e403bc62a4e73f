"""Lowering of the host-callback primitives (debug_callback, debug_print,
pure_callback, io_callback) to jaxlib's Python CPU-callback custom call.

Each equation becomes one custom call naming a Python function by its index
in the module context's ``host_callbacks`` list, which the backend hands to
XLA when it compiles the module. The function receives the operands as NumPy
arrays, runs the primitive on the host (``minijax.primitives.callbacks``:
the user's function gets Arrays on this backend, and its results are checked
against the result avals, which XLA would not do) and returns the results.

Order: XLA runs independent side effects in any order, even on several
threads at once. Ordered callbacks (``ordered=True``, and debug_callback with
an OrderedDebugEffect) are chained by a token: each takes the token the
previous one returned, so they run in program order. The chain is kept per
block being emitted; a nested function (a jit inside the program) starts a
chain of its own.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from jaxlib.mlir import ir

from minijax.backend import get_backend
from minijax.config import enable_x64, x64_enabled
from minijax.core import Primitive
from minijax.primitives.callbacks import CALLBACK_PRIMITIVES, has_side_effect, is_ordered, run_on_host_values
from minijax_xla import jaxlib_api
from minijax_xla.lowering import LoweringRuleContext, ir_type, register

HostFunction = Callable[..., tuple[Any, ...]]

# Module context -> block -> the token the last ordered callback emitted there.
_tokens: weakref.WeakKeyDictionary[Any, dict[ir.Block, ir.Value[Any]]] = weakref.WeakKeyDictionary()


def _add_host_callback(module_context: Any, fn: HostFunction) -> int:
    """Register ``fn`` with the module being built; its index for the custom call."""
    callbacks: list[HostFunction] | None = getattr(module_context, "host_callbacks", None)
    if callbacks is None:
        # Compiling the call without handing XLA the function would crash the process.
        raise NotImplementedError(
            "the xla backend cannot compile host callbacks here: its module context has no "
            "host_callbacks list to hand to XLA (see callbacks.py)"
        )
    callbacks.append(fn)
    return len(callbacks) - 1


def _current_token(module_context: Any) -> ir.Value[Any]:
    chains = _tokens.setdefault(module_context, {})
    block = ir.InsertionPoint.current.block
    token = chains.get(block)
    if token is None:
        token = chains[block] = jaxlib_api.create_token()
    return token


def _set_token(module_context: Any, token: ir.Value[Any]) -> None:
    _tokens[module_context][ir.InsertionPoint.current.block] = token


def _host_function(prim: Primitive, params: dict[str, Any], takes_token: bool) -> HostFunction:
    """What XLA calls: NumPy arrays in (a token first when ordered), a tuple of NumPy arrays out."""
    # XLA may call from one of its own threads, where this thread's flag
    # overrides (``with enable_x64(...)``) are not in force: the callback runs
    # with the x64 setting the program was traced and lowered with.
    x64 = x64_enabled()

    def call(*values: Any) -> tuple[Any, ...]:
        # A token arrives first (jaxlib passes it as None) and must go back first.
        tokens, operands = (values[:1], values[1:]) if takes_token else ((), values)
        with enable_x64(x64):
            results = run_on_host_values(prim, operands, params, get_backend("xla"))
        return (*tokens, *results)

    return call


def _lowering(prim: Primitive) -> Callable[..., Sequence[ir.Value[Any]]]:
    def rule(ctx: LoweringRuleContext, *operands: ir.Value[Any], **params: Any) -> Sequence[ir.Value[Any]]:
        mctx = ctx.module_context
        platform = "gpu" if getattr(mctx, "platform", "cpu") in ("gpu", "cuda", "rocm") else "cpu"
        result_types = [ir_type(a) for a in ctx.avals_out]
        ordered = is_ordered(prim, params)
        index = _add_host_callback(mctx, _host_function(prim, params, takes_token=ordered))
        if not ordered:
            return jaxlib_api.emit_host_callback(index, operands, result_types, has_side_effect(prim), platform)
        token, *results = jaxlib_api.emit_host_callback(
            index, [_current_token(mctx), *operands], [jaxlib_api.token_type(), *result_types], True, platform
        )
        _set_token(mctx, token)
        return results

    return rule


for _prim in CALLBACK_PRIMITIVES:
    register(_prim.name)(_lowering(_prim))
del _prim
