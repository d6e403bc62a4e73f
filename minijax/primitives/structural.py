"""Structural primitives: they move, copy or select elements without computing on them.

broadcast_in_dim, reshape, transpose, squeeze, rev, concatenate, iota,
split, tile and stack; and reduce_sum, which lives with broadcast_in_dim
because each is the other's transpose. ``spec/primitives/structural.md`` is
the written specification; each check below cites its constraint label
(``# squeeze C3``). Messages follow JAX 0.10.2's wording where JAX has a clear
one, and name the operation, the shapes and the offending param otherwise.
The slicing primitives (slice, pad, dynamic_slice, dynamic_update_slice) are
in ``minijax/primitives/slicing.py``.

This is the lowest primitive family: its rules use no other family, and
every other family builds on the bind helpers below (``broadcast_in_dim``,
``reshape``, ``expand_dims``, ``reduce_sum``, ...), which stage exactly the
equations JAX's lax functions stage -- none where the operation would be the
identity. The ``minijax.lax`` functions check the user's arguments and call them.

Weak types: every structural primitive keeps its operand's weak type, except
where several arrays meet (concatenate, stack): the result is weak only when
all of them are, as in JAX.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes
from minijax.array import Array, device_put_value
from minijax.core import Primitive, ShapedArray, Tracer, get_aval, shape_size
from minijax.interpreters import ad, batching
from minijax.jaxpr import param_filters
from minijax.jaxpr_parse import param_completers
from minijax.primitives.common import (
    check_no_sharding,
    index_param,
    index_tuple_param,
    nonnegative,
    reduction_rule,
    standard_primitive,
)
from minijax.shape_poly import DimExpr

Shape = tuple[int, ...]
BatchDim = batching.BatchDim


def _is_permutation(perm: Shape, ndim: int) -> bool:
    return sorted(perm) == list(range(ndim))


# ---------------------------------------------------------------------------
# broadcast_in_dim


def _broadcast_in_dim_rule(x: ShapedArray, *, shape: Any, broadcast_dimensions: Any, sharding: Any) -> ShapedArray:
    name = "broadcast_in_dim"
    check_no_sharding(name, sharding)
    shape = index_tuple_param(name, "shape", shape)
    dims = index_tuple_param(name, "broadcast_dimensions", broadcast_dimensions)
    nonnegative(name, "shape", shape)  # broadcast_in_dim C1
    if len(dims) != x.ndim:  # broadcast_in_dim C2
        raise TypeError(
            f"{name} broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {dims} for operand ndim {x.ndim}."
        )
    nonnegative(name, "broadcast_dimensions", dims)  # broadcast_in_dim C3
    if any(d >= len(shape) for d in dims):  # broadcast_in_dim C3
        raise TypeError(
            f"{name} broadcast_dimensions must be a subset of output dimensions, got {dims} for "
            f"operand ndim {x.ndim} and shape {shape}."
        )
    if len(set(dims)) != len(dims):  # broadcast_in_dim C4
        raise TypeError(f"{name} broadcast_dimensions must not contain duplicates, got broadcast_dimensions {dims}")
    if any(size not in (1, shape[d]) for size, d in zip(x.shape, dims)):  # broadcast_in_dim C5
        raise TypeError(
            f"{name} operand dimension sizes must either be 1, or be equal to their corresponding "
            f"dimensions in the target broadcast shape; got operand of shape {x.shape}, target "
            f"broadcast shape {shape}, broadcast_dimensions {dims}"
        )
    return ShapedArray(shape, x.dtype, x.weak_type)


broadcast_in_dim_p = standard_primitive("broadcast_in_dim", _broadcast_in_dim_rule)


def _broadcast_in_dim_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    # JAX reads the shape off the result type, and omits empty dimensions.
    shown: list[tuple[str, Any]] = []
    if params["broadcast_dimensions"]:
        shown.append(("broadcast_dimensions", params["broadcast_dimensions"]))
    return shown  # (the sharding: the result's type says it)


def _complete_broadcast_in_dim(
    params: dict[str, Any], in_avals: list[ShapedArray], out_avals: list[ShapedArray]
) -> dict[str, Any]:
    # What the printer hid: the shape (the result's) and the empty or None defaults.
    return {
        "shape": out_avals[0].shape,
        "broadcast_dimensions": tuple(params.get("broadcast_dimensions", ())),
        "sharding": params.get("sharding"),
    }


param_filters["broadcast_in_dim"] = _broadcast_in_dim_params
param_completers["broadcast_in_dim"] = _complete_broadcast_in_dim


# ---------------------------------------------------------------------------
# reshape, transpose, squeeze, rev


def _reshape_rule(x: ShapedArray, *, new_sizes: Any, dimensions: Any, sharding: Any) -> ShapedArray:
    check_no_sharding("reshape", sharding)
    new_sizes = index_tuple_param("reshape", "new_sizes", new_sizes)
    if any(d < 0 for d in new_sizes):  # reshape C1
        raise TypeError(f"reshape new_sizes must all be nonnegative, got {new_sizes}.")
    size = shape_size(new_sizes)
    if size != x.size:  # reshape C2
        raise ValueError(
            f"reshape cannot change the number of elements: operand shape {x.shape} has {x.size}, "
            f"new_sizes {new_sizes} has {size}."
        )
    if dimensions is not None:
        dims = index_tuple_param("reshape", "dimensions", dimensions)
        if not _is_permutation(dims, x.ndim):  # reshape C3
            raise TypeError(
                f"reshape dimensions must be a permutation of operand dimensions, got dimensions {dims} "
                f"for shape {x.shape}."
            )
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = standard_primitive("reshape", _reshape_rule)


def _transpose_rule(x: ShapedArray, *, permutation: Any) -> ShapedArray:
    perm = index_tuple_param("transpose", "permutation", permutation)
    if not _is_permutation(perm, x.ndim):  # transpose C1
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got permutation {perm} "
            f"for operand shape {x.shape}."
        )
    return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype, x.weak_type)


transpose_p = standard_primitive("transpose", _transpose_rule)


def _squeeze_rule(x: ShapedArray, *, dimensions: Any) -> ShapedArray:
    dims = index_tuple_param("squeeze", "dimensions", dimensions)
    if any(not 0 <= d < x.ndim for d in dims):  # squeeze C1
        raise ValueError(f"squeeze dimensions outside range [0, ndim): {dims} for operand shape {x.shape}")
    if len(set(dims)) != len(dims):  # squeeze C2
        raise ValueError(f"squeeze dimensions are not unique: {dims}")
    if any(x.shape[d] != 1 for d in dims):  # squeeze C3
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one, got "
            f"shape={x.shape} and dimensions={dims}"
        )
    shape = tuple(n for i, n in enumerate(x.shape) if i not in dims)
    return ShapedArray(shape, x.dtype, x.weak_type)


squeeze_p = standard_primitive("squeeze", _squeeze_rule)


def _rev_rule(x: ShapedArray, *, dimensions: Any) -> ShapedArray:
    dims = index_tuple_param("rev", "dimensions", dimensions)
    nonnegative("rev", "dimensions", dims)  # rev C1
    if any(d >= x.ndim for d in dims):  # rev C1
        raise TypeError(f"rev dimensions must all be less than operand ndim, got dimensions {dims} for operand ndim {x.ndim}.")
    if len(set(dims)) != len(dims):  # rev C2
        raise TypeError(f"rev dimensions must be unique, got {dims}.")
    return x


rev_p = standard_primitive("rev", _rev_rule)


# ---------------------------------------------------------------------------
# concatenate, iota


def _concatenate_rule(*xs: ShapedArray, dimension: Any) -> ShapedArray:
    dim = operator.index(dimension)
    if not xs:  # concatenate C1
        raise ValueError("concatenate requires a non-empty sequence of arrays")
    if len({x.dtype for x in xs}) != 1:  # concatenate C2
        raise TypeError(
            "lax.concatenate requires arguments to have the same dtypes, got "
            + ", ".join(x.dtype.name for x in xs)
            + ". (Tip: jnp.concatenate is a similar function that does automatic type promotion on inputs)."
        )
    shapes = ", ".join(str(x.shape) for x in xs)
    if len({x.ndim for x in xs}) != 1:  # concatenate C3
        raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: got {shapes}.")
    if not 0 <= dim < xs[0].ndim:  # concatenate C4
        raise TypeError(f"concatenate dimension out of bounds: dimension {dim} for shapes {shapes}.")
    others = {x.shape[:dim] + x.shape[dim + 1 :] for x in xs}
    if len(others) != 1:  # concatenate C5
        raise TypeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
            f"concatenated: concatenating along dimension {dim} for shapes {shapes}."
        )
    shape = list(xs[0].shape)
    shape[dim] = sum(x.shape[dim] for x in xs)
    return ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs))


concatenate_p = standard_primitive("concatenate", _concatenate_rule)


def _iota_rule(*, dtype: Any, shape: Any, dimension: Any, sharding: Any) -> ShapedArray:
    check_no_sharding("iota", sharding)
    dt = dtypes.canonicalize_dtype(dtype)
    if not (dtypes.issubdtype(dt, np.integer) or dtypes.issubdtype(dt, np.floating)):  # iota C1
        raise TypeError(f"iota does not accept dtype {dt.name}. Accepted dtypes are subtypes of integer, floating.")
    shape = index_tuple_param("iota", "shape", shape)
    nonnegative("iota", "shape", shape)  # iota C2
    dim = index_param("iota", "dimension", dimension)
    if not 0 <= dim < len(shape):  # iota C3
        raise ValueError(f"iota dimension must be between 0 and len(shape), got dimension={dim} for shape={shape}")
    return ShapedArray(shape, dt, weak_type=False)


iota_p = standard_primitive("iota", _iota_rule)


# dim_as_value (jax.export's shape polymorphism): a dimension's size as an integer scalar; in a
# program traced for symbolic shapes it stands for a size known only when the program is called.
def _dim_as_value_rule(*, dim: Any) -> ShapedArray:
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer, DimExpr)):  # dim_as_value C1
        raise TypeError(f"dim_as_value dim must be an integer or a symbolic dimension, got {dim!r}.")
    dt = dtypes.canonicalize_dtype(np.int64)
    if not isinstance(dim, DimExpr) and not np.iinfo(dt).min <= int(dim) <= np.iinfo(dt).max:  # dim_as_value C2
        raise OverflowError(f"dim_as_value: dim={int(dim)} does not fit its result type {np.dtype(dt).name} "
                            "(int64 with jax_enable_x64).")  # fmt: skip
    return ShapedArray((), dt)


dim_as_value_p = standard_primitive("dim_as_value", _dim_as_value_rule)


def dimension_as_value(d: Any) -> Any:
    """A dimension as a value: a plain int stays one; a symbolic one becomes ``dim_as_value``'s scalar."""
    return dim_as_value_p.bind(dim=d) if isinstance(d, DimExpr) else d


