"""The samplers of issue 21 (ball, binomial, f, generalized_normal, multinomial,
orthogonal) on both backends: their defining properties, and the same values
eagerly, under jit and under vmap. Bit-exactness against JAX is in
tests/test_random_more_oracle.py."""

from __future__ import annotations

import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax import random


def test_ball_points_lie_in_the_lp_ball(backend_name: str) -> None:
    for p in (1.0, 2.0, 3.5):
        x = np.asarray(random.ball(random.key(1), 3, p, (50,)))
        assert x.shape == (50, 3) and x.dtype == np.float32
        assert (np.sum(np.abs(x) ** p, -1) <= 1 + 1e-5).all()


def test_orthogonal_is_orthogonal(backend_name: str) -> None:
    q = np.asarray(random.orthogonal(random.key(2), 4, (3,)))
    assert q.shape == (3, 4, 4)
    np.testing.assert_allclose(q @ q.transpose(0, 2, 1), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-5)
    wide = np.asarray(random.orthogonal(random.key(2), 2, m=5))
    assert wide.shape == (2, 5)
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-5)


def test_binomial_counts(backend_name: str) -> None:
    n = jnp.array([0.0, 4.0, 30.0, 500.0])
    p = jnp.array([[0.2], [0.9]])
    x = np.asarray(random.binomial(random.key(3), n, p))
    assert x.shape == (2, 4) and x.dtype == np.float32
    assert (x == np.floor(x)).all() and (x >= 0).all() and (x <= np.asarray(n)).all()
    assert x[:, 0].tolist() == [0.0, 0.0]
    # The mean of many draws is n p (a loose check: 400 draws).
    many = np.asarray(random.binomial(random.key(4), 200.0, 0.3, (400,)))
    assert abs(many.mean() - 60.0) < 3.0
    odd = np.asarray(random.binomial(random.key(3), jnp.array([-1.0, np.inf, 5.0]), jnp.array([0.5, 0.5, np.nan])))
    assert np.isnan(odd[0]) and odd[1] == np.inf and np.isnan(odd[2])


def test_multinomial_counts_sum_to_n(backend_name: str) -> None:
    p = jnp.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    x = np.asarray(random.multinomial(random.key(5), jnp.array([40.0, 9.0]), p))
    assert x.shape == (2, 3)
    np.testing.assert_array_equal(x.sum(-1), [40.0, 9.0])
    assert x[1, 1] == 0.0
    assert random.multinomial(random.key(5), 3.0, p[0], shape=(4, 3)).shape == (4, 3)


def test_f_and_generalized_normal(backend_name: str) -> None:
    x = np.asarray(random.f(random.key(6), 4.0, 6.0, (200,)))
    assert (x > 0).all() and 0.5 < np.median(x) < 2.0
    g = random.generalized_normal(random.key(7), 2.0, (2, 3), jnp.float16)
    assert g.dtype == np.float16 and g.shape == (2, 3)


def test_vmap_gives_the_one_key_values(backend_name: str) -> None:
    def sample(k: minijax.Array) -> minijax.Array:
        return jnp.concatenate(
            [
                random.binomial(k, 25.0, 0.4, (2,)),
                random.orthogonal(k, 2).ravel(),
                random.multinomial(k, 10.0, jnp.array([0.5, 0.5])),
            ]
        )

    keys = random.split(random.key(8), 3)
    # The samplers with their own loops (the gamma-based ones go through random_gamma's batching rule,
    # tested in tests/test_random.py). One key at a time (jitted once: eager calls would compile every sampler's loop separately).
    one = minijax.jit(sample)
    eager = np.stack([np.asarray(one(keys[i])) for i in range(3)])
    np.testing.assert_allclose(np.asarray(minijax.jit(minijax.vmap(sample))(keys)), eager, rtol=1e-5, atol=1e-6)


def test_errors(backend_name: str) -> None:
    with pytest.raises(ValueError, match="dtype argument to `binomial` must be a float dtype"):
        random.binomial(random.key(0), 3.0, 0.5, dtype=jnp.int32)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        random.f(random.key(0), jnp.ones(3), 2.0, (2,))
    with pytest.raises(TypeError):
        random.ball(random.key(0), 2.5)
