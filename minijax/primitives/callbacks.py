"""Host callbacks: primitives that call a Python function while a program runs.

The four primitives JAX has for this, with JAX's names and params:

* ``debug_callback``: call a function for its side effect; no results.
* ``debug_print``: format the operands with a format string and print the line
  (what ``minijax.debug.print`` binds).
* ``pure_callback``: call a function the program may treat as pure (it can be
  dropped when unused, or called once per batch element under vmap); its
  results are described by the ``result_avals`` param.
* ``io_callback``: the same for an impure function: never dropped, and with
  ``ordered=True`` run in program order relative to other ordered effects.

``spec/primitives/callbacks.md`` is the written specification; the checks
below cite its constraint labels. Each primitive's rules are here: shape
rule, what it does on the host, autodiff and vmap (as JAX defines them), and
how its params print.

What a callback primitive *does* is the same on every backend, so it is stated
here once: ``run_on_host(prim, args, params)`` calls the user's function with
minijax Arrays and returns the results as NumPy arrays, checked against
``result_avals`` (pure_callback C5). Eagerly the primitives run right here
(``dispatch.eager_rules``), without compiling anything, as JAX runs its debug
callbacks; the backends call ``run_on_host_values`` from their compiled code
(the NumPy interpreter directly, XLA through its host-callback custom call).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from minijax import dtypes, tree_util
from minijax.array import Array
from minijax.backend import Backend
from minijax.core import Primitive, ShapedArray, is_array_like
from minijax.dispatch import eager_rules
from minijax.errors import JaxRuntimeError
from minijax.interpreters import ad, batching
from minijax.jaxpr import param_filters
from minijax.jaxpr_passes import effectful_primitives
from minijax.primitives import slicing, structural as sp
from minijax.primitives.common import standard_primitive

# ---------------------------------------------------------------------------
# Effects (the ``effect`` param of debug_callback)


class Effect:
    """A side effect a primitive has. Instances of one class are equal; they print by name."""

    name: ClassVar[str] = "Effect"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return self.name


class DebugEffect(Effect):
    """A debug callback that may run in any order relative to other effects."""

    name = "Debug"


class OrderedDebugEffect(Effect):
    """A debug callback that runs in program order relative to other ordered effects."""

    name = "OrderedDebug"


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()

# pure_callback's vmap_method values (pure_callback C4); None means "vmap is an error".
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized", None)


# ---------------------------------------------------------------------------
# The callback param of pure_callback and io_callback


@dataclasses.dataclass(frozen=True)
class FlatCallback:
    """A user function called with flat arguments, returning its results flattened.

    Equal for the same function and argument structure, so that binding the
    same callback twice gives equal params (which the abstract-eval and
    compilation caches compare).
    """

    callback_func: Callable[..., Any]
    in_tree: tree_util.PyTreeDef  # the structure of (args, kwargs)

    def __call__(self, *flat_args: Any) -> list[Any]:
        args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
        return tree_util.tree_leaves(self.callback_func(*args, **kwargs))

    def __repr__(self) -> str:
        # JAX's text for this param, so that jaxprs print alike.
        return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree})"


# ---------------------------------------------------------------------------
# Static and dynamic arguments of the debug callbacks

# debug.print and debug.callback accept any Python objects among their
# arguments: array-likes are operands of the primitive (traced, then given to
# the function as Arrays), everything else (strings, ...) is kept as is in the
# ``static_args`` param, by its position among the flattened arguments.


def split_static(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[tree_util.PyTreeDef, list[Any], dict[int, Any]]:
    """(structure of (args, kwargs), the array-like leaves, position -> every other leaf)."""
    leaves, in_tree = tree_util.tree_flatten((tuple(args), kwargs))
    dynamic = [x for x in leaves if is_array_like(x)]
    static = {i: x for i, x in enumerate(leaves) if not is_array_like(x)}
    return in_tree, dynamic, static


def merge_static(
    in_tree: tree_util.PyTreeDef, dynamic: Sequence[Any], static: dict[int, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The (args, kwargs) that ``split_static`` took apart."""
    values = iter(dynamic)
    leaves = [static[i] if i in static else next(values) for i in range(len(static) + len(dynamic))]
    args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
    return tuple(args), dict(kwargs)


