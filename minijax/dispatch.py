"""Eager execution: a primitive bound with no transformation active runs here.

The output avals come from the primitive's abstract-eval rule (so weak types
and dtypes are decided in one place) and the backend computes the buffers.
Higher-order primitives (jit, later control flow) are run by compiling their
jaxpr once and caching the executable.

Placement follows JAX (its FAQ, "Controlling data and computation placement
on devices"): an array is *committed* to its device when it was put there
explicitly (``device_put(x, device)``) or computed from committed arrays.
A computation runs on the device of its committed operands (arrays committed
to two different devices are an error), else on the default device
(``backend.default_device``); operands elsewhere are moved there first.
Results are committed when any operand was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes
from minijax.array import Array
from minijax.backend import Backend, Device, Executable, default_device, default_device_of
from minijax.config import BoundedCache, executable_cache_size
from minijax.core import Primitive, ShapedArray
from minijax.interpreters.debug_checks import check_call_outputs, check_primitive_outputs, fp_checks_enabled, fp_switch
from minijax.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr, subjaxprs
from minijax.jaxpr_check import JaxprTypeError

# prim -> rule(backend, args_as_arrays, params) for primitives whose eager
# evaluation is not a single backend.execute call (e.g. jit: compile + run).
# The arrays are all on one device already (``run_compiled`` finds it).
eager_rules: dict[Primitive, Callable[[Backend, Sequence[Array], dict[str, Any]], list[Array]]] = {}

# Primitives that call the ClosedJaxpr in their ``jaxpr`` param on their
# operands (jit, checkpoint). Under jax_debug_nans a NaN in their outputs
# makes that jaxpr run again op by op, to name the operation that made it.
call_primitives: set[Primitive] = set()


def device_put_value(
    x: Any, weak_type: bool = False, backend: Backend | None = None, device: Device | None = None
) -> Array:
    """A host value (NumPy array or scalar) as an uncommitted Array on ``device``
    (default: the default device, or ``backend``'s default device)."""
    if device is None:
        device = default_device() if backend is None else default_device_of(backend)
    aval = core.get_aval(x)
    if weak_type and not aval.weak_type:
        aval = aval.update(weak_type=True)
    host = np.asarray(x, dtype=aval.dtype)
    return Array(_put(device, host), aval, device.backend, device)


def _put(device: Device, host: np.ndarray[Any, Any]) -> Any:
    backend = device.backend
    return backend.put(host) if device is backend.devices()[0] else backend.put(host, device)


def _deleted_error(x: Array) -> RuntimeError:
    return RuntimeError(f"Array has been deleted with shape={x.aval.str_short(short_dtypes=False)}.")


def to_device(x: Any, device: Device, committed: bool = False) -> Array:
    """``x`` (an Array anywhere, or a host value) as an Array on ``device``."""
    if type(x) is Array:
        if x._buf is None:
            raise _deleted_error(x)
        if x._device is device and (x._committed or not committed):
            return x
        if x._device is device:  # same buffer, now committed
            return Array(x._buf, x.aval, x._backend, device, True)
        # Between devices through the host: simple, and devices here are CPUs.
        return Array(_put(device, np.asarray(x._value)), x.aval, device.backend, device, committed)
    if isinstance(x, core.Tracer):  # nothing is being traced here: it escaped its transformation
        core.raise_leaked_tracer(x)
    return device_put_value(x, device=device)


# --- placement -------------------------------------------------------------------


def placement(
    values: Sequence[Any], what: str, names: Callable[[], Sequence[str]], backend: Backend | None = None
) -> tuple[Device, bool]:
    """The device a computation on ``values`` runs on, and whether its results
    are committed. ``what`` and ``names`` (the operands' names) are for the
    error when operands are committed to different devices. With ``backend``
    given (``jit(backend=...)``) the computation stays on that backend.
    """
    first = -1
    for i, x in enumerate(values):
        if type(x) is Array and x._committed:
            if first < 0:
                first = i
            elif x._device is not values[first]._device:
                raise _incompatible_devices(what, names(), values, first, i)
    if first >= 0:
        device: Device = values[first]._device
        if backend is None or device.backend is backend:
            return device, True
    return (default_device() if backend is None else default_device_of(backend)), False


def _incompatible_devices(what: str, names: Sequence[str], values: Sequence[Any], i: int, j: int) -> ValueError:
    def describe(k: int) -> str:
        x: Array = values[k]
        name = names[k] if k < len(names) else f"args[{k}]"
        return (
            f"argument {name} of {what} with shape {x.aval.str_short(short_dtypes=False)} and with device ids "
            f"[{x._device.id}] on platform {x._device.platform.upper()}"
        )

    return ValueError(
        f"Received incompatible devices for jitted computation. Got {describe(i)} and {describe(j)}\n"
        "(arrays committed to different devices cannot be combined: move one with jax.device_put(x, device) first)"
    )


# --- eager primitives ----------------------------------------------------------------

Runner = Callable[[Sequence[Any]], list[Any]]

# (prim, *in_avals, device, *params.items(), *param types) -> (out_avals, runner). Eager ops
# repeat with the same signature, so the abstract-eval rule and the backend's
# per-op preparation run once per signature; this is the eager hot path.
# Bounded (minijax_executable_cache_size): a runner may hold a compiled program.
_eager_cache: BoundedCache[tuple[Any, ...], tuple[list[ShapedArray], Runner]] = BoundedCache(
    "eager operations", executable_cache_size
)


def _prepare(
    prim: Primitive, device: Device, in_avals: list[ShapedArray], params: dict[str, Any]
) -> tuple[list[ShapedArray], Runner]:
    out = prim.abstract_eval(*in_avals, **params)
    for sub in subjaxprs(params):  # cond's branches, a loop's body: run by the backend as they say
        check_declared_types(sub, prim.name)
    out_avals: list[ShapedArray] = list(out) if prim.multiple_results else [out]
    check_result_sizes(prim.name, out_avals)
    backend = device.backend
    if device is backend.devices()[0]:
        runner = backend.prepare(prim, params, in_avals, out_avals)
    else:
        runner = backend.prepare(prim, params, in_avals, out_avals, device=device)  # type: ignore[call-arg]
    # The operands' types are the cache key's: a backend may offer a call that
    # skips checking them again (the xla backend's ``unchecked``).
    return out_avals, getattr(runner, "unchecked", runner)


def apply_primitive(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Run ``prim`` eagerly. The fast path: every operand a live Array, all on
    one device, which is either committed or the default device.

    This is the hot path of every eager operation, so it is written out flat:
    one pass over the operands builds the cache key and the buffer list and
    checks placement. Anything else is placed by ``_apply_placing`` first.
    """
    key: list[Any] = [prim]
    bufs: list[Any] = []
    device: Device | None = None
    committed = False
    for x in args:
        if type(x) is not Array:
            return _apply_placing(prim, args, params)
        buf = x._buf
        if buf is None:
            return _apply_placing(prim, args, params)
        if x._device is not device:
            if device is not None:
                return _apply_placing(prim, args, params)
            device = x._device
        if x._committed:
            committed = True
        key.append(x.aval.key)  # (hashes in C; the aval's __hash__ is a Python call)
        bufs.append(buf)
    if not committed:
        default = default_device()
        if device is not default:
            if args:  # uncommitted operands elsewhere move to the default device
                return _apply_placing(prim, args, params)
            device = default  # no operands (iota)
    assert device is not None  # set by an operand or by the default above
    key.append(device)
    if params:
        key.extend(params.items())
        # 1 == True == 1.0 hash alike; a rule may accept one and reject another.
        key.extend(map(type, params.values()))
    try:
        hashable: tuple[Any, ...] | None = tuple(key)
        # _eager_cache.get(hashable), written out: one call fewer per operation.
        cached = _eager_cache.entries.get(hashable)  # type: ignore[arg-type]
    except TypeError:  # a param value that is not hashable: no caching
        hashable, cached = None, None
    if cached is None:
        entry = None
    else:
        cached[1] = True
        entry = cached[0]
    if entry is None:
        if prim in eager_rules:
            if prim not in call_primitives:  # (a call's jaxpr is checked when compiled)
                for sub in subjaxprs(params):  # cond's branches, a loop's body: run as they say
                    check_declared_types(sub, prim.name)
            outs = eager_rules[prim](device.backend, args, params)
            if fp_switch.on and fp_checks_enabled():
                _check_eager_rule_outputs(prim, args, params, outs)
            return outs if prim.multiple_results else outs[0]
        in_avals = [x.aval for x in args]
        if hashable is None:
            entry = _prepare(prim, device, in_avals, params)
        else:
            entry = _eager_cache.get_or_make(hashable, lambda: _prepare(prim, device, in_avals, params))
    out_avals, runner = entry
    out_bufs = runner(bufs)
    backend = device.backend
    if prim.multiple_results:
        results = [Array(b, a, backend, device, committed) for b, a in zip(out_bufs, out_avals)]
        if fp_switch.on and fp_checks_enabled():
            check_primitive_outputs(prim.name, [x.aval for x in args], results)
        return results
    result = Array(out_bufs[0], out_avals[0], backend, device, committed)
    if fp_switch.on and fp_checks_enabled():
        check_primitive_outputs(prim.name, [x.aval for x in args], [result])
    return result


def _check_eager_rule_outputs(prim: Primitive, args: Sequence[Array], params: dict[str, Any], outs: Sequence[Array]) -> None:
    """jax_debug_nans for primitives run by an eager rule; a call is re-run op by op."""
    if prim not in call_primitives:
        check_primitive_outputs(prim.name, [x.aval for x in args], outs)
        return
    closed: ClosedJaxpr = params["jaxpr"]
    name = f"{prim.name}({params['name']})" if "name" in params else prim.name
    live = all(x._buf is not None for x in args)
    check_call_outputs(name, outs, (lambda: eval_jaxpr(closed.jaxpr, closed.consts, *args)) if live else None)


def _apply_placing(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """The slow path: put host values, and arrays on other devices, where the
    computation runs; then take the fast path."""
    for x in args:
        if isinstance(x, core.Tracer):
            core.raise_leaked_tracer(x)
    device, committed = placement(args, prim.name, lambda: [f"args[{i}]" for i in range(len(args))])
    return apply_primitive(prim, [to_device(x, device) for x in args], params)


core.install_eval(apply_primitive)


# --- compiled jaxprs -----------------------------------------------------------

# (id(jaxpr), device, donated inputs) -> (the jaxpr, its executable), bounded
# (minijax_executable_cache_size). The entry holds the jaxpr itself, so that
# its id stays its own while the entry lives.
_compiled: BoundedCache[tuple[int, Device, tuple[bool, ...]], tuple[ClosedJaxpr, Executable]] = BoundedCache(
    "compiled jaxprs", executable_cache_size
)


# The largest dimension a result may have: XLA's shapes index with int32 on the
# way to the device, and no host holds 2**31 elements of a dimension anyway.
MAX_DIMENSION = 2**31 - 1


def check_result_sizes(where: str, avals: Sequence[ShapedArray]) -> None:
    """Refuse results no backend can allocate (a params typo like size=2**40) with a
    ValueError naming the operation, instead of MemoryError or an overflow inside XLA."""
    for aval in avals:
        if any(d > MAX_DIMENSION for d in aval.shape):
            raise ValueError(
                f"{where}: result shape {aval.shape} has a dimension larger than {MAX_DIMENSION}, "
                "which no backend can allocate; check the operation's shape or size parameters."
            )


def check_declared_types(jaxpr: Jaxpr, where: str) -> None:
    """Raise JaxprTypeError unless every equation (nested ones too) declares the
    result types its primitive gives for the operand types it declares.

    Traced jaxprs always do; a hand-built or parsed one may not, and a backend
    would then compute one type and label the result another (the NumPy
    backend casts, XLA refuses to lower). Checked once per compilation.
    """
    for eqn in jaxpr.eqns:
        in_avals = [a.aval for a in eqn.invars]
        out = eqn.primitive.abstract_eval_cached(in_avals, eqn.params)
        given = list(out) if eqn.primitive.multiple_results else [out]
        declared = [v.aval for v in eqn.outvars]
        check_result_sizes(eqn.primitive.name, given)
        if len(given) != len(declared) or any(
            (g.shape, g.dtype) != (d.shape, d.dtype) for g, d in zip(given, declared)
        ):
            raise JaxprTypeError(
                f"{where}: the equation `{eqn}` declares results "
                f"({', '.join(d.str_short() for d in declared)}), but {eqn.primitive.name} of "
                f"({', '.join(a.str_short() for a in in_avals)}) gives ({', '.join(g.str_short() for g in given)}). "
                "Fix the jaxpr (minijax.jaxpr_check.check_jaxpr checks one in full)."
            )
        for sub in subjaxprs(eqn.params):
            check_declared_types(sub, where)


def compiled_for(closed: ClosedJaxpr, device: Device, donated_invars: Sequence[bool] = ()) -> Executable:
    """The executable for ``closed`` on ``device`` (with those inputs donated), compiled once and cached."""
    donated = tuple(donated_invars)

    def compile_() -> tuple[ClosedJaxpr, Executable]:
        check_declared_types(closed.jaxpr, "jit")
        backend = device.backend
        donation = donated if any(donated) else None
        if device is backend.devices()[0]:
            return closed, backend.compile(closed, donated_invars=donation)
        return closed, backend.compile(closed, donated_invars=donation, device=device)  # type: ignore[call-arg]

    return _compiled.get_or_make((id(closed), device, donated), compile_)[1]


def run_compiled(backend: Backend, closed: ClosedJaxpr, arrays: Sequence[Array]) -> list[Array]:
    """Run ``closed`` on arrays that are all on one device of ``backend``."""
    device = arrays[0]._device if arrays else default_device_of(backend)
    committed = any(a._committed for a in arrays)
    executable = compiled_for(closed, device)
    bufs = executable([a._buf for a in arrays])
    return [Array(b, aval, backend, device, committed) for b, aval in zip(bufs, closed.out_avals)]


def device_put(
    x: Any, device: Any = None, *, src: Any = None, donate: bool = False, may_alias: bool | None = None
) -> Any:
    """``minijax.device_put``: place a pytree of values on a device.

    With a device (a Device, or a platform name like "cpu") the results are
    committed to it. Without one, arrays stay where they are (committed or
    not) and host values go, uncommitted, to the default device.
    ``donate=True`` deletes an input Array that was copied; ``may_alias=False``
    always copies. ``src`` is accepted for JAX compatibility (arrays know
    where they are).
    """
    from minijax import tree_util
    from minijax.backend import resolve_device

    del src
    target = None if device is None else resolve_device(device)

    def put(leaf: Any) -> Any:
        if isinstance(leaf, core.Tracer):
            return leaf
        if type(leaf) is Array:
            if leaf._buf is None:
                raise _deleted_error(leaf)
            if target is None and may_alias is not False:
                return leaf
            where = leaf._device if target is None else target
            if may_alias is False:
                out = Array(_put(where, np.array(leaf._value)), leaf.aval, where.backend, where, target is not None)
            else:
                out = to_device(leaf, where, committed=target is not None)
            if donate and out._buf is not leaf._buf:
                leaf.delete()
            return out
        if target is None:
            return device_put_value(leaf)
        placed = device_put_value(leaf, device=target)
        placed._committed = True
        return placed

    return tree_util.tree_map(put, x)


def canonical_host_array(x: Any, dtype: Any = None) -> np.ndarray[Any, Any]:
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else np.asarray(x).dtype)
    return np.asarray(x, dtype=dt)
