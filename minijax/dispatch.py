"""Running on a backend: a primitive bound with no transformation active, or a compiled jaxpr.

An eager primitive (``apply_primitive``) gets its output avals from its
abstract-eval rule (so weak types and dtypes are decided in one place) and
its buffers from the backend, which prepares one runner per signature.
Higher-order primitives (jit, cond, loops, callbacks) have eager rules of
their own (``eager_rules``), most of which compile their jaxpr once and cache
the executable (``compiled_for``). Where a computation runs is
``minijax.placement``'s decision.

``apply_primitive`` is the plain path, the one to read. What is installed as
eager evaluation is ``apply_primitive_fast``, at the end of the module: the
same thing written for speed, taken when every operand is a live Array on one
device (``tests/test_dispatch.py`` checks that the two agree).
"""

from __future__ import annotations

import itertools
import logging
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from minijax import core, monitoring
from minijax.array import Array
from minijax.backend import Backend, Device, Executable, default_device, default_device_of
from minijax.caching import BoundedCache
from minijax.config import (
    GLOBAL_TRACE_CONTEXT,
    executable_cache_size,
    global_values,
    read as read_flag,
    thread_overrides,
    trace_context,
)
from minijax.core import Primitive, ShapedArray
from minijax.debug_checks import check_call_outputs, check_primitive_outputs, fp_checks_enabled, fp_switch
from minijax.jaxpr import ClosedJaxpr, eval_jaxpr, subjaxprs
from minijax.jaxpr_check import check_declared_types, check_result_sizes, nested as nested_check_context
from minijax.jaxpr_passes import dce_closed_jaxpr
from minijax.placement import placement, to_device

__all__ = [
    "apply_primitive",
    "aval_key",
    "call_primitives",
    "compiled_for",
    "eager_rules",
    "run_compiled",
]

# prim -> rule(backend, args_as_arrays, params) for primitives whose eager
# evaluation is not a single backend runner (e.g. jit: compile + run).
# The arrays are all on one device already.
eager_rules: dict[Primitive, Callable[[Backend, Sequence[Array], dict[str, Any]], list[Array]]] = {}

# Primitives that call the ClosedJaxpr in their ``jaxpr`` param on their
# operands (jit, checkpoint). Under jax_debug_nans a NaN in their outputs
# makes that jaxpr run again op by op, to name the operation that made it.
call_primitives: set[Primitive] = set()


# --- eager primitives ----------------------------------------------------------------

Runner = Callable[[Sequence[Any]], list[Any]]

# (prim, *operand keys, device, *params.items(), *param types) -> (out_avals, runner).
# Eager operations repeat with the same signature, so the abstract-eval rule
# and the backend's per-operation preparation run once per signature.
# Bounded (minijax_executable_cache_size): a runner may hold a compiled program.
_eager_cache: BoundedCache[tuple[Any, ...], tuple[list[ShapedArray], Runner]] = BoundedCache(
    "eager operations", executable_cache_size
)


