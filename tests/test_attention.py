"""jax.nn.dot_product_attention on both backends against a direct NumPy
reference (loops over heads, explicit masks), under jit, grad and vmap; and the
block-scaled matmul API's CPU behaviour (JAX's errors)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax import nn


def _reference(q: Any, k: Any, v: Any, keep: Any, scale: float) -> Any:
    """Attention for (B, T, N, H) queries over (B, S, K, H) keys, one head at a time; keep: (B, N, T, S)."""
    b, t, n, h = q.shape
    groups = n // k.shape[2]
    out = np.zeros_like(q, dtype=np.float64)
    for bi in range(b):
        for ni in range(n):
            logits = scale * q[bi, :, ni] @ k[bi, :, ni // groups].T
            logits = np.where(keep[bi, ni], logits, -0.7 * np.finfo(np.float32).max)
            p = np.exp(logits - logits.max(-1, keepdims=True))
            out[bi, :, ni] = (p / p.sum(-1, keepdims=True)) @ v[bi, :, ni // groups]
    return out


RNG = np.random.default_rng(0)
Q = RNG.normal(size=(2, 4, 4, 8)).astype(np.float32)
K = RNG.normal(size=(2, 5, 2, 8)).astype(np.float32)
V = RNG.normal(size=(2, 5, 2, 8)).astype(np.float32)


def test_plain_and_masked(backend_name: str) -> None:
    keep = np.ones((2, 4, 4, 5), bool)
    got = nn.dot_product_attention(Q, K, V)
    np.testing.assert_allclose(np.asarray(got), _reference(Q, K, V, keep, 1 / np.sqrt(8)), rtol=1e-5, atol=1e-5)
    mask = RNG.uniform(size=(2, 1, 4, 5)) > 0.4
    mask[..., 0] = True
    t, s = np.arange(4)[:, None], np.arange(5)[None, :]
    causal, window = t >= s, (t <= s + 1) & (t >= s - 0)
    want = _reference(Q, K, V, np.broadcast_to(mask & causal & window, keep.shape), 0.25)
    got = nn.dot_product_attention(Q, K, V, mask=mask, scale=0.25, is_causal=True, local_window_size=(1, 0))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_padding_lengths_and_residual(backend_name: str) -> None:
    q_len, kv_len = np.array([2, 4], np.int32), np.array([3, 1], np.int32)
    keep = (np.arange(4)[None, :, None] < q_len[:, None, None]) & (np.arange(5)[None, None, :] < kv_len[:, None, None])
    want = _reference(Q, K, V, np.broadcast_to(keep[:, None], (2, 4, 4, 5)), 1 / np.sqrt(8))
    want[0, 2:] = 0.0  # padded queries give zeros
    out, lse = nn.dot_product_attention(
        Q, K, V, query_seq_lengths=q_len, key_value_seq_lengths=kv_len, return_residual=True
    )
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)
    assert lse.shape == (2, 4, 4)
    logits = np.einsum("tnh,snh->nts", Q[1], np.repeat(K[1], 2, axis=1)) / np.sqrt(8)
    want_lse = np.log(np.exp(logits[:, :, :1]).sum(-1)).T
    np.testing.assert_allclose(np.asarray(lse[1]), want_lse, rtol=1e-5, atol=1e-5)


def test_jit_grad_vmap_and_bias(backend_name: str) -> None:
    bias = RNG.normal(size=(1, 4, 4, 5)).astype(np.float32)

    def f(q: minijax.Array) -> minijax.Array:
        return nn.dot_product_attention(q, K, V, bias)

    eager = np.asarray(f(jnp.asarray(Q)))
    np.testing.assert_allclose(np.asarray(minijax.jit(f)(Q)), eager, rtol=1e-5, atol=1e-6)
    batched = minijax.vmap(lambda q: nn.dot_product_attention(q, K[0], V[0]))(Q)
    np.testing.assert_allclose(
        np.asarray(batched[1]), np.asarray(nn.dot_product_attention(Q[1], K[0], V[0])), rtol=1e-5, atol=1e-6
    )
    g = minijax.grad(lambda q: f(q).sum())(jnp.asarray(Q))
    eps = 1e-2
    bumped = Q.copy()
    bumped[0, 1, 2, 3] += eps
    numeric = (np.asarray(f(jnp.asarray(bumped))).sum() - eager.sum()) / eps
    assert abs(float(g[0, 1, 2, 3]) - numeric) < 2e-2


def test_errors_and_block_scaled_api(backend_name: str) -> None:
    with pytest.raises(RuntimeError, match="cuDNN is not detected"):
        nn.dot_product_attention(Q, K, V, implementation="cudnn")
    with pytest.raises(ValueError, match="Unsupported implementation option"):
        nn.dot_product_attention(Q, K, V, implementation="flash")
    with pytest.raises(ValueError, match="must be a multiple of key/value heads"):
        nn.dot_product_attention(Q[:, :, :3], K, V)
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        nn.dot_product_attention(Q, K, V, mask=jnp.ones((1, 1, 4, 5)))
    with pytest.raises(NotImplementedError, match="not found for platform cpu"):
        nn.scaled_matmul(jnp.ones((1, 4, 64)), jnp.ones((1, 4, 64)), jnp.ones((1, 4, 2)), jnp.ones((1, 4, 2)))
    with pytest.raises(ValueError, match="3-dimensional"):
        nn.scaled_matmul(jnp.ones((4, 64)), jnp.ones((1, 4, 64)), jnp.ones((1, 4, 2)), jnp.ones((1, 4, 2)))
    config = nn.get_scaled_dot_general_config("mxfp8")
    assert (config.block_size, config.mode) == (32, "mxfp8")
    with pytest.raises(NotImplementedError):
        nn.scaled_dot_general(jnp.ones((4, 64)), jnp.ones((64, 8)), (((1,), (0,)), ((), ())), configs=[config] * 3)
    out = nn.scaled_dot_general(jnp.ones((2, 3)), jnp.ones((3, 4)), (((1,), (0,)), ((), ())))
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 4), 3.0))
