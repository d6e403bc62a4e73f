"""minijax.numpy shape ops, products and basic indexing against real JAX.

Same inputs to both libraries: the values, dtypes and weak types must agree,
and for a set of small programs so must the text of ``make_jaxpr``.

Run with the oracle environment (README.md, "More"):
    .venv-oracle/bin/python -m pytest tests/test_jnp_shape_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
import jax.numpy as jjnp  # noqa: E402

import minijax as mj  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402
from minijax import dtypes  # noqa: E402
from minijax.numpy.indexing import at_helper, getitem  # noqa: E402

pytestmark = pytest.mark.oracle

# Real JAX compiles every new shape it meets, so the heaviest properties run
# half the profile's examples (still scaling with HYPOTHESIS_PROFILE=thorough).
halved = settings(max_examples=max(1, settings.default.max_examples // 2))

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int32, np.float16, dtypes.bfloat16, np.float32)]


def host(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    return np.asarray(rng.integers(0 if np.dtype(dtype).kind == "u" else -9, 10, shape)).astype(dtype)


def to_jax(x: Any) -> Any:
    return jjnp.asarray(x) if isinstance(x, np.ndarray) else x


def to_mj(x: Any) -> Any:
    return mj.device_put(x) if isinstance(x, np.ndarray) else x


def same(ours: Any, theirs: Any, exact: bool = True) -> None:
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            same(o, t, exact)
        return
    assert (ours.shape, ours.dtype, ours.weak_type) == (theirs.shape, theirs.dtype, theirs.weak_type), (
        (ours.shape, ours.dtype, ours.weak_type),
        (theirs.shape, theirs.dtype, theirs.weak_type),
    )
    o, t = np.asarray(ours).astype(np.float64), np.asarray(theirs).astype(np.float64)
    if exact:
        np.testing.assert_array_equal(o, t)
    else:
        np.testing.assert_allclose(o, t, rtol=2e-2, atol=2e-2)


def both(call: Callable[[Any, Callable[[Any], Any]], Any], exact: bool = True) -> None:
    """``call(jnp_module, convert)`` in minijax and in JAX: same results, or the same error type."""
    try:
        ours = call(mjnp, to_mj)
    except Exception as e:
        with pytest.raises(type(e)):
            call(jjnp, to_jax)
        return
    same(ours, call(jjnp, to_jax), exact)


# A few fixed shapes rather than arbitrary ones: JAX then reuses what it compiled.
SHAPES = [(), (0,), (3,), (1, 3), (2, 3), (2, 0, 1), (2, 1, 3)]
shapes = st.sampled_from(SHAPES)
seeds = st.integers(0, 999)
operands = st.one_of(
    st.tuples(shapes, st.sampled_from(DTYPES)).map(lambda sd: ("array", sd)),
    st.sampled_from([("py", 2), ("py", -1.5), ("py", True)]),
)


def make(spec: Any, seed: int, shape: tuple[int, ...] | None = None) -> Any:
    kind, value = spec
    if kind == "py":
        return value
    s, dt = value
    return host(shape if shape is not None else s, dt, seed)


# ---------------------------------------------------------------------------
# Values, dtypes and weak types


@halved
@given(spec=st.tuples(shapes, st.sampled_from(DTYPES[::3])), seed=seeds, data=st.data())
def test_shape_functions_agree(spec, seed, data):
    shape, dt = spec
    a = host(shape, dt, seed)
    nd = a.ndim
    both(lambda m, c: m.reshape(c(a), (-1,)))
    both(lambda m, c: m.ravel(c(a), order="F"))
    both(lambda m, c: m.transpose(c(a)))
    both(lambda m, c: m.squeeze(c(a)))
    both(lambda m, c: m.expand_dims(c(a), (0, -1)))
    both(lambda m, c: m.broadcast_to(c(a), (2, *shape)))
    both(lambda m, c: m.atleast_3d(c(a)))
    both(lambda m, c: m.flip(c(a)))
    both(lambda m, c: m.tile(c(a), (2, 1)))
    r = data.draw(st.integers(0, 3))
    both(lambda m, c: m.repeat(c(a), r))
    if nd:
        counts = np.array(data.draw(st.lists(st.integers(0, 2), min_size=shape[0], max_size=shape[0])), np.int32)
        total = data.draw(st.integers(0, 6))
        both(lambda m, c: m.repeat(c(a), counts, axis=0, total_repeat_length=total))
        sections = data.draw(st.integers(1, 4))
        both(lambda m, c: m.array_split(c(a), sections, axis=-1))
        both(lambda m, c: m.moveaxis(c(a), 0, -1))
    if nd >= 2:
        k = data.draw(st.integers(-3, 3))
        both(lambda m, c: m.rot90(c(a), k))


@halved
@given(x=operands, y=operands, seed=seeds, data=st.data())
def test_promoting_functions_agree(x, y, seed, data):
    target = data.draw(st.sampled_from([(3,), (2, 3)]))
    a, b = make(x, seed, target), make(y, seed + 1, target[-1:])
    cond = host(target[-1:], np.bool_, seed + 2)
    both(lambda m, c: m.where(c(cond), c(a), c(b)))
    both(lambda m, c: m.select([c(cond)], [c(a)], c(b)))
    both(lambda m, c: m.clip(c(a), c(b)))
    both(lambda m, c: m.clip(c(a), max=c(b)))
    if not (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
        return
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        wide = np.broadcast_to(b, a.shape)
        both(lambda m, c: m.concatenate([c(a), c(wide)], axis=-1))
        both(lambda m, c: m.hstack([c(a), c(wide)]))
        both(lambda m, c: m.stack([c(a), c(wide)]))
    if a is not True and b is not True and not (isinstance(a, np.ndarray) and a.dtype == np.bool_ and isinstance(b, np.ndarray) and b.dtype != np.bool_):
        both(lambda m, c: m.dot(c(a), c(b)), exact=False)
        both(lambda m, c: m.outer(c(a), c(b)), exact=False)
        both(lambda m, c: m.inner(c(a), c(b)), exact=False)


@halved
@given(seed=seeds, data=st.data())
def test_matmul_agrees(seed, data):
    batch = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    ba = tuple(d if data.draw(st.booleans()) else 1 for d in batch[data.draw(st.integers(0, len(batch))):])
    bb = tuple(d if data.draw(st.booleans()) else 1 for d in batch)
    da, db = data.draw(st.sampled_from(DTYPES[1:])), data.draw(st.sampled_from(DTYPES[1:]))
    a = host(data.draw(st.sampled_from([(3,), ba + (2, 3)])), da, seed)
    b = host(data.draw(st.sampled_from([(3,), bb + (3, 2)])), db, seed + 1)
    both(lambda m, c: m.matmul(c(a), c(b)), exact=False)
    both(lambda m, c: m.tensordot(c(a), c(b), 1), exact=False)


# ---------------------------------------------------------------------------
# Indexing


@st.composite
def index_for(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A basic index; scalar booleans only without None (JAX itself departs from NumPy there)."""
    entries: list[Any] = []
    for size in shape[: draw(st.integers(0, len(shape)))]:
        if size and draw(st.booleans()):
            entries.append(draw(st.integers(-size, size - 1)))
        else:
            bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
            entries.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, -1, -3]))))
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), Ellipsis)
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), None)
    elif draw(st.integers(0, 3)) == 0:
        entries.insert(draw(st.integers(0, len(entries))), draw(st.booleans()))
    return tuple(entries)


