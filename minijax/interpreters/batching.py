"""Automatic vectorization: the batching trace behind ``vmap``.

A ``BatchTracer`` is a value with one extra axis, the *batch dimension*
(``batch_dim``), or ``not_mapped`` (None) when the value is the same for
every batch element. Each primitive's batching rule maps
(values, batch dims) to (value, batch dim) of its result, computing on the
parent trace; it never loops over the batch. Rules move a batch dimension
only where the primitive needs it somewhere else.

Named axes: ``vmap(..., axis_name=n)`` gives the trace a name that
collectives (``psum``, ``axis_index``, ...) refer to. Their rules, and those
of the primitives that carry jaxprs, receive the trace itself
(``trace_batch_rules``). The axis environment below says which names are
bound, and their sizes.

The machinery stages two primitives of its own accord: a ``transpose`` to
move a batch axis and a ``broadcast_in_dim`` to give an unbatched value one.
They are defined, with their rules, in ``minijax/primitives/structural.py``,
which sits above this module (it registers its rules here), so they are
named rather than imported (``core.primitive_named``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import numpy as np

from minijax import core
from minijax.core import (
    Primitive,
    ShapedArray,
    Trace,
    Tracer,
    current_trace,
    get_aval,
    primitive_named,
    raise_leaked_tracer,
    set_current_trace,
)
from minijax.debug_checks import check_for_leaks, leak_checks_enabled
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, eval_jaxpr

not_mapped = None
BatchDim = int | None

# prim -> rule(values, batch_dims, **params) -> (out, out_dim) or, for
# primitives with multiple results, (outs, out_dims).
primitive_batchers: dict[Primitive, Callable[..., tuple[Any, Any]]] = {}
# prim -> rule(trace, values, batch_dims, params): the rules that need the
# trace itself, for the axis' name and size (collectives) or to batch the
# jaxprs a primitive carries (jit, cond, the loops, ...).
trace_batch_rules: dict[
    Primitive, Callable[[BatchTrace, Sequence[Any], Sequence[BatchDim], dict[str, Any]], tuple[Any, Any]]
] = {}


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace: BatchTrace, val: Any, batch_dim: BatchDim) -> None:
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        if self.batch_dim is None:
            return aval
        shape = list(aval.shape)
        del shape[self.batch_dim]
        return aval.update(shape=shape)

    def _origin_msg(self) -> str:
        val = self.val
        return val._origin_msg() if isinstance(val, Tracer) else ""


class BatchTrace(Trace):
    transform_name = "vmap"
    tracer_kind = "BatchTracer"

    def __init__(self, parent: Trace, axis_size: int, axis_name: Any = None) -> None:
        self.parent = parent
        self.axis_size = axis_size
        self.axis_name = axis_name

    def to_val_dim(self, x: Any) -> tuple[Any, BatchDim]:
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer) and not x._trace.is_alive:
            raise_leaked_tracer(x)
        return x, not_mapped

    def wrap(self, val: Any, dim: BatchDim) -> Any:
        return val if dim is None else BatchTracer(self, val, dim)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        vals: list[Any] = []
        dims: list[BatchDim] = []
        for x in args:
            v, d = self.to_val_dim(x)
            vals.append(v)
            dims.append(d)
        trace_rule = trace_batch_rules.get(prim)
        if trace_rule is not None:
            with set_current_trace(self.parent):
                out, out_dim = trace_rule(self, vals, dims, params)
        elif all(d is None for d in dims):
            with set_current_trace(self.parent):
                return prim.bind(*vals, **params)
        else:
            rule = primitive_batchers.get(prim)
            if rule is None:
                raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented")
            with set_current_trace(self.parent):
                out, out_dim = rule(vals, dims, **params)
        if prim.multiple_results:
            return [self.wrap(v, d) for v, d in zip(out, out_dim)]
        return self.wrap(out, out_dim)


# ---------------------------------------------------------------------------
# Helpers for rules (they run with the parent trace current)


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """``x`` with axis ``src`` moved to position ``dst`` (no equation when already there)."""
    ndim = np.ndim(x) if not hasattr(x, "aval") else get_aval(x).ndim
    src, dst = src % ndim, dst % ndim
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return primitive_named("transpose").bind(x, permutation=tuple(perm))


def broadcast(x: Any, size: int, axis: int) -> Any:
    """``x`` with a new axis of ``size`` at ``axis`` (JAX's ``batching.broadcast``).

    The broadcast dimensions are NumPy integers, as JAX computes them (its
    jaxprs print them so: ``broadcast_dimensions=(np.int64(1),)``)."""
    shape = list(get_aval(x).shape)
    shape.insert(axis, size)
    dims = tuple(np.delete(np.arange(len(shape)), axis))
    return primitive_named("broadcast_in_dim").bind(x, shape=tuple(shape), broadcast_dimensions=dims, sharding=None)


def bdim_at_front(x: Any, bdim: BatchDim, size: int) -> Any:
    """``x`` with its batch dimension first; an unbatched ``x`` is broadcast to ``size``."""
    if bdim is None:
        ndim = get_aval(x).ndim
        shape = (size, *get_aval(x).shape)
        return primitive_named("broadcast_in_dim").bind(
            x, shape=shape, broadcast_dimensions=tuple(range(1, ndim + 1)), sharding=None
        )
    return moveaxis(x, bdim, 0)


def matchaxis(x: Any, src: BatchDim, dst: BatchDim, size: int) -> Any:
    """``x`` batched at ``dst`` (broadcast when it was not batched)."""
    if src == dst:
        return x
    if src is None:
        assert dst is not None
        return broadcast(x, size, dst)
    if dst is None:
        raise ValueError("matchaxis: a batched value cannot become unbatched")
    return moveaxis(x, src, dst)


def batch_size(vals: Sequence[Any], dims: Sequence[BatchDim]) -> int:
    for v, d in zip(vals, dims):
        if d is not None:
            return int(get_aval(v).shape[d])
    raise ValueError("batch_size: no operand is batched")


def only_batch_dim(dims: Sequence[BatchDim]) -> int:
    """The batch axis of a one-operand primitive's operand (batched, or no rule would run)."""
    (bdim,) = dims
    if bdim is None:
        raise ValueError("a batching rule was called with no batched operand")
    return bdim


def defvectorized(prim: Primitive) -> None:
    """Unary elementwise primitives: the batch dimension stays where it is."""

    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> tuple[Any, BatchDim]:
        return prim.bind(*vals, **params), dims[0]

    primitive_batchers[prim] = rule


def defreducer(prim: Primitive) -> None:
    """Reductions over ``axes`` (and argmax/argmin): the axes shift past the batch
    axis, which survives the reduction in its place among the kept axes."""

    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], *, axes: tuple[int, ...], **params: Any) -> tuple[Any, BatchDim]:
        (x,), (bdim,) = vals, dims
        if bdim is None:
            raise ValueError(f"the batching rule of {prim.name} was called with no batched operand")
        # NumPy integers, as JAX computes them: its jaxpr text shows np.int64(a).
        shifted = tuple(np.int64(a if a < bdim else a + 1) for a in axes)
        out_dim = bdim - sum(1 for a in shifted if a < bdim)
        return prim.bind(x, axes=shifted, **params), out_dim

    primitive_batchers[prim] = rule


