"""Sharding in types prints and refuses what real JAX 0.10.2 does: ``SCRIPT`` runs once under JAX
and once under minijax on 8 forced CPU devices (tests/test_sharding_oracle.py's ``run``) and the
lines must be equal: ``jax.typeof`` of traced values over Explicit mesh axes, make_jaxpr's text,
and the ShardingTypeErrors of conflicting operands, whole."""

from __future__ import annotations

import difflib

import pytest

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

from test_sharding_oracle import run  # noqa: E402

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import PartitionSpec as P, AxisType

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)

def put(shape, *spec):
    return jax.device_put(np.ones(shape, np.float32), P(*spec))

def t(label, f, *args):
    try:
        jax.make_jaxpr(lambda *a: print(label, jax.typeof(f(*a))))(*args)
    except Exception as e:
        print(label, type(e).__name__, ":", str(e))

def f(a):
    s = jnp.sin(a) + 1.0
    return s.sum(0), s.T, s.astype(jnp.int32), jnp.broadcast_to(s.sum(0), (3, 4)), s.max(1), -s * 2

print(jax.make_jaxpr(f)(put((8, 4), "x", "y")))
a = put((8, 8), "x", "y")
t("add", lambda u, v: u + v, a, put((8, 8), "y", "x"))
t("add none", lambda u, v: u * v, a, put((8, 8), "x", None))
t("add plain", lambda u: u + np.ones((8, 8), np.float32), a)
t("where", lambda u: jnp.where(u > 0, u, 0.0), a)
t("mm free", jnp.matmul, put((8, 4), "x", "y"), put((4, 8), None, None))
t("mm one side", jnp.matmul, put((8, 4), "x", None), put((4, 8), "y", None))
t("mm both", jnp.matmul, put((8, 4), "x", "y"), put((4, 8), "y", None))
t("mm both differ", jnp.matmul, put((8, 8), "x", "y"), put((8, 8), "x", None))
t("mm duplicate", jnp.matmul, put((8, 4), "x", None), put((4, 8), None, "x"))
t("mm batch", jnp.matmul, put((2, 8, 4), "x", None, None), put((2, 4, 8), "x", None, None))
t("mm rhs free", jnp.matmul, put((8, 4), None, None), put((4, 8), None, "y"))
t("slice", lambda u: u[2:6], a)
t("slice odd", lambda u: u[1:4], a)
t("slice free dim", lambda u: u[:, :4], put((8, 8), "x", None))
t("concatenate", lambda u, v: jnp.concatenate([u, v], 1), a, a)
t("concatenate differ", lambda u, v: jnp.concatenate([u, v], 1), a, put((8, 8), "y", "x"))
t("einsum", lambda u, v: jnp.einsum("ij,jk->ik", u, v), put((8, 4), "x", None), put((4, 8), None, "y"))
'''


def test_sharded_types_and_their_errors_are_jax_s() -> None:
    expected = run(SCRIPT, "jax")
    got = run(SCRIPT, "minijax")
    diff = "\n".join(difflib.unified_diff(expected.splitlines(), got.splitlines(), "jax", "minijax", lineterm=""))
    assert got == expected, diff
