"""The FFT against real JAX: ``jnp.fft`` values, dtypes and jaxpr text,
``lax.fft``'s errors, and the derivatives of every ``FftType`` (vjp with the
same cotangent, which pins down the RFFT/IRFFT transposes' Hermitian
weights and conjugation), over a grid and hypothesis-drawn shapes, axes and norms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax
import minijax.numpy as mjnp
from minijax import lax as mlax
from minijax.config import enable_x64

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
jnp = jax.numpy

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 6)).astype(np.float32)
Z = (RNG.standard_normal((3, 4, 6)) + 1j * RNG.standard_normal((3, 4, 6))).astype(np.complex64)
REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn"}
NAMES = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
         "rfftn", "irfftn"]


def _same(mine: Any, theirs: Any, rtol: float = 2e-5) -> None:
    mine, theirs = np.asarray(mine), np.asarray(theirs)
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
    scale = max(1.0, float(np.abs(theirs).max(initial=0)))
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=rtol * scale)


def _options(name: str) -> list[dict[str, Any]]:
    if name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        return [{}, {"n": 5, "axis": 1}, {"n": 8, "axis": 0, "norm": "ortho"}, {"norm": "forward"},
                {"norm": "backward"}]
    return [{}, {"axes": (0, 2)}, {"s": (5, 4), "norm": "ortho"}, {"s": (2, 7), "axes": (2, 0), "norm": "forward"}]


@pytest.mark.parametrize("name", NAMES)
def test_values_dtypes_and_jaxprs_match_jax(name: str) -> None:
    a = X if name in REAL_IN else Z
    for kwargs in _options(name):
        _same(getattr(mjnp.fft, name)(a, **kwargs), getattr(jnp.fft, name)(a, **kwargs))
    # The jaxpr text of the plain call (options that crop or pad stage jnp.pad, whose text differs).
    mine = minijax.make_jaxpr(getattr(mjnp.fft, name))(a)
    theirs = jax.make_jaxpr(getattr(jnp.fft, name))(a)
    assert str(mine) == str(theirs)


def test_x64_dtypes_match_jax() -> None:
    for x64 in (False, True):
        with enable_x64(x64), jax.enable_x64(x64):
            for a in (np.arange(4), np.arange(4.0), np.arange(4, dtype=np.float32), np.ones(4, np.complex128)):
                assert mjnp.fft.fft(a).dtype == jnp.fft.fft(a).dtype
                if a.dtype.kind != "c":
                    assert mjnp.fft.rfft(a).dtype == jnp.fft.rfft(a).dtype
            assert mjnp.fft.fftfreq(5).dtype == jnp.fft.fftfreq(5).dtype
            _same(mjnp.fft.fftfreq(7, 0.3), jnp.fft.fftfreq(7, 0.3))
            _same(mjnp.fft.rfftfreq(7, 0.3), jnp.fft.rfftfreq(7, 0.3))


def test_shifts_match_jax() -> None:
    a = np.arange(15).reshape(3, 5)
    for axes in (None, 1, (0,), (1, 0)):
        np.testing.assert_array_equal(mjnp.fft.fftshift(a, axes), jnp.fft.fftshift(a, axes))
        np.testing.assert_array_equal(mjnp.fft.ifftshift(a, axes), jnp.fft.ifftshift(a, axes))


def _error(fn: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, lax: m.fft.fft(Z, norm="bad"),
        lambda m, lax: m.fft.fft(Z, n=0),
        lambda m, lax: m.fft.fftn(Z, s=(2, 3), axes=(0,)),
        lambda m, lax: m.fft.fftn(Z, axes=(0, 0)),
        lambda m, lax: m.fft.fft(Z, axis=(0, 1)),
        lambda m, lax: m.fft.fft2(Z, axes=(0,)),
        lambda m, lax: m.fft.fft([1.0, 2.0]),
        lambda m, lax: m.fft.rfft(Z),
        lambda m, lax: m.fft.fftfreq([4]),
        lambda m, lax: m.fft.rfftfreq(4, d=[1.0]),
        lambda m, lax: lax.fft(Z, "Fft", (6,)),
        lambda m, lax: lax.fft(Z, 0, (6,)),
        lambda m, lax: lax.fft(Z, "fft", (5,)),
        lambda m, lax: lax.fft(Z, "fft", (1, 2, 3, 4)),
        lambda m, lax: lax.fft(Z, "irfft", (5, 6)),
        lambda m, lax: lax.fft(X, "rfft", (5,)),
    ],
)
def test_errors_match_jax(call: Any) -> None:
    mine, theirs = _error(lambda: call(mjnp, mlax)), _error(lambda: call(jnp, jax.lax))
    # minijax's message is JAX's, prefixed with the primitive's name where JAX's does not say it ("fft: FFT input ...").
    assert mine[0] is theirs[0] and mine[1] in (theirs[1], f"fft: {theirs[1]}")


@pytest.mark.parametrize("fft_type", ["fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("lengths", [(5,), (6,), (3, 4), (2, 2, 3)])
def test_vjps_and_jvps_match_jax(fft_type: str, lengths: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(lengths))
    if fft_type == "rfft":
        x = rng.standard_normal((2, *lengths)).astype(np.float32)
    else:
        last = lengths[-1] // 2 + 1 if fft_type == "irfft" else lengths[-1]
        shape = (2, *lengths[:-1], last)
        x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    out, vjp = minijax.vjp(lambda v: mlax.fft(v, fft_type, lengths), x)
    theirs_out, their_vjp = jax.vjp(lambda v: jax.lax.fft(v, fft_type, lengths), x)
    _same(out, theirs_out)
    ct = rng.standard_normal(out.shape).astype(out.dtype)
    if out.dtype.kind == "c":
        ct = (ct + 1j * rng.standard_normal(out.shape)).astype(out.dtype)
    _same(vjp(ct)[0], their_vjp(ct)[0], rtol=1e-4)
    t = (x * 0.5 + 0.25).astype(x.dtype)
    _same(minijax.jvp(lambda v: mlax.fft(v, fft_type, lengths), (x,), (t,))[1],
          jax.jvp(lambda v: jax.lax.fft(v, fft_type, lengths), (x,), (t,))[1], rtol=1e-4)


def test_grad_of_a_real_loss_matches_jax() -> None:
    def loss(np_: Any) -> Any:
        return lambda v: np_.sum(np_.abs(np_.fft.rfft(v, n=9)) ** 2) + np_.sum(np_.fft.irfft(np_.fft.fft(v)[:4]) ** 2)

    x = np.random.default_rng(3).standard_normal(7).astype(np.float32)
    _same(minijax.grad(loss(mjnp))(x), jax.grad(loss(jnp))(x), rtol=1e-4)
    z = (x + 1j * x[::-1]).astype(np.complex64)
    real_loss = lambda np_: lambda v: np_.sum(np_.real(np_.fft.ifft2(v.reshape(1, 7)) * np_.conj(v)))  # noqa: E731
    _same(minijax.grad(real_loss(mjnp))(z), jax.grad(real_loss(jnp))(z), rtol=1e-4)


@settings(max_examples=30, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    data=st.data(),
    norm=st.sampled_from([None, "backward", "ortho", "forward"]),
    name=st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn"]),
)
def test_hypothesis_shapes_axes_and_norms_match_jax(shape: list[int], data: st.DataObject, norm: str | None,
                                                    name: str) -> None:
    ndim = len(shape)
    axes = data.draw(st.permutations(range(ndim)).map(lambda p: p[: data.draw(st.integers(1, ndim))]))
    s = data.draw(st.none() | st.lists(st.integers(1, 6), min_size=len(axes), max_size=len(axes)))
    rng = np.random.default_rng(ndim)
    a = rng.standard_normal(shape).astype(np.float32)
    if name in ("ifftn", "irfftn"):
        a = (a + 1j * rng.standard_normal(shape)).astype(np.complex64)
    if name == "irfftn" and s is None and shape[axes[-1]] == 1:
        s = [shape[ax] for ax in axes]
    _same(getattr(mjnp.fft, name)(a, s=s, axes=axes, norm=norm), getattr(jnp.fft, name)(a, s=s, axes=axes, norm=norm),
          rtol=1e-4)


@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
def test_dcts_match_jax(name: str, norm: str | None) -> None:
    from minijax.scipy import fft as mfft

    theirs = getattr(jax.scipy.fft, name)
    mine = getattr(mfft, name)
    options: list[dict[str, Any]] = (
        [{}, {"axis": 0}, {"n": 9, "axis": 1}, {"n": 2}] if not name.endswith("n")
        else [{}, {"axes": (0, 2)}, {"s": (5, 3)}, {"s": (2, 3, 7)}]
    )
    for a in (X, Z, np.arange(24).reshape(2, 3, 4)):
        for kwargs in options:
            _same(mine(a, norm=norm, **kwargs), theirs(a, norm=norm, **kwargs), rtol=1e-4)
    x = X[0].astype(np.float32)
    _same(minijax.grad(lambda v: mjnp.sum(mine(v, norm=norm) ** 2))(x),
          jax.grad(lambda v: jnp.sum(theirs(v, norm=norm) ** 2))(x), rtol=1e-4)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.dct(X, type=1),
        lambda m: m.idct(X, norm="forward"),
        lambda m: m.dctn(X, s=(1, 2, 3, 4)),
        lambda m: m.idctn([1.0, 2.0]),
    ],
)
def test_dct_errors_match_jax(call: Any) -> None:
    from minijax.scipy import fft as mfft

    assert _error(lambda: call(mfft)) == _error(lambda: call(jax.scipy.fft))


def test_signal_functions_match_jax() -> None:
    from minijax.scipy import signal as msig

    jsig = jax.scipy.signal
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 12)).astype(np.float32)
    b = rng.standard_normal((2, 5)).astype(np.float32)
    for mode in ("full", "same", "valid"):
        _same(msig.fftconvolve(a, b, mode), jsig.fftconvolve(a, b, mode), rtol=1e-4)
        _same(msig.correlate(a, b, mode, method="fft"), jsig.correlate(a, b, mode, method="fft"), rtol=1e-4)
    _same(msig.fftconvolve(a, a[:, :4], axes=(1,)), jsig.fftconvolve(a, a[:, :4], axes=(1,)), rtol=1e-4)
    x = rng.standard_normal((2, 150)).astype(np.float32)
    y = rng.standard_normal((2, 150)).astype(np.float32)
    for kwargs in ({"nperseg": 32}, {"nperseg": 25, "noverlap": 5, "nfft": 30, "boundary": "odd"},
                   {"nperseg": 16, "boundary": None, "padded": False, "return_onesided": False}):
        for mine, theirs in zip(msig.stft(x, **kwargs), jsig.stft(x, **kwargs)):
            _same(mine, theirs, rtol=1e-4)
    zxx = jsig.stft(x, nperseg=32)[2]
    for mine, theirs in zip(msig.istft(np.asarray(zxx), nperseg=32), jsig.istft(zxx, nperseg=32)):
        _same(mine, theirs, rtol=1e-4)
    for kwargs in ({}, {"nperseg": 40, "average": "median"}, {"nperseg": 30, "scaling": "spectrum", "detrend": False}):
        for mine, theirs in zip(msig.welch(x, **kwargs), jsig.welch(x, **kwargs)):
            _same(mine, theirs, rtol=1e-4)
        for mine, theirs in zip(msig.csd(x, y, **kwargs), jsig.csd(x, y, **kwargs)):
            _same(mine, theirs, rtol=1e-4)


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.fftconvolve(np.ones(3), np.ones((2, 2))),
        lambda s: s.fftconvolve(np.ones(3), np.ones(2), mode="middle"),
        lambda s: s.welch(np.ones(20), nperseg=8, noverlap=8),
        lambda s: s.welch(np.ones(20), nperseg=8, nfft=4),
        lambda s: s.stft(np.ones(20), nperseg=8, boundary="wrap"),
        lambda s: s.istft(np.ones(4, np.complex64)),
        lambda s: s.csd(np.ones(20), np.ones(20), nperseg=8, average="mode"),
    ],
)
def test_signal_errors_match_jax(call: Any) -> None:
    from minijax.scipy import signal as msig

    assert _error(lambda: call(msig)) == _error(lambda: call(jax.scipy.signal))
