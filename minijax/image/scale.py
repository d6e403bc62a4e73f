"""``jax.image.resize`` and ``scale_and_translate``: resampling as one small matrix per dimension.

Resampling a dimension of size ``m`` to size ``n`` is linear in the image, so
it is an ``[m, n]`` weight matrix contracted with that dimension. Each weight
is a kernel (triangle, Keys cubic, Lanczos, ...) evaluated at the distance
between an input pixel centre and the point where an output pixel centre lands
in the input, so the whole resize is ordinary ``jnp`` arithmetic followed by
one ``einsum``. jit, grad (with respect to the image and, for
``scale_and_translate``, the scale and translation) and vmap come from the
ops it is built of; no primitive of its own.

Coordinates are half-centred: pixel ``i`` covers ``[i, i + 1)`` and its centre
is ``i + 0.5``. An output pixel ``j`` samples the input at
``(j + 0.5 - translation) / scale - 0.5`` in index units.

The arithmetic follows JAX 0.10's operation by operation (the same
constants, in the same dtype, combined in the same order), so that float32
results agree with JAX's to rounding and ``NEAREST`` picks the same pixels.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes, lax, numpy as jnp
from minijax.numpy.creation import canonicalize_shape
from minijax.numpy.util import canonicalize_axis, promote_dtypes_inexact
from minijax.stages import jit

Array = Any
Kernel = Callable[[Array], Array]


class ResizeMethod(enum.Enum):
    """How ``resize`` and ``scale_and_translate`` interpolate (JAX's ``jax.image.ResizeMethod``).

    ``NEAREST``: the input pixel whose cell contains the sample point.
    ``LINEAR``: the triangle kernel (bilinear, trilinear, ...).
    ``LANCZOS3``, ``LANCZOS5``: the Lanczos kernel of radius 3 or 5.
    ``CUBIC``: the Keys cubic kernel with ``a = -0.5``.
    ``CUBIC_PYTORCH``: ``CUBIC`` with antialiasing; without it, the ``a = -0.75``
    kernel with the image's edge pixels repeated outward (PyTorch's bicubic).
    ``AREA``: each output pixel averages the input it covers (a box filter).
    """

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name stands for: ``"bilinear"`` is ``LINEAR``, ``"bicubic"`` is ``CUBIC``, ...

        Names are lower case, as in JAX; anything else is a ValueError.
        """
        for method, names in _NAMES.items():
            if s in names:
                return method
        raise ValueError(f'Unknown resize method "{s}"')


_NAMES: dict[ResizeMethod, tuple[str, ...]] = {
    ResizeMethod.NEAREST: ("nearest",),
    ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
    ResizeMethod.LANCZOS3: ("lanczos3",),
    ResizeMethod.LANCZOS5: ("lanczos5",),
    ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
    ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
    ResizeMethod.AREA: ("area",),
}


# ---------------------------------------------------------------------------
# Kernels: functions of the (non-negative) distance x, in pixels


def _triangle(x: Array) -> Array:
    return jnp.maximum(0, 1 - jnp.abs(x))


def _lanczos(radius: float) -> Kernel:
    def kernel(x: Array) -> Array:
        # sinc(x) * sinc(x / radius) written out; near 0 the quotient is 0/0,
        # so the limit 1 is used below 1e-3, and the divisor is kept nonzero
        # there so that the unused branch's gradient stays finite.
        numerator = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        value = jnp.where(x > 1e-3, jnp.divide(numerator, jnp.where(x != 0, np.pi**2 * x**2, 1)), 1)
        return jnp.where(x > radius, 0.0, value)

    return kernel


def _keys_cubic(x: Array) -> Array:
    # Keys (1981) with a = -0.5, as Pillow, TensorFlow and PyTorch use with antialiasing.
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, far, near))


def _opencv_cubic(x: Array) -> Array:
    # The a = -0.75 variant OpenCV and PyTorch (antialias off) use.
    a = -0.75
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, far, near))


# method -> (the kernel's radius in pixels, the kernel); AREA is not a
# kernel of a distance, so it has its own weight formula.
_KERNELS: dict[ResizeMethod, tuple[int, Kernel | None]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, None),
}

# A column whose weights sum to less than this has no usable input (its
# sample point is off the image): it is set to zero rather than blown up.
_MIN_WEIGHT_SUM = 1000.0 * float(np.finfo(np.float32).eps)


def _normalize_columns(weights: Array) -> Array:
    """Each output pixel's weights divided by their sum (a column of ~0 becomes 0)."""
    total = jnp.sum(weights, axis=0, keepdims=True)
    usable = jnp.abs(total) > _MIN_WEIGHT_SUM
    return jnp.where(usable, jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)


