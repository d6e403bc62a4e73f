"""spmdx (issue 17) against real JAX 0.10.2 on 8 forced CPU devices: with_sharding_constraint
inside jit (its jaxpr equation, the layout of the result), SPMD in the AOT stages (the
module's partition attributes, ``Compiled.input_shardings``/``output_shardings``, the
sharding-mismatch error), donation of a sharded argument, and pmap's result shardings.
``SCRIPT`` runs under both (tests/test_sharding_oracle.py's ``run``) and prints the same."""

from __future__ import annotations

import difflib

import pytest

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
from test_sharding_oracle import run  # noqa: E402  (after the importorskip, on purpose)

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType

x = np.arange(64, dtype=np.float32).reshape(16, 4)
mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
sx, sy = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "y"))

# with_sharding_constraint inside jit
f = lambda a: jax.lax.with_sharding_constraint(a * 2, sy) + 1
print(jax.make_jaxpr(f)(x))
r = jax.jit(f)(jax.device_put(x, sx)); print(r.sharding, r.sum())
r = jax.jit(f)(x); print(r.sharding, [s.data.shape for s in r.addressable_shards][:2])
g = jax.jit(jax.grad(lambda a: f(a).sum()))(x); print(g.sharding, g.sum())

# SPMD ahead of time
a = jax.device_put(x, sx)
w = jax.device_put(np.eye(4, dtype=np.float32), NamedSharding(mesh, P()))
h = jax.jit(lambda w, a: jnp.tanh(a @ w), out_shardings=NamedSharding(mesh, P("x", "y")))
lowered = h.lower(w, a)
print(lowered.as_text().splitlines()[0])
compiled = lowered.compile()
print(compiled.input_shardings)
print(compiled.output_shardings)
print(compiled(w, a).sharding)
try:
    compiled(w, jax.device_put(x, NamedSharding(mesh, P("y"))))
except ValueError as e:
    print(type(e).__name__, e)

one = jax.jit(lambda a, b: {"x": a + b, "y": (a, a)}).lower(np.ones(3, np.float32), 2.0).compile()
print(one.input_shardings); print(one.output_shardings)

# donation
d = jax.jit(lambda a: a * 2, donate_argnums=0)
b = jax.device_put(x, sx)
r = d(b); print(b.is_deleted(), r.sharding, r.sum())

# pmap's results
print(repr(jax.pmap(lambda v: v * 2)(np.ones((8, 3))).sharding))
print(repr(jax.pmap(lambda v: v * 2, in_axes=1, out_axes=1)(np.ones((3, 4))).sharding))
print(repr(jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(np.ones((8, 3))).sharding))
'''


def test_minijax_prints_what_jax_prints() -> None:
    expected = run(SCRIPT, "jax")
    got = run(SCRIPT, "minijax")
    diff = "\n".join(difflib.unified_diff(expected.splitlines(), got.splitlines(), "jax", "minijax", lineterm=""))
    assert got == expected, diff
