"""``jnp`` products: dot, matmul, vdot, inner, outer, tensordot.

Each lowers to one ``dot_general`` (plus the reshapes and transposes NumPy's
conventions need), accumulating in the promoted dtype as JAX does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.mesh import NamedSharding, PartitionSpec
from minijax.numpy import ufuncs, util
from minijax.numpy.shape_ops import Shape, _is_identity, _shape_of, ravel
from minijax.numpy.util import (
    canonicalize_axis,
    check_arraylike,
    compiled_when_eager,
    convert_element_type,
    promote_dtypes,
)
from minijax.sharding_rules import out_sharding_param, place_result

__all__ = ["dot", "inner", "matmul", "outer", "tensordot", "vdot"]

ArrayLike = Any


def _product_dtype(fun_name: str, a: ArrayLike, b: ArrayLike, preferred_element_type: Any) -> tuple[Any, bool]:
    """The dtype a product is accumulated and returned in, and whether the result is weak."""
    if preferred_element_type is None:
        out: tuple[Any, bool] = dtypes.result_type(a, b, return_weak_type_flag=True)
        return out
    return dtypes.check_user_dtype_supported(preferred_element_type, fun_name), False


def _dot_general(fun_name: str, a: ArrayLike, b: ArrayLike, contract: tuple[Sequence[int], Sequence[int]],
                 batch: tuple[Sequence[int], Sequence[int]], precision: Any, preferred_element_type: Any,
                 out_sharding: Any = None) -> Any:
    """``lax.dot_general`` on unpromoted operands, accumulating in the promoted dtype (as JAX does)."""
    out_dtype, weak = _product_dtype(fun_name, a, b, preferred_element_type)
    dims = ((tuple(contract[0]), tuple(contract[1])), (tuple(batch[0]), tuple(batch[1])))
    out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=out_dtype, out_sharding=out_sharding)
    return convert_element_type(out, out_dtype, weak)


@compiled_when_eager
def dot(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Any:
    """``jnp.dot``: sum over the last axis of ``a`` and the second-to-last of ``b`` (scalars multiply)."""
    check_arraylike("dot", a, b)
    na, nb = len(_shape_of(a)), len(_shape_of(b))
    if na == 0 or nb == 0:
        contract: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    else:
        contract = ((na - 1,), (0,) if nb == 1 else (nb - 2,))
    return _dot_general("dot", a, b, contract, ((), ()), precision, preferred_element_type, out_sharding)


@compiled_when_eager
def matmul(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None,
           out_sharding: Any = None) -> Any:
    """``jnp.matmul`` (``a @ b``): matrix products, broadcasting the leading (batch) axes.

    A 1-D operand acts as a vector (its axis is contracted and does not appear
    in the result). Batch axes that meet a missing or length-1 axis on the
    other side are not batch dimensions of ``dot_general`` but free ones; the
    result is transposed back into NumPy's order afterwards.
    """
    check_arraylike("matmul", a, b)
    sa, sb = _shape_of(a), _shape_of(b)
    for i, s in enumerate((sa, sb)):
        if len(s) < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has ndim {len(s)}")
    out_dtype, weak = _product_dtype("matmul", a, b, preferred_element_type)
    a_mat, b_mat = len(sa) > 1, len(sb) > 1
    nbatch = max(len(sa) - 2 if a_mat else 0, len(sb) - 2 if b_mat else 0)
    a_batch = (None,) * (nbatch - (len(sa) - 2 if a_mat else 0)) + (sa[:-2] if a_mat else ())
    b_batch = (None,) * (nbatch - (len(sb) - 2 if b_mat else 0)) + (sb[:-2] if b_mat else ())

    a_squeeze: list[int] = []  # axes of a (and of b) dropped before the product
    b_squeeze: list[int] = []
    both_unit: list[int] = []  # batch positions of length 1 on both sides: re-inserted after
    a_bdims: list[int] = []  # dot_general's batch axes, numbered in the squeezed operands
    b_bdims: list[int] = []
    out_batch: list[int] = []  # result position of each dot_general output axis, by kind
    out_a: list[int] = []
    out_b: list[int] = []
    a_kept = b_kept = 0  # axes of each operand kept so far = their index after squeezing
    for i, (da, db) in enumerate(zip(a_batch, b_batch)):
        a_axis = i - a_batch.count(None)  # this batch position's axis in a (when a has it)
        b_axis = i - b_batch.count(None)
        if da is None:
            out_b.append(i)
            b_kept += 1
        elif db is None:
            out_a.append(i)
            a_kept += 1
        elif da == 1 and db == 1:
            a_squeeze.append(a_axis)
            b_squeeze.append(b_axis)
            both_unit.append(i)
        elif da == 1:
            a_squeeze.append(a_axis)
            out_b.append(i)
            b_kept += 1
        elif db == 1:
            b_squeeze.append(b_axis)
            out_a.append(i)
            a_kept += 1
        elif da == db:
            a_bdims.append(a_kept)
            b_bdims.append(b_kept)
            out_batch.append(i)
            a_kept += 1
            b_kept += 1
        else:
            raise ValueError(
                f"Incompatible types for matmul arguments: {core.get_aval(a).str_short(False)} and "
                f"{core.get_aval(b).str_short(False)}"
            )
    if a_mat:
        out_a.append(nbatch)
    if b_mat:
        out_b.append(nbatch + a_mat)
    a_sq = lax.squeeze(a, tuple(a_squeeze)) if a_squeeze else a
    b_sq = lax.squeeze(b, tuple(b_squeeze)) if b_squeeze else b
    na, nb = len(sa) - len(a_squeeze), len(sb) - len(b_squeeze)
    dims = (((na - 1,), (nb - 1 - b_mat,)), (tuple(a_bdims), tuple(b_bdims)))
    perm = tuple(int(p) for p in np.argsort(out_batch + out_a + out_b))
    sharding = out_sharding_param(out_sharding, "matmul")
    if sharding is not None:  # the result's spec in the product's order (transposed, unit axes added after)
        spec = tuple(sharding.spec) + (None,) * (nbatch + a_mat + b_mat + len(both_unit) - len(sharding.spec))
        kept = [e for i, e in enumerate(spec) if i not in both_unit]
        product: list[Any] = [None] * len(perm)
        for j, k in enumerate(perm):
            product[k] = kept[j]
        sharding = NamedSharding(sharding.mesh, PartitionSpec(*product))
    out = lax.dot_general(a_sq, b_sq, dims, precision=precision, preferred_element_type=out_dtype, out_sharding=sharding)
    if not _is_identity(perm):
        out = lax.transpose(out, perm)
    if both_unit:
        out = lax.expand_dims(out, tuple(both_unit))
    return place_result(convert_element_type(out, out_dtype, weak), out_sharding, "matmul")


@compiled_when_eager
def vdot(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jnp.vdot``: the dot product of the flattened arrays."""
    check_arraylike("vdot", a, b)
    if dtypes.issubdtype(dtypes.dtype(a), np.complexfloating):  # the first operand conjugated
        a = lax.conj(a)
    return dot(ravel(a), ravel(b), precision=precision, preferred_element_type=preferred_element_type)


