"""The sharding API and shard_map print and compute what real JAX 0.10.2 does, on 8
forced CPU devices: ``SCRIPT`` runs once under JAX and once under minijax (the
same text with ``minijax`` for ``jax``), each in a fresh interpreter with
``XLA_FLAGS=--xla_force_host_platform_device_count=8``, and the outputs must be
equal line for line: reprs of meshes, specs, shardings and ``typeof``, shard
indices, replica ids and data, shard_map's values and result shardings, the
drawings of ``visualize_array_sharding``, and the errors' types and gists.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType, Mesh, AbstractMesh

def show(label, f):
    try:
        print(label, f())
    except Exception as e:
        # the error's type and its first words: the gist JAX and minijax share
        # (the function's name aside: JAX names an inner one in some messages)
        print(label, type(e).__name__, ":", " ".join(str(e).replace("'_rem_singleton'", "'<lambda>'").split()[:10]))

x = np.arange(32, dtype=np.float32).reshape(8, 4)
mesh = jax.make_mesh((2, 4), ("x", "y"))
auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
print(repr(mesh)); print(mesh); print(repr(mesh.abstract_mesh)); print(auto)
print(mesh.axis_names, mesh.axis_types, dict(mesh.shape), mesh.size, mesh.devices.shape)
print(repr(AbstractMesh((2, 4), ("a", "b"))))
print(P(), P("x"), P("x", None), P(("x", "y")), P(("x",), None), P(None, ("x", "y")))
print(P("x") == P("x", None), P("x") == P("x"), len(P("x", None)))
print(jax.sharding.get_mesh(), jax.sharding.get_abstract_mesh())
for m in (mesh, auto):
    for spec in (P("x", "y"), P("x"), P(None, "y"), P(("x", "y")), P(), P("y", "x")):
        s = NamedSharding(m, spec)
        a = jax.device_put(x, s)
        print(s, jax.typeof(a), repr(jax.typeof(a)), a.is_fully_replicated, s.shard_shape(x.shape), s.num_devices)
        for sh in a.addressable_shards:
            print(" ", sh.device, sh.index, sh.replica_id, sh.data.tolist() if sh.data.size <= 4 else sh.data.shape)
        print(" ", a.addressable_data(3).tolist())
print(jax.device_put(1.0).sharding, jax.typeof(jax.device_put(1.0)))
print(jax.sharding.SingleDeviceSharding(jax.devices()[1]))
with jax.set_mesh(auto):
    print(jax.sharding.get_mesh(), repr(jax.sharding.get_abstract_mesh()))
    print(jax.device_put(x, P("y")).sharding)
    show("reshard auto", lambda: jax.reshard(x, P(None, "y")))
with jax.set_mesh(mesh):
    print(jax.reshard(x, P(None, "y")).sharding, jax.typeof(jax.reshard(x, P(None, "y"))))
print(jax.sharding.get_mesh())
s = NamedSharding(auto, P("x", "y"))
print(jax.make_array_from_callback((8, 4), s, lambda i: x[i]).sharding)
f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(auto, P("x")), out_shardings=s)
r = f(x); print(r.sharding, r.sum())
print(jax.lax.with_sharding_constraint(jax.device_put(x, s), NamedSharding(auto, P())).sharding)
for spec in (P("x", "y"), P("x"), P("y")):
    jax.debug.visualize_array_sharding(jax.device_put(x, NamedSharding(auto, spec)))
jax.debug.visualize_array_sharding(jax.device_put(np.arange(8.0), NamedSharding(auto, P("x"))))
jax.debug.visualize_array_sharding(jax.device_put(np.zeros((8, 8)), NamedSharding(auto, P(None, ("x", "y")))))

# errors
show("too many devices", lambda: jax.make_mesh((4, 4), ("x", "y")))
show("names", lambda: jax.make_mesh((2, 4), ("x",)))
show("missing axis", lambda: NamedSharding(auto, P("z")))
show("duplicate", lambda: NamedSharding(auto, P("x", "x")))
show("indivisible", lambda: jax.device_put(np.zeros((3, 4)), NamedSharding(auto, P("x"))))
show("rank", lambda: jax.device_put(np.zeros(4), NamedSharding(auto, P("x", None))))

# shard_map
sm = lambda f, i, o, **kw: jax.shard_map(f, mesh=auto, in_specs=i, out_specs=o, **kw)
r = sm(lambda b: jax.lax.psum(b, "y"), P("x", "y"), P("x", None))(x); print(r.tolist(), r.sharding)
r = sm(lambda b: b * 0 + jax.lax.axis_index("x") * 10 + jax.lax.axis_index("y"), P("x", "y"), P("x", "y"))(np.zeros((2, 4), np.int32))
print(r.tolist(), r.sharding)
w = np.arange(12, dtype=np.float32).reshape(4, 3)
mm = sm(lambda a, b: jax.lax.psum(a @ b, "y"), (P("x", "y"), P("y", None)), P("x", None))
print(mm(x, w).tolist(), jax.jit(mm)(x, w).tolist())
print(jax.grad(lambda v: (sm(lambda b: jax.lax.psum(jnp.sin(b), "y"), P("x", "y"), P("x", None))(v) ** 2).sum())(x).round(4).tolist())
print(sm(lambda b: jax.lax.ppermute(b, "y", [(0, 1), (1, 2), (2, 3), (3, 0)]), P(None, "y"), P(None, "y"))(x).tolist())
print(sm(lambda b: jax.lax.all_to_all(b, "y", 0, 1, tiled=True), P(None, "y"), P(None, "y"))(x).tolist())
print(sm(lambda b: jax.lax.psum_scatter(b, "y", scatter_dimension=0, tiled=True), P(None, "y"), P("y", None))(x).tolist())
print(sm(lambda b: jax.lax.pmax(b, ("x", "y")), P("x", "y"), P())(x).tolist())
print(sm(lambda b: b, P("x", "y"), P("x"), check_vma=False)(x).tolist())
print(jax.vmap(sm(lambda b: jax.lax.pmean(b, "x"), P("x"), P()))(np.stack([x, -x])).tolist())
placed = jax.device_put(x, NamedSharding(mesh, P("x", "y")))
r = jax.shard_map(lambda b: b + 1, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))(placed)
print(r.sharding, jax.typeof(r))
show("replication", lambda: sm(lambda b: b, P("x", "y"), P("x"))(x))
show("manual", lambda: sm(lambda b: b, P("x", "z"), P("x"))(x))
show("in rank", lambda: sm(lambda b: b, P("x", "y", None), P("x"))(x))
show("out rank", lambda: sm(lambda b: b, P("x", "y"), P("x", "y", None))(x))
show("divisible", lambda: sm(lambda b: b, P("y", "x"), P("y", "x"))(np.zeros((6, 4))))
show("explicit", lambda: jax.shard_map(lambda b: b, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))(x))
show("ppermute", lambda: sm(lambda b: jax.lax.ppermute(b, "y", [(0, 1), (1, 1)]), P(None, "y"), P(None, "y"))(x))
show("all_to_all", lambda: sm(lambda b: jax.lax.all_to_all(b, "y", 1, 0), P(), P())(np.zeros((4, 3))))
'''


def run(script: str, module: str) -> str:
    text = re.sub(r"\bjax\b", module, script) if module != "jax" else script
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu",
           "MINIJAX_BACKEND": "", "COLUMNS": "80"}  # fmt: skip
    if module != "jax":
        env["JAX_PLATFORMS"] = ""
    done = subprocess.run([sys.executable, "-c", text], env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_minijax_prints_what_jax_prints_on_eight_devices() -> None:
    expected = run(SCRIPT, "jax")
    got = run(SCRIPT, "minijax")
    diff = "\n".join(difflib.unified_diff(expected.splitlines(), got.splitlines(), "jax", "minijax", lineterm=""))
    assert got == expected, diff


def test_the_visualization_in_test_sharding_is_jax_s() -> None:
    from test_sharding import GRID

    script = (
        "import numpy as np, jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P, AxisType\n"
        "m = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)\n"
        "jax.debug.visualize_array_sharding(jax.device_put(np.zeros((8, 4)), NamedSharding(m, P('x', 'y'))))\n"
        "jax.debug.visualize_array_sharding(jax.device_put(np.arange(8.0), NamedSharding(m, P('x'))))\n"
    )
    assert run(script, "jax") == GRID
