"""Checks that are off by default because they cost time: for debugging.

* ``jax_debug_nans`` / ``jax_debug_infs``: every eager operation's outputs are
  checked, and the first primitive that produces a NaN (an infinity) raises
  ``FloatingPointError`` naming it. A compiled program (``jit``) is checked as
  a whole; when its outputs hold a NaN it is run again op by op on the same
  inputs, as JAX does, so that the error names the primitive inside it.
* ``jax_check_tracer_leaks`` (``minijax.api.checking_leaks()``): when a
  transformation ends, none of its tracers may still be referenced from
  outside it; a global list, a closure cell or an object attribute that kept
  one makes the transformation raise ``UnexpectedTracerError`` right away,
  naming who holds it, instead of failing later where the tracer is used.

Both read their flags through ``enabled`` caches keyed on the config
generation, so that the eager hot path pays one comparison while they are off.
"""

from __future__ import annotations

import gc
import sys
import threading
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes
from minijax.config import generation, global_value, overridden_anywhere, read, register_listener
from minijax.core import Trace, Tracer
from minijax.errors import UnexpectedTracerError, docs_link, see_docs

DEBUGGING_PAGE = "debugging.md"

# --- flags, read cheaply -----------------------------------------------------------


class _FlagCache:
    """Whether any of ``names`` is on, cached per config generation.

    Cached process-wide only while no thread overrides the flags with a
    ``config_context`` (then each thread reads its own value every time).
    """

    __slots__ = ("names", "state")

    def __init__(self, *names: str) -> None:
        self.names = names
        self.state: tuple[int, bool] = (-1, False)  # (generation, on): one atomic read

    def enabled(self) -> bool:
        gen, on = self.state
        if gen == generation.value:
            return on
        gen = generation.value
        on = any(bool(read(n)) for n in self.names)
        if not overridden_anywhere(self.names):
            self.state = (gen, on)
        return on


_fp_flags = _FlagCache("jax_debug_nans", "jax_debug_infs")
_leak_flag = _FlagCache("jax_check_tracer_leaks")


class _Switch:
    """``on`` is False only while no thread can have a NaN/inf check on: the
    eager hot path reads this one attribute and asks nothing more."""

    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = True


fp_switch = _Switch()


_fp_switch_lock = threading.Lock()


def _update_fp_switch(name: str = "", value: Any = None) -> None:
    if name and name not in _fp_flags.names:
        return
    # A thread's override is counted before the listeners hear of it, so a
    # check switched on anywhere is seen here. Read and stored under a lock: a
    # thread leaving a context could otherwise read "none anywhere", let
    # another thread enter one and switch on, then store its stale "off".
    with _fp_switch_lock:
        fp_switch.on = any(bool(global_value(n)) for n in _fp_flags.names) or overridden_anywhere(_fp_flags.names)


register_listener(_update_fp_switch)
_update_fp_switch()


def fp_checks_enabled() -> bool:
    """Whether outputs are checked for NaNs or infinities (jax_debug_nans / jax_debug_infs)."""
    return _fp_flags.enabled()


def leak_checks_enabled() -> bool:
    """Whether transformations check for leaked tracers when they end (jax_check_tracer_leaks)."""
    return _leak_flag.enabled()


# --- NaN and inf ---------------------------------------------------------------------


def _invalid_kind(arrays: Sequence[Any]) -> tuple[str, int] | None:
    """("nan" or "inf", output index) of the first output holding one that is checked for."""
    nans, infs = bool(read("jax_debug_nans")), bool(read("jax_debug_infs"))
    for i, x in enumerate(arrays):
        aval = getattr(x, "aval", None)
        if aval is None or not dtypes.issubdtype(aval.dtype, np.inexact) or aval.size == 0:
            continue
        value = np.asarray(x._value)
        if nans and np.isnan(value).any():
            return "nan", i
        if infs and np.isinf(value).any():
            return "inf", i
    return None


def _fp_error(kind: str, where: str, detail: str) -> FloatingPointError:
    flag = "jax_debug_nans" if kind == "nan" else "jax_debug_infs"
    return FloatingPointError(
        f"invalid value ({kind}) encountered in {where}\n{detail}\n"
        f"minijax checks every operation's outputs because {flag} is on; turn it off with "
        f"minijax.config.update({flag!r}, False). {see_docs(DEBUGGING_PAGE, 'nans-and-infinities')}"
    )


