"""NumpyBackend: buffers are read-only NumPy arrays on simulated CPU devices.

One device, or N as XLA's CPU client has them (the ``jax_num_cpu_devices`` flag, else
``XLA_FLAGS=--xla_force_host_platform_device_count=N``): every device is the host,
so a buffer is the same NumPy array whichever device an Array says it is on.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax.backend import Backend, Device, Executable
from minijax.config import read as read_flag
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, Var
from minijax_numpy import spmd
from minijax_numpy.table import HIGHER_ORDER, IMPLS, SPECIALIZERS, load_all


def _quiet_state() -> tuple[Any, Any] | None:
    # JAX never warns about floating-point exceptions (log(-1) is just nan).
    # np.errstate costs ~2 us per use, more than a small op itself; NumPy 2
    # keeps the error state in a context variable, and setting that variable
    # directly is nearly free. Fall back to errstate when it is not there.
    try:
        from numpy._core import _ufunc_config
    except ImportError:  # pragma: no cover - NumPy 1.x layout
        return None
    var = getattr(_ufunc_config, "_extobj_contextvar", None)
    if var is None:  # pragma: no cover
        return None
    with np.errstate(all="ignore"):
        return var, var.get()


_QUIET = _quiet_state()


class quiet_fp:
    """Context manager: suppress NumPy's floating-point warnings in this block."""

    __slots__ = ("_token", "_errstate")

    def __enter__(self) -> None:
        if _QUIET is None:  # pragma: no cover
            self._errstate = np.errstate(all="ignore")
            self._errstate.__enter__()
        else:
            self._token = _QUIET[0].set(_QUIET[1])

    def __exit__(self, *exc: Any) -> None:
        if _QUIET is None:  # pragma: no cover
            self._errstate.__exit__(*exc)
        else:
            _QUIET[0].reset(self._token)


def quiet_call(impl: Callable[..., Any], bufs: Sequence[Any]) -> Any:
    with quiet_fp():
        return impl(*bufs)


