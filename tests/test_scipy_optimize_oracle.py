"""jax.scipy.optimize.minimize against real JAX 0.10.2: the same iterates, so the
same result fields (x, success, status, fun, jac, hess_inv, nfev, njev, nit) on
standard test problems, for BFGS and the experimental L-BFGS."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy as jjnp  # noqa: E402
import jax.scipy.optimize as jopt  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402
import minijax.scipy.optimize as mopt  # noqa: E402
from minijax.config import config_context  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

LIBS = {"jax": (jax, jjnp, jopt), "minijax": (minijax, mjnp, mopt)}
METHODS = ["BFGS", "l-bfgs-experimental-do-not-rely-on-this"]


def rosenbrock(j: Any) -> Any:
    return lambda x: j.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quadratic(j: Any) -> Any:
    return lambda x, a: j.sum(a * (x - 1.5) ** 2) + 0.3 * x[0] * x[-1]


def himmelblau(j: Any) -> Any:
    return lambda x: (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


def _fields(r: Any) -> dict[str, Any]:
    return {k: None if v is None else np.asarray(v) for k, v in r._asdict().items()}


def _same(got: Any, want: Any, exact_counts: bool = True) -> None:
    g, w = _fields(got), _fields(want)
    assert list(g) == list(w) == ["x", "success", "status", "fun", "jac", "hess_inv", "nfev", "njev", "nit"]
    for k in w:
        if w[k] is None:
            assert g[k] is None, k
            continue
        assert (g[k].shape, str(g[k].dtype)) == (w[k].shape, str(w[k].dtype)), k
        if k in ("success", "status", "nfev", "njev", "nit"):
            if exact_counts:
                np.testing.assert_array_equal(g[k], w[k], err_msg=k)
        else:
            np.testing.assert_allclose(g[k], w[k], rtol=2e-3, atol=2e-3, err_msg=k)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("x64", [False, True])
def test_rosenbrock(method: str, x64: bool) -> None:
    jax.config.update("jax_enable_x64", x64)
    try:
        with config_context(jax_enable_x64=x64, minijax_backend="xla"):
            results = {}
            for name, (_lib, j, opt) in LIBS.items():
                x0 = j.array([-1.2, 1.0, 0.5, -0.3])
                results[name] = opt.minimize(rosenbrock(j), x0, method=method, options={"maxiter": 100})
            _same(results["minijax"], results["jax"])
    finally:
        jax.config.update("jax_enable_x64", False)


@settings(max_examples=6, deadline=None)
@given(
    x0=st.lists(st.floats(-4, 4, width=32), min_size=2, max_size=2),
    method=st.sampled_from(METHODS),
    problem=st.sampled_from(["quadratic", "himmelblau"]),
    maxiter=st.sampled_from([None, 3]),
)
def test_problems_under_jit(x0: list[float], method: str, problem: str, maxiter: int | None) -> None:
    options = {} if maxiter is None else {"maxiter": maxiter}
    results = {}
    for name, (lib, j, opt) in LIBS.items():
        if problem == "quadratic":
            fun, args = quadratic(j), (j.array([1.0, 3.0]),)
        else:
            fun, args = himmelblau(j), ()
        results[name] = lib.jit(
            lambda x, opt=opt, fun=fun, args=args: opt.minimize(fun, x, args, method=method, options=options)
        )(j.array(x0))
    with config_context(minijax_backend="xla"):
        _same(results["minijax"], results["jax"])


def test_vmap_over_starting_points() -> None:
    x0 = np.array([[3.0, -1.0], [0.5, 0.5], [-2.0, 4.0]], np.float32)
    results = {}
    for name, (lib, j, opt) in LIBS.items():
        results[name] = lib.vmap(lambda x, opt=opt, j=j: opt.minimize(himmelblau(j), x, method="BFGS"))(j.asarray(x0))
    _same(results["minijax"], results["jax"])


def test_errors() -> None:
    for _, j, opt in LIBS.values():
        with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
            opt.minimize(lambda x, j=j: j.sum(x), j.ones(2), method="Nelder-Mead")
        with pytest.raises(TypeError, match="args argument to jax.scipy.optimize.minimize must be a tuple"):
            opt.minimize(lambda x, a, j=j: j.sum(x), j.ones(2), [1], method="BFGS")
        with pytest.raises(TypeError):
            opt.minimize(lambda x, j=j: j.sum(x), j.ones(2), method="BFGS", options={"bogus": 1})
