"""``jax.extend.core``: minijax's IR under the names JAX gives it.

Every class here is minijax's own (``Jaxpr`` is ``minijax.jaxpr.Jaxpr``,
``Primitive`` is ``minijax.core.Primitive``): a custom interpreter walks the
very jaxprs ``make_jaxpr`` returns, and a primitive defined here with
``def_impl``/``def_abstract_eval`` is bound like minijax's own. What minijax
has no counterpart for (effects beyond "none", tokens, call primitives of
one's own) exists and says so.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minijax import core as _core, jaxpr as _jaxpr
from minijax.array import Array
from minijax.core import Primitive, ShapedArray, Trace, set_current_trace
from minijax.errors import InconclusiveDimensionOperation
from minijax.extend._unsupported import unsupported
from minijax.extend.core import primitives
from minijax.interpreters.ad import tangent_dtype as primal_dtype_to_tangent_dtype
from minijax.interpreters.batching import BatchTrace
from minijax.interpreters.tracing import DebugInfo, DynamicJaxprTrace
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from minijax.jaxpr_check import JaxprTypeError, check_jaxpr

__all__ = [
    "AbstractToken", "CallPrimitive", "ClosedJaxpr", "DebugInfo", "DropVar", "Effect", "Effects",
    "InconclusiveDimensionOperation", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal", "Primitive", "Token",
    "TraceTag", "Var", "array_types", "call_impl", "check_jaxpr", "concrete_or_error", "find_top_trace", "gensym",
    "get_opaque_trace_state", "jaxpr_as_fun", "jaxprs_in_params", "mapped_aval", "new_jaxpr_eqn", "no_effects",
    "nonempty_axis_env_DO_NOT_USE", "primal_dtype_to_tangent_dtype", "primitives", "set_current_trace",
    "subjaxprs", "take_current_trace", "unmapped_aval", "unsafe_am_i_under_a_jit_DO_NOT_USE",
    "unsafe_am_i_under_a_vmap_DO_NOT_USE", "unsafe_get_axis_names_DO_NOT_USE", "valid_jaxtype",
]  # fmt: skip

_NO_TOKENS = "minijax has no tokens (ordered side effects are sequenced without them)"
AbstractToken = unsupported("extend.core", "AbstractToken", _NO_TOKENS)
Token = unsupported("extend.core", "Token", _NO_TOKENS)
CallPrimitive = unsupported(
    "extend.core", "CallPrimitive", "minijax's call primitives (jit, checkpoint) are built in; use jax.jit"
)
call_impl = unsupported("extend.core", "call_impl", "minijax's call primitives (jit, checkpoint) are built in")
TraceTag = unsupported("extend.core", "TraceTag", "minijax's traces are told apart by identity, not by tags")


class Effect:
    """The base of side effects a jaxpr may have. minijax's equations carry none: ``no_effects``."""


Effects = set[Effect]
no_effects: frozenset[Effect] = frozenset()

# The types whose values are arrays to minijax (what ``valid_jaxtype`` accepts, besides Python scalars).
array_types: set[type] = {np.ndarray, np.generic, Array}


def valid_jaxtype(x: Any) -> bool:
    """Whether ``x`` is a value minijax computes on (an array, a scalar, a tracer)."""
    try:
        _core.get_aval(x)
    except TypeError:
        return False
    return True


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr, *args: Any) -> Callable[..., list[Any]]:
    """The closed jaxpr as a function of its inputs (returning the list of outputs), as JAX's curried one is:
    ``jaxpr_as_fun(cj)(*xs)``; arguments given here come first."""
    return functools.partial(_jaxpr.eval_closed_jaxpr, closed_jaxpr, *args)


def gensym(suffix: str = "") -> Callable[[ShapedArray], Var]:
    """A maker of fresh variables: ``gensym()(aval)``."""
    del suffix  # (JAX's old signature named variables by a suffix; variables are printed by position)
    return Var


def new_jaxpr_eqn(
    invars: Sequence[Any], outvars: Sequence[Var], primitive: Primitive, params: dict[str, Any],
    effects: Any = no_effects, source_info: Any = None, ctx: Any = None,
) -> JaxprEqn:  # fmt: skip
    """An equation ``outvars = primitive[params] invars``; effects, source info and context are JAX's
    annotations, which minijax's equations do not carry (only ``no_effects`` is accepted)."""
    del source_info, ctx
    if effects:
        raise NotImplementedError(f"new_jaxpr_eqn: minijax's equations carry no effects, got {effects}")
    return JaxprEqn(list(invars), list(outvars), primitive, dict(params))


def jaxprs_in_params(params: dict[str, Any]) -> Iterator[Jaxpr]:
    """The jaxprs an equation's params hold (a higher-order primitive's body, branches...)."""
    yield from _jaxpr.subjaxprs(params)


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The jaxprs held by the params of ``jaxpr``'s equations (one level down)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def concrete_or_error(force: Any, val: Any, context: str = "") -> Any:
    """``force(val)`` when ``val`` has a known value; a ConcretizationTypeError naming ``context`` for a tracer."""
    value = _core.concrete_or_error(val, context)
    return value if force is None else force(value)


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """``aval`` without its axis ``axis`` (of length ``size``): one element of a mapped axis."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short(short_dtypes=False)} is not of size {size}")
    return ShapedArray(aval.shape[:axis] + aval.shape[axis + 1 :], aval.dtype, aval.weak_type)


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray, *_: Any, **__: Any) -> ShapedArray:
    """``aval`` with an axis of length ``size`` inserted at ``axis``."""
    if axis is None:
        return aval
    return ShapedArray(aval.shape[:axis] + (size,) + aval.shape[axis:], aval.dtype, aval.weak_type)


def find_top_trace(xs: Sequence[Any]) -> Trace:
    """The trace that must process an operation on ``xs``: the current one."""
    del xs  # minijax's current trace is the innermost active one: operands cannot name a higher one
    return _core.current_trace()


@contextlib.contextmanager
def take_current_trace() -> Iterator[Trace]:
    """The current trace, with the eval trace current meanwhile (what a trace's own rules run under)."""
    trace = _core.current_trace()
    with set_current_trace(_core.eval_trace):
        yield trace


def get_opaque_trace_state(convention: Any = None) -> Any:
    """A token identifying the current trace (its identity is all a caller may use)."""
    del convention
    return _core.current_trace()


def nonempty_axis_env_DO_NOT_USE() -> bool:  # noqa: N802  (JAX's name)
    """Whether a named axis is bound (minijax's named axes are pmap's and vmap's)."""
    return bool(unsafe_get_axis_names_DO_NOT_USE())


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:  # noqa: N802  (JAX's name)
    return isinstance(_core.current_trace(), DynamicJaxprTrace)


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:  # noqa: N802  (JAX's name)
    return isinstance(_core.current_trace(), BatchTrace)


def unsafe_get_axis_names_DO_NOT_USE() -> list[Any]:  # noqa: N802  (JAX's name)
    trace = _core.current_trace()
    name = getattr(trace, "axis_name", None)
    return [] if name is None else [name]
