"""The convenience convolutions of ``jax.lax``, all written with ``conv_general_dilated``.

- ``conv`` and ``conv_with_general_padding``: NCHW/OIHW convolutions with
  fewer arguments;
- ``conv_transpose``: the "fractionally strided" convolution, as
  ``conv_general_dilated`` with the strides turned into ``lhs_dilation`` and
  the padding that makes the output the size a transposed convolution has;
- ``conv_general_dilated_patches``: the input's receptive-field patches,
  gathered by a grouped convolution with one-hot kernels;
- ``conv_general_dilated_local``: the unshared ("locally connected")
  convolution, the patches contracted with a kernel per output position.

Signatures, defaults and errors are JAX's. Only ``lax`` operations appear
here (``minijax.numpy`` is built on ``lax``, not the other way round).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax.lax import elementwise as ew, reductions as red, structural as st
from minijax.lax.convolution import conv_dimension_numbers, conv_general_dilated
from minijax.lax.structural import Array, ArrayLike
from minijax.primitives.reductions import Precision, canonicalize_precision

__all__ = [
    "conv",
    "conv_general_dilated_local",
    "conv_general_dilated_patches",
    "conv_transpose",
    "conv_with_general_padding",
]

Padding = str | Sequence[tuple[int, int]]


def conv(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: str,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """``conv_general_dilated`` of an NCHW input and an OIHW kernel, without dilation."""
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, precision=precision, preferred_element_type=preferred_element_type
    )


def conv_with_general_padding(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: Padding,
    lhs_dilation: Sequence[int] | None,
    rhs_dilation: Sequence[int] | None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """``conv_general_dilated`` of an NCHW input and an OIHW kernel, with both dilations."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _dilate_dim(size: int, dilation: int) -> int:
    return 0 if size == 0 else 1 + dilation * (size - 1)


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """The (low, high) pads of one spatial dimension of a transposed convolution.

    ``k`` is the (dilated) kernel size, ``s`` the stride, ``padding`` the
    forward convolution's padding ('SAME', 'VALID' or a (low, high) pair).
    The input is dilated by ``s``; these pads make the output
    ``in * s`` long for 'SAME' and ``in * s + max(k - s, 0)`` for 'VALID',
    the sizes of the gradient of the forward convolution.
    """
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    elif isinstance(padding, tuple):
        low, high = (k - p - 1 for p in padding)
        total = low + high
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return low, total - low


# The layouts conv_transpose assumes by rank: TensorFlow's channels-last convention.
_TRANSPOSE_DEFAULT_DIMENSION_NUMBERS = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs: ArrayLike,
    rhs: ArrayLike,
    strides: Sequence[int],
    padding: Padding,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Any = None,
    use_consistent_padding: bool = False,
) -> Array:
    """The N-d transposed ("fractionally strided") convolution.

    Computed directly as a convolution of ``lhs`` dilated by ``strides``, not
    as the gradient of a forward one. ``'SAME'``/``'VALID'`` name the
    *forward* convolution's padding (the output is then ``in * stride`` long,
    or ``in * stride + max(k - stride, 0)``); explicit pairs are the pads of
    the transposed convolution itself, unless ``use_consistent_padding`` says
    they too are the forward convolution's (PyTorch's meaning).
    ``dimension_numbers`` defaults to channels-last (``'NHWC', 'HWIO',
    'NHWC'`` in 2-D). ``transpose_kernel=True`` flips the kernel's spatial
    axes and swaps its I and O axes, which makes this the gradient of
    ``conv_general_dilated`` with the same kernel (Keras' Conv2DTranspose).
    """
    lhs, rhs = st._asarray(lhs), st._asarray(rhs)
    ndim = len(lhs.shape)
    if ndim != len(rhs.shape) or ndim < 2:
        # JAX asserts this; minijax says what is wrong instead of a bare AssertionError.
        raise ValueError(
            "conv_transpose: lhs and rhs must have the same rank, at least 2; "
            f"got shapes {tuple(lhs.shape)} and {tuple(rhs.shape)}."
        )
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_DEFAULT_DIMENSION_NUMBERS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULT_DIMENSION_NUMBERS[ndim]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    kernel_spatial = [rhs.shape[d] for d in dn.rhs_spec[2:]]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndim - 2)
    pads: Padding
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else list(padding)
        pads = tuple(
            _conv_transpose_padding(_dilate_dim(k, r), s, p)
            for k, r, s, p in zip(kernel_spatial, rhs_dilation, strides, per_dim)
        )
    else:
        pads = padding
    if transpose_kernel:
        for axis in dn.rhs_spec[2:]:  # one rev per axis, as JAX flips them
            rhs = st.rev(rhs, (axis,))
        perm = list(range(ndim))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[o], perm[i] = perm[i], perm[o]
        rhs = st.transpose(rhs, perm)
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * (ndim - 2),
        pads,
        strides,
        rhs_dilation,
        dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _moveaxes(x: Array, sources: Sequence[int], destinations: Sequence[int]) -> Array:
    """``jnp.moveaxis`` for several axes, as one ``transpose`` (``lax`` cannot import ``jnp``)."""
    ndim = len(x.shape)
    rest = [d for d in range(ndim) if d not in sources]
    order: list[int] = [-1] * ndim
    for src, dst in sorted(zip(sources, destinations), key=lambda pair: pair[1]):
        order[dst] = src
    fill = iter(rest)
    perm = [d if d >= 0 else next(fill) for d in order]
    return x if perm == list(range(ndim)) else st.transpose(x, perm)


