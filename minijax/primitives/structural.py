"""Structural primitives: they move, copy or select elements without computing on them.

broadcast_in_dim, reshape, transpose, squeeze, rev, slice, dynamic_slice,
dynamic_update_slice, concatenate, pad and iota. ``spec/primitives/structural.md``
is the written specification; each check below cites its constraint label
(``# slice C3``). Messages follow JAX 0.10.2's wording where JAX has a clear
one, and name the operation, the shapes and the offending param otherwise.
The jvp, transpose and batching rules are at the end of the module.

Weak types: every structural primitive keeps its operand's weak type, except
where several arrays meet (concatenate, pad, dynamic_update_slice): the result
is weak only when all of them are, as in JAX.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import ShapedArray
from minijax.jaxpr_parse import param_completers
from minijax.jaxpr_text import param_filters
from minijax.primitives.common import standard_primitive

Shape = tuple[int, ...]


# ---------------------------------------------------------------------------
# Param helpers, shared with minijax.primitives.reductions


def int_tuple(prim: str, what: str, values: Any) -> Shape:
    """A static sequence param as a tuple of Python ints, or TypeError naming it."""
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{prim} {what} must be a sequence of integers, got {values!r}.") from None
    try:
        return tuple(operator.index(v) for v in items)
    except TypeError:
        kinds = ", ".join(type(v).__name__ for v in items)
        raise TypeError(f"{prim} {what} must have every element be an integer type, got ({kinds}).") from None


def check_no_sharding(prim: str, sharding: Any) -> None:
    if sharding is not None:
        raise NotImplementedError(f"{prim}: minijax has no shardings; pass sharding=None (got {sharding!r}).")


def long_str(aval: ShapedArray) -> str:
    """``float32[2,3]``: an aval as JAX writes it in reduction errors."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _nonnegative(prim: str, what: str, values: Shape) -> None:
    if any(v < 0 for v in values):
        raise TypeError(f"{prim} {what} must have every element be nonnegative, got {values}.")


def _is_permutation(perm: Shape, ndim: int) -> bool:
    return sorted(perm) == list(range(ndim))


# ---------------------------------------------------------------------------
# broadcast_in_dim


def _broadcast_in_dim_rule(x: ShapedArray, *, shape: Any, broadcast_dimensions: Any, sharding: Any) -> ShapedArray:
    name = "broadcast_in_dim"
    check_no_sharding(name, sharding)
    shape = int_tuple(name, "shape", shape)
    dims = int_tuple(name, "broadcast_dimensions", broadcast_dimensions)
    _nonnegative(name, "shape", shape)  # broadcast_in_dim C1
    if len(dims) != x.ndim:  # broadcast_in_dim C2
        raise TypeError(
            f"{name} broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {dims} for operand ndim {x.ndim}."
        )
    _nonnegative(name, "broadcast_dimensions", dims)  # broadcast_in_dim C3
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
    if params.get("sharding") is not None:
        shown.append(("sharding", params["sharding"]))
    return shown


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
    new_sizes = int_tuple("reshape", "new_sizes", new_sizes)
    if any(d < 0 for d in new_sizes):  # reshape C1
        raise TypeError(f"reshape new_sizes must all be nonnegative, got {new_sizes}.")
    size = int(np.prod(new_sizes, dtype=np.int64))
    if size != x.size:  # reshape C2
        raise ValueError(
            f"reshape cannot change the number of elements: operand shape {x.shape} has {x.size}, "
            f"new_sizes {new_sizes} has {size}."
        )
    if dimensions is not None:
        dims = int_tuple("reshape", "dimensions", dimensions)
        if not _is_permutation(dims, x.ndim):  # reshape C3
            raise TypeError(
                f"reshape dimensions must be a permutation of operand dimensions, got dimensions {dims} "
                f"for shape {x.shape}."
            )
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = standard_primitive("reshape", _reshape_rule)


def _transpose_rule(x: ShapedArray, *, permutation: Any) -> ShapedArray:
    perm = int_tuple("transpose", "permutation", permutation)
    if not _is_permutation(perm, x.ndim):  # transpose C1
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got permutation {perm} "
            f"for operand shape {x.shape}."
        )
    return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype, x.weak_type)


