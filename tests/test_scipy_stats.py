"""minijax.scipy.stats.norm: values as scipy.stats.norm's, dtypes and derivatives as JAX's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.scipy.stats import norm

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy (the reference for these values) is not installed")

X = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 6.0], np.float32)


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "sf"])
@pytest.mark.parametrize(("loc", "scale"), [(0.0, 1.0), (0.5, 2.0)])
def test_values_match_scipy(name: str, loc: float, scale: float) -> None:
    got = np.asarray(getattr(norm, name)(X, loc, scale))
    assert got.dtype == np.float32
    want = getattr(scipy_stats.norm, name)(X.astype(np.float64), loc, scale)
    np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-7)


def test_integers_promote_to_float_and_python_scalars_keep_jaxs_weak_types() -> None:
    assert norm.pdf(jnp.arange(3)).dtype == jnp.float32
    out = norm.pdf(1.0)
    assert out.dtype == jnp.float32 and out.weak_type
    # The distribution functions go through ndtr's typed constants in JAX: strong.
    assert not norm.cdf(1.0).weak_type and not norm.sf(1.0).weak_type


def test_gradient_of_logpdf() -> None:
    # d/dx log N(x; loc, scale) = -(x - loc) / scale**2
    np.testing.assert_allclose(float(jax.grad(norm.logpdf)(1.5, 0.5, 2.0)), -0.25, rtol=1e-6)
    np.testing.assert_allclose(float(jax.grad(norm.cdf)(0.3)), float(norm.pdf(0.3)), rtol=1e-6)


# --- the whole of jax.scipy.stats (issue 21) ---

import minijax.scipy.stats as stats  # noqa: E402

P = np.array([0.05, 0.3, 0.5, 0.9], np.float32)
K = np.array([0.0, 1.0, 3.0, 7.0], np.float32)
XS = np.array([-1.5, 0.2, 1.0, 3.5], np.float32)
UNIT = np.array([0.1, 0.25, 0.5, 0.8], np.float32)
ANGLE = np.array([0.3, 1.0, 2.5, 6.0], np.float32)

# (module, method, args, the scipy.stats call giving the same values)
CASES: list[tuple[str, str, tuple[Any, ...], Any]] = []


def _case(module: str, methods: str, args: tuple[Any, ...], scipy_name: str | None = None,
          scipy_args: tuple[Any, ...] | None = None) -> None:
    for method in methods.split():
        CASES.append((module, method, args, (scipy_name or module, scipy_args if scipy_args is not None else args)))


_case("bernoulli", "logpmf pmf", (np.array([0.0, 1.0, 2.0, -1.0], np.float32), 0.3))
_case("bernoulli", "cdf", (np.array([-0.5, 0.0, 0.5, 1.0], np.float32), 0.3))
_case("bernoulli", "ppf", (P, 0.3))
_case("beta", "logpdf pdf cdf logcdf sf logsf", (UNIT, 2.0, 3.5))
_case("betabinom", "logpmf pmf", (K, 8.0, 2.0, 3.0))
_case("binom", "logpmf pmf", (K, 8.0, 0.4))
_case("cauchy", "logpdf pdf cdf logcdf sf logsf", (XS, 0.5, 2.0))
_case("cauchy", "ppf isf", (P, 0.5, 2.0))
_case("chi2", "logpdf pdf cdf logcdf sf logsf", (np.abs(XS), 3.0))
_case("expon", "logpdf pdf cdf logcdf sf logsf", (XS, -0.5, 2.0))
_case("expon", "ppf", (P, -0.5, 2.0))
_case("gamma", "logpdf pdf cdf logcdf sf logsf", (np.abs(XS), 2.5, 0.0, 1.5))
_case("gennorm", "logpdf pdf cdf", (XS, 1.5))
_case("geom", "logpmf pmf", (K, 0.3))
for _g in ("gumbel_l", "gumbel_r"):
    _case(_g, "logpdf pdf cdf logcdf sf logsf", (XS, 0.5, 1.5))
    _case(_g, "ppf", (P, 0.5, 1.5))
_case("laplace", "logpdf pdf cdf", (XS, 0.5, 1.5))
_case("logistic", "logpdf pdf cdf sf", (XS, 0.5, 1.5))
_case("logistic", "ppf isf", (P, 0.5, 1.5))
_case("nbinom", "logpmf pmf", (K, 3.0, 0.4))
_case("norm", "logcdf logsf", (XS, 0.5, 2.0))
_case("norm", "ppf isf", (P, 0.5, 2.0))
_case("pareto", "logpdf pdf cdf logcdf sf logsf", (np.abs(XS) + 1, 2.5))
_case("pareto", "ppf", (P, 2.5))
_case("poisson", "logpmf pmf cdf", (K, 2.5))
_case("t", "logpdf pdf", (XS, 4.0, 0.5, 1.5))
_case("truncnorm", "logpdf pdf cdf logcdf sf logsf", (XS, -1.0, 2.0))
_case("uniform", "logpdf pdf cdf", (XS, -1.0, 3.0))
_case("uniform", "ppf", (P, -1.0, 3.0))
_case("vonmises", "logpdf pdf", (ANGLE - 3, 2.0))
_case("wrapcauchy", "logpdf pdf", (ANGLE, 0.4))


@pytest.mark.parametrize(("module", "method", "args", "reference"), CASES,
                         ids=[f"{m}.{f}" for m, f, _, _ in CASES])
def test_every_distribution_matches_scipy(module: str, method: str, args: tuple[Any, ...], reference: Any) -> None:
    got = np.asarray(getattr(getattr(stats, module), method)(*args))
    assert got.dtype == np.float32
    name, ref_args = reference
    ref_method = {"logpmf": "logpmf", "pmf": "pmf"}.get(method, method)
    want = getattr(getattr(scipy_stats, name), ref_method)(*[np.asarray(a, np.float64) for a in ref_args])
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)


def test_out_of_support_and_bad_parameters() -> None:
    assert float(stats.expon.logpdf(-1.0)) == -np.inf and float(stats.expon.pdf(-1.0)) == 0.0
    assert float(stats.uniform.logpdf(2.0)) == -np.inf
    assert np.isnan(float(stats.beta.logpdf(0.5, -1.0, 2.0)))
    assert np.isnan(float(stats.gumbel_r.logpdf(0.5, 0.0, -1.0)))
    assert np.isnan(float(stats.vonmises.logpdf(0.5, 0.0)))
    assert np.isnan(float(stats.expon.ppf(1.5))) and np.isnan(float(stats.bernoulli.cdf(0.5, 2.0)))
    assert float(stats.poisson.logpmf(1.5, 2.0)) == -np.inf
    assert np.isnan(float(stats.truncnorm.logpdf(0.0, 1.0, 1.0)))


def test_norm_logpdf_takes_the_log_of_a_scalar_once() -> None:
    # The normalizer log(2 pi scale**2) is a scalar for a scalar scale, as in JAX; an x-shaped constant made
    # jit(norm.logpdf) take 1e6 logs for 1e6 points (1.45x JAX's time).
    jaxpr = jax.make_jaxpr(norm.logpdf)(np.ones(1000, np.float32)).jaxpr
    logs = [e for e in jaxpr.eqns if e.primitive.name == "log"]
    assert len(logs) == 1 and logs[0].outvars[0].aval.shape == ()
    assert not any(e.primitive.name == "broadcast_in_dim" for e in jaxpr.eqns)


@pytest.mark.parametrize("module", ["norm", "cauchy", "logistic", "laplace", "t", "gamma", "beta", "chi2"])
def test_jit_vmap_and_grad_agree_with_eager(module: str) -> None:
    extra: dict[str, tuple[float, ...]] = {"t": (4.0,), "gamma": (2.0,), "beta": (2.0, 3.0), "chi2": (3.0,)}
    params = extra.get(module, ())
    x = UNIT if module == "beta" else np.abs(XS) + 0.1
    fn = getattr(stats, module).logpdf
    eager = fn(x, *params)
    np.testing.assert_allclose(jax.jit(fn)(x, *params), eager, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(lambda v: fn(v, *params))(x), eager, rtol=1e-6)
    # d/dx logpdf = pdf'/pdf: compare with a central difference in float64 via scipy-free finite differences.
    grads = jax.vmap(jax.grad(lambda v: fn(v, *params)))(x)
    h = 1e-3
    numeric = (np.asarray(fn(x + h, *params), np.float64) - np.asarray(fn(x - h, *params), np.float64)) / (2 * h)
    np.testing.assert_allclose(grads, numeric, rtol=2e-2, atol=2e-3)


def test_multivariate_normal_dirichlet_multinomial_match_scipy() -> None:
    cov = np.array([[2.0, 0.3], [0.3, 1.0]], np.float32)
    x = np.array([[0.1, -0.4], [1.0, 2.0], [-1.0, 0.5]], np.float32)
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, np.zeros(2, np.float32), cov),
                               scipy_stats.multivariate_normal.logpdf(x, np.zeros(2), cov), rtol=1e-5)
    alpha = np.array([1.5, 2.0, 3.0], np.float32)
    simplex = np.array([0.2, 0.3, 0.5], np.float32)
    np.testing.assert_allclose(stats.dirichlet.logpdf(simplex, alpha), scipy_stats.dirichlet.logpdf(simplex, alpha),
                               rtol=1e-5)
    counts, p = np.array([1, 2, 4], np.int32), np.array([0.2, 0.3, 0.5], np.float32)
    np.testing.assert_allclose(stats.multinomial.logpmf(counts, 7, p), scipy_stats.multinomial.logpmf(counts, 7, p),
                               rtol=1e-5)


def test_mode_rankdata_sem_match_scipy() -> None:
    a = np.array([[3.0, 1.0, 3.0, 2.0], [2.0, 2.0, 5.0, 2.0]], np.float32)
    result = stats.mode(a, axis=1)
    want = scipy_stats.mode(a, axis=1)
    np.testing.assert_array_equal(result.mode, want.mode)
    np.testing.assert_array_equal(result.count, want.count)
    for method in ("average", "min", "max", "dense", "ordinal"):
        np.testing.assert_array_equal(stats.rankdata(a, method), scipy_stats.rankdata(a, method))
        np.testing.assert_array_equal(stats.rankdata(a, method, axis=1), scipy_stats.rankdata(a, method, axis=1))
    assert np.isnan(np.asarray(stats.rankdata(np.array([1.0, np.nan])))).all()
    np.testing.assert_allclose(stats.sem(a, axis=1), scipy_stats.sem(a, axis=1), rtol=1e-6)
    with_nan = np.array([1.0, np.nan, 3.0, 4.0], np.float32)
    np.testing.assert_allclose(stats.sem(with_nan, nan_policy="omit"),
                               scipy_stats.sem(with_nan, nan_policy="omit"), rtol=1e-6)


def test_gaussian_kde_matches_scipy_and_is_a_pytree() -> None:
    data = np.array([[-1.0, 0.2, 0.5, 1.8, 2.2, 3.0]], np.float32)
    weights = np.array([1.0, 2.0, 1.0, 0.5, 1.0, 1.0], np.float32)
    points = np.array([-0.5, 0.0, 1.0, 2.5], np.float32)
    kde, ref = stats.gaussian_kde(data, weights=weights), scipy_stats.gaussian_kde(data, weights=weights)
    np.testing.assert_allclose(kde(points), ref(points), rtol=1e-5)
    np.testing.assert_allclose(kde.logpdf(points), ref.logpdf(points), rtol=1e-5)
    np.testing.assert_allclose(kde.integrate_box_1d(-1.0, 1.0), ref.integrate_box_1d(-1.0, 1.0), rtol=1e-5)
    np.testing.assert_allclose(kde.integrate_gaussian(0.5, 1.5), ref.integrate_gaussian(0.5, 1.5), rtol=1e-5)
    np.testing.assert_allclose(kde.integrate_kde(kde), ref.integrate_kde(ref), rtol=1e-5)
    np.testing.assert_allclose(jax.jit(lambda k, p: k.evaluate(p))(kde, points), ref(points), rtol=1e-5)
    assert kde.resample(jax.random.key(0), (5,)).shape == (1, 5)


# --- statsclean (issue 21): what typing the promoted arguments honestly brought up ---


def test_multinomial_takes_python_scalar_probabilities() -> None:
    # promote_args_inexact leaves a weak Python float a Python float (no .dtype): logpmf read p.dtype and raised
    # AttributeError; JAX broadcasts the scalar probability.
    got = stats.multinomial.logpmf(np.array([1, 2], np.int32), 3, 0.5)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, scipy_stats.multinomial.logpmf([1, 2], 3, [0.5, 0.5]), rtol=1e-6)


@pytest.mark.parametrize("cov_kind", ["matrix", "scalar", "one-dimensional"])
def test_multivariate_normal_keeps_float32_under_x64(cov_kind: str) -> None:
    # log(2 pi) was a strong NumPy float64 constant: with x64 on, float32 inputs gave float64 (JAX: float32).
    from minijax.config import enable_x64

    x = np.array([[0.1, -0.4], [1.0, 2.0]], np.float32)
    mean, cov = np.zeros(2, np.float32), np.array([[2.0, 0.3], [0.3, 1.0]], np.float32)
    if cov_kind == "scalar":
        cov = np.float32(1.5)
    elif cov_kind == "one-dimensional":
        x, mean, cov = x[:, 0], np.float32(0.0), np.float32(1.5)
    want = stats.multivariate_normal.logpdf(x, mean, cov)
    with enable_x64(True):
        got = stats.multivariate_normal.logpdf(x, mean, cov)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)
