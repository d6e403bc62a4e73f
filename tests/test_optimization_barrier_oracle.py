"""lax.optimization_barrier against real JAX: the same jaxprs under jit, grad and vmap, the same values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402  (after the importorskip)

pytestmark = pytest.mark.oracle


def _programs(lib: Any) -> list[str]:
    jnp, lax = lib.numpy, lib.lax
    barrier_sin = lambda x: lax.optimization_barrier(jnp.sin(x))  # noqa: E731
    return [
        str(lib.make_jaxpr(lambda x, n: lax.optimization_barrier((jnp.sin(x), n)))(1.0, np.ones(2, np.int32))),
        str(lib.make_jaxpr(lib.grad(barrier_sin))(1.0)),
        str(lib.make_jaxpr(lib.vmap(lambda x: lax.optimization_barrier([x, 2.0])))(np.ones(3, np.float32))),
        str(lib.make_jaxpr(lib.jit(lambda x: lax.optimization_barrier(x) + jnp.sin(x)))(np.ones(2, np.float32))),
        repr(lax.optimization_barrier({"a": 1.0, "b": [np.arange(2)]})),
        repr(lib.jit(lambda x: lax.optimization_barrier(x)[0])((1, 2))),
        repr(lib.grad(barrier_sin)(0.5)),
    ]


def test_jaxprs_and_values_equal_jaxs() -> None:
    assert _programs(minijax) == _programs(jax)