# ---------------------------------------------------------------------------
# Abstract evaluation


def _check_callable(name: str, callback: Any) -> None:
    if not callable(callback):
        raise TypeError(f"{name}: the callback must be callable, got an object of type {type(callback).__name__}.")


def _check_result_avals(name: str, result_avals: Any) -> list[ShapedArray]:
    if not isinstance(result_avals, tuple) or not all(isinstance(a, ShapedArray) for a in result_avals):
        raise TypeError(f"{name}: result_avals must be a tuple of ShapedArray, got {result_avals!r}.")
    return list(result_avals)


def _check_sharding(name: str, sharding: Any) -> None:
    if sharding is not None:
        raise NotImplementedError(
            f"{name}: sharding={sharding!r} is not supported: minijax has no shardings and runs "
            "every callback on the host. Pass sharding=None."
        )


def _debug_callback_rule(*avals: ShapedArray, callback: Any, effect: Any, partitioned: bool) -> list[ShapedArray]:
    _check_callable("debug_callback", callback)  # debug_callback C1
    if not isinstance(effect, (DebugEffect, OrderedDebugEffect)):  # debug_callback C2
        raise TypeError(f"debug_callback: effect must be a DebugEffect or an OrderedDebugEffect, got {effect!r}.")
    return []  # no results


def _debug_print_rule(
    *avals: ShapedArray,
    fmt: Any,
    ordered: bool,
    partitioned: bool,
    in_tree: Any,
    static_args: Any,
    np_printoptions: Any,
    has_placeholders: bool,
    logging_record: Any,
) -> list[ShapedArray]:
    if not isinstance(fmt, str):  # debug_print C1
        raise TypeError(f"debug_print: fmt must be a str, got {type(fmt).__name__}.")
    n_static = len(static_args)
    if not isinstance(in_tree, tree_util.PyTreeDef) or in_tree.num_leaves != len(avals) + n_static:  # debug_print C2
        raise TypeError(
            f"debug_print: in_tree must describe the {len(avals)} operands and {n_static} static "
            f"arguments, got {in_tree!r}."
        )
    return []


def _pure_callback_rule(
    *avals: ShapedArray, callback: Any, result_avals: Any, sharding: Any, vmap_method: Any
) -> list[ShapedArray]:
    _check_callable("pure_callback", callback)  # pure_callback C1
    outs = _check_result_avals("pure_callback", result_avals)  # pure_callback C2
    _check_sharding("pure_callback", sharding)  # pure_callback C3
    if vmap_method not in VMAP_METHODS:  # pure_callback C4
        raise ValueError(f"vmap_method must be one of {list(VMAP_METHODS)}, but got: {vmap_method}")
    return outs


def _io_callback_rule(
    *avals: ShapedArray, callback: Any, result_avals: Any, sharding: Any, ordered: bool
) -> list[ShapedArray]:
    _check_callable("io_callback", callback)  # io_callback C1
    outs = _check_result_avals("io_callback", result_avals)  # io_callback C2
    _check_sharding("io_callback", sharding)  # io_callback C3
    return outs


debug_callback_p = standard_primitive("debug_callback", _debug_callback_rule, multiple_results=True)
debug_print_p = standard_primitive("debug_print", _debug_print_rule, multiple_results=True)
pure_callback_p = standard_primitive("pure_callback", _pure_callback_rule, multiple_results=True)
io_callback_p = standard_primitive("io_callback", _io_callback_rule, multiple_results=True)

CALLBACK_PRIMITIVES = (debug_callback_p, debug_print_p, pure_callback_p, io_callback_p)


def is_ordered(prim: Primitive, params: dict[str, Any]) -> bool:
    """Whether this callback must run in program order relative to the other ordered ones."""
    if prim is debug_callback_p:
        return isinstance(params["effect"], OrderedDebugEffect)
    return bool(params.get("ordered", False))


def has_side_effect(prim: Primitive) -> bool:
    """Whether the callback must run even when nothing uses its results (all but pure_callback)."""
    return prim is not pure_callback_p


# ---------------------------------------------------------------------------
# What the primitives do on the host


