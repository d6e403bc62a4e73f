"""``lax`` windowed reductions, as in ``jax.lax``: reduce_window and reduce_window_shape_tuple.

``reduce_window`` turns its arguments into the params of the primitives in
``minijax/primitives/windowed.py``: padding names become explicit pads
(``padtype_to_pads``, on the window extent after window dilation), absent
strides and dilations become 1s. Like JAX it binds the specialised primitive
(reduce_window_sum/max/min) when the computation is ``lax.add``/``max``/``min``
of a single operand and the init value is a concrete scalar equal to its
identity, and the generic ``reduce_window`` (the computation traced to a
jaxpr) otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import tree_util
from minijax.core import Primitive, Tracer, get_aval
from minijax.lax import elementwise as ew
from minijax.lax.padding import padtype_to_pads
from minijax.lax.structural import _asarray
from minijax.primitives.reductions import reduction_identity
from minijax.primitives.windowed import (
    check_window,
    dilate_shape,
    reduce_window_max_p,
    reduce_window_min_p,
    reduce_window_p,
    reduce_window_shape_tuple,
    reduce_window_sum_p,
    reduction_jaxpr,
    select_and_gather_add_p,
    select_and_scatter_add_p,
)

__all__ = [
    "reduce_window",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_shape_tuple",
    "reduce_window_sum_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
]

# lax function -> (the specialised primitive, the reduce_* whose identity its init value must be).
_MONOIDS: dict[Callable[..., Any], tuple[Primitive, str]] = {
    ew.add: (reduce_window_sum_p, "reduce_sum"),
    ew.max: (reduce_window_max_p, "reduce_max"),
    ew.min: (reduce_window_min_p, "reduce_min"),
}


def _monoid(computation: Callable[..., Any], inits: Sequence[Any]) -> Primitive | None:
    """The specialised primitive ``computation`` with this init value reduces by, if any (JAX's rule)."""
    found = _MONOIDS.get(computation)
    if found is None or len(inits) != 1 or isinstance(inits[0], Tracer):
        return None
    aval = get_aval(inits[0])
    if aval.shape != ():
        return None
    value = np.asarray(inits[0])
    return found[0] if value == reduction_identity(found[1], aval.dtype) else None


def reduce_window(
    operand: Any,
    init_value: Any,
    computation: Callable[[Any, Any], Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: str | Sequence[tuple[int, int]] = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduce every window of ``operand`` (an array or a pytree of arrays) with ``computation``.

    ``init_value`` (a scalar, or a pytree of them matching ``operand``) starts
    each window's reduction and fills the padding and the holes of the base
    dilation. ``padding`` is ``'VALID'``, ``'SAME'``, ``'SAME_LOWER'`` or one
    ``(low, high)`` pair per dimension. Returns arrays of the shape
    ``reduce_window_shape_tuple`` gives, in ``operand``'s structure.
    """
    flat_operands, tree = tree_util.tree_flatten(operand)
    flat_inits, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} vs. {init_tree}")
    if len(flat_operands) != len(flat_inits):
        raise ValueError(f"Must have same total number of operands as init_values:  {len(flat_operands)} vs. {len(flat_inits)}")
    if not flat_operands:
        raise ValueError("reduce_window must have at least one operand.")
    flat_operands = [_asarray(x) for x in flat_operands]
    flat_inits = [_asarray(x) for x in flat_inits]
    shape = get_aval(flat_operands[0]).shape
    if len(window_dimensions) != len(shape):  # window C3, checked before the padding name is read
        raise TypeError(
            "reduce_window got the wrong number of window_dimensions for operand: "
            f"got operand shape {shape} with window_dimensions {tuple(window_dimensions)}."
        )
    if isinstance(padding, str):
        extent = window_dimensions if window_dilation is None else dilate_shape(window_dimensions, window_dilation)
        strides = (1,) * len(window_dimensions) if window_strides is None else window_strides
        pads = tuple(padtype_to_pads(shape, extent, strides, padding))
    else:
        pads = tuple((lo, hi) for lo, hi in padding)
    ones = (1,) * len(window_dimensions)
    params = dict(
        window_dimensions=tuple(window_dimensions),
        window_strides=ones if window_strides is None else tuple(window_strides),
        padding=pads,
        base_dilation=ones if base_dilation is None else tuple(base_dilation),
        window_dilation=ones if window_dilation is None else tuple(window_dilation),
    )
    check_window(get_aval(flat_operands[0]), **params)  # JAX's messages, before a primitive prefixes its name
    prim = _monoid(computation, flat_inits)
    if prim is not None:
        return tree_util.tree_unflatten(tree, [prim.bind(flat_operands[0], **params)])
    out_tree: list[Any] = []

    def flatten(result: Any) -> list[Any]:
        leaves, structure = tree_util.tree_flatten(result)
        out_tree.append(structure)
        return leaves

    jaxpr, consts = reduction_jaxpr(
        computation, [get_aval(x) for x in flat_inits], lambda xs: tree_util.tree_unflatten(tree, xs), flatten
    )
    if out_tree[0] != tree:
        raise ValueError(f"reduce_window output must have the same tree structure as the operands {tree} vs. {out_tree[0]}")
    outs = reduce_window_p.bind(*flat_operands, *flat_inits, jaxpr=jaxpr, consts=consts, **params)
    return tree_util.tree_unflatten(tree, list(outs))