# ---------------------------------------------------------------------------
# The axis environment: which axis names are bound, and their sizes
#
# A vmap's BatchTrace binds its name while it is the current trace or one of
# its ancestors; ``extend_axis_env`` binds names explicitly, for tracing that
# starts afresh (``make_jaxpr(axis_env=...)``, a jit inside a vmap). The
# collectives (minijax/primitives/collectives.py) look names up when they are
# called.

AxisName = Hashable


class _AxisFrames(threading.local):
    def __init__(self) -> None:
        # (name, size), outermost first. Pushed by ``extend_axis_env``.
        self.frames: list[tuple[AxisName, int]] = []


_axis_frames = _AxisFrames()


@contextmanager
def extend_axis_env(frames: Iterable[tuple[AxisName, int]]) -> Iterator[None]:
    """Bind axis names to sizes while the block runs (``make_jaxpr(axis_env=...)``).

    Code that traces a function afresh under a vmap (jit, checkpoint,
    custom_jvp) needs the vmap to push its frame here, so that the name stays
    visible inside the new trace.
    """
    added = [(name, int(size)) for name, size in frames]
    _axis_frames.frames.extend(added)
    try:
        yield
    finally:
        del _axis_frames.frames[len(_axis_frames.frames) - len(added) :]


def _batch_traces() -> Iterator[BatchTrace]:
    """The BatchTraces among the current trace and its ancestors, innermost first."""
    trace: Trace | None = current_trace()
    while trace is not None:
        if isinstance(trace, BatchTrace):
            yield trace
        trace = getattr(trace, "parent", None)