@given(shape=shapes, dt=st.sampled_from(DTYPES), seed=seeds, data=st.data())
def test_indexing_agrees(shape, dt, seed, data):
    idx = data.draw(index_for(shape))
    a = host(shape, dt, seed)
    try:
        want = to_jax(a)[idx]
    except IndexError:
        # JAX rejects it (e.g. an integer index into a size-0 axis): so must minijax.
        with pytest.raises(IndexError):
            getitem(to_mj(a), idx)
        return
    same(getitem(to_mj(a), idx), want)
    # JAX's result shape, not NumPy's: JAX clamps out-of-range static integers.
    v = host(want.shape, dt, seed + 1)
    same(at_helper(to_mj(a))[idx].set(to_mj(v)), to_jax(a).at[idx].set(to_jax(v)))
    if dt != np.bool_:
        same(at_helper(to_mj(a))[idx].add(to_mj(v)), to_jax(a).at[idx].add(to_jax(v)))
        same(at_helper(to_mj(a))[idx].max(to_mj(v)), to_jax(a).at[idx].max(to_jax(v)))


@given(shape=st.sampled_from([s for s in SHAPES if s and 0 not in s]), seed=seeds, data=st.data())
def test_traced_integer_indices_agree(shape, seed, data):
    a = host(shape, np.float32, seed)
    ints = [data.draw(st.integers(-s - 2, s + 1)) for s in shape]
    k = data.draw(st.integers(1, len(shape)))

    def f(getter: Callable[[Any, Any], Any]) -> Callable[..., Any]:
        return lambda x, *i: getter(x, tuple(i) + (slice(None, None, -1),) * (len(shape) > k))

    ours = mj.jit(f(getitem))(to_mj(a), *[np.int32(i) for i in ints[:k]])
    theirs = jax.jit(f(lambda x, i: x[i]))(to_jax(a), *[np.int32(i) for i in ints[:k]])
    same(ours, theirs)