def check_primitive_outputs(prim_name: str, in_avals: Sequence[Any], outs: Sequence[Any]) -> None:
    """Raise FloatingPointError if an output of an eager ``prim_name`` holds a NaN / inf."""
    found = _invalid_kind(outs)
    if found is None:
        return
    kind, i = found
    operands = ", ".join(a.str_short() for a in in_avals) or "no operands"
    raise _fp_error(kind, prim_name, f"(output {i}, {outs[i].aval.str_short()}, of {prim_name} applied to {operands})")


def check_call_outputs(name: str, outs: Sequence[Any], rerun: Callable[[], Any] | None) -> None:
    """Check the outputs of a compiled program ``name`` (a jit call).

    On a NaN / inf, ``rerun()`` runs the program again op by op (each
    operation then checked by ``check_primitive_outputs``), so that the error
    names the primitive. If the op-by-op run stays clean (XLA's fusions can
    round differently) or cannot be made (``rerun`` is None: the inputs were
    donated), the error names the program instead.
    """
    found = _invalid_kind(outs)
    if found is None:
        return
    kind, i = found
    if rerun is None:
        raise _fp_error(
            kind, name, f"(output {i}, {outs[i].aval.str_short()}; its inputs were donated, so it cannot be re-run op by op)"
        )
    rerun()
    raise _fp_error(
        kind,
        name,
        f"(output {i}, {outs[i].aval.str_short()}). The program was run again op by op to find the "
        "operation, but no single operation produced it: the compiled program's optimizations "
        "(fused or reordered operations) may compute differently.",
    )


# --- leaked tracers -----------------------------------------------------------------------

# Walking outwards from a tracer through whatever refers to it (lists,
# objects, closures, other tracers, jaxprs that are still being built), a
# tracer is leaked when the walk reaches a module or a class: something that
# lives on after the transformation, where the next use will find it. Frames
# are not followed: a running function's locals are its own business (the
# transformation's machinery holds its inputs and outputs there).
_ROOTS = (types.ModuleType, type)
_MAX_DEPTH = 7
_MAX_OBJECTS = 100_000  # stop walking outwards from a tracer held by this much


class _EndedTraces(threading.local):
    """Per thread: transformations that ended inside one still running."""

    def __init__(self) -> None:
        self.traces: list[weakref.ref[Trace]] = []


_ended = _EndedTraces()


def check_for_leaks(trace: Trace, *held: Any) -> None:
    """Called by a transformation that just ended (with jax_check_tracer_leaks on).

    ``held``: the containers the transformation itself still holds (its input
    tracers, its outputs), whose references do not count. Inside an
    enclosing transformation the check waits until the outermost one ends:
    by then nothing of the machinery holds a tracer any more, so every trace
    that ended is checked with one heap scan (``gc.get_referrers``, as JAX's
    check does), instead of one scan per nested trace.
    """
    _ended.traces.append(weakref.ref(trace))
    if core.current_trace() is not core.eval_trace:
        return
    traces = [t for t in (r() for r in _ended.traces) if t is not None]
    _ended.traces.clear()
    _check(traces, held)


def _check(traces: list[Trace], held: Sequence[Any]) -> None:
    """Raise UnexpectedTracerError if a tracer of ``traces`` is still referenced
    from a module or a class, directly or through other objects."""
    ended = {id(t) for t in traces}
    tracers = [r for r in gc.get_referrers(*traces) if isinstance(r, Tracer) and id(r._trace) in ended]
    del traces
    # Most tracers are referred to only by what the transformation holds:
    # counting references settles those without walking the heap.
    known = _known_references(held)
    suspects = [t for t in tracers if sys.getrefcount(t) > known.get(id(t), 0) + _OWN_REFERENCES]
    if not suspects or _root_holding(suspects, (*held, tracers)) is None:
        return
    gc.collect()  # garbage cycles also refer to tracers: only live holders count
    leaked = []
    for t in suspects:
        root = _root_holding([t], (*held, tracers, suspects))
        if root is not None:
            leaked.append(f"  {t!r}, created by {t._trace.describe()}, is referred to by {_describe(root, t)}")
    if not leaked:
        return
    raise UnexpectedTracerError(
        f"Leaked trace: a transformation ended, but {len(leaked)} of its tracers "
        "are still referenced from outside it:\n" + "\n".join(leaked) + "\n"
        f"(found because jax_check_tracer_leaks / minijax.api.checking_leaks() is on; {docs_link(DEBUGGING_PAGE, 'leaked-tracers')})"
    )


