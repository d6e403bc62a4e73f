"""``jax.scipy.ndimage``: ``map_coordinates``, interpolation of an array at
fractional coordinates (order 0: nearest, order 1: linear), with SciPy's
boundary modes.

Every output point is a weighted sum over the ``2**ndim`` (order 1) or one
(order 0) grid neighbours; each neighbour's index is folded back into the
array by the mode, and in ``'constant'`` mode a neighbour outside contributes
``cval`` instead.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes, lax, numpy as jnp
from minijax.numpy.util import ArrayLike
from minijax.stages import jit

__all__ = ["map_coordinates"]


def _mirror(index: Any, size: int) -> Any:
    # A triangle wave of half-period size - 1: ... 2 1 [0 1 2 ... n-1] n-2 ...
    half = size - 1
    return jnp.abs((index + half) % (2 * half) - half)


def _reflect(index: Any, size: int) -> Any:
    # The edge sample repeats: ... 1 0 [0 1 ... n-1] n-1 n-2 ...; the mirror of
    # the doubled grid, halved.
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_FOLD: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(a: Any) -> Any:
    return a if dtypes.issubdtype(a.dtype, np.integer) else lax.round(a)


def _nearest(coordinate: Any) -> list[tuple[Any, Any]]:
    return [(_round_half_away(coordinate).astype(np.int32), coordinate.dtype.type(1))]


def _linear(coordinate: Any) -> list[tuple[Any, Any]]:
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


@functools.partial(jit, static_argnums=(2, 3, 4))
def _map_coordinates(input: Any, coordinates: Sequence[Any], order: int, mode: str, cval: Any) -> Any:  # noqa: A002
    image = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    fill = jnp.asarray(cval, image.dtype)
    if len(coords) != image.ndim:
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but {len(coords)} != {image.ndim}")
    fold = _FOLD.get(mode)
    if fold is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_FOLD)}."
        )
    if order == 0:
        neighbours = _nearest
    elif order == 1:
        neighbours = _linear
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
    per_axis = []
    for coordinate, size in zip(coords, image.shape):
        nodes = []
        for index, weight in neighbours(coordinate):
            inside: Any = ((index >= 0) & (index < size)) if mode == "constant" else True
            nodes.append((fold(index, size), inside, weight))
        per_axis.append(nodes)
    terms = []
    for corner in itertools.product(*per_axis):
        indices = tuple(c[0] for c in corner)
        insides = [c[1] for c in corner]
        weights = [c[2] for c in corner]
        value = image[indices]
        if not all(v is True for v in insides):
            value = jnp.where(functools.reduce(operator.and_, insides), value, fill)
        terms.append(functools.reduce(operator.mul, weights) * value)
    result = functools.reduce(operator.add, terms)
    if dtypes.issubdtype(image.dtype, np.integer):
        result = _round_half_away(result)
    return result.astype(image.dtype)


def map_coordinates(
    input: ArrayLike,  # noqa: A002
    coordinates: Sequence[ArrayLike],
    order: int,
    mode: str = "constant",
    cval: ArrayLike = 0.0,
) -> Any:
    """``input`` interpolated at ``coordinates`` (one array per axis of ``input``), as SciPy's.

    ``order`` is 0 (nearest) or 1 (linear); ``mode`` is ``'constant'`` (``cval``
    outside), ``'nearest'``, ``'wrap'``, ``'mirror'`` or ``'reflect'``.
    """
    return _map_coordinates(input, coordinates, order, mode, cval)
