"""Samplers for the convolution primitive (``minijax/primitives/convolution.py``).

``conv_general_dilated`` is bilinear, so both operands are differentiable and
each is a linear group of its own (as for dot_general). A case draws 0 to 3
spatial axes, a random layout for each operand and the result, strides and
dilations of 1 or 2, pads from -1 to 2 (never cropping more than the dilated
input has), and now and then feature or batch groups; kernels are small so
that the windows fit most of the time (an empty result axis is legal and
drawn too).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax.primitives.convolution import ConvDimensionNumbers, dilate_dim
from minijax.testing.cases import NUMBER, Case, Draw, Operand, Sampler, case, moderate


def _layout(draw: Draw, rank: int) -> tuple[int, ...]:
    return tuple(draw(st.permutations(range(rank))))


def _place(canonical: tuple[int, ...], spec: tuple[int, ...]) -> tuple[int, ...]:
    """The shape whose axis ``spec[i]`` has size ``canonical[i]``."""
    out = [0] * len(spec)
    for i, axis in enumerate(spec):
        out[axis] = canonical[i]
    return tuple(out)


def _conv(draw: Draw, dtype: np.dtype[Any]) -> Case:
    nsp = draw(st.sampled_from((1, 2, 1, 2, 0, 3)))
    rank = nsp + 2
    groups = draw(st.sampled_from((1, 1, 1, 2, 3)))
    by_batch = groups > 1 and draw(st.booleans())
    fgc, bgc = (1, groups) if by_batch else (groups, 1)
    in_per_group = draw(st.integers(1, 2))
    lhs_features = in_per_group * fgc
    out_features = groups * draw(st.integers(1, 2))
    batch = bgc * draw(st.integers(1, 2))
    window = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    spatial = tuple(draw(st.integers(1, 4)) for _ in range(nsp))
    strides = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    lhs_dilation = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    rhs_dilation = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    padding = []
    for n, d in zip(spatial, lhs_dilation):
        low = draw(st.integers(-1, 2))
        high = draw(st.integers(-1, 2))
        while dilate_dim(n, d) + low + high < 0:  # a crop larger than the axis is an error (conv C12)
            low, high = low + 1, high + 1
        padding.append((low, high))
    specs = ConvDimensionNumbers(_layout(draw, rank), _layout(draw, rank), _layout(draw, rank))
    lhs_shape = _place((batch, lhs_features, *spatial), tuple(specs.lhs_spec))
    # With feature groups the kernel reads one group's features; with batch groups, every feature.
    rhs_shape = _place((out_features, lhs_features if by_batch else in_per_group, *window), tuple(specs.rhs_spec))
    params = {
        "window_strides": strides,
        "padding": tuple(padding),
        "lhs_dilation": lhs_dilation,
        "rhs_dilation": rhs_dilation,
        "dimension_numbers": specs,
        "feature_group_count": fgc,
        "batch_group_count": bgc,
        "precision": None,
        "preferred_element_type": draw(st.sampled_from([None, dtype])),
        "out_sharding": None,
    }
    operands = [Operand(lhs_shape, dtype, moderate()), Operand(rhs_shape, dtype, moderate())]
    return case("conv_general_dilated", params, operands, (0, 1), [(0,), (1,)])


SAMPLERS: dict[str, Sampler] = {
    "conv_general_dilated": Sampler("conv_general_dilated", _conv, NUMBER, linear=True),
}
