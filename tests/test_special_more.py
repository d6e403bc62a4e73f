"""The last real-valued jax.scipy.special functions (dawsn, fresnel, sici, expn, spence, owens_t, hyp1f1,
hyp2f1, bessel_jn) on both backends: values against closed forms and identities from the literature (Abramowitz &
Stegun; DLMF), their derivatives against the defining derivatives, under jit and vmap.
tests/test_special_more_oracle.py compares every one with JAX, element by element."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
import minijax.scipy.special as sp

X = np.array([-7.5, -3.0, -1.0, -0.25, 0.0, 0.25, 1.0, 2.5, 5.0, 9.0], np.float32)
POS = np.array([0.05, 0.3, 1.0, 2.0, 4.5, 10.0, 25.0], np.float32)


def _integral(f, a: float, b: float, n: int = 4001) -> float:
    """Simpson's rule in float64, for reference values of the integrals that define the functions."""
    t = np.linspace(a, b, n)
    w = np.ones(n)
    w[1:-1:2], w[2:-1:2] = 4, 2
    return float((b - a) / (n - 1) / 3 * np.sum(w * f(t)))


def test_dawsn_is_its_integral_and_solves_its_ode() -> None:
    for x in [0.25, 1.0, 2.5]:
        want = math.exp(-x * x) * _integral(lambda t: np.exp(t * t), 0.0, x)
        assert float(sp.dawsn(np.float32(x))) == pytest.approx(want, rel=2e-6)
    assert np.asarray(sp.dawsn(X)) == pytest.approx(-np.asarray(sp.dawsn(-X)))  # odd
    # F'(x) = 1 - 2 x F(x)
    grads = np.asarray(jax.vmap(jax.grad(sp.dawsn))(X))
    np.testing.assert_allclose(grads, 1 - 2 * X * np.asarray(sp.dawsn(X)), rtol=1e-5, atol=1e-6)


def test_fresnel_integrals_and_their_limits() -> None:
    s, c = sp.fresnel(np.float32(1.0))
    assert float(s) == pytest.approx(_integral(lambda t: np.sin(np.pi * t * t / 2), 0.0, 1.0), rel=1e-6)
    assert float(c) == pytest.approx(_integral(lambda t: np.cos(np.pi * t * t / 2), 0.0, 1.0), rel=1e-6)
    s_inf, c_inf = sp.fresnel(np.float32(np.inf))
    assert (float(s_inf), float(c_inf)) == (0.5, 0.5)
    ds = jax.vmap(jax.grad(lambda x: sp.fresnel(x)[0]))(X)
    dc = jax.vmap(jax.grad(lambda x: sp.fresnel(x)[1]))(X)
    np.testing.assert_allclose(np.asarray(ds), np.sin(np.pi * X.astype(np.float64) ** 2 / 2), atol=2e-5)
    np.testing.assert_allclose(np.asarray(dc), np.cos(np.pi * X.astype(np.float64) ** 2 / 2), atol=2e-5)


def test_sici_values_limit_and_derivatives() -> None:
    si, ci = sp.sici(np.float32(1.0))
    assert float(si) == pytest.approx(_integral(lambda t: np.sinc(t / np.pi), 0.0, 1.0), rel=1e-6)
    euler = 0.5772156649015329
    assert float(ci) == pytest.approx(euler + _integral(lambda t: (np.cos(t) - 1) / np.where(t == 0, 1, t), 0, 1), rel=1e-5)
    assert float(sp.sici(np.float32(np.inf))[0]) == pytest.approx(math.pi / 2)
    x = POS.astype(np.float64)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(lambda v: sp.sici(v)[0]))(POS)), np.sin(x) / x, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(lambda v: sp.sici(v)[1]))(POS)), np.cos(x) / x,
                               rtol=1e-4, atol=1e-5)


