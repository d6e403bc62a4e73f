"""``jax.experimental.checkify``: run-time checks that survive ``jit``, ``vmap`` and ``grad``.

How it works (JAX 0.10.2's design):

* An **error value** (``Error``) is a pytree of arrays. For each kind of
  error it has seen (an ``ErrorEffect``: the exception class and the shapes
  of the run-time values its message needs) it holds a predicate ("it
  happened"), a code (which check failed first) and a payload (the values
  for the message). The codes map to the static half of the exception (its
  pytree structure: message template, primitive name, source position),
  kept in the value's pytree metadata.
* ``check(pred, msg, ...)`` builds such a value and binds the ``check``
  primitive (``minijax/primitives/checkify.py``) on its leaves. Eagerly
  that raises ``JaxRuntimeError``; staged, it cannot be compiled.
* ``checkify(f, errors)`` traces ``f`` to a jaxpr (closing over the
  arguments, as JAX does, so that Python values keep their concreteness) and
  interprets it: every equation is bound again on the current trace (so
  ``checkify`` composes with any transformation around it), ``check``
  equations are *discharged* into the error value, and, for the enabled
  automatic checks, the outputs of NaN-producing primitives, divisors and
  indices are checked as they are computed. Primitives that hold jaxprs
  (``jit``, ``cond``, ``while``, ``scan``, ``remat2``, ``custom_jvp_call``,
  ``custom_vjp_call``) get their jaxprs checkified, with the error value
  threaded through as extra operands and results.

Messages are JAX's: ``Error.get()`` of a failed ``check`` is the formatted
message followed by `` (`check` failed)``.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from minijax import lax, numpy as jnp, source_info, tree_util
from minijax.api import ShapeDtypeStruct
from minijax.array import Array, device_put_value
from minijax.core import Primitive, ShapedArray, Tracer, get_aval, primitive_registry
from minijax.interpreters import ad
from minijax.interpreters.tracing import DebugInfo, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, Var, eval_closed_jaxpr, literal_operand
from minijax.primitives.calls import NamedCallable
from minijax.primitives.checkify import JaxRuntimeError, check_p

__all__ = [
    "BatchedError", "DivisionByZeroError", "Error", "ErrorCategory", "ErrorEffect", "FailedCheckError",
    "JaxException", "JaxRuntimeError", "NaNError", "OOBError", "all_checks", "automatic_checks", "check",
    "check_error", "checkify", "debug_check", "div_checks", "float_checks", "index_checks", "init_error",
    "nan_checks", "user_checks",
]  # fmt: skip

Out = TypeVar("Out")


# ---------------------------------------------------------------------------
# The exceptions: the static half is their pytree metadata, the run-time values their leaves


class JaxException(Exception):
    """An error a check can report; ``traceback_info`` is where the check was made."""

    def __init__(self, traceback_info: Any) -> None:
        self.traceback_info = traceback_info

    def __init_subclass__(cls) -> None:
        tree_util.register_pytree_node_class(cls)

    def tree_flatten(self) -> tuple[list[Any], Any]:
        return [], self.traceback_info

    @classmethod
    def tree_unflatten(cls, metadata: Any, payload: Any) -> JaxException:
        return cls(metadata)

    def get_effect_type(self) -> ErrorEffect:
        raise NotImplementedError


ErrorCategory = type[JaxException]


@functools.total_ordering
@dataclasses.dataclass(eq=True, frozen=True)
class ErrorEffect:
    """A kind of error: its exception class and the shapes of its payload."""

    error_type: type[JaxException]
    shape_dtypes: tuple[ShapeDtypeStruct, ...]

    def _sort_key(self) -> tuple[str, tuple[tuple[tuple[int, ...], str], ...]]:
        return str(self.error_type), tuple((sd.shape, str(sd.dtype)) for sd in self.shape_dtypes)

    def __lt__(self, other: ErrorEffect) -> bool:
        return self._sort_key() < other._sort_key()

    def __hash__(self) -> int:
        return hash((self.error_type, tuple((sd.shape, sd.dtype, sd.weak_type) for sd in self.shape_dtypes)))


class DivisionByZeroError(JaxException):
    def __str__(self) -> str:
        return "division by zero"

    def get_effect_type(self) -> ErrorEffect:
        return ErrorEffect(DivisionByZeroError, ())


class NaNError(JaxException):
    def __init__(self, traceback_info: Any, primitive_name: str) -> None:
        super().__init__(traceback_info)
        self.prim = primitive_name

    def tree_flatten(self) -> tuple[list[Any], Any]:
        return [], (self.traceback_info, self.prim)

    @classmethod
    def tree_unflatten(cls, metadata: Any, payload: Any) -> NaNError:
        return cls(*metadata)

    def get_effect_type(self) -> ErrorEffect:
        return ErrorEffect(NaNError, ())

    def __str__(self) -> str:
        return f"nan generated by primitive: {self.prim}."


class OOBError(JaxException):
    def __init__(self, traceback_info: Any, primitive_name: str, operand_shape: tuple[int, ...], payload: Any) -> None:
        super().__init__(traceback_info)
        self.prim = primitive_name
        self.operand_shape = operand_shape
        self._payload = payload

    def tree_flatten(self) -> tuple[list[Any], Any]:
        return [self._payload], (self.traceback_info, self.prim, self.operand_shape)

    @classmethod
    def tree_unflatten(cls, metadata: Any, payload: Any) -> OOBError:
        traceback_info, prim, operand_shape = metadata
        return cls(traceback_info, prim, operand_shape, payload[0])

    def __str__(self) -> str:
        return (
            f"out-of-bounds indexing for array of shape {self.operand_shape}: index {self._payload[0]} is out of "
            f"bounds for axis {self._payload[1]} with size {self._payload[2]}. "
        )

    def get_effect_type(self) -> ErrorEffect:
        return ErrorEffect(OOBError, (ShapeDtypeStruct((3,), np.int32),))


class FailedCheckError(JaxException):
    def __init__(self, traceback_info: Any, fmt_string: str, *a: Any, **k: Any) -> None:
        super().__init__(traceback_info)
        self.fmt_string = fmt_string
        self.args = a
        self.kwargs = k

    def tree_flatten(self) -> tuple[list[Any], Any]:
        return [self.args, self.kwargs], (self.traceback_info, self.fmt_string)

    @classmethod
    def tree_unflatten(cls, metadata: Any, payload: Any) -> FailedCheckError:
        args, kwargs = payload
        return cls(*metadata, *args, **kwargs)

    def __str__(self) -> str:
        return self.fmt_string.format(*self.args, **self.kwargs) + " (`check` failed)"

    def get_effect_type(self) -> ErrorEffect:
        leaves = tree_util.tree_leaves((self.args, self.kwargs))
        return ErrorEffect(FailedCheckError, tuple(_shape_dtype(x) for x in leaves))


class BatchedError(JaxException):
    """The errors of a batched error value, by batch index (what ``vmap`` of ``checkify`` reports)."""

    def __init__(self, error_mapping: dict[tuple[int, ...], JaxException]) -> None:
        super().__init__(next(iter(error_mapping.values())).traceback_info)
        self.error_mapping = error_mapping

    def tree_flatten(self) -> tuple[list[Any], Any]:
        raise TypeError("a BatchedError is a report, not part of an error value")

    def __str__(self) -> str:
        return "\n".join(f"at mapped index {', '.join(map(str, idx))}: {e}" for idx, e in self.error_mapping.items())


def _shape_dtype(x: Any) -> ShapeDtypeStruct:
    aval = get_aval(x)
    return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)


# ---------------------------------------------------------------------------
# The error value


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(get_aval(x).shape) if hasattr(x, "aval") else tuple(np.shape(x))


@dataclasses.dataclass(frozen=True)
class Error:
    """A functional error value: what ``checkify``-ed functions return first."""

    _pred: dict[ErrorEffect, Any]
    _code: dict[ErrorEffect, Any]
    _metadata: dict[int, tree_util.PyTreeDef]  # code -> the structure of its exception
    _payload: dict[ErrorEffect, Any]

    def get(self) -> str | None:
        """The error message if an error happened, else None."""
        exc = self.get_exception()
        return None if exc is None else str(exc)

    def get_exception(self) -> JaxException | None:
        """The exception if an error happened, else None (the failed check with the lowest code)."""
        if any(_shape(v) for v in self._pred.values()):
            return self._get_batched_exception()
        best: tuple[int, ErrorEffect] | None = None
        for effect, code in self._code.items():
            if bool(self._pred[effect]) and (best is None or int(code) < best[0]):
                best = (int(code), effect)
        if best is None:
            return None
        code, effect = best
        exc: JaxException = tree_util.tree_unflatten(self._metadata[code], self._payload[effect])
        return exc

    def throw(self) -> None:
        """Raise ``JaxRuntimeError`` if an error happened (a batched value: one of its errors)."""
        _check_error(self)

    def __str__(self) -> str:
        return f"Error({self.get()})"

    def _get_batched_exception(self) -> BatchedError | None:
        shape = _shape(next(iter(self._pred.values())))
        preds = {e: np.asarray(p) for e, p in self._pred.items()}
        codes = {e: np.asarray(c) for e, c in self._code.items()}
        found: dict[tuple[int, ...], JaxException] = {}
        for idx in np.ndindex(*shape):
            best: tuple[int, ErrorEffect] | None = None
            for effect, code in codes.items():
                if preds[effect][idx] and (best is None or int(code[idx]) < best[0]):
                    best = (int(code[idx]), effect)
            if best is not None:
                payload = tree_util.tree_map(lambda x, i=idx: x[i], self._payload[best[1]])
                found[idx] = tree_util.tree_unflatten(self._metadata[best[0]], payload)
        return BatchedError(found) if found else None

    def _update(self, effect: ErrorEffect, pred: Any, code: Any, metadata: dict[int, Any], payload: Any) -> Error:
        return Error(
            {**self._pred, effect: pred}, {**self._code, effect: code},
            {**self._metadata, **metadata}, {**self._payload, effect: payload},
        )  # fmt: skip

    def _add_placeholder_effects(self, effects: set[ErrorEffect]) -> Error:
        """This value with entries (never failing) for ``effects`` it lacks: the
        branches of a cond, the iterations of a loop must agree on its structure."""
        pred, code, payload = dict(self._pred), dict(self._code), dict(self._payload)
        for effect in sorted(effects - set(pred)):
            pred[effect] = False
            payload[effect] = [jnp.ones(sd.shape, sd.dtype) for sd in effect.shape_dtypes]
            code[effect] = -1  # never read: its predicate stays False
        return Error(pred, code, self._metadata, payload)

    def _replace(self, **changes: Any) -> Error:
        return dataclasses.replace(self, **changes)

    def _reduce_any_error(self) -> Error:
        """One error out of a value batched along axis 0: per kind, the last
        failing element (JAX takes the last of a stable argsort of the predicates)."""
        out = init_error
        for effect, preds in self._pred.items():
            idx = jnp.argsort(preds)[-1]
            pred, code, payload = tree_util.tree_map(
                lambda x, i=idx: x[i], (preds, self._code[effect], self._payload[effect])
            )
            out = out._update(effect, pred, code, {}, payload)
        return out._replace(_metadata=self._metadata)

    def tree_flatten(self) -> tuple[tuple[Any, ...], Any]:
        return (self._pred, self._code, self._payload), self._metadata

    @classmethod
    def tree_unflatten(cls, metadata: Any, data: Any) -> Error:
        pred, code, payload = data
        return cls(pred, code, metadata, payload)


tree_util.register_pytree_node_class(Error)

init_error = Error({}, {}, {}, {})  # the value that holds no error
next_code = itertools.count(1).__next__  # codes are unique across the process


def assert_func(error: Error, pred: Any, new_error: JaxException) -> Error:
    """``error`` updated with ``new_error`` where ``pred`` holds."""
    code = next_code()
    effect = new_error.get_effect_type()
    payload, metadata = tree_util.tree_flatten(new_error)
    return update_error(error, pred, code, {code: metadata}, payload, effect)


def update_error(error: Error, pred: Any, code: Any, metadata: dict[int, Any], payload: Any, effect: ErrorEffect) -> Error:
    # An error already recorded for this kind wins: it happened first.
    seen = error._pred.get(effect, False)
    out_pred = seen | pred
    out_code = lax.select(seen, error._code.get(effect, -1), code)
    old = error._payload.get(effect)
    out_payload = payload if old is None else tree_util.tree_map(functools.partial(lax.select, seen), old, payload)
    return error._update(effect, out_pred, out_code, metadata, out_payload)


# ---------------------------------------------------------------------------
# check, debug_check, check_error


def _is_array(x: Any) -> bool:
    return isinstance(x, (Array, Tracer))


def is_scalar_pred(pred: Any) -> bool:
    return isinstance(pred, bool) or (_is_array(pred) and pred.shape == () and pred.dtype == np.dtype("bool"))


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any) -> None:
    """Add an error with ``msg`` (formatted with the run-time values) when ``pred`` is False.

    Effectful: eagerly it raises ``JaxRuntimeError``; staged (``jit``,
    ``scan``, ...) it must be discharged by ``checkify`` first.
    """
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """``check`` that only takes effect under ``checkify`` (elsewhere it does nothing)."""
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def _check(pred: Any, msg: str, debug: bool, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    if not is_scalar_pred(pred):
        prim_name = "debug_check" if debug else "check"
        raise TypeError(f"{prim_name} takes a scalar pred as argument, got {pred}")
    for arg in tree_util.tree_leaves((fmt_args, fmt_kwargs)):
        if not isinstance(arg, (Array, Tracer, np.ndarray)):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                f"{arg!r} of type {type(arg)}."
            )
    new_error = FailedCheckError(source_info.current(), msg, *fmt_args, **fmt_kwargs)
    error = assert_func(init_error, jnp.logical_not(pred), new_error)
    _check_error(error, debug=debug)


def _check_error(error: Error, *, debug: bool = False) -> None:
    if any(_shape(v) for v in error._pred.values()):
        error = error._reduce_any_error()
    leaves, tree = tree_util.tree_flatten(error)
    check_p.bind(*leaves, err_tree=tree, debug=debug)


def check_error(error: Error) -> None:
    """Raise if ``error`` holds a failure; like ``error.throw()``, but ``checkify`` can discharge it."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    _check_error(error, debug=False)


