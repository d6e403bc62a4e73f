"""``lax`` convolutions, as in ``jax.lax``: conv_general_dilated and the helpers around its
dimension numbers and shapes.

``conv_general_dilated`` turns what users pass (padding names, layout strings,
None for defaults, precision spellings) into the exact params of the
primitive in ``minijax/primitives/convolution.py`` and binds it. The
convenience wrappers built on it (``conv``, ``conv_transpose``, ...) live in
their own module.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.lax.padding import padtype_to_pads
from minijax.lax.structural import Array, ArrayLike, _as_given, _placed, _sharding_param
from minijax.primitives import convolution as _conv
from minijax.primitives.convolution import (
    ConvDimensionNumbers,
    conv_dimension_numbers,
    conv_general_dilated_p,
    conv_general_permutations,
    conv_output_shape,
    dilate_dim,
)
from minijax.primitives.reductions import canonicalize_precision

__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_p",
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose_shape_tuple",
]

ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None


def conv_general_dilated(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Array:
    """An n-dimensional convolution of ``lhs`` (rank n+2) with the kernel ``rhs`` (rank n+2).

    ``padding`` is 'SAME', 'SAME_LOWER', 'VALID' or n (low, high) pairs;
    ``lhs_dilation`` (transposed convolution) and ``rhs_dilation`` (atrous)
    default to 1; ``dimension_numbers`` is None (NCHW, OIHW, NCHW for 2-D),
    three layout strings such as ('NHWC', 'HWIO', 'NHWC'), or a
    ConvDimensionNumbers. Window strides and dilations follow the order of
    the spatial letters in the kernel's layout string.
    """
    sharding = _sharding_param("conv_general_dilated", out_sharding)
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    nsp = len(lhs_shape) - 2
    if lhs_dilation is None:
        lhs_dilation = (1,) * nsp
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError(
            "String padding is not implemented for transposed convolution using this op. Please either exactly "
            "specify the required padding or use conv_transpose."
        )
    if rhs_dilation is None:
        rhs_dilation = (1,) * (len(rhs_shape) - 2)
    pads: Sequence[tuple[int, int]]
    if isinstance(padding, str):
        lhs_sp = [lhs_shape[i] for i in dnums.lhs_spec[2:]]
        window = [dilate_dim(rhs_shape[i], d) for i, d in zip(dnums.rhs_spec[2:], rhs_dilation)]
        pads = padtype_to_pads(lhs_sp, window, window_strides, padding)
    else:
        try:
            pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError(
                f"padding argument to conv_general_dilated should be a string or a sequence of (low, high) pairs, got {padding}"
            ) from e
    pet = None if preferred_element_type is None else dtypes.check_user_dtype_supported(preferred_element_type, "conv_general_dilated")
    out = _conv.conv_general_dilated_p.bind(
        lhs,
        rhs,
        # JAX keeps the strides' and dilations' elements as given (NumPy integers print so).
        window_strides=_as_given("conv_general_dilated", "window_strides", window_strides),
        padding=tuple(pads),
        lhs_dilation=_as_given("conv_general_dilated", "lhs_dilation", lhs_dilation),
        rhs_dilation=_as_given("conv_general_dilated", "rhs_dilation", rhs_dilation),
        dimension_numbers=dnums,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision=canonicalize_precision(precision),
        preferred_element_type=pet,
        out_sharding=sharding,
    )
    return _placed(out, out_sharding, "conv_general_dilated")


def conv_shape_tuple(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], strides: Sequence[int], pads: str | Sequence[tuple[int, int]], batch_group_count: int = 1
) -> tuple[int, ...]:
    """The result shape of a convolution of operands in the canonical layout (NC..., OI...)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    return conv_output_shape(
        tuple(lhs_shape), tuple(rhs_shape), tuple(strides), tuple((int(lo), int(hi)) for lo, hi in pads), batch_group_count
    )


def conv_general_shape_tuple(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], window_strides: Sequence[int], padding: str | Sequence[tuple[int, int]], dimension_numbers: Any
) -> tuple[int, ...]:
    """The result shape of a convolution whose layouts are three strings (``dimension_numbers``)."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple([lhs_shape[i] for i in lhs_perm], [rhs_shape[i] for i in rhs_perm], window_strides, padding)
    return tuple(out[i] for i in np.argsort(out_perm))


def _transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """The (before, after) pads of one spatial axis of a transposed convolution (kernel ``k``, stride ``s``)."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        before, total = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], window_strides: Sequence[int], padding: str | Sequence[tuple[int, int]], dimension_numbers: Any
) -> tuple[int, ...]:
    """The result shape of ``conv_transpose`` with these operand shapes and layout strings."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t = [int(lhs_shape[i]) for i in lhs_perm]
    rhs_t = [int(rhs_shape[i]) for i in rhs_perm]
    if isinstance(padding, str):
        padding = [_transpose_padding(k, s, padding) for k, s in zip(rhs_t[2:], window_strides)]
    totals = [int(sum(p)) for p in padding]
    spatial = [(i - 1) * s - k + 2 + p for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, totals)]
    out = (lhs_t[0], rhs_t[0], *spatial)
    return tuple(out[i] for i in np.argsort(out_perm))
