"""The core: avals, bind on the eval and staging traces, errors, leaks."""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
from minijax import core, errors
from minijax.array import Array
from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr, eval_jaxpr
from minijax.primitives import elementwise as ew


def add(x, y):
    return ew.add_p.bind(x, y)


def mul(x, y):
    return ew.mul_p.bind(x, y)


def sin(x):
    return ew.sin_p.bind(x)


def test_shaped_array_prints_short_and_compares_by_value():
    a = ShapedArray((2, 3), np.float32)
    assert a.str_short() == "f32[2,3]"
    assert ShapedArray((), np.int32).str_short() == "i32[]"
    assert ShapedArray((4,), np.bool_).str_short() == "bool[4]"
    assert a == ShapedArray([2, 3], "float32")
    assert a != a.update(weak_type=True)
    assert hash(a) == hash(ShapedArray((2, 3), np.float32))
    assert a.ndim == 2 and a.size == 6
    assert "weak_type=True" in repr(a.update(weak_type=True))


def test_get_aval_of_python_scalars_is_weak_and_canonical():
    assert core.get_aval(1.0) == ShapedArray((), np.float32, weak_type=True)
    assert core.get_aval(3) == ShapedArray((), np.int32, weak_type=True)
    assert core.get_aval(True) == ShapedArray((), np.bool_, weak_type=False)
    assert core.get_aval(np.arange(3)).dtype == np.int32  # int64 canonicalised with x64 off
    with pytest.raises(TypeError, match="not a valid minijax type"):
        core.get_aval([1, 2])


def test_eager_bind_runs_on_the_default_backend_and_returns_arrays():
    x = jax.device_put(np.arange(3.0, dtype=np.float32))
    y = add(x, x)
    assert isinstance(y, Array)
    np.testing.assert_array_equal(np.asarray(y), [0.0, 2.0, 4.0])
    assert y.dtype == np.float32 and not y.weak_type


def test_each_run_computes_on_the_backend_it_is_parametrised_by(backend_name):
    # tests/conftest.py makes the run's backend the default: eager ops, jit and
    # subprocesses (through the environment) all land there.
    import os

    x = jax.device_put(np.arange(3.0, dtype=np.float32))
    assert x._backend.name == backend_name
    assert add(x, 1.0)._backend.name == backend_name
    assert jax.jit(sin)(x)._backend.name == backend_name
    assert os.environ["MINIJAX_BACKEND"] == backend_name


def test_weak_type_survives_only_when_every_operand_is_weak():
    x = jax.device_put(np.ones(3, np.float32))
    assert not mul(x, 2.0).weak_type
    both_weak = mul(2.0, 3.0)
    assert both_weak.weak_type and both_weak.dtype == np.float32
    assert float(both_weak) == 6.0


def test_make_jaxpr_records_equations_and_literals():
    def f(x):
        return add(mul(sin(x), 2.0), 1.0)

    closed = jax.make_jaxpr(f)(np.ones(3, np.float32))
    assert isinstance(closed, ClosedJaxpr)
    assert [e.primitive.name for e in closed.eqns] == ["sin", "mul", "add"]
    assert str(closed) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = sin a\n"
        "    c:f32[3] = mul b 2.0:f32[]\n"
        "    d:f32[3] = add c 1.0:f32[]\n"
        "  in (d,) }"
    )


def test_closed_over_arrays_become_constvars_and_scalars_literals():
    w = jax.device_put(np.arange(3.0, dtype=np.float32))
    s = jax.device_put(np.float32(5.0))
    closed = jax.make_jaxpr(lambda x: add(mul(x, w), s))(np.ones(3, np.float32))
    assert len(closed.jaxpr.constvars) == 1
    assert closed.consts[0] is w
    assert "5.0:f32[]" in str(closed)
    assert str(closed).startswith("{ lambda a:f32[3]; b:f32[3]. let")


def test_eval_jaxpr_replays_the_program():
    def f(x, y):
        return sin(add(x, y)), mul(x, 3.0)

    xs = (np.float32(0.5), np.float32(0.25))
    closed = jax.make_jaxpr(f)(*xs)
    got = eval_jaxpr(closed.jaxpr, closed.consts, *xs)
    want = f(*xs)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_outputs_that_are_inputs_or_constants():
    closed = jax.make_jaxpr(lambda x: (x, 3))(1.0)
    assert str(closed) == "{ lambda ; a:f32[]. let  in (a, 3:i32[]) }"


def test_bool_of_a_traced_value_names_the_argument():
    def f(x, flag):
        if flag:
            return x
        return mul(x, 2.0)

    with pytest.raises(errors.TracerBoolConversionError) as info:
        jax.jit(f)(1.0, np.bool_(True))
    message = str(info.value)
    assert "flag" in message and "static_argnums" in message
    assert isinstance(info.value, errors.ConcretizationTypeError)


def test_other_tracer_conversions_raise_jax_errors():
    with pytest.raises(errors.TracerIntegerConversionError):
        jax.make_jaxpr(lambda x: [0, 1, 2][x])(np.int32(1))
    with pytest.raises(errors.TracerArrayConversionError):
        jax.make_jaxpr(lambda x: np.asarray(x))(1.0)
    with pytest.raises(errors.ConcretizationTypeError):
        jax.make_jaxpr(lambda x: float(x))(1.0)
    with pytest.raises(TypeError, match=r"\.at\["):
        jax.make_jaxpr(lambda x: x.__setitem__(0, 1.0))(np.ones(2, np.float32))


def test_leaked_tracer_raises_unexpected_tracer_error():
    leaked = []

    def f(x):
        leaked.append(x)
        return x

    jax.make_jaxpr(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError, match="jit"):
        add(leaked[0], 1.0)
    with pytest.raises(errors.UnexpectedTracerError):
        jax.make_jaxpr(lambda y: add(y, leaked[0]))(1.0)


def test_current_trace_is_restored_after_errors():
    def boom(x):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        jax.make_jaxpr(boom)(1.0)
    assert core.current_trace() is core.eval_trace


def test_array_is_immutable_and_points_to_at():
    x = jax.device_put(np.arange(3))
    with pytest.raises(TypeError, match=r"x\.at\[idx\]\.set\(y\)"):
        x[0] = 1
    with pytest.raises(ValueError):
        np.asarray(x)[0] = 5  # the host view is read-only
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


def test_array_repr_matches_jax():
    x = jax.device_put(np.arange(3, dtype=np.int32))
    assert repr(x) == "Array([0, 1, 2], dtype=int32)"
    assert repr(mul(2.0, 3.0)) == "Array(6., dtype=float32, weak_type=True)"
    y = jax.device_put(np.ones((2, 3), np.float32))
    assert repr(y) == "Array([[1., 1., 1.],\n       [1., 1., 1.]], dtype=float32)"
    assert f"{jax.device_put(np.float32(2.5)):<.2f}" == "2.50"
