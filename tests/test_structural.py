"""Structural primitives (spec/primitives/structural.md): properties, errors, spec examples.

Each property draws random shapes (rank 0 and zero-sized dimensions
included), dtypes and params, and checks that eager evaluation, ``jit`` and
a NumPy reference expression agree, and that the result has exactly the
dtype the primitive's rule promises. The helpers here are shared with
``test_reductions.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import minijax as jax
import minijax.lax.structural  # noqa: F401  (the module under test, before the lead registers it)
import minijax.primitives.reductions as rp
import minijax.primitives.slicing as sl
import minijax.primitives.structural as sp
from minijax import lax
from minijax.core import Primitive
from minijax.jaxpr import Jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.sharding import PartitionSpec as P

SPEC = Path(__file__).resolve().parent.parent / "spec" / "primitives"

BOOL = [np.dtype(np.bool_)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)]
FLOATS = [np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32)]
ALL_DTYPES = BOOL + INTS + FLOATS


# ---------------------------------------------------------------------------
# Shared helpers


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype[Any], specials: bool = True) -> np.ndarray:
    """Random values of ``dtype`` over its whole range; floats sometimes get NaN, infinities and -0.0."""
    shape = tuple(shape)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64)).astype(dtype)
    x = np.asarray(rng.standard_normal(shape) * rng.choice([1.0, 10.0, 1000.0]))
    if specials and x.size and rng.random() < 0.3:
        flat = x.reshape(-1)
        for value in (np.nan, np.inf, -np.inf, -0.0, 0.0):
            if rng.random() < 0.4:
                flat[rng.integers(flat.size)] = value
    return x.astype(dtype)


shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
seeds = st.integers(0, 2**32 - 1)


def assert_same(got: Any, want: np.ndarray, rtol: float = 0.0, atol: float = 0.0) -> None:
    """Same dtype and shape; values equal (NaN equals NaN), or close when a tolerance is given."""
    got_np = np.asarray(got)
    assert got_np.dtype == want.dtype, (got_np.dtype, want.dtype)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    if rtol or atol:
        np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    elif want.dtype == np.dtype(ml_dtypes.bfloat16):
        np.testing.assert_array_equal(got_np.astype(np.float32), want.astype(np.float32))  # NumPy sees no NaN in bf16
    else:
        np.testing.assert_array_equal(got_np, want)


def check(f: Callable[..., Any], args: Sequence[Any], want: np.ndarray, rtol: float = 0.0, atol: float = 0.0) -> None:
    """``f`` eagerly and under ``jit`` agree exactly, and both match the reference ``want``."""
    eager = f(*args)
    jitted = jax.jit(f)(*args)
    assert_same(jitted, np.asarray(eager))
    assert_same(eager, want, rtol, atol)


def spec_examples(page: str) -> list[tuple[str, str]]:
    """(section name, code) for each ```python block of a spec page."""
    text = (SPEC / page).read_text()
    found = []
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        name = section.split("\n", 1)[0].strip(" `")
        for code in re.findall(r"^```python\n(.*?)^```", section, flags=re.M | re.S):
            found.append((name, code))
    return found


# ---------------------------------------------------------------------------
# broadcast_in_dim


@st.composite
def broadcast_cases(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    in_shape = draw(shapes)
    extra = draw(st.integers(0, 2))
    out_rank = len(in_shape) + extra
    dims = tuple(draw(st.permutations(range(out_rank)))[: len(in_shape)])
    out = [draw(st.integers(0, 3)) for _ in range(out_rank)]
    for n, d in zip(in_shape, dims):
        out[d] = draw(st.integers(0, 3)) if n == 1 else n
    return in_shape, tuple(out), dims


@given(broadcast_cases(), st.sampled_from(ALL_DTYPES), seeds)
def test_broadcast_in_dim(case: Any, dtype: np.dtype[Any], seed: int) -> None:
    in_shape, shape, dims = case
    x = random_array(np.random.default_rng(seed), in_shape, dtype)
    want = np.empty(shape, dtype)
    for idx in np.ndindex(*shape):  # the definition, element by element
        want[idx] = x[tuple(0 if n == 1 else idx[d] for n, d in zip(in_shape, dims))]
    check(lambda x: sp.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims, sharding=None), [x], want)


def test_broadcast_in_dim_keeps_weak_type_and_prints_like_jax() -> None:
    out = lax.broadcast_in_dim(2.0, (2, 3), ())
    assert out.aval.weak_type and out.dtype == np.float32
    text = str(jax.make_jaxpr(lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)))(np.ones((2, 3), np.float32)))
    assert "broadcast_in_dim[broadcast_dimensions=(1, 2)] a" in text
    assert "broadcast_in_dim 1.0:f32[]" in str(jax.make_jaxpr(lambda: lax.full((2,), 1.0))())


# ---------------------------------------------------------------------------
# reshape, transpose, squeeze, rev


@st.composite
def reshape_cases(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...] | None]:
    in_shape = draw(shapes)
    sizes = list(draw(st.permutations(in_shape)))
    # Merge neighbours and add 1s: the product (hence the size) is unchanged.
    while len(sizes) > 1 and draw(st.booleans()):
        i = draw(st.integers(0, len(sizes) - 2))
        sizes[i : i + 2] = [sizes[i] * sizes[i + 1]]
    for _ in range(draw(st.integers(0, 2))):
        sizes.insert(draw(st.integers(0, len(sizes))), 1)
    dims = tuple(draw(st.permutations(range(len(in_shape))))) if draw(st.booleans()) else None
    return in_shape, tuple(sizes), dims