def test_expn_matches_exp1_and_its_recurrence() -> None:
    np.testing.assert_allclose(np.asarray(sp.expn(1, POS)), np.asarray(sp.exp1(POS)), rtol=2e-6)
    np.testing.assert_allclose(np.asarray(sp.expn(0, POS)), np.exp(-POS.astype(np.float64)) / POS, rtol=2e-6)
    # n E_{n+1}(x) = e^-x - x E_n(x)
    for n in [1, 2, 5]:
        lhs = n * np.asarray(sp.expn(n + 1, POS), np.float64)
        rhs = np.exp(-POS.astype(np.float64)) - POS * np.asarray(sp.expn(n, POS), np.float64)
        np.testing.assert_allclose(lhs, rhs, rtol=2e-4, atol=1e-12)
    # d/dx E_n(x) = -E_{n-1}(x)
    grads = jax.vmap(jax.grad(lambda v: sp.expn(3, v)))(POS)
    np.testing.assert_allclose(np.asarray(grads), -np.asarray(sp.expn(2, POS)), rtol=1e-5, atol=1e-12)


def test_expn_returns_for_an_array_with_a_tiny_x() -> None:
    # JAX 0.10.2 runs the continued fraction (the x > 1 branch) on every element of an array, without an
    # iteration cap: at x = 1e-20 it never converges and the call never returns. minijax steps it only where
    # it is taken. E_1(x) = -gamma - log x + x - ... for small x.
    x = np.array([1e-20, 1e-6, 0.5, 2.0], np.float32)
    got = np.asarray(jax.jit(lambda v: sp.expn(1, v))(x))
    assert got[0] == pytest.approx(-0.5772156649015329 - math.log(1e-20), rel=1e-6)
    assert got[1] == pytest.approx(-0.5772156649015329 - math.log(1e-6) + 1e-6, rel=1e-6)
    np.testing.assert_allclose(got[2:], np.asarray(sp.exp1(x[2:])), rtol=2e-6)
    # and psi's loop (n terms) only where the series is taken: a huge n elsewhere in the array
    n = np.array([1e30, 2.0, 3.0, 1.0], np.float32)
    got = np.asarray(sp.expn(n, x))
    np.testing.assert_allclose(got[1:], [float(sp.expn(int(k), v)) for k, v in zip(n[1:], x[1:])], rtol=1e-6)


def test_spence_special_values_and_reflection() -> None:
    assert float(sp.spence(jnp.float32(1.0))) == 0.0
    assert float(sp.spence(jnp.float32(0.0))) == pytest.approx(math.pi**2 / 6)
    assert math.isnan(float(sp.spence(jnp.float32(-1.0))))
    # spence(x) + spence(1 - x) = pi^2/6 - log(x) log(1 - x) on (0, 1)
    x = np.array([0.1, 0.3, 0.5, 0.8], np.float32)
    got = np.asarray(sp.spence(jnp.asarray(x))) + np.asarray(sp.spence(jnp.asarray(1 - x)))
    np.testing.assert_allclose(got, np.pi**2 / 6 - np.log(x) * np.log(1 - x), rtol=1e-5)
    # d/dx = log(x) / (1 - x). (At x = 1 and x = 2 JAX's derivative is 0 and NaN, from the branches of its
    # formula; the oracle test checks minijax gives the same there.)
    x = POS[(POS != 1) & (POS != 2)]
    grads = jax.vmap(jax.grad(sp.spence))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(grads), np.log(x) / (1 - x.astype(np.float64)), rtol=1e-4, atol=1e-6)
    with pytest.raises(TypeError, match="not supported"):
        sp.spence(jnp.arange(3))


def test_owens_t_special_values_and_derivatives() -> None:
    a = np.array([0.1, 0.5, 1.0, 3.0], np.float32)
    np.testing.assert_allclose(np.asarray(sp.owens_t(0.0, a)), np.arctan(a) / (2 * np.pi), rtol=1e-6)
    h = np.array([0.0, 0.5, 1.5, 3.0], np.float32)
    phi = 0.5 * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    np.testing.assert_allclose(np.asarray(sp.owens_t(h, 1.0)), phi * (1 - phi) / 2, rtol=1e-5, atol=1e-7)
    dh, da = jax.vmap(jax.grad(sp.owens_t, (0, 1)))(h, np.full(4, 0.7, np.float32))
    hh = h.astype(np.float64)
    np.testing.assert_allclose(np.asarray(da), np.exp(-hh**2 * (1 + 0.49) / 2) / (2 * np.pi * (1 + 0.49)), rtol=1e-5)
    want_dh = -np.exp(-hh**2 / 2) / math.sqrt(2 * math.pi) * np.vectorize(math.erf)(0.7 * hh / math.sqrt(2)) / 2
    np.testing.assert_allclose(np.asarray(dh), want_dh, rtol=1e-5, atol=1e-7)


