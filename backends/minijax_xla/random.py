"""Lowering rules: threefry2x32 and the key primitives (``spec/primitives/random.md``).

The hash is emitted as StableHLO integer ops computing the words the NumPy
reference (``backends/minijax_numpy/random.py``) computes, in the loop form
JAX emits on CPU (see ``threefry2x32_hlo``). Keys are their physical
uint64 elements (``minijax.prng``): ``_words`` splits them into the two uint32
key words and ``_pack`` joins two words back into keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from minijax.core import ShapedArray, shape_size
from minijax.random import random_gamma_jaxpr
from minijax_xla import jaxlib_api
from minijax_xla.jaxlib_api import tensor_type
from minijax_xla.lowering import LoweringRuleContext, constant, emit_jaxpr, register

Value = Any  # an ir.Value

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_SCHEDULE_PARITY = 0x1BD11BDA


def _full(value: int, dtype: np.dtype[Any], shape: Sequence[int]) -> Value:
    """A constant of ``dtype`` broadcast to ``shape``."""
    scalar = constant(value, dtype)
    if not shape:
        return scalar
    return hlo.broadcast_in_dim(tensor_type(shape, dtype), scalar, [])


def _broadcast(x: Value, from_shape: Sequence[int], dims: Sequence[int], shape: Sequence[int], dtype: np.dtype[Any]) -> Value:
    """``x`` (of ``from_shape``) placed on result axes ``dims`` of ``shape``."""
    if tuple(from_shape) == tuple(shape):
        return x
    return hlo.broadcast_in_dim(tensor_type(shape, dtype), x, list(dims))


def threefry2x32_hlo(
    k1: Value, k2: Value, key_shape: Sequence[int], key_dims: Sequence[int], x1: Value, x2: Value, shape: Sequence[int]
) -> tuple[Value, Value]:
    """The Threefry-2x32 hash of the uint32 counter words ``x1``, ``x2`` (of ``shape``)
    under the key words ``k1``, ``k2`` (of ``key_shape``, on axes ``key_dims`` of ``shape``).

    Emitted as JAX emits it on CPU: the initial key injection, then a
    ``stablehlo.while`` of five iterations, each four rounds and one key
    injection, with the key schedule and the two rotation lists rotating by
    one place per iteration (the keys stay at their own, usually scalar,
    shape in the loop). The loop is not only JAX's choice: XLA never fuses a
    loop's results with what consumes them, so the float arithmetic after the
    hash (``u * (max - min) + min``, sums, norms) is fused and contracted into
    multiply-adds exactly as in JAX's program, and its results are JAX's bit
    for bit. (An unrolled hash fused with its consumers is faster, but rounds
    some of them differently.)
    """
    u32 = tensor_type(shape, _U32)
    k_type = tensor_type(key_shape, _U32)
    rot_type = tensor_type([4], _U32)
    i32 = tensor_type([], np.dtype(np.int32))

    def spread(k: Value) -> Value:
        return _broadcast(k, key_shape, key_dims, shape, _U32)

    ks = (k1, k2, hlo.xor(hlo.xor(k1, k2), _full(_SCHEDULE_PARITY, _U32, key_shape)))
    x1 = hlo.add(x1, spread(ks[0]))
    x2 = hlo.add(x2, spread(ks[1]))
    rotations = [constant(np.array(r, np.uint32), _U32) for r in _ROTATIONS]
    # carry: (i, x1, x2, the key schedule rotated by one, the rotation lists)
    init = [constant(0, np.dtype(np.int32)), x1, x2, ks[1], ks[2], ks[0], *rotations]
    types = [i32, u32, u32, k_type, k_type, k_type, rot_type, rot_type]
    loop = hlo.WhileOp(types, init)

    cond = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(cond):
        five = constant(5, np.dtype(np.int32))
        hlo.return_([hlo.compare(cond.arguments[0], five, hlo.ComparisonDirectionAttr.get("LT"))])

    body = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(body):
        i, y1, y2, ka, kb, kc, r0, r1 = body.arguments
        for j in range(4):
            amount = hlo.reshape(tensor_type([], _U32), hlo.slice(r0, [j], [j + 1], [1]))
            r = _broadcast(amount, (), (), shape, _U32)
            left = hlo.subtract(_full(32, _U32, shape), r)
            y1 = hlo.add(y1, y2)
            y2 = hlo.xor(y1, hlo.or_(hlo.shift_left(y2, r), hlo.shift_right_logical(y2, left)))
        step = hlo.add(i, constant(1, np.dtype(np.int32)))
        y1 = hlo.add(y1, spread(ka))
        count = _broadcast(hlo.convert(tensor_type([], _U32), step), (), (), shape, _U32)
        y2 = hlo.add(hlo.add(y2, spread(kb)), count)
        hlo.return_([step, y1, y2, kb, kc, ka, r1, r0])
    return loop.results[1], loop.results[2]


# --- key results -------------------------------------------------------------------------
#
def _at_shape(x: Value, aval: ShapedArray, shape: Sequence[int]) -> Value:
    """An operand of the lax broadcasting rule (rank 0, or the result's rank
    with size-1 axes) broadcast to ``shape``."""
    if aval.shape == tuple(shape):
        return x
    if not aval.ndim:
        return _broadcast(x, (), (), shape, aval.dtype)
    kept = [i for i, n in enumerate(aval.shape) if n != 1]
    kept_shape = [aval.shape[i] for i in kept]
    return _broadcast(hlo.reshape(tensor_type(kept_shape, aval.dtype), x), kept_shape, kept, shape, aval.dtype)


@register("threefry2x32")
def _threefry2x32(ctx: LoweringRuleContext, k1: Value, k2: Value, x1: Value, x2: Value) -> list[Value]:
    shape = ctx.avals_out[0].shape
    k1, k2, x1, x2 = (_at_shape(x, aval, shape) for x, aval in zip((k1, k2, x1, x2), ctx.avals_in))
    return list(threefry2x32_hlo(k1, k2, shape, range(len(shape)), x1, x2, shape))


# --- keys <-> words ---------------------------------------------------------------------


def _words(keys: Value, shape: Sequence[int]) -> tuple[Value, Value]:
    """Physical keys (uint64) -> (word 0, word 1) as uint32 tensors of the same shape."""
    u32 = tensor_type(shape, _U32)
    hi = hlo.convert(u32, hlo.shift_right_logical(keys, _full(32, _U64, shape)))
    return hi, hlo.convert(u32, keys)  # convert keeps the low 32 bits


def _pack(hi: Value, lo: Value, shape: Sequence[int]) -> Value:
    u64 = tensor_type(shape, _U64)
    return hlo.or_(hlo.shift_left(hlo.convert(u64, hi), _full(32, _U64, shape)), hlo.convert(u64, lo))


def _counters(shape: Sequence[int]) -> tuple[Value, Value]:
    """The row-major index of each element of ``shape`` as (high, low) uint32 words."""
    size = shape_size(shape)
    if not shape:
        return _full(0, _U32, ()), _full(0, _U32, ())
    if size <= 2**32:
        flat = hlo.iota(tensor_type([size], _U32), 0)
        return _full(0, _U32, shape), hlo.reshape(tensor_type(shape, _U32), flat)
    flat64 = hlo.reshape(tensor_type(shape, _U64), hlo.iota(tensor_type([size], _U64), 0))
    hi, lo = _words(flat64, shape)
    return hi, lo


def _hash_counters(keys: Value, keys_shape: Sequence[int], shape: Sequence[int]) -> tuple[Value, Value]:
    """Each key hashed with the counters of ``shape``: two uint32 tensors of shape keys_shape + shape."""
    out = (*keys_shape, *shape)
    k1, k2 = _words(keys, keys_shape)
    key_dims = range(len(keys_shape))
    count_dims = range(len(keys_shape), len(out))
    hi, lo = _counters(shape)
    return threefry2x32_hlo(
        k1, k2, keys_shape, key_dims,
        _broadcast(hi, shape, count_dims, out, _U32),
        _broadcast(lo, shape, count_dims, out, _U32),
        out,
    )  # fmt: skip


@register("random_seed")
def _random_seed(ctx: LoweringRuleContext, seeds: Value, *, impl: Any) -> list[Value]:
    (aval,) = ctx.avals_in
    shape = aval.shape
    # A 64-bit seed's bits are the key's (word 0 = bits 32..63, word 1 = bits
    # 0..31); a narrower seed is sign- or zero-extended and keeps word 0 zero.
    if aval.dtype.kind == "i" and aval.dtype.itemsize < 8:
        seeds = hlo.convert(tensor_type(shape, np.dtype(np.int64)), seeds)
    wide = hlo.convert(tensor_type(shape, _U64), seeds)
    if aval.dtype.itemsize == 8:
        return [wide]
    return [hlo.and_(wide, _full(0xFFFFFFFF, _U64, shape))]


@register("random_bits")
def _random_bits(ctx: LoweringRuleContext, keys: Value, *, bit_width: int, shape: Any) -> list[Value]:
    keys_shape = ctx.avals_in[0].shape
    out_shape = ctx.avals_out[0].shape
    bits1, bits2 = _hash_counters(keys, keys_shape, tuple(shape))
    if bit_width == 64:
        return [_pack(bits1, bits2, out_shape)]
    bits = hlo.xor(bits1, bits2)
    if bit_width != 32:
        bits = hlo.convert(tensor_type(out_shape, ctx.avals_out[0].dtype), bits)
    return [bits]


@register("random_split")
def _random_split(ctx: LoweringRuleContext, keys: Value, *, shape: Any) -> list[Value]:
    bits1, bits2 = _hash_counters(keys, ctx.avals_in[0].shape, tuple(shape))
    return [_pack(bits1, bits2, ctx.avals_out[0].shape)]


@register("random_fold_in")
def _random_fold_in(ctx: LoweringRuleContext, keys: Value, msgs: Value) -> list[Value]:
    keys_aval, msgs_aval = ctx.avals_in
    shape = ctx.avals_out[0].shape
    keys = _at_shape(keys, keys_aval, shape)
    msgs = _at_shape(msgs, msgs_aval, shape)
    k1, k2 = _words(keys, shape)
    # The data is hashed as the 64-bit counter (0, msg).
    out1, out2 = threefry2x32_hlo(k1, k2, shape, range(len(shape)), _full(0, _U32, shape), msgs, shape)
    return [_pack(out1, out2, shape)]


@register("random_wrap")
def _random_wrap(ctx: LoweringRuleContext, data: Value, *, impl: Any) -> list[Value]:
    shape = ctx.avals_out[0].shape
    n = len(shape)

    def word(i: int) -> Value:
        column = hlo.slice(data, [0] * n + [i], [*shape, i + 1], [1] * (n + 1))
        return hlo.reshape(tensor_type(shape, _U32), column)

    return [_pack(word(0), word(1), shape)]


@register("random_unwrap")
def _random_unwrap(ctx: LoweringRuleContext, keys: Value) -> list[Value]:
    shape = ctx.avals_in[0].shape
    hi, lo = _words(keys, shape)
    column = tensor_type([*shape, 1], _U32)
    parts = [hlo.reshape(column, w) for w in (hi, lo)]
    return [hlo.concatenate(parts, ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(shape)))]


@register("random_clone")
def _random_clone(ctx: LoweringRuleContext, keys: Value) -> list[Value]:
    return [keys]


@register("random_gamma")
def _random_gamma(ctx: LoweringRuleContext, key: Value, a: Value, *, log_space: bool) -> list[Value]:
    # The program of the primitive's meaning (minijax.random), emitted in place.
    closed = random_gamma_jaxpr(ctx.avals_in[0], ctx.avals_in[1], log_space)
    consts = [jaxlib_api.dense_constant(np.asarray(c, dtype=v.aval.dtype)) for v, c in zip(closed.jaxpr.constvars, closed.consts)]
    return emit_jaxpr(ctx.module_context, closed.jaxpr, consts, [key, a])
