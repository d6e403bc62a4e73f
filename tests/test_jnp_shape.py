"""minijax.numpy shape operations, joining/splitting, selection and products.

Property tests compare against NumPy on random shapes and dtypes: values,
the result dtype (from minijax's promotion rules, themselves checked against
JAX in test_dtypes_oracle.py) and the weak type. Errors are checked for type
and message.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import dtypes
from minijax.array import Array
from minijax.errors import ConcretizationTypeError

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.uint8, np.float16, np.float32, dtypes.bfloat16)]


def host(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -5
        return np.asarray(rng.integers(low, 10, shape)).astype(dtype)
    return np.asarray(rng.standard_normal(shape)).astype(dtype)


def dev(x: np.ndarray) -> Array:
    return jax.device_put(x)


def check(out: Any, expected: np.ndarray, dtype: Any = None, weak: bool = False) -> None:
    assert isinstance(out, Array)
    want_dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    assert out.dtype == want_dtype, (out.dtype, want_dtype)
    assert out.weak_type == weak
    assert out.shape == expected.shape, (out.shape, expected.shape)
    np.testing.assert_array_equal(np.asarray(out), expected.astype(want_dtype))


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)
dtype_st = st.sampled_from(DTYPES)
seeds = st.integers(0, 2**16)


# ---------------------------------------------------------------------------
# Queries and reshaping


def test_queries():
    x = dev(np.zeros((2, 3, 4), np.float32))
    assert (jnp.ndim(x), jnp.shape(x), jnp.size(x)) == (3, (2, 3, 4), 24)
    assert (jnp.ndim(1.0), jnp.shape(1.0), jnp.size(1.0)) == (0, (), 1)
    assert (jnp.size(x, 1), jnp.size(x, (0, 2))) == (3, 8)
    assert jnp.shape(np.zeros((5, 1))) == (5, 1)
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
        jnp.size(x, 3)


@given(shape=shapes, dtype=dtype_st, seed=seeds, data=st.data())
def test_reshape_matches_numpy(shape, dtype, seed, data):
    a = host(shape, dtype, seed)
    n = a.size
    divisors = [d for d in range(1, n + 1) if n % d == 0] or [1]
    first = data.draw(st.sampled_from(divisors))
    new = (first, n // first) if n else (0, data.draw(st.integers(0, 3)))
    if n and data.draw(st.booleans()):
        new = (new[0], -1)
    order = data.draw(st.sampled_from(["C", "F"]))
    check(jnp.reshape(dev(a), new, order=order), np.reshape(a, new, order=order))
    check(jnp.ravel(dev(a), order=order), np.ravel(a, order=order))
    check(jax.jit(lambda v: jnp.reshape(v, new))(dev(a)), np.reshape(a, new))


def test_reshape_keeps_weak_type_and_accepts_ints():
    check(jnp.reshape(2.0, (1, 1)), np.full((1, 1), 2.0, np.float32), weak=True)
    check(jnp.reshape(dev(np.arange(6, dtype=np.int32)), 6), np.arange(6, dtype=np.int32))
    same = dev(np.ones((2, 3), np.float32))
    assert jnp.reshape(same, (2, 3)) is same


@pytest.mark.parametrize(
    "shape, new, message",
    [
        ((4, 2), TypeError, r"cannot reshape array of shape \(2, 3\) \(size 6\) into shape \(4, 2\) \(size 8\)"),
        ((-1, -1), TypeError, "can only specify one unknown axis size"),
        ((-1, 4), TypeError, r"product of specified axis sizes \(4\) does not evenly divide 6"),
        ((6.0,), TypeError, "Shapes must be 1D sequences of concrete values of integer type"),
    ],
)
def test_reshape_errors(shape, new, message):
    with pytest.raises(new, match=message):
        jnp.reshape(dev(np.zeros((2, 3), np.float32)), shape)


@pytest.mark.parametrize(
    "reshape, shown",
    [
        (lambda x, n: x.reshape(n), r"\[JitTracer\(int32\[\]\)\]"),  # a lone dimension shows as a list
        (lambda x, n: x.reshape(n, 1), r"\(JitTracer\(int32\[\]\), 1\)"),
        (lambda x, n: jnp.reshape(x, [n, 1]), r"\[JitTracer\(int32\[\]\), 1\]"),
        (lambda x, n: jnp.broadcast_to(x, (n, 2, 3)), r"\(JitTracer\(int32\[\]\), 2, 3\)"),
    ],
)
def test_a_traced_dimension_is_jaxs_shape_type_error(reshape, shown):
    # JAX's tracing page: reshaping by a traced size is a TypeError about shapes, not a
    # ConcretizationTypeError, and shows the shape as it was given.
    f = jax.jit(lambda x: reshape(x, jnp.array(x.shape).prod()))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type, got "
                       + shown + r"\.\nIf using `jit`, try using `static_argnums`"):
        f(dev(np.ones((2, 3), np.float32)))


def test_reshape_bad_order_and_lists():
    x = dev(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="Unexpected value for 'order' argument: K"):
        jnp.reshape(x, 6, order="K")
    with pytest.raises(NotImplementedError, match="order=A"):
        jnp.reshape(x, 6, order="A")
    with pytest.raises(NotImplementedError, match="order='K'"):
        jnp.ravel(x, "K")
    with pytest.raises(TypeError, match="reshape requires ndarray or scalar arguments, got <class 'list'>"):
        jnp.reshape([1, 2], (2, 1))


@given(shape=shapes, dtype=dtype_st, seed=seeds, data=st.data())
def test_transpose_swapaxes_moveaxis(shape, dtype, seed, data):
    a = host(shape, dtype, seed)
    nd = a.ndim
    perm = data.draw(st.permutations(range(nd)))
    check(jnp.transpose(dev(a), perm), np.transpose(a, perm))
    check(jnp.transpose(dev(a)), np.transpose(a))
    if nd:
        i, j = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
        check(jnp.swapaxes(dev(a), i, j), np.swapaxes(a, i, j))
        k = data.draw(st.integers(1, nd))
        src = data.draw(st.permutations(range(nd)))[:k]
        dst = data.draw(st.permutations(range(-nd, 0)))[:k]
        check(jnp.moveaxis(dev(a), src, dst), np.moveaxis(a, src, dst))


def test_transpose_errors():
    x = dev(np.zeros((2, 3, 4), np.float32))
    with pytest.raises(TypeError, match=r"got permutation \(0,\) for operand shape \(2, 3, 4\)"):
        jnp.transpose(x, (0,))
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
        jnp.transpose(x, (0, 1, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        jnp.swapaxes(x, 0, 3)
    with pytest.raises(ValueError, match="Inconsistent number of elements: 2 vs 1"):
        jnp.moveaxis(x, (0, 1), (0,))
    with pytest.raises(TypeError, match=r"isn't a permutation.*\(1, 0, 0, 2\)"):
        jnp.moveaxis(x, (0, 0), (1, 2))


@given(shape=shapes, dtype=dtype_st, seed=seeds, data=st.data())
def test_squeeze_and_expand_dims(shape, dtype, seed, data):
    a = host(shape, dtype, seed)
    check(jnp.squeeze(dev(a)), np.squeeze(a))
    ones = [i for i, d in enumerate(shape) if d == 1]
    picked = data.draw(st.lists(st.sampled_from(ones), unique=True)) if ones else []
    check(jnp.squeeze(dev(a), tuple(picked)), np.squeeze(a, tuple(picked)))
    k = data.draw(st.integers(1, 3))
    out_nd = a.ndim + k
    axes = data.draw(st.lists(st.integers(0, out_nd - 1), min_size=k, max_size=k, unique=True))
    axes = [ax - out_nd if data.draw(st.booleans()) else ax for ax in axes]
    check(jnp.expand_dims(dev(a), tuple(axes)), np.expand_dims(a, tuple(axes)))


def test_squeeze_expand_dims_errors():
    x = dev(np.zeros((2, 1), np.float32))
    with pytest.raises(ValueError, match=r"size not equal to one, got shape=\(2, 1\) and dimensions=\(0,\)"):
        jnp.squeeze(x, 0)
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        jnp.squeeze(x, 2)
    with pytest.raises(ValueError, match="not unique"):
        jnp.squeeze(x, (1, -1))
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
        jnp.expand_dims(x, 3)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.expand_dims(x, (0, -4))


# ---------------------------------------------------------------------------
# Broadcasting


def _broadcastable_to(draw: Any, target: tuple[int, ...]) -> tuple[int, ...]:
    drop = draw(st.integers(0, len(target)))
    return tuple(d if draw(st.booleans()) else 1 for d in target[drop:])


@given(target=shapes, dtype=dtype_st, seed=seeds, data=st.data())
def test_broadcast_to_arrays_shapes(target, dtype, seed, data):
    s1 = _broadcastable_to(data.draw, target)
    s2 = _broadcastable_to(data.draw, target)
    a, b = host(s1, dtype, seed), host(s2, dtype, seed + 1)
    check(jnp.broadcast_to(dev(a), target), np.broadcast_to(a, target))
    assert jnp.broadcast_shapes(s1, s2) == np.broadcast_shapes(s1, s2)
    outs = jnp.broadcast_arrays(dev(a), dev(b))
    for out, want in zip(outs, np.broadcast_arrays(a, b)):
        check(out, want)


def test_broadcast_scalars_and_errors():
    check(jnp.broadcast_to(1.0, (2, 3)), np.ones((2, 3), np.float32), weak=True)
    check(jnp.broadcast_to(dev(np.ones(1, np.int32)), 3), np.ones(3, np.int32))
    out = jnp.broadcast_arrays(1.0, dev(np.zeros(2, np.float32)))
    check(out[0], np.ones(2, np.float32), weak=True)
    assert jnp.broadcast_arrays() == [] and jnp.broadcast_shapes() == ()
    assert jnp.broadcast_shapes(3, (2, 1)) == (2, 3)
    x = dev(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"fewer dimensions: arr_shape=\(2, 3\) shape=\(3,\)"):
        jnp.broadcast_to(x, (3,))
    with pytest.raises(ValueError, match=r"input type=float32\[2,3\] and requested type=float32\[3,3\]"):
        jnp.broadcast_to(x, (3, 3))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(4,\)\]"):
        jnp.broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.broadcast_arrays(x, dev(np.zeros(4, np.float32)))
    with pytest.raises(TypeError, match="broadcast_to requires ndarray or scalar arguments"):
        jnp.broadcast_to([1, 2], (2, 2))


@given(nd=st.integers(0, 4), dtype=dtype_st, seed=seeds)
def test_atleast_nd(nd, dtype, seed):
    a = host((2, 3, 1, 2)[:nd], dtype, seed)
    b = host((3,), dtype, seed)
    for ours, theirs in ((jnp.atleast_1d, np.atleast_1d), (jnp.atleast_2d, np.atleast_2d), (jnp.atleast_3d, np.atleast_3d)):
        check(ours(dev(a)), theirs(a))
        got = ours(dev(a), dev(b))
        for g, w in zip(got, theirs(a, b)):
            check(g, w)
    check(jnp.atleast_2d(3), np.full((1, 1), 3, np.int32), weak=True)


# ---------------------------------------------------------------------------
# Joining and splitting


@given(shape=nonempty_shapes, seed=seeds, data=st.data())
def test_concatenate_and_stack(shape, seed, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(1, 3))
    parts = []
    for i in range(n):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        parts.append(host(tuple(s), data.draw(dtype_st), seed + i))
    want_dtype = dtypes.result_type(*parts)
    cast = [p.astype(want_dtype) for p in parts]
    check(jnp.concatenate([dev(p) for p in parts], axis), np.concatenate(cast, axis), want_dtype)
    check(jnp.concatenate([dev(p) for p in parts], axis=None), np.concatenate([p.ravel() for p in cast]), want_dtype)
    same = [host(shape, p.dtype, seed + i) for i, p in enumerate(parts)]
    sax = data.draw(st.integers(-len(shape) - 1, len(shape)))
    check(jnp.stack([dev(p) for p in same], sax), np.stack([p.astype(want_dtype) for p in same], sax), want_dtype)
    whole = host((3, *shape), np.float32, seed)
    check(jnp.concatenate(dev(whole), axis), np.concatenate(list(whole), axis))
    check(jnp.stack(dev(whole), sax), np.stack(list(whole), sax))
    check(jnp.concatenate([dev(p) for p in parts], axis, dtype=np.int32), np.concatenate([p.astype(np.int32) for p in parts], axis))


def test_concatenate_weak_types_and_jit():
    weak = jnp.broadcast_to(1.0, (2,))
    check(jnp.concatenate([weak, weak]), np.ones(4, np.float32), weak=True)
    check(jnp.concatenate([weak, dev(np.zeros(1, np.float32))]), np.array([1, 1, 0], np.float32))
    check(jnp.stack([1.0, 2.0]), np.array([1, 2], np.float32), weak=True)
    f = jax.jit(lambda a, b: jnp.concatenate([a, b], axis=1))
    check(f(dev(np.ones((2, 1), np.int8)), dev(np.zeros((2, 2), np.float32))), np.array([[1, 0, 0]] * 2, np.float32))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: jnp.concatenate([]), ValueError, "Need at least one array to concatenate."),
        (lambda x: jnp.concatenate([1.0, x]), ValueError, "Zero-dimensional arrays cannot be concatenated."),
        (lambda x: jnp.concatenate([x, x], axis=2), ValueError, "axis 2 is out of bounds for array of dimension 2"),
        (lambda x: jnp.concatenate([x, jnp.reshape(x, (3, 2))]), TypeError, "differ in dimensions other than"),
        (lambda x: jnp.concatenate([x, jnp.ravel(x)]), TypeError, "different numbers of dimensions"),
        (lambda x: jnp.concatenate([x, [1.0, 2.0]]), TypeError, "got <class 'list'> at position 1"),
        (lambda x: jnp.stack([]), ValueError, "Need at least one array to stack."),
        (lambda x: jnp.stack([x, jnp.ravel(x)]), ValueError, "different numbers of dimensions"),
        (lambda x: jnp.stack([x, jnp.reshape(x, (3, 2))]), ValueError, "All input arrays must have the same shape"),
        (lambda x: jnp.stack([x, x], axis=3), ValueError, "axis 3 is out of bounds for array of dimension 3"),
        (lambda x: jnp.stack([x], out=x), NotImplementedError, "'out' argument"),
    ],
)
def test_join_errors(call, error, message):
    x = jnp.reshape(dev(np.arange(6, dtype=np.float32)), (2, 3))
    with pytest.raises(error, match=message):
        call(x)


@given(seed=seeds, data=st.data())
def test_vstack_hstack_dstack_column_stack(seed, data):
    nd = data.draw(st.integers(0, 3))
    shape = (2, 3, 2)[:nd]
    parts = [host(shape, np.float32, seed + i) for i in range(data.draw(st.integers(1, 3)))]
    for ours, theirs in ((jnp.vstack, np.vstack), (jnp.hstack, np.hstack), (jnp.dstack, np.dstack)):
        check(ours([dev(p) for p in parts]), theirs(parts))
        check(ours(dev(np.stack(parts))), theirs(np.stack(parts)))
    if nd <= 2:
        check(jnp.column_stack([dev(p) for p in parts]), np.column_stack(parts))
        check(jnp.column_stack(dev(np.stack(parts))), np.column_stack(np.stack(parts)))
    check(jnp.vstack([dev(p) for p in parts], dtype=np.int32), np.vstack(parts).astype(np.int32))


@given(shape=nonempty_shapes, seed=seeds, data=st.data())
def test_split_and_array_split(shape, seed, data):
    a = host(shape, np.int32, seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    sections = data.draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
    for got, want in zip(jnp.split(dev(a), sections, axis), np.split(a, sections, axis), strict=True):
        check(got, want)
    k = data.draw(st.integers(1, 5))
    for got, want in zip(jnp.array_split(dev(a), k, axis), np.array_split(a, k, axis), strict=True):
        check(got, want)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    for got, want in zip(jnp.split(dev(a), cuts, axis), np.split(a, cuts, axis), strict=True):
        check(got, want)
    for got, want in zip(jnp.split(dev(a), np.array(cuts, np.int64), axis), np.split(a, cuts, axis), strict=True):
        check(got, want)


def test_split_errors():
    x = dev(np.zeros((6, 3), np.float32))
    with pytest.raises(ValueError, match="array split does not result in an equal division: rest is 2"):
        jnp.split(x, 4)
    with pytest.raises(ValueError, match="Sizes passed to split must be nonnegative"):
        jnp.split(x, [4, 1])
    with pytest.raises(ZeroDivisionError, match="number of sections must be positive"):
        jnp.array_split(x, 0)
    with pytest.raises(IndexError, match="axis 2 is out of bounds"):
        jnp.split(x, 2, axis=2)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda v, i: jnp.split(v, i))(x, 2)


# ---------------------------------------------------------------------------
# Repetition


@given(shape=shapes, dtype=dtype_st, seed=seeds, data=st.data())
def test_tile(shape, dtype, seed, data):
    a = host(shape, dtype, seed)
    reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4)))
    check(jnp.tile(dev(a), reps), np.tile(a, reps))
    r = data.draw(st.integers(0, 3))
    check(jnp.tile(dev(a), r), np.tile(a, r))


def _repeat_reference(a: np.ndarray, counts: Any, axis: int, total: int | None) -> np.ndarray:
    """np.repeat, then cut or padded with the last input element (JAX's total_repeat_length)."""
    idx = np.repeat(np.arange(a.shape[axis]), np.broadcast_to(counts, (a.shape[axis],)))
    if total is not None:
        idx = idx[:total] if total <= len(idx) else np.concatenate([idx, np.full(total - len(idx), a.shape[axis] - 1)])
    return np.take(a, idx.astype(np.int64), axis=axis)


@given(shape=nonempty_shapes, dtype=dtype_st, seed=seeds, data=st.data())
def test_repeat(shape, dtype, seed, data):
    a = host(shape, dtype, seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    r = data.draw(st.integers(0, 3))
    check(jnp.repeat(dev(a), r, axis=axis), np.repeat(a, r, axis=axis))
    check(jnp.repeat(dev(a), r), np.repeat(a, r))
    counts = np.array(data.draw(st.lists(st.integers(0, 3), min_size=shape[axis], max_size=shape[axis])))
    check(jnp.repeat(dev(a), counts, axis=axis), np.repeat(a, counts, axis=axis))
    total = data.draw(st.integers(0, 8))
    check(jnp.repeat(dev(a), counts, axis=axis, total_repeat_length=total), _repeat_reference(a, counts, axis % a.ndim, total))
    check(jnp.repeat(dev(a), r, axis=axis, total_repeat_length=total), _repeat_reference(a, r, axis % a.ndim, total))
    check(jax.jit(lambda v: jnp.repeat(v, counts, axis=axis))(dev(a)), np.repeat(a, counts, axis=axis))


def test_repeat_errors():
    x = dev(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="repeat requires ndarray or scalar arguments, got <class 'list'> at position 1"):
        jnp.repeat(x, [1, 2], axis=0)
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        jnp.repeat(x, 2, axis=2)
    with pytest.raises(ConcretizationTypeError, match="total number of repeats must be static"):
        jax.jit(lambda v, r: jnp.repeat(v, r, axis=0))(x, 2)
    with pytest.raises(NotImplementedError, match="traced `repeats`"):
        jax.jit(lambda v, r: jnp.repeat(v, r, axis=0, total_repeat_length=4))(x, 2)
    with pytest.raises(ValueError, match="do not match axis 0 of length 2"):
        jnp.repeat(x, np.array([1, 2, 3]), axis=0)
    with pytest.raises(TypeError, match="non-negative"):
        jnp.repeat(x, -1, axis=0)
    with pytest.raises(ValueError, match="reps must be non-negative"):
        jnp.tile(x, -1)


# ---------------------------------------------------------------------------
# Reversal


@given(shape=nonempty_shapes, dtype=dtype_st, seed=seeds, data=st.data())
def test_flip_and_rot90(shape, dtype, seed, data):
    a = host(shape, dtype, seed)
    nd = a.ndim
    check(jnp.flip(dev(a)), np.flip(a))
    axes = tuple(data.draw(st.lists(st.integers(0, nd - 1), unique=True)))
    check(jnp.flip(dev(a), axes), np.flip(a, axes))
    check(jnp.flipud(dev(a)), np.flipud(a))
    if nd >= 2:
        check(jnp.fliplr(dev(a)), np.fliplr(a))
        k = data.draw(st.integers(-5, 5))
        ax = tuple(data.draw(st.permutations(range(nd)))[:2])
        check(jnp.rot90(dev(a), k, ax), np.rot90(a, k, ax))


def test_flip_rot90_errors():
    x = dev(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="axis 1 is out of bounds for array of dimension 1"):
        jnp.fliplr(x)
    with pytest.raises(ValueError, match="rot90 requires its first argument to have ndim at least two"):
        jnp.rot90(x)
    with pytest.raises(ValueError, match="Axes must be different"):
        jnp.rot90(jnp.reshape(x, (1, 3)), axes=(0, 0))
    check(jnp.flip(2.0), np.array(2.0, np.float32), weak=True)


# ---------------------------------------------------------------------------
# Selection


@given(target=shapes, seed=seeds, data=st.data())
def test_where(target, seed, data):
    sc, sx, sy = (_broadcastable_to(data.draw, target) for _ in range(3))
    cond = host(sc, data.draw(st.sampled_from([np.bool_, np.int32, np.float32])), seed)
    x = host(sx, data.draw(dtype_st), seed + 1)
    y = host(sy, data.draw(dtype_st), seed + 2)
    dt = dtypes.result_type(x, y)
    want = np.where(cond, x.astype(dt), y.astype(dt))
    check(jnp.where(dev(cond), dev(x), dev(y)), want, dt)
    check(jax.jit(jnp.where)(dev(cond), dev(x), dev(y)), want, dt)
    dt2, weak2 = dtypes.result_type(x, 2, return_weak_type_flag=True)
    check(jnp.where(dev(cond), dev(x), 2), np.where(cond, x.astype(dt2), np.array(2, dt2)), dt2, weak2)


def test_where_weak_types_and_forms():
    check(jnp.where(True, 1.0, 2), np.array(1.0, np.float32), weak=True)
    c = dev(np.array([True, False]))
    check(jnp.where(c, 1.0, dev(np.zeros(2, np.int8))), np.array([1, 0], np.float32), weak=True)
    # One argument: jnp.nonzero.
    (idx,) = jnp.where(c)
    np.testing.assert_array_equal(np.asarray(idx), [0])
    (idx,) = jnp.where(c, size=2, fill_value=7)
    np.testing.assert_array_equal(np.asarray(idx), [0, 7])
    with pytest.raises(TypeError, match="where requires ndarray or scalar arguments"):
        jnp.where(c, 1.0)
    with pytest.raises(ConcretizationTypeError, match="size argument of jnp.nonzero must be statically specified"):
        jax.jit(lambda v: jnp.where(v))(c)
    with pytest.raises(TypeError, match="got <class 'NoneType'> at position 2"):
        jnp.where(c, 1)
    with pytest.raises(ValueError, match="cannot be used in three-term where"):
        jnp.where(c, 1, 2, size=1)
    with pytest.raises(TypeError, match="got <class 'list'> at position 0"):
        jnp.where([True, False], 1, 2)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.where(c, dev(np.zeros(3, np.float32)), 1.0)


@given(shape=shapes, seed=seeds, data=st.data())
def test_select(shape, seed, data):
    n = data.draw(st.integers(1, 3))
    conds = [host(_broadcastable_to(data.draw, shape), np.bool_, seed + i) for i in range(n)]
    choices = [host(_broadcastable_to(data.draw, shape), data.draw(dtype_st), seed + 10 + i) for i in range(n)]
    default = data.draw(st.sampled_from([0, 2.5, host((), np.int8, seed)]))
    dt, weak = dtypes.result_type(default, *choices, return_weak_type_flag=True)
    want = np.select(conds, [c.astype(dt) for c in choices], np.asarray(default).astype(dt))
    check(jnp.select([dev(c) for c in conds], [dev(c) for c in choices], default), want, dt, weak)


def test_select_errors():
    c = dev(np.array([True]))
    with pytest.raises(ValueError, match=r"condlist must have length equal to choicelist \(1 vs 2\)"):
        jnp.select([c], [1.0, 2.0])
    with pytest.raises(ValueError, match="condlist must be non-empty"):
        jnp.select([], [])


@given(shape=shapes, dtype=dtype_st, seed=seeds, data=st.data())
def test_clip(shape, dtype, seed, data):
    a = host(shape, dtype, seed)
    lo = data.draw(st.sampled_from([None, 0, -1.5, host(_broadcastable_to(data.draw, shape), dtype, seed + 1)]))
    hi = data.draw(st.sampled_from([None, 1, 2.5, host(_broadcastable_to(data.draw, shape), dtype, seed + 2)]))
    args = [v for v in (a, lo, hi) if v is not None]
    dt, weak = dtypes.result_type(*args, return_weak_type_flag=True) if len(args) > 1 else (a.dtype, False)
    want = a.astype(dt)
    if lo is not None:
        want = np.maximum(np.asarray(lo).astype(dt), want)
    if hi is not None:
        want = np.minimum(np.asarray(hi).astype(dt), want)
    def wrap(v: Any) -> Any:
        return dev(v) if isinstance(v, np.ndarray) else v
    check(jnp.clip(dev(a), wrap(lo), wrap(hi)), want, dt, weak)
    check(jax.jit(jnp.clip)(dev(a), wrap(lo), wrap(hi)), want, dt, weak)


def test_clip_signature():
    x = dev(np.arange(5, dtype=np.float32))
    check(jnp.clip(x, 3, 1), np.ones(5, np.float32))
    check(jnp.clip(1.0, 0, 2), np.array(1.0, np.float32), weak=True)
    with pytest.raises(ValueError, match="No input was provided to the clip function"):
        jnp.clip(None, 0, 1)
    with pytest.raises(TypeError, match="a_min"):
        jnp.clip(x, a_min=0)  # type: ignore[call-arg]  # removed in JAX 0.10, as there


# ---------------------------------------------------------------------------
# Products

FLOAT_OR_INT = [np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.float32, np.float16)]


def _close(out: Any, want: np.ndarray, dt: np.dtype, weak: bool = False) -> None:
    assert out.dtype == dt and out.weak_type == weak and out.shape == want.shape
    tol = {np.dtype(np.float16): 2e-2}.get(dt, 1e-5)
    if dt.kind in "iu":
        # Integer products wrap around in the result dtype, as in JAX and NumPy.
        want = np.asarray(want).astype(np.int64).astype(dt)
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def _prod_operands(shape_a, shape_b, data, seed):
    da, db = data.draw(st.sampled_from(FLOAT_OR_INT)), data.draw(st.sampled_from(FLOAT_OR_INT))
    a, b = host(shape_a, da, seed), host(shape_b, db, seed + 1)
    dt = dtypes.result_type(a, b)
    return a, b, dt


@given(seed=seeds, data=st.data())
def test_dot_inner_vdot_outer_tensordot(seed, data):
    na, nb = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    k = data.draw(st.integers(0, 3))
    sa = tuple(data.draw(st.lists(st.integers(1, 3), min_size=na, max_size=na)))
    sb = tuple(data.draw(st.lists(st.integers(1, 3), min_size=nb, max_size=nb)))
    if na and nb:
        sa = sa[:-1] + (k,)
        sb = sb[:-2] + (k,) + sb[-1:] if nb >= 2 else (k,)
    a, b, dt = _prod_operands(sa, sb, data, seed)
    f64 = np.float64
    _close(jnp.dot(dev(a), dev(b)), np.dot(a.astype(f64), b.astype(f64)), dt)
    if na and nb:
        bi = host(sa[-1:] if nb == 1 else sb[:-2] + sb[-1:] + sa[-1:], b.dtype, seed + 2)
        _close(jnp.inner(dev(a), dev(bi)), np.inner(a.astype(f64), bi.astype(f64)), dt)
    else:
        _close(jnp.inner(dev(a), dev(b)), np.inner(a.astype(f64), b.astype(f64)), dt)
    bv = host(a.shape, b.dtype, seed + 3)
    _close(jnp.vdot(dev(a), dev(bv)), np.vdot(a.astype(f64), bv.astype(f64)), dt)
    _close(jnp.outer(dev(a), dev(b)), np.outer(a.astype(f64), b.astype(f64)), dt)
    n = data.draw(st.integers(0, min(na, 2)))
    bt = host(a.shape[na - n:] + (2,), b.dtype, seed + 4)
    _close(jnp.tensordot(dev(a), dev(bt), n), np.tensordot(a.astype(f64), bt.astype(f64), n), dt)


def test_product_dtypes_and_weak_types():
    i32 = dev(np.arange(3, dtype=np.int32))
    _close(jnp.dot(i32, 2.0), np.arange(3) * 2.0, np.dtype(np.float32), weak=True)
    _close(jnp.dot(2, 3.0), np.array(6.0), np.dtype(np.float32), weak=True)
    i8, u8 = dev(np.ones((2, 3), np.int8)), dev(np.ones((3, 2), np.uint8))
    _close(jnp.matmul(i8, u8), np.full((2, 2), 3), np.dtype(np.int16))
    _close(jnp.dot(i8, u8, preferred_element_type=np.float32), np.full((2, 2), 3), np.dtype(np.float32))
    b = dev(np.ones((2, 2), np.bool_))
    assert jnp.dot(b, b).dtype == np.bool_
    _close(jnp.tensordot(i8, u8, ((0, 1), (1, 0))), np.array(6), np.dtype(np.int16))
    _close(jnp.tensordot(i8, u8, (1, 0)), np.full((2, 2), 3), np.dtype(np.int16))


def _batch_shapes(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    ba = tuple(d if draw(st.booleans()) else 1 for d in batch[draw(st.integers(0, len(batch))):])
    bb = tuple(d if draw(st.booleans()) else 1 for d in batch[draw(st.integers(0, len(batch))):])
    return ba, bb


@given(seed=seeds, data=st.data())
def test_matmul_broadcasts_batches_like_numpy(seed, data):
    ba, bb = _batch_shapes(data.draw)
    m, k, n = (data.draw(st.integers(1, 3)) for _ in range(3))
    sa = data.draw(st.sampled_from([(k,), ba + (m, k)]))
    sb = data.draw(st.sampled_from([(k,), bb + (k, n)]))
    a, b, dt = _prod_operands(sa, sb, data, seed)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    _close(jnp.matmul(dev(a), dev(b)), want, dt)
    _close(jax.jit(jnp.matmul)(dev(a), dev(b)), want, dt)
    _close(dev(a) @ dev(b), want, dt)


def test_product_errors():
    x = dev(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="matmul input operand 0 must have ndim at least 1"):
        jnp.matmul(1.0, x)
    with pytest.raises(ValueError, match=r"Incompatible types for matmul arguments: float32\[2,2,3\] and float32\[3,3,2\]"):
        jnp.matmul(dev(np.zeros((2, 2, 3), np.float32)), dev(np.zeros((3, 3, 2), np.float32)))
    with pytest.raises(TypeError):
        jnp.matmul(x, x)
    with pytest.raises(TypeError):
        jnp.dot(x, x)
    with pytest.raises(TypeError, match=r"Number of tensordot axes \(axes 5\) exceeds input ranks"):
        jnp.tensordot(x, x, 5)
    with pytest.raises(TypeError, match="tensordot requires axes lists to have equal length"):
        jnp.tensordot(x, x, ((0, 1), (0,)))
    with pytest.raises(TypeError, match="tensordot axes argument must be an int, a pair"):
        jnp.tensordot(x, x, ((0,), (0,), (0,)))
    with pytest.raises(TypeError, match="dot requires ndarray or scalar arguments"):
        jnp.dot([1.0], x)
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.outer(x, x, out=x)


def test_no_warnings_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.concatenate([dev(np.zeros(2, np.float32)), dev(np.zeros(2, np.int32))])
        jnp.where(dev(np.array([True])), 1, 2)
