"""NumPy against XLA on sharded programs (issue 17): the NumPy backend, which holds a sharded
array as its list of per-device blocks, is the executable spec of SPMD semantics; XLA runs
the same programs as SPMD programs over 8 CPU devices. For meshes of 1, 2, 4 and 8 devices,
random PartitionSpecs over random shapes the mesh axes divide, and programs of device_put,
elementwise operations, reductions, matmuls, transposes, reshapes, reshard and jit with
in/out_shardings, both backends give the same values, the same shardings and the same block
(index and value) on every device.

``MINIJAX_SPMD_EXAMPLES`` raises the number of examples per test (default 12).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax.backend import Device
from minijax.mesh import ShardingTypeError
from minijax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

pytest.importorskip("jaxlib")
pytestmark = pytest.mark.single_backend  # names its two backends itself

EXAMPLES = int(os.environ.get("MINIJAX_SPMD_EXAMPLES", "12"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None)

_made: dict[str, list[Device]] = {}


def devices_of(kind: str) -> list[Device]:
    """8 devices of each backend, made once (an XLA client is not free)."""
    if kind not in _made:
        if kind == "xla":
            from minijax_xla.backend import XlaBackend

            class EightCpus(XlaBackend):
                name = "xla_spmd_differential"

            _made[kind] = EightCpus(num_cpu_devices=8).devices()
        else:
            from minijax_numpy.backend import NumpyBackend

            _made[kind] = NumpyBackend(num_devices=8).devices()
    return _made[kind]


MESHES = [
    ((1,), ("a",)),
    ((2,), ("a",)),
    ((4,), ("a",)),
    ((2, 2), ("a", "b")),
    ((1, 4), ("a", "b")),  # (an axis of size 1 splits nothing)
    ((8,), ("a",)),
    ((2, 4), ("a", "b")),
    ((4, 2), ("a", "b")),
    ((2, 2, 2), ("a", "b", "c")),
    ((2, 1, 4), ("a", "b", "c")),
]


def make_mesh(kind: str, shape: tuple[int, ...], names: tuple[str, ...], axes: AxisType = AxisType.Auto) -> Mesh:
    n = int(np.prod(shape))
    return jax.make_mesh(shape, names, axis_types=(axes,) * len(shape), devices=devices_of(kind)[:n])


@st.composite
def specs(draw: Any, sizes: dict[str, int], ndim: int) -> P:
    """A PartitionSpec of at most ``ndim`` entries, each mesh axis used at most once."""
    free = list(sizes)
    entries: list[Any] = []
    for _ in range(draw(st.integers(0, ndim))):
        k = draw(st.integers(0, min(2, len(free))))
        axes = draw(st.permutations(free))[:k] if k else []
        free = [a for a in free if a not in axes]
        entries.append(None if not axes else axes[0] if len(axes) == 1 else tuple(axes))
    return P(*entries)


def divisor(sizes: dict[str, int], spec: P, dim: int) -> int:
    entry = spec[dim] if dim < len(spec) else None
    axes = () if entry is None else (entry,) if isinstance(entry, str) else entry
    return int(np.prod([sizes[a] for a in axes]))


@st.composite
def shape_for(
    draw: Any, sizes: dict[str, int], spec: P, ndim: int, fixed: dict[int, int] | None = None
) -> tuple[int, ...]:
    """A shape whose every dimension ``spec`` splits is divisible by its split (``fixed``: given dims)."""
    out = []
    for d in range(ndim):
        if fixed and d in fixed:
            out.append(fixed[d])
        else:
            out.append(divisor(sizes, spec, d) * draw(st.sampled_from([1, 2, 3])))
    return tuple(out)


def described(x: Any) -> tuple[Any, ...]:
    """What must agree across backends: the value, the sharding's kind and spec, and every
    device's block (its index and value), in the sharding's device order, by device id."""
    sharding = x.sharding
    # Over several devices, both backends hold the blocks (not one whole value).
    assert len(sharding.device_set) == 1 or x._shards is not None
    spec = sharding.spec if isinstance(sharding, NamedSharding) else None
    blocks = [(s.device.id, s.index, s.replica_id, np.asarray(s.data)) for s in x.addressable_shards]
    return np.asarray(x), type(sharding).__name__, spec, x.is_fully_replicated, blocks


def check_same(program: Callable[[Mesh], Any], mesh_shape: tuple[int, ...], names: tuple[str, ...],
               axes: AxisType = AxisType.Auto) -> None:  # fmt: skip
    outs = {}
    refused: dict[str, str | None] = {}
    for kind in ("numpy", "xla"):
        try:
            out = program(make_mesh(kind, mesh_shape, names, axes))
        except ShardingTypeError as e:  # Explicit axes: a program JAX refuses in its types
            refused[kind] = str(e)
            continue
        except ValueError as e:  # (scan over operands split along the scanned dimension: JAX's ValueError)
            if "0th dimension of all xs should be replicated" not in str(e):
                raise
            refused[kind] = str(e)
            continue
        refused[kind] = None
        outs[kind] = [described(leaf) for leaf in jax.tree_util.tree_leaves(out)]
    # Both backends refuse the same programs with the same message, or run both.
    assert refused["numpy"] == refused["xla"], refused
    if refused["numpy"] is not None:
        return
    for ref, got in zip(outs["numpy"], outs["xla"], strict=True):
        np.testing.assert_allclose(ref[0], got[0], rtol=1e-5, atol=1e-5)
        assert ref[1:4] == got[1:4], (ref[1:4], got[1:4])
        assert [b[:3] for b in ref[4]] == [b[:3] for b in got[4]]
        for (_, _, _, a), (_, _, _, b) in zip(ref[4], got[4]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


# Auto mesh axes (XLA's partitioner lays results out) and Explicit ones (sharding in types).
mesh_choice = st.tuples(st.sampled_from(MESHES), st.sampled_from([AxisType.Auto, AxisType.Explicit])).map(
    lambda m: (*m[0], m[1])
)


def value(shape: tuple[int, ...], seed: int = 0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@SETTINGS
@given(st.data(), mesh_choice, st.integers(1, 3), st.booleans())
def test_device_put_and_elementwise(data: Any, mesh_def: Any, ndim: int, jitted: bool) -> None:
    shape_m, names, axes_kind = mesh_def
    sizes = dict(zip(names, shape_m))
    spec = data.draw(specs(sizes, ndim))
    other = data.draw(st.one_of(st.just(spec), st.just(P()), specs(sizes, ndim)))
    shape = data.draw(shape_for(sizes, spec, ndim))
    for d in range(ndim):  # the second operand's spec must divide the same shape
        if shape[d] % divisor(sizes, other, d):
            other = spec
            break
    x_host, y_host = value(shape, 1), value(shape, 2)
    which = data.draw(st.sampled_from(["put", "unary", "binary", "scalar"]))

    def program(mesh: Mesh) -> Any:
        x = jax.device_put(x_host, NamedSharding(mesh, spec))
        y = jax.device_put(y_host, NamedSharding(mesh, other))
        f: Callable[..., Any] = {
            "put": lambda a, b: a,
            "unary": lambda a, b: jnp.sin(a) * 2.0 + 1.0,
            "binary": lambda a, b: a * b - a,
            "scalar": lambda a, b: jnp.maximum(a, 0.5),
        }[which]
        return (jax.jit(f) if jitted else f)(x, y)

    check_same(program, shape_m, names, axes_kind)


@SETTINGS
@given(st.data(), mesh_choice, st.integers(1, 3), st.booleans())
def test_reductions(data: Any, mesh_def: Any, ndim: int, jitted: bool) -> None:
    shape_m, names, axes_kind = mesh_def
    sizes = dict(zip(names, shape_m))
    spec = data.draw(specs(sizes, ndim))
    shape = data.draw(shape_for(sizes, spec, ndim))
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1), min_size=1))))
    op = data.draw(st.sampled_from(["sum", "max", "min"]))
    x_host = value(shape)

    def program(mesh: Mesh) -> Any:
        x = jax.device_put(x_host, NamedSharding(mesh, spec))
        f = lambda a: getattr(jnp, op)(a, axis=axes)  # noqa: E731
        return (jax.jit(f) if jitted else f)(x)

    check_same(program, shape_m, names, axes_kind)


@SETTINGS
@given(st.data(), mesh_choice, st.integers(1, 3), st.booleans())
def test_transposes_and_reshapes(data: Any, mesh_def: Any, ndim: int, jitted: bool) -> None:
    shape_m, names, axes_kind = mesh_def
    sizes = dict(zip(names, shape_m))
    spec = data.draw(specs(sizes, ndim))
    shape = data.draw(shape_for(sizes, spec, ndim))
    perm = tuple(data.draw(st.permutations(range(ndim))))
    which = data.draw(st.sampled_from(["transpose", "flatten", "split_first"]))
    x_host = value(shape)

    def program(mesh: Mesh) -> Any:
        x = jax.device_put(x_host, NamedSharding(mesh, spec))
        f: Callable[[Any], Any] = {
            "transpose": lambda a: jnp.transpose(a, perm),
            "flatten": lambda a: a.reshape(-1),
            "split_first": lambda a: (
                a.reshape((1, *a.shape)) if a.shape[0] % 2 else a.reshape((2, a.shape[0] // 2, *a.shape[1:]))
            ),
        }[which]
        return (jax.jit(f) if jitted else f)(x)

    check_same(program, shape_m, names, axes_kind)


STRUCTURAL: dict[str, Callable[[Any], Any]] = {
    "concatenate": lambda a: jnp.concatenate([a, a], axis=1),
    "slice": lambda a: a[1:, : a.shape[1] // 2],
    "pad": lambda a: jnp.pad(a, ((0, 2), (1, 1))),
    "cumsum": lambda a: jnp.cumsum(a, axis=0),
    "sort": lambda a: jnp.sort(a, axis=1),
    "gather": lambda a: a[np.array([a.shape[0] - 1, 0, 0])],  # (not every row in order: XLA makes that no gather)
    "stack": lambda a: jnp.stack([a, 2 * a]),
    "tile": lambda a: jnp.tile(a, (1, 2)),
    "rev": lambda a: a[:, ::-1],
    "where": lambda a: jnp.where(a > 0, a, jnp.zeros(a.shape[1], a.dtype)),
    "argmax": lambda a: jnp.argmax(a, axis=0),
    "scan": lambda a: jax.lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(a.shape[1], a.dtype), a),
    "outer": lambda a: a[:, :, None] * jnp.arange(3.0, dtype=a.dtype),
}


@SETTINGS
@given(st.data(), mesh_choice, st.sampled_from(sorted(STRUCTURAL)), st.booleans())
def test_structural_operations(data: Any, mesh_def: Any, op: str, jitted: bool) -> None:
    shape_m, names, axes_kind = mesh_def
    sizes = dict(zip(names, shape_m))
    spec = data.draw(specs(sizes, 2))
    x_host = value(data.draw(shape_for(sizes, spec, 2)))

    def program(mesh: Mesh) -> Any:
        x = jax.device_put(x_host, NamedSharding(mesh, spec))
        return (jax.jit(STRUCTURAL[op]) if jitted else STRUCTURAL[op])(x)

    check_same(program, shape_m, names, axes_kind)


@SETTINGS
@given(st.data(), mesh_choice, st.booleans())
def test_matmul(data: Any, mesh_def: Any, jitted: bool) -> None:
    shape_m, names, axes_kind = mesh_def
    sizes = dict(zip(names, shape_m))
    lhs_spec = data.draw(specs(sizes, 2))
    rhs_spec = data.draw(specs(sizes, 2))
    m, k = data.draw(shape_for(sizes, lhs_spec, 2))
    lcm = int(np.lcm(k, divisor(sizes, rhs_spec, 0)))
    k2, n = data.draw(shape_for(sizes, rhs_spec, 2, {0: lcm}))
    lhs_host, rhs_host = value((m, lcm), 1), value((k2, n), 2)
    if lcm != k:  # the lhs's contracting dim grew to a multiple of both splits
        assert lcm % divisor(sizes, lhs_spec, 1) == 0

    def program(mesh: Mesh) -> Any:
        a = jax.device_put(lhs_host, NamedSharding(mesh, lhs_spec))
        b = jax.device_put(rhs_host, NamedSharding(mesh, rhs_spec))
        f = lambda u, v: u @ v  # noqa: E731
        return (jax.jit(f) if jitted else f)(a, b)

    check_same(program, shape_m, names, axes_kind)


@SETTINGS
@given(st.data(), mesh_choice, st.booleans())
def test_a_layer_and_its_loss(data: Any, mesh_def: Any, jitted: bool) -> None:
    """A chain: a dense layer's tanh(x @ w + b), then its mean over the batch."""
    shape_m, names, axes_kind = mesh_def
    sizes = dict(zip(names, shape_m))
    x_spec, w_spec = data.draw(specs(sizes, 2)), data.draw(specs(sizes, 2))
    b_spec = data.draw(st.sampled_from([P(), P(*w_spec[1:2])]))
    m, k, n = (divisor(sizes, x_spec, 0) * 2, int(np.lcm(divisor(sizes, x_spec, 1), divisor(sizes, w_spec, 0))),
               divisor(sizes, w_spec, 1) * 3)  # fmt: skip
    hosts = value((m, k), 1), value((k, n), 2), value((n,), 3)
    reduce_batch = data.draw(st.booleans())

    def program(mesh: Mesh) -> Any:
        x, w, b = (jax.device_put(h, NamedSharding(mesh, s)) for h, s in zip(hosts, (x_spec, w_spec, b_spec)))

        def f(x: Any, w: Any, b: Any) -> Any:
            y = jnp.tanh(x @ w + b)
            return y, (y.mean(axis=0) if reduce_batch else (y * y).sum())

        return (jax.jit(f) if jitted else f)(x, w, b)

    check_same(program, shape_m, names, axes_kind)


