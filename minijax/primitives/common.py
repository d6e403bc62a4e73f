"""Helpers the primitive families share to state their shape and dtype rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import Primitive, ShapedArray, abstract_eval_rules


def accepts(dtype: np.dtype[Any], classes: Sequence[type]) -> bool:
    """Whether ``dtype`` belongs to one of the NumPy abstract dtype ``classes``."""
    return any(dtypes.issubdtype(dtype, c) for c in classes)


def broadcasting_shape(prim_name: str, *avals: ShapedArray) -> tuple[int, ...]:
    """The result shape of an n-ary elementwise primitive.

    Like JAX's lax: rank-0 operands broadcast against anything; the other
    operands must have the same rank, and each dimension must agree or be 1.
    """
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise TypeError(f"{prim_name}: arrays must have the same number of dimensions, got {set(ranks)}")
    result = []
    for dims in zip(*shapes):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TypeError(
                f"{prim_name} got incompatible shapes for broadcasting: "
                + ", ".join(str(tuple(s)) for s in shapes)
                + "."
            )
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def standard_primitive(name: str, rule: Callable[..., Any], multiple_results: bool = False) -> Primitive:
    """A new primitive with its abstract-eval rule registered."""
    prim = Primitive(name, multiple_results)
    abstract_eval_rules[prim] = rule
    return prim
