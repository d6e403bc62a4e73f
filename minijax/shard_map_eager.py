"""Eager ``shard_map``: the body run on concrete arguments one primitive at a time, as JAX runs it.

Called on concrete arrays (not under ``jit`` or another transformation),
``jax.shard_map``'s body sees values it can print: ``print(x)`` shows each
device's block ("On cpu:0 at mesh coordinates (i,) = (0,): ..."), and
``jax.typeof(x)`` the mesh axes the value varies over (``float32[3]{V:i}``).
So minijax runs the body under a trace of its own (as JAX's ``ShardMapTrace``
does): a tracer holds every device's block at once, stacked along one leading
dimension per mesh axis it *varies* over (in mesh order; along the others all
devices hold the same block, stored once). Each primitive the body applies
runs right away on the stacked blocks, vectorized over the mesh axes (one
named ``vmap`` per axis: the per-device program the staged equation runs
elsewhere, minijax/shard_map.py); a collective runs as JAX runs it, as a
jitted ``shard_map`` of it alone over the mesh, so the backend combines the
devices' blocks across the devices (XLA's all-reduce, ..., the NumPy
backend's lockstep). Under ``jit`` the body is staged instead, and the
backends run the ``shard_map`` equation.

Which axes a result varies over: those its per-device program is batched
along (a value computed from invariant ones alone is invariant), except that
a collective applied in the body follows JAX's rules: ``psum``/``pmax``/
``pmin`` make it invariant along their axes; ``all_gather``,
``psum_scatter``, ``ppermute`` and ``all_to_all`` make it vary along theirs,
as ``axis_index`` does. A result whose ``out_specs`` entry leaves out an axis it varies over is JAX's error
(``check_vma=True``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core
from minijax.interpreters import batching
from minijax.lax.structural import broadcast_in_dim
from minijax.primitives.collectives import axis_tuple, is_positional

__all__ = ["ShardMapTrace", "ShardMapTracer", "VaryingAval"]


class ManualAxisType:
    """What ``jax.typeof(x).manual_axis_type`` says of a value inside shard_map: the mesh axes it varies over."""

    __slots__ = ("varying",)

    def __init__(self, varying: frozenset[str]) -> None:
        self.varying = set(varying)

    def __repr__(self) -> str:
        return f"ManualAxisType(varying={sorted(self.varying)})"


class VaryingAval(core.ShapedArray):
    """The type of a value inside an eager shard_map: a block's type and the mesh axes it varies
    over, printed as JAX prints it (``float32[3]{V:i}``, ``float32[2,2]{V:(i,j)}``). It is equal to
    the plain type of the same shape and dtype (variation is no part of minijax's staged types)."""

    __slots__ = ("vma",)

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool, vma: tuple[str, ...]) -> None:
        super().__init__(shape, dtype, weak_type)
        self.vma = vma

    @property
    def manual_axis_type(self) -> ManualAxisType:
        return ManualAxisType(frozenset(self.vma))

    def str_short(self, short_dtypes: bool = True) -> str:
        plain = super().str_short(short_dtypes)
        if not self.vma:
            return plain
        return plain + "{V:" + (self.vma[0] if len(self.vma) == 1 else "(" + ",".join(self.vma) + ")") + "}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (core.ShapedArray, (self.shape, self.dtype, self.weak_type))


class ShardMapTracer(core.Tracer):
    """Every device's block of a value, stacked along one leading dimension per mesh axis it
    varies over (``vma``, in mesh order)."""

    __slots__ = ("val", "vma")

    def __init__(self, trace: ShardMapTrace, val: Any, vma: tuple[str, ...]) -> None:
        self._trace = trace
        self.val = val
        self.vma = vma

    @property
    def aval(self) -> core.ShapedArray:
        stacked = core.get_aval(self.val)
        return VaryingAval(stacked.shape[len(self.vma):], stacked.dtype, stacked.weak_type, self.vma)

    def __str__(self) -> str:
        trace: ShardMapTrace = self._trace  # type: ignore[assignment]
        return trace.show(self)

    __repr__ = __str__


# How a collective applied in the body changes the axes its result varies over.
def _invariant_along(vma: set[str], params: dict[str, Any]) -> set[str]:
    return vma - {a for a in params["axes"] if not is_positional(a)}


def _varying_along(vma: set[str], params: dict[str, Any]) -> set[str]:
    return vma | set(axis_tuple(params["axis_name"]))


_VMA_RULES: dict[str, Callable[[set[str], dict[str, Any]], set[str]]] = {
    "psum": _invariant_along, "pmax": _invariant_along, "pmin": _invariant_along,
    "all_gather": _varying_along, "reduce_scatter": _varying_along, "ppermute": _varying_along,
    "all_to_all": _varying_along, "axis_index": _varying_along,
}  # fmt: skip


