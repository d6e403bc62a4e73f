"""``jax.nn.initializers``: functions that build parameter arrays from a PRNG key.

Every builder (``normal(stddev)``, ``glorot_uniform()``, ...) returns an
*initializer* ``init(key, shape, dtype=None, out_sharding=None) -> Array``.
The samples come from ``minijax.random`` and are scaled with the same
operations in the same dtype as JAX, so for the same key the arrays are
bit-for-bit JAX's.

The variance-scaling family (glorot/xavier, he/kaiming, lecun) picks the
standard deviation from the weight shape: ``in_axis``/``out_axis`` name the
input and output axes, ``batch_axis`` axes that are ignored, and every other
axis is part of a convolution's receptive field and multiplies both fans.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from minijax import dtypes, random
from minijax.core import shape_size
from minijax.numpy import array, full, moveaxis, ones as jnp_ones, reshape, sqrt, zeros as jnp_zeros
from minijax.numpy.creation import canonicalize_shape
from minijax.sharding import reshard
from minijax.sharding_rules import out_sharding_param

Array = Any
ArrayLike = Any
Shape = Sequence[int]
AxisSpec = int | Sequence[int]

# std of a standard normal truncated to [-2, 2]: dividing by it makes the
# truncated samples' standard deviation the requested one.
_TRUNCATED_NORMAL_STDDEV = 0.87962566103423978


@typing.runtime_checkable
class Initializer(Protocol):
    """What every builder here returns: ``init(key, shape, dtype=None, out_sharding=None)``."""

    def __call__(self, key: Array, shape: Shape, dtype: Any = None, out_sharding: Any = None) -> Array: ...


def _dtype_or_default(dtype: Any) -> Any:
    return dtypes.default_float_dtype() if dtype is None else dtype


def _laid_out(name: str, value: Array, out_sharding: Any) -> Array:
    """``value`` laid out as ``out_sharding`` says (computed unsharded first, as JAX's do)."""
    if out_sharding is None:
        return value
    out_sharding_param(out_sharding, name)  # (its TypeError for what is no sharding)
    out: Array = reshard(value, out_sharding)
    return out


# ---------------------------------------------------------------------------
# Constant initializers (the key is ignored)


def zeros(key: Array, shape: Shape, dtype: Any = None, out_sharding: Any = None) -> Array:
    """An array of zeros (``key`` is ignored)."""
    return jnp_zeros(shape, _dtype_or_default(dtype), out_sharding=out_sharding)


def ones(key: Array, shape: Shape, dtype: Any = None, out_sharding: Any = None) -> Array:
    """An array of ones (``key`` is ignored)."""
    return jnp_ones(shape, _dtype_or_default(dtype), out_sharding=out_sharding)


def constant(value: ArrayLike, dtype: Any = None) -> Initializer:
    """Builds an initializer that fills the array with ``value``."""

    def init(key: Array, shape: Shape, dtype: Any = dtype, out_sharding: Any = None) -> Array:
        return _laid_out("constant", full(shape, value, dtype=_dtype_or_default(dtype)), out_sharding)

    return init


# ---------------------------------------------------------------------------
# Fixed-scale random initializers


def uniform(scale: ArrayLike = 1e-2, dtype: Any = None) -> Initializer:
    """Builds an initializer of uniform samples in ``[0, scale)``."""

    def init(key: Array, shape: Shape, dtype: Any = dtype, out_sharding: Any = None) -> Array:
        dtype = _dtype_or_default(dtype)
        return random.uniform(key, shape, dtype, out_sharding=out_sharding) * array(scale, dtype)

    return init


def normal(stddev: ArrayLike = 1e-2, dtype: Any = None) -> Initializer:
    """Builds an initializer of normal samples with mean 0 and standard deviation ``stddev``."""

    def init(key: Array, shape: Shape, dtype: Any = dtype, out_sharding: Any = None) -> Array:
        dtype = _dtype_or_default(dtype)
        return random.normal(key, shape, dtype, out_sharding=out_sharding) * array(stddev, dtype)

    return init


def truncated_normal(stddev: ArrayLike = 1e-2, dtype: Any = None, lower: ArrayLike = -2.0, upper: ArrayLike = 2.0) -> Initializer:
    """Builds an initializer of standard normal samples truncated to ``[lower, upper]``, times ``stddev``.

    Unlike ``variance_scaling``, ``stddev`` is not corrected for the
    truncation: the samples' standard deviation is a little below it.
    """

    def init(key: Array, shape: Shape, dtype: Any = dtype, out_sharding: Any = None) -> Array:
        dtype = _dtype_or_default(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype, out_sharding=out_sharding) * array(stddev, dtype)

    return init


# ---------------------------------------------------------------------------
# Variance scaling


def _axes_size(shape: Shape, axes: AxisSpec) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return shape_size(shape[i] for i in axes)


def _compute_fans(shape: Shape, in_axis: AxisSpec = -2, out_axis: AxisSpec = -1, batch_axis: AxisSpec = ()) -> tuple[float, float]:
    """(fan_in, fan_out): the in/out axis sizes, each times the receptive-field size."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor with default "
            "in_axis. Must be at least 2D or specify in_axis explicitly."
        )
    in_size = _axes_size(shape, in_axis)
    out_size = _axes_size(shape, out_axis)
    batch_size = _axes_size(shape, batch_axis)
    # The remaining axes (a convolution kernel's spatial ones), in float as JAX computes it.
    receptive_field_size = shape_size(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")


def _denominator(mode: str, fan_in: float, fan_out: float) -> float:
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    if mode == "fan_avg":
        return (fan_in + fan_out) / 2
    if mode == "fan_geo_avg":
        return float((fan_in * fan_out) ** 0.5)
    raise ValueError(f"invalid mode for variance scaling initializer: {mode}")


def _check_real(dtype: Any) -> None:
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise NotImplementedError("nn.initializers.variance_scaling: complex dtypes are not supported by minijax (no complex numbers).")


def variance_scaling(
    scale: ArrayLike,
    mode: str,
    distribution: str,
    in_axis: AxisSpec = -2,
    out_axis: AxisSpec = -1,
    batch_axis: AxisSpec = (),
    dtype: Any = None,
) -> Initializer:
    """Builds an initializer with variance ``scale / n``, ``n`` from the weight shape.

    ``mode`` picks ``n``: ``"fan_in"``, ``"fan_out"``, their mean
    ``"fan_avg"`` or geometric mean ``"fan_geo_avg"``. ``distribution`` is
    ``"truncated_normal"`` (within 2 standard deviations, rescaled so the
    variance is still ``scale / n``), ``"normal"`` or ``"uniform"`` (on
    ``[-sqrt(3 scale / n), sqrt(3 scale / n))``).
    """

    def init(key: Array, shape: Shape, dtype: Any = dtype, out_sharding: Any = None) -> Array:
        shape = canonicalize_shape(shape)
        dtype = _dtype_or_default(dtype)
        _check_real(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        variance = array(scale / _denominator(mode, fan_in, fan_out), dtype=dtype)
        if distribution == "truncated_normal":
            stddev = sqrt(variance) / array(_TRUNCATED_NORMAL_STDDEV, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype, out_sharding=out_sharding) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype, out_sharding=out_sharding) * sqrt(variance)
        if distribution == "uniform":
            return random.uniform(key, shape, dtype, -1, out_sharding=out_sharding) * sqrt(3 * variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def glorot_uniform(in_axis: AxisSpec = -2, out_axis: AxisSpec = -1, batch_axis: AxisSpec = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(1.0, "fan_avg", "uniform")`` (Glorot/Xavier uniform)."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def glorot_normal(in_axis: AxisSpec = -2, out_axis: AxisSpec = -1, batch_axis: AxisSpec = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(1.0, "fan_avg", "truncated_normal")`` (Glorot/Xavier normal)."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def lecun_uniform(in_axis: AxisSpec = -2, out_axis: AxisSpec = -1, batch_axis: AxisSpec = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(1.0, "fan_in", "uniform")`` (LeCun uniform)."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def lecun_normal(in_axis: AxisSpec = -2, out_axis: AxisSpec = -1, batch_axis: AxisSpec = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(1.0, "fan_in", "truncated_normal")`` (LeCun normal)."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def he_uniform(in_axis: AxisSpec = -2, out_axis: AxisSpec = -1, batch_axis: AxisSpec = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(2.0, "fan_in", "uniform")`` (He/Kaiming uniform)."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def he_normal(in_axis: AxisSpec = -2, out_axis: AxisSpec = -1, batch_axis: AxisSpec = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(2.0, "fan_in", "truncated_normal")`` (He/Kaiming normal)."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


# ---------------------------------------------------------------------------
# Orthogonal initializers


def orthogonal(scale: ArrayLike = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """Builds an initializer of (scaled) random orthogonal matrices.

    The array is viewed as a matrix whose columns run along ``column_axis``;
    its rows or columns (whichever are fewer) are orthonormal. The matrix is
    ``random.orthogonal``'s (the QR of a normal sample), so the values are
    JAX's for the same key.
    """

    def init(key: Array, shape: Shape, dtype: Any = dtype, out_sharding: Any = None) -> Array:
        if out_sharding is not None:  # (as JAX's: no out_sharding)
            raise NotImplementedError("nn.initializers.orthogonal: out_sharding is not supported (nor in JAX).")
        dtype = _dtype_or_default(dtype)
        shape = canonicalize_shape(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp_zeros(shape, dtype=dtype)
        n_rows, n_cols = shape_size(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = reshape(q, tuple(int(d) for d in np.delete(shape, column_axis)) + (shape[column_axis],))
        q = moveaxis(q, -1, column_axis)
        return array(scale, dtype) * q

    return init


def delta_orthogonal(scale: ArrayLike = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """Builds an initializer of delta-orthogonal convolution kernels (3-D, 4-D or 5-D shapes).

    The kernel is zero except at its spatial centre, which holds an
    orthogonal ``shape[-2] x shape[-1]`` matrix (requires ``shape[-2] <= shape[-1]``).
    """

    def init(key: Array, shape: Shape, dtype: Any = dtype, out_sharding: Any = None) -> Array:
        if out_sharding is not None:  # (as JAX's: no out_sharding)
            raise NotImplementedError("nn.initializers.delta_orthogonal: out_sharding is not supported (nor in JAX).")
        dtype = _dtype_or_default(dtype)
        shape = canonicalize_shape(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp_zeros(shape, dtype=dtype).at[(*centre, ...)].set(ortho_matrix)

    return init


__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
    "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones", "orthogonal",
    "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]  # fmt: skip