# ---------------------------------------------------------------------------
# The checkify interpreter

ErrorCheckRule = Callable[..., tuple[Error, Any]]
# primitive -> rule(error, enabled_errors, *operands, **params) -> (error, outputs)
error_checks: dict[Primitive, ErrorCheckRule] = {}


def _read(env: dict[Var, Any], atom: Any) -> Any:
    return literal_operand(atom) if isinstance(atom, Literal) else env[atom]


def checkify_jaxpr_flat(
    jaxpr: Jaxpr, consts: Sequence[Any], enabled_errors: frozenset[Any], err_tree: tree_util.PyTreeDef, *args: Any
) -> tuple[Error, list[Any]]:
    """Evaluate ``jaxpr`` on the current trace, threading an error value through it.

    ``args`` are the error value's leaves (of structure ``err_tree``), then the inputs.
    """
    n_err = err_tree.num_leaves
    error: Error = tree_util.tree_unflatten(err_tree, args[:n_err])
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args[n_err:]))
    for eqn in jaxpr.eqns:
        invals = [_read(env, a) for a in eqn.invars]
        rule = error_checks.get(eqn.primitive)
        with source_info.user_context(eqn.source_info):
            if rule is None:
                outs = eqn.primitive.bind(*invals, **eqn.params)
            else:
                error, outs = rule(error, enabled_errors, *invals, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, x in zip(eqn.outvars, outs):
            if not isinstance(v, DropVar):
                env[v] = x
    return error, [_read(env, a) for a in jaxpr.outvars]


def checkify_jaxpr(closed: ClosedJaxpr, enabled_errors: frozenset[Any], error: Error, *args: Any) -> tuple[Error, list[Any]]:
    leaves, tree = tree_util.tree_flatten(error)
    return checkify_jaxpr_flat(closed.jaxpr, closed.consts, enabled_errors, tree, *leaves, *args)


def _typeof(xs: Sequence[Any]) -> list[ShapedArray]:
    return [get_aval(x) for x in xs]


def jaxpr_to_checkify_jaxpr(
    closed: ClosedJaxpr, enabled_errors: frozenset[Any], err_tree: tree_util.PyTreeDef, in_avals: Sequence[ShapedArray]
) -> tuple[ClosedJaxpr, tree_util.PyTreeDef, set[ErrorEffect]]:
    """``closed`` checkified, as a jaxpr from (error leaves, inputs) to (error leaves, outputs);
    the structure of its results and the kinds of error it can report."""
    box: dict[str, Any] = {}

    def fun(*vals: Any) -> list[Any]:
        error, outs = checkify_jaxpr_flat(closed.jaxpr, closed.consts, enabled_errors, err_tree, *vals)
        leaves, box["tree"] = tree_util.tree_flatten((error, outs))
        box["effects"] = set(error._pred)
        return leaves

    checked, _ = trace_to_jaxpr(fun, in_avals, DebugInfo(fun, [], "checkify"))
    if any(isinstance(c, Tracer) for c in checked.consts):
        raise NotImplementedError("checkify: a jaxpr inside the function closes over a value being traced")
    return checked, box["tree"], box["effects"]


def _move_to_front(closed: ClosedJaxpr, to_move: Sequence[bool]) -> ClosedJaxpr:
    """The same jaxpr with the inputs marked in ``to_move`` first (in order)."""
    invars = list(closed.jaxpr.invars)
    moved = [v for v, m in zip(invars, to_move) if m] + [v for v, m in zip(invars, to_move) if not m]
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, moved, j.outvars, j.eqns), closed.consts)


