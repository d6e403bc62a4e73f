"""Samplers for the sorting primitives (``minijax/primitives/sorting.py``).

``sort`` and ``top_k`` permute their operands, so they are differentiable
wherever the keys have no ties: keys are drawn pairwise distinct (a shuffled
grid, ``distinct``), further operands of moderate size. ``cummax`` /
``cummin`` are smooth where no two entries of a lane tie, so they get
distinct values too. ``cumsum`` is linear; ``cumprod`` gets values of
moderate magnitude and ``cumlogsumexp`` moderate values (floats only).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax.testing.cases import (
    ANY,
    FLOAT,
    NUMBER,
    Case,
    Draw,
    Operand,
    Sampler,
    case,
    distinct,
    is_float,
    magnitude,
    moderate,
    shape,
)

_I32 = np.dtype(np.int32)


def _permuting(name: str, params: dict[str, Any], operands: list[Operand]) -> Case:
    """A case of a primitive that moves its operands' elements: differentiable in every float
    operand, even when some results are integers (top_k's indices, a sorted int32
    operand), which ``case`` would count against it."""
    base = case(name, params, operands)
    return dataclasses.replace(base, differentiable=tuple(i for i, op in enumerate(operands) if is_float(op.dtype)))


def _sort(draw: Draw, dtype: np.dtype[Any]) -> Case:
    s = shape(draw, min_rank=1)
    dimension = draw(st.integers(0, len(s) - 1))
    n = draw(st.integers(1, 3))
    num_keys = draw(st.integers(1, n))
    # The first key decides every comparison (its values are distinct); the
    # others are carried along, one of them now and then an int32 (as the
    # iota of argsort).
    operands = [Operand(s, dtype, distinct())]
    for _ in range(n - 1):
        operands.append(Operand(s, _I32 if draw(st.integers(0, 3)) == 0 else dtype, moderate()))
    params = {"dimension": dimension, "is_stable": draw(st.booleans()), "num_keys": num_keys}
    return _permuting("sort", params, operands)


def _top_k(draw: Draw, dtype: np.dtype[Any]) -> Case:
    s = shape(draw, min_rank=1)
    axis = draw(st.integers(0, len(s) - 1))
    params = {"k": draw(st.integers(0, s[axis])), "axis": axis}
    return _permuting("top_k", params, [Operand(s, dtype, distinct())])


def _cumulative(name: str, values: Any, kinds: tuple[str, ...], linear: bool = False) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        s = shape(draw, min_rank=1)
        params = {"axis": draw(st.integers(0, len(s) - 1)), "reverse": draw(st.booleans())}
        return case(name, params, [Operand(s, dtype, values)], (0,), [(0,)] if linear else [])

    return Sampler(name, build, kinds, linear=linear)


SAMPLERS: dict[str, Sampler] = {
    "sort": Sampler("sort", _sort, ANY),
    "top_k": Sampler("top_k", _top_k, ANY),
    "cumsum": _cumulative("cumsum", moderate(), NUMBER, linear=True),
    "cumprod": _cumulative("cumprod", magnitude(0.5, 1.5), NUMBER),
    "cummax": _cumulative("cummax", distinct(), NUMBER),
    "cummin": _cumulative("cummin", distinct(), NUMBER),
    "cumlogsumexp": _cumulative("cumlogsumexp", moderate(), FLOAT),
}
