"""``jit`` and its stages: trace once per signature, compile on the backend, replay.

The cache key is (pytree structure, avals incl. weak types, static argument
values, backend, trace context: the x64, promotion and precision flags); each
entry keeps one executable per device. With
no transformation active a call goes straight to the cached executable; under
a transformation (make_jaxpr, grad, vmap) the call is bound as the ``jit``
primitive (minijax/primitives/calls.py), which carries the traced jaxpr.
``jit(f).trace(...)``, ``.lower(...)`` and ``.compile()`` expose the stages
(``Traced``, ``Lowered``, ``Compiled``: JAX's ``jax.stages``).

A call runs where its committed arguments are, else on the default device,
like an eager operation (``minijax.placement``).

``Jitted._call`` is the plain path of a call, the one to read.
``Jitted.__call__`` is a fast path in front of it, for the common case: see
its banner (``tests/test_jit.py`` checks that the two agree).
"""

from __future__ import annotations

import functools
import inspect
import logging
import operator
import os
import re
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from minijax import config as config_module, core, dtypes, monitoring, tree_util
from minijax.api import ShapeDtypeStruct
from minijax.array import Array
from minijax.backend import Backend, Device, Executable, default_device, get_backend
from minijax.caching import BoundedCache, clear_all, on_clear_all
from minijax.config import (
    GLOBAL_TRACE_CONTEXT,
    executable_cache_size,
    global_values as global_flag_values,
    thread_overrides,
    trace_cache_size,
)
from minijax.core import ShapedArray
from minijax.debug_checks import check_call_outputs, fp_checks_enabled, fp_switch
from minijax.dispatch import aval_key, compile_log_level, compiled_for, install_compile_rewrite, install_sharded_eager
from minijax.interpreters.batching import current_axis_env
from minijax.interpreters.impl_inline import expand_impl_primitives
from minijax.interpreters.tracing import (
    DebugInfo,
    abstractify_flat,
    arg_names_of,
    fun_name,
    hoist_tracer_consts,
    refuse_tracing_if_asked,
    trace_to_jaxpr,
)
from minijax.jaxpr import ClosedJaxpr, eval_jaxpr
from minijax.mesh import NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding
from minijax.placement import install_reshard, lay_out, placement, put_sharded, resolve_sharding, to_device
from minijax.primitives.autodiff import partitioning_mesh
from minijax.primitives.calls import jit_p
from minijax.sharding_rules import typed_out_shardings
from minijax.state import Ref, closed_refs, lending, lent, values_of, write_back

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Jitted", "Lowered", "Traced", "Wrapped", "clear_caches", "jit"]

logger = logging.getLogger(__name__)

# The hot path's two reads of core's trace state, bound once (neither name is ever rebound).
_trace_state, _eval_trace = core.trace_state, core.eval_trace