@SETTINGS
@given(st.data(), mesh_choice, st.integers(1, 3))
def test_reshard_and_jit_with_shardings(data: Any, mesh_def: Any, ndim: int) -> None:
    shape_m, names, axes_kind = mesh_def
    sizes = dict(zip(names, shape_m))
    spec = data.draw(specs(sizes, ndim))
    in_spec = data.draw(specs(sizes, ndim))
    out_spec = data.draw(specs(sizes, ndim))
    shape = list(data.draw(shape_for(sizes, spec, ndim)))
    for s in (in_spec, out_spec):
        shape = [int(np.lcm(n, divisor(sizes, s, d))) for d, n in enumerate(shape)]
    x_host = value(tuple(shape))
    which = data.draw(st.sampled_from(["reshard", "in_out", "out_only", "in_only"]))

    def program(mesh: Mesh) -> Any:
        x = jax.device_put(x_host, NamedSharding(mesh, spec))
        if which == "reshard":
            return jax.reshard(x, NamedSharding(mesh, out_spec))
        ins = NamedSharding(mesh, in_spec) if which in ("in_out", "in_only") else None
        outs = NamedSharding(mesh, out_spec) if which in ("in_out", "out_only") else None
        host = x_host if which in ("in_out", "in_only") else x  # in_shardings lay a host value out
        return jax.jit(lambda a: jnp.cos(a) + a, in_shardings=ins, out_shardings=outs)(host)

    check_same(program, shape_m, names, axes_kind)


