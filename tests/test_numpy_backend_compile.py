"""The NumPy backend compiles a program that is one equation on its arguments
to that equation's eager runner (``_is_one_equation``, an optimisation of its
jaxpr interpreter ``compile_jaxpr``): both must give the same results, and
programs that are not of that form must still go to the interpreter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from minijax_numpy.backend import _is_one_equation

import minijax as jax
import minijax.numpy as jnp
from minijax.backend import get_backend

x = np.linspace(-1.0, 2.0, 6, dtype=np.float32).reshape(2, 3)
y = np.arange(6, dtype=np.int32).reshape(3, 2)

ONE_EQUATION: list[tuple[Any, tuple[Any, ...]]] = [
    (jnp.sin, (x,)),
    (lambda a: jnp.sum(a, axis=1), (x,)),
    (lambda a, b: jax.lax.dot_general(a, b, (((1,), (0,)), ((), ()))), (x, y.astype(np.float32))),
    (lambda a, b: jax.lax.sort((a, b), num_keys=1), (x, -x)),  # several results
    (lambda a: jax.lax.argmax(a, 0, np.int32), (x,)),
]
NOT_ONE_EQUATION: list[tuple[Any, tuple[Any, ...]]] = [
    (lambda a: jnp.sin(a) + 1.0, (x,)),  # two equations
    (lambda a, b: jax.lax.sub(b, a), (x, x)),  # the arguments swapped
    (lambda a: jax.lax.add(a, a), (x,)),  # an argument used twice
    (lambda a: (jnp.sin(a), a), (x,)),  # an argument returned as it is
]


def _compiled_both_ways(fun: Any, args: tuple[Any, ...]) -> tuple[Any, list[Any], list[Any]]:
    closed = jax.make_jaxpr(fun)(*args)
    backend = get_backend("numpy")
    bufs = [np.asarray(a) for a in args]
    fast = backend.compile(closed)(bufs)
    plain = backend.compile_jaxpr(closed.jaxpr, closed.consts)(*bufs)  # type: ignore[attr-defined]
    return closed, fast, plain


@pytest.mark.parametrize("case", range(len(ONE_EQUATION)))
def test_one_equation_program_runs_as_its_eager_runner_and_agrees(case: int) -> None:
    closed, fast, plain = _compiled_both_ways(*ONE_EQUATION[case])
    assert _is_one_equation(closed.jaxpr)
    assert len(fast) == len(plain) == len(closed.out_avals)
    for f, p, aval in zip(fast, plain, closed.out_avals):
        assert f.dtype == p.dtype == aval.dtype and f.shape == p.shape == aval.shape
        np.testing.assert_array_equal(f, p)


@pytest.mark.parametrize("case", range(len(NOT_ONE_EQUATION)))
def test_other_programs_go_to_the_interpreter(case: int) -> None:
    closed, fast, plain = _compiled_both_ways(*NOT_ONE_EQUATION[case])
    assert not _is_one_equation(closed.jaxpr)
    for f, p in zip(fast, plain):
        np.testing.assert_array_equal(f, p)