class _CacheEntry:
    __slots__ = ("name", "closed", "out_avals", "out_tree", "single_output", "backend", "executables", "runners",
                 "consumed", "tracer_consts", "spmd", "program_mesh", "typed_outs", "partitioned")

    def __init__(
        self, name: str, closed: ClosedJaxpr, out_tree: tree_util.PyTreeDef, backend: Backend, donated: Sequence[bool]
    ) -> None:
        self.name = name
        self.closed = closed
        self.out_avals = closed.out_avals  # (a property that builds a list: read once)
        self.out_tree = out_tree
        # The function returns one array (not a pytree holding one): no unflattening.
        self.single_output = out_tree.num_leaves == 1 and out_tree.node_data() is None
        self.backend = backend
        self.executables: dict[Device, Executable] = {}
        self.runners: dict[Device, Executable] = {}  # what ``run`` calls: the executable, maybe unchecked
        # Flat argument positions whose donated buffer an output takes over.
        self.consumed = _usable_donations(closed, donated)
        # Tracers of an enclosing transformation the function closed over:
        # the jaxpr takes them as leading inputs (so that the enclosing
        # transformation sees them as operands), and the entry is not cached.
        self.tracer_consts: list[Any] = []
        # (devices, argument shardings, result shardings) -> (runner of the SPMD program
        # for those devices, each result's sharding): see ``run_spmd``.
        # None: the program cannot run so (it calls back into Python) and runs on one device.
        self.spmd: dict[tuple[Any, ...], tuple[Callable[[list[Any]], list[Any]], list[Any]] | None] = {}
        # spmdx: the mesh of a with_sharding_constraint or a shard_map over several devices in
        # the program: then it runs partitioned over that mesh, whatever its arguments' layouts
        # (as in JAX).
        self.program_mesh = partitioning_mesh(closed.jaxpr)
        # shtypes: results whose types carry a sharding over Explicit axes (an ``out_sharding=``
        # inside, or the operands') come back laid out so: the program runs over their mesh.
        self.typed_outs = typed_out_shardings(self.out_avals)
        # Runs as an SPMD program even when no argument is laid out over several devices.
        self.partitioned = self.program_mesh is not None or self.typed_outs is not None

    def executable(self, device: Device) -> Executable:
        executable = self.executables.get(device)
        if executable is None:
            consumed = set(self.consumed)
            donated = [i in consumed for i in range(len(self.closed.in_avals))] if consumed else []
            executable = self.executables[device] = compiled_for(self.closed, device, donated, self.name)
        return executable

    def runner(self, device: Device) -> Executable:
        """What ``run`` calls on ``device``: the executable, unchecked if the backend offers it.

        The arrays' types are the program's (they were traced for them), so a
        backend's call that skips checking them again will do.
        """
        runner = self.runners.get(device)
        if runner is None:
            executable = self.executable(device)
            runner = self.runners[device] = getattr(executable, "unchecked", executable)
        return runner

    def run(self, arrays: Sequence[Array], device: Device, committed: bool, bufs: list[Any] | None = None) -> list[Array]:
        """Run on ``arrays``, all live and on ``device`` (``bufs``: their buffers, if the caller has them)."""
        runner = self.runners.get(device) or self.runner(device)
        if self.consumed:
            self._check_donations(arrays)
        bufs = runner([a._buf for a in arrays] if bufs is None else bufs)
        backend = device.backend
        for i in self.consumed:
            arrays[i].delete()
        out_avals = self.out_avals
        if len(out_avals) == 1:  # the common case, without a zip
            outs = [Array(bufs[0], out_avals[0], backend, device, committed)]
        else:
            outs = [Array(b, aval, backend, device, committed) for b, aval in zip(bufs, out_avals)]
        if fp_switch.on and fp_checks_enabled():
            closed = self.closed
            rerun = None if self.consumed else (lambda: eval_jaxpr(closed.jaxpr, closed.consts, *arrays))
            check_call_outputs(f"jit({self.name})", outs, rerun)
        return outs

    def run_spmd(self, flat: Sequence[Any], out_shardings: Sequence[Any] | None) -> list[Array] | None:
        """Run as one SPMD program over the devices of the arguments laid out over several
        (``Array._shards``): each device computes its part, on its own buffers, and the
        results come back laid out as the compiler chose (or as ``out_shardings`` says).
        The other arguments are replicated first. None when the program cannot run so
        (a dtype without per-device buffers, a call back into Python): the caller runs it
        on one device."""
        plan = self.spmd_plan(flat, out_shardings)
        if plan is None:
            return None
        program = self.spmd_program(plan[1])
        return None if program is None else self.run_spmd_program(program, flat, plan[0])

    def spmd_plan(self, flat: Sequence[Any], out_shardings: Sequence[Any] | None) -> tuple[list[Array], tuple[Any, ...]] | None:
        """The arguments laid out for the SPMD program (those not laid out over the mesh:
        replicated on it), and the program's key ``(devices, argument shardings, given result
        shardings)``; None when the program cannot run so."""
        sharded = [x for x in flat if type(x) is Array and x._shards is not None]
        if sharded:
            layout = sharded[0]._sharding
        else:  # spmdx: no argument laid out, a sharding_constraint or shard_map inside: over its mesh
            typed = None if self.typed_outs is None else next(s.mesh for s in self.typed_outs if s is not None)
            mesh_of_program = self.program_mesh or typed
            assert mesh_of_program is not None  # (the caller runs a program over several devices only so)
            layout = NamedSharding(mesh_of_program, PartitionSpec())
        assert isinstance(layout, NamedSharding)  # (only those hold per-device buffers)
        devices = layout._device_assignment
        mesh = self.program_mesh
        if mesh is not None and tuple(mesh.devices.flat) != devices:
            raise ValueError(
                f"Received incompatible devices for jitted computation {self.name}: a with_sharding_constraint or shard_map "
                f"lays a value out over the devices {[d.id for d in mesh.devices.flat]} and an argument is laid out over "
                f"{[d.id for d in devices]}. Use one mesh for the arguments and the program."
            )
        for x in sharded:
            assert x._sharding is not None
            if x._sharding._device_assignment != devices:
                raise ValueError(
                    f"Received incompatible devices for jitted computation {self.name}: arguments are laid out over "
                    f"the devices {[d.id for d in devices]} and {[d.id for d in x._sharding._device_assignment]}. "
                    "Lay every argument out over one mesh (jax.device_put(x, NamedSharding(mesh, spec)))."
                )
        if any(not isinstance(a.dtype, np.dtype) or a.dtype == dtypes.float0
               for a in [*self.closed.in_avals, *self.out_avals]):  # fmt: skip
            return None
        replicated = NamedSharding(layout.mesh, PartitionSpec())
        arrays = [x if type(x) is Array and x._shards is not None else put_sharded(x, replicated) for x in flat]
        if any(a._shards is None for a in arrays):
            return None
        outs_given = tuple(
            s if isinstance(s, NamedSharding) and s._device_assignment == devices else None
            for s in (out_shardings or [None] * len(self.out_avals))
        )
        return arrays, (devices, tuple(a._sharding for a in arrays), outs_given)

    def spmd_program(self, key: tuple[Any, ...]) -> tuple[Callable[[list[Any]], list[Any]], list[Any]] | None:
        """The compiled SPMD program for ``key`` (``spmd_plan``'s), compiled once per key: its
        runner and each result's sharding; None when it cannot run so."""
        if key not in self.spmd:
            devices, shardings, outs_given = key
            backend = devices[0].backend
            try:
                self.spmd[key] = backend.compile_spmd(self.closed, list(shardings), list(outs_given), self.consumed,
                                                      self.module_name)  # fmt: skip
            except NotImplementedError:  # (a program the backend cannot partition): on one device
                self.spmd[key] = None
        return self.spmd[key]

    @property
    def module_name(self) -> str:
        """The program's name as JAX names its module: ``jit_f``."""
        return "jit_" + re.sub(r"\W", "_", self.name.replace("<lambda>", "_lambda"))

    def run_spmd_program(
        self, program: tuple[Callable[[list[Any]], list[Any]], list[Any]], flat: Sequence[Any], arrays: list[Array]
    ) -> list[Array]:
        run, result_shardings = program
        if self.consumed:  # spmdx: donation on the SPMD path
            self._check_donations(arrays, "_shards")
        bufs = run([a._shards for a in arrays])
        for i in self.consumed:
            # The donated buffers now hold results: the arrays are gone (as in JAX). (When the
            # argument was laid out anew for the call, the copy was donated, not the caller's.)
            arrays[i].delete()
        layout = (result_shardings or [a._sharding for a in arrays])[0]
        devices = layout._device_assignment
        backend = devices[0].backend
        outs = []
        for buf, aval, sharding in zip(bufs, self.out_avals, result_shardings):
            out = Array(None, aval, backend, devices[0], True)
            out._shards, out._sharding = buf, sharding
            outs.append(out)
        return outs

    def _check_donations(self, arrays: Sequence[Array], held: str = "_buf") -> None:
        """A donated buffer is consumed by the call: it cannot also be another argument
        (XLA rejects that call; the NumPy backend would read a deleted array). ``held``:
        the attribute holding the buffers (``_shards`` for an SPMD program's arguments)."""
        for i in self.consumed:
            buf = getattr(arrays[i], held)
            for j, other in enumerate(arrays):
                if j != i and getattr(other, held) is buf:
                    raise RuntimeError(
                        f"jit({self.name}): argument {i} (flattened) is donated, but the same array is also "
                        f"passed as argument {j}. A donated buffer is consumed by the call and cannot be read "
                        "by it a second time: pass a copy (x.copy()) as one of them, or do not donate it."
                    )


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _call_site() -> str:
    """``file:line:column (function)`` of the first frame outside minijax: the user's call."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    code = frame.f_code
    column = ""
    try:
        col = list(code.co_positions())[frame.f_lasti // 2][2]
        if col is not None:
            column = f":{col}"  # (0-based, as JAX writes it)
    except (AttributeError, IndexError):
        pass
    return f"{code.co_filename}:{frame.f_lineno}{column} ({code.co_name})"


# The parts of a jit cache key (``Jitted._entry``), as a miss explanation names them.
_KEY_PARTS = ("input pytree", "input types", "static arguments", "backend", "trace context (flags " + ", ".join(config_module.TRACE_CONTEXT_FLAGS) + ")", "named axes")


def _key_distance(old: tuple[Any, ...], new: tuple[Any, ...]) -> tuple[int, int]:
    """How far apart two keys are: differing parts, then differing argument types."""
    parts = sum(a != b for a, b in zip(old, new)) + abs(len(old) - len(new))
    types = sum(a != b for a, b in zip(old[1], new[1])) if len(old[1]) == len(new[1]) else len(new[1])
    return parts, types


def _key_differences(old: tuple[Any, ...], new: tuple[Any, ...], arg_names: list[str]) -> list[str]:
    lines: list[str] = []
    for part, before, now in zip(_KEY_PARTS, old, new):
        if before == now:
            continue
        lines.append(f"  different {part}:")
        if part == "input types" and len(before) == len(now):
            for i, (b, n) in enumerate(zip(before, now)):
                if b != n:
                    at = arg_names[i] if i < len(arg_names) else f"flat argument {i}"
                    lines.append(f"  * at {at}, now {_type_text(n)} and before {_type_text(b)}")
        elif part == "static arguments":
            b_map, n_map = dict(before), dict(now)
            for k in sorted(set(b_map) | set(n_map), key=str):
                if b_map.get(k, _MISSING) != n_map.get(k, _MISSING):
                    at = f"argnum {k}" if isinstance(k, int) else repr(k)
                    lines.append(f"  * at {at}, now {n_map.get(k, '(absent)')!r} and before {b_map.get(k, '(absent)')!r}")
        else:
            lines.append(f"  * now {now} and before {before}")
    if len(old) != len(new):
        lines.append("  different trace context: one call was under a transformation binding named axes")
    return lines


_MISSING = object()


def _type_text(aval: ShapedArray) -> str:
    return aval.str_short() + ("{weak_type=True}" if aval.weak_type else "")


def _no_tracer_consts(entry: _CacheEntry) -> bool:
    return not entry.tracer_consts


def _usable_donations(closed: ClosedJaxpr, donated: Sequence[bool]) -> tuple[int, ...]:
    """Which donated inputs an output can reuse, as XLA decides on CPU.

    Each output can take over one donated input of the same shape and dtype.
    Donated inputs no output can reuse stay alive, and JAX warns about them.
    """
    if not any(donated):
        return ()
    free = [a for a in closed.out_avals]
    consumed: list[int] = []
    unusable: list[str] = []
    for i, (aval, d) in enumerate(zip(closed.in_avals, donated)):
        if not d:
            continue
        match = next((j for j, o in enumerate(free) if o.shape == aval.shape and o.dtype == aval.dtype), None)
        if match is None:
            unusable.append(aval.str_short(short_dtypes=False))
        else:
            free.pop(match)
            consumed.append(i)
    if unusable:
        warnings.warn(
            f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
            "Donation lets the compiled program reuse an input buffer for an output "
            "of the same shape and dtype; these inputs have no such output.",
            stacklevel=4,
        )
    return tuple(consumed)


def _hashable_static(value: Any, where: str) -> Hashable:
    try:
        hash(value)
    except TypeError as e:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred "
            f"while trying to hash an object of type {type(value)}, {value}. The "
            f"error was:\nTypeError: {e}\n(static argument {where}; make it "
            "hashable, e.g. a tuple instead of a list, or pass it as a regular "
            "array argument)"
        ) from None
    return value  # type: ignore[no-any-return]


def _normalize_argnums(argnums: int | Sequence[int] | None) -> tuple[int, ...]:
    if argnums is None:
        return ()
    try:
        return (operator.index(argnums),)  # type: ignore[arg-type]
    except TypeError:
        pass
    # A string or float is refused here (TypeError), not read as a number.
    return tuple(operator.index(a) for a in argnums)  # type: ignore[union-attr]


def _normalize_argnames(argnames: str | Sequence[str] | None) -> tuple[str, ...]:
    if argnames is None:
        return ()
    if isinstance(argnames, str):
        return (argnames,)
    names = tuple(argnames)
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"argument is not a string: {n!r}")
    return names


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _check_argnums(params: Sequence[inspect.Parameter], argnums: tuple[int, ...], what: str) -> None:
    """Refuse at jit time argument numbers the function cannot be called with.

    A function taking ``*args`` accepts any position, so it accepts every
    number; otherwise ``i`` must index its positional parameters (``-n <= i < n``).
    Left unchecked, an out-of-range number would silently mark nothing static.
    """
    if not argnums or any(p.kind is p.VAR_POSITIONAL for p in params):
        return
    n = sum(p.kind in _POSITIONAL for p in params)
    if max(argnums) >= n or min(argnums) < -n:
        raise ValueError(
            f"Jitted function has {what}={argnums}, but only accepts {n} positional arguments. "
            f"Number the function's positional parameters from 0 (or from -{n} counting back), "
            f"or drop the numbers it does not have."
        )


def _check_argnames(params: Sequence[inspect.Parameter], argnames: tuple[str, ...], what: str) -> None:
    """Refuse at jit time names that no keyword argument of the function can have."""
    if not argnames:
        return
    wanted = set(argnames)
    positional_only = {p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)} & wanted
    if positional_only:
        raise ValueError(
            f"Jitted function has invalid argnames {positional_only} in {what}. These are positional-only: "
            "they can never be passed by name; mark them with static_argnums/donate_argnums instead."
        )
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return  # **kwargs takes any other name
    unknown = wanted - {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if unknown:
        raise ValueError(
            f"Jitted function has invalid argnames {unknown} in {what}. Function does not take these args. "
            f"Its parameters are {[p.name for p in params]}."
        )


def _check_static_not_donated(
    params: Sequence[inspect.Parameter],
    static_argnames: tuple[str, ...],
    donate_argnums: tuple[int, ...],
    donate_argnames: tuple[str, ...],
) -> None:
    """A static argument is not a buffer, so it cannot be donated: refuse naming one as both."""
    # Numbers name parameters as JAX infers them: counted from 0 (a negative
    # number names none), and only parameters that can be passed either way.
    donated = set(donate_argnames) | {
        p.name for i, p in enumerate(params) if i in donate_argnums and p.kind is p.POSITIONAL_OR_KEYWORD
    }
    both = set(static_argnames) & donated
    if both:
        raise ValueError(
            "static_argnames and donate_argnames cannot intersect. Argument names "
            f"{both} appear in both static_argnames and donate_argnames. Donate only array arguments."
        )


class _JitState:
    """What every ``jit(fun, **options)`` of one function with the same options shares:
    the checked options and the caches of traces and executables.

    So ``jax.jit(f)(x)`` written inline in a loop traces and compiles once,
    as in JAX. Nothing here refers to the function: ``_states`` keys it
    weakly, and its entries go when it does.
    """

    __slots__ = ("static_argnums", "static_argnames", "positional_names", "cache", "fast_cache")

    def __init__(
        self,
        fun: Callable[..., Any],
        static_argnums: tuple[int, ...],
        static_argnames: tuple[str, ...],
        donate_argnums: tuple[int, ...],
        donate_argnames: tuple[str, ...],
    ) -> None:
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            params = None
        if params is not None:
            _check_argnums(params, static_argnums, "static_argnums")
            _check_argnames(params, static_argnames, "static_argnames")
            _check_argnums(params, donate_argnums, "donate_argnums")
            _check_argnames(params, donate_argnames, "donate_argnames")
        else:
            # A builtin without a signature: nothing to check the numbers against (as in JAX).
            params = []
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.positional_names = positional
        # JAX infers static_argnames from static_argnums and vice versa.
        nums = set(static_argnums)
        names = set(static_argnames)
        for i in static_argnums:
            if 0 <= i < len(positional):
                names.add(positional[i])
        for n in static_argnames:
            if n in positional:
                nums.add(positional.index(n))
        self.static_argnums = tuple(sorted(nums))
        self.static_argnames = tuple(sorted(names))
        _check_static_not_donated(params, self.static_argnames, donate_argnums, donate_argnames)
        # Both bounded (minijax_trace_cache_size): a program called with ever
        # new shapes must not keep every trace and executable alive.
        self.cache: BoundedCache[Hashable, _CacheEntry] = BoundedCache(f"jit({fun_name(fun)})", trace_cache_size)
        # Calls with only positional Array arguments and no static ones skip
        # pytree flattening: keyed by the avals alone (plus the trace context).
        # (spmdx: and calls on sharded arrays, keyed with their shardings, to their SPMD program)
        self.fast_cache: BoundedCache[Hashable, tuple[_CacheEntry, Any]] = BoundedCache(
            f"jit({fun_name(fun)}) fast path", trace_cache_size
        )


# function (weakly, compared as JAX compares it: by its own __eq__, so two
# bound methods of one object are one function) -> jit's options -> state.
# A fresh function (a lambda made anew each iteration, ``grad(f)``) is a new
# key, and is traced again, as JAX does.
_states: weakref.WeakKeyDictionary[Callable[..., Any], dict[Hashable, _JitState]] = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


def _state_for(fun: Callable[..., Any], options: tuple[Any, ...]) -> _JitState:
    try:
        by_options = _states.get(fun)
    except TypeError:  # not weakly referenceable, or unhashable: a state of its own
        return _JitState(fun, *options[:4])
    if by_options is not None:
        state = by_options.get(options)
        if state is not None:
            return state
    state = _JitState(fun, *options[:4])  # (raises on bad options before anything is stored)
    with _states_lock:
        try:
            by_options = _states.setdefault(fun, {})
        except TypeError:
            return state
        return by_options.setdefault(options, state)


def _forget_states() -> None:
    with _states_lock:
        _states.clear()


on_clear_all(_forget_states)


def clear_caches() -> None:
    """Empty every cache minijax keeps: jit's traces and executables, compiled
    jaxprs, eager operations' prepared runners, the backends' executables.
    Everything is traced and compiled again when next called."""
    clear_all()


CompilerOptions = dict[str, Any]  # what ``Lowered.compile(compiler_options=...)`` takes (JAX's alias)

_DIALECTS = ("stablehlo", "hlo")


class ArgInfo:
    """One argument of a traced program: its type and whether it is donated
    (the leaves of ``args_info``)."""

    __slots__ = ("_aval", "donated")

    def __init__(self, _aval: ShapedArray, donated: bool) -> None:
        self._aval = _aval
        self.donated = donated

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        return self._aval.dtype

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArgInfo) and (self._aval, self.donated) == (other._aval, other.donated)

    def __hash__(self) -> int:
        return hash((self._aval, self.donated))

    def __repr__(self) -> str:
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


class Wrapped:
    """What ``jit`` returns: a function that also offers ``trace`` and ``lower``
    (JAX's protocol; ``isinstance(jax.jit(f), jax.stages.Wrapped)`` holds)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        raise NotImplementedError

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        raise NotImplementedError


def _array_tree_structure(tree: Any, leaves: list[Any]) -> Hashable | None:
    """For the call fast path: the structure of ``tree`` if it is made of plain
    tuples, lists and dicts (keys sorted, as ``tree_flatten`` orders them) with
    Arrays at the leaves, which are appended to ``leaves`` in flattening order;
    None for anything else (the call then takes the plain path)."""
    t = type(tree)
    if t is Array:
        leaves.append(tree)
        return 0
    # (An Array child is taken in the loop, without the call: most children are.)
    if t is tuple or t is list:
        parts: list[Any] = [t]
        for x in tree:
            if type(x) is Array:
                leaves.append(x)
                parts.append(0)
                continue
            sub = _array_tree_structure(x, leaves)
            if sub is None:
                return None
            parts.append(sub)
        return tuple(parts)
    if t is dict:
        try:
            keys = sorted(tree)
        except TypeError:
            return None
        parts = [dict, tuple(keys)]
        for k in keys:
            x = tree[k]
            if type(x) is Array:
                leaves.append(x)
                parts.append(0)
                continue
            sub = _array_tree_structure(x, leaves)
            if sub is None:
                return None
            parts.append(sub)
        return tuple(parts)
    return None


class Jitted(Wrapped):
    """What ``jit(f)`` returns: callable, with ``lower``, ``trace`` and ``eval_shape``."""

    def __init__(
        self,
        fun: Callable[..., Any],
        static_argnums: tuple[int, ...],
        static_argnames: tuple[str, ...],
        donate_argnums: tuple[int, ...],
        donate_argnames: tuple[str, ...],
        backend: str | None,
    ) -> None:
        if not callable(fun):
            raise TypeError(f"Expected a callable value, got {fun}")
        # First: update_wrapper copies fun.__dict__, which may hold attributes
        # of the same names (a wrapped custom_jvp function has ``fun``).
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._backend_name = backend
        self._donate_argnums = donate_argnums
        self._donate_argnames = donate_argnames
        state = _state_for(fun, (static_argnums, static_argnames, donate_argnums, donate_argnames, backend))
        self._state = state
        self._positional_names = state.positional_names
        self.static_argnums = state.static_argnums
        self.static_argnames = state.static_argnames
        self._cache = state.cache
        self._fast_cache = state.fast_cache
        self._fast_entries = state.fast_cache.entries  # read by every call
        self._fast_ok = not state.static_argnums and not state.static_argnames

    # compat (issue 24): the wrapped function's signature, also for ``inspect.signature(f,
    # follow_wrapped=False)`` (as JAX's jitted functions give it; Chex's fake_pmap reads it).
    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.fun)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # jit applied to a method in a class body: bind like a function would.
        if obj is None:
            return self
        return functools.partial(self, obj)

    # --- the call path -----------------------------------------------------
    def _split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any], Hashable]:
        nargs = len(args)
        statics: list[Hashable] = []
        dyn_args = args
        if self.static_argnums:
            dyn_list = []
            for i, a in enumerate(args):
                if i in self.static_argnums or (i - nargs) in self.static_argnums:
                    statics.append((i, _hashable_static(a, f"argnum {i}")))
                else:
                    dyn_list.append(a)
            dyn_args = tuple(dyn_list)
        dyn_kwargs = kwargs
        if self.static_argnames and kwargs:
            dyn_kwargs = {}
            for k, v in kwargs.items():
                if k in self.static_argnames:
                    statics.append((k, _hashable_static(v, f"{k!r}")))
                else:
                    dyn_kwargs[k] = v
        return dyn_args, dyn_kwargs, tuple(statics)

    def _entry(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], traced_for: str = "jit"
    ) -> tuple[_CacheEntry, list[Any], Device, bool]:
        """The cache entry for these arguments, their flat leaves, and where an
        eager call runs: (device, whether the results are committed)."""
        dyn_args, dyn_kwargs, static_key = self._split(args, kwargs)
        flat, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        avals = abstractify_flat(flat, self.fun, lambda: self._dynamic_arg_names(args, kwargs))
        named = None if self._backend_name is None else get_backend(self._backend_name)
        device, committed = placement(flat, fun_name(self.fun), lambda: self._dynamic_arg_names(args, kwargs), named)
        backend = device.backend
        key: tuple[Any, ...] = (in_tree, avals, static_key, backend.name, config_module.trace_context())
        if any(type(a) is not core.ShapedArray for a in avals):
            # shtypes: a layout over Explicit mesh axes is part of the type, so of the trace.
            key = (*key, tuple(getattr(a, "sharding", None) for a in avals))
        if core.current_trace() is not core.eval_trace:
            # Under vmap a traced body may read the named axes' sizes (pmean).
            # None bound: the eager call's key, so grad of an already-called
            # jit(f) reuses its trace, as in JAX.
            axis_env = current_axis_env()
            if axis_env:
                key = (*key, axis_env)
        entry = self._cache.get(key)
        if entry is None:
            if config_module.read("jax_explain_cache_misses"):
                self._explain_miss(key, lambda: self._dynamic_arg_names(args, kwargs))
            # Traced once per key, even when threads call at once; an entry
            # closing over tracers of an enclosing transformation is not kept.
            entry = self._cache.get_or_make(
                key, lambda: self._trace(args, kwargs, in_tree, avals, traced_for, backend), _no_tracer_consts
            )
        return entry, flat, device, committed

    def _trace(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        in_tree: tree_util.PyTreeDef,
        avals: Sequence[ShapedArray],
        traced_for: str,
        backend: Backend,
    ) -> _CacheEntry:
        nargs = len(args)
        static_pos = {i: a for i, a in enumerate(args) if i in self.static_argnums or (i - nargs) in self.static_argnums}
        static_kw = {k: v for k, v in kwargs.items() if k in self.static_argnames}
        out_tree_box: list[tree_util.PyTreeDef] = []

        def flat_fun(*flat_args: Any) -> list[Any]:
            dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, flat_args)
            it = iter(dyn_args)
            full_args = [static_pos[i] if i in static_pos else next(it) for i in range(nargs)]
            out = self.fun(*full_args, **dyn_kwargs, **static_kw)
            out_flat, out_tree = tree_util.tree_flatten(out)
            for leaf in out_flat:
                if not core.is_array_like(leaf):
                    raise TypeError(
                        f"{fun_name(self.fun)} returned a value of type {type(leaf).__name__} "
                        "at an output position, which is not a valid JAX type: jitted "
                        "functions must return arrays or pytrees of arrays."
                    )
            out_tree_box.append(out_tree)
            return out_flat

        info = DebugInfo(self.fun, self._dynamic_arg_names(args, kwargs), traced_for)
        refuse_tracing_if_asked(self.fun, info.func_src)
        start = time.perf_counter()
        with monitoring.timed_event(monitoring.JAXPR_TRACE_EVENT, fun_name(self.fun)):
            closed, _ = trace_to_jaxpr(flat_fun, avals, info)
        level = compile_log_level()
        if logger.isEnabledFor(level):
            logger.log(level, "Finished tracing %s for %s in %.9f sec", fun_name(self.fun), traced_for, time.perf_counter() - start)
        closed, tracer_consts = hoist_tracer_consts(closed)
        entry = _CacheEntry(fun_name(self.fun), closed, out_tree_box[0], backend, self._donated_leaves(args, kwargs))
        entry.tracer_consts = tracer_consts
        return entry

    def _explain_miss(self, key: tuple[Any, ...], arg_names: Callable[[], list[str]]) -> None:
        """Log why ``key`` is not in the cache (``jax_explain_cache_misses``), in JAX's words:
        the function was never seen, or how the closest earlier key differs."""
        name = fun_name(self.fun)
        code = getattr(inspect.unwrap(self.fun), "__code__", None)
        where = "" if code is None else f" defined at {code.co_filename}:{code.co_firstlineno}"
        lines = [f"TRACING CACHE MISS at {_call_site()}:"]
        previous = [old for old in list(self._cache.entries) if isinstance(old, tuple)]
        if not previous:
            lines += ["  never seen function:", f"    {name} id={id(self.fun)}{where}"]
        else:
            best = min(previous, key=lambda old: _key_distance(old, key))
            lines += [f"  for {name}{where}", "  all previously seen cache keys differ. For the closest previous key:"]
            lines += _key_differences(best, key, arg_names())
        logger.warning("\n".join(lines))

    def _donated_leaves(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[bool]:
        """For each flat dynamic argument: was it donated?"""
        if not self._donate_argnums and not self._donate_argnames:
            return []
        nargs = len(args)
        flags: list[bool] = []
        for i, a in enumerate(args):
            if i in self.static_argnums or (i - nargs) in self.static_argnums:
                continue
            name = self._positional_names[i] if i < len(self._positional_names) else None
            donated = i in self._donate_argnums or name in self._donate_argnames
            flags.extend([donated] * len(tree_util.tree_leaves(a)))
        for k in sorted(kwargs):
            if k in self.static_argnames:
                continue
            donated = k in self._donate_argnames
            flags.extend([donated] * len(tree_util.tree_leaves(kwargs[k])))
        return flags

    def _dynamic_arg_names(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
        """Paths of the non-static flattened arguments (``x``, ``params['w']``)."""
        names = arg_names_of(self.fun, args, kwargs)
        nargs = len(args)
        static_pos = {i for i in range(nargs) if i in self.static_argnums or (i - nargs) in self.static_argnums}
        positional = arg_names_of(self.fun, args, {}) if static_pos else []
        static_roots = set(self.static_argnames)
        for i in static_pos:
            if i < len(positional):
                static_roots.add(positional[i].split("[")[0].split(".")[0])
        return [n for n in names if n.split("[")[0].split(".")[0] not in static_roots]

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call off the hot path: tracing, placement, static or keyword arguments, disabled jit."""
        if config_module.read("jax_disable_jit"):
            return self.fun(*args, **kwargs)
        refs = _refs_of(self.fun, args, kwargs)  # refs (issue 24)
        if refs is not None:
            return self._call_with_refs(args, kwargs, *refs)
        eager = core.current_trace() is core.eval_trace
        entry, flat, device, committed = self._entry(args, kwargs)
        if not eager:
            outs = jit_p.bind(*entry.tracer_consts, *flat, jaxpr=entry.closed, name=fun_name(self.fun))
            return tree_util.tree_unflatten(entry.out_tree, outs)
        if self._fast_ok and args and not kwargs:
            self._remember_fast(args, entry, device)
        if (entry.partitioned and flat) or any(type(x) is Array and x._shards is not None for x in flat):
            # laid out over several devices (spmdx: or constrained to be inside)
            # (keyed before the call: a donated argument is gone after it)
            fast = self._sharded_fast_key(args, entry) if self._fast_ok and args and not kwargs else None
            spmd_outs = entry.run_spmd(flat, self._flat_out_shardings(entry))
            if spmd_outs is not None:
                program = None if fast is None else entry.spmd.get(fast[1])
                if fast is not None and program is not None:
                    self._fast_cache.put(fast[0], (entry, program))
                return tree_util.tree_unflatten(entry.out_tree, spmd_outs)
        outs = entry.run([to_device(x, device) for x in flat], device, committed)
        if entry.typed_outs is not None:  # shtypes: run on one device, laid out as the types say
            outs = [o if s is None else put_sharded(o, s) for o, s in zip(outs, entry.typed_outs)]
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _call_with_refs(self, args: tuple[Any, ...], kwargs: dict[str, Any], passed: list[int], closed: list[Ref]) -> Any:
        """A call that reads or writes Refs (issue 24), discharged: the refs' values go in as
        arguments of a pure function, their final values come out as results and are written
        back. ``passed``: the positions of the Refs among the flat arguments; ``closed``: the
        Refs the function reads as globals or closure cells."""
        if self.static_argnums or self.static_argnames:
            raise NotImplementedError("jit with static arguments of a function that uses Refs is not supported by minijax yet (issue 24)")
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        passed_refs: list[Ref] = [leaves[i] for i in passed]
        names = arg_names_of(self.fun, args, kwargs)
        where: dict[int, int] = {}
        for i, ref in zip(passed, passed_refs):
            if id(ref) in where:
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to a function, but when "
                    f"tracing {DebugInfo(self.fun, (), 'jit').func_src} for jit the mutable array reference of type "
                    f"{ref.aval} appeared at both {_name(names, where[id(ref)])} and {_name(names, i)}."
                )
            where[id(ref)] = i
        for ref in closed:
            if id(ref) in where:
                raise ValueError(
                    f"when tracing {DebugInfo(self.fun, (), 'jit').func_src} for jit, a mutable array reference of type "
                    f"{ref.aval} was both closed over and passed as the argument {_name(names, where[id(ref)])}"
                )
        key = (tree, tuple(passed), tuple(closed))
        inner = self._ref_calls.get(key) if hasattr(self, "_ref_calls") else None
        if inner is None:
            inner = Jitted(_discharged(self.fun, tree, passed, closed), (), (), (), (), self._backend_name)
            self.__dict__.setdefault("_ref_calls", {})[key] = inner
        values = values_of((*passed_refs, *closed))
        taken = set(passed)
        others = {i: leaf for i, leaf in enumerate(leaves) if i not in taken}
        out, finals = inner(values, others)
        write_back((*passed_refs, *closed), finals)
        return out

    # =================================================================================
    # Fast path. An optimisation of ``_call`` above, which is what it computes:
    # read that one. It takes the common call -- positional arguments only, all
    # live Arrays on one device that is committed or the default one, outside
    # any transformation, with an entry cached by an earlier call -- and does
    # its work flat, reading flags and state without calls: this is most of
    # the Python time of a cached call. Arguments that are plain dicts, lists
    # and tuples of Arrays are flattened here too (``_array_tree_structure``,
    # an optimisation of ``tree_flatten`` for those), their structure in the key. Anything else goes to ``_call``, which
    # also enters the entry here (``_remember_fast``).
    # =================================================================================

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or not self._fast_ok or not args or _trace_state.trace is not _eval_trace:
            return self._call(args, kwargs)
        if thread_overrides.values:  # some flag overridden in this thread: read through config
            disable_jit, context = config_module.read("jax_disable_jit"), config_module.trace_context()
        else:
            disable_jit, context = global_flag_values["jax_disable_jit"], global_flag_values[GLOBAL_TRACE_CONTEXT]
        if disable_jit:
            return self.fun(*args)
        leaves: Sequence[Any] = args
        first = args[0]
        # Avals enter the key as ints (``aval_key``), as in eager dispatch's fast path.
        if type(first) is Array and type(args[-1]) is Array:  # (_remember_fast keys calls as this does)
            key: list[Any] = [context, first._device]
        else:  # dicts, lists and tuples of Arrays: their structure enters the key
            tree_leaves: list[Any] = []
            structure = _array_tree_structure(args, tree_leaves)
            if structure is None or not tree_leaves:
                return self._call(args, kwargs)
            leaves = tree_leaves
            first = tree_leaves[0]
            key = [context, first._device, structure]
        device = first._device
        committed = False
        bufs: list[Any] = []
        for a in leaves:
            buf = a._buf if type(a) is Array else None
            if buf is None or a._device is not device:
                if buf is None and type(a) is Array and a._shards is not None:  # spmdx: over several devices
                    return self._call_sharded(args, leaves, key[:2] if leaves is args else key[:3])
                return self._call(args, kwargs)
            if a._committed:
                committed = True
            aval = a.aval
            k = aval.fast_key
            key.append(aval_key(aval) if k is None else k)
            bufs.append(buf)
        if not committed and device is not default_device():
            return self._call(args, kwargs)  # placement moves the arguments first
        cached = self._fast_entries.get(tuple(key))  # self._fast_cache.get(...) minus a call
        if cached is None:
            return self._call(args, kwargs)
        cached[1] = True
        entry, hot = cached[0]
        if hot is None or fp_switch.on:  # donation, or NaN checks: the full run
            outs = entry.run(leaves, device, committed, bufs)
        elif entry.single_output:  # the common case, written out
            return Array(hot(bufs)[0], entry.out_avals[0], device.backend, device, committed)
        else:
            backend = device.backend
            outs = [Array(b, aval, backend, device, committed) for b, aval in zip(hot(bufs), entry.out_avals)]
        return outs[0] if entry.single_output else tree_util.tree_unflatten(entry.out_tree, outs)

    def _flat_out_shardings(self, entry: _CacheEntry) -> list[Any] | None:
        """One sharding (or None) per flat result: ``out_shardings`` (``_ShardedJitted``), else the
        results' types' (shtypes)."""
        return entry.typed_outs

    # spmdx: the fast path of calls on arrays laid out over several devices. An optimisation of
    # ``_call``'s SPMD branch: positional arguments that are all Arrays holding per-device
    # buffers, keyed by their avals and shardings, run the program ``_call`` compiled for them.

    def _sharded_key(self, head: Sequence[Any], leaves: Sequence[Any]) -> tuple[Any, ...] | None:
        # (in the hot path's cache, apart from its one-device keys by the marker and the shardings)
        key = [*head, "spmd"]
        for a in leaves:
            if type(a) is not Array or a._shards is None:
                return None
            aval = a.aval
            k = aval.fast_key
            key.append(aval_key(aval) if k is None else k)
            key.append(a._sharding)
        return tuple(key)

    def _call_sharded(self, args: tuple[Any, ...], leaves: Sequence[Any], head: Sequence[Any]) -> Any:
        key = self._sharded_key(head, leaves)
        cached = None if key is None else self._fast_entries.get(key)
        if cached is None:
            return self._call(args, {})
        cached[1] = True
        entry, program = cached[0]
        outs = entry.run_spmd_program(program, leaves, list(leaves))
        return outs[0] if entry.single_output else tree_util.tree_unflatten(entry.out_tree, outs)

    def _sharded_fast_key(self, args: tuple[Any, ...], entry: _CacheEntry) -> tuple[Any, Any] | None:
        """``_call_sharded``'s key for ``args`` and the key of the SPMD program they run
        (``_CacheEntry.spmd_plan``), or None when that path does not take them."""
        # (A program over a constraint's or shard_map's mesh takes this path too: _sharded_key keeps
        # only arguments all laid out over several devices, and spmd_plan checks they are the mesh's.)
        if type(args[0]) is Array and type(args[-1]) is Array:
            if any(type(a) is not Array for a in args):
                return None
            leaves: Sequence[Any] = args
            head: tuple[Any, ...] = (config_module.trace_context(), args[0]._device)
        else:
            tree_leaves: list[Any] = []
            structure = _array_tree_structure(args, tree_leaves)
            if structure is None or not tree_leaves:
                return None
            leaves, head = tree_leaves, (config_module.trace_context(), tree_leaves[0]._device, structure)
        key = self._sharded_key(head, leaves)
        plan = None if key is None else entry.spmd_plan(leaves, self._flat_out_shardings(entry))
        return None if key is None or plan is None else (key, plan[1])

    def _remember_fast(self, args: tuple[Any, ...], entry: _CacheEntry, device: Device) -> None:
        """Enter ``entry`` in the hot path's cache when ``args`` are what that path takes:
        live Arrays all on ``device`` (where the call ran), keyed as ``__call__`` keys them."""
        if entry.partitioned:  # spmdx: runs partitioned (run_spmd), not on one device
            return
        leaves: list[Any] = []
        structure = _array_tree_structure(args, leaves)
        if structure is None or any(a._buf is None or a._device is not device for a in leaves):
            return
        if self._backend_name is not None and device.backend.name != self._backend_name:
            return
        if any(type(a) is not core.ShapedArray for a in entry.closed.in_avals):
            return  # shtypes: traced for Explicit layouts, which the hot path's key does not hold
        # As __call__ keys a call: flat when the first and last arguments are Arrays (then
        # all must be), else with the structure.
        head: tuple[Any, ...] = (config_module.trace_context(), device)
        if type(args[0]) is Array and type(args[-1]) is Array:
            if any(type(a) is not Array for a in args):
                return
        else:
            head = (*head, structure)
        key = (*head, *(aval_key(a.aval) for a in leaves))
        # The runner of a plain call (no donation) is called by __call__ itself.
        hot = None if entry.consumed else entry.runner(device)
        self._fast_cache.put(key, (entry, hot))

    # --- ahead-of-time stages ------------------------------------------------
    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        entry, flat, device, _ = self._entry(args, kwargs)
        dyn_args, dyn_kwargs, _ = self._split(args, kwargs)
        in_tree = tree_util.tree_structure((dyn_args, dyn_kwargs))
        stage = Traced(self, entry, in_tree, self._donated_leaves(args, kwargs), device)
        stage._arg_names = tuple(self._dynamic_arg_names(args, kwargs))
        if entry.partitioned or any(type(x) is Array and x._shards is not None for x in flat):
            # spmdx: the program these arguments run as is the SPMD one; the stages show and compile it.
            plan = entry.spmd_plan(flat, self._flat_out_shardings(entry))
            stage._spmd_key = None if plan is None else plan[1]
        return stage

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        entry = self._entry(args, kwargs)[0]
        shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in entry.closed.out_avals]
        return tree_util.tree_unflatten(entry.out_tree, shapes)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast_cache.clear()

    def _cache_size(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"<minijax.jit of {fun_name(self.fun)}>"


class _Stage:
    """What every stage knows of its program: the argument and result structure and types."""

    def __init__(self, jitted: Jitted, entry: _CacheEntry, in_tree: tree_util.PyTreeDef, donated: Sequence[bool],
                 device: Device) -> None:
        self._jitted = jitted
        self._entry = entry
        self._in_tree = in_tree
        self._donated = list(donated)
        self._device = device
        # The traced call's names of the non-static leaves, for a Compiled's type errors.
        self._arg_names: tuple[str, ...] = ()
        # spmdx: the SPMD program's key (_CacheEntry.spmd_plan) when the arguments are laid out
        # over several devices; None: the one-device program.
        self._spmd_key: tuple[Any, ...] | None = None

    @property
    def fun_name(self) -> str:
        return self._entry.name

    @property
    def in_tree(self) -> tree_util.PyTreeDef:
        """Structure of the pair (positional arguments, keyword arguments), static ones left out."""
        return self._in_tree

    @property
    def out_tree(self) -> tree_util.PyTreeDef:
        return self._entry.out_tree

    @property
    def args_info(self) -> Any:
        """The arguments as ``in_tree`` of ``ArgInfo`` (type and donation of each leaf)."""
        avals = self._entry.closed.in_avals[len(self._entry.tracer_consts):]
        flags = self._donated or [False] * len(avals)
        return tree_util.tree_unflatten(self._in_tree, [ArgInfo(a, d) for a, d in zip(avals, flags)])

    @property
    def in_avals(self) -> Any:
        return tree_util.tree_map(lambda info: info._aval, self.args_info)

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """Flat positions of the donated arguments."""
        return tuple(i for i, d in enumerate(self._donated) if d)

    @property
    def out_info(self) -> Any:
        """The results as ``out_tree`` of ``ShapeDtypeStruct``."""
        shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in self._entry.out_avals]
        return tree_util.tree_unflatten(self._entry.out_tree, shapes)


class Traced(_Stage):
    """``jit(f).trace(*args)``: the traced jaxpr, before lowering."""

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._entry.closed

    @property
    def out_avals(self) -> Any:
        return tree_util.tree_unflatten(self._entry.out_tree, self._entry.out_avals)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._jitted(*args, **kwargs)

    def lower(self, *, lowering_platforms: tuple[str, ...] | None = None, _private_parameters: Any = None) -> Lowered:
        platform = self._device.platform
        if lowering_platforms is not None and tuple(lowering_platforms) != (platform,):
            raise NotImplementedError(
                f"minijax lowers for the platform it runs on ({platform!r}); lowering_platforms={lowering_platforms!r} "
                "(cross-platform lowering) is not supported"
            )
        lowered = Lowered(self._jitted, self._entry, self._in_tree, self._donated, self._device)
        lowered._arg_names = self._arg_names
        lowered._spmd_key = self._spmd_key
        return lowered


def _check_dialect(dialect: str | None) -> None:
    if dialect is not None and dialect not in _DIALECTS:
        raise ValueError(f"unknown dialect: {dialect}")


class Lowered(_Stage):
    """``jit(f).lower(*args)``: the program in the backend's own text.

    On ``xla`` that is StableHLO (``as_text(dialect="hlo")``: HLO); on ``numpy``,
    whose program is the jaxpr itself, ``as_text()`` is the jaxpr and
    ``compiler_ir()`` is None.
    """

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        _check_dialect(dialect)
        backend = self._entry.backend
        if self._spmd_key is not None and dialect in (None, "stablehlo"):
            # spmdx: the SPMD module, with its arguments' and results' layouts
            devices, shardings, outs_given = self._spmd_key
            entry = self._entry
            spmd_backend: Backend = devices[0].backend
            return spmd_backend.lower_spmd_text(entry.closed, list(shardings), list(outs_given), entry.consumed,
                                                      entry.module_name)  # fmt: skip
        if dialect is None:
            return backend.lower_text(self._entry.closed)
        return backend.lowered_text(self._entry.closed, dialect)

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The compiler's program object (XLA: an MLIR module; "hlo": an XlaComputation),
        or None where the backend has none (``numpy``)."""
        _check_dialect(dialect)
        try:
            return self._entry.backend.compiler_ir(self._entry.closed, dialect)
        except NotImplementedError:
            return None

    def cost_analysis(self) -> dict[str, float] | None:
        """XLA's cost estimates of the program before compiling, or None (``numpy``)."""
        return self._entry.backend.lowered_cost_analysis(self._entry.closed)

    def compile(self, compiler_options: CompilerOptions | None = None) -> Compiled:
        if compiler_options:
            raise NotImplementedError("Lowered.compile(compiler_options=...) is not supported by minijax yet")
        if self._spmd_key is not None:  # spmdx: the SPMD program, compiled once per key
            program = self._entry.spmd_program(self._spmd_key)
            if program is not None:
                runner: Any = program[0]
                compiled = Compiled(self._jitted, self._entry, self._in_tree, self._donated, self._device, runner)
                compiled._arg_names, compiled._spmd_key, compiled._spmd_program = self._arg_names, self._spmd_key, program
                return compiled
        executable = self._entry.executable(self._device)
        compiled = Compiled(self._jitted, self._entry, self._in_tree, self._donated, self._device, executable)
        compiled._arg_names = self._arg_names
        return compiled


def _pytree_mismatch(compiled: tree_util.PyTreeDef, called: tree_util.PyTreeDef) -> str:
    """JAX's message for a Compiled called with arguments of another structure (paths
    are spelled from ``args``/``kwargs``, as JAX spells them)."""
    errors = tree_util.equality_errors_pytreedef(compiled, called)
    lines = []
    for path, seen, given, why in errors:
        root = "args" if not path or getattr(path[0], "idx", 0) == 0 else "kwargs"
        lines.append(f"    * at {root}{tree_util.keystr(tuple(path[1:]))}, seen {seen} but now given {given}, so {why}")
    return (
        "Function compiled with input pytree does not match the input pytree it was called with. "
        f"There are {len(errors)} mismatches, including:\n" + "\n".join(lines[:1])
    )


class Compiled(_Stage):
    """``jit(f).lower(*args).compile()``: callable on arguments of the traced types only."""

    def __init__(self, jitted: Jitted, entry: _CacheEntry, in_tree: tree_util.PyTreeDef, donated: Sequence[bool],
                 device: Device, executable: Executable) -> None:
        super().__init__(jitted, entry, in_tree, donated, device)
        self._executable = executable
        # spmdx: (runner, result shardings) of the SPMD program, when it is one.
        self._spmd_program: tuple[Callable[[list[Any]], list[Any]], list[Any]] | None = None

    @property
    def input_shardings(self) -> Any:
        """Each argument's sharding, as ``(args, kwargs)`` (JAX's structure)."""
        if self._spmd_program is not None and self._spmd_key is not None:
            flat = list(self._spmd_key[1])
        else:
            flat = [SingleDeviceSharding(self._device)] * self._in_tree.num_leaves
        return tree_util.tree_unflatten(self._in_tree, flat)

    @property
    def output_shardings(self) -> Any:
        """Each result's sharding, in the results' structure."""
        if self._spmd_program is not None:
            flat = list(self._spmd_program[1])
        else:
            flat = [SingleDeviceSharding(self._device)] * self._entry.out_tree.num_leaves
        return tree_util.tree_unflatten(self._entry.out_tree, flat)

    def as_text(self) -> str:
        """What the backend compiled: XLA's optimized HLO on ``xla``, the jaxpr on ``numpy``."""
        backend = self._entry.backend
        if self._spmd_program is not None and self._spmd_key is not None:
            spmd_backend: Backend = self._spmd_key[0][0].backend
            spmd_text = spmd_backend.spmd_compiled_text(self._spmd_program[0])
            if spmd_text is not None:
                return spmd_text
        text = backend.compiled_text(self._executable)
        return backend.lower_text(self._entry.closed) if text is None else text

    def cost_analysis(self) -> dict[str, float] | None:
        """The compiler's cost estimates ('flops', 'bytes accessed', ...), or None
        where the backend has none (``numpy``)."""
        return self._entry.backend.cost_analysis(self._executable)

    def memory_analysis(self) -> Any:
        """XLA's memory sizes of the compiled program (``argument_size_in_bytes``,
        ``output_size_in_bytes``, ``temp_size_in_bytes``, ...), or None (``numpy``)."""
        return self._entry.backend.memory_analysis(self._executable)

    def runtime_executable(self) -> Any:
        return self._executable

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The static arguments are part of the program: a Compiled takes the others only.
        jitted = self._jitted
        names = list(self._arg_names)
        flat, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != self._in_tree:
            raise TypeError(_pytree_mismatch(self._in_tree, in_tree))
        avals = abstractify_flat(flat, jitted.fun, lambda: names)
        expected = self._entry.closed.in_avals[len(self._entry.tracer_consts):]
        mismatches = [
            (i, old, new) for i, (old, new) in enumerate(zip(expected, avals))
            if (old.shape, old.dtype) != (new.shape, new.dtype)
        ]
        if mismatches:
            lines = [
                f"Argument '{names[i] if i < len(names) else f'args[{i}]'}' compiled with "
                f"{old.str_short(short_dtypes=False)} and called with {new.str_short(short_dtypes=False)}"
                for i, old, new in mismatches
            ]
            raise TypeError(
                "Argument types differ from the types for which this computation was compiled. Perhaps you are "
                "calling the compiled executable with a different enable_x64 mode than when it was AOT compiled? "
                "The mismatches are:\n" + "\n".join(lines)
            )
        if self._spmd_program is not None:  # spmdx
            return tree_util.tree_unflatten(self._entry.out_tree, self._call_spmd(flat))
        device, committed = self._device, False
        outs = self._entry.run([to_device(x, device) for x in flat], device, committed)
        return tree_util.tree_unflatten(self._entry.out_tree, outs)

    def _call_spmd(self, flat: list[Any]) -> list[Array]:
        """The SPMD program on ``flat``, which must be laid out as it was compiled for (as in JAX)."""
        assert self._spmd_program is not None and self._spmd_key is not None
        entry = self._entry
        plan = entry.spmd_plan(flat, list(self._spmd_key[2]))
        if plan is None or plan[1][1] != self._spmd_key[1]:
            lines = []
            for i, (want, x) in enumerate(zip(self._spmd_key[1], flat)):
                have = getattr(x, "sharding", None)
                if want != have:
                    name = self._arg_names[i] if i < len(self._arg_names) else f"args[{i}]"
                    aval = core.get_aval(x)
                    lines += [f"Argument {name} with shape {aval.str_short(short_dtypes=False)}:",
                              f"  Passed sharding: {have!r}", f"  Required sharding: {want!r}"]  # fmt: skip
            raise ValueError(
                "Computation was compiled for input shardings that disagree with the shardings of arguments passed "
                f"to it. Here are the {len(lines) // 3} mismatches:\n" + "\n".join(lines)
            )
        return entry.run_spmd_program(self._spmd_program, flat, plan[0])


# --- refs (issue 24): jit of a function that reads or writes Refs ------------------------


def _refs_of(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[int], list[Ref]] | None:
    """The Refs a call of ``fun`` uses, when it uses any: the positions of those among its flat
    arguments, and those it closes over (``state.closed_refs``)."""
    passed = [i for i, leaf in enumerate(tree_util.tree_leaves((args, kwargs))) if isinstance(leaf, Ref)]
    closed = closed_refs(fun)
    return (passed, closed) if passed or closed else None


def _name(names: list[str], i: int) -> str:
    return names[i] if i < len(names) else f"argument {i}"


def _discharged(fun: Callable[..., Any], tree: Any, passed: list[int], closed: list[Ref]) -> Callable[..., Any]:
    """``fun`` as a pure function of its Refs' values: ``(values, other leaves) -> (out, final values)``.
    Inside, the passed Refs are new Refs of the trace; the closed-over ones are lent to it for the
    call (their value and home trace swapped, and restored after)."""

    def pure(values: list[Any], others: dict[int, Any]) -> tuple[Any, list[Any]]:
        leaves = [others.get(i) for i in range(tree.num_leaves)]
        inner = [Ref(v) for v in values[: len(passed)]]
        for i, ref in zip(passed, inner):
            leaves[i] = ref
        with lent(closed, values[len(passed):]):
            args, kwargs = tree_util.tree_unflatten(tree, leaves)
            out = fun(*args, **kwargs)
            for leaf in tree_util.tree_leaves(out):
                if isinstance(leaf, Ref):
                    where = ""
                    if any(leaf is ref for ref in inner):
                        i = passed[next(n for n, ref in enumerate(inner) if ref is leaf)]
                        names = arg_names_of(fun, *tree_util.tree_unflatten(tree, [0] * tree.num_leaves))
                        where = f"\n\nThe returned mutable array was passed in as the argument {_name(names, i)}."
                    raise ValueError(
                        f"function {DebugInfo(fun, (), 'jit').func_src} traced for jit returned a mutable array "
                        f"reference of type {leaf.aval}, but mutable array references cannot be returned.{where}"
                    )
            finals = values_of((*inner, *closed))
        return out, finals

    return lending(pure, fun)


def jit(
    fun: Callable[..., Any] | None = None,
    *,
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    device: Any = None,
    backend: str | None = None,
    inline: bool = False,
    abstracted_axes: Any = None,
    compiler_options: Any = None,
) -> Any:
    """Compile ``fun``: trace it once per argument signature and replay it."""
    unsupported = {
        "device": device,
        "abstracted_axes": abstracted_axes,
        "compiler_options": compiler_options,
    }
    for name, value in unsupported.items():
        # compat (issue 24): a pytree of Nones (JAX's "unspecified" for every part, as Flax nnx passes) is
        # the same as no value.
        if value is not None and tree_util.tree_leaves(value):
            raise NotImplementedError(f"jit({name}=...) is not supported by minijax yet")

    for name, value in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        for leaf in tree_util.tree_leaves(value, is_leaf=lambda v: isinstance(v, (Sharding, PartitionSpec))):
            if not isinstance(leaf, (Sharding, PartitionSpec)):
                raise TypeError(
                    f"{name} leaf specifications are expected to be PartitionSpec instances or None, but got {leaf}"
                )

    def wrap(f: Callable[..., Any]) -> Jitted:
        cls = Jitted if in_shardings is None and out_shardings is None else _ShardedJitted
        jitted = cls(
            f,
            _normalize_argnums(static_argnums),
            _normalize_argnames(static_argnames),
            _normalize_argnums(donate_argnums),
            _normalize_argnames(donate_argnames),
            backend,
        )
        if isinstance(jitted, _ShardedJitted):
            jitted._in_shardings, jitted._out_shardings = in_shardings, out_shardings
        return jitted

    return wrap if fun is None else wrap(fun)


class _ShardedJitted(Jitted):
    """``jit(f, in_shardings=..., out_shardings=...)``: arguments and results laid out as given.

    minijax executes on one device, so the layouts change no value: the
    arguments are resharded before the call (JAX rejects a committed argument
    whose sharding differs), the results carry ``out_shardings``.
    """

    _in_shardings: Any = None
    _out_shardings: Any = None

    def _flat_out_shardings(self, entry: _CacheEntry) -> list[Any] | None:
        given = self._out_shardings
        if given is None:
            return entry.typed_outs
        specs, tree = tree_util.tree_flatten(given, is_leaf=lambda s: s is None or isinstance(s, (Sharding, PartitionSpec)))
        try:
            per_leaf = [spec for spec, sub in zip(specs, tree.flatten_up_to(tree_util.tree_unflatten(entry.out_tree,
                        [0] * entry.out_tree.num_leaves))) for _ in tree_util.tree_leaves(sub)]  # fmt: skip
        except Exception:
            return None  # (lay_out reports the mismatch after the call)
        return [None if s is None else resolve_sharding(s, "jit out_shardings") for s in per_leaf]

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        # spmdx: lowered for the arguments laid out as in_shardings says, as a call lays them out.
        if self._in_shardings is not None and not any(
            isinstance(leaf, ShapeDtypeStruct) for leaf in tree_util.tree_leaves(args)
        ):
            args = _lay_out_args(args, self._in_shardings, self.static_argnums)
        return super().trace(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._in_shardings is not None:
            args = _lay_out_args(args, self._in_shardings, self.static_argnums)
        out = super().__call__(*args, **kwargs)
        if self._out_shardings is not None:
            out = lay_out(out, self._out_shardings, "jit out_shardings")
        return out


def _lay_out_args(args: tuple[Any, ...], shardings: Any, static: tuple[int, ...]) -> tuple[Any, ...]:
    positions = [i for i in range(len(args)) if i not in static and i - len(args) not in static]
    if isinstance(shardings, (Sharding, PartitionSpec)):
        per_arg: Sequence[Any] = [shardings] * len(positions)
    else:
        per_arg = tuple(shardings)
        if len(per_arg) != len(positions):
            raise ValueError(
                f"jit in_shardings has {len(per_arg)} entries but the function was called with {len(positions)} "
                "dynamic positional arguments: give one sharding (or a pytree of them) per argument."
            )
    out = list(args)
    for i, spec in zip(positions, per_arg):
        if spec is not None:
            out[i] = lay_out(args[i], spec, "jit in_shardings")
    return tuple(out)

# compat (issue 24): a library's primitives defined by an impl alone run under jit (see impl_inline).
install_compile_rewrite(expand_impl_primitives)


# issue 17: (primitive, params) -> the jitted program of that one operation, for eager operations on
# arrays laid out over several devices (dispatch.install_sharded_eager).
_sharded_eager: BoundedCache[tuple[Any, ...], Jitted] = BoundedCache("sharded eager operations", executable_cache_size)


def _eager_on_shards(prim: core.Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """An eager operation on arrays of per-device buffers, run as the one-operation jitted program:
    each device computes its part, and the result keeps the layout XLA gives it (as in JAX)."""

    def make() -> Jitted:
        return Jitted(lambda *a: prim.bind(*a, **params), (), (), (), (), None)

    try:
        key: tuple[Any, ...] = (prim, *params.items(), *map(core.param_type_key, params.values()))
        hash(key)
    except TypeError:  # a param that is not hashable: traced each time
        return make()(*args)
    return _sharded_eager.get_or_make(key, make)(*args)


install_sharded_eager(_eager_on_shards)


def _identity(x: Any) -> Any:
    return x


def _reshard_by_jit(x: Array, sharding: Sharding) -> Array:
    # mproc (issue 17): the relayout of an array spanning processes, as JAX runs it: the identity
    # jitted with the target as its result's sharding, one SPMD program on every process (the
    # caller has checked that the target is over the argument's devices, in their order, which
    # the SPMD program then gives its result).
    out: Array = jit(_identity, out_shardings=sharding)(x)
    return out


install_reshard(_reshard_by_jit)
