"""gather and the scatter family: reading and writing windows of an array at indices held in an array.

``gather`` reads one window of ``slice_sizes`` from the operand per index
vector; ``scatter``, ``scatter-add``, ``scatter-sub``, ``scatter-mul``,
``scatter-min`` and ``scatter-max`` write (or combine) one window of updates
per index vector. The dimension numbers say which axes are which, with XLA's
meaning (JAX's ``GatherDimensionNumbers`` / ``ScatterDimensionNumbers``, the
index vector always the last axis of the indices). ``spec/primitives/indexing.md``
is the written specification; each check below cites its constraint label
(``# gather C3``). Messages follow JAX 0.10.2's wording.

Out-of-bounds windows are governed by the ``mode`` param
(``GatherScatterMode``): CLIP clamps the start so the window fits,
FILL_OR_DROP fills a gathered window with ``fill_value`` / drops a scattered
one, PROMISE_IN_BOUNDS clamps gathers and drops scatters (what XLA does).

Params print and parse as JAX prints them: the dimension numbers and the mode
are this module's classes (registered with the jaxpr parser), and every
scatter carries ``update_jaxpr`` (the combining function of two scalars, an
open jaxpr, None for a plain ``scatter``) and ``update_consts``. The update
jaxprs are cached per (operation, dtype), so that two scatter-adds of one
program share theirs and it prints once, ahead of the program, as in JAX.

The jvp, transpose and batching rules at the end follow JAX's structure so
that grads and vmaps of indexing print as JAX's do.
"""

from __future__ import annotations

import enum
import operator
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from minijax import dtypes
from minijax.core import Primitive, ShapedArray, Tracer, get_aval, shape_size
from minijax.interpreters import ad, batching
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.jaxpr import Jaxpr
from minijax.jaxpr_parse import open_jaxpr_params, param_constructors
from minijax.primitives import elementwise as ew, structural as sp
from minijax.primitives.common import standard_primitive

Shape = tuple[int, ...]


# ---------------------------------------------------------------------------
# Params: dimension numbers and the out-of-bounds mode


class GatherDimensionNumbers(NamedTuple):
    """How the axes of a gather's operand, indices and output correspond (XLA's gather).

    ``offset_dims``: the output axes that run along a window (ascending).
    ``collapsed_slice_dims``: operand axes of window size 1 with no output axis (ascending).
    ``start_index_map``: the operand axis each entry of an index vector starts.
    ``operand_batching_dims`` / ``start_indices_batching_dims``: axes of the
    operand and of the indices that are matched one to one (a batch of gathers).
    The index vector is always the last axis of the indices.
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the axes of a scatter's operand, indices and updates correspond (XLA's scatter).

    ``update_window_dims``: the axes of the updates that run along a window (ascending).
    ``inserted_window_dims``: operand axes of window size 1 absent from the updates (ascending).
    ``scatter_dims_to_operand_dims``: the operand axis each entry of an index vector starts.
    ``operand_batching_dims`` / ``scatter_indices_batching_dims``: axes matched one to one.
    """

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """What a gather or scatter does with a window that does not fit in the operand.

    CLIP: the start is clamped so that the window fits. FILL_OR_DROP: a gathered
    window reads ``fill_value`` everywhere; a scattered window is dropped.
    PROMISE_IN_BOUNDS: the caller promises every window fits; gathers clamp and
    scatters drop (XLA's behaviour), and gradients assume the promise holds.
    ONE_HOT: only ``jnp.take_along_axis`` accepts it (computed with a one-hot
    contraction there); the primitives do not.
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """The mode named by ``s``: 'clip', 'fill' or 'drop' (or None), 'promise_in_bounds', 'one_hot'."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


# ``GatherDimensionNumbers(offset_dims=(0,), ...)`` and ``GatherScatterMode.CLIP`` read back.
param_constructors["GatherDimensionNumbers"] = GatherDimensionNumbers
param_constructors["ScatterDimensionNumbers"] = ScatterDimensionNumbers
param_constructors["GatherScatterMode"] = GatherScatterMode


def default_fill_value(dtype: np.dtype[Any]) -> Any:
    """JAX's fill for out-of-bounds gathers: NaN, the lowest signed / highest unsigned integer, True."""
    if dtypes.issubdtype(dtype, np.inexact):
        return np.nan
    if dtypes.issubdtype(dtype, np.signedinteger):
        return dtypes.iinfo(dtype).min
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        return dtypes.iinfo(dtype).max
    if dtype == np.bool_:
        return True
    raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


# ---------------------------------------------------------------------------
# Checks shared by gather and scatter (JAX's wording)


def _sorted(dims: Sequence[int], op: str, name: str) -> None:
    if any(b < a for a, b in zip(dims, dims[1:])):
        raise TypeError(f"{name} in {op} op must be sorted; got {tuple(dims)}")


def _unique(dims: Sequence[int], op: str, name: str) -> None:
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {tuple(dims)}.")


def _in_range(dims: Sequence[int], rank: int, op: str, name: str) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {d}.")


def _disjoint(a: Sequence[int], b: Sequence[int], op: str, name_a: str, name_b: str) -> None:
    if set(a) & set(b):
        raise TypeError(f"{name_a} and {name_b} in {op} op must be disjoint; got: {tuple(a)} and {tuple(b)}.")


