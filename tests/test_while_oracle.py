"""while_loop and fori_loop against real JAX 0.10.2 (the oracle): jaxpr texts, values, errors.

Each program is written once against a (jax, jnp, lax) triple and runs under
JAX and under minijax: the printed jaxprs must be identical, and so must the
values (and, for loops under no transformation, the weak types). Errors must
have JAX's type and message. Run where JAX is installed:
    .venv-oracle/bin/python -m pytest tests/test_while_oracle.py
"""

from __future__ import annotations

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

C = np.array([1.0, 2.0], np.float32)
XS = np.array([1.0, 3.0, 20.0], np.float32)
M23 = np.arange(6, dtype=np.float32).reshape(2, 3) + 1


# --- loops (under no transformation, then under jvp, linearize and vmap) ---------------


def doubling(m: Lib) -> Callable[..., Any]:
    return lambda x: m.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)


def two_carries(m: Lib) -> Callable[..., Any]:
    return lambda x: m.lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0, c[1] * c[0]), (x, x))


def consts(m: Lib) -> Callable[..., Any]:
    return lambda x, y: m.lax.while_loop(lambda c: c[0] < y, lambda c: (c[0] * 2.0 + y, c[1] + 1), (x, 0))


def sin_body(m: Lib) -> Callable[..., Any]:
    return lambda x, y: m.lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * y, m.jnp.sin(c[1]) * c[0]), (x, x))


def array_consts(m: Lib) -> Callable[..., Any]:
    d = m.jnp.array([3.0, 4.0])
    return lambda x: m.lax.while_loop(lambda v: v[0] < C[1] * 10, lambda v: v * C + d, x)


def forwarded(m: Lib) -> Callable[..., Any]:
    return lambda x, y: m.lax.while_loop(lambda v: v[0] < 10.0, lambda v: (v[0] + v[1], v[1], v[2]), (x, y, 2.0))


def weak_promoted(m: Lib) -> Callable[..., Any]:
    return lambda x: m.lax.while_loop(lambda c: c < 3 + x, lambda c: c + 1.5, 0)


def dict_carry(m: Lib) -> Callable[..., Any]:
    body = lambda c: {"i": c["i"] + 1, "v": m.jnp.cos(c["v"]) * 2.0}  # noqa: E731
    return lambda x: m.lax.while_loop(lambda c: c["i"] < 4, body, {"i": 0, "v": x})


def fori_dynamic(m: Lib) -> Callable[..., Any]:
    return lambda x, n: m.lax.fori_loop(0, n, lambda i, c: c * 2.0 + i, x)


def fori_dynamic_lower(m: Lib) -> Callable[..., Any]:
    return lambda x, n: m.lax.fori_loop(n, 5, lambda i, c: c + i, x)


def nested(m: Lib) -> Callable[..., Any]:
    def inner(c: Any) -> Any:
        return m.lax.while_loop(lambda d: d < c * 4.0, lambda d: d * 1.5, c)

    return lambda x: m.lax.while_loop(lambda c: c < 100.0, lambda c: inner(c) + 1.0, x)


def jit_inside(m: Lib) -> Callable[..., Any]:
    return lambda x: m.jax.jit(lambda y: m.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0 + y, y))(x)


def vector_carry(m: Lib) -> Callable[..., Any]:
    return lambda x: m.lax.while_loop(lambda c: c[0].sum() < 50.0, lambda c: (c[0] * 1.5 + m.jnp.tanh(c[1]), c[1] + 1.0), (x, x))


def cond_dead_code(m: Lib) -> Callable[..., Any]:
    # v[1] is read only by dead code in the predicate: it moves to the constants, and the dead code goes.
    return lambda x, y: m.lax.while_loop(lambda v: (v[1] * 3.0, v[0] < 10.0)[1], lambda v: (v[0] * 2.0, v[1]), (x, y))


LOOPS: dict[str, tuple[Program, list[Any]]] = {
    "doubling": (doubling, [1.0]),
    "two_carries": (two_carries, [1.0]),
    "consts": (consts, [1.0, 3.0]),
    "sin_body": (sin_body, [1.0, 3.0]),
    "array_consts": (array_consts, [np.ones(2, np.float32)]),
    "forwarded": (forwarded, [1.0, 2.0]),
    "weak_promoted": (weak_promoted, [1.0]),
    "dict_carry": (dict_carry, [0.5]),
    "fori_dynamic": (fori_dynamic, [1.0, 3]),
    "fori_dynamic_int16": (fori_dynamic, [1.0, np.int16(3)]),
    "fori_dynamic_lower": (fori_dynamic_lower, [1.0, 2]),
    "nested": (nested, [1.0]),
    "jit_inside": (jit_inside, [1.0]),
    "vector_carry": (vector_carry, [np.array([1.0, 2.0, 3.0], np.float32)]),
    "cond_dead_code": (cond_dead_code, [1.0, 2.0]),
}