@pytest.mark.parametrize(
    "mesh_def", MESHES, ids=lambda m: "x".join(map(str, m[0])) if isinstance(m[0], tuple) else None
)
def test_shard_lists_assemble_make_array_from_callback_and_single_device_arrays(mesh_def: Any) -> None:
    """The numpy backend's blocks are the array's: built from callbacks or per-device arrays,
    read back by device_get, np.asarray and addressable_data, as on XLA."""
    shape_m, names = mesh_def
    sizes = dict(zip(names, shape_m))
    spec = P(names[0], names[1] if len(names) > 1 else None)
    shape = (2 * sizes[names[0]], 3 * (sizes[names[1]] if len(names) > 1 else 1))
    host = value(shape)

    def program(mesh: Mesh) -> Any:
        sharding = NamedSharding(mesh, spec)
        a = jax.make_array_from_callback(shape, sharding, lambda index: host[index])
        placed = jax.device_put(host, sharding)
        blocks = [jax.device_put(np.asarray(placed.addressable_data(i)), s.device)
                  for i, s in enumerate(placed.addressable_shards)]  # fmt: skip
        b = jax.make_array_from_single_device_arrays(shape, sharding, blocks)
        np.testing.assert_array_equal(jax.device_get(a), host)
        np.testing.assert_array_equal(np.asarray(b), host)
        return a, b

    check_same(program, shape_m, names)