def _check_mode(op: str, mode: Any) -> None:
    if not isinstance(mode, GatherScatterMode):
        raise TypeError(f"{op} mode must be a GatherScatterMode, got {mode!r}; lax.{op} parses strings.")
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(
            f"{op}: mode GatherScatterMode.ONE_HOT is not a mode of the primitive; jnp.take_along_axis "
            "accepts mode='one_hot' (computed there with a one-hot contraction)."
        )


def _check_index_dtype(indices: ShapedArray) -> None:
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise ValueError("indices must have an integer type")


def _check_batching(op: str, operand: ShapedArray, indices: ShapedArray, operand_dims: Sequence[int],
                    index_dims: Sequence[int], index_name: str) -> None:
    """The batching dims of the operand and the indices: valid, and of equal sizes."""
    _unique(operand_dims, op, "operand_batching_dims")
    _sorted(operand_dims, op, "operand_batching_dims")
    _in_range(operand_dims, operand.ndim, op, "operand_batching_dims")
    _unique(index_dims, op, index_name)
    _in_range(index_dims, indices.ndim, op, index_name)
    title = op.capitalize()
    if indices.ndim - 1 in index_dims:
        raise TypeError(f"{title} op cannot have the index vector dimension as a batching dimension; got {tuple(index_dims)}.")
    if len(operand_dims) != len(index_dims):
        raise TypeError(
            f"{title} op requires equal numbers of operand_batching_dims and {index_name}, got "
            f"{tuple(operand_dims)} and {tuple(index_dims)}."
        )
    operand_batch = tuple(operand.shape[d] for d in operand_dims)
    index_batch = tuple(indices.shape[d] for d in index_dims)
    if operand_batch != index_batch:
        raise TypeError(
            f"{title} op requires operand batching dimensions and indices batching dimensions to have the "
            f"same shape, got {operand_batch} and {index_batch}."
        )


# ---------------------------------------------------------------------------
# gather


def gather_shape(indices_shape: Shape, dnums: GatherDimensionNumbers, slice_sizes: Sequence[int]) -> Shape:
    """The output shape: the indices' batch axes, with the window axes at ``offset_dims``."""
    batch = iter(indices_shape[:-1])
    dropped = set(dnums.collapsed_slice_dims) | set(dnums.operand_batching_dims)
    window = iter(s for i, s in enumerate(slice_sizes) if i not in dropped)
    rank = len(dnums.offset_dims) + len(indices_shape) - 1
    return tuple(int(next(window)) if i in dnums.offset_dims else int(next(batch)) for i in range(rank))


def _gather_rule(operand: ShapedArray, indices: ShapedArray, *, dimension_numbers: Any, slice_sizes: Any,
                 unique_indices: Any, indices_are_sorted: Any, mode: Any, fill_value: Any) -> ShapedArray:
    op = "gather"
    dn = dimension_numbers
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError(f"gather dimension_numbers must be a GatherDimensionNumbers, got {dn!r}")
    _check_mode(op, mode)
    _check_index_dtype(indices)  # gather C1
    if indices.ndim < 1:  # gather C2
        raise TypeError(
            "Gather index leaf dimension must be within [0, rank(indices) + 1). rank(indices) is 0 and "
            "gather index leaf dimension is -1."
        )
    index_vector_dim = indices.ndim - 1
    # gather C3: offset_dims sorted, unique, within the output's rank.
    _sorted(dn.offset_dims, op, "offset_dims")
    _unique(dn.offset_dims, op, "offset_dims")
    out_rank = len(dn.offset_dims) + indices.ndim - 1
    for i, d in enumerate(dn.offset_dims):
        if not 0 <= d < out_rank:
            raise TypeError(
                f"Offset dimension {i} in gather op is out of bounds; got {d}, but should have been in [0, {out_rank})"
            )
    if len(dn.start_index_map) != indices.shape[index_vector_dim]:  # gather C4
        raise TypeError(
            f"Gather op has {len(dn.start_index_map)} elements in start_index_map and the bound of dimension "
            f"index_vector_dim={index_vector_dim} of indices is {indices.shape[index_vector_dim]}. These two "
            "numbers must be equal."
        )
    for i, d in enumerate(dn.start_index_map):  # gather C5
        if not 0 <= d < operand.ndim:
            raise TypeError(f"Invalid start_index_map; domain is [0, {operand.ndim}), got: {i}->{d}.")
    _unique(dn.start_index_map, op, "start_index_map")  # gather C5
    # gather C6: collapsed_slice_dims sorted, within the operand's rank, unique.
    _sorted(dn.collapsed_slice_dims, op, "collapsed_slice_dims")
    _in_range(dn.collapsed_slice_dims, operand.ndim, op, "collapsed_slice_dims")
    _unique(dn.collapsed_slice_dims, op, "collapsed_slice_dims")
    # gather C7: the batching dims pair up; they are neither collapsed nor indexed.
    _check_batching(op, operand, indices, dn.operand_batching_dims, dn.start_indices_batching_dims,
                    "start_indices_batching_dims")
    _disjoint(dn.collapsed_slice_dims, dn.operand_batching_dims, op, "collapsed_slice_dims", "operand_batching_dims")
    _disjoint(dn.start_index_map, dn.operand_batching_dims, op, "start_index_map", "operand_batching_dims")
    sizes = tuple(operator.index(s) for s in slice_sizes)
    if len(sizes) != operand.ndim:  # gather C8
        raise TypeError(
            "Gather op must have one slice size for every input dimension; got: "
            f"len(slice_sizes)={len(sizes)}, input_shape.rank={operand.ndim}"
        )
    if len(sizes) != len(dn.offset_dims) + len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims):  # gather C9
        raise TypeError(
            "All components of the offset index in a gather op must either be a offset dimension or "
            f"explicitly collapsed/batching; got len(slice_sizes)={len(sizes)}, output_slice_sizes="
            f"{tuple(dn.offset_dims)}, collapsed_slice_dims={tuple(dn.collapsed_slice_dims)}, "
            f"operand_batching_dims={tuple(dn.operand_batching_dims)}."
        )
    if indices.size:  # gather C10 (vacuous when there is nothing to gather)
        for i, (s, n) in enumerate(zip(sizes, operand.shape)):
            if not 0 <= s <= n:
                raise TypeError(f"Slice size at index {i} in gather op is out of range, must be within [0, {n} + 1), got {s}.")
    for i, d in enumerate(dn.collapsed_slice_dims):  # gather C11
        if sizes[d] != 1:
            raise TypeError(
                f"Gather op can only collapse slice dims with bound 1, but bound is {sizes[d]} for index {d} at position {i}."
            )
    for i, d in enumerate(dn.operand_batching_dims):  # gather C12
        if sizes[d] > 1:
            raise TypeError(
                "Gather op can only have operand batching dims with bound 0/1, but bound is "
                f"{sizes[d]} for index {d} at position {i}."
            )
    if mode is GatherScatterMode.FILL_OR_DROP and fill_value is not None and np.ndim(fill_value) != 0:  # gather C13
        raise ValueError(f"gather fill_value must be a scalar, got a value of shape {np.shape(fill_value)}")
    return ShapedArray(gather_shape(indices.shape, dn, sizes), operand.dtype, operand.weak_type)


