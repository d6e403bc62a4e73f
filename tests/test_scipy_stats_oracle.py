"""``jax.scipy.stats`` against real JAX 0.10.2 (the oracle): signatures, values, dtypes, weak types, errors.

Every method of every distribution is called, under both libraries, on
hypothesis-drawn arguments that reach out of the support and into bad
parameters (zero or negative scales, probabilities past 1), and must give the
same values (float32 rounding), the same dtype and the same weak type. Run
where JAX is installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_scipy_stats_oracle.py
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy  # noqa: E402, F811
import jax.scipy.stats as jstats  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402
import minijax.random  # noqa: E402
import minijax.scipy.stats as mstats  # noqa: E402
import minijax.tree_util  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

# Argument kinds: the interval values are drawn from (a few get replaced by out-of-domain values).
KINDS: dict[str, tuple[float, float]] = {
    "x": (-4.0, 6.0),       # a point of a real-line distribution
    "pos": (0.05, 6.0),     # shape parameters (a, b, df, beta, kappa, mu, n of nbinom)
    "prob": (0.0, 1.0),     # probabilities and quantiles
    "k": (-1.0, 12.0),      # counts (rounded to integers)
    "loc": (-1.5, 1.5),
    "scale": (0.2, 3.0),
    "angle": (-1.0, 7.5),   # angles, reaching past [0, 2 pi]
    "unit": (-0.2, 1.2),    # points of [0, 1]-supported distributions
    "trunc_a": (-3.0, 0.5),
    "trunc_b": (0.0, 4.0),
}
BAD = {"pos": [0.0, -1.0], "prob": [-0.25, 1.5], "scale": [0.0, -1.0], "x": [np.nan, np.inf, -np.inf]}

LOC_SCALE = ["loc", "scale"]
# (module, method) -> the kinds of its positional arguments.
METHODS: dict[tuple[str, str], list[str]] = {}


def _add(module: str, names: str, kinds: list[str]) -> None:
    for name in names.split():
        METHODS[(module, name)] = kinds


_add("bernoulli", "logpmf pmf", ["k", "prob", "loc"])
_add("bernoulli", "cdf", ["k", "prob"])
_add("bernoulli", "ppf", ["prob", "prob"])
_add("beta", "logpdf pdf cdf logcdf sf logsf", ["unit", "pos", "pos", "loc", "scale"])
_add("betabinom", "logpmf pmf", ["k", "k", "pos", "pos", "loc"])
_add("binom", "logpmf pmf", ["k", "k", "prob", "loc"])
_add("cauchy", "logpdf pdf cdf logcdf sf logsf", ["x", *LOC_SCALE])
_add("cauchy", "ppf isf", ["prob", *LOC_SCALE])
_add("chi2", "logpdf pdf cdf logcdf sf logsf", ["x", "pos", *LOC_SCALE])
_add("expon", "logpdf pdf cdf logcdf sf logsf", ["x", *LOC_SCALE])
_add("expon", "ppf", ["prob", *LOC_SCALE])
_add("gamma", "logpdf pdf cdf logcdf sf logsf", ["x", "pos", *LOC_SCALE])
_add("gennorm", "logpdf pdf cdf", ["x", "pos"])
_add("geom", "logpmf pmf", ["k", "prob", "loc"])
for _g in ("gumbel_l", "gumbel_r"):
    _add(_g, "logpdf pdf cdf logcdf sf logsf", ["x", *LOC_SCALE])
    _add(_g, "ppf", ["prob", *LOC_SCALE])
_add("laplace", "logpdf pdf cdf", ["x", *LOC_SCALE])
_add("logistic", "logpdf pdf cdf sf", ["x", *LOC_SCALE])
_add("logistic", "ppf isf", ["prob", *LOC_SCALE])
_add("nbinom", "logpmf pmf", ["k", "pos", "prob", "loc"])
_add("norm", "logpdf pdf cdf logcdf sf logsf", ["x", *LOC_SCALE])
_add("norm", "ppf isf", ["prob", *LOC_SCALE])
_add("pareto", "logpdf pdf cdf logcdf sf logsf", ["x", "pos", *LOC_SCALE])
_add("pareto", "ppf", ["prob", "pos", *LOC_SCALE])
_add("poisson", "logpmf pmf cdf", ["k", "pos", "loc"])
_add("t", "logpdf pdf", ["x", "pos", *LOC_SCALE])
_add("truncnorm", "logpdf pdf cdf logcdf sf logsf", ["x", "trunc_a", "trunc_b", *LOC_SCALE])
_add("uniform", "logpdf pdf cdf", ["x", *LOC_SCALE])
_add("uniform", "ppf", ["prob", *LOC_SCALE])
_add("vonmises", "logpdf pdf", ["angle", "pos"])
_add("wrapcauchy", "logpdf pdf", ["angle", "prob"])

# Functions whose float32 values go through long series (incomplete gamma/beta, lgamma differences):
# compared a little more loosely.
LOOSE = {"beta", "betabinom", "binom", "chi2", "gamma", "gennorm", "nbinom", "poisson", "truncnorm", "t"}


def _function_names(module: Any) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_") and inspect.isfunction(getattr(module, n))
                  and getattr(module, n).__module__.startswith("jax._src.scipy.stats"))


def test_every_method_of_every_distribution_is_here_and_tested() -> None:
    for name in jstats.__all__ if hasattr(jstats, "__all__") else dir(jstats):
        if name.startswith("_"):
            continue
        assert hasattr(mstats, name), name
        module = getattr(jstats, name)
        if inspect.ismodule(module):
            for fn in _function_names(module):
                assert hasattr(getattr(mstats, name), fn), f"{name}.{fn}"
                if (name, fn) not in METHODS:
                    assert (name, fn) in {("poisson", "entropy"), ("dirichlet", "logpdf"), ("dirichlet", "pdf"),
                                          ("multinomial", "logpmf"), ("multinomial", "pmf"),
                                          ("multivariate_normal", "logpdf"), ("multivariate_normal", "pdf")}, (name, fn)


def _all_functions() -> list[tuple[str, Any, Any]]:
    out = []
    for name in dir(jstats):
        obj = getattr(jstats, name)
        if name.startswith("_"):
            continue
        if inspect.ismodule(obj):
            out += [(f"{name}.{fn}", getattr(obj, fn), getattr(getattr(mstats, name), fn))
                    for fn in _function_names(obj)]
        elif callable(obj):
            out.append((name, obj, getattr(mstats, name)))
    return out


@pytest.mark.parametrize(("name", "jfn", "mfn"), _all_functions(), ids=[n for n, _, _ in _all_functions()])
def test_signatures_match(name: str, jfn: Any, mfn: Any) -> None:
    def shape(fn: Any) -> list[tuple[str, Any, Any]]:
        params = inspect.signature(fn).parameters.values()
        return [(p.name, p.kind, p.default) for p in params]

    assert shape(mfn) == shape(jfn), name


def _draw_args(data: st.DataObject, kinds: list[str], shape: tuple[int, ...]) -> list[np.ndarray]:
    args = []
    for kind in kinds:
        lo, hi = KINDS[kind]
        values = data.draw(st.lists(st.floats(float(np.float32(lo)), float(np.float32(hi)), width=32, allow_subnormal=False), min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape))))
        arr = np.array(values, np.float32).reshape(shape)
        if kind == "k":
            arr = np.round(arr)
        bad = BAD.get(kind)
        if bad and arr.size and data.draw(st.booleans()):
            arr.flat[data.draw(st.integers(0, arr.size - 1))] = data.draw(st.sampled_from(bad))
        args.append(arr)
    return args


def _compare(got: Any, want: Any, loose: bool, what: str) -> None:
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert bool(getattr(got, "weak_type", False)) == bool(getattr(want, "weak_type", False)), what
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    rtol, atol = (2e-4, 2e-5) if loose else (2e-5, 2e-6)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


@pytest.mark.parametrize(("module", "method"), sorted(METHODS), ids=[f"{m}.{f}" for m, f in sorted(METHODS)])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_values_dtypes_and_weak_types_match_jax(module: str, method: str, data: st.DataObject) -> None:
    kinds = METHODS[(module, method)]
    shape = data.draw(st.sampled_from([(), (5,), (2, 3)]))
    # Trailing defaulted arguments (loc, scale) are left out now and then: the defaults must agree too.
    n_args = data.draw(st.integers(min(len(kinds), _required(module, method)), len(kinds)))
    args = _draw_args(data, kinds[:n_args], shape)
    want = getattr(getattr(jstats, module), method)(*args)
    got = getattr(getattr(mstats, module), method)(*args)
    _compare(got, want, module in LOOSE, f"{module}.{method}{tuple(a.tolist() for a in args)}")


def _required(module: str, method: str) -> int:
    params = inspect.signature(getattr(getattr(jstats, module), method)).parameters.values()
    return sum(p.default is inspect.Parameter.empty for p in params)


@pytest.mark.parametrize(("module", "method"), sorted(METHODS), ids=[f"{m}.{f}" for m, f in sorted(METHODS)])
def test_python_scalars_and_integers_promote_as_in_jax(module: str, method: str) -> None:
    # Python floats stay weakly typed where JAX's do; integer arrays become float32.
    kinds = METHODS[(module, method)]
    scalars = [float(np.round((KINDS[k][0] + KINDS[k][1]) / 2)) if k == "k" else (KINDS[k][0] + 2 * KINDS[k][1]) / 3
               for k in kinds]
    for args in (scalars, [np.array(int(s)) if i == 0 else s for i, s in enumerate(scalars)]):
        try:
            want = getattr(getattr(jstats, module), method)(*args)
        except TypeError as error:  # norm.ppf/isf: ndtri takes float inputs only
            with pytest.raises(TypeError, match=str(error).split()[0]):
                getattr(getattr(mstats, module), method)(*args)
            continue
        got = getattr(getattr(mstats, module), method)(*args)
        _compare(got, want, module in LOOSE, f"{module}.{method}{args}")


def _both(fn: Any) -> tuple[Any, Any]:
    """``fn(stats_module, numpy_module)`` under minijax and under JAX."""
    return fn(mstats, minijax.numpy), fn(jstats, jax.numpy)


def _close(got: Any, want: Any, rtol: float = 2e-5, atol: float = 2e-6) -> None:
    got_leaves, want_leaves = minijax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w), (g, w)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_multivariate_normal_over_shapes_and_covariance_forms(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 4))
    batch = data.draw(st.sampled_from([(), (3,), (2, 3)]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.normal(size=(*batch, n)).astype(np.float32)
    mean = rng.normal(size=(n,)).astype(np.float32)
    a = rng.normal(size=(n, n)).astype(np.float32)
    form = data.draw(st.sampled_from(["matrix", "scalar", "batched", "univariate"]))
    if form == "matrix":
        cov: Any = a @ a.T + n * np.eye(n, dtype=np.float32)
    elif form == "scalar":
        cov = np.float32(1.7)
    elif form == "batched":
        cov = np.broadcast_to(a @ a.T + n * np.eye(n, dtype=np.float32), (*batch, n, n)).copy()
    else:
        x, mean, cov = x[..., 0], np.float32(0.3), np.float32(2.0)
    for method in ("logpdf", "pdf"):
        got, want = _both(lambda s, _, method=method: getattr(s.multivariate_normal, method)(x, mean, cov))
        _close(got, want, rtol=1e-4, atol=1e-5)


def test_multivariate_normal_errors_as_jax() -> None:
    for args in [(np.ones(3), np.zeros(3), np.ones((2, 2))), (np.ones(3), np.zeros(3), np.ones(3))]:
        with pytest.raises(ValueError, match="incompatible shapes"):
            jstats.multivariate_normal.logpdf(*args)
        with pytest.raises(ValueError, match="incompatible shapes"):
            mstats.multivariate_normal.logpdf(*args)
    with pytest.raises(NotImplementedError, match="allow_singular"):
        mstats.multivariate_normal.logpdf(np.ones(2), np.zeros(2), np.eye(2), allow_singular=True)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_dirichlet_and_multinomial(data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    k = data.draw(st.integers(2, 5))
    alpha = rng.uniform(0.3, 4, size=k).astype(np.float32)
    x = rng.dirichlet(np.ones(k), size=data.draw(st.sampled_from([(), (4,)]))).astype(np.float32)
    x = np.moveaxis(x, -1, 0)
    if data.draw(st.booleans()):
        x = x[:-1]  # the last component left out: 1 - sum
    if data.draw(st.booleans()):
        x = x * 1.5  # off the simplex: -inf
    for method in ("logpdf", "pdf"):
        got, want = _both(lambda s, _, method=method: getattr(s.dirichlet, method)(x, alpha))
        _close(got, want, rtol=1e-4, atol=1e-5)
    p = rng.dirichlet(np.ones(k)).astype(np.float32)
    counts = rng.multinomial(7, p, size=data.draw(st.sampled_from([(), (3,)]))).astype(np.int32)
    n = np.int32(7 if data.draw(st.booleans()) else 6)
    for method in ("logpmf", "pmf"):
        got, want = _both(lambda s, _, method=method: getattr(s.multinomial, method)(counts, n, p))
        _close(got, want, rtol=1e-4, atol=1e-5)


def test_dirichlet_and_multinomial_errors_as_jax() -> None:
    cases = [
        (lambda s: s.dirichlet.logpdf(np.ones((2, 2)) / 2, np.ones((2, 2))), ValueError, "one-dimensional"),
        (lambda s: s.dirichlet.logpdf(np.ones(5) / 5, np.ones(3)), ValueError, "one entry fewer"),
        (lambda s: s.multinomial.logpmf(np.ones(3, np.float32), 3, np.ones(3) / 3), ValueError, "integer type"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call(jstats)
        with pytest.raises(error, match=message):
            call(mstats)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_mode_rankdata_sem(data: st.DataObject) -> None:
    shape = data.draw(st.sampled_from([(7,), (3, 4), (2, 3, 2)]))
    values = np.array(data.draw(st.lists(st.integers(0, 3), min_size=int(np.prod(shape)),
                                         max_size=int(np.prod(shape)))), np.float32).reshape(shape)
    if data.draw(st.booleans()):
        values.flat[0] = np.nan
    axis = data.draw(st.sampled_from([None, 0, -1]))
    keepdims = data.draw(st.booleans())
    got, want = _both(lambda s, _: s.mode(values, axis=axis, keepdims=keepdims))
    _close(got, want)
    method = data.draw(st.sampled_from(["average", "min", "max", "dense", "ordinal"]))
    got, want = _both(lambda s, _: s.rankdata(values, method, axis=axis))
    _close(got, want)
    ddof = data.draw(st.integers(0, 1))
    policy = data.draw(st.sampled_from(["propagate", "omit"]))
    got, want = _both(lambda s, _: s.sem(values, axis=axis, ddof=ddof, nan_policy=policy, keepdims=keepdims))
    _close(got, want, rtol=1e-5, atol=1e-6)


def test_mode_rankdata_sem_errors_as_jax() -> None:
    cases = [
        (lambda s: s.mode(np.ones(3), nan_policy="nope"), ValueError, "Illegal nan_policy"),
        (lambda s: s.mode(np.ones(3), nan_policy="omit"), NotImplementedError, "not implemented"),
        (lambda s: s.rankdata(np.ones(3), nan_policy="raise"), NotImplementedError, "cannot know"),
        (lambda s: s.rankdata(np.ones(3), method="first"), ValueError, "unknown method 'first'"),
        (lambda s: s.sem(np.ones(3), nan_policy="raise"), ValueError, "raise is not supported"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call(jstats)
        with pytest.raises(error, match=message):
            call(mstats)


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_gaussian_kde(data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    d = data.draw(st.integers(1, 3))
    n = data.draw(st.integers(4, 12))
    dataset = rng.normal(size=(d, n)).astype(np.float32)
    weights = rng.uniform(0.5, 2, size=n).astype(np.float32) if data.draw(st.booleans()) else None
    bw = data.draw(st.sampled_from([None, "scott", "silverman", 0.4, "callable"]))
    bw_method: Any = (lambda kde: 0.5 * kde.neff ** (-1.0 / (kde.d + 4))) if bw == "callable" else bw
    points = rng.normal(size=(d, 5)).astype(np.float32)
    kdes = _both(lambda s, _: s.gaussian_kde(dataset, bw_method=bw_method, weights=weights))
    for field in ("neff", "dataset", "weights", "covariance", "inv_cov"):
        _close(getattr(kdes[0], field), getattr(kdes[1], field), rtol=1e-4, atol=1e-5)
    for method in ("evaluate", "__call__", "pdf", "logpdf"):
        _close(getattr(kdes[0], method)(points), getattr(kdes[1], method)(points), rtol=1e-4, atol=1e-6)
    mean, cov = rng.normal(size=d).astype(np.float32), np.eye(d, dtype=np.float32) * 0.7
    _close(kdes[0].integrate_gaussian(mean, cov), kdes[1].integrate_gaussian(mean, cov), rtol=1e-4, atol=1e-6)
    other = (mstats.gaussian_kde(dataset[:, : n - 1] + 0.5), jstats.gaussian_kde(dataset[:, : n - 1] + 0.5))
    _close(kdes[0].integrate_kde(other[0]), kdes[1].integrate_kde(other[1]), rtol=1e-4, atol=1e-6)
    if d == 1:
        _close(kdes[0].integrate_box_1d(-0.5, 1.0), kdes[1].integrate_box_1d(-0.5, 1.0), rtol=1e-4, atol=1e-6)
    got = kdes[0].resample(minijax.random.key(3), (4,))
    want = kdes[1].resample(jax.random.key(3), (4,))
    assert got.shape == want.shape == (d, 4) and got.dtype == want.dtype


def test_gaussian_kde_errors_as_jax() -> None:
    data = np.arange(6, dtype=np.float32).reshape(2, 3) ** 1.5
    cases = [
        (lambda s: s.gaussian_kde(np.ones(1)), ValueError, "multiple elements"),
        (lambda s: s.gaussian_kde(data, bw_method="nope"), ValueError, "`bw_method` should be"),
        (lambda s: s.gaussian_kde(data, weights=np.ones(4)), ValueError, "of length n"),
        (lambda s: s.gaussian_kde(data).evaluate(np.ones((3, 2))), ValueError, "points have dimension 3"),
        (lambda s: s.gaussian_kde(data).integrate_box_1d(0.0, 1.0), ValueError, "only handles 1D"),
        (lambda s: s.gaussian_kde(data).integrate_box(0.0, 1.0), NotImplementedError, "integrate_box_1d"),
        (lambda s: s.gaussian_kde(data).set_bandwidth(), NotImplementedError, "bandwidth"),
        (lambda s: s.gaussian_kde(data).integrate_gaussian(np.zeros(3), np.eye(2)), ValueError, "dimension 2"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call(jstats)
        with pytest.raises(error, match=message):
            call(mstats)


@settings(max_examples=10, deadline=None)
@given(mu=st.lists(st.sampled_from([0.0, 0.3, 2.5, 9.9, 10.0, 42.0, 99.0, 150.0, 1e4]), min_size=1, max_size=6))
def test_poisson_entropy(mu: list[float]) -> None:
    arr = np.array(mu, np.float32)
    got, want = _both(lambda s, _: s.poisson.entropy(arr, np.zeros((2, 1), np.float32)))
    _close(got, want, rtol=1e-4, atol=1e-5)
