"""``jnp.pad``: every NumPy padding mode, as JAX 0.10.2 implements it.

The widths (and ``stat_length``, ``end_values``) are normalised to one
(before, after) pair per axis. Each mode then pads one axis at a time with
``lax.pad`` or by concatenating slices of the array: ``edge`` repeats the
border, ``wrap`` tiles, ``reflect``/``symmetric`` mirror (with ``odd``
reflection mirroring through the border value), ``linear_ramp`` runs a
linspace from ``end_values`` to the border, the statistic modes repeat the
max/min/mean/median of (the first/last ``stat_length`` of) the axis, and a
callable mode is applied to every 1-D slice after zero padding.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from minijax import core, dtypes, lax, tree_util
from minijax.numpy import util
from minijax.numpy.namespace import jnp
from minijax.numpy.numerical import median
from minijax.numpy.util import ArrayLike
from minijax.vectorization import vmap

__all__ = ["pad"]

Pairs = tuple[tuple[Any, Any], ...]


def _to_pairs(values: Any, nd: int, name: str) -> Pairs:
    """``values`` as one (before, after) pair per axis, from any of NumPy's forms."""
    concrete = tree_util.tree_map(lambda v: core.concrete_or_error(v, f"{name} argument of jnp.pad"), values)
    try:
        arr = np.asarray(concrete)
    except ValueError as e:
        if "inhomogeneous" in str(e):
            raise TypeError(f"`{name}` entries must be the same shape: {values}") from e
        raise
    if arr.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if arr.shape == (nd, 2):
        return tuple((row[0], row[1]) for row in arr)
    if arr.shape == (1, 2):
        return ((arr[0, 0], arr[0, 1]),) * nd
    if arr.shape == (2,):
        return ((arr[0], arr[1]),) * nd
    if arr.shape in ((1,), ()):
        v = arr.reshape(-1)[0]
        return ((v, v),) * nd
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {arr.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _no_padding_of_empty(widths: tuple[int, int], mode: str) -> None:
    if widths[0] > 0 or widths[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _convert_like(value: Any, array: Any) -> Any:
    return util.convert_element_type(value, array.dtype, dtypes.is_weakly_typed(array))


def _pad_constant(array: Any, widths: Pairs, constant_values: Any) -> Any:
    nd = array.ndim
    values = _convert_like(jnp.asarray(constant_values), array)
    if values.ndim == 0 or (values.ndim == 1 and values.shape[0] == 1):
        return lax.pad(array, values.reshape(()), [(lo, hi, 0) for lo, hi in widths])
    if values.ndim == 1 and values.shape[0] != 2:
        raise ValueError(f"jnp.pad: constant_values has unsupported shape {values.shape}. If the shape is 1D or 2D, "
                         "the last dimension must be of size 1 or 2.")
    values = jnp.broadcast_to(values, (nd, 2))
    for i, (lo, hi) in enumerate(widths):
        for side, width in ((0, lo), (1, hi)):
            if width:
                config = [(0, 0, 0)] * nd
                config[i] = (width, 0, 0) if side == 0 else (0, width, 0)
                array = lax.pad(array, values[i, side], config)
    return array


def _pad_wrap(array: Any, widths: Pairs) -> Any:
    for i, (lo, hi) in enumerate(widths):
        size = array.shape[i]
        if size == 0:
            _no_padding_of_empty((lo, hi), "wrap")
            continue
        left_reps, left_rem = divmod(lo, size)
        right_reps, right_rem = divmod(hi, size)
        parts = []
        if left_rem:
            parts.append(lax.slice_in_dim(array, size - left_rem, size, axis=i))
        parts += [array] * (left_reps + right_reps + 1)
        if right_rem:
            parts.append(lax.slice_in_dim(array, 0, right_rem, axis=i))
        array = lax.concatenate(parts, i)
    return array


def _mirror(array: Any, axis: int, size: int, padding: int, before: bool, mode: str, odd: bool) -> Any:
    """Mirror ``padding`` elements onto one side of ``axis``, in chunks at most the original
    axis length ``size`` (after the first side is padded, the mirror reaches into that padding too)."""
    # 'reflect' leaves the border element out of the mirror image (unless the axis has one element).
    offset = 1 if (mode == "reflect" and size > 1) else 0
    edge = lax.slice_in_dim(array, 0, 1, axis=axis) if before else lax.slice_in_dim(array, -1, None, axis=axis)
    while padding > 0:
        chunk = builtins.min(padding, size - offset)
        padding -= chunk
        if before:
            piece = lax.slice_in_dim(array, offset, offset + chunk, axis=axis)
        else:
            stop = None if (mode == "symmetric" or size == 1) else -1
            piece = lax.slice_in_dim(array, -(chunk + offset), stop, axis=axis)
        piece = jnp.flip(piece, axis=axis)
        if odd:
            piece = 2 * edge - piece
            if size > 1:
                edge = lax.slice_in_dim(piece, 0, 1, axis=axis) if before else lax.slice_in_dim(piece, -1, None, axis=axis)
        array = lax.concatenate([piece, array] if before else [array, piece], axis)
    return array


def _pad_mirror(array: Any, widths: Pairs, mode: str, reflect_type: str) -> Any:
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"reflect_type must be 'even' or 'odd'; got {reflect_type!r}")
    for i, (lo, hi) in enumerate(widths):
        if array.shape[i] == 0:
            _no_padding_of_empty((lo, hi), mode)
            continue
        size = array.shape[i]
        array = _mirror(array, i, size, lo, True, mode, reflect_type == "odd")
        array = _mirror(array, i, size, hi, False, mode, reflect_type == "odd")
    return array


def _pad_edge(array: Any, widths: Pairs) -> Any:
    for i, (lo, hi) in enumerate(widths):
        n = array.shape[i]
        if n == 0:
            _no_padding_of_empty((lo, hi), "edge")
            continue
        before = jnp.repeat(lax.slice_in_dim(array, 0, 1, axis=i), lo, axis=i)
        after = jnp.repeat(lax.slice_in_dim(array, n - 1, n, axis=i), hi, axis=i)
        array = lax.concatenate([before, array, after], i)
    return array


def _pad_linear_ramp(array: Any, widths: Pairs, end_values: Pairs) -> Any:
    weak = dtypes.is_weakly_typed(array)
    for i, (lo, hi) in enumerate(widths):
        first = lax.slice_in_dim(array, 0, 1, axis=i).squeeze(i)
        last = lax.slice_in_dim(array, -1, None, axis=i).squeeze(i)
        ramp_before = jnp.linspace(end_values[i][0], first, lo, endpoint=False, dtype=array.dtype, axis=i)
        ramp_after = jnp.linspace(end_values[i][1], last, hi, endpoint=False, dtype=array.dtype, axis=i)
        ramp_before = util.convert_element_type(ramp_before, array.dtype, weak)
        ramp_after = util.convert_element_type(jnp.flip(ramp_after, i), array.dtype, weak)
        array = lax.concatenate([ramp_before, array, ramp_after], i)
    return array


def _pad_stats(array: Any, widths: Pairs, stat_length: Pairs | None, stat: Callable[..., Any]) -> Any:
    for i, (lo, hi) in enumerate(widths):
        if stat_length is None:
            before = after = stat(array, axis=i, keepdims=True)
        else:
            n = array.shape[i]
            len_before, len_after = stat_length[i]
            if len_before == 0 or len_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            len_before, len_after = builtins.min(len_before, n), builtins.min(len_after, n)
            before = stat(lax.slice_in_dim(array, 0, len_before, axis=i), axis=i, keepdims=True)
            after = stat(lax.slice_in_dim(array, n - len_after, n, axis=i), axis=i, keepdims=True)
        if dtypes.issubdtype(array.dtype, np.integer):
            before, after = jnp.round(before), jnp.round(after)
        before, after = _convert_like(before, array), _convert_like(after, array)
        array = lax.concatenate([jnp.repeat(before, lo, axis=i), array, jnp.repeat(after, hi, axis=i)], i)
    return array


def _pad_empty(array: Any, widths: Pairs) -> Any:
    # Arrays are immutable: "uninitialised" padding is zeros, as jnp.empty is.
    return _pad_constant(array, widths, 0)


def _along_axis(func: Callable[..., Any], axis: int, array: Any, *args: Any) -> Any:
    """``func`` applied to every 1-D slice along ``axis`` (a vmap over the other axes)."""


    moved = jnp.moveaxis(array, axis, -1)
    batch = moved.shape[:-1]
    flat = moved.reshape((-1, moved.shape[-1]))
    out = vmap(lambda v: func(v, *args))(flat)
    return jnp.moveaxis(out.reshape(batch + out.shape[1:]), -1, axis)


def _pad_callable(array: Any, widths: Pairs, func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    padded = _pad_constant(array, widths, 0)
    for axis in range(padded.ndim):
        padded = _along_axis(func, axis, padded, widths[axis], axis, kwargs)
    return padded


_ALLOWED = {
    "empty": (), "edge": (), "wrap": (), "constant": ("constant_values",), "linear_ramp": ("end_values",),
    "maximum": ("stat_length",), "mean": ("stat_length",), "median": ("stat_length",), "minimum": ("stat_length",),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}


def pad(array: ArrayLike, pad_width: Any, mode: str | Callable[..., Any] = "constant", **kwargs: Any) -> Any:
    """``array`` padded by ``pad_width`` (an int, a pair, or a pair per axis) in ``mode``.

    Modes: 'constant' (``constant_values``), 'edge', 'linear_ramp'
    (``end_values``), 'maximum'/'minimum'/'mean'/'median' (``stat_length``),
    'reflect'/'symmetric' (``reflect_type`` 'even' or 'odd'), 'wrap', 'empty',
    or a callable ``f(vector, iaxis_pad_width, iaxis, kwargs)`` returning the
    padded vector (given zero-padded).
    """
    util.check_arraylike("pad", array)
    arr = jnp.asarray(array)
    nd = arr.ndim
    widths = _to_pairs(pad_width, nd, "pad_width")
    if widths and not builtins.all(_is_int(lo) and _is_int(hi) for lo, hi in widths):
        raise TypeError("`pad_width` must be of integral type.")
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    if callable(mode):
        return _pad_callable(arr, widths, mode, kwargs)
    if mode not in _ALLOWED:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_ALLOWED[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if nd == 0:
        return arr
    if builtins.any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(arr, widths, kwargs.get("constant_values", 0))
    if mode == "wrap":
        return _pad_wrap(arr, widths)
    if mode in ("reflect", "symmetric"):
        return _pad_mirror(arr, widths, mode, kwargs.get("reflect_type", "even"))
    if mode == "edge":
        return _pad_edge(arr, widths)
    if mode == "linear_ramp":
        return _pad_linear_ramp(arr, widths, _to_pairs(kwargs.get("end_values", 0), nd, "end_values"))
    if mode == "empty":
        return _pad_empty(arr, widths)
    stat_length = kwargs.get("stat_length")
    pairs = None if stat_length is None else _to_pairs(stat_length, nd, "stat_length")
    stats: dict[str, Callable[..., Any]] = {
        "maximum": jnp.amax, "minimum": jnp.amin, "mean": jnp.mean, "median": median,
    }
    return _pad_stats(arr, widths, None if pairs is None else tuple((int(a), int(b)) for a, b in pairs), stats[mode])


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
