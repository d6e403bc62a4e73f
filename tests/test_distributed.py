"""Multi-process minijax on XLA's distributed runtime (issue 17, mproc), tested the way users
run it: N Python processes on 127.0.0.1, each with 2 CPU devices, joined by
``jax.distributed.initialize``. Every launch has a timeout and kills its processes on failure."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jaxlib")

import minijax as jax  # noqa: E402
import minijax.numpy as jnp  # noqa: E402

# The processes run on the xla backend (the one with a distributed runtime), whichever backend
# the suite runs on, so these tests run once.
pytestmark = pytest.mark.single_backend

TIMEOUT_S = 60  # a launch of 4 processes on a loaded 2-core machine takes ~10 s

WORKER = textwrap.dedent('''
    import json, sys
    import numpy as np
    import minijax as jax
    import minijax.numpy as jnp
    from minijax.experimental import multihost_utils
    from minijax.sharding import NamedSharding, PartitionSpec as P

    mode, pid, nproc, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    out = {}

    def report():
        print("RESULT " + json.dumps(out), flush=True)

    jax.distributed.initialize(f"127.0.0.1:{port}", nproc, pid, initialization_timeout=20)
    out["initialized"] = jax.distributed.is_initialized()
    out["process_index"] = jax.process_index()
    out["process_count"] = jax.process_count()
    out["devices"] = [[d.id, d.process_index] for d in jax.devices()]
    out["local_devices"] = [d.id for d in jax.local_devices()]
    out["local_device_count"] = jax.local_device_count()
    mesh = jax.make_mesh((len(jax.devices()),), ("data",))

    def mlp(params, x):
        (w1, b1), (w2, b2) = params
        return jnp.tanh(x @ w1 + b1) @ w2 + b2

    def loss(params, x, y):
        return jnp.mean((mlp(params, x) - y) ** 2)

    if mode == "train":
        data = np.load(sys.argv[5])
        per = data["x"].shape[0] // nproc
        mine = slice(pid * per, (pid + 1) * per)
        batch = NamedSharding(mesh, P("data"))
        x = jax.make_array_from_process_local_data(batch, data["x"][mine])
        y = jax.make_array_from_process_local_data(batch, data["y"][mine])
        out["x_shape"] = list(x.shape)
        out["x_shards"] = [[s.device.id, s.index[0].start, s.index[0].stop] for s in x.addressable_shards]
        params = [[data["w1"], data["b1"]], [data["w2"], data["b2"]]]
        params = jax.device_put(params, NamedSharding(mesh, P()))

        @jax.jit
        def step(params, x, y):
            # The batch is sharded over every process's devices: the mean's sum is an
            # all-reduce across processes (gloo), so each process gets the global gradient.
            grads = jax.grad(loss)(params, x, y)
            return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)

        for _ in range(3):
            params = step(params, x, y)
        out["params"] = [np.asarray(p).tolist() for p in jax.tree.leaves(params)]
        out["allgather"] = multihost_utils.process_allgather(np.array([pid, 10 * pid])).tolist()
        out["allgather_tiled"] = multihost_utils.process_allgather(np.array([pid, 10 * pid]), tiled=True).tolist()
        out["broadcast"] = multihost_utils.broadcast_one_to_all(np.array([pid + 1.0, 7.0])).tolist()
        out["global_gather"] = multihost_utils.process_allgather(x).tolist()
        local = multihost_utils.global_array_to_host_local_array(x, mesh, P("data"))
        out["host_local"] = np.asarray(local).tolist()
        again = multihost_utils.host_local_array_to_global_array(local, mesh, P("data"))
        out["round_trip_shape"] = list(again.shape)
        multihost_utils.sync_global_devices("after training")
        try:
            np.asarray(x)
        except RuntimeError as e:
            out["fetch_error"] = str(e)
    elif mode == "mismatch":
        # Process 1 orders the devices differently: the same program over another mesh.
        devices = jax.devices() if pid == 0 else jax.devices()[::-1]
        other = jax.sharding.Mesh(np.array(devices), ("data",))
        x = jax.make_array_from_process_local_data(NamedSharding(other, P("data")), np.ones(4, np.float32))
        try:
            jax.jit(lambda a: a.sum())(x)
            out["error"] = None
        except Exception as e:
            out["error"] = [type(e).__name__, str(e)]
    elif mode == "specs":
        errors = []
        for spec, local in [(P("model"), np.ones(4)), (P("data"), np.ones(3))]:
            try:
                jax.make_array_from_process_local_data(NamedSharding(mesh, spec), local)
                errors.append(None)
            except Exception as e:
                errors.append([type(e).__name__, str(e)])
        out["errors"] = errors
    elif mode == "eager":
        eager_ops(mesh, pid, nproc, out)
    jax.distributed.shutdown()
    out["after_shutdown"] = jax.distributed.is_initialized()
    report()
''')

# Eager operations and shard_map on an array laid out over 4 devices: in 2 processes (2 devices each,
# each process supplying its rows) and, for reference, in 1 process with 4 devices. Each result is
# reported as its sharding and this process's blocks (index and value).
EAGER = textwrap.dedent('''
    def eager_ops(mesh, pid, nproc, out):
        from minijax.sharding import AxisType, Mesh
        mesh = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Auto,))
        rows = np.arange(16, dtype=np.float32).reshape(8, 2)
        per = 8 // nproc
        x = jax.make_array_from_process_local_data(NamedSharding(mesh, P("data")), rows[pid * per:(pid + 1) * per])
        w = jax.device_put(np.arange(6, dtype=np.float32).reshape(2, 3) / 4, NamedSharding(mesh, P()))
        ring = [(i, (i + 1) % 4) for i in range(4)]

        def smap(f, out_specs):
            return jax.shard_map(f, mesh=mesh, in_specs=P("data"), out_specs=out_specs)

        asked = []

        def block(index):
            asked.append([[i.start, i.stop] for i in index])
            return rows[index] * 10

        ops = {
            "callback": lambda: jax.make_array_from_callback((8, 2), NamedSharding(mesh, P("data")), block),
            "single_device_arrays": lambda: jax.make_array_from_single_device_arrays(
                (8, 2), NamedSharding(mesh, P("data")), [s.data * 3 for s in x.addressable_shards]),
            "add": lambda: x + 1,
            "sum": lambda: jnp.sum(x),
            "sum0": lambda: jnp.sum(x, axis=0),
            "matmul": lambda: x @ w,
            "index": lambda: x[3],
            "slice": lambda: x[2:6],
            "column": lambda: x[:, 1],
            "gather": lambda: x[jnp.array([1, 6])],
            "where": lambda: jnp.where(x > 5, x, -x),
            "with_uncommitted": lambda: x * jnp.arange(2.0) - jnp.ones((8, 1)),
            "cumsum": lambda: jnp.cumsum(x, axis=0),
            "transpose": lambda: x.T,
            "replicate": lambda: jax.device_put(x, NamedSharding(mesh, P())),
            "copy": lambda: x.copy() - x,
            "split_again": lambda: jax.device_put(jax.device_put(x, NamedSharding(mesh, P())),
                                                  NamedSharding(mesh, P("data"))),
            "cond": lambda: jax.lax.cond(jnp.sum(x) > 0, lambda a: a * 2, lambda a: a, x),
            "fori": lambda: jax.lax.fori_loop(0, 3, lambda i, a: a + i, x),
            "grad": lambda: jax.grad(lambda a: jnp.sum(jnp.tanh(a @ w)))(x),
            "sm_psum": lambda: jax.jit(smap(lambda b: jax.lax.psum(b, "data"), P()))(x),
            "sm_all_gather": lambda: jax.jit(smap(lambda b: jax.lax.all_gather(b, "data", tiled=True), P("data")))(x),
            "sm_ppermute": lambda: jax.jit(smap(lambda b: jax.lax.ppermute(b, "data", ring), P("data")))(x),
            "sm_eager": lambda: smap(lambda b: jax.lax.psum(b, "data") * jax.lax.axis_index("data"), P("data"))(x),
            "sm_mean": lambda: smap(lambda b: jax.lax.pmean(jnp.sum(b, 0, keepdims=True), "data"), P())(x),
        }
        results = {}
        for name, op in ops.items():
            r = op()
            assert isinstance(r.sharding, NamedSharding), (name, r.sharding)
            results[name] = {
                "shape": list(r.shape), "spec": str(r.sharding.spec),
                "shards": [[[[i.start, i.stop] for i in s.index], np.asarray(s.data).tolist()]
                           for s in r.addressable_shards],
                "value": np.asarray(r).tolist() if nproc == 1 else None,
            }
        out["results"] = results
        out["asked"] = asked  # the callback is asked for this process's blocks only
        total = jnp.sum(x)
        # Split only over the devices within each process (the mesh's second axis): every process holds it all.
        grid = Mesh(np.array(jax.devices()).reshape(2, 2), ("across", "within"))
        within = jax.device_put(rows.T, NamedSharding(grid, P(None, "within")))
        out["fetched"] = [float(total), str(total), repr(total), f"{total:.1f}",
                          np.asarray(jax.device_put(x, NamedSharding(mesh, P()))).tolist(), np.asarray(within).tolist()]
        out["printed"] = [repr(x), str(x), f"{x}", repr(x.astype(jnp.int32) + 1)]
        out["global_shards"] = [[s.device.id, [[i.start, i.stop] for i in s.index], s.data is not None]
                                for s in x.global_shards]
        out["addressable"] = [x.is_fully_addressable, x.sharding.is_fully_addressable, total.is_fully_replicated,
                              sorted(d.id for d in x.sharding.addressable_devices),
                              [[i.start, i.stop] for i, *_ in x.sharding.addressable_devices_indices_map((8, 2)).values()]]
        if nproc == 1:
            return
        local = Mesh(np.array(jax.local_devices()), ("data",))
        errors = {}
        for name, bad in {
            "asarray": lambda: np.asarray(x),
            "tolist": lambda: x.tolist(),
            "item": lambda: x.item(0),
            "to_device": lambda: jax.device_put(x, jax.local_devices()[0]),
            "no_alias": lambda: jax.device_put(x, may_alias=False),
            "no_device": lambda: jax.device_put(x),
            "to_local_mesh": lambda: jax.device_put(x, NamedSharding(local, P("data"))),
            "to_other_devices": lambda: jax.device_put(x, NamedSharding(Mesh(np.array(jax.devices()[1:]), ("d",)), P())),
            "with_local_array": lambda: x + jax.device_put(jnp.ones(2), jax.local_devices()[0]),
        }.items():
            try:
                bad()
                errors[name] = None
            except Exception as e:
                errors[name] = [type(e).__name__, str(e)]
        out["errors"] = errors
        out["after_errors"] = float(jnp.sum(x * 2))  # the processes still run in step
''')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(devices: int = 2) -> dict[str, str]:
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.pop("JAX_PLATFORMS", None)
    env["MINIJAX_BACKEND"] = "xla"
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return env


def _launch(tmp_path: Path, mode: str, nproc: int, *extra: str, devices: int = 2) -> list[dict]:
    """Run the worker in ``nproc`` processes of ``devices`` devices; their RESULT lines, in process order."""
    script = tmp_path / "worker.py"
    script.write_text(EAGER + WORKER)
    port = str(_free_port())
    procs = [
        subprocess.Popen([sys.executable, "-u", str(script), mode, str(i), str(nproc), port, *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(devices))
        for i in range(nproc)
    ]  # fmt: skip
    return _results(procs)


def _results(procs: list[subprocess.Popen[str]]) -> list[dict]:
    """The processes' RESULT lines, in process order; each process is killed after TIMEOUT_S."""
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=TIMEOUT_S)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    results = []
    for i, (p, text) in enumerate(zip(procs, outputs)):
        lines = [line for line in text.splitlines() if line.startswith("RESULT ")]
        assert p.returncode == 0 and lines, f"process {i} exited with {p.returncode}:\n{text[-4000:]}"
        results.append(json.loads(lines[-1][len("RESULT "):]))
    return results


