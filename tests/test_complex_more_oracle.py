"""Issue 21's complex-valued pieces against real JAX 0.10.2: complex lax.atan2,
jnp.logaddexp/logaddexp2 of complex values (edge cases included), complex
lax.linalg.schur, jax.scipy.linalg's schur(output='complex'), rsf2csf, sqrtm,
funm, solve_sylvester, dft; jax.scipy.special's wofz, erfcx(complex) and
sph_harm_y; nn.initializers.orthogonal/delta_orthogonal (the same values for
the same key). Values, dtypes and weak types; errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax
import minijax.numpy as mjnp
import minijax.scipy.linalg as msla
import minijax.scipy.special as msp
from minijax.config import enable_x64

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
jnp = jax.numpy
jsla = pytest.importorskip("jax.scipy.linalg")
jsp = pytest.importorskip("jax.scipy.special")

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(2121)


def outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn()
        except (TypeError, ValueError, NotImplementedError) as e:
            return "raise", (type(e).__name__, str(e).split("\n")[0])


def assert_same(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert bool(getattr(got, "weak_type", False)) == bool(getattr(want, "weak_type", False))
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


def _complex(*shape: int) -> np.ndarray:
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(np.complex64)


# ---------------------------------------------------------------------------
# atan2 and logaddexp


EDGES = np.array(
    [
        1 + 2j,
        -1 - 0.5j,
        0j,
        3 + 0j,
        -2 + 0j,
        1e30 + 0j,
        np.inf + 0j,
        np.nan + 0j,
        0.5 + np.inf * 1j,
        -np.inf + 0j,
        1000 + 3j,
    ],
    np.complex64,
)
OTHER = np.array(
    [0.5 - 1j, 2 + 1j, 1 + 0j, 0j, 0j, 1e30 + 1j, 1 + 0j, 1 + 0j, 1 + 1j, 1 + 0j, -1000 - 3j], np.complex64
)


@pytest.mark.parametrize("x64", [False, True])
def test_atan2_and_logaddexp_of_complex_values(x64: bool) -> None:
    dtype = np.complex128 if x64 else np.complex64
    x, y = EDGES.astype(dtype), OTHER.astype(dtype)
    with enable_x64(x64), jax.enable_x64(x64):
        assert_same(minijax.lax.atan2(x, y), jax.lax.atan2(x, y), rtol=1e-5, atol=1e-6)
        for name in ("logaddexp", "logaddexp2"):
            assert_same(getattr(mjnp, name)(x, y), getattr(jnp, name)(x, y), rtol=1e-5, atol=1e-6)
            # Python scalars: weak types and promotion as JAX's.
            assert_same(getattr(mjnp, name)(1 + 1j, 2.0), getattr(jnp, name)(1 + 1j, 2.0), rtol=1e-6)
        z, w = complex(x[0]), complex(y[0])
        for fn_m, fn_j in (
            (minijax.lax.atan2, jax.lax.atan2),
            (mjnp.logaddexp, jnp.logaddexp),
            (mjnp.logaddexp2, jnp.logaddexp2),
        ):
            for argnums in (0, 1):
                got = minijax.grad(lambda a, b, fn_m=fn_m: fn_m(a, b).real, argnums=argnums)(z, w)
                want = jax.grad(lambda a, b, fn_j=fn_j: fn_j(a, b).real, argnums=argnums)(z, w)
                np.testing.assert_allclose(complex(got), complex(want), rtol=1e-5)


@settings(max_examples=30, deadline=None)
@given(
    st.complex_numbers(max_magnitude=50, allow_nan=False, allow_infinity=False),
    st.complex_numbers(max_magnitude=50, allow_nan=False, allow_infinity=False),
)
def test_logaddexp_complex_hypothesis(a: complex, b: complex) -> None:
    x, y = np.complex64(a), np.complex64(b)
    for name in ("logaddexp", "logaddexp2"):
        got, want = np.asarray(getattr(mjnp, name)(x, y)), np.asarray(getattr(jnp, name)(x, y))
        # The imaginary part is taken mod 2π (2π/ln 2): compare on the circle where it sits at ±π.
        np.testing.assert_allclose(got.real, want.real, rtol=1e-5, atol=1e-5)
        period = 2 * np.pi / (1 if name == "logaddexp" else np.log(2))
        diff = (got.imag - want.imag + period / 2) % period - period / 2
        assert abs(diff) < 1e-4


def test_atan2_errors_as_jax() -> None:
    for args in ((np.int32(1), np.int32(2)), (np.float32(1), np.complex64(1))):
        got, want = outcome(lambda args=args: minijax.lax.atan2(*args)), outcome(lambda args=args: jax.lax.atan2(*args))
        assert got[0] == want[0] == "raise"
        assert got[1][0] == want[1][0]


# ---------------------------------------------------------------------------
# Schur forms


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 6, 6)])
def test_complex_schur_as_jax(dtype: type, shape: tuple[int, ...]) -> None:
    """The Schur form is unique up to the eigenvalues' order and the phases of Z's columns:
    the invariants and the sorted diagonal are compared (on XLA, LAPACK's zgees gives JAX's T)."""
    x64 = dtype == np.complex128
    a = (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)
    with enable_x64(x64), jax.enable_x64(x64):
        tj, zj = (np.asarray(v) for v in jax.lax.linalg.schur(a))
        tm, zm = (np.asarray(v) for v in minijax.lax.linalg.schur(a))
    assert tm.dtype == tj.dtype and zm.dtype == zj.dtype and tm.shape == tj.shape
    tol = 1e-4 if dtype == np.complex64 else 1e-11
    np.testing.assert_allclose(zm @ tm @ np.conj(np.swapaxes(zm, -1, -2)), a, atol=tol * 10)
    np.testing.assert_allclose(
        np.sort_complex(np.diagonal(tm, axis1=-2, axis2=-1)),
        np.sort_complex(np.diagonal(tj, axis1=-2, axis2=-1)),
        atol=tol * 10,
    )
    assert np.abs(np.tril(tm, -1)).max() == 0
    # What the scipy wrapper does with a real matrix and output='complex'.
    r = RNG.normal(size=shape[-2:]).astype(np.float32)
    tm2, _ = msla.schur(r, output="complex")
    tj2, _ = jsla.schur(r, output="complex")
    assert np.asarray(tm2).dtype == np.asarray(tj2).dtype
    np.testing.assert_allclose(
        np.sort_complex(np.diag(np.asarray(tm2))), np.sort_complex(np.diag(np.asarray(tj2))), atol=1e-4
    )


def test_rsf2csf_of_jaxs_real_schur_form() -> None:
    for n in (1, 2, 3, 5, 8):
        a = RNG.normal(size=(n, n)).astype(np.float32)
        t, z = (np.asarray(v) for v in jsla.schur(a))
        got, want = msla.rsf2csf(t, z), jsla.rsf2csf(t, z)
        for g, w in zip(got, want):
            assert_same(g, w, rtol=1e-4, atol=2e-5)
    for args in ((np.ones((2, 3)), np.eye(3)), (np.eye(2), np.ones((3, 2))), (np.eye(2), np.eye(3))):
        got, want = outcome(lambda args=args: msla.rsf2csf(*args)), outcome(lambda args=args: jsla.rsf2csf(*args))
        assert got == want


@pytest.mark.parametrize("n", [1, 4])
def test_sqrtm_funm_as_jax(n: int) -> None:
    a = (RNG.normal(size=(n, n)) + 3 * np.eye(n)).astype(np.float32)
    c = _complex(n, n)
    for m in (a, c):
        assert_same(msla.sqrtm(m), jsla.sqrtm(m), rtol=1e-4, atol=1e-5)
        for f_m, f_j in ((mjnp.exp, jnp.exp), (mjnp.sin, jnp.sin)):
            assert_same(msla.funm(m, f_m), jsla.funm(m, f_j), rtol=1e-4, atol=1e-4)
        got_f, got_err = msla.funm(m, mjnp.cos, disp=False)
        want_f, want_err = jsla.funm(m, jnp.cos, disp=False)
        assert_same(got_f, want_f, rtol=1e-4, atol=1e-4)
        assert np.asarray(got_err).dtype == np.asarray(want_err).dtype
    assert outcome(lambda: msla.sqrtm(a, blocksize=2)) == outcome(lambda: jsla.sqrtm(a, blocksize=2))
    assert outcome(lambda: msla.funm(np.ones((2, 3)), mjnp.exp)) == outcome(lambda: jsla.funm(np.ones((2, 3)), jnp.exp))


@settings(max_examples=5, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.booleans(), st.booleans())
def test_solve_sylvester_as_jax(m: int, n: int, complex_a: bool, complex_c: bool) -> None:
    a = _complex(m, m) if complex_a else RNG.normal(size=(m, m)).astype(np.float32)
    b = RNG.normal(size=(n, n)).astype(np.float32) + 4 * np.eye(n, dtype=np.float32)
    c = _complex(m, n) if complex_c else RNG.normal(size=(m, n)).astype(np.float32)
    got, want = msla.solve_sylvester(a, b, c), jsla.solve_sylvester(a, b, c)
    assert_same(got, want, rtol=2e-3, atol=2e-4)


def test_solve_sylvester_edge_cases_and_errors() -> None:
    a, b, c = np.diag([1.0, 2.0]).astype(np.float32), np.diag([-1.0]).astype(np.float32), np.ones((2, 1), np.float32)
    assert_same(msla.solve_sylvester(a, b, c), jsla.solve_sylvester(a, b, c))  # NaN: 1 + (-1) = 0
    for kwargs in ({"method": "fast"},):
        assert outcome(lambda kwargs=kwargs: msla.solve_sylvester(a, a, np.eye(2), **kwargs))[0] == "raise"
    got, want = (
        outcome(lambda: msla.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 3)))),
        outcome(lambda: jsla.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 3)))),
    )
    assert got == want


@pytest.mark.parametrize("scale", [None, "sqrtn", "n"])
@pytest.mark.parametrize("n", [1, 4, 7])
def test_dft_as_jax(n: int, scale: str | None) -> None:
    assert_same(msla.dft(n, scale), jsla.dft(n, scale), rtol=1e-6, atol=1e-6)
    with enable_x64(True), jax.enable_x64(True):
        assert_same(
            msla.dft(n, scale, dtype=np.complex128), jsla.dft(n, scale, dtype=np.complex128), rtol=1e-13, atol=1e-13
        )
    for kwargs in ({"scale": "N"}, {"dtype": np.float32}):
        assert outcome(lambda kwargs=kwargs: msla.dft(3, **kwargs)) == outcome(
            lambda kwargs=kwargs: jsla.dft(3, **kwargs)
        )


# ---------------------------------------------------------------------------
# Special functions


@pytest.mark.parametrize("x64", [False, True])
def test_wofz_erfcx_as_jax(x64: bool) -> None:
    z = np.concatenate([_complex(40) * 4, np.array([0, 1e-3j, -2j, 5, 30 + 30j, -7 + 1e-6j, 1e3 - 1e3j], np.complex64)])
    z = z.astype(np.complex128 if x64 else np.complex64)
    with enable_x64(x64), jax.enable_x64(x64):
        rtol = 1e-12 if x64 else 2e-6
        assert_same(msla_special_wofz(z), jsp.wofz(z), rtol=rtol, atol=rtol)
        assert_same(msp.erfcx(z), jsp.erfcx(z), rtol=rtol, atol=rtol)
        for x in (0.5, np.float32(0.5), 2, np.arange(3)):
            assert_same(msp.wofz(x), jsp.wofz(x), rtol=rtol, atol=rtol)
        got = minijax.vmap(minijax.grad(msp.wofz, holomorphic=True))(z[:10])
        want = jax.vmap(jax.grad(jsp.wofz, holomorphic=True))(z[:10])
        assert_same(got, want, rtol=rtol * 10, atol=rtol * 10)


def msla_special_wofz(z: Any) -> Any:
    return minijax.jit(msp.wofz)(z)


@pytest.mark.parametrize("x64", [False, True])
def test_sph_harm_y_as_jax(x64: bool) -> None:
    n = np.array([0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6, 9])
    m = np.array([0, 0, 1, -2, 1, -3, 2, 0, 5, -4, -6, 7])
    dt = np.float64 if x64 else np.float32
    theta = RNG.uniform(0, np.pi, n.size).astype(dt)
    phi = RNG.uniform(0, 2 * np.pi, n.size).astype(dt)
    rtol = 1e-12 if x64 else 2e-5
    with enable_x64(x64), jax.enable_x64(x64):
        assert_same(msp.sph_harm_y(n, m, theta, phi), jsp.sph_harm_y(n, m, theta, phi), rtol=rtol, atol=rtol)
        assert_same(
            msp.sph_harm_y(n, m, theta, phi, n_max=4), jsp.sph_harm_y(n, m, theta, phi, n_max=4), rtol=rtol, atol=rtol
        )
        assert_same(
            msp.sph_harm_y(n[:1], m[:1], 0.3, phi[:1]), jsp.sph_harm_y(n[:1], m[:1], 0.3, phi[:1]), rtol=rtol, atol=rtol
        )
        got = minijax.grad(lambda t: msp.sph_harm_y(n, m, t, phi).imag.sum())(theta)
        want = jax.grad(lambda t: jsp.sph_harm_y(n, m, t, phi).imag.sum())(theta)
        assert_same(got, want, rtol=rtol * 10, atol=rtol * 10)
    got_e = outcome(lambda: msp.sph_harm_y(n, m, theta, phi, diff_n=1))
    want_e = outcome(lambda: jsp.sph_harm_y(n, m, theta, phi, diff_n=1))
    assert got_e == want_e


# ---------------------------------------------------------------------------
# nn.initializers.orthogonal / delta_orthogonal


@pytest.mark.parametrize("seed", [0, 1, 42])
def test_orthogonal_initializers_as_jax(seed: int) -> None:
    """The same key gives the same matrix (float32 agreement; bit-equal on XLA, where both
    call LAPACK's geqrf/orgqr)."""
    km, kj = minijax.random.key(seed), jax.random.key(seed)
    for shape, axis in (
        ((3, 3), -1),
        ((4, 2), -1),
        ((2, 5), -1),
        ((3, 4, 5), 0),
        ((6, 3), 0),
        ((2, 2, 3, 3), -1),
        ((0, 3), -1),
    ):
        got = minijax.nn.initializers.orthogonal(scale=1.5, column_axis=axis)(km, shape)
        want = jax.nn.initializers.orthogonal(scale=1.5, column_axis=axis)(kj, shape)
        assert_same(got, want, rtol=1e-5, atol=1e-6)
    with enable_x64(True), jax.enable_x64(True):
        got = minijax.nn.initializers.orthogonal()(km, (4, 3), np.float64)
        want = jax.nn.initializers.orthogonal()(kj, (4, 3), np.float64)
        assert_same(got, want, rtol=1e-12, atol=1e-13)
    for shape in ((3, 2, 3), (3, 3, 2, 4), (3, 3, 3, 3, 3)):
        got = minijax.nn.initializers.delta_orthogonal(scale=0.5)(km, shape)
        want = jax.nn.initializers.delta_orthogonal(scale=0.5)(kj, shape)
        assert_same(got, want, rtol=1e-5, atol=1e-6)
    for make, shape in (
        (minijax.nn.initializers.orthogonal, (3,)),
        (minijax.nn.initializers.delta_orthogonal, (3, 3)),
        (minijax.nn.initializers.delta_orthogonal, (3, 5, 4)),
    ):
        jmake = getattr(jax.nn.initializers, make.__name__)
        assert outcome(lambda make=make, shape=shape: make()(km, shape)) == outcome(
            lambda jmake=jmake, shape=shape: jmake()(kj, shape)
        )