transpose_p = standard_primitive("transpose", _transpose_rule)


def _squeeze_rule(x: ShapedArray, *, dimensions: Any) -> ShapedArray:
    dims = int_tuple("squeeze", "dimensions", dimensions)
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
    dims = int_tuple("rev", "dimensions", dimensions)
    _nonnegative("rev", "dimensions", dims)  # rev C1
    if any(d >= x.ndim for d in dims):  # rev C1
        raise TypeError(f"rev dimensions must all be less than operand ndim, got dimensions {dims} for operand ndim {x.ndim}.")
    if len(set(dims)) != len(dims):  # rev C2
        raise TypeError(f"rev dimensions must be unique, got {dims}.")
    return x


rev_p = standard_primitive("rev", _rev_rule)


# ---------------------------------------------------------------------------
# slice, dynamic_slice, dynamic_update_slice


def _slice_rule(x: ShapedArray, *, start_indices: Any, limit_indices: Any, strides: Any) -> ShapedArray:
    starts = int_tuple("slice", "start_indices", start_indices)
    limits = int_tuple("slice", "limit_indices", limit_indices)
    steps = (1,) * x.ndim if strides is None else int_tuple("slice", "strides", strides)
    for what, values in (("start_indices", starts), ("limit_indices", limits), ("strides", steps)):
        if len(values) != x.ndim:  # slice C1
            raise TypeError(
                f"slice {what} must have length equal to the number of dimensions of the operand, "
                f"got {what} {values} for operand shape {x.shape}."
            )
    if any(s < 0 for s in starts):  # slice C2
        raise TypeError(f"slice start_indices must be greater than or equal to zero, got start_indices {starts}.")
    if any(lim > n for lim, n in zip(limits, x.shape)):  # slice C3
        raise TypeError(
            f"slice limit_indices must be less than or equal to operand shape, got limit_indices {limits} "
            f"for operand shape {x.shape}."
        )
    if any(s > lim for s, lim in zip(starts, limits)):  # slice C4
        raise TypeError(
            f"slice limit_indices must be greater than or equal to start_indices, got start_indices "
            f"{starts} and limit_indices {limits}."
        )
    if any(st <= 0 for st in steps):  # slice C5
        raise TypeError(f"slice strides must be positive, got {steps}.")
    shape = tuple((lim - s + st - 1) // st for s, lim, st in zip(starts, limits, steps))
    return ShapedArray(shape, x.dtype, x.weak_type)


slice_p = standard_primitive("slice", _slice_rule)


def _check_indices(prim: str, x: ShapedArray, indices: Sequence[ShapedArray]) -> None:
    """The start-index operands of dynamic_slice / dynamic_update_slice (their C1-C3)."""
    if len(indices) != x.ndim:  # C1
        raise ValueError(
            f"{prim}: length of slice indices must match number of operand dimensions "
            f"({len(indices)} vs {x.shape})"
        )
    if any(i.shape for i in indices):  # C2
        got = ", ".join(repr(i) for i in indices)
        raise TypeError(f"start_indices arguments to {prim} must be scalars, got indices ({got})")
    kinds = {i.dtype for i in indices}
    if len(kinds) > 1 or any(not dtypes.issubdtype(k, np.integer) for k in kinds):  # C3
        got = ", ".join(i.dtype.name for i in indices)
        raise TypeError(f"index arguments to {prim} must be integers of the same type, got: {got}")


def _dynamic_slice_rule(x: ShapedArray, *indices: ShapedArray, slice_sizes: Any) -> ShapedArray:
    _check_indices("dynamic_slice", x, indices)  # dynamic_slice C1, C2, C3
    sizes = int_tuple("dynamic_slice", "slice_sizes", slice_sizes)
    if len(sizes) != x.ndim:  # dynamic_slice C4
        raise TypeError(
            f"dynamic_slice slice_sizes must have the same length as the operand rank, got slice_sizes "
            f"{sizes} for operand shape {x.shape}."
        )
    if any(s < 0 for s in sizes):  # dynamic_slice C5
        raise TypeError(f"dynamic_slice slice_sizes must be greater than or equal to zero, got slice_sizes of {sizes}.")
    if any(s > n for s, n in zip(sizes, x.shape)):  # dynamic_slice C5
        raise TypeError(
            f"dynamic_slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
            f"{sizes} for operand shape {x.shape}."
        )
    return ShapedArray(sizes, x.dtype, x.weak_type)


dynamic_slice_p = standard_primitive("dynamic_slice", _dynamic_slice_rule)


def _dynamic_update_slice_rule(x: ShapedArray, update: ShapedArray, *indices: ShapedArray) -> ShapedArray:
    name = "dynamic_update_slice"
    _check_indices(name, x, indices)  # dynamic_update_slice C1, C2, C3
    if update.ndim != x.ndim:  # dynamic_update_slice C4
        raise TypeError(
            f"{name} update must have the same rank as operand, got update shape {update.shape} for "
            f"operand shape {x.shape}."
        )
    if any(u > n for u, n in zip(update.shape, x.shape)):  # dynamic_update_slice C5
        raise TypeError(
            f"{name} update shape must be smaller than operand shape, got update shape {update.shape} "
            f"for operand shape {x.shape}."
        )
    if update.dtype != x.dtype:  # dynamic_update_slice C6
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {x.dtype.name}, {update.dtype.name}."
        )
    weak = x.weak_type and update.weak_type and all(i.weak_type for i in indices)
    return ShapedArray(x.shape, x.dtype, weak)