def _tangent(x: Any) -> Any:
    if isinstance(x, float) or np.issubdtype(np.asarray(x).dtype, np.floating):
        return np.full(np.shape(x), 0.5, np.float32)
    return np.zeros(np.shape(x), jax.dtypes.float0)


def _transformed(kind: str, program: Program, args: list[Any]) -> tuple[Program, list[Any]]:
    """``program`` under ``kind`` (plain, jvp, linearize, vmap) and its arguments."""
    n = len(args)
    if kind == "plain":
        return program, args
    # (Each program is built before the transformation traces it, as for "plain": an
    # array a program makes is then a constant from outside the trace.)
    if kind == "jvp":

        def jvp(m: Lib) -> Callable[..., Any]:
            f = program(m)
            return lambda *a: m.jax.jvp(f, a[:n], a[n:])

        return jvp, [*args, *map(_tangent, args)]
    if kind == "linearize":
        tangents = [_tangent(a) * 2 if _tangent(a).dtype != jax.dtypes.float0 else _tangent(a) for a in args]

        def linearize(m: Lib) -> Callable[..., Any]:
            f = program(m)
            return lambda *a: m.jax.linearize(f, *a)[1](*tangents)

        return linearize, args
    batch = [np.stack([np.asarray(a) * (1 + k) for k in range(3)]) for a in args]
    return (lambda m: m.jax.vmap(program(m))), batch


def t_vmap_none_pred_unbatched(m: Lib) -> Any:
    f: Callable[..., Any] = lambda i, x: m.lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (i, x))  # noqa: E731
    return m.jax.vmap(f, in_axes=(None, 0))


def t_vmap_axis1(m: Lib) -> Any:
    f: Callable[..., Any] = lambda x: m.lax.while_loop(lambda c: c.sum() < 30.0, lambda c: c * 2.0, x)  # noqa: E731
    return m.jax.vmap(f, in_axes=1, out_axes=1)


def t_vmap_batched_cond_const(m: Lib) -> Any:
    f: Callable[..., Any] = lambda x, lim: m.lax.while_loop(lambda c: c < lim, lambda c: c * 2.0, x)  # noqa: E731
    return m.jax.vmap(f, in_axes=(None, 0))


def t_vmap_batched_body_const(m: Lib) -> Any:
    f: Callable[..., Any] = lambda x, y: m.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * y), (0, x))  # noqa: E731
    return m.jax.vmap(f, in_axes=(None, 0))


def t_vmap_unbatched_carry_broadcast(m: Lib) -> Any:
    f: Callable[..., Any] = lambda x, y: m.lax.while_loop(lambda c: c[1] < y, lambda c: (c[0] * 2.0, c[1] + 1.0), (x, 0.0))  # noqa: E731
    return m.jax.vmap(f, (None, 0))


def t_nested_vmap(m: Lib) -> Any:
    return m.jax.vmap(m.jax.vmap(doubling(m)))


def t_nested_vmap_inner_unbatched(m: Lib) -> Any:
    f: Callable[..., Any] = lambda x, y: m.lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0, c[1] + y), (x, 0.0))  # noqa: E731
    return m.jax.vmap(m.jax.vmap(f, in_axes=(None, 0)), in_axes=(0, None))


def t_vmap_jvp(m: Lib) -> Any:
    f = sin_body(m)
    return m.jax.vmap(lambda x, t: m.jax.jvp(lambda x: f(x, 3.0), (x,), (t,)))


def t_jvp_vmap(m: Lib) -> Any:
    f = sin_body(m)
    return lambda x, t: m.jax.jvp(m.jax.vmap(lambda x: f(x, 3.0)), (x,), (t,))


def t_jvp_const_tangent(m: Lib) -> Any:
    f: Callable[..., Any] = lambda x, y: m.lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * y, c[1] + y), (x, 0.0))  # noqa: E731
    return lambda x, y: m.jax.jvp(lambda y: f(x, y), (y,), (1.0,))


def _accumulate(m: Lib) -> Callable[..., Any]:
    # the second carry starts with a zero tangent that the fixpoint makes nonzero: zeros are instantiated
    return lambda x: m.lax.while_loop(lambda c: c[0][0] < 10.0, lambda c: (c[0] * 2.0, c[1] + c[0]), (x, m.jnp.zeros(3)))