class ShardMapTrace(core.Trace):
    transform_name = "shard_map"
    tracer_kind = "ShardMapTracer"

    def __init__(self, parent: core.Trace, mesh: Any, manual: tuple[str, ...],
                 across: Callable[..., Any] | None = None) -> None:  # fmt: skip
        self.parent = parent
        self.mesh = mesh
        self.manual = manual
        self.sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
        # How a collective on concrete blocks runs across the devices (minijax/shard_map.py's
        # _run_collective: a jitted shard_map of it, as JAX runs it); None: vectorized, as any
        # other primitive (the staged check's run, on abstract values).
        self.across = across

    def lift(self, x: Any) -> tuple[Any, tuple[str, ...]]:
        """``x``'s stacked blocks and the axes it varies over (a value from outside: none)."""
        if isinstance(x, ShardMapTracer) and x._trace is self:
            return x.val, x.vma
        if isinstance(x, core.Tracer) and not x._trace.is_alive:
            core.raise_leaked_tracer(x)
        return x, ()

    def varying(self, val: Any, vma: Sequence[str], want: Sequence[str]) -> Any:
        """``val`` (varying over ``vma``) stacked over the axes ``want`` (a superset, mesh order)."""
        if tuple(vma) == tuple(want):
            return val
        block = core.get_aval(val).shape[len(vma):]
        lead = tuple(self.sizes[a] for a in want)
        dims = [list(want).index(a) for a in vma] + list(range(len(lead), len(lead) + len(block)))
        with core.set_current_trace(self.parent):
            return broadcast_in_dim(val, lead + tuple(block), tuple(dims))

    def process_primitive(self, prim: core.Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        lifted = [self.lift(x) for x in args]

        def apply(*blocks: Any) -> list[Any]:
            out = prim.bind(*blocks, **params)
            return list(out) if prim.multiple_results else [out]

        rule = _VMA_RULES.get(prim.name)
        if rule is not None and self.across is not None and len(lifted) == 1:
            val, vma = lifted[0]
            out_vma = self.ordered(rule(set(vma), params))
            with core.set_current_trace(self.parent):
                out = self.across(self.mesh, prim, params, val, vma, out_vma)
            if out is not None:
                return ShardMapTracer(self, out, out_vma)
        with core.set_current_trace(self.parent):
            outs = self.per_device(apply, [v for v, _ in lifted], [m for _, m in lifted])
        if rule is not None:  # (JAX's type rule, over what the values show)
            union = set().union(*(m for _, m in lifted))
            want = rule(union, params)
            outs = [(self.varying(v, m, self.ordered(set(m) | want)), self.ordered(set(m) | want)) for v, m in outs]
        tracers = [ShardMapTracer(self, v, m) for v, m in outs]
        return tracers if prim.multiple_results else tracers[0]

    def ordered(self, axes: set[str]) -> tuple[str, ...]:
        return tuple(a for a in self.manual if a in axes)

    def per_device(self, fun: Callable[..., list[Any]], stacked: list[Any], vmas: list[tuple[str, ...]],
                   level: int = 0) -> list[tuple[Any, tuple[str, ...]]]:  # fmt: skip
        """``fun`` on every device's blocks: one named vmap per manual axis (the first outermost), each
        operand batched along the axes it varies over. Each result and the axes it varies over."""
        if level == len(self.manual):
            return [(v, ()) for v in fun(*stacked)]
        axis = self.manual[level]
        inner_vmas: list[list[tuple[str, ...]]] = []

        def inner(*xs: Any) -> list[Any]:
            outs = self.per_device(fun, list(xs), [tuple(a for a in m if a != axis) for m in vmas], level + 1)
            inner_vmas.append([m for _, m in outs])
            return [v for v, _ in outs]

        in_dims = [0 if axis in m else None for m in vmas]
        pairs = batching.vmap_flat_dims(inner, stacked, in_dims, self.sizes[axis], axis)
        results = []
        for (val, dim), m in zip(pairs, inner_vmas[0]):
            if dim is None:
                results.append((val, m))
            else:
                with core.set_current_trace(self.parent):
                    results.append((batching.moveaxis(val, dim, 0), (axis, *m)))
        return results

    def show(self, tracer: ShardMapTracer) -> str:
        """Each device's block, as JAX prints a value inside an eager shard_map."""
        blocks = np.asarray(tracer.val)
        where = dict(zip(self.mesh.axis_names, range(len(self.mesh.axis_names))))
        names = "(" + ", ".join(self.manual) + ",)"
        entries = []
        for coords in np.ndindex(*(self.sizes[a] for a in self.manual)):
            full = [0] * len(self.mesh.axis_names)
            for a, k in zip(self.manual, coords):
                full[where[a]] = k
            device = self.mesh.devices[tuple(full)]
            index = tuple(k for a, k in zip(self.manual, coords) if a in tracer.vma)
            entries.append(f"On {device} at mesh coordinates {names} = {tuple(coords)}:\n{blocks[index]}\n")
        return "\n".join(entries)