gather_p = standard_primitive("gather", _gather_rule)


def gather(operand: Any, indices: Any, dimension_numbers: GatherDimensionNumbers, slice_sizes: Sequence[int], *,
           unique_indices: bool = False, indices_are_sorted: bool = False,
           mode: str | GatherScatterMode | None = None, fill_value: Any = None) -> Any:
    """Bind gather with JAX's canonical params: the mode parsed (default PROMISE_IN_BOUNDS) and,
    for FILL_OR_DROP, the dtype's default fill value; otherwise no fill value."""
    parsed = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    if parsed is GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = default_fill_value(get_aval(operand).dtype)
    else:
        fill_value = None
    return gather_p.bind(
        operand, indices, dimension_numbers=dimension_numbers,
        slice_sizes=tuple(operator.index(s) for s in slice_sizes),
        unique_indices=bool(unique_indices), indices_are_sorted=bool(indices_are_sorted),
        mode=parsed, fill_value=fill_value,
    )  # fmt: skip


# ---------------------------------------------------------------------------
# The scatter family


def update_batching_dims(dnums: ScatterDimensionNumbers, indices_ndim: int) -> tuple[int, ...]:
    """The axes of the updates matched with ``scatter_indices_batching_dims``."""
    scatter_axes: list[int | None] = list(range(indices_ndim - 1))
    for d in dnums.update_window_dims:
        scatter_axes.insert(d, None)
    return tuple(scatter_axes.index(i) for i in dnums.scatter_indices_batching_dims)


