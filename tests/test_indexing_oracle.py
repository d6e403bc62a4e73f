"""Indexing, ``.at`` updates, take/take_along_axis/put and the gather/scatter primitives against real JAX.

Random index expressions (integers in and out of bounds, slices with steps,
None, Ellipsis, integer arrays and lists that broadcast, boolean masks and
scalar booleans) read with ``x[idx]`` and ``x.at[idx].get(mode=...)`` and
written with ``.at[idx].set/add/min/...`` (duplicates and out-of-bounds
updates included) must give JAX's values, dtypes and weak types, or raise
JAX's error type. The primitives' random cases (the samplers) must agree with
``jax.lax.gather`` / ``scatter*``. For a fixed list of programs the text of
``make_jaxpr`` must be JAX's.

Run with the oracle environment (README.md, "More"):
    .venv-oracle/bin/python -m pytest tests/test_indexing_oracle.py
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
import jax.numpy as jjnp  # noqa: E402

import minijax as mj  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402
from minijax import dtypes, lax as mlax  # noqa: E402
from minijax.config import enable_x64  # noqa: E402
from minijax.numpy import indexing as mix  # noqa: E402
from minijax.primitives.indexing import GatherScatterMode  # noqa: E402
from minijax.testing.samplers import SAMPLERS  # noqa: E402
from minijax.testing.strategies import seeds  # noqa: E402

pytestmark = pytest.mark.oracle

# Real JAX compiles each new shape: the heaviest properties run half the profile's examples.
halved = settings(max_examples=max(1, settings.default.max_examples // 2))

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int32, np.float16, dtypes.bfloat16, np.float32)]

MJ = SimpleNamespace(jax=mj, jnp=mjnp, lax=mlax, take=mix.take, take_along_axis=mix.take_along_axis, put=mix.put)
JX = SimpleNamespace(jax=jax, jnp=jjnp, lax=jax.lax, take=jjnp.take, take_along_axis=jjnp.take_along_axis, put=jjnp.put)


def host(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    return np.asarray(rng.integers(0 if np.dtype(dtype).kind == "u" else -9, 10, shape)).astype(dtype)


def same(ours: Any, theirs: Any) -> None:
    assert (ours.shape, ours.dtype, ours.weak_type) == (theirs.shape, theirs.dtype, theirs.weak_type), (
        (ours.shape, ours.dtype, ours.weak_type),
        (theirs.shape, theirs.dtype, theirs.weak_type),
    )
    o, t = np.asarray(ours), np.asarray(theirs)
    if o.dtype.kind == "V" or o.dtype == dtypes.bfloat16:  # ml_dtypes floats: compare as float32 (NaN == NaN)
        o, t = o.astype(np.float32), t.astype(np.float32)
    np.testing.assert_array_equal(o, t)


def outcome(f: Callable[[], Any]) -> Any:
    """f's result, or the type of the error it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f()
    except Exception as e:  # the error type is what is compared
        return type(e)


def same_outcome(ours: Callable[[], Any], theirs: Callable[[], Any]) -> None:
    o, t = outcome(ours), outcome(theirs)
    if isinstance(t, type):
        assert isinstance(o, type), f"JAX raised {t.__name__}, minijax returned {o!r}"
        # Same kind of error: the class names agree (minijax's classes mirror JAX's).
        assert o.__name__ == t.__name__ or issubclass(o, t.__mro__[1]), (o, t)
        return
    assert not isinstance(o, type), f"minijax raised {o.__name__}, JAX returned {t!r}"
    same(o, t)


# ---------------------------------------------------------------------------
# Random index expressions


