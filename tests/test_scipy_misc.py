"""jax.scipy's optimize, integrate, interpolate, ndimage and cluster on both
backends: against SciPy/NumPy where they define the same thing, and under jit,
grad and vmap. The comparison with real JAX is tests/test_scipy_misc_oracle.py
and tests/test_scipy_optimize_oracle.py."""

from __future__ import annotations

import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax.scipy import cluster, integrate, interpolate, ndimage, optimize

pytest.importorskip("scipy")
import scipy.cluster.vq  # noqa: E402
import scipy.interpolate  # noqa: E402
import scipy.ndimage  # noqa: E402


@pytest.mark.parametrize("mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_is_scipys(backend_name: str, mode: str, order: int) -> None:
    rng = np.random.default_rng(1)
    image = rng.normal(size=(4, 5)).astype(np.float32)
    # Integer-and-a-bit coordinates: scipy and JAX round exact halves differently.
    coords = [rng.uniform(-3, 7, size=6).astype(np.float32) for _ in range(2)]
    want = scipy.ndimage.map_coordinates(image.astype(np.float64), coords, order=order, mode=mode, cval=-2.0)
    got = ndimage.map_coordinates(image, coords, order, mode=mode, cval=-2.0)
    assert got.dtype == np.float32 and got.shape == (6,)
    if mode in ("wrap",):
        # scipy's 'wrap' is its legacy variant (period n - 1); JAX's is a plain modulo.
        want = scipy.ndimage.map_coordinates(image.astype(np.float64), coords, order=order, mode="grid-wrap")
    if mode == "constant":
        # Outside the samples scipy's 'constant' rounds and blends differently from JAX's (per neighbour).
        inside = [(c >= 0) & (c <= s - 1) for c, s in zip(coords, image.shape)]
        mask = inside[0] & inside[1]
        np.testing.assert_allclose(np.asarray(got)[mask], want[mask], rtol=1e-5, atol=1e-5)
        return
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_map_coordinates_grad_jit_vmap(backend_name: str) -> None:
    image = jnp.arange(12.0).reshape(3, 4)

    def f(c: minijax.Array) -> minijax.Array:
        return ndimage.map_coordinates(image, [c, c * 2], 1, mode="nearest")

    c = jnp.array([0.25, 0.5, 1.1])
    # Linear in each coordinate inside a cell: d/dc (4 c + 2 c) = 6.
    np.testing.assert_allclose(np.asarray(minijax.grad(lambda t: f(t).sum())(c)), [6.0, 6.0, 6.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(minijax.jit(f)(c)), np.asarray(f(c)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(minijax.vmap(f)(c[:, None])).ravel(), np.asarray(f(c)), rtol=1e-6)
    ints = ndimage.map_coordinates(jnp.arange(5), [jnp.array([0.5, 1.5, 2.4])], 1)
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(ints), [1, 2, 2])


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator_is_scipys(backend_name: str, method: str) -> None:
    rng = np.random.default_rng(2)
    grid = (np.array([0.0, 1.0, 2.5, 4.0]), np.array([-1.0, 0.0, 3.0]))
    values = rng.normal(size=(4, 3, 2))
    xi = np.stack([rng.uniform(-0.5, 4.5, 7), rng.uniform(-1.5, 3.5, 7)], -1)
    want = scipy.interpolate.RegularGridInterpolator(grid, values, method=method, bounds_error=False)(xi)
    interp = interpolate.RegularGridInterpolator(grid, values.astype(np.float32), method=method)
    got = interp(xi.astype(np.float32))
    assert got.shape == (7, 2) and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    # A pytree: it passes through jit as an argument.
    np.testing.assert_allclose(
        np.asarray(minijax.jit(lambda f, x: f(x))(interp, xi.astype(np.float32))), want, rtol=1e-5, atol=1e-5
    )
    leaves = minijax.tree_util.tree_leaves(interp)
    assert len(leaves) == 4
    with pytest.raises(NotImplementedError, match="bounds_error"):
        interpolate.RegularGridInterpolator(grid, values, bounds_error=True)


def test_vq_is_scipys(backend_name: str) -> None:
    rng = np.random.default_rng(3)
    obs, book = rng.normal(size=(8, 3)), rng.normal(size=(4, 3))
    code, dist = cluster.vq.vq(obs.astype(np.float32), book.astype(np.float32))
    want_code, want_dist = scipy.cluster.vq.vq(obs, book)
    np.testing.assert_array_equal(np.asarray(code), want_code)
    np.testing.assert_allclose(np.asarray(dist), want_dist, rtol=1e-5)
    with pytest.raises(ValueError, match="same rank"):
        cluster.vq.vq(jnp.ones((2, 2)), jnp.ones(2))


def test_trapezoid_is_numpys(backend_name: str) -> None:
    y = np.linspace(0, 2, 15, dtype=np.float32).reshape(3, 5) ** 2
    x = np.cumsum(np.arange(1.0, 6.0, dtype=np.float32))
    for kw in ({}, {"dx": 0.25}, {"x": x}):
        np.testing.assert_allclose(np.asarray(integrate.trapezoid(y, **kw)), np.trapezoid(y, **kw), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(integrate.trapezoid(y, axis=0)), np.trapezoid(y, axis=0), rtol=1e-5)
    g = minijax.grad(lambda t: integrate.trapezoid(t, dx=2.0))(jnp.ones(4))
    np.testing.assert_allclose(np.asarray(g), [1.0, 2.0, 2.0, 1.0])


@pytest.mark.parametrize("method", ["BFGS", "l-bfgs-experimental-do-not-rely-on-this"])
def test_minimize_finds_minima(backend_name: str, method: str) -> None:
    def fun(x: minijax.Array, a: minijax.Array) -> minijax.Array:
        return jnp.sum(a * (x - 1.5) ** 2) + (x[0] + x[1]) ** 2

    a = jnp.array([1.0, 2.0, 4.0])
    r = minijax.jit(lambda x: optimize.minimize(fun, x, (a,), method=method))(jnp.array([3.0, -1.0, 0.0]))
    assert isinstance(r, optimize.OptimizeResults)
    # The minimum solves (A + B) x = A 1.5 with A = diag(a) and B the (x0 + x1)^2 term's Hessian / 2.
    h = np.diag([1.0, 2.0, 4.0]) + np.array([[1.0, 1.0, 0], [1.0, 1.0, 0], [0, 0, 0]])
    want = np.linalg.solve(h, 1.5 * np.array([1.0, 2.0, 4.0]))
    np.testing.assert_allclose(np.asarray(r.x), want, atol=1e-2)
    np.testing.assert_allclose(float(r.fun), fun(jnp.asarray(want, np.float32), a), rtol=1e-4)
    assert int(r.nit) > 0 and int(r.nfev) >= int(r.nit) and int(r.njev) == int(r.nfev)
    np.testing.assert_allclose(np.asarray(r.jac), np.asarray(minijax.grad(fun)(r.x, a)), rtol=1e-4, atol=1e-4)
    if method == "BFGS":
        np.testing.assert_allclose(np.asarray(r.hess_inv), np.linalg.inv(2 * h), atol=0.05)
    else:
        assert r.hess_inv is None


def test_minimize_vmap_and_maxiter(backend_name: str) -> None:
    def himmelblau(x: minijax.Array) -> minijax.Array:
        return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2

    starts = jnp.array([[3.5, 2.5], [-3.0, 3.0]])
    r = minijax.vmap(lambda x: optimize.minimize(himmelblau, x, method="BFGS"))(starts)
    np.testing.assert_allclose(np.asarray(r.fun), [0.0, 0.0], atol=1e-6)
    short = optimize.minimize(lambda x: jnp.sum((x - 2.0) ** 4), jnp.zeros(2), method="BFGS", options={"maxiter": 2})
    assert int(short.nit) == 2 and int(short.status) == 1 and not bool(short.success)
    with pytest.raises(ValueError, match="Method cg not recognized"):
        optimize.minimize(himmelblau, starts[0], method="cg")