def lookup_axis_size(name: AxisName) -> int | None:
    """The size of the innermost axis called ``name``, or None when it is unbound."""
    if name is None:  # an unnamed vmap binds no name
        return None
    for trace in _batch_traces():
        if trace.axis_name == name:
            return int(trace.axis_size)
    for bound, size in reversed(_axis_frames.frames):
        if bound == name:
            return size
    return None


def current_axis_env() -> tuple[tuple[AxisName, int], ...]:
    """Every bound (name, size), outermost first: what a trace made now may depend on
    (a cache of traced jaxprs, e.g. jit's, must key on it: ``pmean`` bakes the size in)."""
    chain = [(t.axis_name, int(t.axis_size)) for t in _batch_traces() if t.axis_name is not None]
    # vmap pushes its frame too, so a trace's own name is usually there already.
    frames = list(_axis_frames.frames)
    frames.extend(frame for frame in reversed(chain) if frame not in frames)
    return tuple(frames)


def unbound_axis_hint(name: AxisName) -> str:
    return (
        f"bind the name with `minijax.vmap(f, axis_name={name!r})` or `minijax.pmap(f, axis_name={name!r})` "
        "around the call (or use jax.shard_map over a mesh with an axis of that name)"
    )


def axis_size(name: AxisName) -> int:
    """The size of axis ``name``; NameError (JAX's message) when no vmap binds it."""
    size = lookup_axis_size(name)
    if size is None:
        raise NameError(f"unbound axis name: {name}. To fix this, {unbound_axis_hint(name)}.")
    return size


def _named_axis(axis_name: Any, axis_size: int) -> AbstractContextManager[None]:
    """Keep a vmap's axis name visible to functions traced afresh inside it (jit, checkpoint)."""
    if axis_name is None:
        return nullcontext()
    return extend_axis_env([(axis_name, axis_size)])


# ---------------------------------------------------------------------------
# vmap of a flat function


class BatchedOutputError(ValueError):
    """An output asked to be unbatched (out dim None) varies along the mapped axis.
    ``index``: which output; shard_map rephrases it as an out_specs error."""

    def __init__(self, index: int, dim: int) -> None:
        super().__init__(f"at vmap out_axes, got axis spec None but output was batched on axis {dim}")
        self.index = index


def vmap_flat(
    fun: Callable[..., Sequence[Any]],
    args: Sequence[Any],
    in_dims: Sequence[BatchDim],
    axis_size: int,
    axis_name: Any = None,
    out_dims: Callable[[int], Sequence[BatchDim]] | Sequence[BatchDim] = (),
) -> list[Any]:
    """Apply ``fun`` to ``args`` batched along ``in_dims``; results batched along ``out_dims``.

    ``out_dims`` may be a function of the number of outputs (so that a
    single spec can apply to all of them); an output with out dim None must
    be unbatched.
    """
    parent = core.current_trace()
    pairs = vmap_flat_dims(fun, args, in_dims, axis_size, axis_name)
    wanted = out_dims(len(pairs)) if callable(out_dims) else out_dims
    results: list[Any] = []
    for (val, dim), want in zip(pairs, wanted):
        if want is None:
            if dim is not None:
                raise BatchedOutputError(len(results), dim)
            results.append(val)
            continue
        with set_current_trace(parent):
            ndim = get_aval(val).ndim + (1 if dim is None else 0)
            if not -ndim <= want < ndim:
                raise ValueError(f"axis {want} is out of bounds for array of dimension {ndim}")
            results.append(matchaxis(val, dim, want % ndim, axis_size))
    return results