def _with_outputs(closed: ClosedJaxpr, outvars: Sequence[Any]) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, list(outvars), j.eqns), closed.consts)


# --- automatic checks: NaNs, division by zero, out-of-bounds indices


def nan_error_check(prim: Primitive, error: Error, enabled_errors: frozenset[Any], *in_vals: Any, **params: Any) -> tuple[Error, Any]:
    out = prim.bind(*in_vals, **params)
    return check_nans(prim, error, enabled_errors, out), out


def check_nans(prim: Primitive, error: Error, enabled_errors: frozenset[Any], out: Any) -> Error:
    if NaNError not in enabled_errors:
        return error

    def isnan(x: Any) -> Any:
        return jnp.any(jnp.isnan(x))

    any_nans = jnp.any(jnp.array([isnan(x) for x in out])) if prim.multiple_results else isnan(out)
    return assert_func(error, any_nans, NaNError(source_info.current(), prim.name))


# The primitives that can produce a NaN (JAX's list, as far as minijax has them).
NAN_PRIMITIVES = (
    "acos", "acosh", "add", "asin", "asinh", "atan2", "atan", "atanh", "bessel_i0e", "bessel_i1e", "cbrt",
    "conv_general_dilated", "cos", "cosh", "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "digamma",
    "dot_general", "erf_inv", "erf", "erfc", "exp", "expm1", "fft", "igamma_grad_a", "igamma", "igammac",
    "integer_pow", "lgamma", "custom_linear_solve", "log1p", "log", "logistic", "mul", "pad", "pow", "psum",
    "reduce", "reduce_prod", "reduce_sum", "reduce_window", "reduce_window_sum", "regularized_incomplete_beta",
    "rem", "rng_uniform", "rsqrt", "sin", "sinh", "sqrt", "sub", "tan", "tanh",
)  # fmt: skip