def format_message(fmt: str, np_printoptions: dict[str, Any], has_placeholders: bool, *args: Any, **kwargs: Any) -> str:
    """The line debug.print prints: ``fmt.format(...)``, or ``fmt`` and the values
    separated by spaces when ``fmt`` has no replacement field."""
    if has_placeholders:
        # Arrays print (str/repr) with NumPy's options as they were when traced.
        with np.printoptions(**np_printoptions):
            return fmt.format(*args, **kwargs)
    if kwargs:
        raise ValueError(
            f"debug.print: the format string {fmt!r} has no replacement field for the keyword arguments {sorted(kwargs)}."
        )
    return " ".join([fmt, *(str(a) for a in args)])


def _debug_callback_host(
    args: Sequence[Array], *, callback: Callable[..., Any], **_: Any
) -> list[np.ndarray[Any, Any]]:
    callback(*args)
    return []


def _debug_print_host(
    args: Sequence[Array],
    *,
    fmt: str,
    in_tree: tree_util.PyTreeDef,
    static_args: tuple[tuple[int, Any], ...],
    np_printoptions: tuple[tuple[str, Any], ...],
    has_placeholders: bool,
    logging_record: logging.LogRecord | None,
    **_: Any,
) -> list[np.ndarray[Any, Any]]:
    call_args, call_kwargs = merge_static(in_tree, args, dict(static_args))
    message = format_message(fmt, dict(np_printoptions), has_placeholders, *call_args, **call_kwargs)
    if logging_record is None:
        sys.stdout.write(message + "\n")  # sys.stdout as it is now (pytest's capsys replaces it)
    else:  # debug.log: the record made at trace time, with the message filled in
        record = copy.copy(logging_record)
        record.msg = message
        logging.getLogger(record.name).handle(record)
    return []


def checked_results(
    name: str, results: Sequence[Any], result_avals: Sequence[ShapedArray]
) -> list[np.ndarray[Any, Any]]:
    """The callback's results as NumPy arrays of exactly ``result_avals`` (pure_callback C5).

    Values are taken at their canonical dtype first (a float64 result is
    float32 with x64 off, as JAX takes it). XLA would not notice a wrong shape
    or dtype (it reads the bytes it expects), so this check is the only one.
    """
    fix = "The callback must return values whose pytree leaves match result_shape_dtypes."
    if len(results) != len(result_avals):
        raise RuntimeError(
            f"{name}: Mismatched number of outputs from callback. Expected: {len(result_avals)}, "
            f"Actual: {len(results)}. {fix}"
        )
    outs = []
    for i, (value, aval) in enumerate(zip(results, result_avals)):
        host = np.asarray(value)
        if host.shape != aval.shape:
            raise RuntimeError(
                f"{name}: Incorrect output shape for return value #{i}: Expected: {aval.shape}, Actual: {host.shape}. {fix}"
            )
        try:
            dtype = dtypes.canonicalize_dtype(host.dtype)
        except (TypeError, NotImplementedError):
            dtype = host.dtype
        if dtype != aval.dtype:
            raise RuntimeError(
                f"{name}: Incorrect output dtype for return value #{i}: Expected: {aval.dtype.name}, "
                f"Actual: {dtype.name}. {fix}"
            )
        out = np.asarray(host, dtype=dtype)
        outs.append(out if out.flags.c_contiguous else np.array(out, order="C"))
    return outs