def _scatter_rule(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *, update_jaxpr: Any,
                  update_consts: Any, dimension_numbers: Any, indices_are_sorted: Any, unique_indices: Any,
                  mode: Any) -> ShapedArray:
    op = "scatter"
    dn = dimension_numbers
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError(f"scatter dimension_numbers must be a ScatterDimensionNumbers, got {dn!r}")
    _check_mode(op, mode)
    if update_jaxpr is not None and not isinstance(update_jaxpr, Jaxpr):
        raise TypeError(f"scatter update_jaxpr must be an (open) Jaxpr or None, got {type(update_jaxpr).__name__}")
    _check_index_dtype(indices)  # scatter C1
    if operand.dtype != updates.dtype:  # scatter C2
        raise TypeError(
            f"lax.scatter requires arguments to have the same dtypes, got {operand.dtype.name}, {updates.dtype.name}."
        )
    if indices.ndim < 1:  # scatter C3
        raise TypeError(
            "Scatter index leaf dimension must be within [0, rank(indices) + 1). rank(indices) is 0 and "
            "scatter index leaf dimension is -1."
        )
    index_vector_dim = indices.ndim - 1
    expected_rank = indices.ndim - 1 + len(dn.update_window_dims)
    if updates.ndim != expected_rank:  # scatter C4
        raise TypeError(f"Updates tensor must be of rank {expected_rank}; got {updates.ndim}.")
    # scatter C5: window dims sorted, unique, in range.
    _sorted(dn.update_window_dims, op, "update_window_dims")
    _unique(dn.update_window_dims, op, "update_window_dims")
    _in_range(dn.update_window_dims, updates.ndim, op, "update_window_dims")
    _sorted(dn.inserted_window_dims, op, "inserted_window_dims")
    _unique(dn.inserted_window_dims, op, "inserted_window_dims")
    _in_range(dn.inserted_window_dims, operand.ndim, op, "inserted_window_dims")
    # scatter C6: the batching dims pair up, in the indices and the updates.
    _check_batching(op, operand, indices, dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                    "scatter_indices_batching_dims")
    _disjoint(dn.inserted_window_dims, dn.operand_batching_dims, op, "inserted_window_dims", "operand_batching_dims")
    _disjoint(dn.scatter_dims_to_operand_dims, dn.operand_batching_dims, op, "scatter_dims_to_operand_dims",
              "operand_batching_dims")
    operand_batch = tuple(operand.shape[d] for d in dn.operand_batching_dims)
    updates_batch = tuple(updates.shape[d] for d in update_batching_dims(dn, indices.ndim))
    if operand_batch != updates_batch:
        raise TypeError(
            "Scatter op requires operand batching dimensions and updates batching dimensions to have the "
            f"same shape, got {operand_batch} and {updates_batch}."
        )
    window = len(dn.update_window_dims) + len(dn.inserted_window_dims) + len(dn.operand_batching_dims)
    if operand.ndim != window:  # scatter C7
        raise TypeError(f"Scatter op has window of size {window}; doesn't match operand of rank {operand.ndim}.")
    n_index = indices.shape[index_vector_dim]
    if len(dn.scatter_dims_to_operand_dims) != n_index:  # scatter C8
        raise TypeError(
            f"Scatter op has {len(dn.scatter_dims_to_operand_dims)} elements in scatter_dims_to_operand_dims and "
            f"the bound of dimension index_vector_dim={index_vector_dim} of indices is {n_index}. These two "
            "numbers must be equal"
        )
    for i, d in enumerate(dn.scatter_dims_to_operand_dims):  # scatter C9
        if not 0 <= d < operand.ndim:
            raise TypeError(f"Invalid scatter_dims_to_operand_dims mapping; domain is [0, {operand.ndim}), got: {i}->{d}.")
    _unique(dn.scatter_dims_to_operand_dims, op, "scatter_dims_to_operand_dims")
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    bounds = [n for i, n in enumerate(operand.shape) if i not in dropped]
    for bound, d in zip(bounds, dn.update_window_dims):  # scatter C10
        if bound < updates.shape[d]:
            raise TypeError(
                "Bounds of the window dimensions of updates must not exceed the bounds of the corresponding "
                f"dimensions of operand. For dimension {d}, updates bound is {updates.shape[d]}, operand bound is {bound}."
            )
    scatter_axes = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    for d, n in zip(scatter_axes, indices.shape[:-1]):  # scatter C11
        if updates.shape[d] != n:
            raise TypeError(
                "Bounds of the scatter dimensions of updates must be the same as the bounds of the "
                f"corresponding dimensions of scatter indices. For scatter dimension {d}, updates bound is "
                f"{updates.shape[d]}, indices bound is {n}."
            )
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


scatter_p = standard_primitive("scatter", _scatter_rule)
scatter_add_p = standard_primitive("scatter-add", _scatter_rule)
scatter_sub_p = standard_primitive("scatter-sub", _scatter_rule)
scatter_mul_p = standard_primitive("scatter-mul", _scatter_rule)
scatter_min_p = standard_primitive("scatter-min", _scatter_rule)
scatter_max_p = standard_primitive("scatter-max", _scatter_rule)
SCATTERS: tuple[Primitive, ...] = (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p, scatter_max_p)

for _prim in SCATTERS:
    open_jaxpr_params.add((_prim.name, "update_jaxpr"))  # update_jaxpr={ lambda ; ... } reads back open


# ---------------------------------------------------------------------------
# Update jaxprs: the combining function of a scatter, traced on two scalars


_COMBINERS: dict[str, Callable[[Any, Any], Any]] = {
    "add": ew.add_p.bind,
    "sub": ew.sub_p.bind,
    "mul": ew.mul_p.bind,
    "min": ew.min_p.bind,
    "max": ew.max_p.bind,
}
_update_jaxprs: dict[tuple[Any, np.dtype[Any], bool], tuple[Jaxpr, tuple[Any, ...]]] = {}
_apply_jaxprs: weakref.WeakKeyDictionary[Any, dict[np.dtype[Any], tuple[Jaxpr, tuple[Any, ...]]]] = weakref.WeakKeyDictionary()


def _trace_update(combine: Callable[[Any, Any], Any], dtype: np.dtype[Any]) -> tuple[Jaxpr, tuple[Any, ...]]:
    scalar = ShapedArray((), dtype)
    closed, _ = trace_to_jaxpr(lambda x, y: [combine(x, y)], [scalar, scalar])
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise NotImplementedError(
            "Reduction computations can't close over Tracers. Please open an issue at https://github.com/jax-ml/jax."
        )
    return closed.jaxpr, tuple(closed.consts)


def update_jaxpr(op: str, dtype: Any, transposing: bool = False) -> tuple[Jaxpr, tuple[Any, ...]]:
    """The (cached) update jaxpr of scatter-``op`` for ``dtype``: ``{ lambda ; a b. let c = add a b in (c,) }``.

    Scatters made by transpose rules get jaxprs of their own: JAX's cache is
    keyed on its trace context, which differs during a backward pass, so a
    grad's jaxpr shares an update jaxpr between the forward and the backward
    scatters only where JAX's does (nowhere), and prints the same.
    """
    key = (op, np.dtype(dtype), transposing)
    found = _update_jaxprs.get(key)
    if found is None:
        found = _update_jaxprs[key] = _trace_update(_COMBINERS[op], key[1])
    return found