for _name in NAN_PRIMITIVES:
    if _name in primitive_registry:
        _prim = primitive_registry[_name]
        error_checks[_prim] = functools.partial(nan_error_check, _prim)


def oob_payload(oob_mask: Any, indices: Any, dims_map: Sequence[int], operand_shape: Sequence[int]) -> Any:
    """[the first out-of-bounds index, its axis, that axis's size], for the message."""
    flat_idx = jnp.argmin(jnp.logical_not(oob_mask))
    multi_idx = jnp.unravel_index(flat_idx, indices.shape)
    oob_axis = jnp.array(dims_map)[multi_idx[-1]]
    oob_axis_size = jnp.array(operand_shape)[oob_axis]
    oob_index = jnp.ravel(indices)[flat_idx]
    return jnp.array([oob_index, oob_axis, oob_axis_size], dtype=np.int32)


def _dynamic_slice_check(error: Error, enabled_errors: frozenset[Any], operand: Any, *start_indices: Any, slice_sizes: Any) -> tuple[Error, Any]:
    out = _prim_named("dynamic_slice").bind(operand, *start_indices, slice_sizes=slice_sizes)
    if OOBError not in enabled_errors:
        return error, out
    starts = jnp.array(start_indices)
    operand_dims = np.array(_shape(operand), dtype=starts.dtype)
    sizes = np.array(slice_sizes, dtype=starts.dtype)
    oob_mask = (starts < 0) | (starts + sizes > operand_dims)
    shape = _shape(operand)
    payload = oob_payload(oob_mask, starts, range(len(shape)), shape)
    new = OOBError(source_info.current(), "dynamic_slice", shape, payload)
    return assert_func(error, jnp.any(oob_mask), new), out


