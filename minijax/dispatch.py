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


def to_array(x: Any, backend: Backend) -> Array:
    if type(x) is Array:
        if x._backend is backend:
            if x._deleted:
                raise RuntimeError("Array has been deleted.")
            return x
        return Array(backend.put(np.asarray(x._value)), x.aval, backend)
    return device_put_value(x, backend=backend)


def _pick_backend(args: Sequence[Any]) -> Backend:
    for x in args:
        if type(x) is Array:
            return x._backend
    return get_backend()


def apply_primitive(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    backend = _pick_backend(args)
    arrays = [to_array(x, backend) for x in args]
    rule = eager_rules.get(prim)
    if rule is not None:
        outs = rule(backend, arrays, params)
        return outs if prim.multiple_results else outs[0]
    out = prim.abstract_eval(*(a.aval for a in arrays), **params)
    out_avals: list[ShapedArray] = out if prim.multiple_results else [out]
    bufs = backend.execute(prim, params, [a._buf for a in arrays], out_avals)
    results = [Array(b, a, backend) for b, a in zip(bufs, out_avals)]
    return results if prim.multiple_results else results[0]


core._eval_primitive_impl = apply_primitive


# --- compiled jaxprs -----------------------------------------------------------

_compiled: dict[tuple[int, str], tuple[ClosedJaxpr, Executable]] = {}


def compiled_for(closed: ClosedJaxpr, backend: Backend) -> Executable:
    """The backend's executable for ``closed``, compiled once and cached."""
    key = (id(closed), backend.name)
    entry = _compiled.get(key)
    if entry is None or entry[0] is not closed:
        entry = _compiled[key] = (closed, backend.compile(closed))
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
