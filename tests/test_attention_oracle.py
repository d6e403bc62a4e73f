"""jax.nn.dot_product_attention, scaled_matmul, scaled_dot_general and
get_scaled_dot_general_config against real JAX 0.10.2 on CPU: values (every
mask option, grouped-query heads, dropped leading dimensions, the residual),
gradients, dtypes and errors over hypothesis-drawn shapes and options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy as jjnp  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

LIBS = {"jax": (jax, jjnp), "minijax": (minijax, mjnp)}


def _same(got: Any, want: Any, rtol: float = 1e-5) -> None:
    gl, wl = minijax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(gl) == len(wl)
    for g, w in zip(gl, wl):
        assert (g.shape, str(g.dtype)) == (w.shape, str(w.dtype))
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=rtol, atol=rtol)


@settings(max_examples=12, deadline=None)
@given(
    b=st.integers(1, 2),
    t=st.integers(1, 4),
    s=st.integers(1, 5),
    k=st.sampled_from([1, 2]),
    g=st.sampled_from([1, 2]),
    h=st.sampled_from([2, 4]),
    use_bias=st.booleans(),
    use_mask=st.booleans(),
    is_causal=st.booleans(),
    window=st.sampled_from([None, 1, (2, 0), (0, 1)]),
    lengths=st.booleans(),
    scale=st.sampled_from([None, 0.5]),
    seed=st.integers(0, 1000),
)
def test_values_and_residual(
    b: int, t: int, s: int, k: int, g: int, h: int, use_bias: bool, use_mask: bool, is_causal: bool,
    window: Any, lengths: bool, scale: float | None, seed: int,
) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    n = k * g
    q = rng.normal(size=(b, t, n, h)).astype(np.float32)
    key = rng.normal(size=(b, s, k, h)).astype(np.float32)
    value = rng.normal(size=(b, s, k, h)).astype(np.float32)
    bias = rng.normal(size=(b, 1, t, s)).astype(np.float32) if use_bias else None
    mask = rng.uniform(size=(1, n, t, s)) > 0.3 if use_mask else None
    q_len = rng.integers(1, t + 1, size=b).astype(np.int32) if lengths else None
    kv_len = rng.integers(1, s + 1, size=b).astype(np.int32) if lengths else None

    def run(lib: Any, j: Any) -> Any:
        def f(q: Any) -> Any:
            return lib.nn.dot_product_attention(
                q, key, value, bias, mask, scale=scale, is_causal=is_causal, query_seq_lengths=q_len,
                key_value_seq_lengths=kv_len, local_window_size=window, return_residual=True,
            )  # fmt: skip

        return lib.jit(f)(q)

    _same(run(minijax, mjnp), run(jax, jjnp))


def test_gradients_vmap_and_lower_ranks() -> None:
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(3, 2, 4)).astype(np.float32) for _ in range(3))

    def run(lib: Any, j: Any) -> Any:
        def loss(q: Any, k: Any, v: Any) -> Any:
            return (lib.nn.dot_product_attention(q, k, v, is_causal=True) ** 2).sum()

        return (
            lib.grad(loss, argnums=(0, 1, 2))(q, k, v),
            lib.vmap(lambda q: lib.nn.dot_product_attention(q, k, v))(j.stack([q, q * 2])),
            lib.nn.dot_product_attention(q[0], k[0], v[0]),
        )

    _same(run(minijax, mjnp), run(jax, jjnp))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision(dtype: str) -> None:
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(1, 3, 2, 4)).astype(dtype) for _ in range(3))

    def run(lib: Any, j: Any) -> Any:
        return lib.nn.dot_product_attention(q, k, v, return_residual=True)

    _same(run(minijax, mjnp), run(jax, jjnp), rtol=2e-2)


def test_block_scaled_configs_and_plain_scaled_dot_general() -> None:
    for mode in ("mxfp8", "nvfp4"):
        got, want = minijax.nn.get_scaled_dot_general_config(mode), jax.nn.get_scaled_dot_general_config(mode)
        for field in ("mode", "block_size", "data_type", "scale_type", "infer_only"):
            assert getattr(got, field) == getattr(want, field), field
        assert (got.global_scale is None) == (want.global_scale is None)
    a, b = np.ones((2, 3), np.float32), np.arange(12, dtype=np.float32).reshape(3, 4)
    dims = (((1,), (0,)), ((), ()))
    _same(minijax.nn.scaled_dot_general(a, b, dims), jax.nn.scaled_dot_general(a, b, dims))


ERRORS: list[Callable[[Any, Any], Any]] = [
    lambda n, j: n.dot_product_attention(
        j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), implementation="cudnn"
    ),
    lambda n, j: n.dot_product_attention(
        j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), implementation="x"
    ),
    lambda n, j: n.dot_product_attention(j.ones((1, 2, 3, 4)), j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4))),
    lambda n, j: n.dot_product_attention(j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), j.ones((1, 3, 2, 4))),
    lambda n, j: n.dot_product_attention(j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4), j.float16)),
    lambda n, j: n.dot_product_attention(j.ones((1, 2, 2, 3)), j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4))),
    lambda n, j: n.dot_product_attention(j.ones((2, 2, 4)), j.ones((2, 2, 4)), j.ones((2, 2, 4)), mask=j.ones((2, 2))),
    lambda n, j: n.dot_product_attention(
        j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), query_seq_lengths=j.ones(1, j.float32)
    ),
    lambda n, j: n.dot_product_attention(
        j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), j.ones((1, 2, 2, 4)), key_value_seq_lengths=j.ones(2, j.int32)
    ),
    lambda n, j: n.scaled_matmul(j.ones((1, 4, 64)), j.ones((1, 4, 64)), j.ones((1, 4, 2)), j.ones((1, 4, 2))),
    lambda n, j: n.scaled_matmul(j.ones((4, 64)), j.ones((1, 4, 64)), j.ones((1, 4, 2)), j.ones((1, 4, 2))),
    lambda n, j: n.scaled_matmul(j.ones((1, 4, 64)), j.ones((1, 4, 32)), j.ones((1, 4, 2)), j.ones((1, 4, 2))),
    lambda n, j: n.scaled_matmul(j.ones((1, 4, 64)), j.ones((1, 4, 64)), j.ones((1, 4, 2)), j.ones((1, 4, 1))),
    lambda n, j: n.scaled_matmul(j.ones((1, 4, 64)), j.ones((1, 4, 64)), j.ones((1, 3, 2)), j.ones((1, 4, 2))),
    lambda n, j: n.scaled_dot_general(
        j.ones((4, 64)),
        j.ones((64, 8)),
        (((1,), (0,)), ((), ())),
        configs=[n.get_scaled_dot_general_config("mxfp8")] * 3,
    ),
    lambda n, j: n.get_scaled_dot_general_config("fp8"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index: int) -> None:
    with pytest.raises(Exception) as want:
        ERRORS[index](jax.nn, jjnp)
    with pytest.raises(Exception) as got:
        ERRORS[index](minijax.nn, mjnp)
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    assert str(got.value) == str(want.value)