@st.composite
def index_expressions(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """Any mix of entries JAX accepts (and a few it refuses): as a tuple (rarely a bare entry)."""
    base = draw(st.sampled_from([(), (2,), (3,), (2, 3)]))
    entries: list[Any] = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "full", "array", "list", "mask", "none", "bool"]))
        lo, hi = -size - 2, size + 1  # out of bounds now and then
        if kind == "int":
            entries.append(draw(st.integers(lo, hi)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(lo, hi))
            entries.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3, -1, -2]))))
        elif kind == "array":
            cut = draw(st.integers(0, len(base)))
            ashape = tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in base[cut:])
            values = draw(st.lists(st.integers(lo, hi), min_size=int(np.prod(ashape)), max_size=int(np.prod(ashape))))
            dtype = draw(st.sampled_from([np.int32, np.int8, np.uint8]))
            entries.append(np.asarray(values).reshape(ashape).astype(dtype) if dtype != np.uint8 else
                           np.abs(np.asarray(values)).reshape(ashape).astype(dtype))  # fmt: skip
        elif kind == "list":
            n = base[-1] if base else draw(st.integers(1, 2))
            entries.append(draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)))
        elif kind == "mask":
            entries.append(np.asarray(draw(st.lists(st.booleans(), min_size=size, max_size=size)), bool))
        elif kind == "none":
            entries.append(None)
            entries.append(slice(None))
        elif kind == "bool":
            entries.append(draw(st.booleans()))
            entries.append(slice(None))
        else:
            entries.append(slice(None))
    if entries and draw(st.booleans()):
        i = draw(st.integers(0, len(entries)))
        j = draw(st.integers(i, len(entries)))
        entries[i:j] = [Ellipsis]
    elif entries:
        entries = entries[: draw(st.integers(0, len(entries)))]
    if len(entries) == 1 and draw(st.booleans()):
        return entries[0]  # type: ignore[no-any-return]
    return tuple(entries)


def cases() -> Any:
    shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
    return shapes.flatmap(lambda s: st.tuples(st.just(s), index_expressions(s), st.sampled_from(DTYPES), st.integers(0, 99)))


@halved
@given(case=cases(), mode=st.sampled_from([None, "clip", "fill", "promise_in_bounds"]))
def test_reads_match_jax(case, mode):
    shape, idx, dtype, seed = case
    a = host(shape, dtype, seed)
    same_outcome(lambda: mj.device_put(a)[idx], lambda: jjnp.asarray(a)[idx])
    same_outcome(lambda: mix.at_helper(mj.device_put(a))[idx].get(mode=mode),
                 lambda: jjnp.asarray(a).at[idx].get(mode=mode))  # fmt: skip


def _unique_targets(a: np.ndarray, idx: Any) -> bool:
    try:
        marks = np.arange(a.size).reshape(a.shape)[idx]
    except Exception:
        return False
    return len(set(np.ravel(marks).tolist())) == np.size(marks)


@halved
@given(case=cases(), method=st.sampled_from(["set", "add", "subtract", "multiply", "min", "max", "divide", "power"]),
       mode=st.sampled_from([None, "clip", "drop", "promise_in_bounds"]), data=st.data())  # fmt: skip
def test_updates_match_jax(case, method, mode, data):
    shape, idx, dtype, seed = case
    if dtype == np.bool_ and method not in ("set", "min", "max"):
        dtype = np.dtype(np.int32)
    if method == "set" and not _unique_targets(host(shape, dtype, seed), idx):
        method = "add"  # colliding sets keep an unspecified update
    if mode == "promise_in_bounds":
        mode = None  # out of bounds it promises nothing
    a = host(shape, dtype, seed)
    target = outcome(lambda: jjnp.asarray(a)[idx].shape)
    vshape = () if isinstance(target, type) else data.draw(st.sampled_from([target, ()]))
    v = host(vshape, dtype, seed + 1)
    same_outcome(lambda: getattr(mix.at_helper(mj.device_put(a))[idx], method)(mj.device_put(v), mode=mode),
                 lambda: getattr(jjnp.asarray(a).at[idx], method)(jjnp.asarray(v), mode=mode))  # fmt: skip


@halved
@given(case=cases())
def test_reads_under_jit_match_jax(case):
    shape, idx, dtype, seed = case
    a = host(shape, dtype, seed)
    entries = idx if isinstance(idx, tuple) else (idx,)
    traced = [i for i, e in enumerate(entries) if isinstance(e, np.ndarray) and e.dtype != bool or type(e) is int]

    def run(lib: Any, device: Callable[[Any], Any]) -> Any:
        def f(x: Any, *dynamic: Any) -> Any:
            full = list(entries)
            for i, d in zip(traced, dynamic):
                full[i] = d
            return x[tuple(full)]

        return lib.jax.jit(f)(device(a), *[np.asarray(entries[i], np.int32) for i in traced])

    same_outcome(lambda: run(MJ, mj.device_put), lambda: run(JX, jjnp.asarray))


