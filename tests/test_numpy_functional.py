"""jnp.vectorize, piecewise, apply_along_axis and apply_over_axes on both backends,
against NumPy's own functions and under jit, grad and vmap."""

from __future__ import annotations

import numpy as np
import pytest

import minijax
import minijax.numpy as jnp


def test_vectorize_with_a_signature_broadcasts_loop_dimensions(backend_name: str) -> None:
    rng = np.random.default_rng(0)
    m, v = rng.normal(size=(2, 1, 3, 4)).astype(np.float32), rng.normal(size=(5, 4)).astype(np.float32)
    matvec = jnp.vectorize(lambda a, b: a @ b, signature="(n,k),(k)->(n)")
    want = np.vectorize(lambda a, b: a @ b, signature="(n,k),(k)->(n)")(m, v)
    got = matvec(m, v)
    assert got.shape == want.shape == (2, 5, 3)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(minijax.jit(matvec)(m, v)), want, rtol=1e-5, atol=1e-5)


def test_vectorize_excluded_and_multiple_outputs(backend_name: str) -> None:
    add = jnp.vectorize(lambda a, b, *, c: a * b + c, excluded={1, "c"})
    np.testing.assert_array_equal(np.asarray(add(jnp.arange(3.0), 2.0, c=1.0)), [1.0, 3.0, 5.0])
    both = jnp.vectorize(lambda a: (a.sum(), a * 2), signature="(n)->(),(n)")
    s, d = both(jnp.ones((2, 1, 3)))
    assert s.shape == (2, 1) and d.shape == (2, 1, 3)
    # A loop dimension of size 1 in every argument is kept, not mapped.
    assert jnp.vectorize(lambda a, b: a * b)(jnp.ones((1, 3)), jnp.ones((1, 1))).shape == (1, 3)


def test_vectorize_errors(backend_name: str) -> None:
    with pytest.raises(ValueError, match="does not have enough dimensions for all core dimensions"):
        jnp.vectorize(lambda a: a.sum(), signature="(n)->()")(jnp.float32(1))
    with pytest.raises(ValueError, match="output shape \\(3,\\) does not match core dimensions"):
        jnp.vectorize(lambda a: a, signature="(n)->()")(jnp.ones(3))
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        jnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(lambda a: a, signature="(n->()")(jnp.ones(3))
    with pytest.raises(TypeError, match="can only exclude integer or string"):
        jnp.vectorize(lambda a: a, excluded={1.5})
    with pytest.raises(ValueError, match="contains negative numbers"):
        jnp.vectorize(lambda a: a, excluded={-1})


def test_piecewise_is_numpys(backend_name: str) -> None:
    x = np.linspace(-3, 3, 13).astype(np.float32)
    conds = [x < -1, x > 1]
    funcs = [lambda t: -t, 5.0, lambda t: t**2]
    want = np.piecewise(x, conds, funcs)
    np.testing.assert_allclose(np.asarray(jnp.piecewise(x, conds, funcs)), want, rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(minijax.jit(lambda t: jnp.piecewise(t, [t < -1, t > 1], funcs))(x)), want, rtol=1e-6
    )
    # Integer x: results are cast to x's dtype.
    xi = np.arange(-3, 4)
    got = jnp.piecewise(xi, [xi < 0], [lambda t: t * 2.5])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), np.piecewise(xi, [xi < 0], [lambda t: (t * 2.5).astype(int)]))
    with pytest.raises(ValueError, match="either 1 or 2 functions are expected; got 3"):
        jnp.piecewise(x, [x < 0], [1, 2, 3])


def test_piecewise_grad_and_vmap(backend_name: str) -> None:
    def f(t: minijax.Array) -> minijax.Array:
        return jnp.piecewise(t, [t < 0], [lambda u: -u, lambda u: u**2])

    x = jnp.array([-2.0, -0.5, 0.5, 3.0])
    np.testing.assert_allclose(np.asarray(minijax.grad(lambda t: f(t).sum())(x)), [-1.0, -1.0, 1.0, 6.0])
    np.testing.assert_allclose(np.asarray(minijax.vmap(f)(x.reshape(2, 2))), np.asarray(f(x)).reshape(2, 2))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_apply_along_axis_is_numpys(backend_name: str, axis: int) -> None:
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)

    def f(v: minijax.Array, scale: float) -> minijax.Array:
        return jnp.stack([v.sum(), v.max() * scale])

    want = np.apply_along_axis(lambda v: np.stack([v.sum(), v.max() * 2]), axis, a)
    np.testing.assert_allclose(np.asarray(jnp.apply_along_axis(f, axis, a, 2.0)), want)
    np.testing.assert_allclose(np.asarray(minijax.jit(lambda t: jnp.apply_along_axis(f, axis, t, 2.0))(a)), want)


def test_apply_over_axes_is_numpys(backend_name: str) -> None:
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_allclose(
        np.asarray(jnp.apply_over_axes(jnp.sum, a, [0, 2])), np.apply_over_axes(np.sum, a, [0, 2])
    )
    g = minijax.grad(lambda t: jnp.apply_over_axes(jnp.max, t, (1,)).sum())(jnp.asarray(a))
    assert float(g.sum()) == 8.0
    with pytest.raises(ValueError, match="function is not returning an array of the correct shape"):
        jnp.apply_over_axes(lambda t, ax: t.sum(), jnp.ones((2, 3)), [0])
