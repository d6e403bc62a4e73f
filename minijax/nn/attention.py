"""``jax.nn.dot_product_attention`` (the ``'xla'`` implementation: plain
einsums, masks and a float32 softmax), and the block-scaled matmul API
(``scaled_matmul``, ``scaled_dot_general``, ``get_scaled_dot_general_config``).

Layouts are JAX's: ``query`` is ``(B, T, N, H)`` (batch, query length, query
heads, head size), ``key``/``value`` ``(B, S, K, H)`` with ``N`` a multiple of
``K`` (grouped-query attention: each key/value head serves ``N // K`` query
heads), ``bias``/``mask`` broadcastable to ``(B, N, T, S)``. Leading
dimensions may be dropped (``(T, N, H)``...).

The block-scaled matmuls are cuDNN kernels in JAX, with no CPU lowering: JAX
on CPU raises ``NotImplementedError`` for them after checking the shapes, and
so does minijax (which runs on CPU only). ``implementation='cudnn'`` raises
JAX's CPU error likewise.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from minijax import dtypes, lax, numpy as jnp
from minijax.nn.functions import logsumexp, softmax
from minijax.numpy.util import ArrayLike
from minijax.vectorization import vmap

__all__ = [
    # issue 21 (sciother)
    "dot_product_attention",
    "get_scaled_dot_general_config",
    "scaled_dot_general",
    "scaled_matmul",
]


def _large_negative(dtype: Any) -> Any:
    # Finite even after the cast to float32 for the softmax (a float64 max would overflow to -inf).
    biggest = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
    return jnp.asarray(-0.7 * biggest, dtype=dtype)


def _mask_logits(
    logits: Any, mask: Any, is_causal: bool, q_seqlen: Any, kv_seqlen: Any, window: tuple[int, int] | None
) -> Any:
    """``logits`` (B, N, T, S) with every masked-out entry replaced by a large negative number."""
    if mask is None and not is_causal and q_seqlen is None and kv_seqlen is None and window is None:
        return logits
    keep = jnp.ones_like(logits, dtype=bool)
    if mask is not None:
        keep = keep & mask
    t, s = logits.shape[2], logits.shape[3]
    if is_causal:
        keep = keep & jnp.tril(jnp.ones((t, s), dtype=bool))[None, None]
    if window is not None:
        left, right = window
        q_pos = jnp.arange(t)[:, None]
        k_pos = jnp.arange(s)[None, :]
        keep = keep & ((q_pos <= k_pos + left) & (q_pos >= k_pos - right))[None, None]
    if q_seqlen is not None or kv_seqlen is not None:
        valid: Any = True
        if q_seqlen is not None:
            valid = jnp.arange(t)[None, :, None] < q_seqlen[:, None, None]
        if kv_seqlen is not None:
            valid = jnp.logical_and(valid, jnp.arange(s)[None, None, :] < kv_seqlen[:, None, None])
        keep = keep & jnp.asarray(valid)[:, None, :, :]
    return jnp.where(keep, logits, _large_negative(logits.dtype))


def _attention_core(
    query: Any,
    key: Any,
    value: Any,
    bias: Any,
    mask: Any,
    is_causal: bool,
    scale: float,
    q_seqlen: Any,
    kv_seqlen: Any,
    window: tuple[int, int] | None,
    return_residual: bool,
) -> Any:
    """Attention of query (B, T, N, H) over key/value (B, S, N, H): one head group."""
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    logits = _mask_logits(logits, mask, is_causal, q_seqlen, kv_seqlen, window)
    # The softmax is always computed in float32.
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
    if q_seqlen is not None:
        # Padding queries attend to nothing: their outputs are zeroed.
        rows = jnp.arange(encoded.shape[1])[None, :] < q_seqlen[:, None]
        encoded = encoded * rows[:, :, None, None].astype(encoded.dtype)
    if return_residual:
        lse = logsumexp(logits, axis=-1).astype(key.dtype)
        return encoded, lax.stop_gradient(jnp.transpose(lse, (0, 2, 1)))
    return encoded


def _attention_xla(
    query: Any,
    key: Any,
    value: Any,
    bias: Any,
    mask: Any,
    is_causal: bool,
    scale: float,
    q_seqlen: Any,
    kv_seqlen: Any,
    window: tuple[int, int] | None,
    return_residual: bool,
) -> Any:
    b, t, n, h = query.shape
    k = key.shape[2]
    g = n // k
    # Query heads split as (K, G): vmap over G shares each key/value head among its G query heads.
    query = jnp.reshape(query, (b, t, k, g, h))

    def grouped(x: Any) -> Any:
        if x is None:
            return None
        xb, xn, xt, xs = x.shape
        if xn == 1:
            return jnp.broadcast_to(x[:, :, None, :, :], (xb, xn, g, xt, xs))
        return jnp.reshape(x, (xb, k, g, xt, xs))

    out = vmap(
        _attention_core,
        in_axes=(3, None, None, 2, 2, None, None, None, None, None, None),
        out_axes=3,
    )(query, key, value, grouped(bias), grouped(mask), is_causal, scale, q_seqlen, kv_seqlen, window, return_residual)
    if return_residual:
        encoded, lse = out
        return jnp.reshape(encoded, (b, t, n, h)), jnp.reshape(lse, (b, t, n))
    return jnp.reshape(out, (b, t, n, h))


def _check(t: Any, shape: Sequence[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    if any(want != -1 and got != want for got, want in zip(t.shape, shape)):
        raise ValueError(f"{name} shape should be {list(shape)}: but got {t.shape}")


def dot_product_attention(
    query: ArrayLike,
    key: ArrayLike,
    value: ArrayLike,
    bias: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: ArrayLike | None = None,
    key_value_seq_lengths: ArrayLike | None = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
) -> Any:
    """Scaled dot-product attention ``softmax(scale * Q K^T + bias, masked) V``.

    ``mask``: boolean, True keeps; ``is_causal``: each query sees keys up to
    its own position; ``query_seq_lengths``/``key_value_seq_lengths`` (int32,
    one per batch row): padding beyond them is masked (padded queries give
    zeros); ``local_window_size=(left, right)`` (or one int for both): each
    query sees keys within that many positions. ``scale`` defaults to
    ``1 / sqrt(H)``. ``return_residual`` also returns the logsumexp of each
    query's logits, ``(B, T, N)``.
    """
    out_shape = jnp.asarray(query).shape

    def as_4d(t: Any) -> Any:
        t = jnp.asarray(t)
        missing = 4 - t.ndim
        return jnp.expand_dims(t, tuple(range(missing))) if missing > 0 else t

    q, k, v = as_4d(query), as_4d(key), as_4d(value)
    bias_arr = as_4d(bias) if bias is not None else None
    mask_arr = as_4d(mask) if mask is not None else None
    q_len = jnp.asarray(query_seq_lengths) if query_seq_lengths is not None else None
    kv_len = jnp.asarray(key_value_seq_lengths) if key_value_seq_lengths is not None else None
    window = (local_window_size, local_window_size) if isinstance(local_window_size, int) else local_window_size

    b, s, nk, h = k.shape
    _check(v, [b, s, nk, h], k.dtype, "value")
    _check(q, [b, -1, -1, h], k.dtype, "query")
    _check(mask_arr, [-1] * 4, np.dtype(bool), "mask")
    _check(bias_arr, [-1] * 4, None, "bias")
    _check(q_len, [b], np.dtype("int32"), "query_seq_lengths")
    _check(kv_len, [b], np.dtype("int32"), "key_value_seq_lengths")
    if q.shape[-2] % nk != 0:
        raise ValueError(
            f"The number of query heads must be a multiple of key/value heads, but got {q.shape[-2]} vs {nk}"
        )
    scale_val = (1.0 / np.sqrt(h)) if scale is None else scale

    if implementation == "cudnn":
        # JAX's error on a machine without cuDNN; minijax computes on CPU only.
        raise RuntimeError("cuDNN is not detected.")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out = _attention_xla(q, k, v, bias_arr, mask_arr, is_causal, scale_val, q_len, kv_len, window, return_residual)
    if return_residual:
        encoded, residual = out
        return jnp.reshape(encoded, out_shape), jnp.reshape(residual, out_shape[:-1])
    return jnp.reshape(out, out_shape)


# ---------------------------------------------------------------------------
# Block-scaled matmuls (cuDNN kernels in JAX)


@dataclasses.dataclass
class BlockScaleConfig:
    """How a block-scaled operand is quantized: blocks of ``block_size`` elements of ``data_type`` share one ``scale_type`` scale."""

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def _no_cpu_kernel() -> NotImplementedError:
    return NotImplementedError("MLIR translation rule for primitive 'scaled_matmul' not found for platform cpu")


def scaled_matmul(
    lhs: Any, rhs: Any, lhs_scales: Any, rhs_scales: Any, preferred_element_type: Any = np.float32
) -> Any:
    """``lhs (B, M, K) @ rhs (B, N, K)^T`` with per-block scales: a cuDNN kernel, so NotImplementedError on CPU after JAX's shape checks."""
    a, b, sa, sb = lhs, rhs, lhs_scales, rhs_scales
    if not all(x.ndim == 3 for x in (a, b, sa, sb)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    if a.shape[2] != b.shape[2] or a.shape[0] != b.shape[0]:
        raise ValueError(
            "scaled_matmul requires inputs a and b to have matching batch (B) and contract (K) dimensions, "
            f"but got shapes {a.shape} and {b.shape}"
        )
    if sa.shape[2] != sb.shape[2] or sa.shape[0] != sb.shape[0]:
        raise ValueError(
            "scaled_matmul requires scales to have matching batch (B) and contract (K) dimensions, "
            f"but got shapes {sa.shape} and {sb.shape}"
        )
    if sa.shape[1] != a.shape[1] or sb.shape[1] != b.shape[1]:
        raise ValueError(
            "scaled_matmul requires scales to match non-contract dimensions of inputs, but got shapes "
            f"a: {a.shape}, b: {b.shape}, a_scales: {sa.shape}, b_scales: {sb.shape}"
        )
    dtypes.check_user_dtype_supported(preferred_element_type, "scaled_matmul")
    raise _no_cpu_kernel()


def get_scaled_dot_general_config(mode: str, global_scale: Any = None) -> BlockScaleConfig:
    """The block-scale configuration of ``mode``: ``'nvfp4'`` (float4 data, float8_e4m3fn scales per 16) or ``'mxfp8'`` (float8_e4m3fn data, float8_e8m0fnu scales per 32)."""
    if mode == "nvfp4":
        return BlockScaleConfig(
            mode="nvfp4",
            block_size=16,
            data_type=ml_dtypes.float4_e2m1fn,
            scale_type=ml_dtypes.float8_e4m3fn,
            global_scale=jnp.ones((1,), dtype=np.float32) if global_scale is None else global_scale,
            infer_only=False,
        )
    if mode == "mxfp8":
        return BlockScaleConfig(
            mode="mxfp8",
            block_size=32,
            data_type=ml_dtypes.float8_e4m3fn,
            scale_type=ml_dtypes.float8_e8m0fnu,
            global_scale=None,
            infer_only=False,
        )
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_dot_general(
    lhs: Any,
    rhs: Any,
    dimension_numbers: Any,
    preferred_element_type: Any = np.float32,
    configs: list[BlockScaleConfig] | None = None,
    implementation: str | None = None,
) -> Any:
    """``lax.dot_general`` when ``configs`` is None; with block-scale ``configs`` a cuDNN kernel (NotImplementedError on CPU)."""
    if implementation is not None:
        warnings.warn(
            "Backend selector, now ignored. The system chooses the backend automatically.",
            DeprecationWarning,
            stacklevel=2,
        )
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers, preferred_element_type=preferred_element_type)
    raise _no_cpu_kernel()
