"""NumPy indexing (``x[idx]``), ``x.at[idx]``, ``jnp.take``, ``take_along_axis`` and ``put`` against NumPy.

Random index tuples mix integers (negative too), slices with random bounds
and steps, None, Ellipsis and scalar booleans (basic indexing), and integer
arrays, lists and boolean masks (advanced indexing: gathers and scatters);
each is checked eagerly, under jit, and with integers or arrays traced (JAX
clamps out-of-bounds reads; updates out of bounds are dropped by default).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import minijax as jax
from minijax import dtypes
from minijax.array import Array
from minijax.errors import NonConcreteBooleanIndexError
from minijax.numpy import indexing
from minijax.numpy.indexing import at_helper, getitem, put, put_along_axis, take, take_along_axis

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.uint8, np.float32, dtypes.bfloat16)]


def host(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    return np.asarray(rng.integers(0 if np.dtype(dtype).kind == "u" else -9, 10, shape)).astype(dtype)


def dev(x: np.ndarray) -> Array:
    return jax.device_put(x)


def check(out: Any, expected: np.ndarray, weak: bool = False) -> None:
    assert isinstance(out, Array)
    assert out.dtype == expected.dtype and out.weak_type == weak
    assert out.shape == expected.shape, (out.shape, expected.shape)
    np.testing.assert_array_equal(np.asarray(out), expected)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@st.composite
def basic_indices(draw: Any, shape: tuple[int, ...], bools: bool = True, out_of_range: bool = False) -> Any:
    """A random basic index for an array of ``shape`` (a tuple, or sometimes a single entry)."""
    entries: list[Any] = []
    for size in shape:
        kinds = ["slice", "full"] + (["int"] if size else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            lo, hi = (-size - 3, size + 3) if out_of_range else (-size, size - 1)
            entries.append(draw(st.integers(lo, hi)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2, -3]))
            entries.append(slice(draw(bound), draw(bound), step))
        else:
            entries.append(slice(None))
    if entries and draw(st.booleans()):
        i = draw(st.integers(0, len(entries)))
        j = draw(st.integers(i, len(entries)))
        entries[i:j] = [Ellipsis]
    elif entries:
        entries = entries[: draw(st.integers(0, len(entries)))]
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if bools and draw(st.integers(0, 4)) == 0:
        entries.insert(draw(st.integers(0, len(entries))), draw(st.booleans()))
    if len(entries) == 1 and draw(st.booleans()):
        return entries[0]
    return tuple(entries)


def index_case() -> Any:
    return shapes.flatmap(lambda s: st.tuples(st.just(s), basic_indices(s), st.sampled_from(DTYPES), st.integers(0, 999)))


# ---------------------------------------------------------------------------
# x[idx]


def _has_a_reference(idx: Any) -> bool:
    """False where NumPy and JAX 0.10.2 disagree, so that NumPy is no reference: a scalar boolean
    together with None (NumPy releases differ, JAX raises or places the axis its own way) or with
    an integer (NumPy counts the boolean as an advanced index when placing axes, JAX does not).
    tests/test_indexing_oracle.py compares those with JAX itself."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    has_bool = any(isinstance(e, bool) for e in entries)
    others = any(e is None or (isinstance(e, int) and not isinstance(e, bool)) for e in entries)
    return not (has_bool and others)


@given(case=index_case())
def test_basic_indexing_matches_numpy(case):
    shape, idx, dtype, seed = case
    assume(_has_a_reference(idx))
    a = host(shape, dtype, seed)
    check(getitem(dev(a), idx), a[idx])
    check(jax.jit(lambda v: getitem(v, idx))(dev(a)), a[idx])


def test_indexing_keeps_weak_type():
    out = jax.jit(lambda s: getitem(s, None))(2.0)
    check(out, np.array([2.0], np.float32), weak=True)