def conv_general_dilated_patches(
    lhs: ArrayLike,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """The patches that ``conv_general_dilated``'s windows see, flattened into the output's feature dimension.

    For an input with ``C`` features and a window of ``filter_shape`` (in
    the kernel spec's spatial order), the output's feature dimension has
    ``C * prod(filter_shape)`` entries, ordered ``c`` first, then the window
    positions in the kernel spec's spatial order. Computed as a convolution
    with ``feature_group_count=C`` whose kernels are one-hot: kernel ``(c,
    p)`` picks window position ``p`` of feature ``c``.
    """
    lhs_array = st._asarray(lhs)
    filter_shape = tuple(operator.index(d) for d in filter_shape)
    dn = conv_dimension_numbers(lhs_array.shape, (1, 1, *filter_shape), dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    window = math.prod(filter_shape)
    channels = lhs_array.shape[lhs_spec[1]]
    dtype = lhs_array.dtype
    # The identity as JAX builds it (iota + offset 0 == iota), so the jaxprs match.
    rows = ew.add(st.broadcasted_iota("int32", (window, window), 0), np.int32(0))
    one_hot = ew.convert_element_type(ew.eq(rows, st.broadcasted_iota("int32", (window, window), 1)), dtype)
    kernel = st.broadcast_in_dim(one_hot, (channels, window, window), (1, 2))
    kernel = st.reshape(kernel, (channels * window, 1, *filter_shape))
    kernel = _moveaxes(kernel, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(
        lhs_array,
        kernel,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dn,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        feature_group_count=channels,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_local(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: Padding,
    filter_shape: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
) -> Array:
    """The unshared convolution: a separate kernel for every output position.

    ``rhs``'s spatial dimensions are the *output's* positions; its ``I``
    dimension holds the input features times the window positions (in the
    order ``conv_general_dilated_patches`` produces them). The result is the
    patches contracted with ``rhs`` position by position.
    """
    lhs_array = st._asarray(lhs)
    canonical = canonicalize_precision(precision)
    lhs_precision = None if canonical is None else canonical[0]
    patches = conv_general_dilated_patches(
        lhs_array,
        filter_shape,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        precision=lhs_precision,
    )
    _, rhs_spec, out_spec = conv_dimension_numbers(lhs_array.shape, (1, 1, *filter_shape), dimension_numbers)
    # Batch over the spatial positions: the patches' (in out_spec's order) with
    # rhs's at the same positions, both listed in the patches' axis order.
    order = sorted(range(len(out_spec) - 2), key=lambda k: out_spec[2 + k])
    lhs_batch = [out_spec[2 + k] for k in order]
    rhs_batch = [rhs_spec[2 + k] for k in order]
    out = red.dot_general(
        patches, rhs, (((out_spec[1],), (rhs_spec[1],)), (lhs_batch, rhs_batch)), precision=precision
    )
    ndim = len(out.shape)
    return _moveaxes(out, (ndim - 2, ndim - 1), (out_spec[0], out_spec[1]))