@given(reshape_cases(), st.sampled_from(ALL_DTYPES), seeds)
def test_reshape(case: Any, dtype: np.dtype[Any], seed: int) -> None:
    in_shape, new_sizes, dims = case
    x = random_array(np.random.default_rng(seed), in_shape, dtype)
    want = np.reshape(x if dims is None else np.transpose(x, dims), new_sizes)
    check(lambda x: sp.reshape_p.bind(x, new_sizes=new_sizes, dimensions=dims, sharding=None), [x], want)


@given(shapes, st.sampled_from(ALL_DTYPES), seeds, st.data())
def test_transpose(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any) -> None:
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x = random_array(np.random.default_rng(seed), shape, dtype)
    check(lambda x: sp.transpose_p.bind(x, permutation=perm), [x], np.transpose(x, perm))


def test_a_short_permutation_is_refused_under_jit_too() -> None:
    # (0,) is the identity of a rank-1 array, not of this rank-2 one: no shortcut.
    x = np.zeros((3, 1), np.float32)
    for run in (lambda f: f(x), lambda f: jax.jit(f)(x)):
        with pytest.raises(TypeError, match="isn't a permutation of operand dimensions"):
            run(lambda a: lax.transpose(a, (0,)))


@given(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=2), st.sampled_from(ALL_DTYPES), seeds, st.data())
def test_squeeze(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any) -> None:
    ones = [i for i, n in enumerate(shape) if n == 1]
    dims = tuple(sorted(data.draw(st.sets(st.sampled_from(ones)) if ones else st.just(set()))))
    x = random_array(np.random.default_rng(seed), shape, dtype)
    check(lambda x: sp.squeeze_p.bind(x, dimensions=dims), [x], np.squeeze(x, dims))


@given(shapes, st.sampled_from(ALL_DTYPES), seeds, st.data())
def test_rev(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any) -> None:
    dims = tuple(data.draw(st.permutations(range(len(shape)))))[: data.draw(st.integers(0, len(shape)))]
    x = random_array(np.random.default_rng(seed), shape, dtype)
    want = x[tuple(slice(None, None, -1) if i in dims else slice(None) for i in range(len(shape)))]
    check(lambda x: sp.rev_p.bind(x, dimensions=dims), [x], want)


# ---------------------------------------------------------------------------
# slice, dynamic_slice, dynamic_update_slice


@given(shapes, st.sampled_from(ALL_DTYPES), seeds, st.data(), st.booleans())
def test_slice(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any, with_strides: bool) -> None:
    starts, limits, strides = [], [], []
    for n in shape:
        a, b = sorted(data.draw(st.tuples(st.integers(0, n), st.integers(0, n))))
        starts.append(a)
        limits.append(b)
        strides.append(data.draw(st.integers(1, 3)))
    x = random_array(np.random.default_rng(seed), shape, dtype)
    want = x[tuple(slice(a, b, s if with_strides else 1) for a, b, s in zip(starts, limits, strides))]
    params = dict(start_indices=tuple(starts), limit_indices=tuple(limits), strides=tuple(strides) if with_strides else None)
    check(lambda x: sl.slice_p.bind(x, **params), [x], want)


def clamp(start: int, n: int, size: int) -> int:
    return min(max(start, 0), n - size)


@given(shapes, st.sampled_from(ALL_DTYPES), st.sampled_from([np.int32, np.int8, np.uint8]), seeds, st.data())
def test_dynamic_slice(shape: tuple[int, ...], dtype: np.dtype[Any], index_dtype: Any, seed: int, data: Any) -> None:
    sizes = tuple(data.draw(st.integers(0, n)) for n in shape)
    lo = 0 if np.dtype(index_dtype).kind == "u" else -6
    starts = [np.array(data.draw(st.integers(lo, n + 6)), index_dtype) for n in shape]
    x = random_array(np.random.default_rng(seed), shape, dtype)
    corner = [clamp(int(s), n, w) for s, n, w in zip(starts, shape, sizes)]
    want = x[tuple(slice(c, c + w) for c, w in zip(corner, sizes))]
    check(lambda x, *i: sl.dynamic_slice_p.bind(x, *i, slice_sizes=sizes), [x, *starts], want)