dynamic_update_slice_p = standard_primitive("dynamic_update_slice", _dynamic_update_slice_rule)


# ---------------------------------------------------------------------------
# concatenate, pad, iota


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


def padding_triples(padding_config: Any) -> tuple[tuple[int, int, int], ...]:
    """``padding_config`` as a tuple of (low, high, interior) int triples, or ValueError."""
    triples = []
    for entry in padding_config:
        values = int_tuple("pad", "padding_config entries", entry)
        if len(values) != 3:
            raise ValueError(f"pad padding_config entries must be (low, high, interior) triples, got {tuple(entry)}")
        triples.append((values[0], values[1], values[2]))
    return tuple(triples)


def _pad_rule(x: ShapedArray, padding_value: ShapedArray, *, padding_config: Any) -> ShapedArray:
    config = padding_triples(padding_config)
    if padding_value.shape:  # pad C1
        raise ValueError(f"pad padding_value must be a scalar, got a value of shape {padding_value.shape}")
    if padding_value.dtype != x.dtype:  # pad C2
        raise TypeError(
            f"pad operand and padding_value must be same dtype: got {x.dtype.name} and {padding_value.dtype.name}."
        )
    if len(config) != x.ndim:  # pad C3
        raise ValueError(
            "length of padding_config must equal the number of axes of operand, got padding_config "
            f"{config} for operand shape {x.shape}"
        )
    if any(interior < 0 for _, _, interior in config):  # pad C4
        raise ValueError(f"interior padding in padding_config must be nonnegative, got padding_config {config}")
    shape = tuple(lo + hi + n + max(n - 1, 0) * interior for n, (lo, hi, interior) in zip(x.shape, config))
    if any(n < 0 for n in shape):  # pad C5
        raise ValueError(
            f"Dimension size after padding is not at least 0, got result shape {shape}, for padding_config "
            f"{config} and operand shape {x.shape}"
        )
    return ShapedArray(shape, x.dtype, x.weak_type and padding_value.weak_type)


pad_p = standard_primitive("pad", _pad_rule)


def _iota_rule(*, dtype: Any, shape: Any, dimension: Any, sharding: Any) -> ShapedArray:
    check_no_sharding("iota", sharding)
    dt = dtypes.canonicalize_dtype(dtype)
    if not (dtypes.issubdtype(dt, np.integer) or dtypes.issubdtype(dt, np.floating)):  # iota C1
        raise TypeError(f"iota does not accept dtype {dt.name}. Accepted dtypes are subtypes of integer, floating.")
    shape = int_tuple("iota", "shape", shape)
    _nonnegative("iota", "shape", shape)  # iota C2
    dim = operator.index(dimension)
    if not 0 <= dim < len(shape):  # iota C3
        raise ValueError(f"iota dimension must be between 0 and len(shape), got dimension={dim} for shape={shape}")
    return ShapedArray(shape, dt, weak_type=False)


