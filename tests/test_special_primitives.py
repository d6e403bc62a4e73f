"""The special-function primitives (igamma, igammac, igamma_grad_a, regularized_incomplete_beta,
polygamma, zeta, bessel_i0e, bessel_i1e) on both backends: values against known closed forms and
scipy (when installed), dtype/weak-type/shape rules and their errors, jit, grad (JAX's rules) and vmap."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
from minijax import lax

F32 = np.float32


N = 6  # every eager value test calls the primitives on float32[6]: one XLA compile per primitive


def call(f: object, *args: object) -> np.ndarray:
    """``f(*args)`` on float32 operands padded to length N (and the result cut back): the
    XLA backend compiles each primitive once for the whole module instead of once per shape."""
    flat = [np.atleast_1d(np.asarray(a, F32)) for a in args]
    n = max(len(a) for a in flat)
    padded = [np.concatenate([np.broadcast_to(a, (n,)), np.ones(N - n, F32)]) for a in flat]
    out = np.asarray(f(*padded))  # type: ignore[operator]
    return out[:n] if np.ndim(args[0]) or any(np.ndim(a) for a in args) else out[0]


def _close(got: object, want: object, rtol: float = 2e-5, atol: float = 1e-6) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=atol)


# --- values against closed forms (no scipy needed) ------------------------------------------


def test_incomplete_gamma_at_a_equal_one_is_the_exponential_cdf() -> None:
    # P(1, x) = 1 - e^-x, Q(1, x) = e^-x: both branches (series below x = 2, fraction above).
    x = np.array([0.1, 0.5, 1.5, 2.5, 7.0, 30.0], F32)
    _close(call(lax.igamma, np.ones_like(x), x), -np.expm1(-x.astype(np.float64)))
    _close(call(lax.igammac, np.ones_like(x), x), np.exp(-x.astype(np.float64)), rtol=1e-5, atol=0)


def test_incomplete_gamma_at_a_half_is_erf() -> None:
    x = np.array([0.01, 0.3, 1.0, 4.0, 20.0], F32)
    import math

    want = [math.erf(math.sqrt(v)) for v in x.astype(float)]
    _close(call(lax.igamma, np.full_like(x, 0.5), x), want)
    _close(call(lax.igammac, np.full_like(x, 0.5), x), [math.erfc(math.sqrt(v)) for v in x.astype(float)], rtol=1e-5)


def test_igamma_grad_a_matches_a_finite_difference_of_igamma() -> None:
    with jax.config.enable_x64(True) if hasattr(jax.config, "enable_x64") else _x64():
        a = np.array([0.5, 2.0, 5.0, 2.0, 30.0])
        x = np.array([0.3, 3.0, 4.0, 40.0, 25.0])
        h = 1e-6
        fd = (np.asarray(lax.igamma(a + h, x)) - np.asarray(lax.igamma(a - h, x))) / (2 * h)
        _close(lax.igamma_grad_a(a, x), fd, rtol=1e-6, atol=1e-12)


def _x64() -> object:
    from minijax.config import enable_x64

    return enable_x64(True)


def test_betainc_closed_forms() -> None:
    x = np.array([0.0, 0.1, 0.5, 0.9, 1.0], F32)
    _close(call(lax.betainc, np.ones_like(x), np.ones_like(x), x), x)  # I_x(1, 1) = x
    _close(call(lax.betainc, np.full_like(x, 2.0), np.ones_like(x), x), x**2)  # I_x(2, 1) = x^2
    _close(call(lax.betainc, np.ones_like(x), np.full_like(x, 3.0), x), 1 - (1 - x.astype(np.float64)) ** 3)


def test_polygamma_zeta_and_bessel_closed_forms() -> None:
    _close(call(lax.zeta, F32(2.0), F32(1.0)), np.pi**2 / 6)
    _close(call(lax.zeta, F32(4.0), F32(1.0)), np.pi**4 / 90)
    _close(call(lax.polygamma, F32(1.0), F32(1.0)), np.pi**2 / 6)
    _close(call(lax.polygamma, F32(0.0), F32(1.0)), -0.5772156649)  # digamma
    _close(call(lax.polygamma, F32(2.0), F32(1.0)), -2 * 1.2020569031595942)  # -2 zeta(3)
    assert np.isnan(float(call(lax.polygamma, F32(1.5), F32(1.0))))  # order not an integer
    _close(call(lax.bessel_i0e, F32(0.0)), 1.0)
    _close(call(lax.bessel_i1e, F32(0.0)), 0.0)
    _close(call(lax.bessel_i0e, np.array([1.0, -1.0], F32)), [0.46575961, 0.46575961])  # even
    _close(call(lax.bessel_i1e, np.array([1.0, -1.0], F32)), [0.20791042, -0.20791042])  # odd
    _close(
        call(lax.bessel_i0e, F32(100.0)), 1 / np.sqrt(2 * np.pi * 100) * (1 + 1 / 800 + 9 / (2 * 6400 * 100)), rtol=1e-5
    )


def test_edge_values_are_jax_s() -> None:
    nan, inf = np.nan, np.inf
    a = np.array([0, 0, 1, 1, -1, 2], F32)
    x = np.array([0, 0.5, 0, inf, 1, -1], F32)
    np.testing.assert_array_equal(np.asarray(call(lax.igamma, a, x)), [nan, nan, 0, 1, nan, nan])
    np.testing.assert_array_equal(np.asarray(call(lax.igammac, a, x)), [nan, 0, 1, 0, nan, nan])
    zx = np.array([1, 0.5, 2, 3, 2.5], F32)
    zq = np.array([1, 1, 0, -1, -1.5], F32)
    np.testing.assert_array_equal(np.asarray(call(lax.zeta, zx, zq)), [inf, nan, inf, nan, nan])
    ba = np.array([0, 1, 0, 2], F32)
    bb = np.array([1, 0, 0, 2], F32)
    bx = np.array([0.5, 0.5, 0.5, 1.5], F32)
    np.testing.assert_array_equal(np.asarray(call(lax.betainc, ba, bb, bx)), [1, 0, nan, nan])


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_other_float_dtypes_keep_their_dtype(dtype: type) -> None:
    from minijax.config import enable_x64

    with enable_x64(True):
        a, x = np.array([2.0, 3.0], dtype), np.array([1.0, 5.0], dtype)
        out = lax.igamma(a, x)
        assert out.dtype == dtype
        _close(out, [1 - 2 / np.e, 1 - 18.5 * np.exp(-5.0)], rtol=2e-3 if dtype == np.float16 else 1e-14)
        assert lax.bessel_i1e(x).dtype == dtype
        assert lax.zeta(a, x).dtype == dtype


# --- shape and dtype rules -------------------------------------------------------------------


def test_shapes_broadcast_and_weak_types_follow_the_operands() -> None:
    out = jax.eval_shape(lax.igamma, np.ones((2, 1), F32), np.ones((1, 3), F32))
    assert out.shape == (2, 3)
    assert jax.eval_shape(lax.igamma, 2.0, 1.0).weak_type
    assert not jax.eval_shape(lax.igamma, F32(2.0), 1.0).weak_type
    assert jax.eval_shape(lax.betainc, np.ones(3, F32), 2.0, 0.5).shape == (3,)
    assert jax.eval_shape(lax.bessel_i0e, np.ones((2, 3), F32)).shape == (2, 3)


def test_dtype_errors_are_jax_s() -> None:
    with pytest.raises(TypeError, match="igamma does not accept dtype int32 at position 0"):
        lax.igamma(np.int32(1), F32(1.0))
    with pytest.raises(TypeError, match="lax.zeta requires arguments to have the same dtypes"):
        from minijax.config import enable_x64

        with enable_x64(True):
            lax.zeta(F32(2.0), np.float64(1.0))
    with pytest.raises(TypeError, match="bessel_i0e does not accept dtype int32"):
        lax.bessel_i0e(np.int32(1))
    with pytest.raises(TypeError, match="polygamma got incompatible shapes for broadcasting"):
        lax.polygamma(np.ones(2, F32), np.ones(3, F32))


# --- transformations -------------------------------------------------------------------------


def test_jit_gives_the_eager_values() -> None:
    a = np.array([1.5, 3.0, 8.0, 1.0, 2.0, 4.0], F32)
    x = np.array([0.2, 3.0, 6.0, 1.0, 1.0, 1.0], F32)

    def every(a: object, x: object) -> list[object]:
        binary = [f(a, x) for f in (lax.igamma, lax.igammac, lax.igamma_grad_a, lax.polygamma, lax.zeta)]
        return [*binary, lax.betainc(a, a, x / 7), lax.bessel_i0e(x), lax.bessel_i1e(x)]

    for got, want in zip(jax.jit(every)(a, x), every(a, x)):
        _close(got, want, rtol=1e-6)


def _grad(f: object, argnums: object = 0) -> object:
    """grad of a scalar function at N points at once (vmapped): the primitives run on float32[N]."""

    def at(*args: object) -> object:
        flat = [np.full(N, a, F32) for a in args]
        return jax.vmap(jax.grad(f, argnums=argnums))(*flat)  # type: ignore[arg-type]

    return at


def _first(x: object) -> object:
    return jax.tree_util.tree_map(lambda v: np.asarray(v)[0], x)


def test_derivatives_are_jax_s_rules() -> None:
    da, dx = _first(_grad(lax.igamma, (0, 1))(2.0, 3.0))
    _close(dx, 3.0 * np.exp(-3.0))  # x^(a-1) e^-x / Gamma(a)
    _close(da, call(lax.igamma_grad_a, 2.0, 3.0))
    dac, dxc = _first(_grad(lax.igammac, (0, 1))(2.0, 3.0))
    _close([dac, dxc], [-float(da), -float(dx)])
    _close(_first(_grad(lax.betainc, 2)(2.0, 3.0, 0.4)), 12 * 0.4 * 0.6**2)
    _close(_first(_grad(lax.polygamma, 1)(1.0, 2.0)), call(lax.polygamma, 2.0, 2.0))
    _close(_first(_grad(lax.bessel_i0e)(1.5)), call(lax.bessel_i1e, 1.5) - call(lax.bessel_i0e, 1.5))
    _close(_first(_grad(lax.bessel_i1e)(0.0)), 0.5)
    h = 1e-3
    fd = (call(lax.bessel_i1e, 2.0 + h) - call(lax.bessel_i1e, 2.0 - h)) / (2 * h)
    _close(_first(_grad(lax.bessel_i1e)(2.0)), fd, rtol=1e-3)


def test_derivatives_jax_does_not_have_raise_as_in_jax() -> None:
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported"):
        jax.grad(lax.betainc)(F32(2.0), F32(3.0), F32(0.4))
    with pytest.raises(ValueError, match="polygamma gradient with respect to m is not supported"):
        jax.grad(lax.polygamma)(F32(1.0), F32(2.0))
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'zeta' not implemented"):
        jax.grad(lax.zeta)(F32(2.0), F32(2.0))
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'igamma_grad_a' not implemented"):
        jax.grad(lax.igamma_grad_a)(F32(2.0), F32(2.0))


def test_vmap_equals_stacking_and_batches_in_one_equation() -> None:
    a = np.array([[0.5, 2.0, 3.0, 1.0, 1.5, 2.5], [1.5, 4.0, 9.0, 2.0, 3.0, 5.0]], F32)
    x = np.array([1.0, 2.0, 3.0, 0.5, 4.0, 6.0], F32)
    for f in (lax.igamma, lax.zeta):
        batched = jax.vmap(f, in_axes=(0, None))(a + 1, x)
        _close(batched, np.stack([call(f, row, x) for row in a + 1]), rtol=1e-6)
    text = str(jax.make_jaxpr(jax.vmap(lax.igamma, in_axes=(1, None)))(a, x[:2]))
    assert text.count("igamma") == 1 and "while" not in text
    text = str(jax.make_jaxpr(jax.vmap(lax.bessel_i0e))(a))
    assert text.count("bessel_i0e") == 1


def test_jaxprs_print_and_parse_as_jax_s() -> None:
    from minijax.jaxpr_parse import parse_jaxpr

    closed = jax.make_jaxpr(lambda a, b, x: lax.betainc(a, b, x) + lax.zeta(a, b))(1.0, 2.0, 0.5)
    text = str(closed)
    assert "regularized_incomplete_beta" in text and "zeta" in text
    assert str(parse_jaxpr(text)) == text


def test_random_gamma_grad_is_the_implicit_derivative_of_the_sample() -> None:
    a, x = F32(2.5), F32(1.7)
    # dx/da at fixed u = P(a, x): -(dP/da) / (dP/dx)
    want = -float(call(lax.igamma_grad_a, a, x)) / (float(x) ** 1.5 * np.exp(-1.7) / 1.329340388)
    _close(call(lax.random_gamma_grad, a, x), want, rtol=1e-5)


def test_random_gamma_samples_are_differentiable_in_a() -> None:
    key = jax.random.key(0)
    h = 1e-2

    def mean(a: object) -> object:
        return jax.random.gamma(key, a, (64,)).mean()

    @jax.jit
    def both(a: object) -> tuple[object, object]:
        return jax.grad(mean)(a), (mean(a + h) - mean(a - h)) / (2 * h)

    g, fd = both(F32(2.0))
    assert 0.7 < float(g) < 1.3  # E[x] = a, so the mean's derivative is ~1
    _close(g, fd, rtol=2e-2)


def test_polygamma_at_its_poles_is_jaxs_on_every_jaxlib(backend_name: str) -> None:
    # At a non-positive integer x: +inf for odd m, NaN otherwise (JAX 0.10.2).
    # jaxlib 0.12's XLA expansion gives -inf for m = 0, so the lowering writes
    # the poles out; this failed on the Python 3.12 (jaxlib 0.12) leg before.
    import numpy as np

    from minijax import lax

    for dtype in (np.float16, np.float32):
        m = np.array([0, 0, 1, 1, 2, 3], dtype)
        x = np.array([0, -1, 0, -2, -1, -3], dtype)
        got = np.asarray(lax.polygamma(m, x))
        assert np.isnan(got[[0, 1, 4]]).all(), got
        assert np.isposinf(got[[2, 3, 5]]).all(), got


@pytest.mark.single_backend  # (the NumPy backend's function itself, called directly)
def test_the_numpy_backends_erf_inv_is_float64_exact_over_its_whole_range() -> None:
    # issue 23: the reference erf_inv starts from Giles's approximation (fit on float32's range)
    # and, within ~1e-7 of +-1 where that fit does not hold, from Winitzki's; both branches and the
    # switch between the polynomials must land on scipy's values to float64 rounding.
    special = pytest.importorskip("scipy.special")
    from minijax_numpy.elementwise import _erf_inv

    x = np.concatenate([
        np.linspace(-0.999, 0.999, 2001),
        1 - np.logspace(-16, -1, 301), -1 + np.logspace(-16, -1, 301),  # the tails, both fits and beyond
        np.logspace(-300, -2, 50),  # tiny: erf_inv(x) ~ sqrt(pi)/2 x
        [1 - np.finfo(np.float64).epsneg, np.exp(-5.0), np.sqrt(1 - np.exp(-5.0)), np.sqrt(1 - np.exp(-16.0))],
    ])
    want = special.erfinv(x)
    np.testing.assert_allclose(_erf_inv(x), want, rtol=2e-14, atol=0)
    np.testing.assert_array_equal(_erf_inv(np.array([1.0, -1.0, 2.0, np.nan])), [np.inf, -np.inf, np.nan, np.nan])
    # float32 operands (random.normal's): the float64 result rounds to scipy's value rounded,
    # on float32s spread over every binade of (-1, 1) and the last ones below 1.
    from minijax_numpy.elementwise import IMPLS

    x32 = np.arange(0, 0x3F800000, 4099, dtype=np.uint32).view(np.float32)
    x32 = np.concatenate([x32, -x32, np.nextafter(np.float32(1), 0) - np.arange(64, dtype=np.float32) * 2**-24])
    np.testing.assert_array_equal(IMPLS["erf_inv"](x32), special.erfinv(x32.astype(np.float64)).astype(np.float32))


@pytest.mark.single_backend
def test_the_numpy_backends_special_functions_give_the_same_values_block_by_block(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 23: a large operand is evaluated in blocks (minijax_numpy.elementwise._in_float64);
    # every element must get what the whole-array evaluation gives it, bit for bit.
    from minijax_numpy import elementwise

    rng = np.random.default_rng(0)
    edges = [0.0, -0.0, 1.0, -1.0, -2.0, 0.5, 1.5, np.inf, -np.inf, np.nan, 1e-300, 1e10]
    for dtype in (np.float32, np.float64):
        x = np.concatenate([rng.uniform(-30, 30, 3000), rng.uniform(-1.1, 1.1, 3000), np.tile(edges, 20)])
        x = rng.permutation(x).astype(dtype).reshape(-1, 3)
        for name in ("erf", "erfc", "erf_inv", "lgamma", "digamma"):
            with np.errstate(all="ignore"):
                monkeypatch.setattr(elementwise, "_SPECIAL_BLOCK", x.size)
                whole = elementwise.IMPLS[name](x)
                monkeypatch.setattr(elementwise, "_SPECIAL_BLOCK", 100)
                blocked = elementwise.IMPLS[name](x)
            assert blocked.shape == x.shape and blocked.dtype == x.dtype, name
            np.testing.assert_array_equal(blocked, whole, err_msg=name)
            np.testing.assert_array_equal(np.signbit(blocked), np.signbit(whole), err_msg=name)