# ---------------------------------------------------------------------------
# split, tile, stack (JAX 0.10.2 has them as primitives of their own)


def _split_rule(x: ShapedArray, *, sizes: Any, axis: Any) -> list[ShapedArray]:
    sizes = index_tuple_param("split", "sizes", sizes)
    axis = index_param("split", "axis", axis)
    if not 0 <= axis < x.ndim:  # split C1
        raise ValueError(f"split: axis {axis} is out of bounds for array of dimension {x.ndim}")
    if any(s < 0 for s in sizes):  # split C2
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if sum(sizes) != x.shape[axis]:  # split C3
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the operand shape {list(x.shape)}"
        )
    return [ShapedArray(x.shape[:axis] + (s,) + x.shape[axis + 1 :], x.dtype, x.weak_type) for s in sizes]


split_p = standard_primitive("split", _split_rule, multiple_results=True)


def _tile_rule(x: ShapedArray, *, reps: Any) -> ShapedArray:
    reps = index_tuple_param("tile", "reps", reps)
    if len(reps) != x.ndim:  # tile C1
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} and x.ndim={x.ndim}.")
    nonnegative("tile", "reps", reps)  # tile C2
    return ShapedArray(tuple(n * r for n, r in zip(x.shape, reps)), x.dtype, x.weak_type)