@given(shapes, st.sampled_from(ALL_DTYPES), seeds, st.data())
def test_dynamic_update_slice(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any) -> None:
    rng = np.random.default_rng(seed)
    update_shape = tuple(data.draw(st.integers(0, n)) for n in shape)
    starts = [np.int32(data.draw(st.integers(-6, n + 6))) for n in shape]
    x, update = random_array(rng, shape, dtype), random_array(rng, update_shape, dtype)
    want = x.copy()
    corner = [clamp(int(s), n, w) for s, n, w in zip(starts, shape, update_shape)]
    want[tuple(slice(c, c + w) for c, w in zip(corner, update_shape))] = update
    check(lambda x, u, *i: sl.dynamic_update_slice_p.bind(x, u, *i), [x, update, *starts], want)


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5), seeds, st.data())
def test_lax_dynamic_slice_counts_negative_starts_from_the_end(shape: tuple[int, ...], seed: int, data: Any) -> None:
    sizes = tuple(data.draw(st.integers(0, n)) for n in shape)
    starts = [data.draw(st.integers(-n - 3, n + 3)) for n in shape]
    x = random_array(np.random.default_rng(seed), shape, np.dtype(np.float32))
    corner = [clamp(s + n if s < 0 else s, n, w) for s, n, w in zip(starts, shape, sizes)]
    want = x[tuple(slice(c, c + w) for c, w in zip(corner, sizes))]
    # Static Python ints, and traced int32 scalars (normalized by lt/add/select_n).
    check(lambda x: lax.dynamic_slice(x, starts, sizes), [x], want)
    check(lambda x, *i: lax.dynamic_slice(x, i, sizes), [x, *(np.int32(s) for s in starts)], want)
    update = np.zeros(sizes, np.float32)
    written = x.copy()
    written[tuple(slice(c, c + w) for c, w in zip(corner, sizes))] = 0
    check(lambda x, *i: lax.dynamic_update_slice(x, update, i), [x, *(np.int32(s) for s in starts)], written)


def test_in_dim_helpers() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert_same(lax.slice_in_dim(x, 1, None, 2, axis=1), x[:, 1::2])
    assert_same(lax.slice_in_dim(x, -2, -1, axis=0), x[1:2])
    assert_same(lax.index_in_dim(x, -1, 1, keepdims=False), x[:, -1])
    assert_same(lax.dynamic_slice_in_dim(x, np.int32(-1), 2, axis=0), x[1:3])
    assert_same(lax.dynamic_index_in_dim(x, -1, 0, keepdims=False), x[2])
    assert_same(lax.dynamic_index_in_dim(x, 7, 1), x[:, 3:4])  # clamped
    y = x.copy()
    y[:, 2] = -1
    assert_same(lax.dynamic_update_index_in_dim(x, np.full(3, -1, np.float32), 2, 1), y)
    assert_same(lax.dynamic_update_slice_in_dim(x, np.full((3, 1), -1, np.float32), -2, 1), y)
    jaxpr = str(jax.make_jaxpr(lambda x: lax.dynamic_index_in_dim(x, 1, 1, False))(x))
    assert "jit[\n      name=dynamic_index_in_dim" in jaxpr


# ---------------------------------------------------------------------------
# concatenate, pad, iota, split, tile, stack


@given(shapes, st.integers(1, 4), st.sampled_from(ALL_DTYPES), seeds, st.data())
def test_concatenate(shape: tuple[int, ...], count: int, dtype: np.dtype[Any], seed: int, data: Any) -> None:
    if not shape:
        shape = (2,)
    dim = data.draw(st.integers(0, len(shape) - 1))
    rng = np.random.default_rng(seed)
    xs = [random_array(rng, shape[:dim] + (data.draw(st.integers(0, 3)),) + shape[dim + 1 :], dtype) for _ in range(count)]
    check(lambda *xs: sp.concatenate_p.bind(*xs, dimension=dim), xs, np.concatenate(xs, axis=dim))


def pad_reference(x: np.ndarray, value: Any, config: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """Axis by axis: spread the elements ``interior`` apart, then add (or crop) low/high."""
    for axis, (lo, hi, interior) in enumerate(config):
        n = x.shape[axis]
        spread_shape = list(x.shape)
        spread_shape[axis] = n + max(n - 1, 0) * interior
        spread = np.full(spread_shape, value, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, interior + 1)
        spread[tuple(index)] = x
        edge = list(x.shape)
        parts = []
        for amount in (lo, hi):
            edge[axis] = max(amount, 0)
            parts.append(np.full(edge, value, x.dtype))
        x = np.concatenate([parts[0], spread, parts[1]], axis=axis)
        crop = [slice(None)] * x.ndim
        crop[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(crop)]
    return x


@given(shapes, st.sampled_from(ALL_DTYPES), seeds, st.data())
def test_pad(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any) -> None:
    config = []
    for n in shape:
        interior = data.draw(st.integers(0, 2))
        spread = n + max(n - 1, 0) * interior
        lo = data.draw(st.integers(-spread, 3))
        hi = data.draw(st.integers(-(spread + lo) if spread + lo > 0 else 0, 3))
        config.append((lo, hi, interior))
    rng = np.random.default_rng(seed)
    x, value = random_array(rng, shape, dtype), random_array(rng, (), dtype)
    check(lambda x, v: sl.pad_p.bind(x, v, padding_config=tuple(config)), [x, value], pad_reference(x, value, config))


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5), st.sampled_from(INTS + FLOATS), st.data())
def test_iota(shape: tuple[int, ...], dtype: np.dtype[Any], data: Any) -> None:
    dim = data.draw(st.integers(0, len(shape) - 1))
    want = np.indices(shape)[dim].astype(dtype) if shape else np.zeros((), dtype)
    check(lambda: sp.iota_p.bind(dtype=dtype, shape=shape, dimension=dim, sharding=None), [], want)


def test_iota_rounds_and_wraps_like_jax() -> None:
    assert_same(lax.iota(np.uint8, 300)[-3:], np.array([41, 42, 43], np.uint8))
    assert_same(lax.iota(np.float16, 3000)[-5:], np.array([2996, 2996, 2996, 2998, 3000], np.float16))


