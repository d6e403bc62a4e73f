"""minijax.image: resize, scale_and_translate and ResizeMethod on every backend.

The references are independent of the implementation: np.interp for linear
upsampling (and downsampling without antialiasing), pixel averages worked out
by hand for the antialiased triangle and for AREA, the kernels' defining
properties (a constant stays constant, a ramp stays a ramp where the kernel
reproduces it), and the fact that a resize is linear in the image (its
gradient is the transposed weight matrix, read off by resizing unit images).
Against real JAX: test_image_oracle.py.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.config import enable_x64
from minijax.image import ResizeMethod
from minijax.testing import check_grads

F32 = np.float32
INTERPOLATING = ["linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]
METHODS = ["nearest", *INTERPOLATING]


def _centres(m: int, n: int) -> np.ndarray:
    """Where output pixel j's centre lands in an m-pixel input resized to n (index units, half-centred pixels)."""
    return (np.arange(n) + 0.5) * m / n - 0.5


def _interp(x: np.ndarray, n: int) -> np.ndarray:
    """Linear interpolation of a 1-D signal at the resized centres, clamped at the ends."""
    return np.interp(_centres(len(x), n), np.arange(len(x)), x)


# ---------------------------------------------------------------------------
# Shapes and dtypes (no computation: eval_shape)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("src", "dst"),
    [((7,), (3,)), ((4, 5), (8, 2)), ((2, 6, 6, 3), (2, 3, 12, 3)), ((3, 1, 4), (3, 5, 0)), ((), ())],
)
def test_output_shape_is_the_requested_one(method: str, src: tuple[int, ...], dst: tuple[int, ...]) -> None:
    out = jax.eval_shape(lambda x: jax.image.resize(x, dst, method), jax.ShapeDtypeStruct(src, np.float32))
    assert out.shape == dst and out.dtype == np.float32


@pytest.mark.parametrize(
    ("dtype", "nearest", "interpolated"),
    [
        (np.int32, np.int32, np.float32),
        (np.uint8, np.uint8, np.float32),
        (np.bool_, np.bool_, np.float32),
        (np.float16, np.float16, np.float16),
        (ml_dtypes.bfloat16, ml_dtypes.bfloat16, ml_dtypes.bfloat16),
        (np.float32, np.float32, np.float32),
    ],
)
def test_dtypes(dtype: Any, nearest: Any, interpolated: Any) -> None:
    spec = jax.ShapeDtypeStruct((4, 4), np.dtype(dtype))
    assert jax.eval_shape(lambda x: jax.image.resize(x, (6, 3), "nearest"), spec).dtype == np.dtype(nearest)
    for method in INTERPOLATING:
        assert jax.eval_shape(lambda x: jax.image.resize(x, (6, 3), method), spec).dtype == np.dtype(interpolated)  # noqa: B023


def test_weights_follow_the_x64_flag() -> None:
    with enable_x64(True):
        assert jax.image.resize(np.arange(4.0), (6,), "linear").dtype == np.float64
        assert jax.image.resize(np.arange(4), (6,), "linear").dtype == np.float64
        assert jax.image.resize(np.arange(4), (6,), "nearest").dtype == np.int64


def test_weak_type_survives_only_where_no_weights_are_applied() -> None:
    weak = jnp.full((4,), 1.5)
    assert weak.weak_type
    assert jax.image.resize(weak, (4,), "linear").weak_type  # nothing to resize: the image itself
    assert jax.image.resize(weak, (6,), "nearest").weak_type  # pixels copied
    assert not jax.image.resize(weak, (6,), "linear").weak_type  # contracted with float32 weights
    assert jax.image.resize(2.0, (), "cubic").weak_type


# ---------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("method", METHODS)
def test_identity_resize_returns_the_image_exactly(method: str) -> None:
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype(F32)
    out = jax.image.resize(x, x.shape, method)
    np.testing.assert_array_equal(np.asarray(out), x)
    assert out.dtype == np.float32


def test_an_unchanged_dimension_is_left_untouched() -> None:
    # (atol: the matrix and the row go through different BLAS kernels, whose float32 sums
    # round apart by a few 1e-8 -- relative 1.7e-6 on a value near cancellation, seen on
    # an AVX-512 AMD machine.)
    x = np.random.default_rng(1).normal(size=(3, 5)).astype(F32)
    out = np.asarray(jax.image.resize(x, (3, 9), "lanczos3"))
    for row in range(3):
        np.testing.assert_allclose(out[row], np.asarray(jax.image.resize(x[row], (9,), "lanczos3")), rtol=1e-6, atol=1e-6)


