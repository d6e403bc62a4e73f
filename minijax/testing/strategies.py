"""Hypothesis strategies for minijax's values: dtypes, shapes, avals and arrays with edge values.

Every strategy reads the x64 flag when it is *built*: build them inside the
test (or under ``enable_x64``) to get 64-bit dtypes. Arrays are NumPy arrays
of the requested dtype; pass them to minijax functions directly.

Edge values: ``arrays(..., edges=True)`` (the default) mixes three kinds of
elements, so that a few dozen examples reach the corners: the dtype's edge
values (±0, ±1, ±inf, NaN, the largest and smallest normal and subnormal
numbers, 1 - eps/2; for integers 0, ±1, the minimum and maximum and values
around the bit width, which matter to shifts), moderate values, and
arbitrary bit patterns.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax import dtypes as _dtypes
from minijax.config import x64_enabled
from minijax.core import ShapedArray, shape_size

Shape = tuple[int, ...]
NDArray = np.ndarray[Any, Any]

BOOL = np.dtype(np.bool_)
BFLOAT16 = np.dtype(_dtypes.bfloat16)

_KINDS = ("bool", "int", "uint", "float")
_BY_KIND: dict[str, tuple[np.dtype[Any], ...]] = {
    "bool": (BOOL,),
    "int": tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)),
    "uint": tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)),
    "float": (np.dtype(np.float16), BFLOAT16, np.dtype(np.float32), np.dtype(np.float64)),
}
_WIDE = {np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.float64)}
_BITS_CARRIER: dict[int, np.dtype[Any]] = {
    1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64),
}  # fmt: skip


# ---------------------------------------------------------------------------
# Dtypes


def dtype_list(kinds: Sequence[str] = _KINDS) -> list[np.dtype[Any]]:
    """The dtypes of the given kinds ("bool", "int", "uint", "float") minijax computes in now.

    Without x64 the 64-bit dtypes are left out (values of them would be
    converted to 32 bits anyway).
    """
    unknown = sorted(set(kinds) - set(_KINDS))
    if unknown:
        raise ValueError(f"dtype_list: unknown kinds {unknown}; the kinds are {list(_KINDS)}")
    x64 = x64_enabled()
    return [d for k in kinds for d in _BY_KIND[k] if x64 or d not in _WIDE]


def dtypes(kinds: Sequence[str] = _KINDS) -> st.SearchStrategy[np.dtype[Any]]:
    """One dtype of the given kinds (see ``dtype_list``)."""
    return st.sampled_from(dtype_list(kinds))


def float_dtypes(low_precision: bool = True) -> st.SearchStrategy[np.dtype[Any]]:
    """A floating dtype; ``low_precision=False`` leaves out float16 and bfloat16."""
    choices = dtype_list(["float"])
    if not low_precision:
        choices = [d for d in choices if d.itemsize >= 4]
    return st.sampled_from(choices)


# ---------------------------------------------------------------------------
# Shapes and axes


def shapes(min_rank: int = 0, max_rank: int = 3, min_side: int = 0, max_side: int = 4) -> st.SearchStrategy[Shape]:
    """An array shape; zero-size dimensions are included unless ``min_side`` > 0."""
    side = st.integers(min_side, max_side)
    return st.integers(min_rank, max_rank).flatmap(lambda r: st.tuples(*[side] * r))


def broadcastable_shapes(shape: Shape) -> st.SearchStrategy[Shape]:
    """A shape lax's n-ary operations broadcast to ``shape``: rank 0, or ``shape`` with some sides 1."""
    same_rank = st.tuples(*[st.sampled_from([n, 1]) for n in shape])
    return st.one_of(st.just(()), same_rank) if shape else st.just(())


def axes_subsets(ndim: int, ordered: bool = True) -> st.SearchStrategy[tuple[int, ...]]:
    """A subset of ``range(ndim)`` (sorted, or in any order with ``ordered=False``)."""
    subsets = st.lists(st.booleans(), min_size=ndim, max_size=ndim).map(
        lambda keep: tuple(i for i, k in enumerate(keep) if k)
    )
    return subsets if ordered else subsets.flatmap(lambda s: st.permutations(s).map(tuple))


def permutations(ndim: int) -> st.SearchStrategy[tuple[int, ...]]:
    return st.permutations(range(ndim)).map(tuple)


def avals(
    kinds: Sequence[str] = _KINDS, min_rank: int = 0, max_rank: int = 3, max_side: int = 4
) -> st.SearchStrategy[ShapedArray]:
    """An abstract value: a shape, a dtype and a weak-type flag (weak only for int/float)."""

    def build(shape: Shape, dtype: np.dtype[Any], weak: bool) -> ShapedArray:
        return ShapedArray(shape, dtype, weak and dtype != BOOL)

    return st.builds(build, shapes(min_rank, max_rank, 0, max_side), dtypes(kinds), st.booleans())