tile_p = standard_primitive("tile", _tile_rule)


def _stack_rule(*xs: ShapedArray, axis: Any) -> ShapedArray:
    axis = operator.index(axis)
    if not xs:  # stack C1
        raise ValueError("stack requires a non-empty sequence of arrays")
    if len({x.dtype for x in xs}) != 1:  # stack C2
        raise TypeError("lax.stack requires arguments to have the same dtypes, got " + ", ".join(x.dtype.name for x in xs) + ".")
    if len({x.shape for x in xs}) != 1:  # stack C3
        raise ValueError("All input arrays must have the same shape. Got " + ", ".join(str(x.shape) for x in xs) + ".")
    shape = xs[0].shape
    if not 0 <= axis <= len(shape):  # stack C4
        raise ValueError(f"stack: axis {axis} is out of bounds for array of dimension {len(shape) + 1}")
    return ShapedArray(shape[:axis] + (len(xs),) + shape[axis:], xs[0].dtype, all(x.weak_type for x in xs))


stack_p = standard_primitive("stack", _stack_rule)


# ---------------------------------------------------------------------------
# reduce_sum (its rule is shared with the other reductions)

reduce_sum_p = standard_primitive("reduce_sum", reduction_rule("reduce_sum"))


# ===========================================================================
# Bind helpers: the primitives as the rules of every family apply them.
# Each stages what JAX's lax function of the same name stages (no equation
# when the operation is the identity); ``minijax.lax`` checks the user's
# arguments, then calls these.