def _dynamic_update_slice_check(error: Error, enabled_errors: frozenset[Any], operand: Any, update: Any, *start_indices: Any) -> tuple[Error, Any]:
    out = _prim_named("dynamic_update_slice").bind(operand, update, *start_indices)
    if OOBError not in enabled_errors:
        return error, out
    shape = _shape(operand)
    starts = jnp.array(start_indices)
    oob_mask = (starts < 0) | (starts + np.array(_shape(update)) > np.array(shape))
    payload = oob_payload(oob_mask, starts, range(len(shape)), shape)
    new = OOBError(source_info.current(), "dynamic_update_slice", shape, payload)
    return assert_func(error, jnp.any(oob_mask), new), out


def _gather_check(error: Error, enabled_errors: frozenset[Any], operand: Any, start_indices: Any, **params: Any) -> tuple[Error, Any]:
    out = _prim_named("gather").bind(operand, start_indices, **params)
    if OOBError not in enabled_errors:
        return error, out
    dnums = params["dimension_numbers"]
    shape = _shape(operand)
    index_map = np.array(dnums.start_index_map, dtype=np.int64)
    num_batch_dims = len(_shape(start_indices)) - 1
    upper_bound = np.array(shape)[index_map] - np.array(params["slice_sizes"])[index_map]
    upper_bound = jnp.expand_dims(upper_bound, axis=tuple(range(num_batch_dims)))
    oob_mask = (start_indices < 0) | (start_indices > upper_bound.astype(start_indices.dtype))
    payload = oob_payload(oob_mask, start_indices, [int(d) for d in dnums.start_index_map], shape)
    new = OOBError(source_info.current(), "gather", shape, payload)
    return assert_func(error, jnp.any(oob_mask), new), out


def _scatter_check(prim: Primitive, error: Error, enabled_errors: frozenset[Any], operand: Any, indices: Any, updates: Any, **params: Any) -> tuple[Error, Any]:
    out = prim.bind(operand, indices, updates, **params)
    if OOBError not in enabled_errors:
        return error, out
    dnums = params["dimension_numbers"]
    shape, update_shape, index_shape = _shape(operand), _shape(updates), _shape(indices)
    slice_sizes, pos = [], 0
    for i in range(len(shape)):
        if i in dnums.inserted_window_dims or i in dnums.operand_batching_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(update_shape[dnums.update_window_dims[pos]])
            pos += 1
    upper = np.array([shape[i] - slice_sizes[i] for i in dnums.scatter_dims_to_operand_dims], np.int64)
    upper = np.minimum(upper, np.iinfo(indices.dtype).max).astype(indices.dtype)
    upper_bound = lax.broadcast_in_dim(upper, index_shape, (len(index_shape) - 1,))
    oob_mask = jnp.logical_or(jnp.less(indices, 0), jnp.greater(indices, upper_bound))
    payload = oob_payload(oob_mask, indices, [int(d) for d in dnums.scatter_dims_to_operand_dims], shape)
    error = assert_func(error, jnp.any(oob_mask), OOBError(source_info.current(), prim.name, shape, payload))
    return check_nans(prim, error, enabled_errors, out), out