def vmap_flat_dims(
    fun: Callable[..., Sequence[Any]], args: Sequence[Any], in_dims: Sequence[BatchDim], axis_size: int, axis_name: Any = None
) -> list[tuple[Any, BatchDim]]:
    """``fun`` applied to ``args`` batched along ``in_dims``: each result and the dimension it is
    batched along, None where it does not vary along the axis (``vmap_flat`` places them)."""
    trace = BatchTrace(core.current_trace(), axis_size, axis_name)
    tracers = [trace.wrap(x, d) for x, d in zip(args, in_dims)]
    try:
        with set_current_trace(trace), _named_axis(axis_name, axis_size):
            outs = list(fun(*tracers))
        pairs = [trace.to_val_dim(o) for o in outs]
    finally:
        trace.invalidate()
    if leak_checks_enabled():
        check_for_leaks(trace, tracers, outs)
    return pairs


def batch_jaxpr(closed: ClosedJaxpr, axis_size: int, in_dims: Sequence[BatchDim], out_dims: Sequence[BatchDim] | None = None, axis_name: Any = None) -> tuple[Any, list[BatchDim]]:
    """A jaxpr computing ``closed`` batched: inputs at ``in_dims``; returns (jaxpr, out dims).

    With ``out_dims`` None each output keeps the dimension its rules gave it
    (None when unbatched); otherwise outputs are moved/broadcast to ``out_dims``.
    """
    in_avals = []
    for aval, d in zip(closed.in_avals, in_dims):
        if d is None:
            in_avals.append(aval)
        else:
            shape = list(aval.shape)
            shape.insert(d, axis_size)
            in_avals.append(aval.update(shape=shape))
    found_dims: list[BatchDim] = []

    def fun(*xs: Any) -> list[Any]:
        trace = BatchTrace(core.current_trace(), axis_size, axis_name)
        tracers = [trace.wrap(x, d) for x, d in zip(xs, in_dims)]
        try:
            with set_current_trace(trace), _named_axis(axis_name, axis_size):
                outs = eval_jaxpr(closed.jaxpr, closed.consts, *tracers)
            pairs = [trace.to_val_dim(o) for o in outs]
        finally:
            trace.invalidate()
        if leak_checks_enabled():
            check_for_leaks(trace, tracers, outs)
        results = []
        for i, (val, dim) in enumerate(pairs):
            if out_dims is not None and out_dims[i] != dim:
                want = out_dims[i]
                if want is None:
                    raise ValueError("batch_jaxpr: an output batched by the rules was asked to be unbatched")
                val, dim = matchaxis(val, dim, want, axis_size), want
            found_dims.append(dim)
            results.append(val)
        return results

    batched, _ = trace_to_jaxpr(fun, in_avals)
    return batched, found_dims


__all__ = [
    "AxisName",
    "BatchTrace",
    "BatchTracer",
    "axis_size",
    "broadcast",
    "current_axis_env",
    "extend_axis_env",
    "lookup_axis_size",
    "trace_batch_rules",
    "batch_jaxpr",
    "batch_size",
    "bdim_at_front",
    "defreducer",
    "defvectorized",
    "matchaxis",
    "moveaxis",
    "not_mapped",
    "only_batch_dim",
    "primitive_batchers",
    "vmap_flat",
    "vmap_flat_dims",
]