iota_p = standard_primitive("iota", _iota_rule)


# ---------------------------------------------------------------------------
# split, tile, stack (JAX 0.10.2 has them as primitives of their own)


def _split_rule(x: ShapedArray, *, sizes: Any, axis: Any) -> list[ShapedArray]:
    sizes = int_tuple("split", "sizes", sizes)
    axis = operator.index(axis)
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
    reps = int_tuple("tile", "reps", reps)
    if len(reps) != x.ndim:  # tile C1
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} and x.ndim={x.ndim}.")
    _nonnegative("tile", "reps", reps)  # tile C2
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


# ===========================================================================
# Transformation rules: jvp, transpose and batching
#
# Every primitive above is linear in its array operands: dynamic_slice and
# dynamic_update_slice in the operand and the update (not in the start
# indices), pad in the operand and the padding value; iota has no operands.
# So the jvp applies the primitive to the tangents, and each one has a
# transpose rule. The rules produce the same equations as JAX's, so that the
# jaxpr of a grad or a vmap prints as JAX's does. Where JAX computes a param
# with NumPy arithmetic the param is a NumPy integer here too: the jaxpr text
# shows it (``np.int64(1)``).

from minijax.core import get_aval  # noqa: E402
from minijax.interpreters import ad, batching  # noqa: E402  (the rules need the primitives above)
from minijax.primitives import elementwise as ew  # noqa: E402

BatchDim = batching.BatchDim


# ---------------------------------------------------------------------------
# Helpers: the primitives as the rules use them, without an equation where
# the operation is the identity (as the lax wrappers do)


def _lax() -> Any:
    # lax's wrappers stage exactly JAX's equations; minijax.lax imports this
    # module, so it is imported when a rule runs.
    from minijax import lax

    return lax


def _reduce_sum(x: Any, axes: Sequence[int]) -> Any:
    # Imported here: minijax.primitives.reductions imports this module.
    from minijax.primitives.reductions import reduce_sum_p

    return reduce_sum_p.bind(x, axes=tuple(axes), out_sharding=None)


def _reshape(x: Any, shape: Sequence[int], dimensions: Sequence[int] | None = None) -> Any:
    shape = tuple(int(n) for n in shape)
    aval = get_aval(x)
    if dimensions is not None and tuple(dimensions) == tuple(range(aval.ndim)):
        dimensions = None
    if aval.shape and aval.shape == shape and dimensions is None:
        return x
    dims = None if dimensions is None else tuple(int(d) for d in dimensions)
    return reshape_p.bind(x, new_sizes=shape, dimensions=dims, sharding=None)


def _transpose(x: Any, permutation: Sequence[int]) -> Any:
    perm = tuple(int(p) for p in permutation)
    if perm == tuple(range(len(perm))):
        return x
    return transpose_p.bind(x, permutation=perm)


def _broadcast_in_dim(x: Any, shape: Sequence[int], dims: Sequence[Any]) -> Any:
    shape = tuple(int(n) for n in shape)
    if get_aval(x).shape == shape and list(dims) == list(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=tuple(dims), sharding=None)


