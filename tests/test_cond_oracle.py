"""lax.cond and lax.switch against real JAX 0.10.2 (the oracle): jaxprs, values and errors.

Each program is written once against a (jax, jnp, lax) triple and runs under
JAX and under minijax. The printed jaxprs of the program and of its grad, jvp
and vmap must be identical, and so must the values (and the results' weak
types, where the program is not a derivative). Run where JAX is installed:
    .venv-oracle/bin/python -m pytest tests/test_cond_oracle.py
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

JAX = SimpleNamespace(jax=jax, jnp=jax.numpy, lax=jax.lax)
MINI = SimpleNamespace(jax=minijax, jnp=minijax.numpy, lax=minijax.lax)
Lib = SimpleNamespace
Program = Callable[[Lib], Callable[..., Any]]

X = np.array([0.5, -1.25, 2.0], np.float32)
XS = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
C = np.linspace(-1, 1, 3).astype(np.float32)


def _switch3(m: Lib) -> Callable[..., Any]:
    c = m.jnp.asarray(C)
    return lambda i, x, y: m.lax.switch(
        i, [lambda x, y: m.jnp.sin(x) * y, lambda x, y: m.jnp.exp(y) + x * c, lambda x, y: (x * x).sum() + y * 2.0 + x], x, y
    )


def _nested(m: Lib) -> Callable[..., Any]:
    return lambda p, x: m.lax.cond(
        p, lambda x: m.lax.cond(x.sum() > 0, lambda x: x * 2, m.jnp.tanh, x), lambda x: x + 1.0, x
    )


def _distinct_equal(m: Lib) -> Callable[..., Any]:
    a, b = m.jnp.asarray(C), m.jnp.asarray(C)
    return lambda p, x: m.lax.cond(p, lambda x: (x + a, b), lambda x: (x * b, a * b), x)


def _distinct_equal_first(m: Lib) -> Callable[..., Any]:
    f = _distinct_equal(m)
    return lambda p, x: f(p, x)[0] * 2.0


def _two_dtypes(m: Lib) -> Callable[..., Any]:
    a, b, twin = m.jnp.asarray([1.0, 2.0, 3.0]), m.jnp.asarray([1, 2, 3], np.int32), m.jnp.asarray([1.0, 2.0, 3.0])
    return lambda i, x: m.lax.switch(i, [lambda x: x + a * twin, lambda x: x * b + a, lambda x: x - twin], x)


def _closed_over_key(m: Lib) -> Callable[..., Any]:
    k = m.jax.random.key(0)
    return lambda p: m.jax.random.key_data(m.jax.random.split(m.lax.cond(p, lambda: k, lambda: k)))


def _key_or_another(m: Lib) -> Callable[..., Any]:
    k = m.jax.random.key(0)
    return lambda p: m.jax.random.key_data(m.lax.cond(p, lambda: m.jax.random.key(1), lambda: k))


def _closed_over_raw_key(m: Lib) -> Callable[..., Any]:
    k = m.jax.random.PRNGKey(3)
    return lambda p: m.jax.random.split(m.lax.cond(p, lambda: k, lambda: k))


# name -> (program, args). Each is printed with make_jaxpr and run.
PROGRAMS: dict[str, tuple[Program, list[Any]]] = {
    "cond": (lambda m: lambda p, x: m.lax.cond(p, m.jnp.sin, m.jnp.cos, x), [True, X]),
    "cond_false": (lambda m: lambda p, x: m.lax.cond(p, m.jnp.sin, m.jnp.cos, x), [False, X]),
    "numeric_predicate": (lambda m: lambda p, x: m.lax.cond(p, lambda x: x + 1, lambda x: x - 1.0, x), [np.float32(2.0), X]),
    "concrete_predicate": (lambda m: lambda x: m.lax.cond(True, lambda x: x * 3.0, lambda x: -x, x), [X]),
    "switch": (_switch3, [1, X, np.float32(2.0)]),
    "switch_out_of_range": (_switch3, [7, X, np.float32(2.0)]),
    "switch_concrete_index": (lambda m: lambda x: m.lax.switch(-3, [lambda x: x + 1, lambda x: x - 1.0], x), [X]),
    "switch_uint8_index": (lambda m: lambda i, x: m.lax.switch(i, [lambda x: x + 1, lambda x: x], x), [np.uint8(1), X]),
    "pytrees": (
        lambda m: lambda p, d: m.lax.cond(p, lambda d: (d["a"] * d["b"], d["b"]), lambda d: (d["a"], d["b"] - 1.0), d),
        [True, {"a": X, "b": np.float32(3.0)}],
    ),
    "forwarded_output": (
        lambda m: lambda p, x, y: m.lax.cond(p, lambda x, y: (x, y * 2), lambda x, y: (x, y + 1), x, y),
        [True, X, np.float32(1.0)],
    ),
    "swapped_outputs": (lambda m: lambda p, x, y: m.lax.cond(p, lambda x, y: (y, x), lambda x, y: (x, y), x, y), [False, X, X]),
    "shared_constant": (lambda m: lambda p, x: m.lax.cond(p, lambda x: x * C, lambda x: x + C, x), [True, X]),
    "closure_in_jit": (
        lambda m: m.jax.jit(lambda x, y: m.lax.cond(x.sum() > 0, lambda x: x * y, lambda x: x - y, x)),
        [X, np.float32(2.0)],
    ),
    "weak_false_branch": (lambda m: lambda p: m.lax.cond(p, lambda: np.float32(1), lambda: 0.0), [True]),
    "no_operands": (lambda m: lambda p: m.lax.cond(p, lambda: C, lambda: -C), [False]),
    "nested": (_nested, [True, X]),
    "integer_operand": (lambda m: lambda p, n: m.lax.cond(p, lambda n: n * 2, lambda n: n + 1, n), [True, np.int32(5)]),
    # Constants are shared by identity: two equal arrays are two operands.
    "distinct_equal_constants": (_distinct_equal, [True, X]),
    "distinct_equal_constants_false": (_distinct_equal, [False, X]),
    "equal_constants_two_dtypes": (_two_dtypes, [1, X]),
    "closed_over_key": (_closed_over_key, [True]),
    "closed_over_key_and_another": (_key_or_another, [False]),
    "closed_over_raw_key": (_closed_over_raw_key, [True]),
}

# Differentiable programs: (program, args, argnums); grad of the sum of the output.
GRADS: dict[str, tuple[Program, list[Any], tuple[int, ...]]] = {
    "cond": (lambda m: lambda p, x: m.lax.cond(p, m.jnp.sin, m.jnp.cos, x), [True, X], (1,)),
    "cond_false": (lambda m: lambda p, x: m.lax.cond(p, m.jnp.sin, m.jnp.cos, x), [False, X], (1,)),
    "switch": (_switch3, [1, X, np.float32(2.0)], (1, 2)),
    "switch_last": (_switch3, [2, X, np.float32(2.0)], (1, 2)),
    "one_output_used": (
        lambda m: lambda p, x, y: m.lax.cond(p, lambda x, y: (m.jnp.sin(x), x * y), lambda x, y: (x, y * x), x, y)[0],
        [True, X, X],
        (1, 2),
    ),
    "zero_tangent_branch": (
        lambda m: lambda p, x, n: m.lax.cond(p, lambda x, n: (x * n, n + 1), lambda x, n: (m.jnp.ones_like(x), n), x, n)[0],
        [True, X, 2],
        (1,),
    ),
    "nested": (_nested, [True, X], (1,)),
    "closure": (lambda m: lambda x, y: m.lax.cond(x.sum() > 0, lambda x: x * y, lambda x: x - y, x), [X, np.float32(2.0)], (0, 1)),
    "forwarded_output": (
        lambda m: lambda p, x: m.lax.cond(p, lambda x: (x, x * 2.0), lambda x: (x, x + 1.0), x)[1],
        [True, X],
        (1,),
    ),
    "distinct_equal_constants": (_distinct_equal_first, [False, X], (1,)),
    "dead_code_in_branch": (
        lambda m: lambda p, x: m.lax.cond(p, lambda x: (m.jnp.exp(x), m.jnp.sin(x))[1], m.jnp.cos, x),
        [True, X],
        (1,),
    ),
}

# vmapped programs: (program, args, in_axes).
VMAPS: dict[str, tuple[Program, list[Any], Any]] = {
    "batched_predicate": (lambda m: lambda p, x: m.lax.cond(p, m.jnp.sin, m.jnp.cos, x), [np.array([True, False]), XS], 0),
    "batched_index_all_operands": (
        lambda m: lambda i, x, y: m.lax.switch(i, [lambda x, y: x * y, lambda x, y: x - y, lambda x, y: -x], x, y),
        [np.array([0, 2]), XS, np.array([1.0, 2.0], np.float32)],
        0,
    ),
    "batched_index_unbatched_scalar": (
        lambda m: lambda i, x, y: m.lax.switch(i, [lambda x, y: x * y, lambda x, y: x - y], x, y),
        [np.array([1, 0]), XS, np.float32(2.0)],
        (0, 0, None),
    ),
    "unbatched_predicate": (lambda m: lambda p, x: m.lax.cond(p, m.jnp.sin, m.jnp.cos, x), [True, XS], (None, 0)),
    "unbatched_index_axis_1": (_switch3, [1, XS.T, np.array([1.0, 2.0], np.float32)], (None, 1, 0)),
    "unbatched_operand_mixed": (
        lambda m: lambda p, x, y: m.lax.cond(p, lambda x, y: x * y, lambda x, y: y - x, x, y),
        [False, XS, np.float32(3.0)],
        (None, 0, None),
    ),
    "grad_inside": (
        lambda m: m.jax.grad(lambda p, x: m.lax.cond(p, m.jnp.sin, m.jnp.cos, x), argnums=1),
        [np.array([True, False]), np.array([0.3, 0.7], np.float32)],
        0,
    ),
    "nested_cond": (_nested, [np.array([True, False]), XS], 0),
}

# vmap prints np.int64 axes in one of its own rules; the axis is the same.
_NP_INT = re.compile(r"np\.int64\((-?\d+)\)")


def _same_text(jax_text: str, mini_text: str) -> None:
    assert _NP_INT.sub(r"\1", mini_text) == _NP_INT.sub(r"\1", jax_text)


def _same_values(a: Any, b: Any, weak: bool = True) -> None:
    leaves_a, leaves_b = jax.tree_util.tree_leaves(a), minijax.tree_util.tree_leaves(b)
    assert len(leaves_a) == len(leaves_b)
    for x, y in zip(leaves_a, leaves_b):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=2e-6, atol=1e-6)
        assert np.asarray(y).dtype == np.asarray(x).dtype
        if weak:
            assert getattr(y, "weak_type", False) == getattr(x, "weak_type", False)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_jaxpr_and_value(name: str) -> None:
    program, args = PROGRAMS[name]
    _same_text(str(jax.make_jaxpr(program(JAX))(*args)), str(minijax.make_jaxpr(program(MINI))(*args)))
    _same_values(program(JAX)(*args), program(MINI)(*args))
    _same_values(jax.jit(program(JAX))(*args), minijax.jit(program(MINI))(*args))


def _grad(m: Lib, name: str) -> tuple[Callable[..., Any], list[Any]]:
    program, args, argnums = GRADS[name]
    f = program(m)
    return m.jax.grad(lambda *a: m.jnp.sum(f(*a)), argnums=argnums), args


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_jaxpr_and_value(name: str) -> None:
    g_jax, args = _grad(JAX, name)
    g_mini, _ = _grad(MINI, name)
    _same_text(str(jax.make_jaxpr(g_jax)(*args)), str(minijax.make_jaxpr(g_mini)(*args)))
    # (minijax's grad does not yet give results the weak type of the argument.)
    _same_values(g_jax(*args), g_mini(*args), weak=False)


def _jvp(m: Lib, name: str) -> tuple[Callable[..., Any], list[Any]]:
    program, args, argnums = GRADS[name]
    f = program(m)

    def jvp(*a: Any) -> Any:
        primals = [a[i] for i in argnums]

        def g(*p: Any) -> Any:
            full = list(a)
            for i, v in zip(argnums, p):
                full[i] = v
            return f(*full)

        return m.jax.jvp(g, primals, [m.jnp.ones_like(p) for p in primals])

    return jvp, args


@pytest.mark.parametrize("name", sorted(GRADS))
def test_jvp_jaxpr_and_value(name: str) -> None:
    j_jax, args = _jvp(JAX, name)
    j_mini, _ = _jvp(MINI, name)
    _same_text(str(jax.make_jaxpr(j_jax)(*args)), str(minijax.make_jaxpr(j_mini)(*args)))
    _same_values(j_jax(*args), j_mini(*args))


@pytest.mark.parametrize("name", sorted(VMAPS))
def test_vmap_jaxpr_and_value(name: str) -> None:
    program, args, in_axes = VMAPS[name]
    v_jax, v_mini = jax.vmap(program(JAX), in_axes=in_axes), minijax.vmap(program(MINI), in_axes=in_axes)
    _same_text(str(jax.make_jaxpr(v_jax)(*args)), str(minijax.make_jaxpr(v_mini)(*args)))
    _same_values(v_jax(*args), v_mini(*args))


def test_grad_of_vmap_with_a_batched_predicate() -> None:
    def program(m: Lib) -> Callable[..., Any]:
        f = lambda x: m.lax.cond(x > 0.5, m.jnp.log, lambda x: 0.0 * x, x)  # noqa: E731
        g: Callable[..., Any] = m.jax.grad(lambda xs: m.jax.vmap(f)(xs).sum())
        return g

    xs = np.array([0.0, 2.0, 0.7], np.float32)
    _same_text(str(jax.make_jaxpr(program(JAX))(xs)), str(minijax.make_jaxpr(program(MINI))(xs)))
    _same_values(program(JAX)(xs), program(MINI)(xs), weak=False)


def test_hessian_values() -> None:
    def program(m: Lib) -> Callable[..., Any]:
        h: Callable[..., Any] = m.jax.hessian(
            lambda x: m.lax.cond(x.sum() > 0, lambda x: m.jnp.sin(x).sum() * x[0], lambda x: (x**3).sum(), x)
        )
        return h

    for x in (X, -X):
        _same_values(program(JAX)(x), program(MINI)(x), weak=False)


def _raise(m: Lib, call: Callable[[Lib], Any]) -> Exception:
    try:
        call(m)
    except Exception as e:
        return e
    raise AssertionError("no exception")


def _l(x: Any) -> Any:
    return x


ERRORS: dict[str, Callable[[Lib], Any]] = {
    "pred_not_scalar": lambda m: m.lax.cond(np.array([True, False]), _l, _l, 1.0),
    "pred_string": lambda m: m.lax.cond("a", _l, _l, 1.0),
    "pred_none": lambda m: m.lax.cond(None, _l, _l, 1.0),
    "not_callable": lambda m: m.lax.cond(True, 1, _l, 1.0),
    "operand_keyword_and_positional": lambda m: m.lax.cond(True, _l, _l, 1.0, operand=2.0),
    "operand_not_an_array": lambda m: m.lax.cond(True, _l, _l, "s"),
    "structure_lengths": lambda m: m.lax.cond(True, lambda x: (x, x), lambda x: (x, x, x), 1.0),
    "structure_types": lambda m: m.lax.cond(True, lambda x: (x, x), lambda x: [x, x], 1.0),
    "structure_dict_keys": lambda m: m.lax.cond(True, lambda x: {"a": x}, lambda x: {"b": x}, 1.0),
    "structure_leaf": lambda m: m.lax.cond(True, lambda x: x, lambda x: (x,), 1.0),
    "structure_many": lambda m: m.lax.cond(True, lambda x: {"a": (x, x), "b": [x]}, lambda x: {"a": [x, x], "b": (x,)}, 1.0),
    "structure_children": lambda m: m.lax.cond(True, lambda x: {"a": x, "b": x}, lambda x: {"a": x}, 1.0),
    "types_one": lambda m: m.lax.cond(True, lambda x: (x, m.jnp.ones(3)), lambda x: (x, m.jnp.ones(2, m.jnp.int32)), 1.0),
    "types_many": lambda m: m.lax.switch(0, [lambda x: (x, x), lambda x: (x, x), lambda x: (1, m.jnp.ones(2))], 1.0),
    "index_float": lambda m: m.lax.switch(1.5, [_l], 1.0),
    "index_not_scalar": lambda m: m.lax.switch(np.array([1, 2]), [_l], 1.0),
    "no_branches": lambda m: m.lax.switch(1, [], 1.0),
    "branch_not_callable": lambda m: m.lax.switch(1, [_l, 3], 1.0),
    "traced_python_if": lambda m: m.lax.cond(True, lambda x, y: x if x > 0 else y, lambda x, y: x, 1.0, 2.0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_jaxs_type_and_message(name: str) -> None:
    e_jax, e_mini = _raise(JAX, ERRORS[name]), _raise(MINI, ERRORS[name])
    assert type(e_mini).__name__ == type(e_jax).__name__
    # JAX appends a note about its filtered traceback frames; minijax has none.
    expected = str(e_jax).split("\n--------------------\n")[0].splitlines()
    got = str(e_mini).splitlines()
    if name == "traced_python_if":  # the last line links JAX's docs page
        expected, got = expected[:2], got[:2]
    assert got == expected