def test_linear_upsampling_is_clamped_linear_interpolation() -> None:
    x = np.array([0.0, 1.0, 4.0, 9.0, 3.0], F32)
    for antialias in (True, False):  # antialiasing only matters when shrinking
        out = jax.image.resize(x, (12,), "bilinear", antialias=antialias)
        np.testing.assert_allclose(np.asarray(out), _interp(x, 12), rtol=1e-6, atol=1e-6)


def test_linear_by_hand() -> None:
    np.testing.assert_allclose(
        np.asarray(jax.image.resize(np.arange(4.0, dtype=F32), (6,), "linear")),
        [0.0, 0.5, 7 / 6, 11 / 6, 2.5, 3.0],
        rtol=1e-6,
    )


def test_bilinear_is_separable_interpolation() -> None:
    x = np.random.default_rng(2).normal(size=(4, 6)).astype(F32)
    rows = np.stack([_interp(r, 9) for r in x])
    want = np.stack([_interp(c, 7) for c in rows.T]).T
    np.testing.assert_allclose(np.asarray(jax.image.resize(x, (7, 9), "linear")), want, rtol=1e-5, atol=1e-6)


def test_linear_downsampling_with_and_without_antialiasing() -> None:
    x = np.arange(8.0, dtype=F32)
    # Without antialiasing: interpolation at the centres 0.5, 2.5, 4.5, 6.5.
    np.testing.assert_allclose(np.asarray(jax.image.resize(x, (4,), "linear", antialias=False)), [0.5, 2.5, 4.5, 6.5])
    # With it the triangle is twice as wide: taps 1/8, 3/8, 3/8, 1/8 around each
    # centre, renormalized where a tap falls off the image (3/7, 3/7, 1/7).
    want = [(3 * 0 + 3 * 1 + 2) / 7, (1 + 6 + 9 + 4) / 8, (3 + 12 + 15 + 6) / 8, (5 + 18 + 21) / 7]
    np.testing.assert_allclose(np.asarray(jax.image.resize(x, (4,), "linear")), want, rtol=1e-6)


def test_antialiasing_removes_a_pattern_the_plain_kernel_aliases() -> None:
    """Stripes 1, 0, 0 shrunk 3x: sampled, every centre hits a 0 pixel; filtered, each output is the mean 1/3."""
    stripes = np.tile(np.array([1.0, 0.0, 0.0], F32), 10)
    sampled = np.asarray(jax.image.resize(stripes, (10,), "linear", antialias=False))
    np.testing.assert_array_equal(sampled, 0.0)
    # The triangle widened 3x has taps 1, 2/3, 1/3 (sum 3) on the pixels 0, 1, 2 away.
    filtered = np.asarray(jax.image.resize(stripes, (10,), "linear"))
    np.testing.assert_allclose(filtered[1:-1], 1 / 3, rtol=1e-6)


def test_nearest_by_hand() -> None:
    np.testing.assert_array_equal(np.asarray(jax.image.resize(np.arange(3), (7,), "nearest")), [0, 0, 1, 1, 1, 2, 2])
    np.testing.assert_array_equal(np.asarray(jax.image.resize(np.arange(10), (3,), "nearest")), [1, 5, 8])
    x = np.arange(12, dtype=np.uint8).reshape(3, 4)
    out = jax.image.resize(x, (2, 8), "nearest")
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(out), x[[0, 2]][:, [0, 0, 1, 1, 2, 2, 3, 3]])


def test_area_averages_the_pixels_each_output_covers() -> None:
    x = np.arange(12.0, dtype=F32)
    np.testing.assert_allclose(np.asarray(jax.image.resize(x, (4,), "area")), x.reshape(4, 3).mean(1), rtol=1e-6)
    # 12 -> 5: each output pixel covers 2.4 input pixels, cut at fractions.
    cuts = np.linspace(0, 12, 6)
    want = [np.sum(np.clip(np.minimum(x + 1, b) - np.maximum(x, a), 0, None) * x) / 2.4 for a, b in zip(cuts, cuts[1:])]
    np.testing.assert_allclose(np.asarray(jax.image.resize(x, (5,), "area")), want, rtol=1e-5)


@pytest.mark.parametrize("method", INTERPOLATING)
@pytest.mark.parametrize("size", [3, 13])
def test_a_constant_image_stays_constant(method: str, size: int) -> None:
    out = jax.image.resize(np.full((7, 1), 2.5, F32), (size, 2), method)
    np.testing.assert_allclose(np.asarray(out), 2.5, rtol=1e-5)


@pytest.mark.parametrize("method", ["linear", "cubic"])
def test_a_ramp_stays_a_ramp_away_from_the_edges(method: str) -> None:
    """The triangle and Keys' a = -0.5 cubic reproduce linear functions wherever all their taps are on the image."""
    out = np.asarray(jax.image.resize(np.arange(10.0, dtype=F32), (25,), method, antialias=False))
    centres = _centres(10, 25)
    interior = (centres >= 2) & (centres <= 7)
    np.testing.assert_allclose(out[interior], centres[interior], rtol=1e-5, atol=1e-5)


