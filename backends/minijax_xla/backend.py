"""XlaBackend: buffers are PJRT arrays; every computation is a compiled executable.

Eager operations are compiled too: ``prepare`` lowers a one-equation jaxpr
and compiles it once per (primitive, avals, params); the dispatch layer keeps
the returned runner, so a repeated eager op costs one executable call.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax.backend import Backend, Device, Executable
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from minijax_xla import jaxlib_api
from minijax_xla.lowering import LOWERINGS, lower_jaxpr, module_text

Runner = Callable[[Sequence[Any]], list[Any]]


def load_rules() -> None:
    """Import every ``rules_*`` module of this package (each fills LOWERINGS)."""
    import minijax_xla

    for info in pkgutil.iter_modules(minijax_xla.__path__):
        if info.name.startswith("rules_"):
            importlib.import_module(f"minijax_xla.{info.name}")


def donation_aliases(
    in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray], donated: Sequence[bool]
) -> dict[int, int]:
    """input position -> output position that reuses its buffer.

    Each donated input, in order, takes the first still-free output of the
    same shape and dtype: the same choice minijax's jit makes when it decides
    which donated Arrays to delete, so the two always agree.
    """
    free = list(range(len(out_avals)))
    aliases: dict[int, int] = {}
    for i, (aval, d) in enumerate(zip(in_avals, donated)):
        if not d:
            continue
        for j in free:
            if out_avals[j].shape == aval.shape and out_avals[j].dtype == aval.dtype:
                aliases[i] = j
                free.remove(j)
                break
    return aliases


class XlaBackend(Backend):
    name = "xla"
    platform = "cpu"
    # Below numpy (0) until every primitive has a lowering rule.
    priority = -10

    def __init__(self) -> None:
        load_rules()
        self._client = jaxlib_api.make_cpu_client()
        self._pjrt_devices = jaxlib_api.client_devices(self._client)
        self._devices = [Device(self, d.id, "cpu", str(d.device_kind)) for d in self._pjrt_devices]
        self._device_of = dict(zip(self._pjrt_devices, self._devices))
        self._eager_cache: dict[tuple[Any, ...], Runner] = {}

    # --- devices and buffers -------------------------------------------------------
    def devices(self) -> list[Device]:
        return self._devices

    def _pjrt_device(self, device: Device | None) -> Any:
        if device is None:
            return self._pjrt_devices[0]
        if device.backend is not self:
            raise ValueError(f"device {device!r} belongs to the {device.backend.name!r} backend, not 'xla'")
        return self._pjrt_devices[self._devices.index(device)]

    def put(self, value: np.ndarray[Any, Any], device: Device | None = None) -> Any:
        return jaxlib_api.put(jaxlib_api.c_contiguous(np.asarray(value)), self._pjrt_device(device))

    def get(self, buffer: Any) -> np.ndarray[Any, Any]:
        return jaxlib_api.get(buffer)

    def block_until_ready(self, buffer: Any) -> None:
        jaxlib_api.block_until_ready(buffer)

    def is_ready(self, buffer: Any) -> bool:
        return jaxlib_api.is_ready(buffer)

    def buffer_device(self, buffer: Any) -> Device:
        device: Device = self._device_of[jaxlib_api.buffer_device(buffer)]
        return device

    def supports(self, prim: Primitive) -> bool:
        return prim.name in LOWERINGS

    # --- eager ---------------------------------------------------------------------
    def execute(
        self,
        prim: Primitive,
        params: dict[str, Any],
        inputs: Sequence[Any],
        out_avals: Sequence[ShapedArray],
    ) -> list[Any]:
        return self.prepare(prim, params, [b.aval for b in inputs], out_avals)(inputs)

    def prepare(
        self,
        prim: Primitive,
        params: dict[str, Any],
        in_avals: Sequence[ShapedArray],
        out_avals: Sequence[ShapedArray],
    ) -> Runner:
        try:
            key: tuple[Any, ...] | None = (prim, tuple(in_avals), tuple(params.items()))
            runner = self._eager_cache.get(key)  # type: ignore[arg-type]
        except TypeError:  # an unhashable param: compile, don't cache
            key, runner = None, None
        if runner is None:
            invars = [Var(a) for a in in_avals]
            outvars = [Var(a) for a in out_avals]
            jaxpr = Jaxpr([], invars, outvars, [JaxprEqn(list(invars), outvars, prim, dict(params))])
            runner = self.compile(ClosedJaxpr(jaxpr, []))
            if key is not None:
                self._eager_cache[key] = runner
        return runner

    # --- whole programs -----------------------------------------------------------------
    def compile(self, closed: ClosedJaxpr, donated_invars: Sequence[bool] | None = None) -> Executable:
        aliases = donation_aliases(closed.in_avals, closed.out_avals, donated_invars or [])
        module, hoisted = lower_jaxpr(closed, "main", aliases)
        device = self._pjrt_devices[0]
        executable = jaxlib_api.compile_module(self._client, module, device)
        const_bufs = [jaxlib_api.put(c, device) for c in hoisted]
        return _checked_runner(jaxlib_api.make_runner(executable, closed.out_avals, device), closed.in_avals, const_bufs)

    def lower_text(self, closed: ClosedJaxpr) -> str:
        module, _ = lower_jaxpr(closed)
        return module_text(module)


def _checked_runner(run: Callable[[list[Any]], list[Any]], in_avals: Sequence[ShapedArray], const_bufs: list[Any]) -> Runner:
    """Wrap ``run`` with the checks XLA does not make.

    An executable accepts any buffer of the right byte size (int32[4] into an
    f32[4] parameter computes garbage), so shapes and dtypes are checked here.
    A deleted (donated) input makes execute fail with an obscure message, so
    that case is recognised after the fact, off the hot path.
    """
    expected = [(a.shape, a.dtype) for a in in_avals]
    n = len(expected)

    def call(bufs: Sequence[Any]) -> list[Any]:
        if len(bufs) != n:
            raise TypeError(f"xla executable takes {n} arguments, got {len(bufs)}")
        for i, (b, (shape, dtype)) in enumerate(zip(bufs, expected)):
            aval = getattr(b, "aval", None)
            if aval is None or aval.shape != shape or aval.dtype != dtype:
                raise _argument_type_error(i, b, in_avals[i])
        try:
            return run([*const_bufs, *bufs] if const_bufs else list(bufs))
        except Exception as e:
            for b in bufs:
                jaxlib_api.check_live(b)
            raise RuntimeError(f"xla backend: executing the compiled program failed: {e}") from e

    return call


def _argument_type_error(i: int, buf: Any, expected: ShapedArray) -> TypeError:
    aval = getattr(buf, "aval", None)
    got = aval.str_short() if isinstance(aval, ShapedArray) else type(buf).__name__
    return TypeError(
        f"xla executable: argument {i} is {got}, but the program was compiled for {expected.str_short()}; "
        "call it with arguments of the types it was compiled for (or re-trace for the new types)"
    )


__all__ = ["XlaBackend", "donation_aliases", "load_rules"]