def test_hyp1f1_closed_forms() -> None:
    x = np.array([-3.0, -0.5, 0.0, 0.7, 2.0, 6.0], np.float32)
    np.testing.assert_allclose(np.asarray(sp.hyp1f1(1.0, 1.0, x)), np.exp(x.astype(np.float64)), rtol=2e-6)
    np.testing.assert_allclose(np.asarray(sp.hyp1f1(1.0, 2.0, x)),
                               np.where(x == 0, 1.0, np.expm1(x.astype(np.float64)) / np.where(x == 0, 1, x)), rtol=1e-5)
    assert float(sp.hyp1f1(0.0, 0.0, 3.0)) == 1.0  # JAX's convention (SciPy gives inf)
    # d/dx 1F1(a; b; x) = a/b 1F1(a+1; b+1; x)
    grads = jax.vmap(jax.grad(sp.hyp1f1, 2))(np.full(6, 1.5, np.float32), np.full(6, 2.5, np.float32), x)
    np.testing.assert_allclose(np.asarray(grads), 1.5 / 2.5 * np.asarray(sp.hyp1f1(2.5, 3.5, x)), rtol=1e-4)


def test_bessel_jn_recurrence_and_orders() -> None:
    # Miller's recurrence from order n_iter overflows float32 for small z (NaN, as in JAX): n_iter=20 there.
    z = np.array([1.0, 3.0, 7.5, 12.0], np.float32)
    j = np.concatenate([np.asarray(sp.bessel_jn(z[:2], v=3, n_iter=20), np.float64),
                        np.asarray(sp.bessel_jn(z[2:], v=3), np.float64)], axis=1)
    assert j.shape == (4, 4)
    want_j0 = [_integral(lambda t, zz=zz: np.cos(zz * np.sin(t)), 0.0, math.pi) / math.pi for zz in z]
    np.testing.assert_allclose(j[0], want_j0, atol=2e-6)
    # J_{n-1}(z) + J_{n+1}(z) = 2n/z J_n(z)
    np.testing.assert_allclose(j[0] + j[2], 2 / z * j[1], atol=2e-5)
    np.testing.assert_allclose(j[1] + j[3], 4 / z * j[2], atol=2e-5)
    # J_0' = -J_1 (the derivative is the recurrence's own, differentiated as JAX does: float32 rounding in the
    # recurrence's cancellations makes it coarse for mid-size z, so it is checked where it is accurate).
    grads = jax.vmap(jax.grad(lambda v: sp.bessel_jn(v, v=1)[0]))(z[3:])
    np.testing.assert_allclose(np.asarray(grads), -j[1, 3:], atol=1e-4)



# Folded in from the special2 branch's tests (what the ones above did not cover): grids through every
# region of each function against the defining integrals, more special values, J_1..J_3.
XG = np.array([0.1, 0.5, 1.0, 2.0, 3.5, 5.0, 7.0, 12.0], np.float32)


def _integrals(f, upper: np.ndarray) -> np.ndarray:
    return np.array([_integral(f, 0.0, float(u), n=20001) for u in upper])