def test_cubic_by_hand() -> None:
    # Doubling: every centre sits 0.25 from one pixel; the Keys taps at distances
    # 1.25, 0.25, 0.75, 1.75 are -0.0703125, 0.8671875, 0.2265625, -0.0234375.
    taps = np.array([-0.0703125, 0.8671875, 0.2265625, -0.0234375])
    x = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], F32)
    out = np.asarray(jax.image.resize(x, (14,), "cubic"))
    # Output j samples j/2 - 0.25, so outputs 3..10 sit 1.75, 1.25, 0.75, 0.25, 0.25, ... from pixel 3.
    want = [0, taps[3], taps[0], taps[2], taps[1], taps[1], taps[2], taps[0], taps[3], 0]
    np.testing.assert_allclose(out[2:12], want, atol=1e-6)


# One compile per call signature (eager, every operation of the warp would be dispatched on its own).
_warp = jax.jit(jax.image.scale_and_translate, static_argnums=(1, 2, 5))


def test_scale_and_translate_by_hand() -> None:
    x = np.arange(5.0, dtype=F32)
    # Scale 1 and a shift of one pixel: output j samples input j - 1; the first
    # output's sample point lands off the image (at -1, beyond -0.5) and is 0.
    out = _warp(x, (5,), (0,), jnp.array([1.0]), jnp.array([1.0]), "linear")
    np.testing.assert_allclose(np.asarray(out), [0.0, 0.0, 1.0, 2.0, 3.0], atol=1e-6)
    # Half a pixel: sample points halfway between pixels.
    out = _warp(x, (4,), (0,), jnp.array([1.0]), jnp.array([-0.5]), "linear")
    np.testing.assert_allclose(np.asarray(out), [0.5, 1.5, 2.5, 3.5], atol=1e-6)
    # torch's align_corners=True: the corner pixels map onto each other.
    s = 8 / 4
    out = _warp(x, (9,), (0,), jnp.array([s]), jnp.array([0.5 * (1 - s)]), "linear")
    np.testing.assert_allclose(np.asarray(out), np.arange(9) / 2, atol=1e-6)


def test_scale_and_translate_matches_resize_at_resize_scale() -> None:
    x = np.random.default_rng(3).normal(size=(2, 6, 5, 3)).astype(F32)
    for method in ("linear", "lanczos5"):
        warped = _warp(x, (2, 9, 3, 3), (1, 2), jnp.array([1.5, 0.6]), jnp.zeros(2), method)
        np.testing.assert_allclose(
            np.asarray(warped), np.asarray(jax.image.resize(x, (2, 9, 3, 3), method)), rtol=1e-5, atol=1e-5
        )


def test_integer_images_resize_like_their_float_values() -> None:
    x = np.random.default_rng(4).integers(0, 255, (5, 6)).astype(np.uint8)
    got = jax.image.resize(x, (8, 4), "cubic")
    want = jax.image.resize(x.astype(F32), (8, 4), "cubic")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    flags = np.array([True, False, False, True])
    np.testing.assert_array_equal(np.asarray(jax.image.resize(flags, (8,), "nearest")), np.repeat(flags, 2))


# ---------------------------------------------------------------------------
# Transformations


def _resize_matrix(m: int, n: int, method: str, antialias: bool) -> np.ndarray:
    """The [m, n] weight matrix, read off by resizing the unit images (vmap over the rows of eye)."""
    eye = jnp.eye(m, dtype=np.float32)
    return np.asarray(jax.vmap(lambda e: jax.image.resize(e, (n,), method, antialias=antialias))(eye))


@pytest.mark.parametrize(("method", "antialias"), [("linear", True), ("lanczos3", False), ("area", True)])
def test_jit_vmap_and_grad_agree(method: str, antialias: bool) -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 7)).astype(F32)
    c = rng.normal(size=(3, 4)).astype(F32)
    plain = np.asarray(jax.image.resize(x, (3, 4), method, antialias=antialias))
    jitted = jax.jit(lambda y: jax.image.resize(y, (3, 4), method, antialias=antialias))(x)
    mapped = jax.vmap(lambda y: jax.image.resize(y, (4,), method, antialias=antialias))(x)
    np.testing.assert_allclose(np.asarray(jitted), plain, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(mapped), plain, rtol=1e-6, atol=1e-6)
    # resize is linear in the image: out = x @ W, so the gradient of <out, c> is c @ W^T.
    weights = _resize_matrix(7, 4, method, antialias)
    np.testing.assert_allclose(plain, x @ weights, rtol=1e-5, atol=1e-5)
    grad = jax.grad(lambda y: jnp.sum(jax.image.resize(y, (3, 4), method, antialias=antialias) * c))(x)
    np.testing.assert_allclose(np.asarray(grad), c @ weights.T, rtol=1e-5, atol=1e-5)


