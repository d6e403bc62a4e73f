"""``jax.scipy.interpolate``: ``RegularGridInterpolator``, linear or nearest
interpolation on a rectilinear grid (each axis strictly increasing), a pytree
whose leaves are the grid, the values and the fill value."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from minijax import numpy as jnp
from minijax.numpy.util import ArrayLike, check_arraylike, promote_dtypes_inexact
from minijax.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


def _points_array(points: Any, ndim: int | None = None) -> Any:
    """Query points as one ``(..., ndim)`` array, from a tuple of coordinate arrays or an array."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        parts = jnp.broadcast_arrays(*points)
        # JAX fills a float (default float) array, whatever the coordinates' dtype.
        stacked = jnp.empty(parts[0].shape + (len(points),), dtype=float)
        for j, part in enumerate(parts):
            stacked = stacked.at[..., j].set(part)
        return stacked
    check_arraylike("_ndim_coords_from_arrays", points)
    arr = jnp.asarray(points)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1) if ndim is None else arr.reshape(-1, ndim)
    return arr


class RegularGridInterpolator:
    """Interpolate ``values`` given on the grid ``points`` (one increasing 1-D array per axis).

    ``method`` is ``'linear'`` or ``'nearest'``; points outside the grid get
    ``fill_value`` (NaN by default; ``None`` extrapolates). ``bounds_error=True``
    is rejected, as JAX does: a data-dependent error cannot be raised under jit.
    """

    def __init__(
        self,
        points: Sequence[ArrayLike],
        values: ArrayLike,
        method: str = "linear",
        bounds_error: bool = False,
        fill_value: ArrayLike | None = np.nan,
    ) -> None:
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > np.ndim(values):
            raise ValueError(f"there are {len(points)} point arrays, but values has {np.ndim(values)} dimensions")
        (values_arr,) = promote_dtypes_inexact(values)
        fill: Any = None
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill = jnp.asarray(fill_value)
            if not jnp.can_cast(fill.dtype, values_arr.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible with values")
        self.fill_value = fill
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values_arr

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _points_array(xi, ndim=ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(
                f"the requested sample points xi have dimension {xi.shape[1]}, "
                f"but this RegularGridInterpolator has dimension {ndim}"
            )
        xi_shape = xi.shape
        xi = xi.reshape(-1, xi_shape[-1])
        indices, distances, outside = self._find_indices(xi.T)
        result = self._linear(indices, distances) if method == "linear" else self._nearest(indices, distances)
        if not self.bounds_error and self.fill_value is not None:
            outside = outside.reshape(result.shape[:1] + (1,) * (result.ndim - 1))
            result = jnp.where(outside, self.fill_value, result)
        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _linear(self, indices: list[Any], distances: list[Any]) -> Any:
        # The weight of a cell corner: per axis, 1 - t at the lower node, t at the upper.
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        total: Any = jnp.asarray(0.0)
        for corner in itertools.product(*[[i, i + 1] for i in indices]):
            weight: Any = jnp.asarray(1.0)
            for ci, i, t in zip(corner, indices, distances):
                weight = weight * jnp.where(ci == i, 1 - t, t)
            total = total + self.values[corner] * weight[trailing]
        return total

    def _nearest(self, indices: list[Any], distances: list[Any]) -> Any:
        return self.values[tuple(jnp.where(t <= 0.5, i, i + 1) for i, t in zip(indices, distances))]

    def _find_indices(self, xi: Any) -> tuple[list[Any], list[Any], Any]:
        """Per axis, each point's cell (clamped to the grid's cells) and position in it; and which points are outside."""
        indices, distances = [], []
        outside = jnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.searchsorted(g, x) - 1
            i = jnp.where(i < 0, 0, i)
            i = jnp.where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            distances.append((x - g[i]) / (g[i + 1] - g[i]))
            if not self.bounds_error:
                outside = outside | (x < g[0]) | (x > g[-1])
        return indices, distances, outside


def _flatten(obj: RegularGridInterpolator) -> tuple[tuple[Any, ...], tuple[str, bool]]:
    return (obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)


def _unflatten(aux: Any, children: Iterable[Any]) -> RegularGridInterpolator:
    # Not through __init__: the children may be tracers or placeholders (as in
    # tree_map over a pytree of objects), which __init__'s checks would reject.
    obj = object.__new__(RegularGridInterpolator)
    obj.method, obj.bounds_error = aux
    grid, values, fill = children
    obj.grid, obj.values, obj.fill_value = tuple(grid), values, fill
    return obj


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