def test_bad_indices_raise_jax_errors():
    a = np.zeros((3, 4), np.float32)
    bad = [(0, 0, 0), 1.5, "a", [0, 1], np.array([0.5]), np.array([True]), (np.array([0, 1]), np.array([0, 1, 2])),
           (Ellipsis, Ellipsis), object(), slice(0, 1, 0), (slice(None), [0.5])]  # fmt: skip
    for idx in bad:
        same_outcome(lambda idx=idx: mj.device_put(a)[idx], lambda idx=idx: jjnp.asarray(a)[idx])
    same_outcome(lambda: mj.jit(lambda x: x[x > 0])(a), lambda: jax.jit(lambda x: x[x > 0])(a))
    assert outcome(lambda: mj.jit(lambda x: x[x > 0])(a)).__name__ == "NonConcreteBooleanIndexError"


# ---------------------------------------------------------------------------
# take, take_along_axis, put


@halved
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_take_and_take_along_axis_match_jax(shape, data):
    a = host(shape, np.float32, 3)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    n = a.size if axis is None else shape[axis]
    ind = np.asarray(data.draw(st.lists(st.integers(-n - 2, n + 2), min_size=0, max_size=4)), np.int32)
    mode = data.draw(st.sampled_from([None, "fill", "clip", "wrap"]))
    fill = data.draw(st.sampled_from([None, -1.0]))
    same_outcome(lambda: mix.take(a, ind, axis=axis, mode=mode, fill_value=fill),
                 lambda: jjnp.take(a, ind, axis=axis, mode=mode, fill_value=fill))  # fmt: skip
    ax = 0 if axis is None else axis
    ishape = list(a.shape if axis is not None else (a.size,))
    ishape[ax] = data.draw(st.integers(1, 3))
    if data.draw(st.booleans()) and len(ishape) > 1:
        ishape[(ax + 1) % len(ishape)] = 1  # broadcast along another axis
    along = np.random.default_rng(0).integers(-n - 1, n + 1, ishape).astype(np.int32)
    if axis is None:
        along = along.ravel()
    tmode = data.draw(st.sampled_from([None, "fill", "clip", "one_hot"]))
    if tmode == "one_hot":
        along = np.clip(along, 0, n - 1)
    same_outcome(lambda: mix.take_along_axis(a, along, axis=axis, mode=tmode),
                 lambda: jjnp.take_along_axis(a, along, axis=axis, mode=tmode))  # fmt: skip


def test_put_matches_jax():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    for ind, v, mode in [([0, 5, 20], [1.0, 2.0], None), ([0, -1, 20], 7.0, "clip"), ([0, -1, 13], [1.0, 2.0, 3.0], "wrap")]:
        same(mix.put(a, np.array(ind), np.array(v, np.float32), mode=mode, inplace=False),
             jjnp.put(a, np.array(ind), np.array(v, np.float32), mode=mode, inplace=False))  # fmt: skip


# ---------------------------------------------------------------------------
# The primitives' random cases against jax.lax


def _jax_dnums(dn: Any) -> Any:
    cls = jax.lax.GatherDimensionNumbers if type(dn).__name__ == "GatherDimensionNumbers" else jax.lax.ScatterDimensionNumbers
    return cls(*[tuple(int(d) for d in f) for f in dn])


def _jax_mode(mode: GatherScatterMode) -> Any:
    return getattr(jax.lax.GatherScatterMode, mode.name)


_JAX_SCATTER = {"scatter": "scatter", "scatter-add": "scatter_add", "scatter-sub": "scatter_sub",
                "scatter-mul": "scatter_mul", "scatter-min": "scatter_min", "scatter-max": "scatter_max"}  # fmt: skip