def _clamped(idx: Any, shape: tuple[int, ...]) -> Any:
    """NumPy's index with integers wrapped once and clamped into bounds, as JAX reads them."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    out, axis = [], 0
    n_consumed = sum(isinstance(e, (int, slice)) and not isinstance(e, bool) for e in entries)
    for e in entries:
        if e is Ellipsis:
            out.append(e)
            axis += len(shape) - n_consumed
        elif isinstance(e, bool) or e is None:
            out.append(e)
        elif isinstance(e, int):
            size = shape[axis]
            out.append(min(max(e + size if e < 0 else e, 0), size - 1))
            axis += 1
        else:
            out.append(e)
            axis += 1
    return tuple(out)


@given(shape=shapes.filter(lambda s: 0 not in s), data=st.data())
def test_traced_and_out_of_range_integers_are_clamped(shape, data):
    idx = data.draw(basic_indices(shape, bools=False, out_of_range=True))
    a = host(shape, np.int32, 0)
    want = a[_clamped(idx, shape)]
    check(getitem(dev(a), idx), want)
    entries = idx if isinstance(idx, tuple) else (idx,)
    positions = [i for i, e in enumerate(entries) if isinstance(e, int)]

    def f(v: Any, *ints: Any) -> Any:
        full = list(entries)
        for p, i in zip(positions, ints):
            full[p] = i
        return getitem(v, tuple(full))

    ints = [np.int32(entries[p]) for p in positions]
    check(jax.jit(f)(dev(a), *ints), want)
    check(jax.jit(f)(dev(a), *(np.int8(i) if -128 <= i < 128 else i for i in ints)), want)


def test_array_scalar_indices_read_dynamically():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(getitem(dev(a), dev(np.array(-1, np.int32))), a[-1])
    check(getitem(dev(a), (np.array(1), dev(np.array(2, np.uint8)))), a[1, 2])
    check(getitem(dev(a), (dev(np.array(True)), 1)), a[True, 1])


@pytest.mark.parametrize(
    "idx, error, message",
    [
        ((0, 0, 0), IndexError, "Too many indices: array is 2-dimensional, but 3 were indexed"),
        ((Ellipsis, Ellipsis), IndexError, r"an index can only have a single ellipsis \('...'\)"),
        (1.0, TypeError, "Indexer must have integer or boolean type, got indexer with type float64"),
        ("a", TypeError, "JAX does not support string indexing; got idx='a'"),
        ([0, 1], TypeError, "Using a non-tuple sequence for multidimensional indexing is not allowed"),
        ((slice(0, 1, 0),), ValueError, "slice step cannot be zero"),
        (np.array([0.5]), TypeError, "Indexer must have integer or boolean type, got indexer with type float64"),
        ((0, [0.5, 1]), TypeError, "got indexer with type float"),
        (np.array([True, False]), IndexError, r"boolean index did not match shape of indexed array in index 0: got \(2,\), expected \[3\]"),
        ((np.array([0, 1]), np.array([0, 1, 2])), ValueError, r"Incompatible shapes for broadcasting: shapes=\[\(2,\), \(3,\)\]"),
        ([True, False, True], TypeError, "Using a non-tuple sequence for multidimensional indexing is not allowed"),
        (np.float32(1), TypeError, "got indexer with type float32"),
        ((object(),), IndexError, "only integers, slices"),
    ],
)
def test_indexing_errors(idx, error, message):
    x = dev(np.zeros((3, 4), np.float32))
    with pytest.raises(error, match=message):
        getitem(x, idx)


def test_traced_index_errors():
    x = dev(np.zeros((3, 4), np.float32))
    with pytest.raises(IndexError, match="Slice entries must be static integers"):
        jax.jit(lambda v, i: getitem(v, slice(i, 3)))(x, 1)
    with pytest.raises(NonConcreteBooleanIndexError, match=r"Array boolean indices must be concrete; got bool\[\]"):
        jax.jit(lambda v, b: getitem(v, b))(x, np.bool_(True))
    with pytest.raises(TypeError, match="got indexer with type float32"):
        jax.jit(lambda v, i: getitem(v, i))(x, 1.5)
    with pytest.raises(IndexError, match="index is out of bounds for axis 0 with size 0"):
        getitem(dev(np.zeros((0, 2), np.float32)), 0)
    with pytest.raises(IndexError, match="Too many indices: array is 0-dimensional, but 1 were indexed"):
        getitem(dev(np.float32(1)), 0)
    assert issubclass(NonConcreteBooleanIndexError, IndexError)


# ---------------------------------------------------------------------------
# x.at[idx]


def _numpy_update(a: np.ndarray, idx: Any, v: np.ndarray, method: str) -> np.ndarray:
    out = a.copy()
    if method == "set":
        out[idx] = v
    elif method == "add":
        out[idx] = out[idx] + v
    elif method == "multiply":
        out[idx] = out[idx] * v
    elif method == "min":
        out[idx] = np.minimum(out[idx], v)
    elif method == "max":
        out[idx] = np.maximum(out[idx], v)
    elif method == "subtract":
        out[idx] = out[idx] - v
    return out


@given(case=index_case(), method=st.sampled_from(["set", "add", "multiply", "min", "max", "subtract"]), data=st.data())
def test_at_updates_match_numpy(case, method, data):
    shape, idx, dtype, seed = case
    assume(_has_a_reference(idx))
    if dtype == np.bool_ and method in ("add", "multiply", "subtract"):
        dtype = np.dtype(np.int32)
    a = host(shape, dtype, seed)
    target = a[idx].shape
    vshape = data.draw(st.sampled_from([target, (), tuple(d if i % 2 else 1 for i, d in enumerate(target))]))
    v = host(vshape, dtype, seed + 1)
    want = _numpy_update(a, idx, v, method)
    check(getattr(at_helper(dev(a))[idx], method)(dev(v)), want)
    check(jax.jit(lambda x, u: getattr(at_helper(x)[idx], method)(u))(dev(a), dev(v)), want)
    check(at_helper(dev(a))[idx].get(), a[idx])


def test_at_examples_from_the_docs():
    x = dev(np.arange(5, dtype=np.float32))
    check(at_helper(x)[0].set(5), np.array([5, 1, 2, 3, 4], np.float32))
    check(at_helper(x)[1:3].add(1), np.array([0, 2, 3, 3, 4], np.float32))
    check(at_helper(x)[::2].mul(2), np.array([0, 1, 4, 3, 8], np.float32))
    check(at_helper(x)[::-2].set(dev(np.array([7, 8, 9], np.float32))), np.array([9, 1, 8, 3, 7], np.float32))
    check(at_helper(x)[1:].divide(2), np.array([0, 0.5, 1, 1.5, 2], np.float32))
    check(at_helper(x)[...].power(2), np.arange(5, dtype=np.float32) ** 2)
    check(at_helper(x)[2:4].apply(lambda v: v * 10), np.array([0, 1, 20, 30, 4], np.float32))
    i = dev(np.arange(4, dtype=np.int32))
    check(at_helper(i)[1].divide(2), np.array([0, 0.5, 2, 3], np.float32))
    check(at_helper(i)[3].power(2), np.array([0, 1, 2, 9], np.int32))
    check(at_helper(i)[dev(np.array(1, np.int32))].set(7), np.array([0, 7, 2, 3], np.int32))
    check(at_helper(i)[True].set(1), np.ones(4, np.int32))
    check(at_helper(i)[False].set(1), np.arange(4, dtype=np.int32))
    assert repr(at_helper(i)).startswith("_IndexUpdateHelper(Array(")
    assert repr(at_helper(i)[0]).endswith(", 0)")


def test_at_out_of_bounds_modes():
    x = dev(np.arange(4, dtype=np.float32))
    check(at_helper(x)[10].set(1), np.arange(4, dtype=np.float32))  # dropped, as JAX's default
    check(at_helper(x)[-10].add(1), np.arange(4, dtype=np.float32))
    check(at_helper(x)[-5].set(9, mode="clip"), np.array([9, 1, 2, 3], np.float32))
    check(at_helper(x)[10].get(), np.array(3, np.float32))
    check(at_helper(x)[10].get(mode="fill"), np.array(np.nan, np.float32))
    check(at_helper(x)[10].get(mode="fill", fill_value=-1), np.array(-1, np.float32))
    i = dev(np.arange(3, dtype=np.int32))
    check(at_helper(i)[5].get(mode="fill"), np.array(np.iinfo(np.int32).min, np.int32))
    check(at_helper(i)[1].get(mode="fill"), np.array(1, np.int32))
    with pytest.raises(ValueError, match='Unknown gather mode "bogus"'):
        at_helper(x)[0].set(1, mode="bogus")


def test_at_dtype_and_shape_rules():
    i = dev(np.arange(3, dtype=np.int32))
    with pytest.warns(FutureWarning, match="cannot safely cast value from dtype=float32 to dtype=int32"):
        out = at_helper(i)[0].set(2.7)
    check(out, np.array([2, 1, 2], np.int32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(at_helper(dev(np.zeros(2, np.float32)))[0].set(1), np.array([1, 0], np.float32))
    with pytest.raises(ValueError, match=r"Cannot broadcast to shape with fewer dimensions: arr_shape=\(1,\) shape=\(\)"):
        at_helper(i)[1].set([1])
    with pytest.raises(ValueError, match="Incompatible types for broadcasting"):
        at_helper(i)[0:2].set(dev(np.ones(3, np.int32)))
    check(at_helper(i)[None].set(7), np.full(3, 7, np.int32))


def test_at_with_traced_and_array_indices():
    x = dev(np.zeros(4, np.float32))
    check(jax.jit(lambda v, i: at_helper(v)[i].set(1.0))(x, 1), np.array([0, 1, 0, 0], np.float32))
    check(jax.jit(lambda v, i: at_helper(v)[i].set(1.0))(x, 9), np.zeros(4, np.float32))  # dropped
    check(at_helper(x)[np.array([0, 1, 1])].add(1.0), np.array([1, 2, 0, 0], np.float32))  # duplicates accumulate
    check(at_helper(x)[np.array([0, 1])].get(), np.zeros(2, np.float32))
    check(jax.jit(lambda v, i: at_helper(v)[i].get())(x, 2), np.zeros((), np.float32))
    check(at_helper(x)[np.array([5, 1])].get(mode="fill", fill_value=3), np.array([3, 0], np.float32))
    check(at_helper(x)[np.array([True, False, True, False])].add(2.0), np.array([2, 0, 2, 0], np.float32))
    check(at_helper(x)[np.array([-1])].set(1.0, wrap_negative_indices=False), np.zeros(4, np.float32))  # out of bounds
    check(at_helper(x)[np.array([-1])].get(wrap_negative_indices=False), np.zeros(1, np.float32))  # clamped to 0
    with pytest.raises(TypeError, match="unexpected keyword"):
        at_helper(x)[0].get(foo=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="`out_sharding` argument of set only supports"):
        at_helper(x)[0].set(1.0, out_sharding=object())


def test_module_exports():
    assert set(indexing.__all__) == {"put", "put_along_axis", "take", "take_along_axis"}


def test_arrays_and_tracers_index_through_this_module():
    import minijax.numpy as jnp

    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = dev(a)
    check(x[1, ::-2, None], a[1, ::-2, None])
    check(jax.jit(lambda v, i: v[i, 1:])(x, -1), a[-1, 1:])
    check(x.at[0, 1].set(7.0), _numpy_update(a, (0, 1), np.float32(7), "set"))
    check(jax.jit(lambda v: v.at[..., ::3].add(1.0))(x), _numpy_update(a, (Ellipsis, slice(None, None, 3)), np.float32(1), "add"))
    check(jnp.arange(5.0).at[1:3].mul(2.0), np.array([0, 2, 4, 3, 4], np.float32))
    check(x[np.array([1, 0]), :, np.array([[3], [0]])], a[np.array([1, 0]), :, np.array([[3], [0]])])
    jaxpr = jax.make_jaxpr(lambda v: v[0])(a)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["slice", "squeeze"]


# ---------------------------------------------------------------------------
# Advanced indexing: integer arrays, lists and boolean masks (gathers and scatters)


ARRAY_SHAPES = [(2,), (3,), (2, 3), (1,), ()]


@st.composite
def advanced_indices(draw: Any, shape: tuple[int, ...], in_bounds: bool = True) -> tuple[Any, ...]:
    """A random index mixing basic entries with integer arrays (broadcastable together), lists and a mask."""
    base = draw(st.sampled_from(ARRAY_SHAPES))
    entries: list[Any] = []
    used_mask = False
    axis = 0
    while axis < len(shape):
        size = shape[axis]
        kinds = ["slice", "full", "array", "array"] + (["int"] if size else []) + (["list"] if size and not used_mask else [])
        if not used_mask and axis == 0 and draw(st.integers(0, 3)) == 0:
            kinds = ["mask"]
        kind = draw(st.sampled_from(kinds))
        if kind == "mask":  # a mask over the leading axes: only basic entries may follow
            n = draw(st.integers(1, len(shape)))
            entries.append(draw(st.lists(st.booleans(), min_size=int(np.prod(shape[:n])), max_size=int(np.prod(shape[:n])))))
            entries[-1] = np.array(entries[-1], bool).reshape(shape[:n])
            used_mask = True
            axis += n
            continue
        lo, hi = (-size, size - 1) if in_bounds else (-size - 3, size + 2)
        if kind == "int":
            entries.append(draw(st.integers(lo, hi)))
        elif kind == "list":  # a 1-d array as a list: as long as the arrays' last axis (they broadcast)
            length = base[-1] if base else draw(st.integers(1, 3))
            entries.append(draw(st.lists(st.integers(lo, hi), min_size=length, max_size=length)))
            if not base:
                base = (length,)
        elif kind == "array" and size and not used_mask:
            cut = draw(st.integers(0, len(base)))
            ashape = tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in base[cut:])
            entries.append(np.asarray(draw(st.lists(st.integers(lo, hi), min_size=int(np.prod(ashape)),
                                                    max_size=int(np.prod(ashape))))).reshape(ashape).astype(np.int32))  # fmt: skip
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-size - 1, size + 1))
            entries.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, -1, -2]))))
        else:
            entries.append(slice(None))
        axis += 1
    if entries and draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if draw(st.integers(0, 3)) == 0:
        i = draw(st.integers(0, len(entries)))
        if all(isinstance(e, slice) and e == slice(None) for e in entries[i:]):
            entries[i:] = [Ellipsis]
    return tuple(entries)


def advanced_case() -> Any:
    side_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
    return side_shapes.flatmap(lambda s: st.tuples(st.just(s), advanced_indices(s), st.sampled_from(DTYPES), st.integers(0, 999)))


def _numpy_index(idx: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(np.asarray(e) if isinstance(e, list) else e for e in idx)


@given(case=advanced_case())
def test_advanced_indexing_matches_numpy(case):
    shape, idx, dtype, seed = case
    a = host(shape, dtype, seed)
    want = a[_numpy_index(idx)]
    check(getitem(dev(a), idx), want)
    # The integer arrays traced (the masks stay concrete: their True count is the shape).
    positions = [i for i, e in enumerate(idx) if isinstance(e, np.ndarray) and e.dtype != bool]

    def f(v: Any, *arrays: Any) -> Any:
        full = list(idx)
        for p, arr in zip(positions, arrays):
            full[p] = arr
        return getitem(v, tuple(full))

    check(jax.jit(f)(dev(a), *[idx[p] for p in positions]), want)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_out_of_bounds_array_indices_clamp(shape, data):
    idx = data.draw(advanced_indices(shape, in_bounds=False))
    a = host(shape, np.int32, 1)
    clamped = []
    axis = 0
    for e in idx:
        if e is None or e is Ellipsis or isinstance(e, slice):
            clamped.append(e)
            axis += 0 if e is None else (len(shape) - sum(x is not None and x is not Ellipsis for x in idx) + 1 if e is Ellipsis else 1)
        elif isinstance(e, np.ndarray) and e.dtype == bool:
            clamped.append(e)
            axis += e.ndim
        else:
            n = shape[axis]
            v = np.asarray(e)
            clamped.append(np.clip(np.where(v < 0, v + n, v), 0, n - 1))
            axis += 1
    check(getitem(dev(a), idx), a[tuple(clamped)])


def _ufunc_update(a: np.ndarray, idx: tuple[Any, ...], v: np.ndarray, method: str) -> np.ndarray:
    out = a.copy()
    ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum, "subtract": np.subtract}[method]
    ufunc.at(out, _numpy_index(idx), np.broadcast_to(v, a[_numpy_index(idx)].shape))
    return out


@given(case=advanced_case(), method=st.sampled_from(["add", "multiply", "min", "max", "subtract", "set"]), data=st.data())
def test_at_updates_with_arrays_match_numpy(case, method, data):
    shape, idx, dtype, seed = case
    if dtype == np.bool_ or (method == "set" and _has_repeats(idx, shape)):
        dtype = np.dtype(np.int32)  # set: colliding updates win in an unspecified order; bool: no add/multiply
    if method == "set" and _has_repeats(idx, shape):
        method = "add"
    a = host(shape, dtype, seed)
    target = a[_numpy_index(idx)].shape
    v = host(data.draw(st.sampled_from([target, ()])), dtype, seed + 1)
    if method == "set":
        want = a.copy()
        want[_numpy_index(idx)] = v
    else:
        with np.errstate(over="ignore"):
            want = _ufunc_update(a, idx, v, method)
    check(getattr(at_helper(dev(a))[idx], method)(dev(v)), want)
    check(jax.jit(lambda x, u: getattr(at_helper(x)[idx], method)(u))(dev(a), dev(v)), want)


def _has_repeats(idx: tuple[Any, ...], shape: tuple[int, ...]) -> bool:
    """Whether ``x[idx] = v`` writes an element twice."""
    marks = np.arange(int(np.prod(shape))).reshape(shape)
    picked = marks[_numpy_index(idx)].ravel()
    return len(set(picked.tolist())) != picked.size


def test_advanced_placement_rules():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = dev(a)
    i, j = np.array([0, 2]), np.array([[1], [3]])
    for idx in [(i, j), (slice(None), i, j), (i, slice(None), j), (i, 1), (1, slice(None), i), (None, i, None, j),
                (Ellipsis, i), (i, Ellipsis, j), (np.array(1), i)]:  # fmt: skip
        check(getitem(x, idx), a[idx])  # adjacent arrays keep their place; separated ones go first
    check(getitem(x, (True, i)), a[True, i])
    check(getitem(x, (a[:, 0, 0] > 10, 2)), a[a[:, 0, 0] > 10, 2])


def test_masks_and_empty_indices():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = dev(a)
    check(getitem(x, a > 5), a[a > 5])
    check(getitem(x, dev(a % 2 == 0)), a[a % 2 == 0])  # a concrete Array mask
    check(getitem(x, np.zeros((3, 4), bool)), a[np.zeros((3, 4), bool)])
    check(getitem(x, np.array([], np.int32)), a[np.array([], np.int32)])
    check(getitem(x, (slice(None), [])), np.zeros((3, 0), np.int32))
    with pytest.raises(NonConcreteBooleanIndexError, match=r"Array boolean indices must be concrete; got bool\[3,4\]"):
        jax.jit(lambda v: getitem(v, v > 5))(x)
    with pytest.raises(NonConcreteBooleanIndexError):
        jax.jit(lambda v: at_helper(v)[v > 5].set(0))(x)
    check(jax.jit(lambda v: jax.numpy.where(v > 5, 0, v))(x), np.where(a > 5, 0, a))  # the traceable alternative


def test_indexing_jaxprs():
    x, i = np.zeros((4, 5), np.float32), np.array([1, 2], np.int32)
    names = lambda f, *args: [e.primitive.name for e in jax.make_jaxpr(f)(*args).eqns]  # noqa: E731
    assert names(lambda v, k: v[k], x, i) == ["lt", "add", "select_n", "broadcast_in_dim", "gather"]
    # A traced integer: a dynamic_slice whose starts (the static 0 too) wrap when negative.
    wrap = ["lt", "add", "select_n"]
    assert names(lambda v, k: v[k[0]], x, i) == ["slice", "squeeze", *wrap, *wrap, "dynamic_slice", "squeeze"]
    assert names(lambda v, k: v.at[k].add(1.0), x, i)[-1] == "scatter-add"
    assert names(lambda v: v[np.array([True, False, True, False])], x)[-1] == "gather"


def test_grad_and_vmap_through_indexing():
    a = np.arange(6, dtype=np.float32)
    idx = np.array([1, 1, 4], np.int32)
    g = jax.grad(lambda v: (getitem(v, idx) ** 2).sum())(dev(a))
    check(g, np.array([0, 4, 0, 0, 8, 0], np.float32))
    g = jax.grad(lambda v: at_helper(v)[idx].add(v[:3]).sum())(dev(a))
    check(g, np.array([2, 2, 2, 1, 1, 1], np.float32))
    g = jax.grad(lambda u: at_helper(jax.numpy.zeros(6))[np.array([0, 3])].set(u).sum())(dev(np.ones(2, np.float32)))
    check(g, np.ones(2, np.float32))
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    picks = np.array([[0, 3], [1, 1], [2, 0]], np.int32)
    check(jax.vmap(lambda r, p: getitem(r, p))(dev(rows), dev(picks)), np.take_along_axis(rows, picks, 1))
    check(jax.vmap(lambda r, p: at_helper(r)[p].add(1.0))(dev(rows), dev(picks)),
          rows + np.array([[1, 0, 0, 1], [0, 2, 0, 0], [1, 0, 1, 0]], np.float32))  # fmt: skip


# ---------------------------------------------------------------------------
# take, take_along_axis, put, put_along_axis


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_take_matches_numpy(shape, data):
    a = host(shape, np.float32, 2)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    n = a.size if axis is None else shape[axis]
    ishape = data.draw(st.sampled_from([(), (3,), (2, 2)]))
    mode = data.draw(st.sampled_from(["clip", "wrap", "fill", None]))
    lo, hi = (-n, n - 1) if mode in ("fill", None) else (-2 * n, 2 * n)
    ind = np.asarray(np.random.default_rng(len(shape)).integers(lo, hi, ishape, endpoint=True), np.int32)
    np_mode = "raise" if mode in ("fill", None) else mode
    check(take(dev(a), dev(ind), axis=axis, mode=mode), np.take(a, ind, axis=axis, mode=np_mode))


def test_take_options():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = dev(a)
    out = np.asarray(take(x, np.array([0, 5, -1]), axis=1))
    assert np.isnan(out[:, 1]).all() and out[:, [0, 2]].tolist() == [[0, 3], [4, 7], [8, 11]]
    check(take(x, np.array([0, 5]), axis=0, fill_value=-1.0), np.array([[0, 1, 2, 3], [-1, -1, -1, -1]], np.float32))
    check(take(x, np.array([[2, 0]]), axis=-1, unique_indices=True, indices_are_sorted=False), a[:, [[2, 0]]])
    check(take(dev(np.zeros(0, np.float32)), np.array([], np.int32)), np.zeros(0, np.float32))
    with pytest.raises(IndexError, match=r"Cannot do a non-empty jnp.take\(\) from an empty axis."):
        take(dev(np.zeros(0, np.float32)), np.array([0]))
    with pytest.raises(NotImplementedError, match="The 'raise' mode to jnp.take is not supported."):
        take(x, np.array([0]), mode="raise")
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.take is not supported."):
        take(x, np.array([0]), out=np.zeros(1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Invalid mode 'bad' for np.take"):
        take(x, np.array([0]), mode="bad")


def test_take_along_axis():
    a = np.array([[5, 3, 4], [2, 7, 6]], np.float32)
    x = dev(a)
    order = np.argsort(a, axis=1)
    check(take_along_axis(x, order, axis=1), np.take_along_axis(a, order, 1))
    check(take_along_axis(x, np.array([[1, 0, 1]]), axis=0), np.take_along_axis(a, np.array([[1, 0, 1]]), 0))
    check(take_along_axis(x, np.array([[0], [-1]]), axis=1), np.array([[5], [6]], np.float32))
    out = np.asarray(take_along_axis(x, np.array([[0, 5]]), axis=1))
    assert out[0, 0] == 5 and np.isnan(out[0, 1]) and out.shape == (2, 2)
    check(take_along_axis(x, np.array([[0, 5]]), axis=1, mode="clip"), np.array([[5, 4], [2, 6]], np.float32))
    check(take_along_axis(x, np.array([[0, 5]]), axis=1, fill_value=0.0), np.array([[5, 0], [2, 0]], np.float32))
    check(take_along_axis(x, np.array([[2], [1]]), axis=1, mode="one_hot"), np.array([[4], [7]], np.float32))
    check(take_along_axis(x, np.array([5, 0]), axis=None), np.array([6, 5], np.float32))
    check(jax.jit(lambda v, i: take_along_axis(v, i, axis=1))(x, order), np.take_along_axis(a, order, 1))
    with pytest.raises(ValueError, match="indices and arr must have the same number of dimensions; 1 vs. 2"):
        take_along_axis(x, np.array([0]), axis=0)
    with pytest.raises(TypeError, match="take_along_axis indices must be of integer type, got float32"):
        take_along_axis(x, np.zeros((1, 1), np.float32), axis=0)


def test_put_and_put_along_axis():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = dev(a)
    want = a.copy()
    np.put(want, [0, 5, 11, 0], [1, 2, 3, 4])
    check(put(x, np.array([0, 5, 20, -15]), np.array([1.0, 2.0, 3.0, 4.0]), inplace=False), want)  # clipped, as JAX
    want = a.copy()
    np.put(want, [0, 5, 20], 9, mode="clip")
    check(put(x, np.array([0, 5, 20]), 9.0, mode="clip", inplace=False), want)
    want = a.copy()
    np.put(want, [0, -1, 13], [1, 2, 3], mode="wrap")
    check(put(x, np.array([0, -1, 13]), np.array([1.0, 2.0, 3.0]), mode="wrap", inplace=False), want)
    with pytest.raises(ValueError, match="jax.numpy.put cannot modify arrays in-place"):
        put(x, np.array([0]), 1.0)
    with pytest.raises(NotImplementedError, match="The 'raise' mode to jnp.put is not supported."):
        put(x, np.array([0]), 1.0, mode="raise", inplace=False)
    idx = np.array([[0], [2], [3]])
    want = a.copy()
    np.put_along_axis(want, idx, 9, axis=1)
    check(put_along_axis(x, idx, 9.0, axis=1, inplace=False), want)
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        put_along_axis(x, idx, 9.0, axis=1)
