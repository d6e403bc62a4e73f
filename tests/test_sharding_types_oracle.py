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

# out_sharding= arguments: the staged equation (its sharding param hidden or shown as JAX shows it),
# the result's type, and eagerly the result's layout.
def j(label, f, *args):
    try:
        print(label, jax.make_jaxpr(f)(*args))
    except Exception as e:
        print(label, type(e).__name__, ":", str(e))

def e(label, f, *args):
    try:
        r = f(*args)
        print(label, jax.typeof(r), r.sharding.spec, np.asarray(r).sum())
    except Exception as ex:
        print(label, type(ex).__name__, ":", str(ex))

OUT = [
    ("dot", lambda u: jnp.dot(u, u, out_sharding=P("x", None)), a),
    ("dot ambiguous", lambda u: jnp.dot(u, u.T), a),
    ("einsum", lambda u: jnp.einsum("ij,jk->ki", u, u, out_sharding=P("y")), a),
    ("dot_general", lambda u: jax.lax.dot_general(u, u, (((1,), (0,)), ((), ())), out_sharding=P(None, "y")), a),
    ("lax.dot", lambda u: jax.lax.dot(u, u, out_sharding=jax.NamedSharding(mesh, P("y"))), a),
    ("matmul", lambda u, v: jnp.matmul(u, v, out_sharding=P("x")), put((8, 4), "x", "y"), put((4, 8), "y", None)),
    ("matmul batch", lambda u, v: u @ v, put((2, 8, 4), "x", None, None), put((2, 4, 8), "x", None, "y")),
    ("tensordot", lambda u: jnp.tensordot(u, u, 1, out_sharding=P(None, "x")), a),
    ("zeros", lambda: jnp.zeros((8, 4), out_sharding=P("x"))),
    ("ones", lambda: jnp.ones((8, 4), jnp.int32, out_sharding=P(None, "y"))),
    ("full", lambda: jnp.full((8, 4), 2.0, out_sharding=P("x", "y"))),
    ("empty", lambda: jnp.empty((8,), out_sharding=P("y"))),
    ("zeros_like", lambda u: jnp.zeros_like(u, out_sharding=P("y")), a),
    ("full_like", lambda u: jnp.full_like(u, 3, out_sharding=P(None, "x")), a),
    ("arange", lambda: jnp.arange(8, out_sharding=P("x"))),
    ("arange step", lambda: jnp.arange(1, 17, 2, out_sharding=P("y"))),
    ("array", lambda: jnp.array([1.0, 2.0, 3.0, 4.0], out_sharding=P("x"))),
    ("iota", lambda: jax.lax.broadcasted_iota(jnp.int32, (8, 4), 0, out_sharding=P("x"))),
    ("broadcast", lambda u: jax.lax.broadcast(u, (2,), out_sharding=P(None, "x", "y")), a),
    ("broadcast_in_dim", lambda v: jax.lax.broadcast_in_dim(v, (4, 8), (1,), out_sharding=P(None, "y")), put((8,), "x")),
    ("broadcast_to", lambda u: jnp.broadcast_to(u.sum(0), (8, 8), out_sharding=P("x", "y")), a),
    ("reshape", lambda u: jnp.reshape(u, (4, 16), out_sharding=P("x")), a),
    ("lax.reshape", lambda u: jax.lax.reshape(u, (64,), out_sharding=P(("x", "y"))), a),
    ("ravel", lambda u: jnp.ravel(u, out_sharding=P("y")), a),
    ("reduce_sum", lambda u: jax.lax.reduce_sum(u, (0,), out_sharding=P("x")), a),
    ("not a sharding", lambda u: jax.lax.broadcast_in_dim(u, (8, 8), (0, 1), out_sharding="x"), a),
    ("wsc agrees", lambda u: jax.lax.with_sharding_constraint(u, P("x", "y")), a),
    ("wsc asserts", lambda u: jax.lax.with_sharding_constraint(u, P(None, "x")), a),
]
for label, fn, *args in OUT:
    j("jaxpr " + label, fn, *args)
    e("eager " + label, fn, *args)
    e("jit " + label, jax.jit(fn), *args)