@given(shapes, st.sampled_from(ALL_DTYPES), seeds, st.data())
def test_split(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any) -> None:
    if not shape:
        shape = (3,)
    axis = data.draw(st.integers(0, len(shape) - 1))
    cuts = sorted(data.draw(st.lists(st.integers(0, shape[axis]), max_size=3)))
    sizes = tuple(b - a for a, b in zip([0, *cuts], [*cuts, shape[axis]]))
    x = random_array(np.random.default_rng(seed), shape, dtype)
    f = lambda x: sp.split_p.bind(x, sizes=sizes, axis=axis)  # noqa: E731
    for eager, jitted, want in zip(f(x), jax.jit(f)(x), np.split(x, cuts, axis=axis), strict=True):
        assert_same(eager, want)
        assert_same(jitted, want)


@given(shapes, st.sampled_from(ALL_DTYPES), seeds, st.data())
def test_tile(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any) -> None:
    reps = tuple(data.draw(st.integers(0, 3)) for _ in shape)
    x = random_array(np.random.default_rng(seed), shape, dtype)
    check(lambda x: sp.tile_p.bind(x, reps=reps), [x], np.tile(x, reps) if reps else x)


@given(shapes, st.integers(1, 3), st.sampled_from(ALL_DTYPES), seeds, st.data())
def test_stack(shape: tuple[int, ...], count: int, dtype: np.dtype[Any], seed: int, data: Any) -> None:
    axis = data.draw(st.integers(0, len(shape)))
    rng = np.random.default_rng(seed)
    xs = [random_array(rng, shape, dtype) for _ in range(count)]
    check(lambda *xs: sp.stack_p.bind(*xs, axis=axis), xs, np.stack(xs, axis=axis))


# ---------------------------------------------------------------------------
# Weak types and the lax wrappers' shortcuts


def test_weak_types_follow_jax() -> None:
    w = lax.broadcast_in_dim(1.0, (2, 3), ())  # weak float32
    s = np.ones((2, 3), np.float32)
    weak = lambda v: v.aval.weak_type  # noqa: E731
    assert weak(lax.reshape(w, (3, 2))) and weak(lax.transpose(w, (1, 0))) and weak(lax.rev(w, (0,)))
    assert weak(lax.slice(w, (0, 0), (1, 1))) and weak(lax.dynamic_slice(w, (0, 0), (1, 1)))
    assert weak(lax.concatenate([w, w], 0)) and not weak(lax.concatenate([w, s], 0))
    assert weak(lax.pad(w, 0.0, [(0, 0, 0)] * 2)) and not weak(lax.pad(w, np.float32(0), [(0, 0, 0)] * 2))
    # dynamic_update_slice is weak only if every operand is, and lax makes static indices strong int32.
    assert not weak(lax.dynamic_update_slice(w, lax.slice(w, (0, 0), (1, 3)), (0, 0)))
    assert weak(sl.dynamic_update_slice_p.bind(w, lax.slice(w, (0, 0), (1, 3)), 0, 0))
    assert not weak(lax.iota(np.int32, 3))
    assert weak(lax.full((3,), 1.0)) and not weak(lax.full((3,), 1.0, np.float16))
    assert weak(lax.full_like(w, 2)) and not weak(lax.full_like(s, 2))


def test_identity_shortcuts_emit_no_equation() -> None:
    x = np.ones((2, 3), np.float32)
    for f in (
        lambda x: lax.reshape(x, (2, 3)),
        lambda x: lax.transpose(x, (0, 1)),
        lambda x: lax.squeeze(x, ()),
        lambda x: lax.expand_dims(x, ()),
        lambda x: lax.broadcast(x, ()),
        lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 1)),
        lambda x: lax.concatenate([x], 0),
    ):
        assert jax.make_jaxpr(f)(x).eqns == []
    assert len(jax.make_jaxpr(lambda x: lax.rev(x, ()))(x).eqns) == 1  # rev has no shortcut in JAX


def test_expand_dims_and_collapse() -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_same(lax.expand_dims(x, (0, 2)), x[None, :, None])
    assert_same(lax.expand_dims(x, (-1,)), x[:, :, None])
    assert_same(lax.collapse(np.ones((2, 3, 4), np.int8), 1), np.ones((2, 12), np.int8))
    assert_same(lax.collapse(np.ones((2, 3, 4), np.int8), 1, 1), np.ones((2, 1, 3, 4), np.int8))
    assert_same(lax.broadcast_to_rank(x, 4), x[None, None])
    assert_same(lax.zeros_like_array(x), np.zeros_like(x))
    assert_same(lax.full((2,), 3, np.int8), np.full(2, 3, np.int8))


# ---------------------------------------------------------------------------
# Errors: JAX's error types, messages naming the operation


ONES = np.ones((2, 3), np.float32)