def _expand_dims(x: Any, dims: Sequence[int]) -> Any:
    """``x`` with size-1 axes at the (result) positions ``dims``."""
    shape = list(get_aval(x).shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return _broadcast_in_dim(x, shape, [i for i in range(len(shape)) if i not in dims])


def _scalar(value: Any, dtype: np.dtype[Any]) -> Any:
    """A host scalar of ``dtype``: it becomes a literal in a jaxpr (``0.0:f32[]``)."""
    return np.array(value, dtype)


def _full(shape: Sequence[int], value: Any, dtype: np.dtype[Any]) -> Any:
    return _broadcast_in_dim(_scalar(value, dtype), shape, ())


def _linear_transpose(rule: Any) -> ad.TransposeRule:
    """A single-result transpose rule that also takes a symbolic-zero cotangent.

    A Zero cotangent gives Zero cotangents to the operands being transposed
    (and None to the others) without calling ``rule``.
    """

    def transpose(ct: Any, *operands: Any, **params: Any) -> Sequence[Any]:
        if type(ct) is ad.Zero:
            return [ad.Zero(x.aval) if ad.is_undefined_primal(x) else None for x in operands]
        result: Sequence[Any] = rule(ct, *operands, **params)
        return result

    return transpose


def _the_batch_dim(dims: Sequence[BatchDim]) -> int:
    """The batch axis of a one-operand primitive's operand (batched, or no rule would run)."""
    (bdim,) = dims
    if bdim is None:
        raise ValueError("a batching rule was called with no batched operand")
    return bdim


def _aval_of(x: Any) -> ShapedArray:
    """The aval of an operand being transposed (UndefinedPrimal) or of a known value."""
    return x.aval if ad.is_undefined_primal(x) else get_aval(x)


# ---------------------------------------------------------------------------
# broadcast_in_dim, reshape, transpose, squeeze, rev


def _broadcast_in_dim_transpose(ct: Any, x: Any, *, shape: Shape, broadcast_dimensions: Shape, sharding: Any) -> list[Any]:
    # Sum over the result axes the broadcast created or grew from size 1,
    # then put the operand's size-1 axes back.
    unit_dims = [i for i, n in enumerate(x.aval.shape) if n == 1]
    kept = [d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims]
    summed = [d for d in range(len(shape)) if d not in kept]
    return [_expand_dims(_reduce_sum(ct, summed), unit_dims)]


def _broadcast_in_dim_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, shape: Shape, broadcast_dimensions: Shape, sharding: Any) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, _the_batch_dim(dims)
    x = batching.moveaxis(x, bdim, 0)
    # The batch axis goes first; the operand's axes land one further on.
    new_dims = (0,) + tuple(np.add(1, broadcast_dimensions))
    return _broadcast_in_dim(x, (get_aval(x).shape[0], *shape), new_dims), 0


def _reshape_transpose(ct: Any, x: Any, *, new_sizes: Shape, dimensions: Shape | None, sharding: Any) -> list[Any]:
    if dimensions is None:
        return [_reshape(ct, x.aval.shape)]
    # The forward op transposed by ``dimensions`` first: undo the reshape, then the transpose.
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    return [_transpose(_reshape(ct, permuted), np.argsort(dimensions).tolist())]


def _reshape_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, new_sizes: Shape, dimensions: Shape | None, sharding: Any) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, _the_batch_dim(dims)
    x = batching.moveaxis(x, bdim, 0)
    new_dims = None if dimensions is None else (0,) + tuple(np.add(1, dimensions))
    return _reshape(x, (get_aval(x).shape[0], *new_sizes), new_dims), 0


def _transpose_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, permutation: Shape) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, _the_batch_dim(dims)
    # The batch axis goes first; the operand's axes after it shift by one.
    perm = (bdim,) + tuple(p if p < bdim else p + 1 for p in permutation)
    return _transpose(x, perm), 0


def _squeeze_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, dimensions: Shape) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, _the_batch_dim(dims)
    x = batching.moveaxis(x, bdim, 0)
    return squeeze_p.bind(x, dimensions=tuple(sorted(d + 1 for d in dimensions))), 0


def _rev_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, dimensions: Shape) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, _the_batch_dim(dims)
    return rev_p.bind(x, dimensions=tuple(d + 1 if d >= bdim else d for d in dimensions)), bdim


# ---------------------------------------------------------------------------
# slice, dynamic_slice, dynamic_update_slice


