"""``jax.core``: the names JAX 0.10 keeps in its public ``jax.core``, as minijax's own.

``Tracer``, ``ShapedArray`` and ``Trace`` are minijax's classes (libraries test
``isinstance(x, jax.core.Tracer)``); the names JAX 0.10 still serves there
with a deprecation pointing at ``jax.extend.core`` are ``jax.extend.core``'s.
"""

from __future__ import annotations

from typing import Any

from minijax import ensure_compile_time_eval as ensure_compile_time_eval
from minijax.compat._served.standin import stand_in_function
from minijax.core import ShapedArray as ShapedArray, Trace as Trace, Tracer as Tracer, get_aval as get_aval
from minijax.errors import InconclusiveDimensionOperation as InconclusiveDimensionOperation
from minijax.extend.core import (
    CallPrimitive as CallPrimitive,
    DebugInfo as DebugInfo,
    DropVar as DropVar,
    Effect as Effect,
    Effects as Effects,
    JaxprTypeError as JaxprTypeError,
    Literal as Literal,
    Var as Var,
    check_jaxpr as check_jaxpr,
    concrete_or_error as concrete_or_error,
    find_top_trace as find_top_trace,
    gensym as gensym,
    get_opaque_trace_state as get_opaque_trace_state,
    jaxpr_as_fun as jaxpr_as_fun,
    jaxprs_in_params as jaxprs_in_params,
    mapped_aval as mapped_aval,
    new_jaxpr_eqn as new_jaxpr_eqn,
    no_effects as no_effects,
    nonempty_axis_env_DO_NOT_USE as nonempty_axis_env_DO_NOT_USE,
    primal_dtype_to_tangent_dtype as primal_dtype_to_tangent_dtype,
    subjaxprs as subjaxprs,
    unmapped_aval as unmapped_aval,
    unsafe_am_i_under_a_jit_DO_NOT_USE as unsafe_am_i_under_a_jit_DO_NOT_USE,
    unsafe_am_i_under_a_vmap_DO_NOT_USE as unsafe_am_i_under_a_vmap_DO_NOT_USE,
    unsafe_get_axis_names_DO_NOT_USE as unsafe_get_axis_names_DO_NOT_USE,
    valid_jaxtype as valid_jaxtype,
)
from minijax.jaxpr import Atom as Atom, eval_jaxpr as eval_jaxpr

# Every abstract value minijax has is a ShapedArray (there are no tokens or references).
AbstractValue = ShapedArray
# What a jaxpr evaluates on: arrays and Python scalars.
Value = Any
ParamDict = dict[str, Any]


def eval_context() -> Any:
    """JAX's "evaluate eagerly here" context: minijax's ``ensure_compile_time_eval``."""
    return ensure_compile_time_eval()


def max_dim(d1: int, d2: int) -> int:
    """The larger of two dimensions (minijax's shapes are concrete integers)."""
    return max(int(d1), int(d2))


def min_dim(d1: int, d2: int) -> int:
    """The smaller of two dimensions (minijax's shapes are concrete integers)."""
    return min(int(d1), int(d2))


def raise_to_shaped(aval: ShapedArray, weak_type: bool | None = None) -> ShapedArray:
    """Removed from JAX (0.4.36); minijax's abstract values are already shaped."""
    del weak_type
    return aval


jaxpr_as_fn = jaxpr_as_fun  # JAX's older spelling
abstract_token = stand_in_function("jax.core.abstract_token", "minijax has no tokens")