def apply_jaxpr(func: Callable[[Any], Any], dtype: Any) -> tuple[Jaxpr, tuple[Any, ...]]:
    """The update jaxpr of ``scatter_apply(func)``: ``(x, _) -> func(x)``, cached per function and dtype."""
    dt = np.dtype(dtype)
    try:
        per_dtype = _apply_jaxprs.setdefault(func, {})
    except TypeError:  # not weakly referenceable: trace every time
        return _trace_update(lambda x, _: func(x), dt)
    found = per_dtype.get(dt)
    if found is None:
        found = per_dtype[dt] = _trace_update(lambda x, _: func(x), dt)
    return found


SCATTER_OPS: dict[str, Primitive] = {"add": scatter_add_p, "sub": scatter_sub_p, "mul": scatter_mul_p,
                                      "min": scatter_min_p, "max": scatter_max_p}  # fmt: skip


def scatter_op(op: str, operand: Any, indices: Any, updates: Any, dimension_numbers: ScatterDimensionNumbers, *,
               indices_are_sorted: bool = False, unique_indices: bool = False,
               mode: str | GatherScatterMode | None = None, transposing: bool = False) -> Any:
    """Bind scatter-``op`` (add, sub, mul, min, max) with its update jaxpr, as ``lax.scatter_<op>`` does
    (``transposing``: for a transpose rule; see ``update_jaxpr``)."""
    jaxpr, consts = update_jaxpr(op, get_aval(operand).dtype, transposing)
    return SCATTER_OPS[op].bind(
        operand, indices, updates, update_jaxpr=jaxpr, update_consts=consts, dimension_numbers=dimension_numbers,
        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=GatherScatterMode.from_any(mode),
    )  # fmt: skip


def scatter(operand: Any, indices: Any, updates: Any, dimension_numbers: ScatterDimensionNumbers, *,
            indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | GatherScatterMode | None = None) -> Any:
    """Bind scatter (the updates replace the operand's elements): no update jaxpr."""
    return scatter_p.bind(
        operand, indices, updates, update_jaxpr=None, update_consts=(), dimension_numbers=dimension_numbers,
        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=GatherScatterMode.from_any(mode),
    )  # fmt: skip


# ===========================================================================
# Transformation rules: jvp, transpose and batching
#
# gather is linear in its operand, and its transpose is a scatter-add of the
# cotangent; scatter-add (and -sub) are linear in the operand and the
# updates, and their transposes gather the cotangent back. scatter-mul is
# linear in the operand; scatter (set) is linear in the operand and the
# updates jointly, and transposes only when the indices are unique (as in
# JAX). The indices never carry a derivative.

BatchDim = batching.BatchDim


def _iota(dtype: Any, size: int) -> Any:
    return sp.iota(dtype, (size,))


def _aval_of(x: Any) -> ShapedArray:
    return x.aval if ad.is_undefined_primal(x) else get_aval(x)


def inverse_gather(dnums: ScatterDimensionNumbers, operand_shape: Shape,
                   updates_shape: Shape) -> tuple[GatherDimensionNumbers, list[int]]:
    """The gather that reads back, per update, the window a scatter wrote: its dimension numbers and slice sizes."""
    gather_dnums = GatherDimensionNumbers(
        offset_dims=dnums.update_window_dims,  # type: ignore[arg-type]
        collapsed_slice_dims=dnums.inserted_window_dims,  # type: ignore[arg-type]
        start_index_map=dnums.scatter_dims_to_operand_dims,  # type: ignore[arg-type]
        operand_batching_dims=dnums.operand_batching_dims,  # type: ignore[arg-type]
        start_indices_batching_dims=dnums.scatter_indices_batching_dims,  # type: ignore[arg-type]
    )
    slice_sizes = []
    pos = 0
    for i in range(len(operand_shape)):
        if i in dnums.inserted_window_dims or i in dnums.operand_batching_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(updates_shape[dnums.update_window_dims[pos]])
            pos += 1
    return gather_dnums, slice_sizes


# ---------------------------------------------------------------------------
# gather


def _gather_jvp(g: Any, operand: Any, indices: Any, *, dimension_numbers: GatherDimensionNumbers,
                slice_sizes: Shape, unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode,
                fill_value: Any) -> Any:
    # Out-of-bounds windows read fill_value, a constant: their tangent is 0.
    return gather(g, indices, dimension_numbers, slice_sizes, unique_indices=unique_indices,
                  indices_are_sorted=indices_are_sorted, mode=mode, fill_value=0)


def _gather_transpose(ct: Any, operand: Any, indices: Any, *, dimension_numbers: GatherDimensionNumbers,
                      slice_sizes: Shape, unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode,
                      fill_value: Any) -> list[Any]:
    if not ad.is_undefined_primal(operand):
        raise ValueError("gather transpose: only the operand is linear")
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), None]
    zeros = ew.full(operand.aval.shape, 0, get_aval(ct).dtype)
    dn = dimension_numbers
    scatter_dnums = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map, operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )  # fmt: skip
    out = scatter_op("add", zeros, indices, ct, scatter_dnums, unique_indices=unique_indices,
                     indices_are_sorted=indices_are_sorted, mode=mode, transposing=True)
    return [out, None]