def _freeze(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    # Buffers are shared, never copied: before one is handed to a user (get),
    # forbid writes so no NumPy view can change an immutable Array.
    if x.flags.writeable:
        x.flags.writeable = False
    return x


def _as_result(value: Any, aval: ShapedArray) -> np.ndarray[Any, Any]:
    """Make an implementation's result exactly the array its aval promises."""
    out: np.ndarray[Any, Any] = value
    if type(value) is not np.ndarray or value.dtype != aval.dtype:
        out = np.asarray(value, dtype=aval.dtype)
    if out.shape != aval.shape:
        raise RuntimeError(f"numpy backend: result shape {out.shape} does not match {aval.str_short()}")
    return out


def _is_one_equation(jaxpr: Jaxpr) -> bool:
    """``jaxpr`` is one equation, on the arguments in order, giving the results in order."""
    if jaxpr.constvars or len(jaxpr.eqns) != 1:
        return False
    (eqn,) = jaxpr.eqns
    if eqn.primitive.name in HIGHER_ORDER:
        return False
    ins, outs = list(jaxpr.invars), list(jaxpr.outvars)
    return (
        len(eqn.invars) == len(ins) and all(a is v for a, v in zip(eqn.invars, ins))
        and len(eqn.outvars) == len(outs) and all(a is v for a, v in zip(eqn.outvars, outs))
    )


def host_device_count() -> int:
    """How many CPU devices to simulate: the ``jax_num_cpu_devices`` flag if set, else XLA's
    ``--xla_force_host_platform_device_count=N`` in ``XLA_FLAGS`` (JAX honours both), else 1."""
    configured = int(read_flag("jax_num_cpu_devices"))
    if configured > 0:
        return configured
    for flag in os.environ.get("XLA_FLAGS", "").split():
        name, _, value = flag.partition("=")
        if name == "--xla_force_host_platform_device_count" and value.isdigit() and int(value) > 0:
            return int(value)
    return 1


class NumpyBackend(Backend):
    name = "numpy"
    platform = "cpu"
    priority = 0

    def __init__(self, num_devices: int | None = None) -> None:
        load_all()
        count = host_device_count() if num_devices is None else num_devices
        self._devices = [Device(self, i, "cpu", "cpu") for i in range(count)]

    def devices(self) -> list[Device]:
        return self._devices

    def put(self, value: np.ndarray[Any, Any], device: Device | None = None) -> Any:
        return np.array(value, copy=True)

    def get(self, buffer: Any) -> np.ndarray[Any, Any]:
        frozen: np.ndarray[Any, Any] = _freeze(buffer)
        return frozen

    def supports(self, prim: Primitive) -> bool:
        return prim.name in IMPLS or prim.name in HIGHER_ORDER

    def _impl(self, prim: Primitive, params: dict[str, Any]) -> Callable[..., Any]:
        """The implementation of ``prim`` with its params bound."""
        higher = HIGHER_ORDER.get(prim.name)
        if higher is not None:
            return higher(self, params)
        impl = IMPLS.get(prim.name)
        if impl is None:
            raise NotImplementedError(f"the numpy backend has no implementation of primitive {prim.name}")
        if not params:
            return impl
        return functools.partial(impl, **params)

    def execute(
        self,
        prim: Primitive,
        params: dict[str, Any],
        inputs: Sequence[Any],
        out_avals: Sequence[ShapedArray],
    ) -> list[Any]:
        return self.prepare(prim, params, [], out_avals)(inputs)

    def prepare(
        self,
        prim: Primitive,
        params: dict[str, Any],
        in_avals: Sequence[ShapedArray],
        out_avals: Sequence[ShapedArray],
        device: Device | None = None,
    ) -> Callable[[Sequence[Any]], list[Any]]:
        specialize = SPECIALIZERS.get(prim.name)
        specialized = specialize(in_avals) if specialize is not None and in_avals else None
        impl = specialized if specialized is not None else self._impl(prim, params)
        if prim.multiple_results:

            def run_many(bufs: Sequence[Any]) -> list[Any]:
                with quiet_fp():
                    outs = impl(*bufs)
                return [_as_result(o, a) for o, a in zip(outs, out_avals)]

            return run_many
        (aval,) = out_avals
        dtype, shape = aval.dtype, aval.shape
        if _QUIET is None:  # pragma: no cover
            return lambda bufs: [_as_result(quiet_call(impl, bufs), aval)]
        var, quiet = _QUIET

        def run_one(bufs: Sequence[Any]) -> list[Any]:
            # The eager hot path, written out: quiet FP state, call, check.
            token = var.set(quiet)
            try:
                out = impl(*bufs)
            finally:
                var.reset(token)
            if type(out) is not np.ndarray or out.dtype != dtype:
                out = np.asarray(out, dtype=dtype)
            if out.shape != shape:
                raise RuntimeError(f"numpy backend: {prim.name} returned shape {out.shape}, expected {aval.str_short()}")
            return [out]

        return run_one

    # --- arrays over several simulated devices (minijax_numpy.spmd) -----------------------
    def holds_shards(self, devices: Sequence[Device]) -> bool:
        return len(set(devices)) > 1 and all(d.backend is self for d in devices)

    def put_shards(self, value: np.ndarray[Any, Any], sharding: Any) -> Any:
        return spmd.put_shards(np.asarray(value), sharding)

    def put_blocks(self, blocks: Sequence[np.ndarray[Any, Any]], sharding: Any, shape: tuple[int, ...]) -> Any:
        return [spmd.frozen_copy(b) for b in blocks]

    def get_shards(self, buffer: Any, sharding: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
        return spmd.assemble(buffer, sharding, shape, dtype)

    def shard_buffers(self, buffer: Any, sharding: Any, shape: tuple[int, ...]) -> list[Any]:
        return list(buffer)

    def compile_spmd(
        self, closed: ClosedJaxpr, in_shardings: Sequence[Any], out_shardings: Sequence[Any | None],
        donated: Sequence[int] = (), name: str | None = None,
    ) -> tuple[Callable[[list[Any]], list[Any]], list[Any]]:
        # ``donated``: NumPy blocks are never reused in place (the caller deletes the donated
        # arrays); ``name`` names nothing here.
        run = self.compile_jaxpr(closed.jaxpr, closed.consts)
        return spmd.compile_spmd(lambda values: run(*values), closed, in_shardings, out_shardings)

    def compile(
        self, closed: ClosedJaxpr, donated_invars: Sequence[bool] | None = None, device: Device | None = None
    ) -> Executable:
        jaxpr = closed.jaxpr
        if _is_one_equation(jaxpr):
            # An optimisation of the interpreter below (which computes the same): a program
            # that is one equation applied to its arguments -- what a ``jnp`` function
            # compiled for an eager call usually is -- runs as that equation's eager runner.
            (eqn,) = jaxpr.eqns
            return self.prepare(
                eqn.primitive, eqn.params, [v.aval for v in jaxpr.invars], [v.aval for v in jaxpr.outvars]
            )
        run = self.compile_jaxpr(jaxpr, closed.consts)
        return lambda bufs: run(*bufs)

    def compile_jaxpr(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> Callable[..., list[Any]]:
        """An interpreter specialised to ``jaxpr``.

        Variables become slots of a list and every equation's implementation
        is resolved here, once; running is a loop over prepared steps.
        Literals and consts are stored in slots of their own before the run.
        """
        slots: dict[Var, int] = {}
        initial: list[Any] = []

        def constant_slot(value: Any, aval: ShapedArray) -> int:
            initial.append(_as_result(np.asarray(value), aval))
            return len(initial) - 1

        for v, c in zip(jaxpr.constvars, consts):
            slots[v] = constant_slot(c, v.aval)
        n_fixed_before_args = len(initial)
        for v in jaxpr.invars:
            slots[v] = len(initial)
            initial.append(None)

        def ref(atom: Var | Literal) -> int:
            if isinstance(atom, Literal):
                return constant_slot(atom.val, atom.aval)
            return slots[atom]

        Step = tuple[Callable[..., Any], list[int], list[int], list[ShapedArray], bool]
        steps: list[Step] = []
        for eqn in jaxpr.eqns:
            ins = [ref(a) for a in eqn.invars]
            outs = []
            for v in eqn.outvars:
                initial.append(None)
                outs.append(len(initial) - 1)
                if not isinstance(v, DropVar):
                    slots[v] = len(initial) - 1
            avals = [v.aval for v in eqn.outvars]
            steps.append((self._impl(eqn.primitive, eqn.params), ins, outs, avals, eqn.primitive.multiple_results))
        out_refs = [ref(v) for v in jaxpr.outvars]
        arg_start, n_args = n_fixed_before_args, len(jaxpr.invars)

        def run(*args: Any) -> list[Any]:
            if len(args) != n_args:
                raise TypeError(f"compiled jaxpr takes {n_args} arguments, got {len(args)}")
            env = list(initial)
            env[arg_start : arg_start + n_args] = args
            with quiet_fp():
                for impl, ins, outs, avals, multiple in steps:
                    result = impl(*[env[i] for i in ins])
                    if multiple:
                        for i, value, aval in zip(outs, result, avals):
                            env[i] = _as_result(value, aval)
                    else:
                        aval = avals[0]
                        if type(result) is not np.ndarray or result.dtype != aval.dtype:
                            result = _as_result(result, aval)
                        env[outs[0]] = result
            return [env[i] for i in out_refs]

        return run