# ---------------------------------------------------------------------------
# Jaxpr text

F32_34 = np.zeros((3, 4), np.float32)
I32 = np.int32(1)


def _program(name: str, fn: Callable[[Any, Callable[[Any, Any], Any]], Callable[..., Any]], *args: Any) -> Any:
    return pytest.param(fn, args, id=name)


def _index(idx: Any) -> Callable[[Any, Callable[[Any, Any], Any]], Callable[..., Any]]:
    return lambda m, get: (lambda x: get(x, idx))


PROGRAMS = [
    _program("x[0]", _index(0), F32_34),
    _program("x[1:2]", _index(slice(1, 2)), F32_34),
    _program("x[::2]", _index(slice(None, None, 2)), F32_34),
    _program("x[::-1]", _index(slice(None, None, -1)), F32_34),
    _program("x[:,::-2]", _index((slice(None), slice(None, None, -2))), F32_34),
    _program("x[:,None]", _index((slice(None), None)), F32_34),
    _program("x[...,0]", _index((Ellipsis, 0)), F32_34),
    _program("x[None,1,None]", _index((None, 1, None)), F32_34),
    _program("x[::-1,2]", _index((slice(None, None, -1), 2)), F32_34),
    _program("x[10]", _index(10), F32_34),
    _program("x[i]", lambda m, get: (lambda x, i: get(x, i)), F32_34, I32),
    _program("x[i,1:3]", lambda m, get: (lambda x, i: get(x, (i, slice(1, 3)))), F32_34, I32),
    _program("x[...,i]", lambda m, get: (lambda x, i: get(x, (Ellipsis, i))), np.zeros((2, 3, 4), np.float32), I32),
    _program("x[i8]", lambda m, get: (lambda x, i: get(x, i)), F32_34, np.int8(1)),
    _program("where", lambda m, get: m.where, np.zeros((2, 3), bool), np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int32)),
    _program("where scalar", lambda m, get: (lambda c, x: m.where(c, x, 0)), np.zeros((2, 3), bool), np.zeros((2, 3), np.float32)),
    _program("where int cond", lambda m, get: (lambda c, x: m.where(c, x, 1.0)), np.zeros(3, np.int32), np.zeros((2, 3), np.float32)),
    _program("clip", lambda m, get: (lambda x: m.clip(x, 0, 1)), np.zeros((2, 3), np.int32)),
    _program("dot", lambda m, get: m.dot, np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32)),
    _program("dot weak", lambda m, get: (lambda x: m.dot(x, 2.0)), np.zeros(3, np.int32)),
    _program("matmul batched", lambda m, get: m.matmul, np.zeros((5, 2, 3), np.float32), np.zeros((5, 3, 4), np.float32)),
    _program("matmul broadcast", lambda m, get: m.matmul, np.zeros((5, 1, 2, 3), np.float32), np.zeros((7, 3, 4), np.float32)),
    _program("matmul unit batch", lambda m, get: m.matmul, np.zeros((1, 2, 3), np.float32), np.zeros((1, 3, 4), np.float32)),
    _program("matmul vector", lambda m, get: m.matmul, np.zeros(3, np.float32), np.zeros((5, 3, 4), np.float32)),
    _program("vdot", lambda m, get: m.vdot, np.zeros((2, 3), np.float32), np.zeros(6, np.int32)),
    _program("outer", lambda m, get: m.outer, np.zeros(2, np.float32), np.zeros(3, np.int32)),
    _program("tensordot", lambda m, get: (lambda a, b: m.tensordot(a, b)), np.zeros((2, 3, 4), np.float32), np.zeros((3, 4, 5), np.float32)),
    _program("reshape", lambda m, get: (lambda x: m.reshape(x, (3, -1))), np.zeros((2, 3), np.float32)),
    _program("reshape F", lambda m, get: (lambda x: m.reshape(x, (3, 2), order="F")), np.zeros((2, 3), np.float32)),
    _program("moveaxis", lambda m, get: (lambda x: m.moveaxis(x, 0, -1)), np.zeros((2, 3, 4), np.float32)),
    _program("squeeze", lambda m, get: m.squeeze, np.zeros((1, 3, 1), np.float32)),
    _program("expand_dims", lambda m, get: (lambda x: m.expand_dims(x, (0, -1))), np.zeros((2, 3), np.float32)),
    _program("broadcast_to", lambda m, get: (lambda x: m.broadcast_to(x, (4, 2, 3))), np.zeros((2, 3), np.float32)),
    _program("concatenate", lambda m, get: (lambda a, b: m.concatenate([a, b], axis=None)), np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int32)),
    _program("concatenate rows", lambda m, get: (lambda a: m.concatenate(a, axis=1)), np.zeros((2, 3, 4), np.float32)),
    _program("atleast_3d", lambda m, get: m.atleast_3d, np.zeros(3, np.float32)),
    _program("flip", lambda m, get: (lambda x: m.flip(x, (0, -1))), np.zeros((2, 3, 4), np.float32)),
    _program("rot90", lambda m, get: m.rot90, np.zeros((2, 3), np.float32)),
    _program("repeat", lambda m, get: (lambda x: m.repeat(x, 2, axis=0)), np.zeros((2, 3), np.float32)),
    _program("stack", lambda m, get: m.stack, np.zeros((2, 3), np.float32)),
    _program("tile", lambda m, get: (lambda x: m.tile(x, (2, 1, 2))), np.zeros((2, 3), np.float32)),
    _program("split", lambda m, get: (lambda x: m.split(x, 3, axis=1)), np.zeros((2, 3), np.float32)),
    _program("x[i,::-1]", lambda m, get: (lambda x, i: get(x, (i, slice(None, None, -1)))), np.zeros((3, 4, 5), np.float32), I32),
    _program("x[None,i,1:2,::-1]", lambda m, get: (lambda x, i: get(x, (None, i, slice(1, 2), slice(None, None, -1)))), np.zeros((3, 4, 5), np.float32), I32),
    _program("x[i,0] weak i", lambda m, get: (lambda x, i: get(x, (i, 0))), F32_34, 1),
    _program("x[np.array(1)]", _index(np.array(1)), np.zeros((4, 6, 5), np.float32)),
    _program("x[1:3:-1]", _index(slice(1, 3, -1)), F32_34),
    _program("x[0,None,::2]", _index((0, None, slice(None, None, 2))), F32_34),
    _program("where scalar cond", lambda m, get: (lambda c, x: m.where(c, x, 1)), np.bool_(True), np.zeros((2, 3), np.float32)),
    _program("broadcast_arrays", lambda m, get: m.broadcast_arrays, np.zeros((2, 3), np.float32), np.zeros(3, np.float32)),
    _program("column_stack", lambda m, get: (lambda a, b: m.column_stack([a, b])), np.zeros(3, np.float32), np.zeros((3, 2), np.float32)),
    _program("array_split", lambda m, get: (lambda x: m.array_split(x, 2, axis=1)), np.zeros((2, 3), np.float32)),
    _program("inner scalar", lambda m, get: m.inner, np.float32(1), np.zeros((4, 3), np.float32)),
    _program("matmul many batches", lambda m, get: m.matmul, np.zeros((3, 4, 1, 2, 3), np.float32), np.zeros((5, 3, 4), np.float32)),
    _program("tensordot pairs", lambda m, get: (lambda a, b: m.tensordot(a, b, ((0, 1), (1, 0)))), np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)),
    _program("rot90 k=3", lambda m, get: (lambda x: m.rot90(x, 3)), np.zeros((2, 3), np.float32)),
    _program("select int cond", lambda m, get: (lambda c, x: m.select([c], [x], 3)), np.zeros(3, np.int32), np.zeros(3, np.float32)),
    _program("select", lambda m, get: (lambda c, d, x, y: m.select([c, d], [x, y])), np.zeros(3, bool), np.zeros(3, bool), np.zeros(3, np.float32), np.zeros(3, np.float32)),
]


@pytest.mark.parametrize("build, args", PROGRAMS)
def test_jaxpr_text_matches_jax(build, args):
    ours = mj.make_jaxpr(build(mjnp, getitem))(*args)
    theirs = jax.make_jaxpr(build(jjnp, lambda x, i: x[i]))(*args)
    assert str(ours) == str(theirs)