def _gather_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, dimension_numbers: GatherDimensionNumbers,
                    slice_sizes: Shape, unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode,
                    fill_value: Any) -> tuple[Any, BatchDim]:
    (operand, indices), (operand_bdim, indices_bdim) = vals, dims
    dn = dimension_numbers
    if operand_bdim is not None and indices_bdim is None:
        # Every batch element reads the same windows: take the batch axis whole.
        operand = batching.moveaxis(operand, operand_bdim, 0)
        new = GatherDimensionNumbers(
            offset_dims=(0,) + tuple(np.add(1, dn.offset_dims)),
            collapsed_slice_dims=tuple(np.add(1, dn.collapsed_slice_dims)),
            start_index_map=tuple(np.add(1, dn.start_index_map)),
            operand_batching_dims=tuple(np.add(1, dn.operand_batching_dims)),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )  # fmt: skip
        sizes = (get_aval(operand).shape[0], *slice_sizes)
        out = gather(operand, indices, new, sizes, unique_indices=unique_indices,
                     indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value)
        return out, 0
    if operand_bdim is None and indices_bdim is not None:
        # One operand, a batch of index arrays: the batch is one more index batch axis.
        indices = batching.moveaxis(indices, indices_bdim, 0)
        new = dn._replace(
            offset_dims=tuple(1 + d for d in dn.offset_dims),
            start_indices_batching_dims=tuple(np.add(1, dn.start_indices_batching_dims)),
        )
        # Batched lookups into one array may repeat or be unsorted.
        out = gather(operand, indices, new, slice_sizes, unique_indices=False, indices_are_sorted=False,
                     mode=mode, fill_value=fill_value)
        return out, 0
    # Both batched: the batch axes of the operand and the indices are paired
    # as one more pair of batching dims.
    size = batching.batch_size(vals, dims)
    operand = batching.moveaxis(operand, operand_bdim, 0)  # type: ignore[arg-type]
    indices = batching.moveaxis(indices, indices_bdim, 0)  # type: ignore[arg-type]
    new = GatherDimensionNumbers(
        offset_dims=tuple(np.add(1, dn.offset_dims)),
        collapsed_slice_dims=tuple(np.add(1, dn.collapsed_slice_dims)),
        start_index_map=tuple(np.add(1, dn.start_index_map)),
        operand_batching_dims=(0,) + tuple(np.add(1, dn.operand_batching_dims)),
        start_indices_batching_dims=(0,) + tuple(np.add(1, dn.start_indices_batching_dims)),
    )  # fmt: skip
    sizes = (0 if size == 0 else 1, *slice_sizes)
    out = gather(operand, indices, new, sizes, unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                 mode=mode, fill_value=fill_value)
    return out, 0


ad.defjvp(gather_p, _gather_jvp, None)
ad.transpose_rules[gather_p] = _gather_transpose
batching.primitive_batchers[gather_p] = _gather_batcher


# ---------------------------------------------------------------------------
# scatter-add, scatter-sub: linear in the operand and the updates


ScatterParams = dict[str, Any]


def _scatter_addsub_jvp(prim: Primitive) -> ad.JvpRule:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        out = prim.bind(operand, indices, updates, **params)
        if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
            return out, ad.Zero.from_primal(out)
        g_operand, g_updates = ad.instantiate_zeros(g_operand), ad.instantiate_zeros(g_updates)
        return out, prim.bind(g_operand, indices, g_updates, **params)

    return jvp


def _gather_back(ct: Any, indices: Any, updates_shape: Shape, params: ScatterParams) -> Any:
    """The cotangent of a scatter's updates: each update's window of ``ct``, read back by a gather."""
    dn: ScatterDimensionNumbers = params["dimension_numbers"]
    gather_dnums, slice_sizes = inverse_gather(dn, get_aval(ct).shape, updates_shape)
    return gather(ct, indices, gather_dnums, slice_sizes, mode=params["mode"], fill_value=0)


def _scatter_addsub_transpose(prim: Primitive) -> ad.TransposeRule:
    def transpose(ct: Any, operand: Any, indices: Any, updates: Any, **params: Any) -> list[Any]:
        if ad.is_undefined_primal(indices):
            raise ValueError(f"{prim.name} transpose: the indices are not linear")
        if type(ct) is ad.Zero:
            return [ad.Zero(operand.aval) if ad.is_undefined_primal(operand) else None, None,
                    ad.Zero(updates.aval) if ad.is_undefined_primal(updates) else None]  # fmt: skip
        operand_t = ct if ad.is_undefined_primal(operand) else None
        update_t = None
        if ad.is_undefined_primal(updates):
            update_t = _gather_back(ct, indices, updates.aval.shape, params)
            if prim is scatter_sub_p:
                update_t = ew.neg_p.bind(update_t)
        return [operand_t, None, update_t]

    return transpose


# ---------------------------------------------------------------------------
# scatter-mul: linear in the operand; its derivative in the updates needs unique indices


def _scatter_mul_jvp_operand(g: Any, x: Any, i: Any, y: Any, **params: Any) -> Any:
    return scatter_mul_p.bind(g, i, y, **params)


def _scatter_mul_jvp_updates(g: Any, x: Any, i: Any, y: Any, **params: Any) -> Any:
    if not params["unique_indices"]:
        raise NotImplementedError("scatter_mul gradients are only implemented if `unique_indices=True`")
    zeros = ew.full_like(x, 0)
    added = scatter_op("add", zeros, i, g, params["dimension_numbers"], indices_are_sorted=params["indices_are_sorted"],
                       unique_indices=params["unique_indices"], mode=params["mode"])
    return ew.mul_p.bind(x, added)