def apply_primitive(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Run ``prim`` eagerly on ``args``: place the operands, then run the primitive's
    eager rule or the backend's runner for this signature, and wrap the buffers."""
    for x in args:
        if isinstance(x, core.Tracer):  # nothing is being traced here: it escaped its transformation
            core.raise_leaked_tracer(x)
    if _on_shards and any(type(x) is Array and x._shards is not None for x in args):
        # mproc (issue 17): primitives with an eager rule (cond, loops, calls) too: their rules run
        # on whole values, which no process holds of an array spanning processes; jitted, each
        # result keeps the layout XLA gives it, as in JAX.
        return _on_shards[0](prim, args, params)
    device, committed = placement(args, prim.name, lambda: [f"args[{i}]" for i in range(len(args))])
    arrays = [to_device(x, device) for x in args]
    if prim in eager_rules:
        return _apply_eager_rule(prim, device, arrays, params)
    out_avals, runner = _runner_for(prim, device, arrays, params)
    out_bufs = runner([a._buf for a in arrays])
    results = [Array(b, a, device.backend, device, committed) for b, a in zip(out_bufs, out_avals)]
    if fp_switch.on and fp_checks_enabled():
        check_primitive_outputs(prim.name, [x.aval for x in arrays], results)
    return results if prim.multiple_results else results[0]


def _runner_for(
    prim: Primitive, device: Device, arrays: Sequence[Array], params: dict[str, Any]
) -> tuple[list[ShapedArray], Runner]:
    """The output avals and the backend's runner for this signature, prepared once."""
    try:
        key: tuple[Any, ...] | None = eager_key(prim, [aval_key(a.aval) for a in arrays], device, params)
        hash(key)
    except TypeError:  # a param value that is not hashable: no caching
        key = None
    in_avals = [a.aval for a in arrays]
    if key is None:
        return _prepare(prim, device, in_avals, params)
    return _eager_cache.get_or_make(key, lambda: _prepare(prim, device, in_avals, params))


def eager_key(prim: Primitive, operand_keys: list[Any], device: Device, params: dict[str, Any]) -> tuple[Any, ...]:
    """The eager cache's key for ``prim`` on operands of ``operand_keys`` (``aval_key``).

    A param's type (and its elements', for a tuple or list) is part of the key:
    1 == True == 1.0 hash alike, but a rule may accept one and reject another.
    The trace context too: a rule's output type may follow a flag (x64 gives
    ``dim_as_value`` an int64 result, and it has no operand whose type would
    say so). ``apply_primitive_fast`` builds the same key inline.
    """
    key: list[Any] = [prim, *operand_keys, device, trace_context()]
    for name, value in params.items():
        key += (name, value, core.param_type_key(value))
    return tuple(key)


def _prepare(
    prim: Primitive, device: Device, in_avals: list[ShapedArray], params: dict[str, Any]
) -> tuple[list[ShapedArray], Runner]:
    out = prim.abstract_eval(*in_avals, **params)
    for sub in subjaxprs(params):  # a jaxpr in the params: run by the backend as it says
        check_declared_types(sub, prim.name)
    out_avals: list[ShapedArray] = list(out) if prim.multiple_results else [out]
    check_result_sizes(prim.name, out_avals)
    backend = device.backend
    if device is backend.devices()[0]:
        runner = backend.prepare(prim, params, in_avals, out_avals)
    else:
        runner = backend.prepare(prim, params, in_avals, out_avals, device=device)  # type: ignore[call-arg]
    # The operands' types are the cache key's: a backend may offer a call that
    # skips checking them again (the xla backend's ``unchecked``).
    return out_avals, getattr(runner, "unchecked", runner)


def _apply_eager_rule(prim: Primitive, device: Device, arrays: Sequence[Array], params: dict[str, Any]) -> Any:
    if prim not in call_primitives:  # (a call's jaxpr is checked when compiled)
        for sub in subjaxprs(params):  # cond's branches, a loop's body: run as they say
            with nested_check_context(prim.name, params):  # shard_map binds its axis names there
                check_declared_types(sub, prim.name)
    outs = eager_rules[prim](device.backend, arrays, params)
    if fp_switch.on and fp_checks_enabled():
        _check_eager_rule_outputs(prim, arrays, params, outs)
    return outs if prim.multiple_results else outs[0]


def _check_eager_rule_outputs(prim: Primitive, args: Sequence[Array], params: dict[str, Any], outs: Sequence[Array]) -> None:
    """jax_debug_nans for primitives run by an eager rule; a call is re-run op by op."""
    if prim not in call_primitives:
        check_primitive_outputs(prim.name, [x.aval for x in args], outs)
        return
    closed: ClosedJaxpr = params["jaxpr"]
    name = f"{prim.name}({params['name']})" if "name" in params else prim.name
    live = all(x._buf is not None for x in args)
    check_call_outputs(name, outs, (lambda: eval_jaxpr(closed.jaxpr, closed.consts, *args)) if live else None)


# --- compiled jaxprs -----------------------------------------------------------

# (id(jaxpr), device, donated inputs) -> (a weak reference to the jaxpr, its
# executable), bounded (minijax_executable_cache_size). Weak: the cache must
# not keep a jaxpr alive, nor with it the arrays a jitted function captured
# (its consts, whose buffers the executable may share); when the jaxpr goes,
# the reference's callback drops its entries, so an id is never looked up
# after its jaxpr is gone.
_compiled: BoundedCache[tuple[int, Device, tuple[bool, ...]], tuple[weakref.ref[ClosedJaxpr], Executable]] = BoundedCache(
    "compiled jaxprs", executable_cache_size
)


logger = logging.getLogger(__name__)


def compile_log_level() -> int:
    """Where trace and compile messages go: WARNING under ``jax.log_compiles``, else DEBUG (as JAX does)."""
    return logging.WARNING if read_flag("jax_log_compiles") else logging.DEBUG


def _aval_repr(aval: ShapedArray) -> str:
    weak = ", weak_type=True" if aval.weak_type else ""
    return f"ShapedArray({aval.str_short(short_dtypes=False)}{weak})"


# compat (issue 24): rewrites of a jaxpr for a backend before it compiles it, installed by the layers above
# (minijax.interpreters.impl_inline expands the primitives a library defined by an impl alone, which no
# backend knows). Each is ``rewrite(closed, backend) -> closed``.
_compile_rewrites: list[Callable[[ClosedJaxpr, Backend], ClosedJaxpr]] = []


# issue 17: how an eager operation on arrays of per-device buffers (``Array._shards``) runs, installed
# by minijax.stages: as a jitted program, so that it runs on every device and keeps their layout (as
# JAX runs it). ``run(prim, args, params)`` -> what ``apply_primitive`` returns.
_on_shards: list[Callable[[Primitive, Sequence[Any], dict[str, Any]], Any]] = []


def install_sharded_eager(run: Callable[[Primitive, Sequence[Any], dict[str, Any]], Any]) -> None:
    """Run eager operations on arrays laid out over several devices with ``run``."""
    _on_shards[:] = [run]


def install_compile_rewrite(rewrite: Callable[[ClosedJaxpr, Backend], ClosedJaxpr]) -> None:
    """Apply ``rewrite(closed, backend)`` to every jaxpr before a backend compiles it."""
    _compile_rewrites.append(rewrite)


def compiled_for(
    closed: ClosedJaxpr, device: Device, donated_invars: Sequence[bool] = (), name: str | None = None
) -> Executable:
    """The executable for ``closed`` on ``device`` (with those inputs donated), compiled once and cached.

    ``name`` (a jitted function's) is what the compile log calls the program."""
    donated = tuple(donated_invars)
    key = (id(closed), device, donated)

    def compile_() -> tuple[weakref.ref[ClosedJaxpr], Executable]:
        check_declared_types(closed.jaxpr, "jit")
        level = compile_log_level()
        program = f"jit({name or 'jaxpr'})"
        if logger.isEnabledFor(level):
            # JAX's words, so that tools reading its logs read ours. minijax has
            # no shardings: every argument's is JAX's "unspecified".
            avals = tuple(closed.in_avals)
            shapes = "(" + ", ".join(map(_aval_repr, avals)) + ("," if len(avals) == 1 else "") + ")"
            mapping = "(" + ", ".join(["UnspecifiedValue"] * len(avals)) + ("," if len(avals) == 1 else "") + ")"
            logger.log(level, "Compiling %s with global shapes and types %s. Argument mapping: %s.", program, shapes, mapping)
        start = time.perf_counter()
        backend = device.backend
        donation = donated if any(donated) else None
        program_for_backend = closed
        for rewrite in _compile_rewrites:  # compat (issue 24): e.g. a library's impl-only primitives expanded
            program_for_backend = rewrite(program_for_backend, backend)
        # Dead code goes before any backend sees the program, as in JAX's lowering: a pure callback whose
        # result is unused never runs, on every backend alike (XLA would drop it itself; the reference
        # interpreter would not).
        program_for_backend = dce_closed_jaxpr(program_for_backend)
        with monitoring.timed_event(monitoring.BACKEND_COMPILE_EVENT, program):
            if device is backend.devices()[0]:
                executable = backend.compile(program_for_backend, donated_invars=donation)
            else:
                executable = backend.compile(program_for_backend, donated_invars=donation, device=device)  # type: ignore[call-arg]
        if logger.isEnabledFor(level):
            logger.log(level, "Finished %s compilation of %s in %.9f sec", backend.name, program, time.perf_counter() - start)
        return weakref.ref(closed, lambda _: _compiled.discard(key)), executable

    return _compiled.get_or_make(key, compile_)[1]


def run_compiled(backend: Backend, closed: ClosedJaxpr, arrays: Sequence[Array]) -> list[Array]:
    """Run ``closed`` on arrays that are all on one device of ``backend``."""
    device = arrays[0]._device if arrays else default_device_of(backend)
    committed = any(a._committed for a in arrays)
    executable = compiled_for(closed, device)
    bufs = executable([a._buf for a in arrays])
    return [Array(b, aval, backend, device, committed) for b, aval in zip(bufs, closed.out_avals)]


# =====================================================================================
# Fast path. An optimisation of ``apply_primitive`` above, which is what it
# computes: read that one. Every eager operation of a program goes through
# here, so this is written for speed. One flat pass over the operands checks
# that they are live Arrays on one device (committed, or the default one),
# gathers their buffers and builds the cache key; anything else goes to
# ``apply_primitive``.
# =====================================================================================

# Operand avals enter cache keys as small ints naming (shape, dtype,
# weak_type): an int hashes and compares without touching the shape tuple and
# the dtype (an aval's own __hash__ and __eq__ are Python calls). The table is
# bounded; when it is cleared, later avals get fresh keys, which only costs
# the caches keyed on them a miss (keys are never reused).
_aval_keys: dict[tuple[Any, ...], int] = {}
_aval_key_counter = itertools.count()
_AVAL_KEYS_MAX = 100_000


def aval_key(aval: ShapedArray) -> int:
    """An int naming ``aval``'s (shape, dtype, weak_type): equal avals, equal keys."""
    key = aval.fast_key
    if key is None:
        triple = (aval.shape, aval.dtype, aval.weak_type)
        key = _aval_keys.get(triple)
        if key is None:
            if len(_aval_keys) >= _AVAL_KEYS_MAX:
                _aval_keys.clear()
            key = _aval_keys.setdefault(triple, next(_aval_key_counter))  # (atomic: threads agree)
        aval.fast_key = key
    return key


def apply_primitive_fast(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """``apply_primitive`` for live Arrays on one device (see the banner above)."""
    key: list[Any] = [prim]
    bufs: list[Any] = []
    device: Device | None = None
    committed = False
    for x in args:
        if type(x) is not Array:
            return apply_primitive(prim, args, params)
        buf = x._buf
        if buf is None or (x._device is not device and device is not None):
            return apply_primitive(prim, args, params)
        device = x._device
        if x._committed:
            committed = True
        aval = x.aval
        k = aval.fast_key
        key.append(aval_key(aval) if k is None else k)
        bufs.append(buf)
    if not committed and device is not default_device():
        if args:  # uncommitted operands elsewhere move to the default device
            return apply_primitive(prim, args, params)
        device = default_device()  # no operands (iota)
    # (A primitive with an eager rule never has an entry: apply_primitive runs it.)
    key.append(device)
    key.append(global_values[GLOBAL_TRACE_CONTEXT] if not thread_overrides.values else trace_context())
    for name, value in params.items():  # as eager_key, param_type_key inlined for a value of no elements
        t = type(value)
        key.append(name)
        key.append(value)
        key.append(core.param_type_key(value) if t is tuple or t is list else t)
    try:
        cached = _eager_cache.entries.get(tuple(key))  # ``_eager_cache.get``, without the call
    except TypeError:  # a param value that is not hashable
        return apply_primitive(prim, args, params)
    if cached is None:
        return apply_primitive(prim, args, params)  # (which fills the cache)
    cached[1] = True
    out_avals, runner = cached[0]
    out_bufs = runner(bufs)
    backend = device.backend  # type: ignore[union-attr]  # (set: by an operand, or to the default above)
    if prim.multiple_results:
        results = [Array(b, a, backend, device, committed) for b, a in zip(out_bufs, out_avals)]
    else:
        results = [Array(out_bufs[0], out_avals[0], backend, device, committed)]
    if fp_switch.on and fp_checks_enabled():
        check_primitive_outputs(prim.name, [x.aval for x in args], results)
    return results if prim.multiple_results else results[0]


core.install_eval(apply_primitive_fast)


def _eager_rule_from_impl(prim: Primitive) -> None:
    impl = core.impl_rules[prim]

    def rule(backend: Backend, arrays: Sequence[Array], params: dict[str, Any]) -> list[Array]:
        out = impl(*arrays, **params)
        # Multiple results come back as the impl made them (a tuple stays a tuple, as in JAX).
        return out if prim.multiple_results else [out]  # type: ignore[no-any-return]

    eager_rules[prim] = rule
    _eager_cache.clear()  # the fast path runs no primitive with an eager rule from the cache


core.install_impl_hook(_eager_rule_from_impl)