def _div_check(error: Error, enabled_errors: frozenset[Any], x: Any, y: Any) -> tuple[Error, Any]:
    if DivisionByZeroError in enabled_errors:
        any_zero = jnp.any(jnp.equal(y, 0))
        error = assert_func(error, any_zero, DivisionByZeroError(source_info.current()))
    return nan_error_check(_prim_named("div"), error, enabled_errors, x, y)


def _prim_named(name: str) -> Primitive:
    return primitive_registry[name]


error_checks[_prim_named("dynamic_slice")] = _dynamic_slice_check
error_checks[_prim_named("dynamic_update_slice")] = _dynamic_update_slice_check
error_checks[_prim_named("gather")] = _gather_check
error_checks[_prim_named("div")] = _div_check
for _name in ("scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max"):
    error_checks[_prim_named(_name)] = functools.partial(_scatter_check, _prim_named(_name))


# --- the check primitive: discharged into the error value


def _check_discharge(error: Error, enabled_errors: frozenset[Any], *args: Any, err_tree: tree_util.PyTreeDef, debug: bool) -> tuple[Error, list[Any]]:
    new_error: Error = tree_util.tree_unflatten(err_tree, args)
    # Kinds of error not enabled are dropped, as JAX 0.10.2 drops them (it
    # plans to raise them again outside; that would change its API).
    for effect in new_error._pred:
        if effect.error_type in enabled_errors:
            error = update_error(
                error, new_error._pred[effect], new_error._code[effect], {}, new_error._payload[effect], effect
            )
    return error._replace(_metadata={**new_error._metadata, **error._metadata}), []


error_checks[check_p] = _check_discharge


# --- primitives that hold jaxprs


def _jit_check(error: Error, enabled_errors: frozenset[Any], *vals: Any, jaxpr: ClosedJaxpr, **params: Any) -> tuple[Error, Any]:
    err_vals, err_tree = tree_util.tree_flatten(error)
    checked, out_tree, _ = jaxpr_to_checkify_jaxpr(jaxpr, enabled_errors, err_tree, _typeof([*err_vals, *vals]))
    outs = _prim_named("jit").bind(*err_vals, *vals, jaxpr=checked, **params)
    err, out = tree_util.tree_unflatten(out_tree, outs)
    return err, out


def _remat_check(error: Error, enabled_errors: frozenset[Any], *vals: Any, jaxpr: ClosedJaxpr, **params: Any) -> tuple[Error, Any]:
    err_vals, err_tree = tree_util.tree_flatten(error)
    checked, out_tree, _ = jaxpr_to_checkify_jaxpr(jaxpr, enabled_errors, err_tree, _typeof([*err_vals, *vals]))
    outs = _prim_named("remat2").bind(*err_vals, *vals, jaxpr=checked, **params)
    err, out = tree_util.tree_unflatten(out_tree, outs)
    return err, out


def _merged_error(error: Error, enabled_errors: frozenset[Any], jaxprs: Sequence[tuple[ClosedJaxpr, Sequence[ShapedArray]]]) -> Error:
    """``error`` with placeholders for every kind of error the jaxprs can add."""
    err_vals, err_tree = tree_util.tree_flatten(error)
    effects: set[ErrorEffect] = set()
    for closed, avals in jaxprs:
        effects |= jaxpr_to_checkify_jaxpr(closed, enabled_errors, err_tree, [*_typeof(err_vals), *avals])[2]
    return error._add_placeholder_effects(effects)


def _cond_check(error: Error, enabled_errors: frozenset[Any], index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]) -> tuple[Error, Any]:
    op_avals = _typeof(ops)
    error = _merged_error(error, enabled_errors, [(b, op_avals) for b in branches])
    err_vals, err_tree = tree_util.tree_flatten(error)
    in_avals = _typeof([*err_vals, *ops])
    checked = [jaxpr_to_checkify_jaxpr(b, enabled_errors, err_tree, in_avals) for b in branches]
    outs = _prim_named("cond").bind(index, *err_vals, *ops, branches=tuple(c[0] for c in checked))
    err0, out = tree_util.tree_unflatten(checked[0][1], outs)
    metadata = dict(err0._metadata)
    for _, tree, _ in checked[1:]:
        metadata.update(tree_util.tree_unflatten(tree, outs)[0]._metadata)
    return err0._replace(_metadata=metadata), out