# References to a tracer from check_for_leaks itself while it counts: the
# ``tracers`` list, the comprehension's variable and getrefcount's argument.
_OWN_REFERENCES = 3


def _known_references(held: Sequence[Any]) -> dict[int, int]:
    """id -> how many references the held containers make to it: their items,
    the items of tuples/lists in them (``pairs``), and what tracers among
    those refer to (a JVP tracer's primal and tangent, a batch tracer's value)."""
    counts: dict[int, int] = {}

    def count(x: Any) -> None:
        counts[id(x)] = counts.get(id(x), 0) + 1

    for container in held:
        for item in container:
            count(item)
            inner = item if isinstance(item, (tuple, list)) else (item,)
            for x in inner:
                if x is not item:
                    count(x)
                if isinstance(x, Tracer):
                    for referent in gc.get_referents(x):
                        count(referent)
    return counts


def _root_holding(objects: list[Any], held: Sequence[Any]) -> Any:
    """A module or class that ``objects`` are reachable from (not through
    frames or ``held``), walking referrers outwards; None when there is none."""
    ignore = {id(objects), id(held), *(id(h) for h in held)}
    seen = {id(o) for o in objects}
    level: list[Any] = list(objects)
    for _ in range(_MAX_DEPTH):
        if not level or len(seen) > _MAX_OBJECTS:
            return None
        args = tuple(level)
        referrers = gc.get_referrers(*args)
        next_level: list[Any] = []
        ignore.update((id(level), id(args), id(referrers), id(next_level)))
        for r in referrers:
            if id(r) in ignore or id(r) in seen or isinstance(r, types.FrameType):
                continue
            if isinstance(r, _ROOTS):
                return r
            seen.add(id(r))
            next_level.append(r)
        level = next_level
    return None


def _describe(root: Any, tracer: Tracer) -> str:
    """``module __main__ (its global cache['last'])``: the root and the path from it."""
    kind = "module" if isinstance(root, types.ModuleType) else "class"
    qualname = root.__name__ if kind == "module" else f"{root.__module__}.{root.__qualname__}"
    path = _path_to(root, tracer)
    where = f" (its {'global' if kind == 'module' else 'attribute'} {path})" if path else ""
    return f"{kind} {qualname}{where}"


def _path_to(root: Any, tracer: Tracer, max_depth: int = 5) -> str | None:
    """The shortest path of names, items and attributes from ``root`` to ``tracer``
    (``cache['last']``, ``saved[0]``, ``holder.x``), or None past ``max_depth`` steps."""
    level: list[tuple[Any, str]] = [(v, k) for k, v in list(vars(root).items())]
    seen = {id(root)}
    for _ in range(max_depth):
        next_level: list[tuple[Any, str]] = []
        for obj, path in level:
            if obj is tracer:
                return path
            if id(obj) in seen or isinstance(obj, (types.ModuleType, type)):
                continue
            seen.add(id(obj))
            next_level.extend((child, path + step) for child, step in _children(obj))
        level = next_level
    return None


def _children(obj: Any) -> list[tuple[Any, str]]:
    if isinstance(obj, dict):
        return [(v, f"[{k!r}]") for k, v in list(obj.items())]
    if isinstance(obj, (list, tuple)):
        return [(v, f"[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, (set, frozenset)):
        return [(v, "{...}") for v in obj]
    if isinstance(obj, types.FunctionType):
        cells = obj.__closure__ or ()
        return [(c.cell_contents, f" (closed over as {name})") for name, c in zip(obj.__code__.co_freevars, cells)
                if _cell_filled(c)]  # fmt: skip
    attributes = getattr(obj, "__dict__", None)
    if isinstance(attributes, dict):
        return [(v, f".{k}") for k, v in list(attributes.items())]
    return [(v, "[...]") for v in gc.get_referents(obj)]


def _cell_filled(cell: Any) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:
        return False
    return True


__all__ = [
    "DEBUGGING_PAGE",
    "check_call_outputs",
    "check_for_leaks",
    "check_primitive_outputs",
    "fp_checks_enabled",
    "fp_switch",
    "leak_checks_enabled",
]