def t_jvp_instantiated_zeros(m: Lib) -> Any:
    return lambda x, t: m.jax.jvp(_accumulate(m), (x,), (t,))


def t_linearize_instantiated_zeros(m: Lib) -> Any:
    return lambda x: m.jax.linearize(_accumulate(m), x)[1](m.jnp.ones(3))


def t_grad_independent(m: Lib) -> Any:
    return m.jax.grad(lambda x, y: x * doubling(m)(y))


def t_grad_predicate_only(m: Lib) -> Any:
    f: Callable[..., Any] = lambda x: m.lax.while_loop(lambda c: c < x, lambda c: c + 1.0, 0.0)  # noqa: E731
    return m.jax.grad(lambda x: f(x) * x)


def t_vmap_collective(m: Lib) -> Any:
    f: Callable[..., Any] = lambda x: m.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0 + m.lax.psum(c, "i") * 0.01, x)  # noqa: E731
    return m.jax.vmap(f, axis_name="i")


def t_fori_static(m: Lib) -> Any:
    return lambda x: m.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)


def t_grad_fori_static(m: Lib) -> Any:
    return m.jax.grad(lambda x: m.lax.fori_loop(0, 3, lambda i, c: m.jnp.sin(c) * x + i, x))


TRANSFORMED: dict[str, tuple[Program, list[Any]]] = {
    "vmap_none_pred_unbatched": (t_vmap_none_pred_unbatched, [0, XS]),
    "vmap_axis1": (t_vmap_axis1, [M23]),
    "vmap_batched_cond_const": (t_vmap_batched_cond_const, [1.0, np.array([5.0, 50.0, 0.5], np.float32)]),
    "vmap_batched_body_const": (t_vmap_batched_body_const, [1.0, XS]),
    "vmap_unbatched_carry_broadcast": (t_vmap_unbatched_carry_broadcast, [np.ones(2, np.float32), XS]),
    "nested_vmap": (t_nested_vmap, [M23]),
    "nested_vmap_inner_unbatched": (t_nested_vmap_inner_unbatched, [XS[:2], XS]),
    "vmap_jvp": (t_vmap_jvp, [XS, XS * 0 + 1]),
    "jvp_vmap": (t_jvp_vmap, [XS, XS * 0 + 1]),
    "jvp_const_tangent": (t_jvp_const_tangent, [1.0, 2.0]),
    "jvp_instantiated_zeros": (t_jvp_instantiated_zeros, [XS, XS]),
    "linearize_instantiated_zeros": (t_linearize_instantiated_zeros, [XS]),
    "grad_independent": (t_grad_independent, [2.0, 1.0]),
    "grad_predicate_only": (t_grad_predicate_only, [3.5]),
    "vmap_collective": (t_vmap_collective, [XS]),
    "fori_static": (t_fori_static, [1.0]),
    "grad_fori_static": (t_grad_fori_static, [0.7]),
}

CASES: dict[str, tuple[Program, list[Any]]] = {
    **{f"{kind}-{name}": _transformed(kind, *LOOPS[name]) for kind in ("plain", "jvp", "linearize", "vmap") for name in LOOPS},
    **TRANSFORMED,
}