def r(label, f, *args):
    try:
        out = []
        jax.make_jaxpr(lambda *a: out.append(jax.tree.map(lambda v: str(jax.typeof(v)), f(*a))))(*args)
        print(label, out[0])
    except Exception as e:
        print(label, type(e).__name__, ":", str(e)[:400])

b = put((8, 4, 8), "x", None, "y")

# The rules of the other primitives users meet (types and errors, JAX's line for line)
b = put((8, 4, 8), "x", None, "y")
r("reshape merge", lambda u: u.reshape(64), a)
r("reshape merge2", lambda u: u.reshape(8, 32), b)
r("reshape split", lambda u: u.reshape(2, 4, 8), a)
r("reshape split2", lambda u: u.reshape(8, 2, 4), a)
r("reshape split bad", lambda u: u.reshape(4, 2, 8), put((8,8),"y",None))
r("reshape other", lambda u: u.reshape(4, 16), a)
r("reshape same", lambda u: u.reshape(8, 8), a)
r("reshape unit", lambda u: u.reshape(8, 1, 8), a)
r("reshape drop unit", lambda u: u.reshape(8, 8), put((8,1,8),"x",None,"y"))
r("squeeze", lambda u: jnp.squeeze(u, 1), put((8,1,8),"x",None,"y"))
r("expand_dims", lambda u: jnp.expand_dims(u, 1), a)
r("rev", lambda u: jnp.flip(u, 0), a)
r("pad", lambda u: jnp.pad(u, ((0,0),(1,1))), put((8,8),"x",None))
r("pad sharded", lambda u: jnp.pad(u, ((2,2),(0,0))), a)
r("pad lax", lambda u: jax.lax.pad(u, 0.0, ((0,0,0),(0,0,0))), a)
r("dynamic_slice", lambda u: jax.lax.dynamic_slice(u, (0, 2), (8, 4)), put((8,8),"x",None))
r("dynamic_slice sharded", lambda u: jax.lax.dynamic_slice(u, (0, 2), (8, 4)), a)
r("dus", lambda u, v: jax.lax.dynamic_update_slice(u, v, (0, 2)), put((8,8),"x",None), put((8,4),"x",None))
r("dus sharded", lambda u, v: jax.lax.dynamic_update_slice(u, v, (0, 2)), a, put((8,4),"x",None))
r("dus mismatch", lambda u, v: jax.lax.dynamic_update_slice(u, v, (0, 2)), put((8,8),"x",None), put((8,4),None,None))
r("gather rows", lambda u: u[jnp.array([0, 3])], put((8,8),None,"y"))
r("gather sharded", lambda u: u[jnp.array([0, 3])], a)
r("gather cols", lambda u: u[:, jnp.array([0, 3])], put((8,8),"x",None))
r("scatter", lambda u: u.at[jnp.array([0, 3])].set(1.0), put((8,8),None,"y"))
r("scatter sharded", lambda u: u.at[jnp.array([0, 3])].set(1.0), a)
r("scatter add", lambda u: u.at[:, jnp.array([0, 3])].add(1.0), put((8,8),"x",None))
r("cumsum", lambda u: jnp.cumsum(u, 1), put((8,8),"x",None))
r("cumsum sharded", lambda u: jnp.cumsum(u, 0), a)
r("cumprod", lambda u: jnp.cumprod(u, 1), put((8,8),"x",None))
r("cummax", lambda u: jax.lax.cummax(u, 1), put((8,8),"x",None))
r("cumlogsumexp", lambda u: jax.lax.cumlogsumexp(u, 1), put((8,8),"x",None))
r("sort", lambda u: jnp.sort(u, 1), put((8,8),"x",None))
r("sort sharded", lambda u: jnp.sort(u, 0), a)
r("argsort", lambda u: jnp.argsort(u, 1), put((8,8),"x",None))
r("argmax", lambda u: jnp.argmax(u, 1), a)
r("argmax0", lambda u: jnp.argmax(u, 0), a)
r("argmin", lambda u: jnp.argmin(u, 1), put((8,8),"x",None))
r("reduce_precision", lambda u: jax.lax.reduce_precision(u, 5, 10), a)
r("integer_pow", lambda u: u ** 3, a)
r("copy", lambda u: jnp.copy(u), a)
r("clamp", lambda u: jax.lax.clamp(0.0, u, 1.0), a)
r("select_n", lambda u: jax.lax.select(u > 0, u, u), a)
r("conv", lambda u, w: jax.lax.conv_general_dilated(u, w, (1,1), "SAME", dimension_numbers=("NHWC","HWIO","NHWC")), put((8,4,4,3),"x",None,None,None), put((3,3,3,8),None,None,None,None))
r("split", lambda u: jnp.split(u, 2, axis=1), put((8,8),"x",None))
r("split sharded", lambda u: jnp.split(u, 2, axis=0), a)
r("top_k", lambda u: jax.lax.top_k(u, 2), put((8,8),"x",None))
r("top_k sharded", lambda u: jax.lax.top_k(u, 2), a)
r("cond", lambda u: jax.lax.cond(True, lambda v: v * 2, lambda v: v + 1, u), a)
r("while", lambda u: jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, u))[1], a)
r("fori", lambda u: jax.lax.fori_loop(0, 3, lambda i, v: v * 2, u), a)
r("scan", lambda u: jax.lax.scan(lambda c, x: (c + x, c * x), u[0], u), put((8,8),None,"y"))
r("scan sharded xs", lambda u: jax.lax.scan(lambda c, x: (c, x * 2), 0.0, u), a)
r("jit", lambda u: jax.jit(lambda v: v * 2)(u), a)
r("custom_jvp", lambda u: jax.nn.relu(u), a)
r("custom_vjp", lambda u: jax.nn.softmax(u, axis=1), put((8,8),"x",None))
r("logsumexp", lambda u: jax.nn.logsumexp(u, axis=1), put((8,8),"x",None))
r("grad", lambda u: jax.grad(lambda v: (v * v).sum())(u), a)
r("vmap", lambda u: jax.vmap(lambda v: v * 2)(u), a)
r("transpose", lambda u: u.T, a)
r("where", lambda u: jnp.where(u > 0, u, 0.0), a)
r("tile", lambda u: jnp.tile(u, (2, 1)), a)
r("stack", lambda u: jnp.stack([u, u]), a)
r("mean", lambda u: u.mean(0), a)
r("max", lambda u: u.max(1), a)
r("iota", lambda: jax.lax.iota(jnp.int32, 8))
r("zeros in", lambda u: u + jnp.zeros((8, 8)), a)
r("take_along", lambda u: jnp.take_along_axis(u, jnp.argsort(u, 1), 1), put((8,8),"x",None))
r("ones_like", lambda u: jnp.ones_like(u), a)
r("full_like", lambda u: jnp.full_like(u, 2.0), a)
r("softmax", lambda u: jax.nn.softmax(u, axis=0), put((8,8),None,"y"))
r("grad of out_sharding", jax.grad(lambda u, v: jnp.dot(u, v, out_sharding=P("x", None)).sum(), argnums=(0, 1)),
  put((8, 4), "x", "y"), put((4, 6), "y", None))
r("vmap of out_sharding", jax.vmap(lambda v: jnp.dot(v, jnp.ones((4, 4)), out_sharding=P("y"))), put((8, 4), "x", None))
'''


def test_sharded_types_and_their_errors_are_jax_s() -> None:
    expected = run(SCRIPT, "jax")
    got = run(SCRIPT, "minijax")
    diff = "\n".join(difflib.unified_diff(expected.splitlines(), got.splitlines(), "jax", "minijax", lineterm=""))
    assert got == expected, diff
