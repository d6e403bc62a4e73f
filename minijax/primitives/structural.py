"""Structural primitives: they move, copy or select elements without computing on them.

broadcast_in_dim, reshape, transpose, squeeze, rev, slice, dynamic_slice,
dynamic_update_slice, concatenate, pad and iota. ``spec/primitives/structural.md``
is the written specification; each check below cites its constraint label
(``# slice C3``). Messages follow JAX 0.10.2's wording where JAX has a clear
one, and name the operation, the shapes and the offending param otherwise.

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
