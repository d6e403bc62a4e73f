"""``pure_callback`` and ``io_callback``: call Python functions that return arrays.

Both take the function, a pytree of ``ShapeDtypeStruct`` (anything with
``shape`` and ``dtype``) describing what it returns, and its arguments (pytrees
of arrays). The function receives minijax Arrays and may return anything
``np.asarray`` accepts; the results are checked against the description when
they come back (a wrong shape or dtype raises RuntimeError).

``pure_callback`` promises a pure function: a compiled program may drop the
call when its results are unused, and ``vmap`` may call it once per batch
element or once on the whole batch, as ``vmap_method`` says. ``io_callback``
is for functions with side effects: it is always called, and ``ordered=True``
keeps such calls in program order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax import dtypes, tree_util
from minijax.core import ShapedArray, is_array_like
from minijax.primitives.callbacks import VMAP_METHODS, FlatCallback, io_callback_p, pure_callback_p


def _result_avals(name: str, result_shape_dtypes: Any) -> tuple[tuple[ShapedArray, ...], tree_util.PyTreeDef]:
    """The avals the callback's results must have, and their pytree structure."""
    leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(
                f"{name}: every leaf of result_shape_dtypes must have a shape and a dtype "
                f"(use minijax.ShapeDtypeStruct), got {leaf!r} of type {type(leaf).__name__}."
            )
        dtype = np.dtype(leaf.dtype)
        if dtypes.canonicalize_dtype(dtype) != dtype:
            raise ValueError(
                f"{name}: result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is "
                f"disabled (got {dtype.name}); ask for {dtypes.canonicalize_dtype(dtype).name} instead."
            )
        avals.append(ShapedArray(leaf.shape, dtype))
    return tuple(avals), out_tree


def _flat_operands(
    name: str, callback: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], FlatCallback]:
    if not callable(callback):
        raise TypeError(f"{name}: the callback must be callable, got an object of type {type(callback).__name__}.")
    flat, in_tree = tree_util.tree_flatten((args, kwargs))
    for i, x in enumerate(flat):
        if not is_array_like(x):
            raise TypeError(
                f"Error interpreting argument to {name} as a JAX value. The problematic value is of "
                f"type {type(x)} and was passed to {name} at position {i}. Pass arrays (or close over "
                "other Python values in the callback)."
            )
    return flat, FlatCallback(callback, in_tree)


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    vmap_method: str | None = None,
    **kwargs: Any,
) -> Any:
    """Call the pure function ``callback(*args, **kwargs)`` on the host.

    ``vmap_method`` says what ``vmap`` does with the call: ``"sequential"``
    (once per batch element), ``"sequential_unrolled"`` (the same, unrolled),
    ``"expand_dims"`` (once, unbatched arguments given a leading axis of size
    1), ``"broadcast_all"`` (once, every argument broadcast to the batch),
    ``"legacy_vectorized"`` (once, unbatched arguments left as they are);
    ``None`` makes vmap an error. Other keyword arguments go to the callback.
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {list(VMAP_METHODS)}, but got: {vmap_method}")
    flat, flat_callback = _flat_operands("pure_callback", callback, args, kwargs)
    result_avals, out_tree = _result_avals("pure_callback", result_shape_dtypes)
    outs = pure_callback_p.bind(
        *flat, callback=flat_callback, result_avals=result_avals, sharding=sharding, vmap_method=vmap_method
    )
    return tree_util.tree_unflatten(out_tree, outs)


def io_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    ordered: bool = False,
    **kwargs: Any,
) -> Any:
    """Call the impure function ``callback(*args, **kwargs)`` on the host.

    The call is never dropped. ``ordered=True`` keeps it in program order
    relative to the other ordered callbacks (and makes it an error to vmap).
    Other keyword arguments go to the callback.
    """
    flat, flat_callback = _flat_operands("io_callback", callback, args, kwargs)
    result_avals, out_tree = _result_avals("io_callback", result_shape_dtypes)
    outs = io_callback_p.bind(
        *flat, callback=flat_callback, result_avals=result_avals, sharding=sharding, ordered=ordered
    )
    return tree_util.tree_unflatten(out_tree, outs)


def effects_barrier() -> None:
    """Wait until every callback of the programs started so far has run.

    Nothing is ever pending in minijax: a program that calls back into Python
    returns only after its callbacks ran (on every backend), so this returns
    at once. It exists so that JAX programs calling it run unchanged.
    """


__all__ = ["effects_barrier", "io_callback", "pure_callback"]