def _scatter_mul_transpose(ct: Any, operand: Any, indices: Any, updates: Any, **params: Any) -> list[Any]:
    if ad.is_undefined_primal(indices):
        raise ValueError("scatter-mul transpose: the indices are not linear")
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval) if ad.is_undefined_primal(operand) else None, None,
                ad.Zero(updates.aval) if ad.is_undefined_primal(updates) else None]  # fmt: skip
    operand_t = update_t = None
    if ad.is_undefined_primal(operand):
        operand_t = scatter_op("mul", ct, indices, updates, params["dimension_numbers"],
                               indices_are_sorted=params["indices_are_sorted"],
                               unique_indices=params["unique_indices"], mode=params["mode"], transposing=True)
    if ad.is_undefined_primal(updates):
        if not params["unique_indices"]:
            raise NotImplementedError("scatter_mul gradients are only implemented if `unique_indices=True`")
        update_t = _gather_back(ew.mul_p.bind(ct, operand), indices, updates.aval.shape, params)
    return [operand_t, None, update_t]


# ---------------------------------------------------------------------------
# scatter-min, scatter-max: ties share the tangent equally (as JAX's rule)


def _scatter_extremal_jvp(prim: Primitive) -> ad.JvpRule:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        out = prim.bind(operand, indices, updates, **params)
        if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
            return out, ad.Zero.from_primal(out)
        g_operand, g_updates = ad.instantiate_zeros(g_operand), ad.instantiate_zeros(g_updates)
        dn = params["dimension_numbers"]
        updates_shape = get_aval(updates).shape
        gather_dnums, slice_sizes = inverse_gather(dn, get_aval(operand).shape, updates_shape)

        # The counts must see the windows where the scatter put them. JAX
        # counts with the default mode (dropping) and reads back with
        # PROMISE_IN_BOUNDS, which under CLIP loses the clamped windows (NaN
        # tangents) and transposes the reads into dropping scatters (wrong
        # cotangents); minijax counts and reads with CLIP there (the jaxpr
        # differs from JAX's only for mode=CLIP).
        count_mode = GatherScatterMode.CLIP if params["mode"] is GatherScatterMode.CLIP else None

        def read(x: Any) -> Any:
            return gather(x, indices, gather_dnums, slice_sizes, mode=count_mode)

        initial_vals = read(operand)
        target_vals = read(out)
        successful_updates = ew.eq_p.bind(updates, target_vals)
        retained_values = ew.eq_p.bind(initial_vals, target_vals)
        num_updates = read(scatter_op("add", ew.full_like(operand, 0), indices,
                                      ew.select(successful_updates, ew.full_like(updates, 1),
                                                 ew.full_like(updates, 0)), dn, mode=count_mode))  # fmt: skip
        num_refs = read(scatter_op("add", ew.full_like(operand, 0), indices, ew.full_like(updates, 1), dn,
                                   mode=count_mode))
        updates_normalizer = ew.select(retained_values, 1.0 / (num_updates + 1), 1.0 / num_updates)
        updates_coef = ew.select(successful_updates, updates_normalizer, ew.full_like(updates, 0))
        operand_normalizer = ew.select(retained_values, 1.0 / (num_updates + 1), ew.full_like(num_updates, 0))
        operand_coef = (-1.0 + operand_normalizer) / num_refs
        target_tangents = read(g_operand)
        tangent_updates = target_tangents * operand_coef + g_updates * updates_coef
        t_out = scatter_op("add", g_operand, indices, tangent_updates, dn, indices_are_sorted=params["indices_are_sorted"],
                           unique_indices=params["unique_indices"], mode=params["mode"])
        return out, t_out

    return jvp


# ---------------------------------------------------------------------------
# scatter (set)


def _scatter_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    if params["update_jaxpr"] is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dn: ScatterDimensionNumbers = params["dimension_numbers"]
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, ad.Zero.from_primal(out)
    g_operand, g_updates = ad.instantiate_zeros(g_operand), ad.instantiate_zeros(g_updates)
    if params["unique_indices"]:
        # No two updates meet: the scatter is linear in (operand, updates).
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, scatter_p.bind(g_operand, indices, g_updates, **params)
    # Updates may collide and which one wins is unspecified. So (JAX's
    # scheme): scatter an id per update, gather the ids back to see which
    # update won each place, mask the losers (and the overwritten operand
    # elements) off, and combine what is left with scatter-adds.
    sorted_, unique, mode = params["indices_are_sorted"], params["unique_indices"], params["mode"]
    updates_shape = get_aval(updates).shape
    ids_shape = list(updates_shape)
    for d in dn.update_window_dims:
        ids_shape[d] = 1
    num_ids = shape_size(ids_shape)
    id_dtype = np.dtype(np.uint32) if num_ids < 2**32 else np.dtype(np.uint64)
    update_ids = ew.add_p.bind(sp.reshape(_iota(id_dtype, num_ids), ids_shape), ew.full(updates_shape, 1, id_dtype))
    scattered_ids = scatter(ew.full(get_aval(operand).shape, 0, id_dtype), indices, update_ids, dn,
                            indices_are_sorted=sorted_, unique_indices=unique, mode=mode)
    gather_dnums, slice_sizes = inverse_gather(dn, get_aval(scattered_ids).shape, updates_shape)
    gathered_update_ids = gather(scattered_ids, indices, gather_dnums, slice_sizes)
    masked_operand = ew.select(ew.eq_p.bind(scattered_ids, ew.full_like(scattered_ids, 0)), operand, ew.full_like(operand, 0))
    masked_updates = ew.select(ew.eq_p.bind(update_ids, gathered_update_ids), updates, ew.full_like(updates, 0))
    masked_g_operand = ew.select(ew.eq_p.bind(scattered_ids, ew.full_like(scattered_ids, 0)), g_operand,
                                  ew.full_like(g_operand, 0))
    masked_g_updates = ew.select(ew.eq_p.bind(update_ids, gathered_update_ids), g_updates, ew.full_like(g_updates, 0))
    out = scatter_op("add", masked_operand, indices, masked_updates, dn, indices_are_sorted=sorted_,
                     unique_indices=unique, mode=mode)
    t_out = scatter_op("add", masked_g_operand, indices, masked_g_updates, dn, indices_are_sorted=sorted_,
                       unique_indices=unique, mode=mode)
    return out, t_out