ERRORS: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("bid rank", lambda: lax.broadcast_in_dim(ONES, (3,), (0,)), TypeError, "broadcast_in_dim broadcast_dimensions must have length"),
    ("bid size", lambda: lax.broadcast_in_dim(ONES, (2, 4), (0, 1)), TypeError, "broadcast_in_dim operand dimension sizes"),
    ("bid range", lambda: lax.broadcast_in_dim(ONES, (2, 3), (0, 2)), TypeError, "broadcast_in_dim broadcast_dimensions must be a subset"),
    ("bid dups", lambda: lax.broadcast_in_dim(np.ones((3, 3)), (2, 3), (1, 1)), TypeError, "broadcast_in_dim broadcast_dimensions must not contain duplicates"),
    ("bid negative", lambda: lax.broadcast_in_dim(ONES, (2, -3), (0, 1)), TypeError, "broadcast_in_dim shape must have every element be nonnegative"),
    ("bid float", lambda: lax.broadcast_in_dim(ONES, (2.0, 3), (0, 1)), TypeError, "broadcast_in_dim shape must have every element be an integer"),
    ("reshape size", lambda: lax.reshape(ONES, (4, 2)), ValueError, "reshape cannot change the number of elements"),
    ("reshape negative", lambda: lax.reshape(ONES, (-1, 6)), TypeError, "reshape new_sizes must all be nonnegative"),
    ("reshape dims", lambda: lax.reshape(ONES, (6,), (0, 0)), TypeError, "reshape dimensions must be a permutation"),
    ("reshape float", lambda: lax.reshape(ONES, (6.0,)), TypeError, "Shapes must be 1D sequences"),
    ("transpose", lambda: lax.transpose(ONES, (0, 0)), TypeError, "transpose permutation isn't a permutation"),
    ("squeeze size", lambda: lax.squeeze(ONES, (0,)), ValueError, "cannot select an axis to squeeze out"),
    ("squeeze range", lambda: lax.squeeze(ONES, (2,)), ValueError, "axis 2 is out of bounds"),
    ("squeeze prim", lambda: sp.squeeze_p.bind(np.ones((2, 1)), dimensions=(-1,)), ValueError, "squeeze dimensions outside range"),
    ("squeeze dups", lambda: lax.squeeze(np.ones((1, 2)), (0, 0)), ValueError, "squeeze dimensions are not unique"),
    ("rev range", lambda: lax.rev(ONES, (2,)), TypeError, "rev dimensions must all be less than operand ndim"),
    ("rev dups", lambda: lax.rev(ONES, (0, 0)), TypeError, "rev dimensions must be unique"),
    ("rev negative", lambda: lax.rev(ONES, (-1,)), TypeError, "rev dimensions must have every element be nonnegative"),
    ("slice rank", lambda: lax.slice(ONES, (0,), (2,)), TypeError, "slice start_indices must have length equal"),
    ("slice limit", lambda: lax.slice(ONES, (0, 0), (3, 3)), TypeError, "slice limit_indices must be less than or equal"),
    ("slice start", lambda: lax.slice(ONES, (-1, 0), (2, 3)), TypeError, "slice start_indices must be greater than or equal to zero"),
    ("slice order", lambda: lax.slice(ONES, (1, 0), (0, 3)), TypeError, "slice limit_indices must be greater than or equal to start_indices"),
    ("slice stride", lambda: lax.slice(ONES, (0, 0), (2, 3), (0, 1)), TypeError, "slice strides must be positive"),
    ("slice_in_dim", lambda: lax.slice_in_dim(ONES, 0, 10, 1, 1), TypeError, "slice limit_indices"),
    ("index_in_dim", lambda: lax.index_in_dim(ONES, 5, 1), IndexError, "index 5 is out of bounds for axis 1 with size 3"),
    ("ds count", lambda: lax.dynamic_slice(ONES, (0,), (1, 2)), ValueError, "Length of slice indices must match"),
    ("ds sizes", lambda: lax.dynamic_slice(ONES, (0, 0), (1,)), TypeError, "dynamic_slice slice_sizes must have the same length"),
    ("ds big", lambda: lax.dynamic_slice(ONES, (0, 0), (3, 2)), TypeError, "dynamic_slice slice_sizes must be less than or equal"),
    ("ds negative", lambda: lax.dynamic_slice(ONES, (0, 0), (-1, 2)), TypeError, "dynamic_slice slice_sizes must be greater than or equal"),
    ("ds float index", lambda: lax.dynamic_slice(ONES, (0.0, 0), (1, 2)), TypeError, "index arguments to dynamic_slice must be integers of the same type, got: float32, int32"),
    ("ds mixed index", lambda: lax.dynamic_slice(ONES, (np.int16(0), 0), (1, 2)), TypeError, "got: int16, int32"),
    ("ds array index", lambda: sl.dynamic_slice_p.bind(ONES, np.zeros(2, np.int32), 0, slice_sizes=(1, 2)), TypeError, "start_indices arguments to dynamic_slice must be scalars"),
    ("ds no negatives", lambda: lax.dynamic_slice(ONES, (-1, 0), (1, 2), allow_negative_indices=False), ValueError, "Index -1 is out of bounds"),
    ("dus rank", lambda: lax.dynamic_update_slice(ONES, np.ones(2, np.float32), (0, 0)), TypeError, "dynamic_update_slice update must have the same rank"),
    ("dus big", lambda: lax.dynamic_update_slice(ONES, np.ones((3, 3), np.float32), (0, 0)), TypeError, "dynamic_update_slice update shape must be smaller"),
    ("dus dtype", lambda: lax.dynamic_update_slice(ONES, np.ones((1, 3), np.int32), (0, 0)), TypeError, "lax.dynamic_update_slice requires arguments to have the same dtypes"),
    ("dus index", lambda: lax.dynamic_update_slice(ONES, ONES, (0.0, 0)), TypeError, "index arguments to dynamic_update_slice must be integers"),
    ("concat empty", lambda: lax.concatenate([], 0), ValueError, "concatenate requires a non-empty sequence"),
    ("concat dtype", lambda: lax.concatenate([ONES, ONES.astype(np.int32)], 0), TypeError, "lax.concatenate requires arguments to have the same dtypes"),
    ("concat rank", lambda: lax.concatenate([ONES, np.ones(3, np.float32)], 0), TypeError, "Cannot concatenate arrays with different numbers of dimensions"),
    ("concat shape", lambda: lax.concatenate([ONES, np.ones((2, 4), np.float32)], 0), TypeError, "Cannot concatenate arrays with shapes that differ"),
    ("concat dim", lambda: lax.concatenate([ONES, ONES], 2), TypeError, "concatenate dimension out of bounds"),
    ("pad config", lambda: lax.pad(ONES, np.float32(0), [(1, 1, 0)]), ValueError, "length of padding_config must equal"),
    ("pad interior", lambda: lax.pad(ONES, np.float32(0), [(1, 1, -1), (0, 0, 0)]), ValueError, "interior padding in padding_config must be nonnegative"),
    ("pad result", lambda: lax.pad(ONES, np.float32(0), [(-3, 0, 0), (0, 0, 0)]), ValueError, "Dimension size after padding is not at least 0"),
    ("pad value", lambda: lax.pad(ONES, np.zeros(2, np.float32), [(0, 0, 0)] * 2), ValueError, "padding_value must be a scalar"),
    ("pad dtype", lambda: lax.pad(ONES, 0, [(0, 0, 0)] * 2), TypeError, "pad operand and padding_value must be same dtype: got float32 and int32"),
    ("pad triple", lambda: lax.pad(ONES, np.float32(0), [(1, 1), (0, 0)]), ValueError, "pad padding_config entries must be (low, high, interior) triples"),
    ("iota bool", lambda: lax.iota(np.bool_, 3), TypeError, "iota does not accept dtype bool"),
    ("iota negative", lambda: lax.iota(np.int32, -1), TypeError, "iota shape must have every element be nonnegative"),
    ("iota dimension", lambda: lax.broadcasted_iota(np.int32, (2, 3), 2), ValueError, "iota dimension must be between 0 and len(shape)"),
    ("iota dtype", lambda: lax.iota(None, 3), ValueError, "dtype must be specified"),
    ("expand dims", lambda: lax.expand_dims(ONES, (4,)), ValueError, "axis 4 is out of bounds"),
    ("expand dups", lambda: lax.expand_dims(ONES, (0, 0)), ValueError, "repeated axis in lax.expand_dims"),
    ("collapse", lambda: lax.collapse(np.ones((2, 3, 4)), 2, 1), ValueError, "Invalid dimension range passed to collapse"),
    ("full", lambda: lax.full((3,), np.ones(2)), TypeError, "full must be called with scalar fill_value"),
    ("split sum", lambda: lax.split(np.ones((4, 3)), (1, 2), 0), ValueError, "Sum of sizes 3 must be equal to dimension 0"),
    ("split negative", lambda: lax.split(np.ones((4, 3)), (-1, 5), 0), ValueError, "Sizes passed to split must be nonnegative"),
    ("tile reps", lambda: lax.tile(ONES, (2,)), TypeError, "reps length must be equal to the ndim of x"),
    ("tile negative", lambda: lax.tile(ONES, (-1, 1)), TypeError, "tile reps must have every element be nonnegative"),
    ("stack shapes", lambda: lax.stack([ONES, ONES[:1]], 0), ValueError, "All input arrays must have the same shape"),
    ("stack dtypes", lambda: lax.stack([ONES, ONES.astype(np.int32)], 0), TypeError, "lax.stack requires arguments to have the same dtypes"),
    ("sharding", lambda: lax.broadcast_in_dim(ONES, (2, 3), (0, 1), out_sharding="x"), TypeError,
     "`out_sharding` argument of broadcast_in_dim only supports instances of `NamedSharding` or `PartitionSpec`."),
    ("spec without mesh", lambda: lax.broadcast_in_dim(ONES, (2, 3), (0, 1), out_sharding=P("x")), ValueError,
     "Using PartitionSpec when you are not under a mesh context is not allowed."),
]