def asarray(x: Any) -> Any:
    """``x`` as a minijax value: Arrays and tracers as they are, host values put on the device."""
    return x if isinstance(x, (Array, Tracer)) else device_put_value(x)


def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding: Any = None) -> Any:
    shape, dims = tuple(shape), tuple(broadcast_dimensions)
    if sharding is None and get_aval(operand).shape == shape and dims == tuple(range(len(shape))):
        return asarray(operand)
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims, sharding=sharding)


def broadcast(operand: Any, sizes: Sequence[int], sharding: Any = None) -> Any:
    """``operand`` with leading dimensions of the given ``sizes``."""
    sizes = tuple(sizes)
    if not sizes and sharding is None:
        return asarray(operand)
    aval = get_aval(operand)
    dims = tuple(range(len(sizes), len(sizes) + aval.ndim))
    return broadcast_in_dim(operand, sizes + aval.shape, dims, sharding)


def expand_dims(operand: Any, dimensions: Sequence[int]) -> Any:
    """``operand`` with 1-sized axes at the (result, nonnegative, distinct) positions ``dimensions``."""
    if not dimensions:
        return asarray(operand)
    aval = get_aval(operand)
    ndim_out = aval.ndim + len(dimensions)
    kept = [i for i in range(ndim_out) if i not in dimensions]
    shape = [1] * ndim_out
    for i, n in zip(kept, aval.shape):
        shape[i] = n
    return broadcast_in_dim(operand, shape, kept)


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None, sharding: Any = None) -> Any:
    new_sizes = tuple(core.dim_index(n) for n in new_sizes)
    aval = get_aval(operand)
    dims = None if dimensions is None else tuple(operator.index(d) for d in dimensions)
    if dims == tuple(range(aval.ndim)):
        dims = None
    if isinstance(operand, (Array, Tracer)) and aval.shape == new_sizes and dims is None and sharding is None:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims, sharding=sharding)


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    perm = tuple(operator.index(p) for p in permutation)
    if isinstance(operand, (Array, Tracer)) and perm == tuple(range(np.ndim(operand))):
        return operand
    return transpose_p.bind(operand, permutation=perm)


def squeeze(operand: Any, dimensions: Sequence[int]) -> Any:
    """``operand`` without the 1-sized axes ``dimensions`` (nonnegative)."""
    dims = tuple(sorted(dimensions))
    if isinstance(operand, (Array, Tracer)) and not dims:
        return operand
    return squeeze_p.bind(operand, dimensions=dims)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    if len(operands) == 1 and isinstance(operands[0], (Array, Tracer)):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=dimension)


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    return reduce_sum_p.bind(operand, axes=tuple(axes), out_sharding=None)


def iota(dtype: Any, shape: Sequence[int], dimension: int = 0) -> Any:
    """An array of ``shape`` whose elements count along ``dimension``."""
    return iota_p.bind(dtype=np.dtype(dtype), shape=tuple(shape), dimension=dimension, sharding=None)