@compiled_when_eager
def inner(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jnp.inner``: sum over the last axes of both arrays (scalars multiply)."""
    check_arraylike("inner", a, b)
    na, nb = len(_shape_of(a)), len(_shape_of(b))
    if na == 0 or nb == 0:
        if preferred_element_type is not None:
            dt = dtypes.check_user_dtype_supported(preferred_element_type, "inner")
            a, b = convert_element_type(a, dt), convert_element_type(b, dt)
        return ufuncs.multiply(a, b)
    return _dot_general("inner", a, b, ((na - 1,), (nb - 1,)), ((), ()), precision, preferred_element_type)


@compiled_when_eager
def outer(a: ArrayLike, b: ArrayLike, out: None = None) -> Any:
    """``jnp.outer``: every element of ``a`` times every element of ``b``, as a matrix."""
    util.check_no_out("outer", out)
    check_arraylike("outer", a, b)
    a, b = promote_dtypes(a, b)
    a, b = ravel(a), ravel(b)
    (m,), (n,) = _shape_of(a), _shape_of(b)
    return ufuncs.multiply(lax.broadcast_in_dim(a, (m, 1), (0,)), lax.broadcast_in_dim(b, (1, n), (1,)))


def _tensordot_axes(axes: Any, na: int, nb: int, sa: Shape, sb: Shape) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n > min(na, nb) or n < 0:
            raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks ({sa} and {sb})")
        return tuple(range(na - n, na)), tuple(range(n))
    if not (isinstance(axes, (tuple, list)) and len(axes) == 2):
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples of ints.")
    ax_a, ax_b = axes
    if isinstance(ax_a, (int, np.integer)) and isinstance(ax_b, (int, np.integer)):
        ax_a, ax_b = (ax_a,), (ax_b,)
    elif not (isinstance(ax_a, (tuple, list)) and isinstance(ax_b, (tuple, list))):
        raise TypeError(f"tensordot requires both axes lists to be either ints, tuples or lists, got {ax_a} and {ax_b}")
    if len(ax_a) != len(ax_b):
        raise TypeError(f"tensordot requires axes lists to have equal length, got {tuple(ax_a)} and {tuple(ax_b)}.")
    return tuple(canonicalize_axis(i, na) for i in ax_a), tuple(canonicalize_axis(i, nb) for i in ax_b)


def tensordot(a: ArrayLike, b: ArrayLike, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """``jnp.tensordot``: sum products over the given axes of ``a`` and ``b`` (the last/first ``axes``)."""
    check_arraylike("tensordot", a, b)
    sa, sb = _shape_of(a), _shape_of(b)
    contract = _tensordot_axes(axes, len(sa), len(sb), sa, sb)
    return _dot_general("tensordot", a, b, contract, ((), ()), precision, preferred_element_type, out_sharding)
