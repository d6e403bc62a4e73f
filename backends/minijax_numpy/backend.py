"""NumpyBackend: buffers are read-only NumPy arrays on one CPU device."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax.backend import Backend, Device, Executable
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, Var
from minijax_numpy.table import HIGHER_ORDER, IMPLS, load_all


def _freeze(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    # Buffers are shared with Arrays and never copied: forbid writes so
    # that no NumPy view handed to a user can change an immutable Array.
    if x.flags.writeable:
        x.flags.writeable = False
    return x


def _as_result(value: Any, aval: ShapedArray) -> np.ndarray[Any, Any]:
    """Make an implementation's result exactly the array its aval promises."""
    if type(value) is not np.ndarray or value.dtype != aval.dtype:
        value = np.asarray(value, dtype=aval.dtype)
    if value.shape != aval.shape:
        raise RuntimeError(f"numpy backend: result shape {value.shape} does not match {aval.str_short()}")
    return _freeze(value)


class NumpyBackend(Backend):
    name = "numpy"
    platform = "cpu"
    priority = 0

    def __init__(self) -> None:
        load_all()
        self._devices = [Device(self, 0, "cpu", "cpu")]

    def devices(self) -> list[Device]:
        return self._devices

    def put(self, value: np.ndarray[Any, Any], device: Device | None = None) -> Any:
        return _freeze(np.array(value, copy=True))

    def get(self, buffer: Any) -> np.ndarray[Any, Any]:
        return buffer  # type: ignore[no-any-return]

    def supports(self, prim: Primitive) -> bool:
        return prim.name in IMPLS or prim.name in HIGHER_ORDER

    def _impl(self, prim: Primitive, params: dict[str, Any]) -> Callable[..., Any]:
        higher = HIGHER_ORDER.get(prim.name)
        if higher is not None:
            return higher(self, params)
        impl = IMPLS.get(prim.name)
        if impl is None:
            raise NotImplementedError(f"the numpy backend has no implementation of primitive {prim.name}")
        return lambda *xs: impl(*xs, **params)

    def execute(
        self,
        prim: Primitive,
        params: dict[str, Any],
        inputs: Sequence[Any],
        out_avals: Sequence[ShapedArray],
    ) -> list[Any]:
        with np.errstate(all="ignore"):
            out = self._impl(prim, params)(*inputs)
        outs = out if prim.multiple_results else [out]
        return [_as_result(o, a) for o, a in zip(outs, out_avals)]

    def compile(self, closed: ClosedJaxpr, donated_invars: Sequence[bool] | None = None) -> Executable:
        run = self.compile_jaxpr(closed.jaxpr, [_freeze(np.asarray(c)) for c in closed.consts])
        return lambda bufs: run(*bufs)

    def compile_jaxpr(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> Callable[..., list[Any]]:
        """An interpreter specialised to ``jaxpr``: slots instead of a dict, impls resolved once."""
        slot: dict[Var, int] = {}
        for v in [*jaxpr.constvars, *jaxpr.invars]:
            slot[v] = len(slot)
        n_const = len(jaxpr.constvars)
        literals: list[Any] = []

        def ref(atom: Var | Literal) -> int:
            # Literals get negative slots into a separate list.
            if isinstance(atom, Literal):
                literals.append(np.asarray(atom.val, dtype=atom.aval.dtype))
                return -len(literals)
            return slot[atom]

        steps: list[tuple[Callable[..., Any], list[int], list[int], list[ShapedArray], bool]] = []
        for eqn in jaxpr.eqns:
            ins = [ref(a) for a in eqn.invars]
            outs = []
            for v in eqn.outvars:
                slot.setdefault(v, len(slot)) if not isinstance(v, DropVar) else None
                outs.append(slot.get(v, -1) if not isinstance(v, DropVar) else -1)
            steps.append((self._impl(eqn.primitive, eqn.params), ins, outs, [v.aval for v in eqn.outvars], eqn.primitive.multiple_results))
        out_refs = [ref(v) for v in jaxpr.outvars]
        out_avals = [v.aval for v in jaxpr.outvars]
        size = len(slot)
        const_values = list(consts)

        def run(*args: Any) -> list[Any]:
            env: list[Any] = [None] * size
            env[:n_const] = const_values
            env[n_const : n_const + len(args)] = args

            def read(i: int) -> Any:
                return env[i] if i >= 0 else literals[-i - 1]

            with np.errstate(all="ignore"):
                for impl, ins, outs, avals, multiple in steps:
                    result = impl(*[read(i) for i in ins])
                    if not multiple:
                        result = (result,)
                    for i, value, aval in zip(outs, result, avals):
                        if i >= 0:
                            env[i] = _as_result(value, aval)
            return [_as_result(read(i), a) for i, a in zip(out_refs, out_avals)]

        return run
