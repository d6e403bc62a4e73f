"""custom_vmap against real JAX: the same custom_vmap_call jaxprs, and the rule runs where JAX runs it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402  (after the importorskip)

pytestmark = pytest.mark.oracle


def _program(lib: Any) -> list[str]:
    jnp = lib.numpy

    @lib.custom_batching.custom_vmap
    def f(x, y):  # type: ignore[no-untyped-def]
        return jnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):  # type: ignore[no-untyped-def]
        return jnp.cos(x) * y, True

    ones = np.ones(3, np.float32)
    return [
        str(lib.make_jaxpr(f)(1.0, 2.0)),
        str(lib.make_jaxpr(lib.jit(f))(1.0, 2.0)),
        str(lib.make_jaxpr(lib.vmap(lib.jit(f)))(ones, ones)),
        str(lib.make_jaxpr(lib.vmap(f, in_axes=(0, None)))(ones, 2.0)),
        repr(lib.vmap(lib.jit(f))(ones, ones)),
        repr(f(1.0, 2.0)),
    ]


def test_jaxprs_and_values_equal_jaxs() -> None:
    assert _program(minijax) == _program(jax)
