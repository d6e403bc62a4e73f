"""checkify's rules: what the interpreter of ``minijax/_src/checkify.py`` does at each primitive.

* the automatic checks: the outputs of the primitives that can produce a NaN
  (``nan_checks``), divisors (``div_checks``) and the indices of ``gather``,
  ``scatter``, ``dynamic_slice`` and ``dynamic_update_slice``
  (``index_checks``), each adding its error to the error value;
* ``check``: discharged into the error value (when its kind is enabled);
* the primitives that hold jaxprs (``jit``, ``remat2``, ``cond``, ``scan``,
  ``while``, ``custom_jvp_call``, ``custom_vjp_call``): their jaxprs are
  checkified, taking and returning the error value's leaves as extra
  operands and results. Where the structure of the error must be the same
  on every path (the branches of a cond, a loop's carry), it first gets
  placeholders for every kind of error a path can add.

Importing this module fills ``error_checks``; ``minijax.experimental.checkify`` does.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import lax, numpy as jnp, source_info, tree_util
from minijax._src.checkify import (
    DivisionByZeroError,
    Error,
    ErrorEffect,
    NaNError,
    OOBError,
    _move_to_front,
    _shape,
    _typeof,
    _with_outputs,
    assert_func,
    checkify_jaxpr,
    error_checks,
    jaxpr_to_checkify_jaxpr,
    update_error,
)
from minijax.core import Primitive, ShapedArray, get_aval, primitive_registry
from minijax.interpreters import ad
from minijax.interpreters.tracing import DebugInfo, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, eval_closed_jaxpr
from minijax.primitives.calls import NamedCallable
from minijax.primitives.checkify import check_p

__all__ = ["NAN_PRIMITIVES", "check_nans", "nan_error_check", "oob_payload"]


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
