"""Samplers for the indexing primitives (see ``minijax.testing.samplers``): gather and the scatters.

The dimension numbers are drawn at random and valid by construction: an
operand of rank 0-3, some of its axes paired with axes of the indices as
batching dims, some collapsed (gather) or inserted (scatter), some indexed
(in a random order), the rest windows of random extent, with the window
axes at random positions of the output (gather) or the updates (scatter).

Index values: for CLIP and FILL_OR_DROP they run past both ends, so windows
are clamped, filled or dropped; PROMISE_IN_BOUNDS gets in-bounds windows
only, since its gradients assume them (as in JAX). Where a rule needs
unique indices (scatter-mul's derivative in the updates, scatter's
transpose, and every scatter whose winner among colliding updates would be
unspecified) the index vectors are distinct, the indexed axes are windows
of size 1, and the primitive is told ``unique_indices=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax.core import shape_size
from minijax.primitives.indexing import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, update_jaxpr
from minijax.testing.cases import (
    ANY,
    NUMBER,
    Case,
    Draw,
    NDArray,
    Operand,
    Sampler,
    Shape,
    case,
    distinct,
    moderate,
)

_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.uint8))
_MODES = (GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP, GatherScatterMode.PROMISE_IN_BOUNDS)
_SIDES = st.sampled_from((1, 2, 3, 2, 3, 1, 2, 3, 0))


@dataclass(frozen=True)
class _Layout:
    """The drawn structure shared by gather and scatter cases."""

    operand: Shape
    batching: tuple[int, ...]  # operand batching axes
    collapsed: tuple[int, ...]  # collapsed (gather) / inserted (scatter) axes
    index_map: tuple[int, ...]  # operand axis started by each index-vector entry
    window: tuple[int, ...]  # extent along each operand axis (1 on collapsed and batching axes)
    index_batch: Shape  # the indices' shape without the index vector axis
    index_batching: tuple[int, ...]  # axes of index_batch paired with ``batching``
    window_positions: tuple[int, ...]  # where the window axes go in the output / updates
    index_dtype: np.dtype[Any]
    mode: GatherScatterMode

    @property
    def window_axes(self) -> list[int]:
        return [d for d in range(len(self.operand)) if d not in self.collapsed and d not in self.batching]

    def result_shape(self) -> Shape:
        """The gather's output shape, which is also the scatter's updates shape."""
        rank = len(self.index_batch) + len(self.window_axes)
        batch = iter(self.index_batch)
        window = iter(self.window[d] for d in self.window_axes)
        return tuple(next(window) if i in self.window_positions else next(batch) for i in range(rank))


def _layout(draw: Draw, unique: bool) -> _Layout:
    """A random valid layout; with ``unique``, indexed axes have windows of 1 (distinct index
    vectors then never overlap)."""
    rank = draw(st.integers(0, 3))
    operand = tuple(draw(_SIDES) for _ in range(rank))
    axes = list(range(rank))
    batching = tuple(sorted(d for d in axes if operand[d] > 0 and draw(st.integers(0, 4)) == 0))
    rest = [d for d in axes if d not in batching]
    indexed = [d for d in rest if operand[d] > 0 and draw(st.booleans())]
    index_map = tuple(draw(st.permutations(indexed))) if indexed else ()
    collapsed = tuple(sorted(d for d in rest if operand[d] > 0 and (d in indexed or draw(st.integers(0, 3)) == 0)
                             and (unique or draw(st.booleans()))))  # fmt: skip
    window = []
    for d in axes:
        if d in collapsed or d in batching or (unique and d in indexed):
            window.append(1 if operand[d] > 0 else 0)
        else:
            window.append(draw(st.integers(0, operand[d])))
    n_free = draw(st.integers(0, 2))
    index_batch = [draw(_SIDES) for _ in range(n_free)]
    index_batching: list[int] = []
    for d in batching:  # each operand batching axis gets a partner axis among the indices' batch axes
        pos = draw(st.integers(0, len(index_batch)))
        index_batch.insert(pos, operand[d])
        index_batching = [p + (p >= pos) for p in index_batching] + [pos]
    n_window = sum(1 for d in axes if d not in collapsed and d not in batching)
    out_rank = len(index_batch) + n_window
    window_positions = tuple(sorted(draw(st.permutations(range(out_rank)))[:n_window]))
    mode = draw(st.sampled_from(_MODES))
    return _Layout(operand, batching, collapsed, index_map, tuple(window), tuple(index_batch), tuple(index_batching),
                   window_positions, draw(st.sampled_from(_INDEX_DTYPES)), mode)


def _index_values(layout: _Layout, unique: bool) -> Any:
    """A maker of index arrays for ``layout``: past both ends unless the mode promises in-bounds
    windows; distinct vectors (per batching element) when ``unique``."""
    shape = (*layout.index_batch, len(layout.index_map))
    bounds = [layout.operand[d] - layout.window[d] for d in layout.index_map]
    inside = unique or layout.mode is GatherScatterMode.PROMISE_IN_BOUNDS
    signed = layout.index_dtype.kind == "i"

    def values(rng: np.random.Generator) -> NDArray:
        if not unique:
            lo = [0 if inside or not signed else -2 for _ in bounds]
            hi = [b if inside else b + 2 for b in bounds]
            out = rng.integers(np.array(lo, np.int64), np.array(hi, np.int64) + 1, size=shape)
            return np.asarray(out.astype(layout.index_dtype))
        # Distinct vectors within each batching element: draw flat positions without replacement.
        sizes = [b + 1 for b in bounds]
        free = [i for i in range(len(layout.index_batch)) if i not in layout.index_batching]
        n_free = shape_size(layout.index_batch[i] for i in free)
        out = np.zeros(shape, np.int64)
        for where in np.ndindex(*[layout.index_batch[i] for i in layout.index_batching]):
            flat = rng.permutation(shape_size(sizes))[:n_free]
            vectors = np.stack(np.unravel_index(flat, sizes), axis=-1) if sizes else np.zeros((n_free, 0), np.int64)
            sel: list[Any] = [slice(None)] * len(layout.index_batch)
            for axis, w in zip(layout.index_batching, where):
                sel[axis] = w
            target = out[tuple(sel)]
            target[...] = vectors.reshape(target.shape)
        return np.asarray(out.astype(layout.index_dtype))

    return values


def _room_for_unique(layout: _Layout) -> bool:
    """Whether there are enough distinct index vectors for the free index batch axes."""
    free = [n for i, n in enumerate(layout.index_batch) if i not in layout.index_batching]
    room = shape_size(layout.operand[d] for d in layout.index_map)
    return shape_size(free) <= room


# ---------------------------------------------------------------------------
# gather


def _gather(draw: Draw, dtype: np.dtype[Any]) -> Case:
    layout = _layout(draw, unique=False)
    dn = GatherDimensionNumbers(
        offset_dims=layout.window_positions, collapsed_slice_dims=layout.collapsed, start_index_map=layout.index_map,
        operand_batching_dims=layout.batching, start_indices_batching_dims=layout.index_batching,
    )  # fmt: skip
    fill = None
    if layout.mode is GatherScatterMode.FILL_OR_DROP:
        # Not NaN: finite differences of a NaN output are NaN (tests/test_gather_scatter.py covers it).
        fill = draw(st.sampled_from([0, 1]))
    params = {"dimension_numbers": dn, "slice_sizes": layout.window, "unique_indices": False,
              "indices_are_sorted": False, "mode": layout.mode, "fill_value": fill}  # fmt: skip
    make_indices = _index_values(layout, unique=False)
    indices = Operand((*layout.index_batch, len(layout.index_map)), layout.index_dtype, lambda rng, s, d: make_indices(rng))
    # Linear in the operand only when out-of-bounds windows read 0.
    linear = [(0,)] if layout.mode is not GatherScatterMode.FILL_OR_DROP or fill == 0 else []
    return case("gather", params, [Operand(layout.operand, dtype, moderate()), indices], (0,), linear)


# ---------------------------------------------------------------------------
# The scatters


def _scatter_case(draw: Draw, dtype: np.dtype[Any], name: str, unique: bool) -> tuple[_Layout, dict[str, Any], bool]:
    """A scatter layout and its params; ``unique`` forces distinct index vectors (told to the primitive)."""
    layout = _layout(draw, unique=unique)
    if unique and not _room_for_unique(layout):
        layout = _Layout(layout.operand, layout.batching, layout.collapsed, layout.index_map, layout.window,
                         tuple(n if i in layout.index_batching else min(n, 1) for i, n in enumerate(layout.index_batch)),
                         layout.index_batching, layout.window_positions, layout.index_dtype, layout.mode)  # fmt: skip
        if not _room_for_unique(layout):  # no indexed axis of any size: one update per batching element
            layout = _Layout(layout.operand, layout.batching, layout.collapsed, layout.index_map, layout.window,
                             tuple(n if i in layout.index_batching else 0 for i, n in enumerate(layout.index_batch)),
                             layout.index_batching, layout.window_positions, layout.index_dtype, layout.mode)  # fmt: skip
    dn = ScatterDimensionNumbers(
        update_window_dims=layout.window_positions, inserted_window_dims=layout.collapsed,
        scatter_dims_to_operand_dims=layout.index_map, operand_batching_dims=layout.batching,
        scatter_indices_batching_dims=layout.index_batching,
    )  # fmt: skip
    told_unique = unique and (name != "scatter" or draw(st.booleans()))
    jaxpr, consts = (None, ()) if name == "scatter" else update_jaxpr(name.removeprefix("scatter-"), dtype)
    params = {"dimension_numbers": dn, "indices_are_sorted": False, "unique_indices": told_unique, "mode": layout.mode,
              "update_jaxpr": jaxpr, "update_consts": consts}  # fmt: skip
    return layout, params, told_unique


def _operands(layout: _Layout, dtype: np.dtype[Any], unique: bool, values: Any = None) -> list[Operand]:
    make_indices = _index_values(layout, unique)
    vals = moderate() if values is None else values
    return [
        Operand(layout.operand, dtype, vals),
        Operand((*layout.index_batch, len(layout.index_map)), layout.index_dtype, lambda rng, s, d: make_indices(rng)),
        Operand(layout.result_shape(), dtype, vals),
    ]


def _scatter_additive(name: str) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        layout, params, _ = _scatter_case(draw, dtype, name, unique=False)
        return case(name, params, _operands(layout, dtype, unique=False), (0, 2), [(0, 2)])

    return Sampler(name, build, NUMBER, linear=True)


def _scatter_mul(draw: Draw, dtype: np.dtype[Any]) -> Case:
    # Its derivative in the updates needs unique indices (as in JAX).
    layout, params, _ = _scatter_case(draw, dtype, "scatter-mul", unique=True)
    return case("scatter-mul", params, _operands(layout, dtype, unique=True), (0, 2), [(0,)])


def _scatter(draw: Draw, dtype: np.dtype[Any]) -> Case:
    # Distinct indices: with collisions the winner is unspecified. Told so or
    # not (both jvp paths); the transpose needs to be told.
    layout, params, told = _scatter_case(draw, dtype, "scatter", unique=True)
    return case("scatter", params, _operands(layout, dtype, unique=True), (0, 2), [(0, 2)] if told else [])


def _scatter_extremal(name: str) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        # Colliding updates allowed; no ties between any two values (operand
        # and updates drawn from one grid), so the result is smooth.
        layout, params, _ = _scatter_case(draw, dtype, name, unique=False)
        ops = _operands(layout, dtype, unique=False)
        spread = distinct()

        def make_args(rng: np.random.Generator) -> list[NDArray]:
            n_operand, n_updates = shape_size(layout.operand), shape_size(layout.result_shape())
            both = spread(rng, (n_operand + n_updates,), dtype)
            return [both[:n_operand].reshape(layout.operand), ops[1].values(rng, ops[1].shape, ops[1].dtype),
                    both[n_operand:].reshape(layout.result_shape())]  # fmt: skip

        return case(name, params, ops, (0, 2), [], make_args=make_args)

    return Sampler(name, build, NUMBER)


SAMPLERS: dict[str, Sampler] = {
    "gather": Sampler("gather", _gather, ANY, linear=True),
    "scatter": Sampler("scatter", _scatter, ANY, linear=True),
    "scatter-add": _scatter_additive("scatter-add"),
    "scatter-sub": _scatter_additive("scatter-sub"),
    "scatter-mul": Sampler("scatter-mul", _scatter_mul, NUMBER, linear=True),
    "scatter-min": _scatter_extremal("scatter-min"),
    "scatter-max": _scatter_extremal("scatter-max"),
}