@halved
@pytest.mark.parametrize("name", ["gather", *_JAX_SCATTER])
@given(data=st.data(), rng=seeds())
def test_primitives_match_jax_lax(name, data, rng):
    case = data.draw(SAMPLERS[name].cases())
    args = case.args(rng)
    p = dict(case.params)
    ours = case.apply(*args)
    if name == "gather":
        theirs = jax.lax.gather(*args, _jax_dnums(p["dimension_numbers"]), p["slice_sizes"], mode=_jax_mode(p["mode"]),
                                fill_value=p["fill_value"])  # fmt: skip
    else:
        if np.shape(args[1])[-1] == 0 and np.size(args[2]) > 1 and name != "scatter":
            return  # XLA (JAX included) combines only one of colliding updates with empty index vectors; minijax all
        fn = getattr(jax.lax, _JAX_SCATTER[name])
        theirs = fn(*args, _jax_dnums(p["dimension_numbers"]), mode=_jax_mode(p["mode"]),
                    unique_indices=p["unique_indices"])  # fmt: skip
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    np.testing.assert_allclose(np.asarray(ours, np.float64), np.asarray(theirs, np.float64), rtol=2e-2, atol=1e-2)


# ---------------------------------------------------------------------------
# jaxpr text of common programs

F32, I32 = np.float32, np.int32