# ===========================================================================
# Transformation rules: jvp, transpose and batching
#
# Every primitive here is linear in its array operands (iota has none), so
# the jvp applies the primitive to the tangents, and each one has a transpose
# rule. The rules produce the same equations as JAX's, so that the jaxpr of a
# grad or a vmap prints as JAX's does. Where JAX computes a param with NumPy
# arithmetic the param is a NumPy integer here too: the jaxpr text shows it
# (``np.int64(1)``).


# ---------------------------------------------------------------------------
# broadcast_in_dim, reshape, transpose, squeeze, rev


def _broadcast_in_dim_transpose(ct: Any, x: Any, *, shape: Shape, broadcast_dimensions: Shape, sharding: Any) -> list[Any]:
    # Sum over the result axes the broadcast created or grew from size 1,
    # then put the operand's size-1 axes back.
    unit_dims = [i for i, n in enumerate(x.aval.shape) if n == 1]
    kept = [d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims]
    summed = [d for d in range(len(shape)) if d not in kept]
    return [expand_dims(reduce_sum(ct, summed), unit_dims)]


def _broadcast_in_dim_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, shape: Shape, broadcast_dimensions: Shape, sharding: Any) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, batching.only_batch_dim(dims)
    x = batching.moveaxis(x, bdim, 0)
    # The batch axis goes first; the operand's axes land one further on.
    new_dims = (0,) + tuple(np.add(1, broadcast_dimensions))
    return broadcast_in_dim(x, (get_aval(x).shape[0], *shape), new_dims), 0


def _reshape_transpose(ct: Any, x: Any, *, new_sizes: Shape, dimensions: Shape | None, sharding: Any) -> list[Any]:
    if dimensions is None:
        return [reshape(ct, x.aval.shape)]
    # The forward op transposed by ``dimensions`` first: undo the reshape, then the transpose.
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    return [transpose(reshape(ct, permuted), np.argsort(dimensions).tolist())]


def _reshape_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, new_sizes: Shape, dimensions: Shape | None, sharding: Any) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, batching.only_batch_dim(dims)
    x = batching.moveaxis(x, bdim, 0)
    new_dims = None if dimensions is None else (0,) + tuple(np.add(1, dimensions))
    return reshape(x, (get_aval(x).shape[0], *new_sizes), new_dims), 0


def _transpose_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, permutation: Shape) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, batching.only_batch_dim(dims)
    # The batch axis goes first; the operand's axes after it shift by one.
    perm = (bdim,) + tuple(p if p < bdim else p + 1 for p in permutation)
    return transpose(x, perm), 0


def _squeeze_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, dimensions: Shape) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, batching.only_batch_dim(dims)
    x = batching.moveaxis(x, bdim, 0)
    return squeeze_p.bind(x, dimensions=tuple(sorted(d + 1 for d in dimensions))), 0


def _rev_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, dimensions: Shape) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, batching.only_batch_dim(dims)
    return rev_p.bind(x, dimensions=tuple(d + 1 if d >= bdim else d for d in dimensions)), bdim


# ---------------------------------------------------------------------------
# concatenate, iota, split, tile, stack, reduce_sum


def _concatenate_transpose(ct: Any, *xs: Any, dimension: int) -> list[Any]:
    sizes = tuple((x.aval if ad.is_undefined_primal(x) else get_aval(x)).shape[dimension] for x in xs)
    pieces = split_p.bind(ct, sizes=sizes, axis=operator.index(dimension))
    return [p if ad.is_undefined_primal(x) else None for p, x in zip(pieces, xs)]


def _concatenate_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, dimension: int) -> tuple[Any, BatchDim]:
    size = batching.batch_size(vals, dims)
    xs = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


def _dim_as_value_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> tuple[Any, BatchDim]:
    return dim_as_value_p.bind(**params), None  # no operands: never batched (listed as for iota)


def _iota_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> tuple[Any, BatchDim]:
    # iota has no operands, so nothing of it is ever batched; listed so that
    # every primitive has a rule.
    return iota_p.bind(**params), None


def _split_transpose(cts: Sequence[Any], x: Any, *, sizes: Shape, axis: int) -> list[Any]:
    if all(type(ct) is ad.Zero for ct in cts):
        return [ad.Zero(x.aval)]
    pieces = [ad.instantiate_zeros(ct) for ct in cts]
    return [pieces[0] if len(pieces) == 1 else concatenate_p.bind(*pieces, dimension=axis)]