@pytest.mark.parametrize("name, f, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name: str, f: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        f()
    # The same check rejects the program when it is traced.
    with pytest.raises(error, match=re.escape(message)):
        jax.make_jaxpr(f)()


# ---------------------------------------------------------------------------
# Printed jaxprs read back (minijax.jaxpr_parse) to the same equations


F32 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
I32 = np.arange(6, dtype=np.int32).reshape(2, 3) - 2
B = np.array([[True, False, True], [True, True, False]])
F16 = F32.astype(np.float16)

# name -> (program over a ``lax`` module, its arguments): every primitive of this
# family and reductions', and the lax wrappers JAX stages in a particular way.
# tests/test_structural_oracle.py runs each under JAX too.
Program = Callable[..., Any]
PROGRAMS: dict[str, tuple[Program, list[Any]]] = {
    "broadcast_in_dim": (lambda lax, x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)), [F32]),
    "broadcast_in_dim_scalar": (lambda lax, x: lax.broadcast_in_dim(x, (2, 3), ()), [1.5]),
    "broadcast_in_dim_transposing": (lambda lax, x: lax.broadcast_in_dim(x, (3, 2), (1, 0)), [F32]),
    "broadcast_in_dim_identity": (lambda lax, x: lax.broadcast_in_dim(x, (2, 3), (0, 1)), [F32]),
    "broadcast": (lambda lax, x: lax.broadcast(x, (4,)), [I32]),
    "broadcast_to_rank": (lambda lax, x: lax.broadcast_to_rank(x, 4), [F32]),
    "expand_dims": (lambda lax, x: lax.expand_dims(x, (0, 2)), [F32]),
    "expand_dims_negative": (lambda lax, x: lax.expand_dims(x, (-1,)), [B]),
    "reshape": (lambda lax, x: lax.reshape(x, (3, 2)), [F32]),
    "reshape_dimensions": (lambda lax, x: lax.reshape(x, (3, 2), (1, 0)), [I32]),
    "reshape_identity": (lambda lax, x: lax.reshape(x, (2, 3)), [F32]),
    "reshape_weak": (lambda lax, x: lax.reshape(x, (1,)), [2.0]),
    "collapse": (lambda lax, x: lax.collapse(x, 0), [F32]),
    "transpose": (lambda lax, x: lax.transpose(x, (1, 0)), [F32]),
    "squeeze": (lambda lax, x: lax.squeeze(lax.reshape(x, (1, 2, 1, 3)), (2, 0)), [F32]),
    "rev": (lambda lax, x: lax.rev(x, (0, 1)), [I32]),
    "rev_none": (lambda lax, x: lax.rev(x, ()), [F32]),
    "slice": (lambda lax, x: lax.slice(x, (0, 1), (2, 3)), [F32]),
    "slice_strides": (lambda lax, x: lax.slice(x, (0, 0), (2, 3), (1, 2)), [F16]),
    "slice_in_dim": (lambda lax, x: lax.slice_in_dim(x, -2, None, 1, 1), [F32]),
    "index_in_dim": (lambda lax, x: lax.index_in_dim(x, -1, 1, False), [F32]),
    "dynamic_slice_static": (lambda lax, x: lax.dynamic_slice(x, (-1, 5), (1, 2)), [F32]),
    "dynamic_slice_traced": (lambda lax, x, i: lax.dynamic_slice(x, (i, 1), (1, 2)), [F32, np.int32(-1)]),
    "dynamic_slice_weak": (lambda lax, x, i: lax.dynamic_slice(x, (i, 1), (1, 2)), [F32, -1]),
    "dynamic_slice_int8": (lambda lax, x, i: lax.dynamic_slice(x, (i, i), (1, 2)), [F32, np.int8(-3)]),
    "dynamic_slice_uint8": (lambda lax, x, i: lax.dynamic_slice(x, (i, i), (1, 2)), [F32, np.uint8(200)]),
    "dynamic_slice_in_dim": (lambda lax, x, i: lax.dynamic_slice_in_dim(x, i, 2, 1), [F32, np.int32(2)]),
    "dynamic_index_in_dim": (lambda lax, x: lax.dynamic_index_in_dim(x, 1, 1, False), [F32]),
    "dynamic_update_slice": (lambda lax, x, u, i: lax.dynamic_update_slice(x, u, (i, 0)), [F32, F32[:1], np.int32(-1)]),
    "dynamic_update_slice_in_dim": (lambda lax, x, u: lax.dynamic_update_slice_in_dim(x, u, 2, 1), [F32, F32[:, :1]]),
    "dynamic_update_index_in_dim": (lambda lax, x, u: lax.dynamic_update_index_in_dim(x, u, 1, -1), [F32, F32[:, 0]]),
    "concatenate": (lambda lax, x, y: lax.concatenate([x, y, x], 1), [F32, F32[:, :1]]),
    "concatenate_single": (lambda lax, x: lax.concatenate([x], 0), [F32]),
    "pad": (lambda lax, x: lax.pad(x, np.float32(9), ((1, 2, 0), (0, -1, 1))), [F32]),
    "pad_negative": (lambda lax, x: lax.pad(x, 0, ((-1, 0, 2), (-2, -1, 1))), [I32]),
    "iota": (lambda lax: lax.iota(np.int32, 5), []),
    "broadcasted_iota": (lambda lax: lax.broadcasted_iota(np.float16, (2, 0, 3), 1), []),
    "split": (lambda lax, x: lax.split(x, (1, 2), -1), [F32]),
    "tile": (lambda lax, x: lax.tile(x, (2, 1)), [F32]),
    "stack": (lambda lax, x: lax.stack([x, x], -1), [F32]),
    "full": (lambda lax: lax.full((2, 3), 1.0), []),
    "full_dtype": (lambda lax: lax.full((2,), 1, np.float16), []),
    "full_traced": (lambda lax, x: lax.full((2, 3), x), [np.float32(3)]),
    "full_like": (lambda lax, x: lax.full_like(x, 2, np.int32, (4,)), [F32]),
    "reduce_sum": (lambda lax, x: lax.reduce_sum(x, (1,)), [F32]),
    "reduce_sum_int8": (lambda lax, x: lax.reduce_sum(x, (0, 1)), [I32.astype(np.int8) * 50]),
    "reduce_sum_none": (lambda lax, x: lax.reduce_sum(x, ()), [F32]),
    "reduce_max": (lambda lax, x: lax.reduce_max(x, (0,)), [F32]),
    "reduce_min": (lambda lax, x: lax.reduce_min(x, (1, 0)), [I32]),
    "reduce_prod": (lambda lax, x: lax.reduce_prod(x, (1,)), [F16]),
    "reduce_and": (lambda lax, x: lax.reduce_and(x, (1,)), [B]),
    "reduce_or": (lambda lax, x: lax.reduce_or(x, (0,)), [I32]),
    "reduce_xor": (lambda lax, x: lax.reduce_xor(x, (0,)), [B]),
    "reduce_max_empty": (lambda lax, x: lax.reduce_max(x, (0,)), [np.zeros((0, 2), np.int8)]),
    "reduce_monoid": (lambda lax, x: lax.reduce(x, -np.inf, lax.max, (0,)), [F32]),
    "reduce_monoid_weak": (lambda lax, x: lax.reduce(x, np.float32(0), lax.add, (0,)), [lambda lax: lax.full((2, 3), 1.0)]),
    "argmax": (lambda lax, x: lax.argmax(x, 1, np.int32), [np.array([[1.0, np.nan, 3.0], [2.0, 2.0, 1.0]], np.float32)]),
    "argmin": (lambda lax, x: lax.argmin(x, 0, np.uint8), [F32]),
    "dot": (lambda lax, x: lax.dot(x, lax.transpose(x, (1, 0))), [F32]),
    "dot_vector": (lambda lax, x: lax.dot(x[0], x[1]), [F32]),
    "dot_general_batch": (
        lambda lax, x: lax.dot_general(x, x, (((1,), (1,)), ((0,), (0,))), precision=lax.Precision.HIGHEST, preferred_element_type=np.float32),
        [F32],
    ),
    "dot_general_precision_pair": (lambda lax, x: lax.dot_general(x, x, (((1,), (1,)), ((), ())), precision=("high", "default")), [F16]),
    "dot_general_mixed": (lambda lax, x, y: lax.dot_general(x, y, (((1,), (1,)), ((), ()))), [I32.astype(np.int8), F16]),
    "dot_general_int": (lambda lax, x: lax.dot_general(x, x, (((0,), (0,)), ((), ())), preferred_element_type=np.int32), [(I32 * 60).astype(np.int8)]),
    "dot_general_to_int8": (lambda lax, x: lax.dot_general(x, x, (((1,), (1,)), ((), ())), preferred_element_type=np.int8), [F32 * 9]),
    "batch_matmul": (lambda lax, x: lax.batch_matmul(x[None], lax.transpose(x, (1, 0))[None]), [F32]),
}


