"""Eager execution: a primitive bound with no transformation active runs here.

The output avals come from the primitive's abstract-eval rule (so weak types
and dtypes are decided in one place) and the backend computes the buffers.
Higher-order primitives (jit, later control flow) are run by compiling their
jaxpr once and caching the executable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes
from minijax.array import Array
from minijax.backend import Backend, Device, Executable, get_backend
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr

# prim -> rule(backend, args_as_arrays, params) for primitives whose eager
# evaluation is not a single backend.execute call (e.g. jit: compile + run).
eager_rules: dict[Primitive, Callable[[Backend, Sequence[Array], dict[str, Any]], list[Array]]] = {}


def device_put_value(x: Any, weak_type: bool = False, backend: Backend | None = None) -> Array:
    """A host value (NumPy array or scalar) as an Array on ``backend``."""
    backend = backend or get_backend()
    aval = core.get_aval(x)
    if weak_type and not aval.weak_type:
        aval = aval.update(weak_type=True)
    host = np.asarray(x, dtype=aval.dtype)
    return Array(backend.put(host), aval, backend)


def _deleted_error(x: Array) -> RuntimeError:
    return RuntimeError(f"Array has been deleted with shape={x.aval.str_short(short_dtypes=False)}.")


def to_array(x: Any, backend: Backend) -> Array:
    if type(x) is Array:
        if x._buf is None:
            raise _deleted_error(x)
        if x._backend is backend:
            return x
        return Array(backend.put(np.asarray(x._value)), x.aval, backend)
    return device_put_value(x, backend=backend)


def _pick_backend(args: Sequence[Any]) -> Backend:
    for x in args:
        if type(x) is Array:
            return x._backend
    return get_backend()


Runner = Callable[[Sequence[Any]], list[Any]]

# (prim, backend, *in_avals, *params.items()) -> (out_avals, runner). Eager ops
# repeat with the same signature, so the abstract-eval rule and the backend's
# per-op preparation run once per signature; this is the eager hot path.
_eager_cache: dict[tuple[Any, ...], tuple[list[ShapedArray], Runner]] = {}


def _prepare(
    prim: Primitive, backend: Backend, in_avals: list[ShapedArray], params: dict[str, Any]
) -> tuple[list[ShapedArray], Runner]:
    out = prim.abstract_eval(*in_avals, **params)
    out_avals: list[ShapedArray] = list(out) if prim.multiple_results else [out]
    return out_avals, backend.prepare(prim, params, in_avals, out_avals)


def apply_primitive(prim: Primitive, args: Sequence[Any], params: dict[str, Any], backend: Backend | None = None) -> Any:
    """Run ``prim`` eagerly. The fast path: every operand a live Array of one backend.

    This is the hot path of every eager operation, so it is written out flat:
    one pass over the operands builds the cache key and the buffer list.
    """
    key: list[Any] = [prim]
    bufs: list[Any] = []
    for x in args:
        if type(x) is not Array:
            return _apply_converting(prim, args, params)
        buf = x._buf
        if buf is None:
            return _apply_converting(prim, args, params)
        if backend is None:
            backend = x._backend
        elif x._backend is not backend:
            return _apply_converting(prim, args, params)
        key.append(x.aval)
        bufs.append(buf)
    if backend is None:  # no operands (iota): the default backend
        backend = get_backend()
    key.append(backend)
    if params:
        key.extend(params.items())
    try:
        hashable: tuple[Any, ...] | None = tuple(key)
        entry = _eager_cache.get(hashable)  # type: ignore[arg-type]
    except TypeError:  # a param value that is not hashable: no caching
        hashable, entry = None, None
    if entry is None:
        if prim in eager_rules:
            outs = eager_rules[prim](backend, args, params)
            return outs if prim.multiple_results else outs[0]
        entry = _prepare(prim, backend, [x.aval for x in args], params)
        if hashable is not None:
            _eager_cache[hashable] = entry
    out_avals, runner = entry
    out_bufs = runner(bufs)
    if prim.multiple_results:
        return [Array(b, a, backend) for b, a in zip(out_bufs, out_avals)]
    return Array(out_bufs[0], out_avals[0], backend)


def _apply_converting(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """The slow path: put host values (and arrays of other backends) on one backend."""
    for x in args:
        if isinstance(x, core.Tracer):
            core.raise_leaked_tracer(x)
    backend = _pick_backend(args)
    return apply_primitive(prim, [to_array(x, backend) for x in args], params, backend)


core.install_eval(apply_primitive)


# --- compiled jaxprs -----------------------------------------------------------

_compiled: dict[tuple[int, str, tuple[bool, ...]], tuple[ClosedJaxpr, Executable]] = {}


def compiled_for(closed: ClosedJaxpr, backend: Backend, donated_invars: Sequence[bool] = ()) -> Executable:
    """The backend's executable for ``closed`` (with those inputs donated), compiled once and cached."""
    donated = tuple(donated_invars)
    key = (id(closed), backend.name, donated)
    entry = _compiled.get(key)
    # The entry holds the jaxpr itself, so an id reused by a new jaxpr is detected.
    if entry is None or entry[0] is not closed:
        compiled = backend.compile(closed, donated_invars=donated if any(donated) else None)
        entry = _compiled[key] = (closed, compiled)
    return entry[1]


def run_compiled(backend: Backend, closed: ClosedJaxpr, arrays: Sequence[Array]) -> list[Array]:
    executable = compiled_for(closed, backend)
    bufs = executable([a._buf for a in arrays])
    return [Array(b, aval, backend) for b, aval in zip(bufs, closed.out_avals)]


def device_put(x: Any, device: Device | None = None) -> Any:
    """``minijax.device_put``: place a pytree of values on a device."""
    from minijax import tree_util

    backend = device.backend if device is not None else None

    def put(leaf: Any) -> Any:
        if isinstance(leaf, core.Tracer):
            return leaf
        target = backend or (leaf._backend if type(leaf) is Array else get_backend())
        if type(leaf) is Array and leaf._backend is target:
            return leaf
        if type(leaf) is Array:
            return Array(target.put(np.asarray(leaf._value)), leaf.aval, target)
        return device_put_value(leaf, backend=target)

    return tree_util.tree_map(put, x)


def canonical_host_array(x: Any, dtype: Any = None) -> np.ndarray[Any, Any]:
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else np.asarray(x).dtype)
    return np.asarray(x, dtype=dt)
