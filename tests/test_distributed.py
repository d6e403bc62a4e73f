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
    jax.distributed.shutdown()
    out["after_shutdown"] = jax.distributed.is_initialized()
    report()
''')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.pop("JAX_PLATFORMS", None)
    env["MINIJAX_BACKEND"] = "xla"
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return env


def _launch(tmp_path: Path, mode: str, nproc: int, *extra: str) -> list[dict]:
    """Run the worker in ``nproc`` processes; their RESULT lines, in process order."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    port = str(_free_port())
    procs = [
        subprocess.Popen([sys.executable, "-u", str(script), mode, str(i), str(nproc), port, *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env())
        for i in range(nproc)
    ]  # fmt: skip
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