def callback_failure(error: BaseException) -> JaxRuntimeError:
    """What a program whose host callback raised ``error`` raises: XLA's runtime error, whose text (XLA's
    on CPU, word for word) carries the callback's traceback. Every backend raises it, so that a program
    fails the same way everywhere; only an eager ``debug.callback``/``debug.print`` lets the error through
    as it is, as JAX does (they run in Python there, not in a program)."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return JaxRuntimeError(f"INTERNAL: CpuCallback error calling callback: {text}")


def _call_for_results(
    name: str, callback: Callable[..., Sequence[Any]], args: Sequence[Array], result_avals: Sequence[ShapedArray]
) -> list[np.ndarray[Any, Any]]:
    # pure_callback and io_callback always run inside a program, eagerly too (JAX compiles them).
    try:
        results = callback(*args)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # SystemExit too: the debugger's "quit" ends the program, not Python
        raise callback_failure(e) from e
    return checked_results(name, results, result_avals)


def _pure_callback_host(
    args: Sequence[Array], *, callback: Callable[..., Sequence[Any]], result_avals: Sequence[ShapedArray], **_: Any
) -> list[np.ndarray[Any, Any]]:
    return _call_for_results("pure_callback", callback, args, result_avals)


def _io_callback_host(
    args: Sequence[Array], *, callback: Callable[..., Sequence[Any]], result_avals: Sequence[ShapedArray], **_: Any
) -> list[np.ndarray[Any, Any]]:
    return _call_for_results("io_callback", callback, args, result_avals)


HostRule = Callable[..., list[np.ndarray[Any, Any]]]

# prim -> rule(args as Arrays, **params) -> results as NumPy arrays.
HOST_RULES: dict[Primitive, HostRule] = {
    debug_callback_p: _debug_callback_host,
    debug_print_p: _debug_print_host,
    pure_callback_p: _pure_callback_host,
    io_callback_p: _io_callback_host,
}


def run_on_host(prim: Primitive, args: Sequence[Array], params: dict[str, Any]) -> list[np.ndarray[Any, Any]]:
    """Run the callback primitive ``prim`` on Arrays; its results as NumPy arrays."""
    return HOST_RULES[prim](args, **params)


def run_on_host_values(
    prim: Primitive, values: Sequence[np.ndarray[Any, Any]], params: dict[str, Any], backend: Backend
) -> list[np.ndarray[Any, Any]]:
    """``run_on_host`` for compiled code, which has the operands as NumPy arrays:
    the function receives them as Arrays on ``backend``, as JAX hands it Arrays."""
    args = []
    for value in values:
        host = np.asarray(value)
        args.append(Array(backend.put(host), ShapedArray(host.shape, host.dtype), backend))
    try:
        return run_on_host(prim, args, params)
    except (KeyboardInterrupt, JaxRuntimeError):
        raise
    except BaseException as e:  # a debug callback's error, inside a compiled program
        raise callback_failure(e) from e


def _eager_rule(prim: Primitive) -> Callable[[Backend, Sequence[Any], dict[str, Any]], list[Array]]:
    def run(backend: Backend, args: Sequence[Any], params: dict[str, Any]) -> list[Array]:
        avals = prim.abstract_eval(*[x.aval for x in args], **params)  # the params' checks
        outs = run_on_host(prim, args, params)
        return [Array(backend.put(out), aval, backend) for out, aval in zip(outs, avals)]

    return run


for _prim in CALLBACK_PRIMITIVES:
    eager_rules[_prim] = _eager_rule(_prim)


# ---------------------------------------------------------------------------
# Autodiff (as JAX 0.10.2 defines it)

# The debug callbacks see the primal values and have no tangents or
# cotangents: under jvp they run once, on the primals; under linearize/grad
# they run in the forward pass. pure_callback and io_callback have no
# derivative: their rules raise, pointing at custom_jvp / custom_vjp.


def _debug_jvp(prim: Primitive) -> Callable[..., tuple[Any, list[Any]]]:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, list[Any]]:
        return prim.bind(*primals, **params), []

    return jvp


def _debug_transpose(cts: Any, *args: Any, **params: Any) -> list[None]:
    return [None for _ in args]


def _no_derivative(message: str) -> Callable[..., Any]:
    def rule(*args: Any, **params: Any) -> Any:
        raise ValueError(message)

    return rule


for _prim in (debug_callback_p, debug_print_p):
    ad.primitive_jvps[_prim] = _debug_jvp(_prim)
    ad.transpose_rules[_prim] = _debug_transpose
ad.primitive_jvps[pure_callback_p] = _no_derivative(
    "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients."
)
ad.transpose_rules[pure_callback_p] = _no_derivative(
    "Pure callbacks do not support transpose. Please use `jax.custom_vjp` to use callbacks while taking gradients."
)
ad.primitive_jvps[io_callback_p] = _no_derivative("IO callbacks do not support JVP.")
ad.transpose_rules[io_callback_p] = _no_derivative("IO callbacks do not support transpose.")
ad.non_differentiable.update((pure_callback_p, io_callback_p))
# Never removed as dead code, even when nothing uses their results.
effectful_primitives.update((debug_callback_p, debug_print_p, io_callback_p))


# ---------------------------------------------------------------------------
# Vectorization (as JAX 0.10.2 defines it)

# The debug callbacks and io_callback run once per batch element, in order.
# pure_callback does what its vmap_method says. JAX loops with lax.map/scan
# for "sequential" and io_callback; minijax has no loop primitive yet, so the
# loop is unrolled: the same calls in the same order, more equations.


def _each_element(
    prim: Primitive, vals: Sequence[Any], dims: Sequence[int | None], params: dict[str, Any]
) -> tuple[list[Any], list[int]]:
    """Bind ``prim`` once per batch element; its results stacked along a new axis 0."""
    size = batching.batch_size(vals, dims)
    per_element = []
    for i in range(size):
        element = [v if d is None else slicing.index_in_dim(v, i, d, keepdims=False) for v, d in zip(vals, dims)]
        per_element.append(prim.bind(*element, **params))
    result_avals: Sequence[ShapedArray] = params.get("result_avals", ())
    outs: list[Any] = []
    for j, aval in enumerate(result_avals):
        if size == 0:
            outs.append(np.zeros((0, *aval.shape), aval.dtype))
        else:
            outs.append(sp.stack_p.bind(*(results[j] for results in per_element), axis=0))
    return outs, [0] * len(outs)


def _debug_batcher(prim: Primitive) -> Callable[..., tuple[list[Any], list[int]]]:
    def rule(vals: Sequence[Any], dims: Sequence[int | None], **params: Any) -> tuple[list[Any], list[int]]:
        return _each_element(prim, vals, dims, params)

    return rule


def _pure_callback_batcher(
    vals: Sequence[Any], dims: Sequence[int | None], *, vmap_method: str | None, **params: Any
) -> tuple[list[Any], list[int]]:
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _each_element(pure_callback_p, vals, dims, {**params, "vmap_method": vmap_method})
    if vmap_method is None:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. "
            f"Got vmap_method={vmap_method!r}. Pass vmap_method= to pure_callback."
        )
    size = batching.batch_size(vals, dims)
    args = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    if vmap_method in ("expand_dims", "broadcast_all"):  # unbatched arguments get the batch axis too
        n = size if vmap_method == "broadcast_all" else 1
        args = [sp.broadcast(a, (n,)) if d is None else a for a, d in zip(args, dims)]
    avals = tuple(ShapedArray((size, *a.shape), a.dtype) for a in params["result_avals"])
    outs = pure_callback_p.bind(*args, **{**params, "result_avals": avals, "vmap_method": vmap_method})
    return list(outs), [0] * len(outs)


def _io_callback_batcher(
    vals: Sequence[Any], dims: Sequence[int | None], *, ordered: bool, **params: Any
) -> tuple[list[Any], list[int]]:
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _each_element(io_callback_p, vals, dims, {**params, "ordered": False})


batching.primitive_batchers[debug_callback_p] = _debug_batcher(debug_callback_p)
batching.primitive_batchers[debug_print_p] = _debug_batcher(debug_print_p)
batching.primitive_batchers[pure_callback_p] = _pure_callback_batcher
batching.primitive_batchers[io_callback_p] = _io_callback_batcher


# ---------------------------------------------------------------------------
# How the params print in jaxpr text (as JAX 0.10.2 prints them)

_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


class _Shown:
    """A param value shown by a given text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def _shown_value(key: str, value: Any) -> Any:
    if key == "result_avals":
        # JAX writes the avals with full dtype names: (ShapedArray(float32[3]),)
        value = tuple(
            _Shown(f"ShapedArray({a.str_short(short_dtypes=False)}{', weak_type=True' if a.weak_type else ''})")
            for a in value
        )
    # Function reprs carry memory addresses; JAX masks them so that printing is deterministic.
    return _Shown(_ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(value)))


def _callback_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(k, _shown_value(k, v)) for k, v in sorted(params.items())]


for _prim in CALLBACK_PRIMITIVES:
    param_filters[_prim.name] = _callback_params
del _prim
