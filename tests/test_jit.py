"""jit: trace once per signature, cache, replay; static arguments; stages."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import minijax as jax
from minijax.array import Array
from minijax.config import config_context, enable_x64
from minijax.primitives import elementwise as ew


def add(x, y):
    return ew.add_p.bind(x, y)


def mul(x, y):
    return ew.mul_p.bind(x, y)


def sin(x):
    return ew.sin_p.bind(x)


def f32(x):
    return jax.device_put(np.asarray(x, np.float32))


def test_jit_traces_once_per_signature_and_side_effects_run_only_while_tracing():
    calls = []

    @jax.jit
    def f(x, y):
        calls.append(1)  # a Python side effect: runs only when tracing
        return add(mul(x, y), 1.0)

    x = f32([1.0, 2.0])
    assert np.asarray(f(x, x)).tolist() == [2.0, 5.0]
    assert np.asarray(f(x, f32([3.0, 3.0]))).tolist() == [4.0, 7.0]
    assert len(calls) == 1 and f._cache_size() == 1
    f(f32([1.0, 2.0, 3.0]), f32([1.0, 1.0, 1.0]))  # new shape: retrace
    assert len(calls) == 2
    f(np.float32(1.0), 2.0)  # weak-typed scalar is a different signature
    f(np.float32(1.0), 3.0)
    assert len(calls) == 3


def test_jit_equals_eager_and_returns_pytrees():
    def f(d):
        return {"s": sin(d["x"]), "pair": (d["x"], mul(d["y"], 2.0))}

    args = {"x": f32([0.5, 1.5]), "y": f32(3.0)}
    want = f(args)
    got = jax.jit(f)(args)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert isinstance(g, Array)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert g.dtype == w.dtype and g.weak_type == w.weak_type


def test_static_argnums_and_argnames_key_the_cache():
    traces = []

    def f(x, n, *, scale):
        traces.append((n, scale))
        out = x
        for _ in range(n):
            out = mul(out, scale)
        return out

    g = jax.jit(f, static_argnums=1, static_argnames="scale")
    assert float(g(f32(1.0), 3, scale=2.0)) == 8.0
    assert float(g(f32(1.0), 3, scale=2.0)) == 8.0
    assert float(g(f32(1.0), 2, scale=2.0)) == 4.0
    assert traces == [(3, 2.0), (2, 2.0)]
    # static_argnames inferred from static_argnums, by name:
    assert float(g(f32(1.0), n=1, scale=5.0)) == 5.0


def test_non_hashable_static_argument_raises_value_error():
    g = jax.jit(lambda x, shape: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        g(f32(1.0), [1, 2])


def test_jit_output_of_non_array_raises_type_error():
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jax.jit(lambda x: "hello")(f32(1.0))


def test_jit_under_make_jaxpr_is_one_equation():
    g = jax.jit(lambda x: mul(x, 2.0))
    closed = jax.make_jaxpr(lambda x: add(g(x), 1.0))(f32([1.0, 2.0, 3.0]))
    assert [e.primitive.name for e in closed.eqns] == ["jit", "add"]
    assert "jit[\n      name=<lambda>\n      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }" in str(closed)


def test_nested_jit_evaluates_eagerly_through_the_jit_primitive():
    inner = jax.jit(lambda x: mul(x, 3.0))
    outer = jax.jit(lambda x: add(inner(x), 1.0))
    assert float(outer(f32(2.0))) == 7.0
    closed = jax.make_jaxpr(outer)(f32(2.0))
    # evaluating the outer jaxpr eagerly binds `jit` with no transform active
    from minijax.jaxpr import eval_closed_jaxpr

    (out,) = eval_closed_jaxpr(closed, f32(2.0))
    assert float(out) == 7.0


def test_x64_flag_is_part_of_the_cache_key():
    f = jax.jit(lambda x: add(x, 1))
    x = np.arange(3)
    assert f(x).dtype == np.int32
    with enable_x64(True):
        assert f(x).dtype == np.int64
    assert f(x).dtype == np.int32


def test_disable_jit_runs_python_each_time():
    calls = []

    def f(x):
        calls.append(1)
        return x

    g = jax.jit(f)
    with config_context(jax_disable_jit=True):
        g(f32(1.0))
        g(f32(1.0))
    assert len(calls) == 2


def test_lower_compile_stages():
    g = jax.jit(lambda x: sin(x))
    lowered = g.lower(f32([1.0, 2.0]))
    assert "sin" in lowered.as_text()
    compiled = lowered.compile()
    np.testing.assert_allclose(np.asarray(compiled(f32([1.0, 2.0]))), np.sin([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(TypeError, match="differ"):
        compiled(f32([1.0, 2.0, 3.0]))
    shape = g.eval_shape(f32([1.0, 2.0]))
    assert shape.shape == (2,) and shape.dtype == np.float32


def test_jit_of_methods_and_partial():
    class Scaler:
        def __init__(self, k):
            self.k = k

        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x):
            return mul(x, self.k)

        def __hash__(self):
            return hash(self.k)

        def __eq__(self, other):
            return isinstance(other, Scaler) and other.k == self.k

    assert float(Scaler(3.0).apply(f32(2.0))) == 6.0
    assert float(Scaler(4.0).apply(f32(2.0))) == 8.0


def test_jit_rejects_unsupported_options_clearly():
    with pytest.raises(NotImplementedError, match="device"):
        jax.jit(lambda x: x, device=jax.devices()[0])
    # Shardings are supported (tests/test_sharding.py); what is not one is JAX's TypeError.
    with pytest.raises(TypeError, match="in_shardings leaf specifications are expected to be PartitionSpec"):
        jax.jit(lambda x: x, in_shardings=object())


def _jit_calls():
    """(name, function, positional arguments): the calls the fast path of Jitted.__call__ takes or declines."""
    x = f32(np.arange(6.0).reshape(2, 3))
    committed = jax.device_put(np.ones((2, 3), np.float32), jax.devices()[0])
    two = lambda a, b: (add(a, b), mul(a, b))  # noqa: E731
    return [
        ("one output", lambda a: sin(a), [x]),
        ("pytree output", two, [x, x]),
        ("committed argument", lambda a, b: add(a, b), [committed, x]),
        ("weak scalar argument", lambda a, b: mul(a, b), [x, jax.device_put(2.0)]),
        ("host argument (declined)", lambda a: add(a, a), [np.ones((2, 3), np.float32)]),
        ("integers", lambda a: add(a, a), [jax.device_put(np.arange(4, dtype=np.int32))]),
        # issue 23: plain dicts, lists and tuples of Arrays are flattened by the fast path too
        ("dict and list arguments", lambda d, p: add(mul(d["b"], p[0]), d["a"]), [{"b": x, "a": committed}, [x, x]]),
        ("tuple then Array", lambda t, a: (mul(t[0], a), t[1]), [(x, {"k": x}), x]),
        ("Array then dict", lambda a, d: add(a, d["z"][1]), [x, {"z": (x, committed)}]),
        ("a None leaf (declined)", lambda d: d["a"], [{"a": x, "n": None}]),
    ]


@pytest.mark.parametrize("case", _jit_calls(), ids=lambda c: c[0])
def test_the_fast_call_agrees_with_the_plain_call(case):
    # Jitted.__call__ (what runs) against Jitted._call (what the docs tell you to
    # read): the first call through _call fills the fast path's cache, the second
    # __call__ is served from it.
    _, fun, args = case
    jitted = jax.jit(fun)
    plain = jitted._call(tuple(args), {})
    fast = jitted(*args)
    again = jitted(*args)
    want = jax.tree_util.tree_leaves(plain)
    for result in (fast, again):
        assert jax.tree_util.tree_structure(result) == jax.tree_util.tree_structure(plain)
        for w, got in zip(want, jax.tree_util.tree_leaves(result)):
            assert type(got) is Array
            assert got.aval == w.aval
            assert got.device == w.device and got.committed == w.committed
            np.testing.assert_array_equal(np.asarray(got), np.asarray(w))


def test_the_fast_call_is_served_from_its_cache():
    jitted = jax.jit(lambda a: sin(a))
    x = f32([1.0, 2.0])
    jitted(x)  # a miss: _call traces, compiles and enters the fast path's cache
    calls = []
    original = jitted._call
    jitted._call = lambda *a: calls.append(a) or original(*a)
    jitted(x)
    assert calls == []  # a hit: no plain call
    jitted(f32([1.0, 2.0, 3.0]))  # a new shape: the plain call again
    assert len(calls) == 1


def test_the_fast_call_serves_pytree_arguments_from_its_cache():
    # issue 23: dict and list arguments hit the fast path's cache after the first call, keyed by
    # their structure: other keys, another order of list and dict, or another leaf type miss it.
    jitted = jax.jit(lambda d, p: add(d["a"], p[0]))
    x, y = f32([1.0, 2.0]), f32([3.0, 4.0])
    jitted({"a": x, "b": y}, [y])
    calls = []
    original = jitted._call
    jitted._call = lambda *a: calls.append(a) or original(*a)
    out = jitted({"b": x, "a": y}, [x])  # same structure (keys sorted), same avals: a hit
    assert calls == []
    np.testing.assert_array_equal(np.asarray(out), [4.0, 6.0])
    jitted({"a": x, "c": y}, [y])  # other keys
    jitted({"a": x, "b": y}, (y,))  # a tuple for the list
    jitted({"a": x, "b": y}, [np.ones(2, np.float32)])  # a host leaf
    assert len(calls) == 3



def test_the_fast_call_keys_nested_pytree_arguments_by_their_whole_structure():
    # Array children are taken inline (_array_tree_structure): a nested container must still
    # enter the key as itself, so that a list for a tuple two levels down misses.
    jitted = jax.jit(lambda d, p: add(d["a"], d["b"][1][0]))
    x, y = f32([1.0, 2.0]), f32([3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(jitted({"a": x, "b": [y, (x,)]}, [y])), [2.0, 4.0])
    calls = []
    original = jitted._call
    jitted._call = lambda *a: calls.append(a) or original(*a)
    np.testing.assert_array_equal(np.asarray(jitted({"a": y, "b": [x, (y,)]}, [x])), [6.0, 8.0])
    assert calls == []
    np.testing.assert_array_equal(np.asarray(jitted({"a": y, "b": [x, [y]]}, [x])), [6.0, 8.0])
    np.testing.assert_array_equal(np.asarray(jitted({"a": y, "b": [x, (y, x)]}, [x])), [6.0, 8.0])
    assert len(calls) == 2