def _weight_matrix(
    input_size: int,
    output_size: int,
    scale: Any,
    translation: Any,
    method: ResizeMethod,
    antialias: bool,
    edge_padding: bool,
) -> Array:
    """The ``[input_size, output_size]`` matrix that resamples one dimension."""
    radius, kernel = _KERNELS[method]
    dtype = dtypes.result_type(scale, translation)
    inv_scale = 1.0 / scale
    # Downsampling stretches the kernel by 1/scale, so that it averages the
    # input pixels an output pixel covers (a low-pass filter) rather than
    # sampling a few of them and aliasing; upsampling only interpolates.
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0

    # Where each output pixel's centre falls in the input, in index units.
    sample_f = (jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5

    # With edge padding the kernel also sees `pad` pixels beyond each edge,
    # copies of the edge pixel; their weight is folded onto that pixel below.
    # (Only CUBIC_PYTORCH without antialiasing pads, so the kernel is not stretched.)
    pad = radius if edge_padding else 0
    positions = jnp.arange(-pad, input_size + pad, dtype=dtype)

    if kernel is None:
        # AREA: the length of the overlap of output pixel j's footprint,
        # [left_j, left_j + 1/scale), with input pixel i's cell [i, i + 1).
        out_left = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        out_right = out_left + inv_scale
        in_left = jnp.arange(input_size, dtype=dtype)
        in_right = in_left + 1.0
        overlap_right = jnp.minimum(out_right[np.newaxis, :], in_right[:, np.newaxis])
        overlap_left = jnp.maximum(out_left[np.newaxis, :], in_left[:, np.newaxis])
        weights = jnp.maximum(0.0, overlap_right - overlap_left)
    else:
        distance = jnp.abs(sample_f[np.newaxis, :] - positions[:, np.newaxis])
        weights = kernel(distance / kernel_scale)

    if edge_padding:
        clamped = jnp.clip(positions.astype(np.int32), 0, input_size - 1)
        columns = lax.broadcast_in_dim(jnp.arange(output_size), (positions.shape[0], output_size), (1,))
        folded = jnp.zeros((input_size, output_size), dtype=dtype)
        return _normalize_columns(folded.at[clamped[:, np.newaxis], columns].add(weights))

    # Renormalizing spreads the weight of kernel taps that fell off the image
    # over the taps inside it; an output pixel whose centre lands outside the
    # input altogether is 0.
    weights = _normalize_columns(weights)
    inside = jnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
    return jnp.where(inside[np.newaxis, :], weights, 0)


def _resample(
    image: Array,
    shape: tuple[int, ...],
    spatial_dims: Sequence[int],
    scale: Any,
    translation: Any,
    method: ResizeMethod,
    antialias: bool,
    precision: Any,
) -> Array:
    """Contract every spatial dimension of ``image`` with its weight matrix, in one einsum."""
    if not spatial_dims:
        return image
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    rank = len(shape)
    operands: list[Any] = [image, list(range(rank))]
    out_indices = list(range(rank))
    for i, d in enumerate(spatial_dims):
        weights = _weight_matrix(image.shape[d], shape[d], scale[i], translation[i], method, antialias, edge_padding)
        operands += [weights.astype(image.dtype), [d, rank + i]]
        out_indices[d] = rank + i
    return jnp.einsum(*operands, out_indices, precision=precision)


# ---------------------------------------------------------------------------
# Argument checks shared by both entry points


def _check_shape(name: str, image: Array, requested: Any) -> tuple[int, ...]:
    shape = canonicalize_shape(requested)
    if len(shape) != image.ndim:
        raise ValueError(
            f"{name}: shape must have length equal to the number of dimensions of x; {shape} vs {image.shape}. "
            "Give the output size of every dimension, the unchanged batch and channel ones included."
        )
    if any(d < 0 for d in shape):
        raise TypeError(f"{name}: shape must have every element be nonnegative, got {shape}.")
    return shape


def _as_method(method: Any) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(
            f"The resize method must be a jax.image.ResizeMethod or one of its names "
            f"('nearest', 'linear', 'cubic', 'lanczos3', 'lanczos5', ...), got {method!r}."
        )
    return method


# ---------------------------------------------------------------------------
# resize


def _resize_nearest(image: Array, shape: tuple[int, ...]) -> Array:
    """Each output pixel copies the input pixel whose cell holds its centre (any dtype, no arithmetic on it)."""
    for d, (m, n) in enumerate(zip(image.shape, shape)):
        if m == n:
            continue
        if m == 0:
            raise TypeError(
                f"resize: dimension {d} of the image has size 0, so there is no pixel to copy into its "
                f"{n} output pixels. Resize only dimensions that hold pixels."
            )
        # floor((j + 0.5) * m / n), computed in float32 whatever the image's
        # dtype, as JAX does, so that the same pixels are chosen.
        centres = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
        picks = jnp.floor(centres).astype(np.int32)
        image = image[(slice(None),) * d + (picks,)]
    return image


def _resize(image: Array, shape: tuple[int, ...], method: Any, antialias: bool, precision: Any) -> Array:
    shape = _check_shape("resize", image, shape)
    method = _as_method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = promote_dtypes_inexact(image)
    # A dimension whose size stays is left alone: every kernel here
    # interpolates, so the identity warp reproduces the input exactly.
    spatial_dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
    for d in spatial_dims:
        if image.shape[d] == 0:
            raise ZeroDivisionError(
                f"resize: dimension {d} of the image has size 0 and cannot be resized to {shape[d]}: "
                "there are no pixels to interpolate between."
            )
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    # Python floats, so that 1/scale is formed in double precision and only
    # then rounded to the weights' dtype, as in JAX.
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    return _resample(image, shape, spatial_dims, scale, [0.0] * len(spatial_dims), method, antialias, precision)


_resize_jit = jit(_resize, static_argnums=(1, 2, 3, 4))


def resize(image: Array, shape: Sequence[int], method: str | ResizeMethod, antialias: bool = True,
           precision: Any = lax.Precision.HIGHEST) -> Array:  # fmt: skip
    """Resize ``image`` to ``shape`` (every dimension's size, batch and channels included).

    ``method`` is a ``ResizeMethod`` or its name: ``"nearest"``, ``"linear"``
    (``"bilinear"``, ``"trilinear"``, ``"triangle"``), ``"cubic"`` (``"bicubic"``,
    ``"tricubic"``), ``"lanczos3"``, ``"lanczos5"``, ``"cubic-pytorch"``, ``"area"``.
    A dimension whose size does not change is left as it is.

    ``NEAREST`` copies pixels, so the result keeps the image's dtype (integers
    too); the other methods compute in the image's inexact dtype (integers
    and bool become the default float). ``antialias`` (default True) widens
    the kernel when a dimension shrinks, so that the result averages the
    pixels each output pixel covers instead of aliasing; it changes nothing
    when enlarging. ``precision`` is the ``einsum``'s (ignored by ``NEAREST``).
    """
    return _resize_jit(image, canonicalize_shape(shape), method, antialias, precision)


# ---------------------------------------------------------------------------
# scale_and_translate


def _check_vector(name: str, value: Any, count: int) -> None:
    if value.ndim != 1:
        raise TypeError(
            f"scale_and_translate: {name} must be a 1-D array with one entry per spatial dimension, "
            f"got an array of shape {value.shape}."
        )
    if value.shape[0] != count:
        raise ValueError(
            f"scale_and_translate: {name} has {value.shape[0]} entries but spatial_dims names {count} "
            "dimensions; give one per spatial dimension."
        )


def scale_and_translate(image: Array, shape: Sequence[int], spatial_dims: Sequence[int], scale: Array,
                        translation: Array, method: str | ResizeMethod, antialias: bool = True,
                        precision: Any = lax.Precision.HIGHEST) -> Array:  # fmt: skip
    """Resample ``image`` to ``shape`` under the map ``x -> x * scale + translation`` of ``spatial_dims``.

    In spatial dimension ``spatial_dims[k]``, the point ``x`` of the input
    (pixel ``i`` is centred at ``x = i + 0.5``) lands at
    ``x * scale[k] + translation[k]`` in the output; each output pixel takes the
    kernel-weighted input around the point that lands on its centre, and 0 if
    that point is off the input. ``scale`` and ``translation`` are 1-D arrays
    with one entry per spatial dimension; the result is differentiable with
    respect to them and to the image.

    ``method`` is as for ``resize`` except ``NEAREST``, which is not supported
    here (as in JAX). The dimensions not in ``spatial_dims`` must keep their
    size. ``torch.nn.functional.interpolate(align_corners=True)`` is
    ``scale = (n - 1) / (m - 1)``, ``translation = 0.5 * (1 - scale)``.
    """
    shape = _check_shape("scale_and_translate", image, shape)
    method = _as_method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for scale_and_translate.")
    dims = [canonicalize_axis(operator.index(d), image.ndim) for d in spatial_dims]
    if len(set(dims)) != len(dims):
        raise ValueError(f"scale_and_translate: spatial_dims {tuple(spatial_dims)} names a dimension twice.")
    for d in range(image.ndim):
        if d not in dims and shape[d] != image.shape[d]:
            raise ValueError(
                f"scale_and_translate: shape {shape} changes dimension {d} (size {image.shape[d]}), which is "
                f"not in spatial_dims {tuple(spatial_dims)}; add it there with its scale and translation."
            )
    (image,) = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(scale, translation)
    _check_vector("scale", scale, len(dims))
    _check_vector("translation", translation, len(dims))
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    return _resample(image, shape, dims, scale, translation, method, antialias, precision)


__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
