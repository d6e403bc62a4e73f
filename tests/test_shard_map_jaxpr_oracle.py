"""shard_map stages as JAX stages it: ``make_jaxpr`` of a shard_map (and of jit, jvp and
vmap of one) prints the same ``shard_map`` equation as real JAX 0.10.2 (the body's
jaxpr and the params check_vma, in_specs, mesh, newly_manual_axes, out_specs), and
the spec errors are JAX's. ``SCRIPT`` runs once under JAX and once under minijax on 8
forced CPU devices (tests/test_sharding_oracle.py's ``run``).

The bodies here use ``check_vma=False`` or no collectives: with ``check_vma=True``
JAX's body types carry their varying axes (``f32[2]{V:x}``) and it inserts
``pvary``/``psum_invariant``, which minijax's types do not have
(docs/differences.md).
"""

from __future__ import annotations

import difflib
import re

import pytest
from test_sharding_oracle import run

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import PartitionSpec as P, AxisType

def show(label, f):
    try:
        print(label, f())
    except Exception as e:
        print(label, type(e).__name__, ":", str(e))

m4 = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
m22 = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

def f(a, b):
    return jax.lax.psum(a * 2, "x") + b.sum(), jax.lax.axis_index("x")[None]

g = jax.shard_map(f, mesh=m4, in_specs=(P("x"), P()), out_specs=(P(), P("x")), check_vma=False)
print(jax.make_jaxpr(g)(jnp.ones(8), jnp.ones(3)))
print(jax.make_jaxpr(jax.jit(g))(jnp.ones(8), jnp.ones(3)))
s = jax.shard_map(jnp.sin, mesh=m4, in_specs=P("x"), out_specs=P("x"), check_vma=False)
print(jax.make_jaxpr(lambda x: jax.jvp(s, (x,), (x,)))(jnp.ones(8)))
print(jax.make_jaxpr(jax.vmap(s))(jnp.ones((3, 8))))
h = jax.shard_map(lambda a: jax.lax.psum(a, "y"), mesh=m22, in_specs=P(None, "y"), out_specs=P(),
                  axis_names={"y"}, check_vma=False)
print(jax.make_jaxpr(h)(jnp.ones((8, 4))))
k = jax.shard_map(lambda a, b: (a @ b, a.T), mesh=m22, in_specs=(P(None, "y"), P("y", None)),
                  out_specs=(P(), P("y")), check_vma=False)
print(jax.make_jaxpr(k)(jnp.ones((3, 8)), jnp.ones((8, 2))))
r = jax.shard_map(lambda a: jax.lax.ppermute(a, "x", [(0, 1), (1, 0)]), mesh=m22, in_specs=P("x", "y"),
                  out_specs=P("x", "y"), check_vma=False)
print(jax.make_jaxpr(r)(jnp.ones((4, 8))))
print(jax.make_jaxpr(lambda x: jax.lax.ppermute(x, "i", [(0, 2), (2, 1)]), axis_env=[("i", 3)])(jnp.ones(2)))
t = jax.shard_map(lambda a: jax.lax.all_to_all(a, "x", 0, 1, tiled=True), mesh=m22, in_specs=P("x", None),
                  out_specs=P(None, "x"), axis_names={"x"}, check_vma=False)
print(jax.make_jaxpr(t)(jnp.ones((4, 4))))
print(jax.make_jaxpr(lambda x: jax.lax.all_to_all(x, "i", 0, 1), axis_env=[("i", 2)])(jnp.ones((2, 4))))
print(jax.make_jaxpr(lambda x: jax.lax.all_to_all(x, "i", 1, 0), axis_env=[("i", 2)])(jnp.ones((3, 2))))
show("all_to_all", lambda: jax.make_jaxpr(lambda x: jax.lax.all_to_all(x, "i", 0, 1, tiled=True), axis_env=[("i", 2)])(jnp.ones((3, 2))))
show("missing axis", lambda: jax.shard_map(lambda a: a, mesh=m4, in_specs=P("z"), out_specs=P())(jnp.ones(8)))
show("not divisible", lambda: jax.shard_map(lambda a: a, mesh=m4, in_specs=P("x"), out_specs=P("x"))(jnp.ones(6)))
show("jit not divisible", lambda: jax.jit(jax.shard_map(lambda a: a, mesh=m4, in_specs=P("x"), out_specs=P("x")))(jnp.ones(6)))
'''


def test_shard_map_jaxprs_and_errors_are_jax_s() -> None:
    # A frozenset prints its names in hash order, which differs between interpreters:
    # compare the names, sorted.
    expected = _sorted_sets(run(SCRIPT, "jax"))
    got = _sorted_sets(run(SCRIPT, "minijax"))
    diff = "\n".join(difflib.unified_diff(expected.splitlines(), got.splitlines(), "jax", "minijax", lineterm=""))
    assert got == expected, diff


def _sorted_sets(text: str) -> str:
    return re.sub(r"frozenset\(\{([^}]*)\}\)", lambda m: "frozenset({" + ", ".join(sorted(m[1].split(", "))) + "})", text)
