"""The FFT: the ``fft`` primitive (``lax.fft``) and ``jnp.fft``, on each backend.

Values against ``numpy.fft`` (dtype kept: float32 input gives complex64),
every norm, ``n``/``s`` cropping and padding, axes, the jaxpr round trip, the
primitive's errors, and its derivatives: jvp/vjp through every ``FftType``
checked numerically (``check_grads``), under ``jit`` and ``vmap``.
``test_fft_oracle.py`` compares with real JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import enable_x64
from minijax.jaxpr_parse import parse_jaxpr
from minijax.testing import check_grads

C64, C128, F32 = np.dtype(np.complex64), np.dtype(np.complex128), np.dtype(np.float32)
RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 6)).astype(np.float32)
Z = (RNG.standard_normal((3, 4, 6)) + 1j * RNG.standard_normal((3, 4, 6))).astype(np.complex64)

ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
MANY_AXES = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
NORMS = [None, "backward", "ortho", "forward"]


def _input(name: str) -> np.ndarray:
    return X if name in ("rfft", "ihfft", "rfft2", "rfftn") else Z


def _close(got: Any, want: np.ndarray, rtol: float = 2e-5) -> None:
    got = np.asarray(got)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ONE_AXIS)
def test_one_axis_transforms_match_numpy(name: str, norm: str | None, backend_name: str) -> None:
    a = _input(name)
    for kwargs in ({}, {"axis": 1}, {"n": 5}, {"n": 8, "axis": 0}):
        got = getattr(jnp.fft, name)(a, norm=norm, **kwargs)
        want = getattr(np.fft, name)(a, norm=norm, **kwargs)
        assert got.shape == want.shape
        assert got.dtype == (C64 if want.dtype.kind == "c" else F32)
        _close(got, want)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", MANY_AXES)
def test_many_axes_transforms_match_numpy(name: str, norm: str | None, backend_name: str) -> None:
    a = _input(name)
    options: list[dict[str, Any]] = [{}, {"axes": (0, 2)}, {"s": (5, 4)}, {"s": (2, 7), "axes": (2, 0)}]
    if name.endswith("n"):
        options += [{"axes": (1,)}, {"s": (2, 3, 4)}]
    for kwargs in options:
        got = getattr(jnp.fft, name)(a, norm=norm, **kwargs)
        if "s" in kwargs and "axes" not in kwargs:  # NumPy 2 wants the (default) axes spelled out
            kwargs["axes"] = tuple(range(a.ndim - len(kwargs["s"]), a.ndim))
        want = getattr(np.fft, name)(a, norm=norm, **kwargs)
        assert got.shape == want.shape and got.dtype == (C64 if want.dtype.kind == "c" else F32)
        _close(got, want)


def test_more_than_three_axes_are_transformed_in_groups(backend_name: str) -> None:
    a = RNG.standard_normal((2, 3, 2, 3, 4)).astype(np.float32)
    _close(jnp.fft.fftn(a), np.fft.fftn(a))
    _close(jnp.fft.rfftn(a), np.fft.rfftn(a))
    _close(jnp.fft.ifftn(a + 1j * a), np.fft.ifftn(a + 1j * a))
    _close(jnp.fft.irfftn(a + 1j * a), np.fft.irfftn(a + 1j * a))


def test_float64_and_integer_inputs_follow_x64(backend_name: str) -> None:
    assert jnp.fft.fft(np.arange(4)).dtype == C64
    assert jnp.fft.fft(np.ones(4, np.float64)).dtype == C64
    with enable_x64(True):
        out = jnp.fft.fft(np.arange(4.0))
        assert out.dtype == C128
        _close(out, np.fft.fft(np.arange(4.0)), rtol=1e-12)
        assert jnp.fft.irfft(np.ones(3, np.complex128)).dtype == np.float64
        assert jnp.fft.rfft(np.ones(4, np.float32)).dtype == C64  # float32 stays narrow


def test_frequencies_and_shifts(backend_name: str) -> None:
    for n, d in ((5, 1.0), (8, 0.1)):
        _close(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d))
        _close(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    assert jnp.fft.fftfreq(4).dtype == F32
    a = np.arange(12).reshape(3, 4)
    for axes in (None, 0, (1,), (0, 1)):
        np.testing.assert_array_equal(jnp.fft.fftshift(a, axes), np.fft.fftshift(a, axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(a, axes), np.fft.ifftshift(a, axes))


def test_bad_arguments_raise_as_jax_does() -> None:
    with pytest.raises(ValueError, match="Invalid norm value bad"):
        jnp.fft.fft(Z, norm="bad")
    with pytest.raises(ValueError, match="Shape should be positive"):
        jnp.fft.fft(Z, n=0)
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        jnp.fft.fftn(Z, s=(2, 3), axes=(0,))
    with pytest.raises(ValueError, match="does not support repeated axes"):
        jnp.fft.fftn(Z, axes=(0, 0))
    with pytest.raises(ValueError, match="does not support multiple axes. Please use jax.numpy.fft.fftn"):
        jnp.fft.fft(Z, axis=(0, 1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only supports 2 axes"):
        jnp.fft.fft2(Z, axes=(0,))
    with pytest.raises(TypeError, match="jax.numpy.fft.fft requires ndarray or scalar arguments"):
        jnp.fft.fft([1.0, 2.0])
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        jnp.fft.rfft(Z)
    with pytest.raises(ValueError, match="only takes an int"):
        jnp.fft.fftfreq([4])  # type: ignore[arg-type]


def test_the_primitive_checks_its_operand() -> None:
    fft_p = lax.fft_p
    with pytest.raises(ValueError, match=r"must have at least as many input dimensions as fft_lengths \(2, 4\)"):
        fft_p.bind(np.ones(4, C64), fft_type=lax.FftType.FFT, fft_lengths=(2, 4))
    with pytest.raises(ValueError, match="RFFT input must be float32 or float64, got int32"):
        fft_p.bind(np.ones(4, np.int32), fft_type=lax.FftType.RFFT, fft_lengths=(4,))
    with pytest.raises(ValueError, match="FFT input must be complex64 or complex128, got float32"):
        fft_p.bind(np.ones(4, F32), fft_type=lax.FftType.FFT, fft_lengths=(4,))
    with pytest.raises(ValueError, match="IRFFT input must be complex64 or complex128"):
        fft_p.bind(np.ones(3, F32), fft_type=lax.FftType.IRFFT, fft_lengths=(4,))
    with pytest.raises(ValueError, match=r"minor dimensions must be equal to fft_lengths \(4,\)"):
        fft_p.bind(np.ones(3, C64), fft_type=lax.FftType.FFT, fft_lengths=(4,))
    with pytest.raises(ValueError, match="equal to all except the last fft_length"):
        fft_p.bind(np.ones((2, 3), C64), fft_type=lax.FftType.IRFFT, fft_lengths=(4, 4))
    with pytest.raises(ValueError, match="Unknown FFT type 'Fft'"):
        lax.fft(Z, "Fft", (6,))
    with pytest.raises(TypeError, match="Unknown FFT type value '0'"):
        lax.fft(Z, 0, (6,))  # type: ignore[arg-type]
    assert lax.fft(Z, "IFFT", ()).dtype == C64  # no lengths: the operand, made complex


def test_jaxpr_prints_the_type_as_its_number_and_parses_back() -> None:
    closed = jax.make_jaxpr(lambda x: jnp.fft.irfft2(x, s=(4, 6)))(Z[0, :, :4])
    text = str(closed)
    assert "fft[fft_lengths=(4, 6) fft_type=3]" in text
    back = parse_jaxpr(text)
    assert str(back) == text
    (inner,) = [e for e in back.jaxpr.eqns if e.primitive.name == "jit"]
    (fft_eqn,) = [e for e in inner.params["jaxpr"].jaxpr.eqns if e.primitive.name == "fft"]
    assert fft_eqn.params["fft_type"] is lax.FftType.IRFFT


# ---------------------------------------------------------------------------
# Derivatives, jit, vmap


@pytest.mark.parametrize("fft_type", list(lax.FftType))
@pytest.mark.parametrize("lengths", [(5,), (6,), (3, 4), (2, 3, 5)])
def test_every_fft_type_has_numerically_right_derivatives(fft_type: lax.FftType, lengths: tuple[int, ...],
                                                          backend_name: str) -> None:
    with enable_x64(True):
        rng = np.random.default_rng(len(lengths))
        if fft_type == lax.FftType.RFFT:
            x = rng.standard_normal((2, *lengths))
        else:
            last = lengths[-1] // 2 + 1 if fft_type == lax.FftType.IRFFT else lengths[-1]
            shape = (2, *lengths[:-1], last)
            x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        check_grads(lambda v: lax.fft(v, fft_type, lengths), (x,), order=2, modes=["fwd", "rev"])


def test_grad_through_rfft_and_irfft_of_a_real_loss(backend_name: str) -> None:
    def loss(x: Any) -> Any:
        spectrum = jnp.fft.rfft(x)
        return jnp.sum(jnp.abs(spectrum) ** 2) + jnp.sum(jnp.fft.irfft(spectrum * 1j, n=x.shape[-1]) ** 3)

    with enable_x64(True):
        x = np.random.default_rng(1).standard_normal(7)
        check_grads(loss, (x,), order=1, modes=["rev"])
        # Parseval: the gradient of sum |rfft(x)|^2 is 2 n x weighted as the full spectrum counts it.
        g = jax.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.fft(v)) ** 2))(x)
        np.testing.assert_allclose(g, 2 * 7 * x, rtol=1e-10)


def test_jit_and_vmap_agree_with_eager(backend_name: str) -> None:
    f = lambda v: jnp.fft.fft2(v, norm="ortho")  # noqa: E731
    _close(jax.jit(f)(Z), f(Z))
    stacked = np.stack([np.asarray(f(z)) for z in Z])
    _close(jax.vmap(f)(Z), stacked)
    _close(jax.vmap(lambda v: jnp.fft.rfft(v, axis=0), in_axes=2, out_axes=1)(X),
           np.stack([np.fft.rfft(X[:, :, i], axis=0) for i in range(X.shape[2])], axis=1))
    batched = jax.make_jaxpr(jax.vmap(lambda v: lax.fft(v, "fft", (6,))))(Z)
    assert sum(e.primitive.name == "fft" for e in batched.jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns) == 1


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    data=st.data(),
    norm=st.sampled_from(NORMS),
    name=st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn"]),
)
def test_hypothesis_shapes_axes_and_norms(shape: list[int], data: st.DataObject, norm: str | None, name: str) -> None:
    ndim = len(shape)
    axes = data.draw(st.permutations(range(ndim)).map(lambda p: p[: data.draw(st.integers(1, ndim))]))
    s = data.draw(st.none() | st.lists(st.integers(1, 6), min_size=len(axes), max_size=len(axes)))
    rng = np.random.default_rng(ndim)
    a = rng.standard_normal(shape).astype(np.float32)
    if name in ("ifftn", "irfftn"):
        a = (a + 1j * rng.standard_normal(shape)).astype(np.complex64)
    if name == "irfftn" and s is None and shape[axes[-1]] == 1:
        s = [shape[ax] for ax in axes]  # NumPy refuses an empty last axis; so does JAX's lax.fft
    got = getattr(jnp.fft, name)(a, s=s, axes=axes, norm=norm)
    want = getattr(np.fft, name)(a, s=s, axes=axes, norm=norm)
    assert got.shape == want.shape
    _close(got, want, rtol=1e-4)


# ---------------------------------------------------------------------------
# jax.scipy.fft: the type-2 DCT and its inverse


@pytest.mark.parametrize("norm", [None, "ortho"])  # 'backward' is None's alias (checked once below)
def test_dct_and_idct_match_scipy(norm: str | None, backend_name: str) -> None:
    sfft = pytest.importorskip("scipy.fft")
    from minijax.scipy import fft as mfft

    for kwargs in ({"axis": 0}, {"n": 8, "axis": 1}, {"n": 3}):
        for name in ("dct", "idct"):
            got, want = getattr(mfft, name)(X, norm=norm, **kwargs), getattr(sfft, name)(X, norm=norm, **kwargs)
            assert got.dtype == F32
            _close(got, want)
    for kwargs in ({"axes": (0, 2)}, {"s": (2, 3, 7)}):
        for name in ("dctn", "idctn"):
            _close(getattr(mfft, name)(X, norm=norm, **kwargs), getattr(sfft, name)(X, norm=norm, **kwargs), rtol=1e-4)
    got = mfft.dct(Z, norm=norm)
    assert got.dtype == C64
    _close(got, sfft.dct(Z, norm=norm))
    _close(mfft.idct(mfft.dct(X, norm=norm), norm=norm), X)
    if norm is None:
        _close(mfft.dct(X, norm="backward"), sfft.dct(X, norm="backward"))


def test_dct_refuses_what_jax_refuses() -> None:
    from minijax.scipy import fft as mfft

    with pytest.raises(NotImplementedError, match="Only DCT type 2 is implemented"):
        mfft.dct(X, type=3)
    with pytest.raises(ValueError, match=r"jax.scipy.fft.idctn: norm='forward' is not implemented"):
        mfft.idctn(X, norm="forward")
    with pytest.raises(ValueError, match=r"s must have at most x.ndim \(3\) elements, got 4"):
        mfft.dctn(X, s=(1, 2, 3, 4))


def test_grad_through_dct(backend_name: str) -> None:
    from minijax.scipy import fft as mfft

    with enable_x64(True):
        x = np.random.default_rng(5).standard_normal((3, 5))
        check_grads(lambda v: mfft.dctn(v, norm="ortho"), (x,), order=1, modes=["fwd", "rev"])
        check_grads(lambda v: mfft.idct(v, n=6, axis=0), (x,), order=1, modes=["fwd", "rev"])


# ---------------------------------------------------------------------------
# jax.scipy.signal's FFT-based functions


def test_fftconvolve_and_fft_methods_match_scipy(backend_name: str) -> None:
    ss = pytest.importorskip("scipy.signal")
    from minijax.scipy import signal

    a = RNG.standard_normal((3, 12)).astype(np.float32)
    for b in (RNG.standard_normal((2, 5)).astype(np.float32), (RNG.standard_normal((1, 4)) * 1j).astype(np.complex64)):
        for mode in ("full", "same", "valid"):
            _close(signal.fftconvolve(a, b, mode), ss.fftconvolve(a, b, mode), rtol=1e-4)
            _close(signal.convolve(a, b, mode, method="fft"), ss.convolve(a, b, mode), rtol=1e-4)
            _close(signal.correlate(a, b, mode, method="fft"), ss.correlate(a, b, mode), rtol=1e-4)
    b = RNG.standard_normal((3, 4)).astype(np.float32)
    _close(signal.fftconvolve(a, b, axes=1), ss.fftconvolve(a, b, axes=1), rtol=1e-4)
    with pytest.raises(ValueError, match="mapped axes must have same shape"):
        signal.fftconvolve(a, b[:2], axes=(1,))
    with pytest.raises(ValueError, match="For 'valid' mode, One input must be at least as large"):
        signal.fftconvolve(np.ones((2, 5)), np.ones((3, 2)), "valid")


def test_stft_istft_welch_csd_match_scipy(backend_name: str) -> None:
    ss = pytest.importorskip("scipy.signal")
    from minijax.scipy import signal

    x = RNG.standard_normal((2, 200)).astype(np.float32)
    y = RNG.standard_normal((2, 180)).astype(np.float32)
    for kwargs in ({"nperseg": 33, "noverlap": 10, "nfft": 40, "boundary": "even"},
                   {"nperseg": 16, "boundary": None, "padded": False, "return_onesided": False}):
        got, want = signal.stft(x, fs=2.0, **kwargs), ss.stft(x, fs=2.0, **kwargs)
        for g, w in zip(got, want):
            _close(g, w, rtol=1e-4)
        assert got[2].dtype == C64
    f, t, zxx = signal.stft(x, nperseg=64)
    _close(signal.istft(zxx, nperseg=64)[1], ss.istft(np.asarray(zxx), nperseg=64)[1], rtol=1e-4)
    _close(signal.istft(zxx, nperseg=64)[1][:, :200], x, rtol=1e-4)  # a round trip
    for kwargs in ({}, {"nperseg": 64, "scaling": "spectrum", "detrend": "linear"},
                   {"nperseg": 40, "average": "median", "window": "hamming"}):
        _close(signal.welch(x, **kwargs)[1], ss.welch(x, **({"nperseg": 200} | kwargs))[1], rtol=1e-4)
        _close(signal.csd(x, y, **kwargs)[1], ss.csd(x, y, **({"nperseg": 200} | kwargs))[1], rtol=1e-4)
    with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
        signal.welch(x, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="Input stft must be at least 2d"):
        signal.istft(np.ones(4, np.complex64))


def test_spectral_functions_under_jit_and_grad(backend_name: str) -> None:
    from minijax.scipy import signal

    x = RNG.standard_normal(32).astype(np.float32)
    _close(jax.jit(lambda v: signal.welch(v, nperseg=8)[1])(x), signal.welch(x, nperseg=8)[1])
    with enable_x64(True):
        check_grads(lambda v: signal.welch(v, nperseg=8)[1], (x.astype(np.float64),), order=1, modes=["rev"])
        check_grads(lambda v: signal.fftconvolve(v, v[:5], "same"), (x.astype(np.float64),), order=1, modes=["rev"])


def test_conformance_compares_fft_results_within_its_bound() -> None:
    # Complex results used to be compared bit for bit: XLA's and numpy.fft's
    # rounding (a few ulps) failed every fft row of `minijax conformance`.
    from minijax.testing.tolerances import compare_primitive

    x = np.array([0.3, -1.7, 2.2, 0.9, -0.4], np.complex64)
    params = {"fft_type": lax.FftType.FFT, "fft_lengths": (5,)}
    want = np.fft.fft(x).astype(np.complex64)
    nudged = (want.real * (1 + 3e-7) + 1j * want.imag).astype(np.complex64)
    assert compare_primitive("fft", params, [x], [nudged], [want]).ok
    assert not compare_primitive("fft", params, [x], [np.conj(want)], [want]).ok  # a wrong sign is caught
    with_nan = x.copy()
    with_nan[1] = np.nan
    assert compare_primitive("fft", params, [with_nan], [np.full(5, np.nan + 0j, np.complex64)], [want]).ok
