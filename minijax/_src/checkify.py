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
  threaded through as extra operands and results. The rules for each
  primitive are in ``minijax/_src/checkify_rules.py``.

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
from minijax.core import Primitive, ShapedArray, Tracer, get_aval
from minijax.interpreters.tracing import DebugInfo, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, Var, literal_operand
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

    def __repr__(self) -> str:  # JAX's is a dataclass's
        return f"BatchedError(error_mapping={self.error_mapping!r})"


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