def _text(m: Lib, name: str) -> str:
    program, args = CASES[name]
    return str(m.jax.make_jaxpr(program(m))(*args))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_jaxpr_is_jaxs(name: str) -> None:
    assert _text(MINI, name) == _text(JAX, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_values_are_jaxs(name: str) -> None:
    program, args = CASES[name]
    want = jax.tree_util.tree_leaves(program(JAX)(*args))
    got = minijax.tree_util.tree_leaves(program(MINI)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        if np.asarray(w).dtype != jax.dtypes.float0:  # (float0 tangents hold no numbers)
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        if name.startswith("plain-"):
            # (Under jvp and vmap minijax loses weak types in evaluated jaxprs: see the report.)
            assert getattr(g, "weak_type", None) == getattr(w, "weak_type", None)


# --- errors ---------------------------------------------------------------------------


def _py_if_body(c: Any) -> Any:
    if c > 1.0:
        return c
    return c + 1.0


def _py_if_cond(c: Any) -> Any:
    return c[0] < 3.0 if c[1] > 0 else False


def _fori_py_if(i: Any, c: Any) -> Any:
    if c > 1.0:
        return c
    return c + 1.0


NOT_CALLABLE: Any = 3

ERRORS: dict[str, Program] = {
    "cond_float": lambda m: lambda: m.lax.while_loop(lambda c: c, lambda c: c * 2.0, 1.0),
    "cond_tuple": lambda m: lambda: m.lax.while_loop(lambda c: (c < 1.0, c < 2.0), lambda c: c * 2.0, 1.0),
    "cond_vector": lambda m: lambda: m.lax.while_loop(lambda c: m.jnp.array([True, False]), lambda c: c * 2.0, 1.0),
    "cond_int": lambda m: lambda: m.lax.while_loop(lambda c: 1, lambda c: c, 1.0),
    "body_structure": lambda m: lambda: m.lax.while_loop(lambda c: c < 1, lambda c: (c, c), 1.0),
    "body_types": lambda m: lambda: m.lax.while_loop(
        lambda c: c[0] < 1, lambda c: (c[0], c[1].astype(m.jnp.int32), c[2][None]), (1.0, 2.0, m.jnp.ones(2))
    ),
    "body_dict_type": lambda m: lambda: m.lax.while_loop(
        lambda c: c["a"] < 1, lambda carry: {"a": carry["a"] * 2, "b": carry["b"].astype(int)}, {"a": 1.0, "b": 2.0}
    ),
    "body_dict_keys": lambda m: lambda: m.lax.while_loop(lambda c: c["a"] < 1, lambda c: {"a": c["a"], "c": c["b"]}, {"a": 1.0, "b": 2.0}),
    "body_list_length": lambda m: lambda: m.lax.while_loop(lambda c: c[0] < 1, lambda c: [c[0]], [1.0, 2.0]),
    "not_callable": lambda m: lambda: m.lax.while_loop(lambda c: c < 1, NOT_CALLABLE, 1.0),
    "body_returns_str": lambda m: lambda: m.lax.while_loop(lambda c: c < 1, lambda c: "x", 1.0),
    "init_str": lambda m: lambda: m.lax.while_loop(lambda c: c < 1, lambda c: c, "x"),
    "py_if_body": lambda m: lambda: m.lax.while_loop(lambda c: c < 3.0, _py_if_body, 1.0),
    "py_if_cond": lambda m: lambda: m.lax.while_loop(_py_if_cond, lambda c: c, (1.0, 2.0)),
    "fori_py_if_dynamic": lambda m: lambda: m.jax.jit(lambda n: m.lax.fori_loop(0, n, _fori_py_if, 1.0))(3),
    "fori_types_dynamic": lambda m: lambda: m.jax.jit(lambda n: m.lax.fori_loop(0, n, lambda i, c: c.astype(int), 1.0))(3),
    "fori_types_static": lambda m: lambda: m.lax.fori_loop(0, 3, lambda i, c: c.astype(int), 1.0),
    "fori_structure_static": lambda m: lambda: m.lax.fori_loop(0, 3, lambda i, c: (c, c), 1.0),
    "fori_bounds": lambda m: lambda: m.lax.fori_loop(m.jnp.int8(0), m.jnp.int16(3), lambda i, c: c, 1.0),
    "fori_float_bound": lambda m: lambda: m.lax.fori_loop(0.0, 3, lambda i, c: c, 1.0),
    "fori_not_callable": lambda m: lambda: m.lax.fori_loop(0, 3, NOT_CALLABLE, 1.0),
    "fori_unroll_dynamic": lambda m: lambda: m.jax.jit(lambda n: m.lax.fori_loop(0, n, lambda i, c: c, 1.0, unroll=2))(3),
    "grad": lambda m: lambda: m.jax.grad(doubling(m))(1.0),
    "grad_fori_dynamic": lambda m: lambda: m.jax.jit(m.jax.grad(lambda x, n: m.lax.fori_loop(0, n, lambda i, c: c * 2.0, x)))(1.0, 3),
    "vjp_pullback": lambda m: lambda: m.jax.vjp(doubling(m), 1.0)[1](1.0),
}


def _error(m: Lib, name: str) -> tuple[str, str]:
    try:
        ERRORS[name](m)()
    except Exception as e:
        message = str(e).replace("jax._src.core.ShapedArray", "minijax.core.ShapedArray")
        if isinstance(e, (jax.errors.TracerBoolConversionError, minijax.errors.TracerBoolConversionError)):
            # minijax's tracer errors add the fixes and a link of their own after JAX's text
            message = "\n".join(message.splitlines()[:2])
        return type(e).__name__, message
    raise AssertionError(f"{name}: no error")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_jaxs(name: str) -> None:
    assert _error(MINI, name) == _error(JAX, name)