@pytest.mark.parametrize("kind", ["numpy", "xla"])
def test_single_device_arrays_stay_each_devices_own_block(kind: str) -> None:
    """A replicated array made of different blocks keeps each device's block (JAX compares
    none): the shard list is the array, and np.asarray reads the first device's."""
    mesh = make_mesh(kind, (4,), ("a",))
    sharding = NamedSharding(mesh, P())
    blocks = [jax.device_put(np.full(3, float(i), np.float32), d) for i, d in enumerate(mesh.devices.flat)]
    x = jax.make_array_from_single_device_arrays((3,), sharding, blocks)
    assert [np.asarray(s.data).tolist() for s in x.addressable_shards] == [[float(i)] * 3 for i in range(4)]
    assert [s.device for s in x.addressable_shards] == list(mesh.devices.flat)
    np.testing.assert_array_equal(np.asarray(x), np.zeros(3, np.float32))


def test_the_numpy_backend_holds_one_read_only_block_per_device() -> None:
    """The shard list is the array: each device's block is held (the same object each time
    it is asked for), read-only, of the shard's shape, and jit results are shard lists too."""
    mesh = make_mesh("numpy", (2, 4), ("a", "b"))
    x = jax.device_put(value((4, 8)), NamedSharding(mesh, P("a", "b")))
    for y in (x, jax.jit(lambda v: v * 2)(x), x + 1):
        shards = y.addressable_shards
        assert len(shards) == len(y._shards) == 8
        assert all(s.data._buf is b for s, b in zip(y.addressable_shards, y._shards))  # the held blocks
        assert all(b.shape == (2, 2) and not b.flags.writeable for b in y._shards)
        assert [s.device for s in shards] == list(mesh.devices.flat)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_pmap_lays_out_one_slice_per_device_alike(n: int) -> None:
    host = value((n, 3))
    outs = {}
    for kind in ("numpy", "xla"):
        f = jax.pmap(lambda v: jax.lax.psum(v, "i") + v * 2, axis_name="i", devices=devices_of(kind)[:n])
        outs[kind] = described(f(host))
    ref, got = outs["numpy"], outs["xla"]
    np.testing.assert_allclose(ref[0], got[0], rtol=1e-5)
    assert ref[1:4] == got[1:4]
    assert [b[:3] for b in ref[4]] == [b[:3] for b in got[4]]


@pytest.mark.parametrize("mesh_def", [((4, 2), ("a", "b")), ((2, 2, 2), ("a", "b", "c"))])
def test_constraints_and_the_first_arguments_layout_name_the_results(mesh_def: Any) -> None:
    """A result the partitioner lays out is named as JAX names it: by the first argument's spec when
    laid out alike (and of its rank), else by the spec its layout reads as, trailing unsplit
    dimensions left out; a with_sharding_constraint inside sets the layout on both backends."""
    shape_m, names = mesh_def

    def program(mesh: Mesh) -> Any:
        x = jax.device_put(value((8, 4)), NamedSharding(mesh, P(names[0], names[1])))
        y = jax.device_put(value((4, 4)), NamedSharding(mesh, P(names[1], None)))

        def f(x: Any, y: Any) -> Any:
            z = jax.lax.with_sharding_constraint(x @ y, NamedSharding(mesh, P(names[0], None)))
            return z, jnp.sin(x), z.sum(0)

        z, s, total = jax.jit(f)(x, y)
        assert z.sharding.spec == P(names[0]) and s.sharding.spec == P(names[0], names[1])
        return z, s, total

    check_same(program, shape_m, names)