# ---------------------------------------------------------------------------
# Elements and arrays


def _as_bits(values: Sequence[Any], dtype: np.dtype[Any]) -> list[int]:
    """The bit patterns of ``values`` in ``dtype``, as unsigned ints (integers wrap around)."""
    if dtype.kind in "iu":
        return [int(v) % 2 ** (8 * dtype.itemsize) for v in values]
    with np.errstate(over="ignore", invalid="ignore"):
        arr = np.array(values, dtype=np.float64).astype(dtype)
    return [int(b) for b in arr.view(_BITS_CARRIER[dtype.itemsize])]


def edge_values(dtype: Any) -> list[Any]:
    """The values of ``dtype`` where implementations tend to differ (see the module doc)."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return [False, True]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        nbits = 8 * dtype.itemsize
        candidates = [0, 1, -1, 2, int(info.min), int(info.max), int(info.min) + 1, int(info.max) - 1,
                      nbits - 1, nbits, nbits + 1]  # fmt: skip
        return sorted({v for v in candidates if info.min <= v <= info.max})
    fi = _dtypes.finfo(dtype)
    tiny, sub, big, eps = float(fi.tiny), float(fi.smallest_subnormal), float(fi.max), float(fi.eps)
    return [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, np.inf, -np.inf, np.nan, big, -big,
            tiny, -tiny, sub, -sub, 3 * sub, eps, 1 - eps / 2, -(1 - eps / 2)]  # fmt: skip


@functools.cache
def _element_bits(dtype: np.dtype[Any], edges: bool) -> st.SearchStrategy[int]:
    if dtype == BOOL:
        return st.integers(0, 1)
    nbits = 8 * dtype.itemsize
    any_pattern = st.integers(0, 2**nbits - 1)
    if dtype.kind in "iu":
        moderate = st.integers(-3, 70).map(lambda v: v % 2**nbits if dtype.kind == "i" else abs(v))
    else:
        moderate = st.one_of(st.floats(-12, 12), st.floats(-1, 1)).map(lambda v: _as_bits([v], dtype)[0])
    if not edges:
        return moderate
    return st.one_of(st.sampled_from(_as_bits(edge_values(dtype), dtype)), moderate, any_pattern)


def arrays(dtype: Any, shape: Shape, edges: bool = True) -> st.SearchStrategy[NDArray]:
    """A NumPy array of ``dtype`` and ``shape``.

    With ``edges`` (the default) elements are edge values, moderate values
    or arbitrary bit patterns (NaN payloads and subnormals included); without,
    only moderate values (floats in [-12, 12], small integers).
    """
    dtype = np.dtype(dtype)
    n = shape_size(shape)
    carrier: np.dtype[Any] = np.dtype(np.uint8) if dtype == BOOL else _BITS_CARRIER[dtype.itemsize]

    def build(bits: list[int]) -> NDArray:
        return np.asarray(np.array(bits, dtype=carrier).view(dtype).reshape(shape))

    return st.lists(_element_bits(dtype, edges), min_size=n, max_size=n).map(build)


def arrays_in(dtype: Any, shape: Shape, low: float, high: float) -> st.SearchStrategy[NDArray]:
    """An array with every element in [low, high] (integers: rounded inward), no edge values."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        element: st.SearchStrategy[Any] = st.booleans()
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        element = st.integers(max(int(np.ceil(low)), int(info.min)), min(int(np.floor(high)), int(info.max)))
    else:
        element = st.floats(low, high, allow_nan=False, allow_infinity=False)
    n = shape_size(shape)
    # Floats are drawn in float64 and rounded, which may round onto the bounds: still inside.
    carrier: np.dtype[Any] = dtype if dtype.kind in "iu" else np.dtype(np.float64)
    return st.lists(element, min_size=n, max_size=n).map(lambda v: np.array(v, carrier).astype(dtype).reshape(shape))


def seeds() -> st.SearchStrategy[np.random.Generator]:
    """A NumPy random generator seeded by hypothesis (for values too many to draw one by one)."""
    return st.integers(0, 2**32 - 1).map(np.random.default_rng)


__all__ = [
    "BFLOAT16",
    "BOOL",
    "arrays",
    "arrays_in",
    "avals",
    "axes_subsets",
    "broadcastable_shapes",
    "dtype_list",
    "dtypes",
    "edge_values",
    "float_dtypes",
    "permutations",
    "seeds",
    "shapes",
]
