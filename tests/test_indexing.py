"""Basic indexing (``x[idx]``) and ``x.at[idx]`` against NumPy.

Random index tuples mix integers (negative too), slices with random bounds
and steps, None, Ellipsis and scalar booleans; each is checked eagerly, under
jit, and with integers traced (JAX clamps those into bounds).
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
from minijax.numpy import indexing
from minijax.numpy.indexing import NonConcreteBooleanIndexError, at_helper, getitem

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
    """False for a scalar boolean together with None: NumPy releases disagree on
    where the new axes go and JAX 0.10.2 raises, so there is nothing to match."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    return not (any(e is None for e in entries) and any(isinstance(e, bool) for e in entries))


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
        (np.array([0, 1]), NotImplementedError, r"advanced \(integer or boolean array\) indexing is not supported"),
        ((0, [0, 1]), NotImplementedError, "advanced"),
        (np.array([True, False, True]), NotImplementedError, "advanced"),
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


def test_at_needs_scatter_for_traced_or_array_indices():
    x = dev(np.zeros(4, np.float32))
    with pytest.raises(NotImplementedError, match=r"x\.at\[\.\.\.\]\.set with traced integer indices.*scatter-based updates arrive with a later issue"):
        jax.jit(lambda v, i: at_helper(v)[i].set(1.0))(x, 1)
    with pytest.raises(NotImplementedError, match=r"x\.at\[\.\.\.\]\.add with array \(advanced\) indices"):
        at_helper(x)[np.array([0, 1])].add(1.0)
    with pytest.raises(NotImplementedError, match="advanced"):
        at_helper(x)[np.array([0, 1])].get()
    check(jax.jit(lambda v, i: at_helper(v)[i].get())(x, 2), np.zeros((), np.float32))
    with pytest.raises(TypeError, match="unexpected keyword"):
        at_helper(x)[0].get(foo=1)  # type: ignore[call-arg]


def test_module_exports():
    assert set(indexing.__all__) == {"NonConcreteBooleanIndexError", "at_helper", "getitem"}


def test_arrays_and_tracers_index_through_this_module():
    import minijax.numpy as jnp

    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = dev(a)
    check(x[1, ::-2, None], a[1, ::-2, None])
    check(jax.jit(lambda v, i: v[i, 1:])(x, -1), a[-1, 1:])
    check(x.at[0, 1].set(7.0), _numpy_update(a, (0, 1), np.float32(7), "set"))
    check(jax.jit(lambda v: v.at[..., ::3].add(1.0))(x), _numpy_update(a, (Ellipsis, slice(None, None, 3)), np.float32(1), "add"))
    check(jnp.arange(5.0).at[1:3].mul(2.0), np.array([0, 2, 4, 3, 4], np.float32))
    with pytest.raises(NotImplementedError, match="advanced"):
        x[np.array([0, 1])]
    jaxpr = jax.make_jaxpr(lambda v: v[0])(a)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["slice", "squeeze"]