def _problem(tmp_path: Path, nproc: int) -> Path:
    rng = np.random.default_rng(0)
    data = {
        "x": rng.normal(size=(4 * nproc, 3)).astype(np.float32),
        "y": rng.normal(size=(4 * nproc, 1)).astype(np.float32),
        "w1": rng.normal(size=(3, 5)).astype(np.float32) * 0.5,
        "b1": np.zeros(5, np.float32),
        "w2": rng.normal(size=(5, 1)).astype(np.float32) * 0.5,
        "b2": np.zeros(1, np.float32),
    }
    path = tmp_path / "data.npz"
    np.savez(path, **data)
    return path


def _reference(path: Path) -> list[np.ndarray]:
    """The same three steps in this one process, on one device, over the whole batch."""
    data = np.load(path)

    def loss(params, x, y):
        (w1, b1), (w2, b2) = params
        return jnp.mean((jnp.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)

    params = [[data["w1"], data["b1"]], [data["w2"], data["b2"]]]
    for _ in range(3):
        grads = jax.grad(loss)(params, data["x"], data["y"])
        params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    return [np.asarray(p) for p in jax.tree.leaves(params)]


@pytest.mark.parametrize("nproc", [2, 4])
def test_data_parallel_training_step_across_processes(tmp_path: Path, nproc: int) -> None:
    path = _problem(tmp_path, nproc)
    results = _launch(tmp_path, "train", nproc, str(path))
    expected = _reference(path)
    data = np.load(path)
    for pid, r in enumerate(results):
        assert r["initialized"] and r["after_shutdown"] is False
        assert (r["process_index"], r["process_count"]) == (pid, nproc)
        assert len(r["devices"]) == 2 * nproc and r["local_device_count"] == 2
        assert sorted({p for _, p in r["devices"]}) == list(range(nproc))
        assert r["local_devices"] == [d for d, p in r["devices"] if p == pid]
        assert r["x_shape"] == [4 * nproc, 3]
        # Only this process's blocks, at its rows of the global batch.
        assert [[s, e] for _, s, e in r["x_shards"]] == [[4 * pid, 4 * pid + 2], [4 * pid + 2, 4 * pid + 4]]
        for got, want in zip(r["params"], expected):
            np.testing.assert_allclose(np.array(got), want, rtol=2e-5, atol=2e-6)
        assert r["params"] == results[0]["params"]  # every process holds the same parameters
        assert r["allgather"] == [[i, 10 * i] for i in range(nproc)]
        assert r["allgather_tiled"] == [v for i in range(nproc) for v in (i, 10 * i)]
        assert r["broadcast"] == [1.0, 7.0]
        np.testing.assert_array_equal(np.array(r["global_gather"]), data["x"])
        np.testing.assert_array_equal(np.array(r["host_local"]), data["x"][4 * pid:4 * pid + 4])
        assert r["round_trip_shape"] == [4 * nproc, 3]
        assert "process_allgather" in r["fetch_error"]


def test_mismatched_meshes_across_processes_are_an_error(tmp_path: Path) -> None:
    results = _launch(tmp_path, "mismatch", 2)
    for r in results:
        kind, message = r["error"]
        assert kind == "ValueError"
        assert "Processes disagree" in message and "same Mesh" in message


def test_spec_errors_in_a_multi_process_run(tmp_path: Path) -> None:
    (r0, r1) = _launch(tmp_path, "specs", 2)
    assert r0["errors"] == r1["errors"]
    missing, indivisible = r0["errors"]
    assert missing == ["ValueError", "Resource axis: model of P('model',) is not found in mesh: ('data',)."]
    assert indivisible[0] == "ValueError"
    assert "array axis 0 is partitioned 4 times, but does not evenly divide the dimension size 6" in indivisible[1]


FETCH_ERROR = "Fetching value for `jax.Array` that spans non-addressable (non process local) devices is not possible."


def test_eager_operations_and_shard_map_across_processes(tmp_path: Path) -> None:
    """Each process's blocks of every result are the one-process run's, under the same sharding; what
    needs another process's data is JAX's error on every process (and they still run in step after)."""
    (single,) = _launch(tmp_path, "eager", 1, devices=4)
    multi = _launch(tmp_path, "eager", 2)
    rows = np.arange(16, dtype=np.float32).reshape(8, 2)
    for pid, r in enumerate(multi):
        assert r["results"].keys() == single["results"].keys()
        for name, want in single["results"].items():
            got = r["results"][name]
            assert (got["shape"], got["spec"]) == (want["shape"], want["spec"]), name
            value = np.array(want["value"])
            assert len(got["shards"]) == 2, name  # this process's 2 devices
            for (index, block), (want_index, want_block) in zip(got["shards"], want["shards"][2 * pid:2 * pid + 2]):
                assert index == want_index, name
                where = tuple(slice(a, b) for a, b in index)
                np.testing.assert_allclose(np.array(block), value[where], rtol=1e-6, err_msg=name)
                np.testing.assert_allclose(np.array(block), np.array(want_block), rtol=1e-6, err_msg=name)
        # Replicated values are fetched and printed as in one process.
        assert r["fetched"] == single["fetched"] == [120.0, "120.0", "Array(120., dtype=float32)", "120.0",
                                                     rows.tolist(), rows.T.tolist()]
        # A split value prints as its shape, as JAX prints it (one process prints the value).
        assert r["printed"] == ["Array(shape=(8, 2), dtype=float32)"] * 3 + ["Array(shape=(8, 2), dtype=int32)"]
        assert single["printed"][0].startswith("Array([[ 0.,  1.],")
        assert single["addressable"] == [True, True, True, [0, 1, 2, 3], [[0, 2], [2, 4], [4, 6], [6, 8]]]
        assert r["asked"] == single["asked"][2 * pid:2 * pid + 2]
        # Every device's shard; another process's without its data.
        assert [[i, h] for _, i, h in r["global_shards"]] == [[i, p == pid] for p in (0, 1) for i in
                                                            ([[4 * p, 4 * p + 2], [None, None]], [[4 * p + 2, 4 * p + 4], [None, None]])]
        mine = [2 * pid, 2 * pid + 1] if pid == 0 else [2048, 2049]
        assert r["addressable"] == [False, False, True, mine, [[4 * pid, 4 * pid + 2], [4 * pid + 2, 4 * pid + 4]]]
        errors = r["errors"]
        for name in ("asarray", "tolist", "item"):
            assert errors[name] == ["RuntimeError", FETCH_ERROR + errors[name][1][len(FETCH_ERROR):]], name
            assert "process_allgather" in errors[name][1]
        for name in ("to_device", "no_alias", "no_device"):
            kind, message = errors[name]
            assert kind == "ValueError" and "must be a fully addressable array" in message
        assert errors["to_local_mesh"] == ["NotImplementedError", "Cannot reshard an input that is not fully addressable"]
        kind, message = errors["to_other_devices"]
        assert kind == "ValueError" and "input and target sharding should have the same set of devices" in message
        kind, message = errors["with_local_array"]
        assert kind == "ValueError" and "Received incompatible devices for jitted computation" in message
        assert "device ids [0, 1, 2048, 2049]" in message
        assert r["after_errors"] == 240.0
    # Spot checks of the reference itself, against NumPy.
    results = single["results"]
    assert single["asked"] == [[[0, 2], [None, None]], [[2, 4], [None, None]], [[4, 6], [None, None]], [[6, 8], [None, None]]]
    np.testing.assert_array_equal(results["callback"]["value"], rows * 10)
    np.testing.assert_array_equal(results["single_device_arrays"]["value"], rows * 3)
    np.testing.assert_allclose(results["matmul"]["value"], rows @ (np.arange(6).reshape(2, 3) / 4), rtol=1e-6)
    blocks = rows.reshape(4, 2, 2)
    np.testing.assert_array_equal(results["sm_psum"]["value"], blocks.sum(0))
    np.testing.assert_array_equal(results["sm_ppermute"]["value"], np.roll(rows, 2, axis=0))
    np.testing.assert_array_equal(results["sm_all_gather"]["value"], np.tile(rows, (4, 1)))
    np.testing.assert_array_equal(results["sm_eager"]["value"], (blocks.sum(0)[None] * np.arange(4)[:, None, None]).reshape(8, 2))


BAD = textwrap.dedent('''
    import sys, time
    import minijax as jax
    what = sys.argv[1]
    start = time.monotonic()
    try:
        if what == "process_id":
            jax.distributed.initialize("127.0.0.1:1", num_processes=2, process_id=2)
        elif what == "unreachable":
            jax.distributed.initialize(f"127.0.0.1:{sys.argv[2]}", num_processes=2, process_id=1,
                                       initialization_timeout=2)
        elif what == "after_backend":
            jax.devices()
            jax.distributed.initialize("127.0.0.1:1", num_processes=2, process_id=1)
    except Exception as e:
        print("RESULT", type(e).__name__, round(time.monotonic() - start, 1), str(e), flush=True)
''')


@pytest.mark.parametrize("what", ["process_id", "unreachable", "after_backend"])
def test_bad_initialize(tmp_path: Path, what: str) -> None:
    script = tmp_path / "bad.py"
    script.write_text(BAD)
    # A port nobody listens on: the coordinator is unreachable.
    p = subprocess.run([sys.executable, str(script), what, str(_free_port())], capture_output=True, text=True,
                       env=_env(), timeout=TIMEOUT_S)  # fmt: skip
    line = next(line for line in p.stdout.splitlines() if line.startswith("RESULT"))
    _, kind, seconds, message = line.split(" ", 3)
    if what == "process_id":
        assert kind == "ValueError"
        assert "with process_id < num_processes. Got process_id=2, num_processes=2." in message
    elif what == "unreachable":
        assert kind == "RuntimeError"
        assert "could not connect to the coordinator at 127.0.0.1:" in message
        assert "initialization_timeout=2s" in message
        assert float(seconds) < 15  # the timeout named, not a hang
    else:
        assert kind == "RuntimeError"
        assert "must be called before any JAX calls that might initialise the XLA backend" in message


def test_one_process_defaults() -> None:
    assert jax.process_index() == 0 and jax.process_count() == 1
    assert jax.local_devices() == jax.devices() and not jax.distributed.is_initialized()
