"""Automatic vectorization: the batching trace behind ``vmap``.

A ``BatchTracer`` is a value with one extra axis, the *batch dimension*
(``batch_dim``), or ``not_mapped`` (None) when the value is the same for
every batch element. Each primitive's batching rule maps
(values, batch dims) to (value, batch dim) of its result, computing on the
parent trace; it never loops over the batch. Rules move a batch dimension
only where the primitive needs it somewhere else.

Named axes: ``vmap(..., axis_name=n)`` gives the trace a name that
collectives (``psum``, ``axis_index``, ...) refer to; their rules are in
``collective_rules`` and receive the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from minijax import core
from minijax.core import Primitive, ShapedArray, Trace, Tracer, get_aval, raise_leaked_tracer, set_current_trace
from minijax.interpreters.debug_checks import check_for_leaks, leak_checks_enabled

not_mapped = None
BatchDim = int | None

# prim -> rule(values, batch_dims, **params) -> (out, out_dim) or, for
# primitives with multiple results, (outs, out_dims).
primitive_batchers: dict[Primitive, Callable[..., tuple[Any, Any]]] = {}
# prim -> rule(trace, values, batch_dims, params): collectives and other
# primitives that need the axis' name and size.
axis_rules: dict[Primitive, Callable[[BatchTrace, Sequence[Any], Sequence[BatchDim], dict[str, Any]], tuple[Any, Any]]] = {}


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
        axis_rule = axis_rules.get(prim)
        if axis_rule is not None:
            with set_current_trace(self.parent):
                out, out_dim = axis_rule(self, vals, dims, params)
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
    from minijax import lax

    ndim = np.ndim(x) if not hasattr(x, "aval") else get_aval(x).ndim
    src, dst = src % ndim, dst % ndim
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return lax.transpose(x, tuple(perm))


def bdim_at_front(x: Any, bdim: BatchDim, size: int) -> Any:
    """``x`` with its batch dimension first; an unbatched ``x`` is broadcast to ``size``."""
    from minijax import lax

    if bdim is None:
        aval = get_aval(x)
        return lax.broadcast_in_dim(x, (size, *aval.shape), tuple(range(1, aval.ndim + 1)))
    return moveaxis(x, bdim, 0)


def matchaxis(x: Any, src: BatchDim, dst: BatchDim, size: int) -> Any:
    """``x`` batched at ``dst`` (broadcast when it was not batched)."""
    from minijax import lax

    if src == dst:
        return x
    if src is None:
        aval = get_aval(x)
        assert dst is not None
        shape = list(aval.shape)
        shape.insert(dst, size)
        # NumPy integers, as JAX computes these dims (its jaxprs print np.int64(i)).
        dims = tuple(np.delete(np.arange(len(shape)), dst))
        return lax.broadcast_in_dim(x, tuple(shape), dims)
    if dst is None:
        raise ValueError("matchaxis: a batched value cannot become unbatched")
    return moveaxis(x, src, dst)


def batch_size(vals: Sequence[Any], dims: Sequence[BatchDim]) -> int:
    for v, d in zip(vals, dims):
        if d is not None:
            return int(get_aval(v).shape[d])
    raise ValueError("batch_size: no operand is batched")


def defvectorized(prim: Primitive) -> None:
    """Unary elementwise primitives: the batch dimension stays where it is."""

    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> tuple[Any, BatchDim]:
        return prim.bind(*vals, **params), dims[0]

    primitive_batchers[prim] = rule


# ---------------------------------------------------------------------------
# vmap of a flat function


def _named_axis(axis_name: Any, axis_size: int) -> AbstractContextManager[None]:
    """Keep a vmap's axis name visible to functions traced afresh inside it (jit, checkpoint)."""
    if axis_name is None:
        return nullcontext()
    from minijax.primitives.collectives import extend_axis_env

    return extend_axis_env([(axis_name, axis_size)])



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
    wanted = out_dims(len(pairs)) if callable(out_dims) else out_dims
    results: list[Any] = []
    for (val, dim), want in zip(pairs, wanted):
        if want is None:
            if dim is not None:
                raise ValueError(f"at vmap out_axes, got axis spec None but output was batched on axis {dim}")
            results.append(val)
            continue
        with set_current_trace(trace.parent):
            ndim = get_aval(val).ndim + (1 if dim is None else 0)
            if not -ndim <= want < ndim:
                raise ValueError(f"axis {want} is out of bounds for array of dimension {ndim}")
            results.append(matchaxis(val, dim, want % ndim, axis_size))
    return results


def batch_jaxpr(closed: Any, axis_size: int, in_dims: Sequence[BatchDim], out_dims: Sequence[BatchDim] | None = None, axis_name: Any = None) -> tuple[Any, list[BatchDim]]:
    """A jaxpr computing ``closed`` batched: inputs at ``in_dims``; returns (jaxpr, out dims).

    With ``out_dims`` None each output keeps the dimension its rules gave it
    (None when unbatched); otherwise outputs are moved/broadcast to ``out_dims``.
    """
    from minijax.interpreters.tracing import trace_to_jaxpr
    from minijax.jaxpr import eval_jaxpr

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
    "BatchTrace",
    "BatchTracer",
    "axis_rules",
    "batch_jaxpr",
    "batch_size",
    "bdim_at_front",
    "defvectorized",
    "matchaxis",
    "moveaxis",
    "not_mapped",
    "primitive_batchers",
    "vmap_flat",
]
