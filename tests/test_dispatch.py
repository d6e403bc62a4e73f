"""Eager dispatch: the fast path (what runs) agrees with the plain path (what the docs tell you to read)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax import dispatch, lax
from minijax.array import Array
from minijax.core import ShapedArray


def test_aval_keys_name_the_triple() -> None:
    # The fast paths' caches key on aval_key: equal avals share it, different ones
    # never do, and a pickled aval gets this process's key.
    a, b = ShapedArray((2, 3), np.float32), ShapedArray([2, 3], "float32")
    assert dispatch.aval_key(a) == dispatch.aval_key(b)
    others = [ShapedArray((2, 3), np.float32, weak_type=True), ShapedArray((3, 2), np.float32),
              ShapedArray((2, 3), np.int32), ShapedArray((), np.float32)]
    assert len({dispatch.aval_key(a), *(dispatch.aval_key(o) for o in others)}) == 1 + len(others)
    assert dispatch.aval_key(pickle.loads(pickle.dumps(a))) == dispatch.aval_key(a)


def test_aval_key_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Past its bound the table starts afresh; equal avals may then hold two keys,
    # which costs the caches a miss but never gives a wrong answer.
    monkeypatch.setattr(dispatch, "_AVAL_KEYS_MAX", 4)
    f = minijax.jit(lambda x: x * 2)
    for n in [1, 2, 3, 4, 5, 6, 1, 2, 7, 1]:
        x = np.arange(n * 7, dtype=np.float32).reshape(n, 7, 1, 1)  # shapes no other test makes
        np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x))), x * 2)
        np.testing.assert_array_equal(np.asarray(jnp.asarray(x) + 1.0), x + 1)
    assert len(dispatch._aval_keys) <= 4


def _operations() -> list[tuple[str, Any, list[Any], dict[str, Any]]]:
    """(name, primitive, operands, params): eager operations of every kind the fast path meets."""
    x = jnp.arange(6.0).reshape(2, 3)
    i = jnp.arange(6, dtype=np.int32).reshape(2, 3)
    committed = minijax.device_put(jnp.ones((2, 3)), minijax.devices()[0])
    return [
        ("unary", lax.sin_p, [x], {"accuracy": None}),
        ("binary", lax.add_p, [x, x], {}),
        ("weak scalar", lax.mul_p, [x, 2.0], {}),
        ("host operand", lax.add_p, [np.ones((2, 3), np.float32), x], {}),
        ("committed", lax.mul_p, [committed, x], {}),
        ("integers", lax.max_p, [i, i], {}),
        ("params", lax.reduce_sum_p, [x], {"axes": (1,), "out_sharding": None}),
        ("no operands", lax.iota_p, [], {"dtype": np.dtype(np.int32), "shape": (4,), "dimension": 0, "sharding": None}),
        ("multiple results", lax.split_p, [x], {"sizes": (1, 2), "axis": 1}),
    ]


@pytest.mark.parametrize("case", _operations(), ids=lambda c: c[0])
def test_the_fast_path_agrees_with_the_plain_path(case: tuple[str, Any, list[Any], dict[str, Any]]) -> None:
    _, prim, args, params = case
    plain = dispatch.apply_primitive(prim, args, params)
    fast = dispatch.apply_primitive_fast(prim, args, params)
    again = dispatch.apply_primitive_fast(prim, args, params)  # (now from the fast path's cache)
    outs = [plain, fast, again] if not prim.multiple_results else [list(plain), list(fast), list(again)]
    flat = [o if isinstance(o, list) else [o] for o in outs]
    for results in flat[1:]:
        for want, got in zip(flat[0], results):
            assert type(got) is Array
            assert got.aval == want.aval
            assert got.device == want.device and got.committed == want.committed
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_the_fast_path_is_what_binding_runs() -> None:
    from minijax import core

    assert core.eval_trace.process_primitive is dispatch.apply_primitive_fast


def test_deleted_operands_and_leaked_tracers_take_the_plain_path_errors() -> None:
    x = jnp.ones(3)
    y = x + 0.0
    y.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        dispatch.apply_primitive_fast(lax.add_p, [x, y], {})
    leaked: list[Any] = []
    minijax.jit(lambda a: leaked.append(a) or a)(x)
    with pytest.raises(minijax.errors.UnexpectedTracerError):
        dispatch.apply_primitive_fast(lax.add_p, [x, leaked[0]], {})


@pytest.mark.parametrize("jit", [False, True])
def test_params_equal_to_cached_ones_but_of_other_element_types_are_checked_again(jit: bool) -> None:
    # (1, 12) == (1.0, 12) == (True, 12) and they hash alike: the caches of abstract
    # evaluation and of eager runners keyed them the same, so a param the rule refuses
    # went to the backend unchecked once the valid one had been seen.
    from minijax.primitives.structural import reshape_p

    x = np.ones((3, 4), np.float32)

    def run(new_sizes: Any) -> Any:
        f = lambda x: reshape_p.bind(x, new_sizes=new_sizes, dimensions=None, sharding=None)  # noqa: E731
        return (minijax.jit(f) if jit else f)(x)

    assert run((1, 12)).shape == (1, 12)
    with pytest.raises(TypeError, match=r"reshape new_sizes must have every element be an integer type, got \(float, int\)"):
        run((1.0, 12))


def test_eager_runners_are_kept_apart_by_the_trace_context() -> None:
    # dim_as_value has no operand and its result type follows x64: the eager caches once
    # keyed it by primitive and params alone, so after an int32 run with x64 off the same
    # call with x64 on returned int32 (found by `minijax conformance`, int32 row then int64).
    from minijax.primitives.structural import dim_as_value_p

    assert dim_as_value_p.bind(dim=5).dtype == np.int32
    with minijax.enable_x64(True):
        assert dim_as_value_p.bind(dim=5).dtype == np.int64
    assert dim_as_value_p.bind(dim=5).dtype == np.int32


@pytest.mark.parametrize("name", ["unary", "binary", "committed", "integers", "params", "no operands", "multiple results"])
def test_a_repeated_operation_is_served_by_the_fast_path_alone(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The fast path builds the eager cache's key inline: it must be the key the plain path
    # stored (``eager_key``), or every call would miss and take the plain path again.
    # (Operands made here: on this test's backend, whose device is the default one.)
    _, prim, args, params = next(c for c in _operations() if c[0] == name)
    want = dispatch.apply_primitive_fast(prim, args, params)

    def plain(*_: Any) -> Any:
        raise AssertionError(f"{prim} went to the plain path with params {params}")

    monkeypatch.setattr(dispatch, "apply_primitive", plain)
    got = dispatch.apply_primitive_fast(prim, args, dict(params))
    for w, g in zip(want if prim.multiple_results else [want], got if prim.multiple_results else [got]):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_eager_params_of_other_element_types_are_checked_again_on_the_fast_path() -> None:
    from minijax.primitives.structural import reshape_p

    x = jnp.ones((3, 4))  # (an Array: the fast path's operand)
    assert reshape_p.bind(x, new_sizes=(1, 12), dimensions=None, sharding=None).shape == (1, 12)
    with pytest.raises(TypeError, match=r"reshape new_sizes must have every element be an integer type"):
        reshape_p.bind(x, new_sizes=(1.0, 12), dimensions=None, sharding=None)
    with pytest.raises(TypeError):
        reshape_p.bind(x, new_sizes=(True, 12), dimensions=None, sharding=None)


def test_trace_contexts_are_named_by_tokens_that_tell_apart_equal_values_of_other_types() -> None:
    from minijax.config import context_token

    assert context_token((False, "standard")) == context_token((False, "standard"))
    assert context_token((False, "standard")) != context_token((0, "standard"))  # False == 0, another flag value
    assert context_token((True, "standard")) != context_token((False, "standard"))