PROGRAMS: dict[str, tuple[Callable[[Any], Callable[..., Any]], list[tuple[Any, tuple[int, ...]]]]] = {
    "gather_1d": (lambda m: lambda x, i: x[i], [(F32, (5,)), (I32, (2,))]),
    "traced_int": (lambda m: lambda x, k: x[k, 2], [(F32, (4, 5, 6)), (I32, ())]),
    "static_oob": (lambda m: lambda x: x[7], [(F32, (5, 3))]),
    "strided_static": (lambda m: lambda x: x[::2, 1], [(F32, (5, 3))]),
    "scalar_true": (lambda m: lambda x: x[True], [(F32, (4, 5, 6))]),
    "separated_arrays": (lambda m: lambda x, i: x[i, :, i], [(F32, (4, 5, 6)), (I32, (2,))]),
    "array_and_stride": (lambda m: lambda x, i: x[:, i, ::2], [(F32, (4, 5, 6)), (I32, (2,))]),
    "int_and_array": (lambda m: lambda x, i: x[1, i], [(F32, (4, 5, 6)), (I32, (2,))]),
    "numpy_array": (lambda m: lambda x: x[np.array([[0, 1], [2, 3]])], [(F32, (4, 5, 6))]),
    "array_then_slice": (lambda m: lambda x, i: x[i, 1:3], [(F32, (4, 5, 6)), (I32, (2,))]),
    "array_slice_reversed": (lambda m: lambda x, i: x[i, 1:3, ::-1], [(F32, (4, 5, 6)), (I32, (2,))]),
    "ellipsis_none_array": (lambda m: lambda x, i: x[..., None, i], [(F32, (4, 5, 6)), (I32, (2,))]),
    "broadcast_arrays": (lambda m: lambda x, i: x[i[:, None], i], [(F32, (4, 5, 6)), (I32, (2,))]),
    "mask": (lambda m: lambda x: x[np.array([True, False, True, False])], [(F32, (4, 5))]),
    "at_add": (lambda m: lambda x, i: x.at[i].add(1.0), [(F32, (5,)), (I32, (2,))]),
    "at_set_static": (lambda m: lambda x: x.at[0].set(1.0), [(F32, (5, 3))]),
    "at_slice_add": (lambda m: lambda x: x.at[1:3].add(1.0), [(F32, (5, 3))]),
    "at_get_fill": (lambda m: lambda x: x.at[0].get(mode="fill"), [(F32, (5, 3))]),
    "at_divide": (lambda m: lambda x: x.at[:, 1].divide(2.0), [(F32, (5, 3))]),
    "at_apply": (lambda m: lambda x, i: x.at[i].apply(m.jnp.sin), [(F32, (5,)), (I32, (2,))]),
    "two_scatter_adds": (lambda m: lambda x, i: x.at[i].add(1.0).at[i].add(2.0), [(F32, (5,)), (I32, (2,))]),
    "at_min": (lambda m: lambda x, i: x.at[i].min(0.5), [(F32, (5,)), (I32, (2,))]),
    "at_subtract": (lambda m: lambda x, i: x.at[i].subtract(0.5), [(F32, (5,)), (I32, (2,))]),
    "at_mul_int": (lambda m: lambda x, i: x.at[i].mul(2), [(I32, (5,)), (I32, (2,))]),
    "at_power": (lambda m: lambda x, i: x.at[i].power(2), [(F32, (5,)), (I32, (2,))]),
    "grad_gather": (lambda m: m.jax.grad(lambda x, i: x[i].sum()), [(F32, (5,)), (I32, (2,))]),
    "grad_scatter_add": (lambda m: m.jax.grad(lambda x, v: x.at[np.array([0, 2])].add(v).sum(), argnums=(0, 1)),
                         [(F32, (5,)), (F32, (2,))]),  # fmt: skip
    "jvp_scatter_set": (lambda m: lambda x, v: m.jax.jvp(lambda x, v: x.at[np.array([1, 1])].set(v), (x, v), (x, v)),
                        [(F32, (5, 2)), (F32, (2, 2))]),  # fmt: skip
    "vmap_gather": (lambda m: m.jax.vmap(lambda x, i: x[i]), [(F32, (3, 5)), (I32, (3, 2))]),
    "vmap_at_set": (lambda m: m.jax.vmap(lambda x, i: x.at[i].set(0.0)), [(F32, (3, 5)), (I32, (3, 2))]),
    "jvp_at_max": (lambda m: lambda x, v: m.jax.jvp(lambda x, v: x.at[np.array([1, 1, 3])].max(v), (x, v), (x, v)),
                   [(F32, (5,)), (F32, (3,))]),  # fmt: skip
    "jvp_at_mul_unique": (lambda m: lambda x, v: m.jax.jvp(lambda x, v: x.at[np.array([1, 3])].mul(v, unique_indices=True),
                                                           (x, v), (x, v)), [(F32, (5,)), (F32, (2,))]),  # fmt: skip
    "grad_at_mul_unique": (lambda m: m.jax.grad(lambda x, v: x.at[np.array([1, 3])].mul(v, unique_indices=True).sum(),
                                                argnums=(0, 1)), [(F32, (5,)), (F32, (2,))]),  # fmt: skip
    "grad_add_then_gather": (lambda m: m.jax.grad(lambda x, v: (x.at[np.array([1, 3])].add(v)[np.array([0, 1])] ** 2).sum(),
                                                  argnums=(0, 1)), [(F32, (5,)), (F32, (2,))]),  # fmt: skip
    "vmap_at_add_indices": (lambda m: m.jax.vmap(lambda x, i, v: x.at[i].add(v), in_axes=(None, 0, 0)),
                            [(F32, (5,)), (I32, (3, 2)), (F32, (3, 2))]),  # fmt: skip
    "take": (lambda m: lambda x, i: m.take(x, i, axis=1), [(F32, (3, 4)), (I32, (4,))]),
    "take_along_axis": (lambda m: lambda x, i: m.take_along_axis(x, i, axis=0), [(F32, (3, 4)), (I32, (1, 4))]),
    "lax_gather_clip": (lambda m: lambda x, i: m.lax.gather(x, i, m.lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 3),
                                                           mode="clip"), [(F32, (5, 3)), (I32, (2, 1))]),  # fmt: skip
    "lax_scatter_max": (lambda m: lambda x, i, u: m.lax.scatter_max(x, i, u, m.lax.ScatterDimensionNumbers((), (0,), (0,))),
                        [(F32, (5,)), (I32, (2, 1)), (F32, (2,))]),  # fmt: skip
}


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jaxpr_text_matches_jax(name, x64):
    build, specs = PROGRAMS[name]
    rng = np.random.default_rng(0)
    wide = {F32: np.float64, I32: np.int64} if x64 else {F32: F32, I32: I32}
    args = [(rng.integers(-5, 5, s) if d == I32 else rng.standard_normal(s)).astype(wide[d]) for d, s in specs]
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)
    try:
        with enable_x64(x64):
            ours = str(mj.make_jaxpr(build(MJ))(*args))
        theirs = str(jax.make_jaxpr(build(JX))(*args))
    finally:
        jax.config.update("jax_enable_x64", previous)
    assert ours == theirs