def _scan_check(error: Error, enabled_errors: frozenset[Any], *in_flat: Any, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, length: int, **params: Any) -> tuple[Error, Any]:
    consts, carry, xs = in_flat[:num_consts], in_flat[num_consts : num_consts + num_carry], in_flat[num_consts + num_carry :]
    body_avals = [*_typeof([*consts, *carry]), *(a.update(shape=a.shape[1:]) for a in _typeof(xs))]
    error = _merged_error(error, enabled_errors, [(jaxpr, body_avals)])
    err_vals, err_tree = tree_util.tree_flatten(error)
    checked, out_tree, _ = jaxpr_to_checkify_jaxpr(jaxpr, enabled_errors, err_tree, [*_typeof(err_vals), *body_avals])
    # scan takes its constants first: (consts, error, carry, xs).
    n_err = len(err_vals)
    checked = _move_to_front(checked, [False] * n_err + [True] * len(consts) + [False] * (len(carry) + len(xs)))
    outs = _prim_named("scan").bind(
        *consts, *err_vals, *carry, *xs, jaxpr=checked, num_consts=len(consts), num_carry=len(carry) + n_err,
        length=length, **params,
    )  # fmt: skip
    err, out = tree_util.tree_unflatten(out_tree, outs)
    return err, out


def _while_check(
    error: Error, enabled_errors: frozenset[Any], *in_flat: Any, cond_nconsts: int, cond_jaxpr: ClosedJaxpr,
    body_nconsts: int, body_jaxpr: ClosedJaxpr,
) -> tuple[Error, Any]:  # fmt: skip
    if cond_jaxpr.out_avals[0].shape:
        raise ValueError(
            "Checkify does not support batched while-loops (checkify-of-vmap-of-while). \nHint: if possible, "
            "move the vmap to the outer level to get vmap-of-checkify-of-while."
        )
    c_consts = in_flat[:cond_nconsts]
    b_consts = in_flat[cond_nconsts : cond_nconsts + body_nconsts]
    carry = in_flat[cond_nconsts + body_nconsts :]
    # The first evaluation of the predicate happens before the loop.
    error, _ = checkify_jaxpr(cond_jaxpr, enabled_errors, error, *c_consts, *carry)

    # The body, followed by the next evaluation of the predicate, so that its errors are caught too.
    def body_then_cond(*args: Any) -> list[Any]:
        cc, rest = args[:cond_nconsts], args[cond_nconsts:]
        out = eval_closed_jaxpr(body_jaxpr, *rest)
        eval_closed_jaxpr(cond_jaxpr, *cc, *out)
        return out

    c_avals = cond_jaxpr.in_avals[:cond_nconsts]
    full_body, _ = trace_to_jaxpr(body_then_cond, [*c_avals, *body_jaxpr.in_avals], DebugInfo(body_then_cond, [], "checkify"))
    error = _merged_error(error, enabled_errors, [(full_body, [*c_avals, *body_jaxpr.in_avals])])
    err_vals, err_tree = tree_util.tree_flatten(error)
    n_err = len(err_vals)
    checked_body, body_out_tree, _ = jaxpr_to_checkify_jaxpr(
        full_body, enabled_errors, err_tree, [*_typeof(err_vals), *c_avals, *body_jaxpr.in_avals]
    )
    checked_body = _move_to_front(checked_body, [False] * n_err + [True] * (cond_nconsts + body_nconsts) + [False] * len(carry))
    checked_cond, _, _ = jaxpr_to_checkify_jaxpr(cond_jaxpr, enabled_errors, err_tree, _typeof([*err_vals, *c_consts, *carry]))
    checked_cond = _with_outputs(checked_cond, checked_cond.jaxpr.outvars[n_err:])
    checked_cond = _move_to_front(checked_cond, [False] * n_err + [True] * cond_nconsts + [False] * len(carry))
    outs = _prim_named("while").bind(
        *c_consts, *c_consts, *b_consts, *err_vals, *carry, cond_nconsts=cond_nconsts, cond_jaxpr=checked_cond,
        body_nconsts=cond_nconsts + body_nconsts, body_jaxpr=checked_body,
    )  # fmt: skip
    err, out = tree_util.tree_unflatten(body_out_tree, outs)
    return err, out


def _custom_call_parts(
    error: Error, enabled_errors: frozenset[Any], vals: Sequence[Any], call_jaxpr: ClosedJaxpr, num_consts: int
) -> tuple[list[Any], ClosedJaxpr, tree_util.PyTreeDef]:
    """The merged error's leaves, the checkified function (taking (consts, error, args)) and its result structure."""
    consts, args = vals[:num_consts], vals[num_consts:]
    error = _merged_error(error, enabled_errors, [(call_jaxpr, _typeof(vals))])
    err_vals, err_tree = tree_util.tree_flatten(error)
    checked, out_tree, _ = jaxpr_to_checkify_jaxpr(call_jaxpr, enabled_errors, err_tree, _typeof([*err_vals, *vals]))
    checked = _move_to_front(checked, [False] * len(err_vals) + [True] * len(consts) + [False] * len(args))
    return err_vals, checked, out_tree


def _as_arrays(xs: Sequence[Any]) -> list[Any]:
    # A rule replayed from the jaxpr gets the primals the transformation
    # holds, which may be Python scalars; JAX's rules see arrays (tracers of
    # the staged rule), and checkify.check takes nothing else as a format argument.
    return [jnp.asarray(x) if isinstance(x, (bool, int, float)) else x for x in xs]