def test_gradient_of_nearest_scatters_back_to_the_picked_pixels() -> None:
    grad = jax.grad(lambda y: jnp.sum(jax.image.resize(y, (7,), "nearest") * jnp.arange(7.0)))(jnp.zeros(3))
    np.testing.assert_array_equal(np.asarray(grad), [0 + 1, 2 + 3 + 4, 5 + 6])


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3"])
def test_scale_and_translate_gradients_match_finite_differences(method: str) -> None:
    x = np.random.default_rng(6).normal(size=(5, 4))

    def warp(image: Any, scale: Any, translation: Any) -> Any:
        return jax.image.scale_and_translate(image, (7, 3), (0, 1), scale, translation, method)

    with enable_x64(True):
        # Scale and shift chosen so that no sample sits on a kink of the kernel.
        check_grads(jax.jit(warp), (x, np.array([1.37, 0.71]), np.array([0.23, -0.31])), order=1, modes=("rev",))


# ---------------------------------------------------------------------------
# ResizeMethod and errors


def test_resize_method_names() -> None:
    assert [m.name for m in ResizeMethod] == [
        "NEAREST", "LINEAR", "LANCZOS3", "LANCZOS5", "CUBIC", "CUBIC_PYTORCH", "AREA",
    ]  # fmt: skip
    aliases = {
        ResizeMethod.LINEAR: ["linear", "bilinear", "trilinear", "triangle"],
        ResizeMethod.CUBIC: ["cubic", "bicubic", "tricubic"],
        ResizeMethod.NEAREST: ["nearest"],
        ResizeMethod.LANCZOS3: ["lanczos3"],
        ResizeMethod.LANCZOS5: ["lanczos5"],
    }
    for method, names in aliases.items():
        assert all(ResizeMethod.from_string(name) is method for name in names)
    with pytest.raises(ValueError, match='Unknown resize method "Bilinear"'):
        ResizeMethod.from_string("Bilinear")
    x = np.arange(5.0, dtype=F32)
    np.testing.assert_array_equal(
        np.asarray(jax.image.resize(x, (8,), ResizeMethod.CUBIC)), np.asarray(jax.image.resize(x, (8,), "bicubic"))
    )


def test_errors() -> None:
    x = jnp.ones((3, 4))
    with pytest.raises(ValueError, match=r"number of dimensions of x; \(3,\) vs \(3, 4\)"):
        jax.image.resize(x, (3,), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
        jax.image.resize(x, (6, 8), "bogus")
    with pytest.raises(TypeError, match="must be a jax.image.ResizeMethod or one of its names"):
        jax.image.resize(x, (6, 8), 1)
    with pytest.raises(TypeError, match="nonnegative"):
        jax.image.resize(x, (-1, 4), "linear")
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type"):
        jax.image.resize(x, (3.0, 4), "linear")
    with pytest.raises(ZeroDivisionError, match="dimension 0 of the image has size 0"):
        jax.image.resize(jnp.ones((0, 4)), (3, 4), "linear")
    with pytest.raises(TypeError, match="dimension 0 of the image has size 0"):
        jax.image.resize(jnp.ones((0, 4)), (3, 4), "nearest")


def test_scale_and_translate_errors() -> None:
    x, one, zero = jnp.ones((3, 4)), jnp.ones(2), jnp.zeros(2)
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently supported"):
        jax.image.scale_and_translate(x, (6, 8), (0, 1), one, zero, "nearest")
    with pytest.raises(ValueError, match="number of dimensions of x"):
        jax.image.scale_and_translate(x, (6,), (0,), one[:1], zero[:1], "linear")
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        jax.image.scale_and_translate(x, (6, 8), (0, 2), one, zero, "linear")
    with pytest.raises(ValueError, match="names a dimension twice"):
        jax.image.scale_and_translate(x, (6, 8), (1, -1), one, zero, "linear")
    with pytest.raises(ValueError, match="changes dimension 1 .* not in spatial_dims"):
        jax.image.scale_and_translate(x, (6, 8), (0,), one[:1], zero[:1], "linear")
    with pytest.raises(ValueError, match="scale has 1 entries but spatial_dims names 2"):
        jax.image.scale_and_translate(x, (6, 8), (0, 1), one[:1], zero, "linear")
    with pytest.raises(TypeError, match="translation must be a 1-D array"):
        jax.image.scale_and_translate(x, (6, 8), (0, 1), one, jnp.zeros(()), "linear")
    with pytest.raises(TypeError):
        jax.image.scale_and_translate(x, (6, 8), (0, 1), [2.0, 2.0], [0.0, 0.0], "linear")