def test_dawsn_fresnel_sici_against_their_integrals_on_a_grid() -> None:
    x = XG.astype(np.float64)
    np.testing.assert_allclose(np.asarray(jax.jit(sp.dawsn)(XG)), np.exp(-x * x) * _integrals(lambda t: np.exp(t * t), x),
                               rtol=1e-5)
    s, c = jax.jit(sp.fresnel)(XG)
    np.testing.assert_allclose(np.asarray(s), _integrals(lambda t: np.sin(np.pi * t * t / 2), x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(c), _integrals(lambda t: np.cos(np.pi * t * t / 2), x), rtol=1e-4, atol=1e-5)
    si, ci = jax.jit(sp.sici)(XG)
    np.testing.assert_allclose(np.asarray(si), _integrals(lambda t: np.sinc(t / np.pi), x), rtol=1e-5)
    cos_part = _integrals(lambda t: np.where(t == 0, 0.0, (np.cos(t) - 1) / np.where(t == 0, 1, t)), x)
    np.testing.assert_allclose(np.asarray(ci), np.euler_gamma + np.log(x) + cos_part, rtol=1e-5, atol=1e-5)
    si_inf, ci_inf = sp.sici(np.float32(np.inf))
    assert (float(si_inf), float(ci_inf)) == (pytest.approx(math.pi / 2), 0.0)


def test_more_special_values() -> None:
    # spence(x) = Li2(1 - x): Li2(1/2) = pi^2/12 - log(2)^2/2, Li2(-1) = -pi^2/12
    np.testing.assert_allclose(np.asarray(sp.spence(jnp.asarray(np.array([0.5, 2.0], np.float32)))),
                               [np.pi**2 / 12 - np.log(2) ** 2 / 2, -np.pi**2 / 12], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(sp.owens_t(np.array([0.3, 1.0, 2.5], np.float32), 0.0)), np.zeros(3))
    x = np.array([-3.0, -0.5, 0.5, 2.0, 4.0], np.float32)
    np.testing.assert_allclose(np.asarray(sp.hyp1f1(1.5, 1.5, x)), np.exp(x.astype(np.float64)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(sp.hyp1f1(0.0, 2.0, x)), np.ones(5))
    with pytest.raises(TypeError):
        sp.bessel_jn(np.float32(1.0), v=1.5)  # type: ignore[arg-type]


def test_bessel_jn_against_its_integral() -> None:
    # J_n(z) = (1/pi) int_0^pi cos(n t - z sin t) dt (DLMF 10.9.2)
    z = np.array([8.0, 10.0, 20.0, 30.0], np.float32)
    js = np.asarray(jax.jit(lambda v: sp.bessel_jn(v, v=3))(z))
    assert js.shape == (4, 4) and js.dtype == np.float32
    for n in range(4):
        want = [_integral(lambda t, zz=zz, n=n: np.cos(n * t - zz * np.sin(t)), 0.0, math.pi, n=20001) / math.pi for zz in z]
        np.testing.assert_allclose(js[n], want, rtol=1e-4, atol=1e-6)


XH = np.array([-0.9, -0.4, 0.0, 0.2, 0.5, 0.8, 0.93, 0.995], np.float32)  # one shape: one compilation per backend


def _full(v: float) -> np.ndarray:
    return np.full(len(XH), v, np.float32)


def test_hyp2f1_closed_forms() -> None:
    x = XH.astype(np.float64)
    # 2F1(a, b; b; x) = (1 - x)^-a (either parameter equal to c)
    for a in [0.5, -2.5]:
        np.testing.assert_allclose(np.asarray(sp.hyp2f1(a, 2.0, 2.0, XH)), (1 - x) ** -a, rtol=2e-5)
        np.testing.assert_allclose(np.asarray(sp.hyp2f1(2.0, a, 2.0, XH)), (1 - x) ** -a, rtol=2e-5)
    # 2F1(1, 1; 2; x) = -log(1 - x) / x: the series, and near 1 the digamma transformation (c - a - b = 0)
    np.testing.assert_allclose(np.asarray(sp.hyp2f1(1.0, 1.0, 2.0, XH)),
                               np.where(x == 0, 1.0, -np.log1p(-x) / np.where(x == 0, 1, x)), rtol=5e-5)
    # 2F1(1/2, 1; 3/2; -t^2) = arctan(t) / t (at -0.995 the alternating series is cut at 249 terms, as JAX's)
    t = np.sqrt(np.abs(x))
    got = np.asarray(sp.hyp2f1(0.5, 1.0, 1.5, (-t * t).astype(np.float32)))
    np.testing.assert_allclose(got[:-1], np.where(t == 0, 1.0, np.arctan(t) / np.where(t == 0, 1, t))[:-1], rtol=2e-6)
    # a terminating series: 2F1(-2, b; c; x) = 1 - 2 b x / c + b (b + 1) x^2 / (c (c + 1)); with c - a - b <= -1
    # (c = 0.5) through Euler's transformation (1 - x)^(c-a-b) 2F1(c - a, c - b; c; x)
    for b, c in [(1.5, 2.5), (1.5, 0.5)]:
        np.testing.assert_allclose(np.asarray(sp.hyp2f1(-2.0, b, c, XH)),
                                   1 - 2 * b * x / c + b * (b + 1) * x**2 / (c * (c + 1)), rtol=1e-4, atol=1e-5)
    # at x = 1: Gauss's theorem Gamma(c) Gamma(c - a - b) / (Gamma(c - a) Gamma(c - b)), inf when c <= a + b;
    # past 1: inf (no continuation, as JAX); c a pole: inf; x = 0: 1
    a_, b_, c_ = (np.array(v, np.float32) for v in ([0.5, 1.5, 1.0, 1.0, 3.0, 0.5, 1.0, 2.0],
                                                   [1.5, 2.0, 1.0, 2.0, 2.0, 0.5, 1.0, 1.0],
                                                   [4.0, 3.0, 2.0, -3.0, 1.5, 3.0, 1.5, 5.0]))
    x_ = np.array([1, 1, 1.5, 0.5, 0, 1, 1, 1], np.float32)
    gauss = [math.gamma(c) * math.gamma(c - a - b) / (math.gamma(c - a) * math.gamma(c - b))
             for a, b, c in zip(a_[[0, 5, 7]], b_[[0, 5, 7]], c_[[0, 5, 7]])]
    want = [gauss[0], math.inf, math.inf, math.inf, 1.0, gauss[1], math.inf, gauss[2]]
    np.testing.assert_allclose(np.asarray(sp.hyp2f1(a_, b_, c_, x_)), want, rtol=1e-6)


def test_hyp2f1_returns_where_an_unselected_loop_would_not_end() -> None:
    # The terminating series runs |a| terms on every element in JAX 0.10.2, selected or not: with an infinite
    # parameter JAX never returns. minijax steps it only where it is the selected region; the other elements
    # of the same call keep their values.
    a = _full(0.5)
    a[1], a[4] = np.inf, -np.inf
    got = np.asarray(sp.hyp2f1(a, 2.0, 2.0 + 1e-3, XH))
    alone = np.asarray(sp.hyp2f1(_full(0.5), 2.0, 2.0 + 1e-3, XH))
    keep = np.isfinite(a)
    np.testing.assert_array_equal(got[keep], alone[keep])


def test_hyp2f1_derivatives() -> None:
    x = XH[XH < 0.9]
    grad = jax.grad(lambda a, b, c, x: sp.hyp2f1(a, b, c, x).sum(), (0, 1, 2, 3))
    da, db, dc, dx = (np.asarray(g)[XH < 0.9] for g in grad(_full(1.5), _full(0.5), _full(2.5), XH))
    # d/dx 2F1 = a b / c 2F1(a + 1, b + 1; c + 1; x)
    np.testing.assert_allclose(dx, 1.5 * 0.5 / 2.5 * np.asarray(sp.hyp2f1(2.5, 1.5, 3.5, XH))[XH < 0.9], rtol=1e-5)

    # the parameter derivatives against central differences in float64 of the series itself
    def f64(a: float, b: float, c: float) -> np.ndarray:
        xx, term, total = x.astype(np.float64), np.ones(len(x)), np.ones(len(x))
        for k in range(400):
            term = term * (a + k) * (b + k) / ((c + k) * (k + 1)) * xx
            total = total + term
        return total

    h = 1e-6
    for got, shift in [(da, np.array([h, 0, 0])), (db, np.array([0, h, 0])), (dc, np.array([0, 0, h]))]:
        up, down = f64(*(np.array([1.5, 0.5, 2.5]) + shift)), f64(*(np.array([1.5, 0.5, 2.5]) - shift))
        np.testing.assert_allclose(got, (up - down) / (2 * h), rtol=2e-4, atol=1e-6)


def test_hyp2f1_under_jit_and_vmap() -> None:
    a = np.array([[0.5], [1.5]], np.float32)
    out = jax.vmap(sp.hyp2f1, (0, None, None, None))(a[:, 0], 1.0, 2.0, XH)  # its loops run under jit
    assert out.shape == (2, len(XH)) and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), np.asarray(sp.hyp2f1(a, 1.0, 2.0, XH)), rtol=1e-6)
    assert sp.hyp2f1(1, 2, 3, 0.5).dtype == np.float32

@pytest.mark.parametrize("name", ["dawsn", "fresnel", "sici", "spence"])
def test_jit_and_eager_agree(name: str) -> None:
    f = getattr(sp, name)
    x = jnp.asarray(POS)
    eager, jitted = jax.tree_util.tree_leaves(f(x)), jax.tree_util.tree_leaves(jax.jit(f)(x))
    for e, j in zip(eager, jitted):
        assert e.dtype == j.dtype == np.float32
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-6)
