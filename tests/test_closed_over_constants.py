"""Constants that control flow's functions close over: identified by identity, typed as they are.

``lax.cond``/``lax.switch`` share a constant between branches only when the
branches closed over one and the same object (as JAX does); two distinct
arrays with equal contents are two operands, each bound where it is read. A
closed-over PRNG key (a scalar of an extended dtype) stays a key through every
control-flow function, eagerly and under jit. The comparison with real JAX is
in test_cond_oracle.py (programs ``distinct_equal_constants`` and on).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.jaxpr import Literal, eval_closed_jaxpr
from minijax.jaxpr_check import check_jaxpr
from minijax.primitives.cond import cond_p

X = np.array([1.0, -2.0, 0.5], np.float32)


def _cond_eqn(closed: Any) -> Any:
    (eqn,) = [e for e in closed.eqns if e.primitive is cond_p]
    return eqn


# ---------------------------------------------------------------------------
# Identity, not contents


def test_two_distinct_arrays_with_equal_contents_are_two_operands() -> None:
    a, b = jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([1.0, 2.0, 3.0])

    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda x: x + a, lambda x: x * b, x)

    closed = jax.make_jaxpr(f)(True, X)
    check_jaxpr(closed.jaxpr)
    eqn = _cond_eqn(closed)
    assert len(eqn.invars) == 4  # index, a, b, x
    assert eqn.invars[1] is not eqn.invars[2]
    for p in (True, False):
        want = X + np.asarray(a) if p else X * np.asarray(b)
        np.testing.assert_array_equal(f(p, X), want)
        np.testing.assert_array_equal(jax.jit(f)(p, X), want)


def test_one_array_closed_over_by_both_branches_is_one_operand() -> None:
    for c in (jnp.asarray([1.0, 2.0, 3.0]), np.asarray([1.0, 2.0, 3.0], np.float32)):
        eqn = _cond_eqn(jax.make_jaxpr(lambda p, x, c=c: lax.cond(p, lambda x: x * c, lambda x: x - c, x))(True, X))
        assert len(eqn.invars) == 3  # index, c, x


def test_equal_contents_in_two_dtypes_and_a_constant_read_by_both_branches() -> None:
    a = jnp.asarray([1.0, 2.0, 3.0])
    b = jnp.asarray([1, 2, 3], jnp.int32)
    twin = jnp.asarray([1.0, 2.0, 3.0])

    def f(i: Any, x: Any) -> Any:
        branches: list[Callable[[Any], Any]] = [
            lambda x: x + a * twin,
            lambda x: x * b + a,
            lambda x: x - twin,
        ]
        return lax.switch(i, branches, x)

    eqn = _cond_eqn(jax.make_jaxpr(f)(0, X))
    assert len(eqn.invars) == 5  # index, a, twin, b, x
    an, bn = np.asarray(a), np.asarray(b)
    wants = [X + an * an, X * bn + an, X - an]
    for i, want in enumerate(wants):
        np.testing.assert_allclose(f(i, X), want, rtol=1e-6)
        np.testing.assert_allclose(jax.jit(f)(i, X), want, rtol=1e-6)
    grads = [np.ones(3), bn.astype(np.float32), np.ones(3)]
    for i, want in enumerate(grads):
        np.testing.assert_allclose(jax.grad(lambda x, i=i: f(i, x).sum())(X), want)


def test_branches_returning_distinct_equal_arrays_under_transformations() -> None:
    a, b = jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([1.0, 2.0, 3.0])

    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda x: (x * 2.0, a, b), lambda x: (x, b, a), x)

    for p in (True, False):
        outs = f(p, X)
        np.testing.assert_array_equal(outs[1], np.asarray(a))
        np.testing.assert_array_equal(jax.jit(f)(p, X)[2], np.asarray(b))
        g = jax.grad(lambda x, p=p: sum(jnp.sum(o * x) for o in f(p, x)))(X)
        want = (4.0 * X if p else 2.0 * X) + 2.0 * np.asarray(a)
        np.testing.assert_allclose(g, want, rtol=1e-6)
        batched = jax.vmap(lambda x, p=p: f(p, x))(np.stack([X, X]))
        np.testing.assert_array_equal(batched[1], np.stack([np.asarray(a)] * 2))


# ---------------------------------------------------------------------------
# PRNG keys


def _key_programs(k: Any) -> dict[str, Callable[[], Any]]:
    return {
        "cond": lambda: lax.cond(True, lambda: k, lambda: k),
        "cond_other_key": lambda: lax.cond(False, lambda: jax.random.key(7), lambda: k),
        "switch": lambda: lax.switch(1, [lambda: k, lambda: k, lambda: k]),
        "while": lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, k), (0, jax.random.key(3)))[1],
        "scan": lambda: lax.scan(lambda c, _: (k, k), jax.random.key(1), None, length=2)[0],
        "fori": lambda: lax.fori_loop(0, 3, lambda i, c: k, jax.random.key(1)),
    }


@pytest.mark.parametrize("name", sorted(_key_programs(None)))
def test_a_closed_over_key_stays_a_key(name: str) -> None:
    k = jax.random.key(0)
    program = _key_programs(k)[name]
    for run in (program, jax.jit(program)):
        out = run()
        assert out.dtype == k.dtype
        np.testing.assert_array_equal(jax.random.key_data(jax.random.split(out)), jax.random.key_data(jax.random.split(k)))


def test_a_scalar_key_constant_is_a_constvar_not_a_literal() -> None:
    k = jax.random.key(0)
    closed = jax.make_jaxpr(lambda: jax.random.split(k))()
    assert len(closed.jaxpr.constvars) == 1 and closed.jaxpr.constvars[0].aval.dtype == k.dtype
    assert not any(isinstance(a, Literal) for e in closed.eqns for a in e.invars)


def test_a_raw_uint32_key_stays_uint32() -> None:
    k = jax.random.PRNGKey(0)
    out = lax.cond(True, lambda: k, lambda: k)
    assert out.dtype == np.uint32 and out.shape == (2,)
    np.testing.assert_array_equal(jax.random.split(out), jax.random.split(k))


# ---------------------------------------------------------------------------
# One host array, one constvar (issue 20): jnp functions each convert a NumPy
# array they are given, but the jaxpr closes over the NumPy object once, as JAX
# keys its constants by the identity of what the function closed over.

M = np.arange(9.0, dtype=np.float32).reshape(3, 3)
C = np.arange(3.0, dtype=np.float32)
C64 = np.arange(3.0)  # float64: captured as float32 (x64 off), still one constant

ONE_HOST_CONSTANT = {
    "dot_and_sum": lambda x: jnp.dot(M, x) + jnp.sum(M),
    "asarray_twice": lambda x: jnp.asarray(C) + x * jnp.asarray(C),
    "array_twice": lambda x: jnp.array(C) + x * jnp.array(C),
    "raw_then_converted": lambda x: x * C + jnp.asarray(C),
    "converted_then_raw": lambda x: jnp.asarray(C) * x + C,
    "float64_twice": lambda x: jnp.asarray(C64) + x * jnp.sum(C64),
}


@pytest.mark.parametrize("name", sorted(ONE_HOST_CONSTANT))
def test_a_host_array_used_twice_is_one_constvar(name: str) -> None:
    fun = ONE_HOST_CONSTANT[name]
    x = np.array([1.0, 2.0, 3.0], np.float32)
    closed = jax.make_jaxpr(fun)(x)
    check_jaxpr(closed.jaxpr)
    assert len(closed.jaxpr.constvars) == 1, closed
    assert len(closed.literals) == 1
    np.testing.assert_allclose(jax.jit(fun)(x), fun(x), rtol=1e-6)
    # The values are what the closed-over array holds, wherever it was converted.
    (out,) = eval_closed_jaxpr(closed, x)
    np.testing.assert_allclose(out, fun(x), rtol=1e-6)


def test_two_host_arrays_with_equal_contents_stay_two_constvars() -> None:
    a, b = C.copy(), C.copy()
    closed = jax.make_jaxpr(lambda x: jnp.asarray(a) + x * jnp.asarray(b))(C)
    assert len(closed.jaxpr.constvars) == 2
