"""The convolutions users call: lax's convenience wrappers, jnp.convolve/correlate, jax.scipy.signal.

Runs on every backend (tests/conftest.py). Values are checked against a
direct NumPy loop over output positions written here (independent of both
backends' convolution), against NumPy's and SciPy's own convolutions, and
against the identities that define the wrappers (a transposed convolution is
the gradient of a forward one; patches contracted with a kernel are the
convolution). jit, grad and vmap go through each public function.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.scipy import signal

scipy_signal = pytest.importorskip("scipy.signal", reason="scipy (a reference for these values) is not installed")

RNG = np.random.default_rng(0)


def randn(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def close(got: Any, want: Any, rtol: float = 2e-5, atol: float = 2e-5) -> None:
    g = np.asarray(got)
    assert g.shape == np.shape(want), (g.shape, np.shape(want))
    np.testing.assert_allclose(g, want, rtol=rtol, atol=atol)


def reference_conv(
    x: np.ndarray,
    k: np.ndarray,
    strides: tuple[int, ...],
    pads: list[tuple[int, int]],
    lhs_dil: tuple[int, ...] | None = None,
    rhs_dil: tuple[int, ...] | None = None,
    groups: int = 1,
) -> np.ndarray:
    """NC... input, OI... kernel: dilate, pad (negative pads crop), then one dot per output position."""
    nsp = x.ndim - 2
    lhs_dil = lhs_dil or (1,) * nsp
    rhs_dil = rhs_dil or (1,) * nsp
    dil_shape = [(s - 1) * d + 1 for s, d in zip(x.shape[2:], lhs_dil)]
    xd = np.zeros(x.shape[:2] + tuple(dil_shape), np.float64)
    xd[(slice(None), slice(None), *(slice(None, None, d) for d in lhs_dil))] = x
    for axis, (lo, hi) in enumerate(pads, start=2):
        xd = np.pad(xd, [(0, 0)] * axis + [(max(lo, 0), max(hi, 0))] + [(0, 0)] * (xd.ndim - axis - 1))
        stop = xd.shape[axis] - max(-hi, 0)
        xd = np.take(xd, range(max(-lo, 0), stop), axis=axis)
    kd_shape = [(s - 1) * d + 1 for s, d in zip(k.shape[2:], rhs_dil)]
    kd = np.zeros(k.shape[:2] + tuple(kd_shape), np.float64)
    kd[(slice(None), slice(None), *(slice(None, None, d) for d in rhs_dil))] = k
    out_sp = [(p - w) // s + 1 for p, w, s in zip(xd.shape[2:], kd_shape, strides)]
    n, c = x.shape[:2]
    o = k.shape[0]
    cg, og = c // groups, o // groups
    out = np.zeros((n, o, *out_sp))
    for pos in itertools.product(*(range(d) for d in out_sp)):
        window = tuple(slice(p * s, p * s + w) for p, s, w in zip(pos, strides, kd_shape))
        for g in range(groups):
            patch = xd[(slice(None), slice(g * cg, (g + 1) * cg), *window)]
            kern = kd[g * og : (g + 1) * og]
            out[(slice(None), slice(g * og, (g + 1) * og), *pos)] = np.tensordot(
                patch, kern, axes=(list(range(1, patch.ndim)), list(range(1, kern.ndim)))
            )
    return out


# ---------------------------------------------------------------------------
# lax.conv, lax.conv_with_general_padding


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides", [(1, 1), (2, 1)])
def test_conv_is_nchw_oihw_with_named_padding(padding: str, strides: tuple[int, int]) -> None:
    x, k = randn(2, 3, 7, 6), randn(4, 3, 3, 2)
    pads = lax.padtype_to_pads((7, 6), (3, 2), strides, padding)
    close(lax.conv(x, k, strides, padding), reference_conv(x, k, strides, pads))


def test_conv_with_general_padding_dilates_both_sides() -> None:
    x, k = randn(1, 2, 5, 6), randn(3, 2, 2, 3)
    pads = [(1, 2), (0, -1)]
    got = lax.conv_with_general_padding(x, k, (1, 2), pads, (2, 1), (1, 2))
    close(got, reference_conv(x, k, (1, 2), pads, (2, 1), (1, 2)))
    # None dilations mean no dilation.
    close(lax.conv_with_general_padding(x, k, (1, 1), "SAME", None, None), lax.conv(x, k, (1, 1), "SAME"))


def test_conv_precision_and_preferred_element_type() -> None:
    x, k = np.arange(2 * 1 * 5, dtype=np.int8).reshape(2, 1, 5), np.ones((1, 1, 3), np.int8)
    out = lax.conv(x, k, (1,), "VALID", preferred_element_type=jnp.int32)
    assert out.dtype == jnp.int32
    close(out, reference_conv(x, k, (1,), [(0, 0)]).astype(np.int32))
    xf, kf = randn(1, 1, 6), randn(1, 1, 3)
    close(lax.conv(xf, kf, (1,), "SAME", precision=lax.Precision.HIGHEST), lax.conv(xf, kf, (1,), "SAME"))
    close(lax.conv(xf, kf, (1,), "SAME", precision=("highest", "default")), lax.conv(xf, kf, (1,), "SAME"))


# ---------------------------------------------------------------------------
# lax.conv_transpose


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize(("in_size", "k_size", "stride"), [(5, 3, 2), (4, 4, 2), (6, 2, 3), (5, 3, 1)])
def test_conv_transpose_output_sizes(padding: str, in_size: int, k_size: int, stride: int) -> None:
    x, k = randn(1, in_size, in_size, 2), randn(k_size, k_size, 2, 3)
    out = lax.conv_transpose(x, k, (stride, stride), padding)
    want = in_size * stride if padding == "SAME" else in_size * stride + max(k_size - stride, 0)
    assert out.shape == (1, want, want, 3)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("rhs_dilation", [None, (2, 1)])
def test_conv_transpose_with_transpose_kernel_is_the_gradient_of_conv(padding: str, rhs_dilation: Any) -> None:
    # Keras' Conv2DTranspose: the vjp of the forward convolution with respect to its input.
    x, k = randn(2, 8, 9, 3), randn(3, 2, 3, 4)
    dn = ("NHWC", "HWIO", "NHWC")

    def forward(v: Any) -> Any:
        return lax.conv_general_dilated(v, k, (2, 2), padding, rhs_dilation=rhs_dilation, dimension_numbers=dn)

    y, vjp = jax.vjp(forward, x)
    ct = randn(*y.shape)
    (want,) = vjp(ct)
    got = lax.conv_transpose(ct, k, (2, 2), padding, rhs_dilation=rhs_dilation, dimension_numbers=dn,
                             transpose_kernel=True)
    # The transposed convolution's size is in * stride (+ max(k - stride, 0) for VALID), which can
    # differ from x's by less than a stride: where x is longer, its gradient is zero (the forward
    # convolution never read those elements); where the output is longer, the extra entries are not compared.
    h, w = min(got.shape[1], x.shape[1]), min(got.shape[2], x.shape[2])
    close(got[:, :h, :w], want[:, :h, :w], rtol=1e-4, atol=1e-4)
    assert not np.asarray(want)[:, h:].any() and not np.asarray(want)[:, :, w:].any()


def test_conv_transpose_explicit_padding_and_consistent_padding() -> None:
    x, k = randn(1, 4, 2), randn(3, 2, 5)  # NHC, HIO (the rank-3 defaults)
    pads = ((1, 2),)
    # Explicit pairs are the transposed convolution's own pads ...
    close(lax.conv_transpose(x, k, (2,), pads),
          lax.conv_general_dilated(x, k, (1,), pads, (2,), None, ("NHC", "HIO", "NHC")))
    # ... unless use_consistent_padding says they are the forward convolution's (PyTorch's meaning):
    # then conv_transpose with transpose_kernel is the gradient of that convolution.
    def forward(v: Any) -> Any:
        return lax.conv_general_dilated(v, k[:, :, :2].transpose(0, 2, 1), (2,), pads,
                                        dimension_numbers=("NHC", "HIO", "NHC"))

    xin = randn(1, 7, 2)
    y, vjp = jax.vjp(forward, xin)
    ct = randn(*y.shape)
    got = lax.conv_transpose(ct, k[:, :, :2].transpose(0, 2, 1), (2,), pads, transpose_kernel=True,
                             use_consistent_padding=True)
    # Without an output padding the transposed convolution is 2 * 4 - 2 = 6 long, x is 7: the gradient's
    # first 6 entries.
    assert got.shape == (1, 6, 2)
    close(got, vjp(ct)[0][:, :6], rtol=1e-4, atol=1e-4)


def test_conv_transpose_default_layouts_and_errors() -> None:
    for ndim, spec in [(2, ("NC", "IO", "NC")), (3, ("NHC", "HIO", "NHC")), (5, ("NHWDC", "HWDIO", "NHWDC"))]:
        x, k = randn(*([2] * ndim)), randn(*([2] * ndim))
        strides = (1,) * (ndim - 2)
        close(lax.conv_transpose(x, k, strides, "VALID"), lax.conv_transpose(x, k, strides, "VALID",
                                                                             dimension_numbers=spec))
    with pytest.raises(ValueError, match="No 4\\+ dimensional dimension_number defaults"):
        lax.conv_transpose(randn(*[1] * 6), randn(*[1] * 6), (1,) * 4, "VALID")
    with pytest.raises(ValueError, match="Invalid padding mode"):
        lax.conv_transpose(randn(1, 3, 1), randn(2, 1, 1), (1,), [[0, 0]], use_consistent_padding=True)
    with pytest.raises(ValueError, match="same rank"):
        lax.conv_transpose(randn(1, 3, 1), randn(2, 1), (1,), "SAME")
    # A padding name other than SAME/VALID goes to conv_general_dilated, which refuses it with strides.
    with pytest.raises(ValueError, match="String padding is not implemented for transposed convolution"):
        lax.conv_transpose(randn(1, 3, 1), randn(2, 1, 1), (2,), "SAME_LOWER")


# ---------------------------------------------------------------------------
# conv_general_dilated_patches and conv_general_dilated_local


def test_patches_are_the_receptive_fields_feature_major() -> None:
    x = randn(2, 3, 5, 4)  # NCHW
    got = np.asarray(lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID"))
    assert got.shape == (2, 3 * 2 * 3, 4, 2)
    for i, j in itertools.product(range(4), range(2)):
        np.testing.assert_allclose(got[:, :, i, j], x[:, :, i : i + 2, j : j + 3].reshape(2, -1), rtol=1e-6)


def test_patches_follow_dimension_numbers_strides_and_dilations() -> None:
    x = randn(1, 9, 8, 2)  # NHWC
    dn = ("NHWC", "OIWH", "NHWC")  # window positions in rhs_spec's spatial order: W then H
    got = np.asarray(lax.conv_general_dilated_patches(x, (2, 3), (2, 1), [(1, 0), (0, 1)], rhs_dilation=(1, 2),
                                                      dimension_numbers=dn))
    # Everything spatial (filter_shape, strides, padding, dilation) is in rhs_spec's order: W, then H.
    xp = np.pad(x, [(0, 0), (0, 1), (1, 0), (0, 0)])  # H padded (0, 1), W (1, 0)
    assert got.shape == (1, 6, 4, 2 * 2 * 3)  # H: 10 - 5 + 1 (window 3 dilated by 2); W: (9 - 2) // 2 + 1
    for i, j in itertools.product(range(6), range(4)):
        rows = [i + 2 * a for a in range(3)]  # H: stride 1, window 3 dilated by 2
        cols = [2 * j + b for b in range(2)]  # W: stride 2, window 2
        patch = xp[0][np.ix_(rows, cols)]  # (H, W, C)
        # Feature order: c, then the window positions in rhs_spec's order (w, then h).
        np.testing.assert_allclose(got[0, i, j], patch.transpose(2, 1, 0).reshape(-1), rtol=1e-6)


def test_patches_preferred_element_type_and_integer_input() -> None:
    x = np.arange(12, dtype=np.int16).reshape(1, 1, 12)
    got = lax.conv_general_dilated_patches(x, (3,), (3,), "VALID", preferred_element_type=jnp.int32)
    assert got.dtype == jnp.int32
    close(got, x[0, 0].reshape(1, 4, 3).transpose(0, 2, 1))


def test_local_convolution_uses_one_kernel_per_output_position() -> None:
    x = randn(2, 3, 6, 5)  # NCHW
    out_h, out_w = 5, 3
    k = randn(out_h, out_w, 3 * 2 * 3, 4)  # HWIO with I = (c, window h, window w)
    dn = ("NCHW", "HWIO", "NCHW")
    got = np.asarray(lax.conv_general_dilated_local(x, k, (1, 1), "VALID", (2, 3), dimension_numbers=dn))
    assert got.shape == (2, 4, out_h, out_w)
    for i, j in itertools.product(range(out_h), range(out_w)):
        patch = x[:, :, i : i + 2, j : j + 3].reshape(2, -1)
        np.testing.assert_allclose(got[:, :, i, j], patch @ k[i, j], rtol=1e-5, atol=1e-5)


def test_local_convolution_layouts_agree() -> None:
    x = randn(1, 2, 5, 4)
    k = randn(4, 3, 2 * 2 * 2, 3)  # HWIO: VALID (2, 2) windows give 4 x 3 positions, I = 2 features x 2 x 2
    a = lax.conv_general_dilated_local(x, k, (1, 1), "VALID", (2, 2), dimension_numbers=("NCHW", "HWIO", "NCHW"))
    b = lax.conv_general_dilated_local(x.transpose(0, 2, 3, 1), k.transpose(3, 2, 0, 1), (1, 1), "VALID", (2, 2),
                                       dimension_numbers=("NHWC", "OIHW", "NHWC"))
    close(np.asarray(b).transpose(0, 3, 1, 2), a)


# ---------------------------------------------------------------------------
# jnp.convolve and jnp.correlate


LENGTHS = [(7, 3), (3, 7), (5, 5), (6, 1), (1, 4)]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(("n", "m"), LENGTHS)
def test_jnp_convolve_and_correlate_match_numpy(mode: str, n: int, m: int) -> None:
    a, v = randn(n), randn(m)
    close(jnp.convolve(a, v, mode=mode), np.convolve(a.astype(np.float64), v, mode=mode))
    close(jnp.correlate(a, v, mode=mode), np.correlate(a.astype(np.float64), v, mode=mode))


def test_jnp_convolve_dtypes() -> None:
    ints = jnp.convolve(jnp.arange(4), jnp.array([1, 2]))
    assert ints.dtype == jnp.float32  # NumPy's convolutions compute in floating point
    kept = jnp.convolve(jnp.arange(4, dtype=jnp.int16), jnp.array([1, 2], jnp.int16), preferred_element_type=jnp.int32)
    assert kept.dtype == jnp.int32
    close(kept, np.convolve(np.arange(4), [1, 2]))
    assert jnp.convolve(jnp.ones(3, jnp.bfloat16), jnp.ones(2, jnp.bfloat16)).dtype == jnp.bfloat16


def test_jnp_convolve_is_one_convolution() -> None:
    # One conv_general_dilated (memory O(len(a) + len(v))), not a dot against a sliding-window matrix.
    text = str(jax.make_jaxpr(lambda a, v: jnp.convolve(a, v, mode="same"))(jnp.ones(50), jnp.ones(7)))
    assert text.count("conv_general_dilated[") == 1
    assert "dot_general" not in text


def test_jnp_convolve_errors() -> None:
    with pytest.raises(ValueError, match="only support 1-dimensional inputs"):
        jnp.convolve(jnp.ones((2, 2)), jnp.ones(2))
    with pytest.raises(ValueError, match="inputs cannot be empty"):
        jnp.correlate(jnp.ones(0), jnp.ones(2))
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.convolve(jnp.ones(3), jnp.ones(2), mode="middle")
    with pytest.raises(TypeError, match="convolve requires ndarray or scalar arguments"):
        jnp.convolve([1.0, 2.0], jnp.ones(2))


def test_jnp_convolve_under_jit_grad_and_vmap() -> None:
    a, v = randn(9), randn(4)
    close(jax.jit(jnp.convolve, static_argnames="mode")(a, v, mode="valid"), np.convolve(a, v, mode="valid"))
    # d/da sum(w * conv(a, v)) = correlate(w, v) (full length of a).
    w = randn(12)
    ga, gv = jax.grad(lambda a, v: jnp.sum(w * jnp.convolve(a, v)), argnums=(0, 1))(a, v)
    close(ga, np.correlate(w.astype(np.float64), v, mode="valid"), rtol=1e-4, atol=1e-4)
    close(gv, np.correlate(w.astype(np.float64), a, mode="valid"), rtol=1e-4, atol=1e-4)
    batch = randn(3, 9)
    close(jax.vmap(jnp.correlate, in_axes=(0, None))(batch, v),
          np.stack([np.correlate(row, v) for row in batch.astype(np.float64)]))


# ---------------------------------------------------------------------------
# jax.scipy.signal


SHAPES_2D = [((6, 5), (3, 2)), ((3, 2), (6, 5)), ((4, 4), (4, 4)), ((5, 3), (1, 3))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(("s1", "s2"), SHAPES_2D)
def test_signal_2d_matches_scipy(mode: str, s1: tuple[int, int], s2: tuple[int, int]) -> None:
    a, b = randn(*s1).astype(np.float64), randn(*s2).astype(np.float64)
    for ours, theirs in [(signal.convolve, scipy_signal.convolve), (signal.correlate, scipy_signal.correlate),
                         (signal.convolve2d, scipy_signal.convolve2d), (signal.correlate2d, scipy_signal.correlate2d)]:
        if mode == "valid" and theirs in (scipy_signal.convolve, scipy_signal.correlate) and s1 < s2:
            continue  # SciPy requires in1 to be the larger for N-d 'valid'; JAX (and minijax) swap
        close(ours(a.astype(np.float32), b.astype(np.float32), mode=mode), theirs(a, b, mode=mode), rtol=1e-4,
              atol=1e-4)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_signal_nd_and_swapped_roles(mode: str) -> None:
    a, b = randn(4, 3, 5), randn(2, 3, 2)
    close(signal.convolve(a, b, mode=mode), scipy_signal.convolve(a.astype(np.float64), b, mode=mode), rtol=1e-4,
          atol=1e-4)
    c1, c2 = randn(5, 4), randn(2, 3)
    for name in ("correlate", "correlate2d", "convolve2d"):
        close(getattr(signal, name)(c1, c2, mode=mode), getattr(scipy_signal, name)(c1.astype(float), c2, mode=mode),
              rtol=1e-4, atol=1e-4)
        close(getattr(signal, name)(c2, c1, mode=mode), getattr(scipy_signal, name)(c2.astype(float), c1, mode=mode),
              rtol=1e-4, atol=1e-4)


def test_signal_dtypes_and_methods() -> None:
    out = signal.convolve(jnp.array([1, 2, 3]), jnp.array([1, 1]))
    assert out.dtype == jnp.float32
    close(out, [1.0, 3.0, 5.0, 3.0])
    close(signal.convolve(jnp.ones(3), jnp.ones(2), method="direct"), signal.convolve(jnp.ones(3), jnp.ones(2)))
    close(signal.convolve(jnp.arange(3.0), jnp.ones(2), method="fft"), [0.0, 1.0, 3.0, 2.0], atol=1e-6)


def test_signal_errors() -> None:
    with pytest.raises(ValueError, match="in1 and in2 should have the same dimensionality"):
        signal.convolve(jnp.ones(3), jnp.ones((2, 2)), method="fft")
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        signal.convolve(jnp.ones(3), jnp.ones(2), method="overlap-add")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(jnp.ones(3), jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="One input must be smaller than the other in every dimension"):
        signal.convolve(jnp.ones((3, 1)), jnp.ones((1, 3)))
    with pytest.raises(ValueError, match="zero-size arrays"):
        signal.correlate(jnp.ones(3), jnp.ones(0))
    with pytest.raises(ValueError, match="mode must be one of"):
        signal.convolve(jnp.ones(3), jnp.ones(2), mode="middle")
    with pytest.raises(NotImplementedError, match="only supports boundary='fill', fillvalue=0"):
        signal.convolve2d(jnp.ones((3, 3)), jnp.ones((2, 2)), boundary="wrap")
    with pytest.raises(NotImplementedError, match="only supports boundary='fill', fillvalue=0"):
        signal.correlate2d(jnp.ones((3, 3)), jnp.ones((2, 2)), fillvalue=1.0)
    with pytest.raises(ValueError, match="only supports 2-dimensional inputs"):
        signal.convolve2d(jnp.ones(3), jnp.ones(2))


def test_signal_under_jit_grad_and_vmap() -> None:
    a, b = randn(6, 5), randn(3, 2)
    close(jax.jit(signal.convolve2d)(a, b), scipy_signal.convolve2d(a.astype(np.float64), b), rtol=1e-4, atol=1e-4)
    g = jax.grad(lambda a: jnp.sum(signal.correlate(a, b, mode="same") ** 2))(a)
    eps = 1e-3
    probe = np.zeros_like(a)
    probe[2, 3] = eps
    f = lambda a: float(jnp.sum(signal.correlate(a, b, mode="same") ** 2))  # noqa: E731
    np.testing.assert_allclose(float(g[2, 3]), (f(a + probe) - f(a - probe)) / (2 * eps), rtol=2e-2)
    batch = randn(2, 6, 5)
    close(jax.vmap(signal.convolve, in_axes=(0, None))(batch, b),
          np.stack([scipy_signal.convolve(m.astype(np.float64), b) for m in batch]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", ["linear", "constant"])
@pytest.mark.parametrize("bp", [0, [3, 7]])
def test_detrend_matches_scipy(kind: str, bp: Any) -> None:
    data = randn(3, 10).astype(np.float64) + np.arange(10)
    got = signal.detrend(data.astype(np.float32), axis=1, type=kind, bp=bp)
    close(got, scipy_signal.detrend(data, axis=1, type=kind, bp=bp), rtol=1e-3, atol=1e-4)


def test_detrend_errors() -> None:
    with pytest.raises(ValueError, match="Trend type must be 'linear' or 'constant'"):
        signal.detrend(jnp.ones(4), type="quadratic")
    with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
        signal.detrend(jnp.ones(4), bp=[9])
    with pytest.raises(NotImplementedError, match="overwrite_data"):
        signal.detrend(jnp.ones(4), overwrite_data=True)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# The lax wrappers under jit, grad and vmap


def test_wrappers_under_vmap_match_a_loop() -> None:
    xs, k = randn(3, 1, 5, 4, 2), randn(2, 2, 2, 3)  # a mapped axis over NHWC images; HWIO kernel
    for f in [
        lambda x: lax.conv_transpose(x, k, (2, 1), "SAME"),
        lambda x: lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID",
                                                   dimension_numbers=("NHWC", "HWIO", "NHWC")),
        lambda x: lax.conv(x.transpose(0, 3, 1, 2), k.transpose(3, 2, 0, 1), (1, 1), "SAME"),
    ]:
        close(jax.vmap(f)(xs), np.stack([np.asarray(f(x)) for x in xs]), rtol=1e-5, atol=1e-5)
        close(jax.jit(jax.vmap(f))(xs), jax.vmap(f)(xs), rtol=1e-5, atol=1e-5)


def test_local_convolution_gradients_are_patch_products() -> None:
    x = randn(2, 3, 5, 4)  # NCHW
    k = randn(4, 3, 3 * 2 * 2, 5)  # HWIO, VALID (2, 2) windows: 4 x 3 positions
    w = randn(2, 5, 4, 3)
    dn = ("NCHW", "HWIO", "NCHW")

    def loss(x: Any, k: Any) -> Any:
        return jnp.sum(w * lax.conv_general_dilated_local(x, k, (1, 1), "VALID", (2, 2), dimension_numbers=dn))

    gx, gk = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, k)
    # d loss / d k[i, j] = patch(i, j)^T w[:, :, i, j]; d loss / d x scatters k[i, j] @ w back over each window.
    want_gk = np.zeros_like(k)
    want_gx = np.zeros_like(x)
    for i, j in itertools.product(range(4), range(3)):
        patch = x[:, :, i : i + 2, j : j + 2].reshape(2, -1)
        want_gk[i, j] = patch.T @ w[:, :, i, j]
        want_gx[:, :, i : i + 2, j : j + 2] += (w[:, :, i, j] @ k[i, j].T).reshape(2, 3, 2, 2)
    close(gk, want_gk, rtol=1e-4, atol=1e-4)
    close(gx, want_gx, rtol=1e-4, atol=1e-4)
