"""Samplers of the structural primitives (``minijax/primitives/structural.py``) and of the
reductions and contractions (``minijax/primitives/reductions.py``).

Structural primitives only move data: they are linear in their data operands
and take every dtype. Their params are drawn valid from the operand shapes
(``slice`` limits within the shape, ``squeeze`` only of size-1 axes,
``pad`` with negative and interior padding, ``dynamic_slice`` start indices
out of range on both sides, which the primitive clamps). Reductions that are
not linear get values where they are smooth: ``reduce_max`` and ``argmax``
on pairwise distinct values, ``reduce_prod`` on values of moderate size with
some exact zeros (JAX's rule has a special case for them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax.testing import strategies as mst
from minijax.testing.cases import (
    ANY,
    INT,
    INT_BOOL,
    NUMBER,
    Case,
    Draw,
    NDArray,
    Operand,
    Sampler,
    Shape,
    case,
    distinct,
    indices,
    is_float,
    magnitude,
    moderate,
    shape,
    subset,
)

_I32 = np.dtype(np.int32)


def _data(s: Shape, dtype: np.dtype[Any]) -> Operand:
    return Operand(s, dtype, moderate())


def _broadcast_in_dim(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw)
    rank = len(x) + draw(st.integers(0, 2))
    dims = tuple(sorted(draw(st.permutations(range(rank)))[: len(x)]))  # increasing, as JAX requires
    out = [draw(st.integers(1, 3)) for _ in range(rank)]
    for n, d in zip(x, dims):
        if n != 1 or draw(st.booleans()):
            out[d] = n
    params = {"shape": tuple(out), "broadcast_dimensions": dims, "sharding": None}
    return case("broadcast_in_dim", params, [_data(x, dtype)], (0,), [(0,)])


def _reshape(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw)
    dims = tuple(draw(mst.permutations(len(x)))) if draw(st.integers(0, 3)) == 0 else None
    read = [x[d] for d in dims] if dims is not None else list(x)
    new: list[int] = []  # merge neighbouring sides and sprinkle 1s: another shape of the same size
    for n in read:
        merge = draw(st.booleans())
        if new and merge:
            new[-1] *= n
        else:
            new.append(n)
        if draw(st.integers(0, 4)) == 0:
            new.append(1)
    params = {"new_sizes": tuple(new), "dimensions": dims, "sharding": None}
    return case("reshape", params, [_data(x, dtype)], (0,), [(0,)])


def _transpose(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw, max_rank=4)
    return case("transpose", {"permutation": draw(mst.permutations(len(x)))}, [_data(x, dtype)], (0,), [(0,)])


def _squeeze(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = tuple(1 if draw(st.booleans()) else n for n in shape(draw, max_rank=4))
    ones = [i for i, n in enumerate(x) if n == 1]
    dims = tuple(i for i in ones if draw(st.booleans()))
    return case("squeeze", {"dimensions": dims}, [_data(x, dtype)], (0,), [(0,)])


def _rev(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw)
    return case("rev", {"dimensions": subset(draw, len(x), ordered=False)}, [_data(x, dtype)], (0,), [(0,)])


def _slice(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw, sides=st.integers(0, 5))
    starts = tuple(draw(st.integers(0, n)) for n in x)
    limits = tuple(draw(st.integers(s, n)) for s, n in zip(starts, x))
    strides = None if draw(st.booleans()) else tuple(draw(st.integers(1, 3)) for _ in x)
    params = {"start_indices": starts, "limit_indices": limits, "strides": strides}
    return case("slice", params, [_data(x, dtype)], (0,), [(0,)])


def _start_indices(x: Shape) -> list[Operand]:
    # Out of range on both sides: dynamic_slice and dynamic_update_slice clamp them.
    return [Operand((), _I32, indices(-2, n + 1)) for n in x]


def _dynamic_slice(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw)
    sizes = tuple(draw(st.integers(0, n)) for n in x)
    return case("dynamic_slice", {"slice_sizes": sizes}, [_data(x, dtype), *_start_indices(x)], (0,), [(0,)])


def _dynamic_update_slice(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw)
    update = tuple(draw(st.integers(0, n)) for n in x)
    ops = [_data(x, dtype), _data(update, dtype), *_start_indices(x)]
    return case("dynamic_update_slice", {}, ops, (0, 1), [(0, 1)])


def _concatenate(draw: Draw, dtype: np.dtype[Any]) -> Case:
    base = shape(draw, min_rank=1)
    dim = draw(st.integers(0, len(base) - 1))
    pieces = [base[:dim] + (draw(st.integers(0, 3)),) + base[dim + 1 :] for _ in range(draw(st.integers(1, 3)))]
    everything = tuple(range(len(pieces)))
    return case("concatenate", {"dimension": dim}, [_data(p, dtype) for p in pieces], everything, [everything])


def _pad(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw)
    config = []
    for n in x:
        lo, hi, interior = draw(st.integers(-2, 2)), draw(st.integers(-2, 2)), draw(st.integers(0, 2))
        size = lo + hi + n + max(n - 1, 0) * interior
        config.append((lo, hi - min(size, 0), interior))  # every result side >= 0
    ops = [_data(x, dtype), _data((), dtype)]
    return case("pad", {"padding_config": tuple(config)}, ops, (0, 1), [(0, 1)])


def _dim_as_value(draw: Draw, dtype: np.dtype[Any]) -> Case:
    # a concrete dimension (a symbolic one exists only inside jax.export's tracing; tests/test_aot.py)
    return case("dim_as_value", {"dim": draw(st.integers(0, 1000))}, [])


def _iota(draw: Draw, dtype: np.dtype[Any]) -> Case:
    s = shape(draw, min_rank=1)
    params = {"dtype": dtype, "shape": s, "dimension": draw(st.integers(0, len(s) - 1)), "sharding": None}
    return case("iota", params, [])


def _split(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw, min_rank=1, sides=st.integers(0, 5))
    axis = draw(st.integers(0, len(x) - 1))
    cuts = sorted(draw(st.lists(st.integers(0, x[axis]), max_size=3)))
    sizes = tuple(b - a for a, b in zip([0, *cuts], [*cuts, x[axis]]))
    return case("split", {"sizes": sizes, "axis": axis}, [_data(x, dtype)], (0,), [(0,)])


def _tile(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw)
    reps = tuple(draw(st.integers(0, 2)) for _ in x)
    return case("tile", {"reps": reps}, [_data(x, dtype)], (0,), [(0,)])


def _stack(draw: Draw, dtype: np.dtype[Any]) -> Case:
    s = shape(draw)
    n = draw(st.integers(1, 3))
    everything = tuple(range(n))
    return case("stack", {"axis": draw(st.integers(0, len(s)))}, [_data(s, dtype) for _ in range(n)],
                everything, [everything])  # fmt: skip


# ---------------------------------------------------------------------------
# Reductions and contractions


def _reduce_sum(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw)
    params = {"axes": subset(draw, len(x), ordered=False), "out_sharding": None}
    return case("reduce_sum", params, [_data(x, dtype)], (0,), [(0,)])


def _with_zeros(rng: np.random.Generator, s: Shape, dtype: np.dtype[Any]) -> NDArray:
    x = magnitude(0.5, 1.5)(rng, s, dtype)
    if is_float(dtype) and rng.random() < 0.3:  # some exact zeros, now and then
        x = np.where(rng.random(s) < 0.3, np.zeros((), dtype), x)
    return np.asarray(x)


def _reduce_prod(draw: Draw, dtype: np.dtype[Any]) -> Case:
    x = shape(draw)
    return case("reduce_prod", {"axes": subset(draw, len(x), ordered=False)}, [Operand(x, dtype, _with_zeros)], (0,))


def _reduce_extremum(name: str) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        # No empty axes: reducing nothing gives ±inf, whose tangent is NaN (in JAX too).
        x = shape(draw, sides=st.integers(1, 3))
        return case(name, {"axes": subset(draw, len(x), ordered=False)}, [Operand(x, dtype, distinct())], (0,))

    return Sampler(name, build, ANY)


def _reduce_logical(name: str) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        x = shape(draw)
        return case(name, {"axes": subset(draw, len(x), ordered=False)}, [Operand(x, dtype, moderate())])

    return Sampler(name, build, INT_BOOL, differentiable=False)


def _arg_reduction(name: str) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        x = shape(draw, min_rank=1)
        axis = draw(st.integers(0, len(x) - 1))
        x = x[:axis] + (draw(st.integers(1, 4)),) + x[axis + 1 :]  # argmax needs a non-empty axis
        params = {"axes": (axis,), "index_dtype": draw(st.sampled_from([_I32, np.dtype(np.int16)]))}
        return case(name, params, [Operand(x, dtype, distinct())])

    return Sampler(name, build, ANY, differentiable=False)


def _dot_general(draw: Draw, dtype: np.dtype[Any]) -> Case:
    batch = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))]
    contract = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))]

    def side() -> tuple[Shape, tuple[int, ...], tuple[int, ...]]:
        # Batch, contracting and free axes laid out in a random order.
        free = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))]
        roles = [("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))]
        order = draw(st.permutations(roles + [("f", i) for i in range(len(free))]))
        sizes = {"b": batch, "c": contract, "f": free}
        s = tuple(sizes[r][i] for r, i in order)
        b = tuple(order.index(("b", i)) for i in range(len(batch)))
        c = tuple(order.index(("c", i)) for i in range(len(contract)))
        return s, b, c

    (ls, lb, lc), (rs, rb, rc) = side(), side()
    params = {
        "dimension_numbers": ((lc, rc), (lb, rb)),
        "precision": None,
        "preferred_element_type": draw(st.sampled_from([None, dtype])),
        "out_sharding": None,
    }
    return case("dot_general", params, [_data(ls, dtype), _data(rs, dtype)], (0, 1), [(0,), (1,)])


SAMPLERS: dict[str, Sampler] = {
    "broadcast_in_dim": Sampler("broadcast_in_dim", _broadcast_in_dim, ANY, linear=True),
    "reshape": Sampler("reshape", _reshape, ANY, linear=True),
    "transpose": Sampler("transpose", _transpose, ANY, linear=True),
    "squeeze": Sampler("squeeze", _squeeze, ANY, linear=True),
    "rev": Sampler("rev", _rev, ANY, linear=True),
    "slice": Sampler("slice", _slice, ANY, linear=True),
    "dynamic_slice": Sampler("dynamic_slice", _dynamic_slice, ANY, linear=True),
    "dynamic_update_slice": Sampler("dynamic_update_slice", _dynamic_update_slice, ANY, linear=True),
    "concatenate": Sampler("concatenate", _concatenate, ANY, linear=True),
    "pad": Sampler("pad", _pad, ANY, linear=True),
    "iota": Sampler("iota", _iota, NUMBER, differentiable=False),
    "dim_as_value": Sampler("dim_as_value", _dim_as_value, INT, differentiable=False),  # polyexp (issue 20)
    "split": Sampler("split", _split, ANY, linear=True),
    "tile": Sampler("tile", _tile, ANY, linear=True),
    "stack": Sampler("stack", _stack, ANY, linear=True),
    "reduce_sum": Sampler("reduce_sum", _reduce_sum, NUMBER, linear=True),
    "reduce_prod": Sampler("reduce_prod", _reduce_prod, NUMBER),
    "reduce_max": _reduce_extremum("reduce_max"),
    "reduce_min": _reduce_extremum("reduce_min"),
    "reduce_and": _reduce_logical("reduce_and"),
    "reduce_or": _reduce_logical("reduce_or"),
    "reduce_xor": _reduce_logical("reduce_xor"),
    "argmax": _arg_reduction("argmax"),
    "argmin": _arg_reduction("argmin"),
    "dot_general": Sampler("dot_general", _dot_general, NUMBER, linear=True),
}
