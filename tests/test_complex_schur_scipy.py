"""Complex Schur forms and what is computed through them (issue 21, sci21):
``lax.linalg.schur`` of complex matrices, ``jax.scipy.linalg`` schur(output=
'complex'), rsf2csf, sqrtm, funm, solve_sylvester, dft; and the complex
special functions wofz, erfcx(complex), sph_harm_y. On each backend, under
jit/vmap/grad where they apply; values by their defining identities or against
SciPy (tests/test_complex_more_oracle.py compares with JAX itself)."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
import minijax.scipy.linalg as sla
import minijax.scipy.special as sp
from minijax.config import enable_x64
from minijax.lax import linalg as lax_linalg

scipy_special = pytest.importorskip(
    "scipy.special", reason="scipy (a reference for wofz and sph_harm_y) is not installed"
)

RNG = np.random.default_rng(7)


def _complex(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


def _h(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _check_schur(a: np.ndarray, t: np.ndarray, z: np.ndarray, tol: float) -> None:
    n = a.shape[-1]
    np.testing.assert_allclose(z @ t @ _h(z), a, atol=tol * max(1.0, np.abs(a).max()))
    np.testing.assert_allclose(z @ _h(z), np.broadcast_to(np.eye(n), z.shape), atol=tol)
    assert np.abs(np.tril(t, -1)).max(initial=0) == 0


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_schur_of_complex_matrices(dtype: type, n: int) -> None:
    with enable_x64(True):
        a = _complex(3, n, n).astype(dtype)
        t, z = (np.asarray(v) for v in lax_linalg.schur(a))
        assert t.dtype == z.dtype == dtype
        tol = 1e-4 if dtype == np.complex64 else 1e-12
        _check_schur(a.astype(np.complex128), t.astype(np.complex128), z.astype(np.complex128), tol)
        # The eigenvalues along T's diagonal are A's.
        for ai, ti in zip(a, t):
            np.testing.assert_allclose(
                np.sort_complex(np.diag(ti)), np.sort_complex(np.linalg.eigvals(ai)), atol=1e3 * tol
            )
        (t_only,) = jax.jit(lambda x: lax_linalg.schur(x, compute_schur_vectors=False))(a)
        np.testing.assert_allclose(np.asarray(t_only), t, atol=tol)
        t_v, _ = jax.vmap(lax_linalg.schur)(a)
        np.testing.assert_allclose(np.asarray(t_v), t, atol=tol)


def test_schur_complex_special_matrices_and_nonfinite() -> None:
    with enable_x64(True):
        for a in (
            np.array([[0, 1], [-1, 0]], np.complex128),  # eigenvalues ±i
            np.array([[1, 1], [0, 1]], np.complex128),  # defective
            np.zeros((3, 3), np.complex128),
            np.roll(np.eye(4), 1, axis=1).astype(np.complex128),  # a cyclic permutation: roots of unity
        ):
            t, z = (np.asarray(v) for v in lax_linalg.schur(a))
            _check_schur(a, t, z, 1e-12)
        bad = _complex(2, 3, 3)
        bad[1, 0, 2] = np.nan
        t, z = (np.asarray(v) for v in lax_linalg.schur(bad))
        assert np.isnan(t[1]).all() and np.isnan(z[1]).all() and np.isfinite(t[0]).all()
    with pytest.raises(TypeError, match="schur does not accept dtype int32"):
        lax_linalg.schur(np.eye(2, dtype=np.int32))
    with pytest.raises(ValueError, match="must be a square matrix"):
        lax_linalg.schur(np.ones((2, 3), np.complex64))


def test_scipy_schur_output_complex() -> None:
    a = RNG.normal(size=(4, 4)).astype(np.float32)
    t, z = (np.asarray(v) for v in sla.schur(a, output="complex"))
    assert t.dtype == np.complex64
    _check_schur(a, t, z, 1e-4)
    with pytest.raises(ValueError, match="'real' or 'complex'"):
        sla.schur(a, output="imaginary")


def test_rsf2csf() -> None:
    a = np.array([[1.0, 2.0, 0.0], [-3.0, 1.0, 2.0], [1.0, 1.0, 1.0]], np.float32)
    t, z = sla.schur(a)
    assert np.abs(np.asarray(t)[1:, :2].diagonal()).max() > 0  # a 2×2 block for the complex pair
    tc, zc = (np.asarray(v) for v in sla.rsf2csf(t, z))
    assert tc.dtype == np.complex64
    _check_schur(a, tc, zc, 1e-5)
    np.testing.assert_allclose(np.sort_complex(np.diag(tc)), np.sort_complex(np.linalg.eigvals(a)), atol=1e-5)
    # Batch axes broadcast; under jit too.
    tb, zb = jax.jit(sla.rsf2csf)(jnp.stack([t, t]), z)
    np.testing.assert_allclose(np.asarray(tb)[1], tc, atol=1e-6)
    with pytest.raises(ValueError, match="Input 'T' must be square"):
        sla.rsf2csf(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="Input array shapes must match"):
        sla.rsf2csf(np.eye(2), np.eye(3))


def test_sqrtm_and_funm() -> None:
    a = (
        np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]], np.float32)
        + RNG.normal(size=(3, 3)).astype(np.float32) * 0.3
    )
    r = np.asarray(sla.sqrtm(a))
    assert r.dtype == np.complex64
    np.testing.assert_allclose(r @ r, a, atol=1e-4)
    c = _complex(3, 3).astype(np.complex64)
    rc = np.asarray(sla.sqrtm(c))
    np.testing.assert_allclose(rc @ rc, c, atol=1e-4)
    with pytest.raises(NotImplementedError, match="Blocked version"):
        sla.sqrtm(a, blocksize=2)
    f = np.asarray(sla.funm(a, jnp.exp))
    assert f.dtype == np.complex64
    np.testing.assert_allclose(f, np.asarray(sla.expm(a)), rtol=1e-4, atol=1e-4)
    f2, err = sla.funm(a, jnp.sin, disp=False)
    assert np.asarray(err).dtype == np.float32 and 0 < float(err) <= 1
    with pytest.raises(ValueError, match="expected square array_like input"):
        sla.funm(np.ones((2, 3)), jnp.exp)


def test_solve_sylvester() -> None:
    with enable_x64(True):
        a, b, c = RNG.normal(size=(4, 4)), RNG.normal(size=(3, 3)), RNG.normal(size=(4, 3))
        x = np.asarray(sla.solve_sylvester(a, b, c))
        assert x.dtype == np.float64
        np.testing.assert_allclose(a @ x + x @ b, c, atol=1e-10)
        ac, cc = _complex(4, 4), _complex(4, 3)
        xc = np.asarray(jax.jit(sla.solve_sylvester)(ac, b, cc))
        assert xc.dtype == np.complex128
        np.testing.assert_allclose(ac @ xc + xc @ b, cc, atol=1e-10)
        # Batch axes broadcast.
        xb = np.asarray(sla.solve_sylvester(np.stack([a, 2 * a]), b, c))
        np.testing.assert_allclose(2 * a @ xb[1] + xb[1] @ b, c, atol=1e-10)
        # An eigenvalue of A plus one of B at zero: NaN.
        assert np.isnan(np.asarray(sla.solve_sylvester(np.diag([1.0, 2.0]), np.diag([-1.0]), np.ones((2, 1))))).all()
    with pytest.raises(ValueError, match="Incompatible shapes for Sylvester equation"):
        sla.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 3)))
    with pytest.raises(ValueError, match="Unrecognized method"):
        sla.solve_sylvester(np.eye(2), np.eye(2), np.eye(2), method="fast")


def test_dft() -> None:
    k = np.arange(5)
    want = np.exp(-2j * np.pi * np.outer(k, k) / 5)
    d = np.asarray(sla.dft(5))
    assert d.dtype == np.complex64
    np.testing.assert_allclose(d, want, atol=1e-6)
    np.testing.assert_allclose(np.asarray(sla.dft(5, "sqrtn")), want / np.sqrt(5), atol=1e-6)
    np.testing.assert_allclose(np.asarray(sla.dft(5, "n")), want / 5, atol=1e-6)
    with enable_x64(True):
        assert np.asarray(sla.dft(3, dtype=np.complex128)).dtype == np.complex128
    with pytest.raises(ValueError, match="scale must be None, 'sqrtn', or 'n'"):
        sla.dft(3, "N")
    with pytest.raises(ValueError, match="dtype must be a complex floating-point type"):
        sla.dft(3, dtype=np.float32)


def test_wofz_and_complex_erfcx() -> None:
    with enable_x64(True):
        z = np.concatenate([_complex(30) * 3, [0, 2j, -2j, 5.0, -5.0, 30 + 30j, -7 - 1e-6j]])
        w = np.asarray(sp.wofz(z))
        np.testing.assert_allclose(w, scipy_special.wofz(z), rtol=1e-11, atol=1e-12 * np.abs(w).max())
        np.testing.assert_allclose(
            np.asarray(jax.jit(jax.vmap(sp.erfcx))(z)), scipy_special.erfcx(z), rtol=1e-11, atol=1e-12 * np.abs(w).max()
        )
        # The custom jvp: w'(z) = -2 z w(z) + 2i/√π.
        dz = np.asarray(jax.vmap(jax.grad(sp.wofz, holomorphic=True))(z[:8]))
        np.testing.assert_allclose(
            dz,
            -2 * z[:8] * scipy_special.wofz(z[:8]) + 2j / np.sqrt(np.pi),
            rtol=1e-10,
            atol=1e-11 * np.abs(z[:8] * w[:8]).max(),
        )  # the terms may cancel
    w32 = sp.wofz(np.float32(0.5))
    assert np.asarray(w32).dtype == np.complex64
    np.testing.assert_allclose(complex(w32), scipy_special.wofz(0.5), rtol=1e-6)


def test_sph_harm_y() -> None:
    n = np.array([0, 1, 1, 2, 2, 3, 3, 4, 6, 6])
    m = np.array([0, 0, -1, 2, -1, -3, 2, 4, 5, -6])
    theta = RNG.uniform(0, np.pi, n.size)
    phi = RNG.uniform(0, 2 * np.pi, n.size)
    want = scipy_special.sph_harm_y(n, m, theta, phi)
    with enable_x64(True):
        got = np.asarray(sp.sph_harm_y(n, m, theta, phi))
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        # Degrees above n_max are clipped to it (as JAX documents).
        clipped = np.asarray(sp.sph_harm_y(np.array([5]), np.array([1]), theta[:1], phi[:1], n_max=3))
        np.testing.assert_allclose(clipped, scipy_special.sph_harm_y(3, 1, theta[:1], phi[:1]), rtol=1e-10)
        # d/dθ of the real part, against central differences.
        g = np.asarray(jax.grad(lambda t: sp.sph_harm_y(n, m, t, phi).real.sum())(theta))
        h = 1e-6
        num = (
            scipy_special.sph_harm_y(n, m, theta + h, phi).real - scipy_special.sph_harm_y(n, m, theta - h, phi).real
        ) / (2 * h)
        np.testing.assert_allclose(g, num, atol=1e-6)
    got32 = np.asarray(sp.sph_harm_y(n, m, theta.astype(np.float32), phi.astype(np.float32)))
    assert got32.dtype == np.complex64
    np.testing.assert_allclose(got32, want, atol=2e-5)
    with pytest.raises(NotImplementedError, match="diff_n"):
        sp.sph_harm_y(n, m, theta, phi, diff_n=1)
    with pytest.raises(jax.errors.ConcretizationTypeError, match="n_max"):
        jax.jit(lambda n: sp.sph_harm_y(n, m, theta, phi))(n)