def _split_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, sizes: Shape, axis: int) -> tuple[Any, Any]:
    (x,), bdim = vals, batching.only_batch_dim(dims)
    outs = split_p.bind(x, sizes=sizes, axis=axis + 1 if axis >= bdim else axis)
    return outs, [bdim] * len(sizes)


def _tile_transpose(ct: Any, x: Any, *, reps: Shape) -> list[Any]:
    # Axis i of the result is reps[i] copies of operand axis i: split it in
    # two, (copy, element), and sum over the copies.
    shape = x.aval.shape
    pairs = tuple(k for r, n in zip(reps, shape) for k in (r, n))
    return [reduce_sum(reshape(ct, pairs), range(0, 2 * len(shape), 2))]


def _tile_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, reps: Shape) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, batching.only_batch_dim(dims)
    return tile_p.bind(x, reps=(*reps[:bdim], 1, *reps[bdim:])), bdim


def _stack_transpose(ct: Any, *xs: Any, axis: int) -> list[Any]:
    # JAX has an ``unstack`` primitive for this; minijax splits the
    # cotangent into size-1 pieces and squeezes each.
    pieces = split_p.bind(ct, sizes=(1,) * len(xs), axis=axis)
    return [squeeze_p.bind(p, dimensions=(axis,)) if ad.is_undefined_primal(x) else None for p, x in zip(pieces, xs)]


def _stack_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, axis: int) -> tuple[Any, BatchDim]:
    first = dims[0]
    if first is not None and all(d == first for d in dims):
        # Batched alike: the stacked axis goes in before or after the batch axis.
        if axis <= first:
            return stack_p.bind(*vals, axis=axis), first + 1
        return stack_p.bind(*vals, axis=axis + 1), first
    size = batching.batch_size(vals, dims)
    xs = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
    return stack_p.bind(*xs, axis=axis + 1), 0


def _reduce_sum_transpose(ct: Any, x: Any, *, axes: tuple[int, ...], out_sharding: Any = None) -> list[Any]:
    aval = x.aval
    kept = [i for i in range(aval.ndim) if i not in axes]
    if len(kept) == aval.ndim:  # nothing was reduced: the identity
        return [ct]
    # NumPy integers, as JAX computes them: its jaxpr text shows np.int64(i).
    dims = tuple(np.int64(i) for i in kept)
    return [broadcast_in_dim_p.bind(ct, shape=aval.shape, broadcast_dimensions=dims, sharding=None)]


# ---------------------------------------------------------------------------
# The tables

_TRANSPOSES: list[tuple[Primitive, ad.TransposeRule]] = [
    (broadcast_in_dim_p, _broadcast_in_dim_transpose),
    (reshape_p, _reshape_transpose),
    (transpose_p, lambda ct, x, *, permutation: [transpose(ct, np.argsort(permutation).tolist())]),
    (squeeze_p, lambda ct, x, *, dimensions: [expand_dims(ct, dimensions)]),
    (rev_p, lambda ct, x, *, dimensions: [rev_p.bind(ct, dimensions=dimensions)]),
    (concatenate_p, _concatenate_transpose),
    (tile_p, _tile_transpose),
    (stack_p, _stack_transpose),
    (reduce_sum_p, _reduce_sum_transpose),
]
for _prim, _ct_rule in _TRANSPOSES:
    ad.deflinear(_prim, _ct_rule)
ad.deflinear(split_p, _split_transpose)
ad.defjvp_zero(iota_p)  # no operands, so never called: listed for completeness
ad.defjvp_zero(dim_as_value_p)

batching.primitive_batchers.update({
    broadcast_in_dim_p: _broadcast_in_dim_batcher,
    reshape_p: _reshape_batcher,
    transpose_p: _transpose_batcher,
    squeeze_p: _squeeze_batcher,
    rev_p: _rev_batcher,
    concatenate_p: _concatenate_batcher,
    iota_p: _iota_batcher,
    dim_as_value_p: _dim_as_value_batcher,
    split_p: _split_batcher,
    tile_p: _tile_batcher,
    stack_p: _stack_batcher,
})
batching.defreducer(reduce_sum_p)
del _prim, _ct_rule