def _slice_transpose(ct: Any, x: Any, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None) -> list[Any]:
    # The cotangent goes back where the slice read it, zeros elsewhere: a pad
    # whose low padding is the start, whose interior padding is stride - 1,
    # and whose high padding fills up to the operand's size.
    steps = (1,) * x.aval.ndim if strides is None else strides
    unit = all(s == 1 for s in steps)
    config = []
    for size, start, n, step in zip(x.aval.shape, start_indices, get_aval(ct).shape, steps):
        span = 0 if n == 0 else (n - 1) * step + 1  # from the first element read to the last
        interior = 0 if unit else np.int64(step - 1)
        config.append((start, np.int64(size - start - span), interior))
    return [pad_p.bind(ct, _scalar(0, get_aval(ct).dtype), padding_config=tuple(config))]


def _slice_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, start_indices: Shape, limit_indices: Shape, strides: Shape | None) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, _the_batch_dim(dims)
    # The batch axis is taken whole.
    starts, limits = list(start_indices), list(limit_indices)
    starts.insert(bdim, 0)
    limits.insert(bdim, get_aval(x).shape[bdim])
    steps = None if strides is None else (*strides[:bdim], 1, *strides[bdim:])
    return slice_p.bind(x, start_indices=tuple(starts), limit_indices=tuple(limits), strides=steps), bdim


def _dynamic_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, slice_sizes: Shape) -> tuple[Any, Any]:
    x, *indices = primals
    t = tangents[0]  # the indices' tangents are float0 zeros
    # The tangent first, then the primal: JAX's order of equations under jvp.
    t_out = None if type(t) is ad.Zero else dynamic_slice_p.bind(t, *indices, slice_sizes=slice_sizes)
    out = dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    return out, ad.Zero.from_primal(out) if t_out is None else t_out


def _dynamic_slice_transpose(ct: Any, x: Any, *indices: Any, slice_sizes: Shape) -> list[Any]:
    zeros = _full(x.aval.shape, 0, x.aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


def _dynamic_update_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, update, *indices = primals
    tx, tu = tangents[:2]
    out = dynamic_update_slice_p.bind(x, update, *indices)
    if type(tx) is ad.Zero and type(tu) is ad.Zero:
        return out, ad.Zero.from_primal(out)
    return out, dynamic_update_slice_p.bind(ad.instantiate_zeros(tx), ad.instantiate_zeros(tu), *indices)


def _dynamic_update_slice_transpose(ct: Any, x: Any, update: Any, *indices: Any) -> list[Any]:
    u_aval = _aval_of(update)
    # JAX makes the zeros even when only the update is being transposed.
    zeros = _full(u_aval.shape, 0, u_aval.dtype)
    ct_x = dynamic_update_slice_p.bind(ct, zeros, *indices) if ad.is_undefined_primal(x) else None
    ct_u = dynamic_slice_p.bind(ct, *indices, slice_sizes=u_aval.shape) if ad.is_undefined_primal(update) else None
    return [ct_x, ct_u] + [None] * len(indices)


# Batching dynamic_slice and dynamic_update_slice: as in JAX, each is a
# gather (a scatter) whose windows span every operand axis, started at the
# vector of start indices, and clamped to fit (mode CLIP) as these two
# primitives clamp. The rules build that index vector (one per batch element
# when some start is batched) and hand over to the gather / scatter batching
# rule, which pairs the batch axes up. One gather or scatter whatever the
# batch, and every start index may differ per element.


def _start_vector(indices: Sequence[Any], index_dims: Sequence[BatchDim], size: int) -> tuple[Any, BatchDim]:
    """The scalar start indices as one index array: ``int[ndim]`` when none is batched, else
    ``int[size, ndim]`` (batch axis first, the unbatched starts broadcast along it)."""
    lax = _lax()
    if not indices:
        return np.zeros((0,), np.int32), None  # a rank-0 operand: an empty index vector
    if all(d is None for d in index_dims):
        return lax.concatenate([lax.broadcast(i, (1,)) for i in indices], 0), None
    # A batched scalar has one axis, its batch axis: it becomes column 0's rows.
    columns = [lax.broadcast_in_dim(i, (size, 1), () if d is None else (0,)) for i, d in zip(indices, index_dims)]
    return lax.concatenate(columns, 1), 0


def _dynamic_slice_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, slice_sizes: Shape) -> tuple[Any, BatchDim]:
    from minijax.primitives.indexing import GatherDimensionNumbers, GatherScatterMode, gather_p

    x, *indices = vals
    x_dim, *index_dims = dims
    axes = tuple(range(len(indices)))
    dnums = GatherDimensionNumbers(offset_dims=axes, collapsed_slice_dims=(), start_index_map=axes)
    index, index_dim = _start_vector(indices, index_dims, batching.batch_size(vals, dims))
    gather_batcher = batching.primitive_batchers[gather_p]
    return gather_batcher([x, index], [x_dim, index_dim], dimension_numbers=dnums, slice_sizes=slice_sizes,
                          unique_indices=True, indices_are_sorted=True, mode=GatherScatterMode.CLIP, fill_value=None)