def _scatter_transpose(ct: Any, operand: Any, indices: Any, updates: Any, **params: Any) -> list[Any]:
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where unique_indices=True")
    if ad.is_undefined_primal(indices):
        raise ValueError("scatter transpose: the indices are not linear")
    updates_aval = _aval_of(updates)
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval) if ad.is_undefined_primal(operand) else None, None,
                ad.Zero(updates.aval) if ad.is_undefined_primal(updates) else None]  # fmt: skip
    operand_t = update_t = None
    if ad.is_undefined_primal(operand):
        # The places the updates overwrite get no cotangent from the operand.
        zeros = ew.full(updates_aval.shape, 0, get_aval(ct).dtype)
        operand_t = scatter(ct, indices, zeros, params["dimension_numbers"],
                            indices_are_sorted=params["indices_are_sorted"], unique_indices=True, mode=params["mode"])
    if ad.is_undefined_primal(updates):
        update_t = _gather_back(ct, indices, updates_aval.shape, params)
    return [operand_t, None, update_t]


# ---------------------------------------------------------------------------
# Batching: the batch axis of the operand becomes a window axis (indices not
# batched) or a pair of batching dims with the indices' batch axis


def _bdim_at_front(x: Any, bdim: BatchDim, size: int) -> Any:
    """``x`` with its batch axis first; an unbatched ``x`` broadcast to ``size`` along a new first axis
    (its broadcast dims NumPy integers, which JAX's jaxprs show: ``(np.int64(1),)``)."""
    if bdim is not None:
        return batching.moveaxis(x, bdim, 0)
    shape = (size, *get_aval(x).shape)
    return sp.broadcast_in_dim(x, shape, tuple(np.delete(np.arange(len(shape)), 0)))


def _scatter_batcher(prim: Primitive) -> Callable[..., tuple[Any, BatchDim]]:
    def batcher(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> tuple[Any, BatchDim]:
        operand, indices, updates = vals
        _, indices_bdim, _ = dims
        size = batching.batch_size(vals, dims)
        operand = _bdim_at_front(operand, dims[0], size)
        updates = _bdim_at_front(updates, dims[2], size)
        dn: ScatterDimensionNumbers = params["dimension_numbers"]
        if indices_bdim is None:
            new = ScatterDimensionNumbers(
                update_window_dims=(0,) + tuple(np.add(1, dn.update_window_dims)),
                inserted_window_dims=tuple(np.add(1, dn.inserted_window_dims)),
                scatter_dims_to_operand_dims=tuple(np.add(1, dn.scatter_dims_to_operand_dims)),
                operand_batching_dims=tuple(np.add(1, dn.operand_batching_dims)),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
            )  # fmt: skip
        else:
            indices = _bdim_at_front(indices, indices_bdim, size)
            new = ScatterDimensionNumbers(
                update_window_dims=tuple(np.add(1, dn.update_window_dims)),
                inserted_window_dims=tuple(np.add(1, dn.inserted_window_dims)),
                scatter_dims_to_operand_dims=tuple(np.add(1, dn.scatter_dims_to_operand_dims)),
                operand_batching_dims=(0,) + tuple(np.add(1, dn.operand_batching_dims)),
                scatter_indices_batching_dims=(0,) + tuple(np.add(1, dn.scatter_indices_batching_dims)),
            )  # fmt: skip
        return prim.bind(operand, indices, updates, **{**params, "dimension_numbers": new}), 0

    return batcher


for _prim in (scatter_add_p, scatter_sub_p):
    ad.primitive_jvps[_prim] = _scatter_addsub_jvp(_prim)
    ad.transpose_rules[_prim] = _scatter_addsub_transpose(_prim)
ad.defjvp(scatter_mul_p, _scatter_mul_jvp_operand, None, _scatter_mul_jvp_updates)
ad.transpose_rules[scatter_mul_p] = _scatter_mul_transpose
for _prim in (scatter_min_p, scatter_max_p):
    ad.primitive_jvps[_prim] = _scatter_extremal_jvp(_prim)
ad.primitive_jvps[scatter_p] = _scatter_jvp
ad.transpose_rules[scatter_p] = _scatter_transpose
for _prim in SCATTERS:
    batching.primitive_batchers[_prim] = _scatter_batcher(_prim)


__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "SCATTERS",
    "SCATTER_OPS",
    "ScatterDimensionNumbers",
    "apply_jaxpr",
    "default_fill_value",
    "gather",
    "gather_p",
    "gather_shape",
    "inverse_gather",
    "scatter",
    "scatter_add_p",
    "scatter_max_p",
    "scatter_min_p",
    "scatter_mul_p",
    "scatter_op",
    "scatter_p",
    "scatter_sub_p",
    "update_batching_dims",
    "update_jaxpr",
]
