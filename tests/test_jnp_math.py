"""The numerical jnp functions of issue 21 on every backend: values against NumPy
(which defines them), dtypes and weak types, and their behaviour under jit, grad
and vmap. The oracle comparison with JAX itself is test_jnp_math_oracle.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
import minijax.scipy.integrate

rng = np.random.default_rng(1)
F = rng.standard_normal((4, 6)).astype(np.float32)
NANS = F.copy()
NANS[1, 2] = NANS[3, 0] = np.nan


def close(got: Any, want: Any, rtol: float = 2e-5, atol: float = 2e-6) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol, equal_nan=True)


@pytest.fixture(autouse=True)
def _on_backend(backend_name: str) -> None:
    """Run each test once per backend (the conftest sets the default backend)."""


PAD_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum", "reflect", "symmetric", "wrap")


@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad_modes_match_numpy(mode: str) -> None:
    widths = ((2, 7), (5, 1))
    close(jnp.pad(F, widths, mode=mode), np.pad(F, widths, mode=mode))
    got = jax.jit(lambda x: jnp.pad(x, 3, mode=mode))(F[:2])
    close(got, np.pad(F[:2], 3, mode=mode))


PAD_OPTIONS: list[tuple[Any, str, dict[str, Any]]] = [
    (9, "reflect", {"reflect_type": "odd"}),
    ((1, 4), "symmetric", {"reflect_type": "odd"}),
    (2, "mean", {"stat_length": ((1, 3), (2, 2))}),
    (3, "linear_ramp", {"end_values": ((1, 2), (3, 4))}),
    (1, "constant", {"constant_values": ((5, 6), (7, 8))}),
]


def test_pad_options_match_numpy() -> None:
    outs = jax.jit(lambda x: [jnp.pad(x, w, mode=mode, **kw) for w, mode, kw in PAD_OPTIONS])(F)
    for out, (w, mode, kw) in zip(outs, PAD_OPTIONS):
        close(out, np.pad(F, w, mode=mode, **kw))
    out = jnp.pad(np.arange(3, dtype=np.int32), 2, mode="mean")
    assert out.dtype == np.int32
    close(out, np.pad(np.arange(3), 2, mode="mean"))
    assert jnp.pad(jnp.asarray(2.0), 1).weak_type
    # Empty mode is zeros (arrays are immutable).
    close(jnp.pad(F, 1, mode="empty")[1:-1, 1:-1], F)


def test_pad_callable_mode() -> None:
    def fill(vector: Any, width: tuple[int, int], iaxis: int, kwargs: dict[str, Any]) -> Any:
        return vector.at[:width[0]].set(kwargs["value"]).at[vector.shape[0] - width[1]:].set(-kwargs["value"])

    want = np.pad(F, ((1, 2), (2, 1)), mode=lambda v, w, i, k: _numpy_fill(v, w, k))
    close(jnp.pad(F, ((1, 2), (2, 1)), mode=fill, value=9.0), want)


def _numpy_fill(vector: np.ndarray, width: tuple[int, int], kwargs: dict[str, Any]) -> None:
    vector[:width[0]] = 9.0
    vector[vector.shape[0] - width[1]:] = -9.0


def test_pad_grad_and_vmap() -> None:
    g = jax.jit(jax.grad(lambda x: jnp.sum(jnp.pad(x, 2, mode="reflect") ** 2)))(F)
    # Each element is counted once plus once per mirror image of it.
    idx = np.pad(np.arange(F.size).reshape(F.shape), 2, mode="reflect")
    multiplicity = np.bincount(idx.ravel(), minlength=F.size).reshape(F.shape)
    close(g, 2 * F * multiplicity)
    close(jax.jit(jax.vmap(lambda r: jnp.pad(r, 2, mode="wrap")))(F), np.pad(F, ((0, 0), (2, 2)), mode="wrap"))


def test_pad_errors() -> None:
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'bogus'"):
        jnp.pad(F, 1, mode="bogus")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jnp.pad(F, 1, mode="edge", constant_values=0)
    with pytest.raises(ValueError, match="index can't contain negative values"):
        jnp.pad(F, -1)
    with pytest.raises(TypeError, match="must be of integral type"):
        jnp.pad(F, 1.5)
    with pytest.raises(ValueError, match="Cannot apply 'wrap' padding to empty axis"):
        jnp.pad(np.zeros((0, 2), np.float32), 1, mode="wrap")


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"])
def test_quantile_methods_match_numpy(method: str) -> None:
    q = np.array([0.0, 0.22, 0.47, 0.86, 1.0], np.float32)  # no ties: NumPy and JAX round those differently
    close(jnp.quantile(F, q, axis=1, method=method), np.quantile(F, q, axis=1, method=method))
    close(jnp.nanquantile(NANS, q, axis=0, method=method), np.nanquantile(NANS, q, axis=0, method=method))


def test_median_percentile_family() -> None:
    x3 = rng.standard_normal((3, 4, 5)).astype(np.float32)
    close(jnp.median(x3, axis=(0, 2)), np.median(x3, axis=(0, 2)))
    close(jnp.median(x3, axis=(2, 0), keepdims=True), np.median(x3, axis=(2, 0), keepdims=True))
    close(jnp.percentile(F, np.array([10, 50]), axis=0, keepdims=True), np.percentile(F, [10, 50], axis=0, keepdims=True))
    close(jnp.nanmedian(NANS, axis=1), np.nanmedian(NANS, axis=1))
    close(jnp.nanpercentile(NANS, 75.0), np.nanpercentile(NANS, 75.0))
    assert np.isnan(float(jnp.median(NANS)))
    out = jnp.median(np.arange(5, dtype=np.int32))
    assert out.dtype == np.float32 and not out.weak_type
    close(jax.jit(jnp.median)(F), np.median(F))
    close(jax.vmap(jnp.median)(F), np.median(F, axis=1))
    # d median / dx: one-half on each of the two middle elements of an even row.
    g = jax.jit(jax.grad(lambda x: jnp.median(x)))(F[0])
    order = np.argsort(F[0])
    want = np.zeros(6, np.float32)
    want[order[2]] = want[order[3]] = 0.5
    close(g, want)
    with pytest.raises(ValueError, match="method can only be"):
        jnp.quantile(F, 0.5, method="hazen")


def test_statistics_match_numpy() -> None:
    w = np.abs(F) + 0.1
    close(jnp.average(F, axis=1, weights=w[0]), np.average(F, axis=1, weights=w[0]))
    avg, total = jnp.average(F, axis=0, weights=w, returned=True)
    want_avg, want_total = np.average(F, axis=0, weights=w, returned=True)
    close(avg, want_avg)
    close(total, want_total)
    close(jnp.cov(F), np.cov(F), rtol=1e-4)
    fw = np.array([1, 2, 0, 3, 1, 1])
    close(jnp.cov(F, fweights=fw, aweights=w[0]), np.cov(F, fweights=fw, aweights=w[0]), rtol=1e-4)
    close(jnp.cov(F, F[:, :2], rowvar=False), np.cov(F, F[:, :2], rowvar=False), rtol=1e-4)
    close(jnp.corrcoef(F), np.corrcoef(F), rtol=1e-4)
    close(jnp.nan_to_num(np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)),
          np.nan_to_num(np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)))
    close(jnp.nanprod(NANS, axis=1), np.nanprod(NANS, axis=1), rtol=1e-4)
    close(jax.vmap(jnp.cov)(np.stack([F, 2 * F])), np.stack([np.cov(F), np.cov(2 * F)]), rtol=1e-4)


def test_differences_integration_interpolation() -> None:
    close(jnp.diff(F, n=2, axis=0, prepend=0.0), np.diff(F, n=2, axis=0, prepend=0.0))
    close(jnp.ediff1d(F, to_begin=-1.0, to_end=np.array([7.0, 8.0])), np.ediff1d(F, to_begin=-1.0, to_end=[7.0, 8.0]))
    coords = np.cumsum(np.abs(F[0]) + 0.1)
    for got, want in zip(jnp.gradient(F, 2.0, coords), np.gradient(F, 2.0, coords)):
        close(got, want, rtol=1e-4, atol=1e-5)
    close(jnp.trapezoid(F, coords), np.trapezoid(F, coords), rtol=1e-4)
    close(minijax.scipy.integrate.trapezoid(F, dx=0.5, axis=0), np.trapezoid(F, dx=0.5, axis=0))
    phase = np.cumsum(3 * F, axis=1)
    close(jnp.unwrap(phase), np.unwrap(phase), rtol=1e-4, atol=1e-4)
    xp = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
    fp = np.array([1.0, -1.0, 3.0, 0.5], np.float32)
    x = np.linspace(-1, 5, 11).astype(np.float32)
    close(jnp.interp(x, xp, fp), np.interp(x, xp, fp))
    close(jnp.interp(x, xp, fp, left=-9, right=9), np.interp(x, xp, fp, left=-9, right=9))
    close(jnp.interp(x, xp, fp, period=4.5), np.interp(x, xp, fp, period=4.5), rtol=1e-5, atol=1e-5)
    close(jax.grad(lambda t: jnp.sum(jnp.interp(t, xp, fp)))(np.array([0.5, 3.0], np.float32)), [-2.0, -5 / 3])
    close(jax.vmap(lambda row: jnp.trapezoid(row))(F), np.trapezoid(F, axis=1))
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(F, edge_order=2)


def test_histograms_match_numpy() -> None:
    sample = rng.standard_normal((40, 3)).astype(np.float32)
    # Under jit: one compilation on XLA rather than one per operation.
    hist, edges = jax.jit(lambda s: jnp.histogramdd(s, bins=[3, 4, 2], range=[(-1, 1), None, (0, 2)]))(sample)
    want, want_edges = np.histogramdd(sample, bins=[3, 4, 2], range=[(-1, 1), None, (0, 2)])
    close(hist, want)
    for e, we in zip(edges, want_edges):
        close(e, we, rtol=1e-5, atol=1e-6)
    h2, xe, ye = jax.jit(lambda a, b: jnp.histogram2d(a, b, bins=(3, 5), density=True))(sample[:, 0], sample[:, 1])
    w2, wxe, wye = np.histogram2d(sample[:, 0], sample[:, 1], bins=(3, 5), density=True)
    close(h2, w2, rtol=1e-4)
    close(xe, wxe, rtol=1e-5, atol=1e-6)


def test_float_decomposition_and_integers() -> None:
    # No subnormals: XLA on CPU flushes them to zero (as under JAX), NumPy does not.
    x = np.array([0.0, -0.0, 1.0, -3.5, 2e-38, 3e38, np.inf, np.nan, 0.1], np.float32)
    m, e = jnp.frexp(x)
    wm, we = np.frexp(x)
    close(m, wm)
    np.testing.assert_array_equal(np.asarray(e), we)
    assert e.dtype == np.int32
    close(jnp.ldexp(x, np.arange(9, dtype=np.int32) - 4), np.ldexp(x, np.arange(9) - 4))
    frac, whole = jnp.modf(np.array([-2.5, 0.25, 3.0], np.float32))
    close(frac, [-0.5, 0.25, 0.0])
    close(whole, [-2.0, 0.0, 3.0])
    close(jnp.spacing(x[:6]), np.spacing(x[:6]))
    a = np.array([0, 12, -18, 7, 0], np.int32)
    b = np.array([0, 8, 24, 0, 5], np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.gcd(a, b)), np.gcd(a, b))
    np.testing.assert_array_equal(np.asarray(jnp.lcm(a, b)), np.lcm(a, b))
    np.testing.assert_array_equal(np.asarray(jax.vmap(jnp.gcd)(a, b)), np.gcd(a, b))
    close(jax.grad(lambda t: jnp.sum(jnp.frexp(t)[0]))(np.array([3.0, 0.1], np.float32)), [0.25, 8.0])
    with pytest.raises(ValueError, match="must be integers"):
        jnp.gcd(1.5, 2)


def test_i0_and_windows() -> None:
    x = np.linspace(-15, 15, 31).astype(np.float32)
    close(jax.jit(jnp.i0)(x), np.i0(x), rtol=1e-5)
    # I0' = I1, and exactly 0 at the origin (JAX's custom jvp).
    i1 = np.array([0.0, 0.5651591, 1.5906369], np.float32)  # scipy.special.i1 at 0, 1, 2
    slopes = jax.jit(jax.vmap(jax.grad(jnp.i0)))(np.array([0.0, 1.0, 2.0], np.float32))
    close(slopes, i1, rtol=1e-5)
    assert float(slopes[0]) == 0.0
    names = ("bartlett", "blackman", "hamming", "hanning")
    windows = jax.jit(lambda: [getattr(jnp, name)(n) for name in names for n in (0, 1, 6, 9)])()
    for out, (name, n) in zip(windows, [(name, n) for name in names for n in (0, 1, 6, 9)]):
        assert out.dtype == np.float32 and out.shape == (n,)
        close(out, getattr(np, name)(n), atol=1e-6)
    close(jnp.kaiser(8, 3.0), np.kaiser(8, 3.0), rtol=1e-5)


def test_i0_is_built_on_the_bessel_i0e_primitive() -> None:
    # As in JAX: exp(|x|) * bessel_i0e(|x|), not a private series (its jaxpr shows the primitive).
    text = str(jax.make_jaxpr(jnp.i0)(np.float32(1.5)))
    assert "bessel_i0e" in text
    close(jnp.i0(np.float32(1.5)), np.i0(np.float32(1.5)), rtol=1e-6)


def test_polynomials_match_numpy() -> None:
    p = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    q = np.array([2.0, 1.0], np.float32)
    close(jnp.poly(np.array([1.0, 2.0, -3.0], np.float32)), np.poly([1.0, 2.0, -3.0]))
    close(jnp.polyadd(p, q), np.polyadd(p, q))
    close(jnp.polysub(q, p), np.polysub(q, p))
    close(jnp.polymul(p, q), np.polymul(p, q))
    quot, rem = jax.jit(jnp.polydiv)(p, q)
    wq, wr = np.polydiv(p, q)
    close(quot, wq)
    close(rem[-1:], wr, rtol=1e-5, atol=1e-5)
    close(jnp.polyder(p, 2), np.polyder(p, 2))
    close(jnp.polyint(p, 2, np.array([1.0, 2.0])), np.polyint(p, 2, [1.0, 2.0]))
    x = np.linspace(-1, 1, 12).astype(np.float32)
    y = 3 * x**2 - x + 0.5 + 0.01 * rng.standard_normal(12).astype(np.float32)
    c, covariance = jax.jit(lambda a, b: jnp.polyfit(a, b, 1, cov=True))(x, y)
    wc, wcov = np.polyfit(x, y, 1, cov=True)
    close(c, wc, rtol=1e-4, atol=1e-5)
    close(covariance, wcov, rtol=1e-3, atol=1e-6)
    close(jax.jit(lambda a, b: jnp.polyfit(a, b, 2, w=jnp.ones_like(a)))(x, y), np.polyfit(x, y, 2), rtol=1e-3,
          atol=1e-4)
    # d/dp of sum(polyder(p)) is the falling-factorial weight of each coefficient.
    close(jax.jit(jax.grad(lambda t: jnp.sum(jnp.polyder(t))))(p), [3.0, 2.0, 1.0, 0.0])
    # A square matrix: its characteristic polynomial (complex, from its eigenvalues), as np.poly.
    m = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    close(jnp.poly(m), np.poly(m), rtol=1e-5, atol=1e-5)
    close(jnp.sort_complex(jnp.roots(np.array([1.0, -6.0, 11.0, -6.0], np.float32))), [1, 2, 3], rtol=1e-4, atol=1e-4)