def _dynamic_update_slice_batcher(vals: Sequence[Any], dims: Sequence[BatchDim]) -> tuple[Any, BatchDim]:
    from minijax.primitives.indexing import GatherScatterMode, ScatterDimensionNumbers, scatter_p

    x, update, *indices = vals
    x_dim, u_dim, *index_dims = dims
    axes = tuple(range(len(indices)))
    dnums = ScatterDimensionNumbers(update_window_dims=axes, inserted_window_dims=(), scatter_dims_to_operand_dims=axes)
    index, index_dim = _start_vector(indices, index_dims, batching.batch_size(vals, dims))
    scatter_batcher = batching.primitive_batchers[scatter_p]
    return scatter_batcher([x, index, update], [x_dim, index_dim, u_dim], update_jaxpr=None, update_consts=(),
                           dimension_numbers=dnums, indices_are_sorted=True, unique_indices=True,
                           mode=GatherScatterMode.CLIP)


# ---------------------------------------------------------------------------
# concatenate, pad, iota


def _concatenate_transpose(ct: Any, *xs: Any, dimension: int) -> list[Any]:
    sizes = tuple(_aval_of(x).shape[dimension] for x in xs)
    pieces = split_p.bind(ct, sizes=sizes, axis=operator.index(dimension))
    return [p if ad.is_undefined_primal(x) else None for p, x in zip(pieces, xs)]


def _concatenate_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, dimension: int) -> tuple[Any, BatchDim]:
    size = batching.batch_size(vals, dims)
    xs = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


def _pad_transpose(ct: Any, x: Any, padding_value: Any, *, padding_config: Any) -> list[Any]:
    lows, highs, interiors = ([entry[k] for entry in padding_config] for k in range(3))
    # Negative low/high padding crops the edges off; a slice with stride
    # interior + 1 then drops the interior padding.
    uncrop = tuple(zip(np.negative(lows), np.negative(highs), np.zeros_like(interiors)))
    cropped = pad_p.bind(ct, _scalar(0, get_aval(ct).dtype), padding_config=uncrop)
    ct_x = slice_p.bind(
        cropped,
        start_indices=tuple(np.zeros_like(lows)),
        limit_indices=get_aval(cropped).shape,
        strides=tuple(np.add(interiors, 1)),
    )
    ct_pad = None
    if ad.is_undefined_primal(padding_value):
        # Every padded position holds the padding value: its cotangent is the rest of the sum.
        everything = range(get_aval(ct).ndim)
        ct_pad = ew.sub_p.bind(_reduce_sum(ct, everything), _reduce_sum(ct_x, everything))
    return [ct_x if ad.is_undefined_primal(x) else None, ct_pad]


def _pad_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, padding_config: Any) -> tuple[Any, BatchDim]:
    (x, padding_value), (x_dim, value_dim) = vals, dims
    if x_dim is None:
        x, x_dim = batching.bdim_at_front(x, None, batching.batch_size(vals, dims)), 0
    config = list(padding_config)
    config.insert(x_dim, (0, 0, 0))
    if value_dim is None:
        return pad_p.bind(x, padding_value, padding_config=tuple(config)), x_dim
    # One padding value per batch element: pad with zeros and with a mask of
    # where the operand went, then select the batch's padding values elsewhere.
    dtype = get_aval(x).dtype
    padded = pad_p.bind(x, _scalar(0, dtype), padding_config=tuple(config))
    where_x = pad_p.bind(_full(get_aval(x).shape, True, np.dtype(np.bool_)), _scalar(False, np.dtype(np.bool_)), padding_config=tuple(config))
    values = _broadcast_in_dim(padding_value, get_aval(padded).shape, (x_dim,))
    return ew.select_n_p.bind(where_x, values, padded), x_dim