def _custom_jvp_check(error: Error, enabled_errors: frozenset[Any], *vals: Any, call_jaxpr: ClosedJaxpr, jvp: NamedCallable, num_consts: int, **params: Any) -> tuple[Error, Any]:
    # The function is checked; its JVP rule is not (checkify of the jvp checks
    # that): under differentiation the error value passes through unchanged.
    err_vals, checked, out_tree = _custom_call_parts(error, enabled_errors, vals, call_jaxpr, num_consts)
    n_err = len(err_vals)

    def lifted(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        outs, out_tangents = jvp(_as_arrays(primals[n_err:]), list(tangents[n_err:]))
        err_tangents = [ad.Zero(ad.tangent_aval(get_aval(e))) for e in primals[:n_err]]
        return [*primals[:n_err], *outs], [*err_tangents, *out_tangents]

    outs = _prim_named("custom_jvp_call").bind(
        *vals[:num_consts], *err_vals, *vals[num_consts:], call_jaxpr=checked, jvp=NamedCallable(lifted, jvp.name),
        num_consts=num_consts, **params,
    )  # fmt: skip
    err, out = tree_util.tree_unflatten(out_tree, outs)
    return err, out


def _custom_vjp_check(error: Error, enabled_errors: frozenset[Any], *vals: Any, call_jaxpr: ClosedJaxpr, fwd: NamedCallable, bwd: NamedCallable, num_consts: int, **params: Any) -> tuple[Error, Any]:
    # As for custom_jvp: fwd and bwd are not checked here; the error passes through.
    err_vals, checked, out_tree = _custom_call_parts(error, enabled_errors, vals, call_jaxpr, num_consts)
    n_err = len(err_vals)

    def lifted_fwd(*primals: Any) -> tuple[list[Any], Any]:
        outs, res = fwd(*_as_arrays(primals[n_err:]))
        return [*primals[:n_err], *outs], res

    def lifted_bwd(res: Any, cts: Sequence[Any]) -> list[Any]:
        return [None] * n_err + list(bwd(res, list(cts[n_err:])))

    outs = _prim_named("custom_vjp_call").bind(
        *vals[:num_consts], *err_vals, *vals[num_consts:], call_jaxpr=checked, fwd=NamedCallable(lifted_fwd, fwd.name),
        bwd=NamedCallable(lifted_bwd, bwd.name), num_consts=num_consts, **params,
    )  # fmt: skip
    err, out = tree_util.tree_unflatten(out_tree, outs)
    return err, out


error_checks[_prim_named("jit")] = _jit_check
error_checks[_prim_named("remat2")] = _remat_check
error_checks[_prim_named("cond")] = _cond_check
error_checks[_prim_named("scan")] = _scan_check
error_checks[_prim_named("while")] = _while_check
error_checks[_prim_named("custom_jvp_call")] = _custom_jvp_check
error_checks[_prim_named("custom_vjp_call")] = _custom_vjp_check


# ---------------------------------------------------------------------------
# The public sets of checks, and checkify

user_checks: frozenset[ErrorCategory] = frozenset({FailedCheckError})
nan_checks: frozenset[ErrorCategory] = frozenset({NaNError})
index_checks: frozenset[ErrorCategory] = frozenset({OOBError})
div_checks: frozenset[ErrorCategory] = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


def _as_output(x: Any, aval: ShapedArray) -> Any:
    # An output the jaxpr holds as a literal or a host constant is returned as
    # an array of its type (JAX returns a typed scalar), not as a Python float.
    if isinstance(x, (bool, int, float, np.generic, np.ndarray)):
        return device_put_value(np.asarray(x, aval.dtype), aval.weak_type)
    return x


def checkify(f: Callable[..., Out], errors: frozenset[ErrorCategory] = user_checks) -> Callable[..., tuple[Error, Out]]:
    """``f`` with its ``check``s functionalized, and the checks in ``errors`` added.

    The new function returns ``(error, out)``: ``error.get()`` is the message
    of the first failed check (None if none failed), ``error.throw()`` raises
    it. By default only ``check``s are discharged (``user_checks``); add
    ``nan_checks``, ``div_checks``, ``index_checks`` (or ``float_checks``,
    ``automatic_checks``, ``all_checks``) for automatic checks.
    """

    @functools.wraps(f)
    def checked_fun(*args: Any, **kwargs: Any) -> tuple[Error, Out]:
        # The arguments are closed over, not abstracted: Python values stay concrete.
        box: dict[str, Any] = {}

        def flat() -> list[Any]:
            leaves, box["tree"] = tree_util.tree_flatten(f(*args, **kwargs))
            return leaves

        closed, _ = trace_to_jaxpr(flat, [], DebugInfo(f, [], "checkify"))
        error, out_flat = checkify_jaxpr(closed, errors, init_error)
        out_flat = [_as_output(x, v.aval) for x, v in zip(out_flat, closed.jaxpr.outvars)]
        out: Out = tree_util.tree_unflatten(box["tree"], out_flat)
        return error, out

    return checked_fun

