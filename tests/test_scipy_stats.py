"""minijax.scipy.stats.norm: values as scipy.stats.norm's, dtypes and derivatives as JAX's."""

from __future__ import annotations

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