def _iota_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> tuple[Any, BatchDim]:
    # iota has no operands, so nothing of it is ever batched; listed so that
    # every primitive has a rule.
    return iota_p.bind(**params), None


# ---------------------------------------------------------------------------
# split, tile, stack


def _split_transpose(cts: Sequence[Any], x: Any, *, sizes: Shape, axis: int) -> list[Any]:
    if all(type(ct) is ad.Zero for ct in cts):
        return [ad.Zero(x.aval)]
    pieces = [ad.instantiate_zeros(ct) for ct in cts]
    return [pieces[0] if len(pieces) == 1 else concatenate_p.bind(*pieces, dimension=axis)]


def _split_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, sizes: Shape, axis: int) -> tuple[Any, Any]:
    (x,), bdim = vals, _the_batch_dim(dims)
    outs = split_p.bind(x, sizes=sizes, axis=axis + 1 if axis >= bdim else axis)
    return outs, [bdim] * len(sizes)


def _tile_transpose(ct: Any, x: Any, *, reps: Shape) -> list[Any]:
    # Axis i of the result is reps[i] copies of operand axis i: split it in
    # two, (copy, element), and sum over the copies.
    shape = x.aval.shape
    pairs = tuple(k for r, n in zip(reps, shape) for k in (r, n))
    return [_reduce_sum(_reshape(ct, pairs), range(0, 2 * len(shape), 2))]


def _tile_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, reps: Shape) -> tuple[Any, BatchDim]:
    (x,), bdim = vals, _the_batch_dim(dims)
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


# ---------------------------------------------------------------------------
# The tables

for _prim, _ct_rule in [
    (broadcast_in_dim_p, _broadcast_in_dim_transpose),
    (reshape_p, _reshape_transpose),
    (transpose_p, lambda ct, x, *, permutation: [_transpose(ct, np.argsort(permutation).tolist())]),
    (squeeze_p, lambda ct, x, *, dimensions: [_expand_dims(ct, dimensions)]),
    (rev_p, lambda ct, x, *, dimensions: [rev_p.bind(ct, dimensions=dimensions)]),
    (slice_p, _slice_transpose),
    (concatenate_p, _concatenate_transpose),
    (pad_p, _pad_transpose),
    (tile_p, _tile_transpose),
    (stack_p, _stack_transpose),
]:
    ad.deflinear(_prim, _linear_transpose(_ct_rule))
ad.deflinear(split_p, _split_transpose)
ad.primitive_jvps[dynamic_slice_p] = _dynamic_slice_jvp
ad.transpose_rules[dynamic_slice_p] = _linear_transpose(_dynamic_slice_transpose)
ad.primitive_jvps[dynamic_update_slice_p] = _dynamic_update_slice_jvp
ad.transpose_rules[dynamic_update_slice_p] = _linear_transpose(_dynamic_update_slice_transpose)
ad.defjvp_zero(iota_p)  # no operands, so never called: listed for completeness

batching.primitive_batchers.update({
    broadcast_in_dim_p: _broadcast_in_dim_batcher,
    reshape_p: _reshape_batcher,
    transpose_p: _transpose_batcher,
    squeeze_p: _squeeze_batcher,
    rev_p: _rev_batcher,
    slice_p: _slice_batcher,
    dynamic_slice_p: _dynamic_slice_batcher,
    dynamic_update_slice_p: _dynamic_update_slice_batcher,
    concatenate_p: _concatenate_batcher,
    pad_p: _pad_batcher,
    iota_p: _iota_batcher,
    split_p: _split_batcher,
    tile_p: _tile_batcher,
    stack_p: _stack_batcher,
})
