"""Samplers for the windowed reductions (``minijax/primitives/windowed.py``).

Window params are drawn per dimension: a window of 1-3 taps, a stride of
1-2, padding of 0-2 at each end, base and window dilations of 1-2.
``reduce_window_sum`` and the first operands of ``select_and_gather_add`` /
``select_and_scatter_add`` are linear. The max/min reductions and the
selections are smooth (in their data, resp. in the operand the selection
reads) only without ties, so they get pairwise distinct values, and windows
that always hold at least one operand element: no base dilation and padding
shorter than the window (a window of only identities would be -inf/+inf,
where finite differences are NaN). They have no window dilation either: JAX
has no VJP of max/min pooling with a dilated window, nor has minijax
(tests/test_windowed.py checks that error and the jvp with dilated windows).

The generic ``reduce_window`` is not sampled (``samplers.UNSAMPLED``): its
init values are operands that cannot be batched (as in JAX), which the vmap
law would try; the case corpus (``spec/cases/primitives/reduce_window_*``)
and tests/test_windowed.py cover it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax.primitives.elementwise import ge_p, le_p
from minijax.primitives.windowed import reduce_window_shape_tuple
from minijax.testing.cases import ANY, FLOAT, NUMBER, Case, Draw, Operand, Sampler, case, distinct, moderate, shape

Params = dict[str, Any]


def window_params(draw: Draw, s: tuple[int, ...], smooth: bool) -> Params:
    """Window params for an operand of shape ``s``; ``smooth``: every window holds an operand element."""
    dims, strides, pads, base, wdil = [], [], [], [], []
    for n in s:
        w = draw(st.integers(1, 3))
        # JAX has no VJP of max/min pooling with a dilated window (nor has minijax): smooth cases have none.
        d = draw(st.integers(1, 2)) if w > 1 and not smooth else 1
        dims.append(w)
        strides.append(draw(st.integers(1, 2)))
        wdil.append(d)
        if smooth:
            base.append(1)
            top = w - 1 if n > 0 else 0
            pads.append((draw(st.integers(0, top)), draw(st.integers(0, top))))
        else:
            base.append(draw(st.integers(1, 2)))
            pads.append((draw(st.integers(0, 2)), draw(st.integers(0, 2))))
    return {
        "window_dimensions": tuple(dims),
        "window_strides": tuple(strides),
        "padding": tuple(pads),
        "base_dilation": tuple(base),
        "window_dilation": tuple(wdil),
    }


def _monoid(name: str, values: Any, linear: bool) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        s = shape(draw, min_rank=1)
        params = window_params(draw, s, smooth=not linear)
        return case(name, params, [Operand(s, dtype, values)], (0,), [(0,)] if linear else [])

    return Sampler(name, build, NUMBER if linear else ANY, linear=linear)


def _select_prim(draw: Draw) -> Any:
    return ge_p if draw(st.booleans()) else le_p


def _select_and_gather_add(draw: Draw, dtype: np.dtype[Any]) -> Case:
    s = shape(draw, min_rank=1)
    params = {"select_prim": _select_prim(draw), **window_params(draw, s, smooth=True)}
    return case("select_and_gather_add", params, [Operand(s, dtype, moderate()), Operand(s, dtype, distinct())],
                (0,), [(0,)])


def _select_and_scatter_add(draw: Draw, dtype: np.dtype[Any]) -> Case:
    s = shape(draw, min_rank=1)
    window = window_params(draw, s, smooth=True)
    params = {"select_prim": _select_prim(draw), "window_dimensions": window["window_dimensions"],
              "window_strides": window["window_strides"], "padding": window["padding"]}
    ones = (1,) * len(s)
    out = reduce_window_shape_tuple(s, params["window_dimensions"], params["window_strides"], params["padding"], ones, ones)
    return case("select_and_scatter_add", params, [Operand(out, dtype, moderate()), Operand(s, dtype, distinct())],
                (0,), [(0,)])


SAMPLERS: dict[str, Sampler] = {
    "reduce_window_sum": _monoid("reduce_window_sum", moderate(), linear=True),
    "reduce_window_max": _monoid("reduce_window_max", distinct(), linear=False),
    "reduce_window_min": _monoid("reduce_window_min", distinct(), linear=False),
    "select_and_gather_add": Sampler("select_and_gather_add", _select_and_gather_add, FLOAT, linear=True),
    "select_and_scatter_add": Sampler("select_and_scatter_add", _select_and_scatter_add, FLOAT, linear=True),
}