OWN_PRIMITIVES = {p.name for m in (sp, rp) for p in vars(m).values() if isinstance(p, Primitive)}


def args_for(lax: Any, args: list[Any]) -> list[Any]:
    """The arguments, where a callable builds a value (a weak array, say) with that library."""
    return [a(lax) if callable(a) else a for a in args]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_printed_jaxpr_reads_back(name: str) -> None:
    program, args = PROGRAMS[name]
    closed = jax.make_jaxpr(lambda *a: program(lax, *a))(*args_for(lax, args))
    text = str(closed)
    read = parse_jaxpr(text)
    assert str(read) == text
    for ours, theirs in zip(closed.jaxpr.eqns, read.eqns if isinstance(read, Jaxpr) else read.jaxpr.eqns, strict=True):
        if ours.primitive.name in OWN_PRIMITIVES:  # the others' completers are their modules' business
            assert theirs.params == ours.params, ours.primitive.name


# ---------------------------------------------------------------------------
# The spec


SPEC_EXAMPLES = [(f"{page}:{name}", code) for page in ("structural.md", "slicing.md") for name, code in spec_examples(page)]


@pytest.mark.parametrize("name, code", SPEC_EXAMPLES, ids=[n for n, _ in SPEC_EXAMPLES])
def test_spec_example_runs(name: str, code: str) -> None:
    exec(compile(code, name, "exec"), {})


@pytest.mark.parametrize("page", ["structural.md", "slicing.md"])
def test_every_section_of_the_page_has_an_example(page: str) -> None:
    documented = {name for name, _ in spec_examples(page)}
    assert documented == set(re.findall(r"^## (\w+)$", (SPEC / page).read_text(), flags=re.M))


def test_rules_cite_spec_constraints() -> None:
    """Every constraint label a rule cites exists in that primitive's spec section."""
    for module, page in ((sp, "structural.md"), (sl, "slicing.md")):
        source = Path(str(module.__file__)).read_text()
        text = (SPEC / page).read_text()
        sections = dict(re.findall(r"^## (\w+)\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S))
        cited = set(re.findall(r"# (\w+) (C\d+)", source))
        assert cited
        for prim, label in cited:
            assert f"({label})" in sections[prim], f"{prim} {label} is cited but not in {page}"
