"""minijax and JAX side by side on 8 CPU devices (issue 17): data-parallel programs
whose arguments are laid out over a mesh, so that each runs as one SPMD program.

    python benchmarks/spmd.py [--jax-python PATH] [--rounds N] [--devices N]

Each library runs in its own subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (it must be set before
the client is made); the two alternate, round by round, and the table gives
the median per-call time of each and the median of the per-round ratios
(minijax / JAX: below 1 means minijax is faster). ``--jax-python`` (default
``$MINIJAX_ORACLE_PYTHON``) is a Python that has jax.

Workloads:
- ``dp_matmul``: ``jit(lambda w, x: tanh(x @ w))``, x (2048, 512) split over the
  batch axis, w (512, 512) replicated.
- ``dp_mlp_step``: one SGD step of a 2-layer MLP, batch split, parameters
  replicated (XLA inserts the gradient's all-reduce).
- ``dp_mlp_compile``: tracing + compiling that step for fresh arguments' shapes.
- ``shard_map_psum``: ``jit(shard_map(lambda x, w: psum(tanh(x @ w), "batch")))``, x split
  over the batch axis, w replicated: each device's block, summed across the devices.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ("dp_matmul", "dp_mlp_step", "dp_mlp_compile", "shard_map_psum")


def _setup(lib: str) -> dict[str, Any]:
    import numpy as np

    if lib == "jax":
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
    else:
        import minijax as jax  # type: ignore[no-redef]
        import minijax.numpy as jnp  # type: ignore[no-redef]
        from minijax.sharding import NamedSharding, PartitionSpec as P  # type: ignore[assignment]
    n = len(jax.devices())
    mesh = jax.make_mesh((n,), ("batch",))
    batch, replicated = NamedSharding(mesh, P("batch")), NamedSharding(mesh, P())
    rng = np.random.default_rng(0)
    x = jax.device_put(rng.normal(size=(2048, 512)).astype(np.float32), batch)
    w = jax.device_put(rng.normal(size=(512, 512)).astype(np.float32) / 20, replicated)
    matmul = jax.jit(lambda w, x: jnp.tanh(x @ w))

    def loss(params: Any, x: Any, y: Any) -> Any:
        w1, w2 = params
        return jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2)

    def step(params: Any, x: Any, y: Any) -> Any:
        grads = jax.grad(loss)(params, x, y)
        return [p - 0.01 * g for p, g in zip(params, grads)]

    params = [w, jax.device_put(rng.normal(size=(512, 16)).astype(np.float32) / 20, replicated)]
    y = jax.device_put(rng.normal(size=(2048, 16)).astype(np.float32), batch)
    jstep = jax.jit(step)
    state: dict[str, Any] = {"params": params}
    fresh = iter(range(10**6))

    def run_matmul() -> None:
        matmul(w, x).block_until_ready()

    def run_step() -> None:
        state["params"] = jstep(state["params"], x, y)
        state["params"][0].block_until_ready()

    def run_compile() -> None:
        rows = 8 * (next(fresh) % 64 + 1)  # a new batch size: a new trace and compile
        xs = jax.device_put(np.ones((rows, 512), np.float32), batch)
        ys = jax.device_put(np.ones((rows, 16), np.float32), batch)
        jax.jit(step)(params, xs, ys)[0].block_until_ready()

    summed = jax.jit(jax.shard_map(lambda x, w: jax.lax.psum(jnp.tanh(x @ w), "batch"), mesh=mesh,
                                   in_specs=(P("batch"), P()), out_specs=P()))  # fmt: skip

    def run_shard_map() -> None:
        summed(x, w).block_until_ready()

    return {"dp_matmul": run_matmul, "dp_mlp_step": run_step, "dp_mlp_compile": run_compile,
            "shard_map_psum": run_shard_map}  # fmt: skip


def _time(fn: Any, min_time: float) -> float:
    fn()  # warm (compiles)
    times: list[float] = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 3:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def serve(lib: str) -> None:
    """A worker: reads ``NAME MIN_TIME`` lines, answers each with the median seconds per call."""
    workloads = _setup(lib)
    print("ready", flush=True)
    for line in sys.stdin:
        name, min_time = line.split()
        print(json.dumps(_time(workloads[name], float(min_time))), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", default=os.environ.get("MINIJAX_ORACLE_PYTHON", "/work/venv-oracle/bin/python"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--serve", choices=("minijax", "jax"))
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={args.devices}",
           "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "3"}  # fmt: skip
    workers = {
        lib: subprocess.Popen([python, os.path.abspath(__file__), "--serve", lib], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
        for lib, python in (("minijax", sys.executable), ("jax", args.jax_python))
    }
    try:
        for lib, worker in workers.items():
            assert worker.stdout is not None
            if worker.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the {lib} worker did not start")

        def ask(lib: str, name: str) -> float:
            worker = workers[lib]
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.write(f"{name} {args.min_time}\n")
            worker.stdin.flush()
            return float(json.loads(worker.stdout.readline()))

        print(f"{args.devices} CPU devices, {args.rounds} rounds (median us per call; ratio = minijax / JAX)")
        print(f"{'workload':<16} {'minijax':>10} {'JAX':>10} {'ratio':>7}")
        for name in NAMES:
            mine, theirs, ratios = [], [], []
            for r in range(args.rounds):
                order = ("minijax", "jax") if r % 2 == 0 else ("jax", "minijax")
                got = {lib: ask(lib, name) for lib in order}
                mine.append(got["minijax"])
                theirs.append(got["jax"])
                ratios.append(got["minijax"] / got["jax"])
            print(f"{name:<16} {statistics.median(mine) * 1e6:>10.0f} {statistics.median(theirs) * 1e6:>10.0f} "
                  f"{statistics.median(ratios):>6.2f}×")  # fmt: skip
    finally:
        for worker in workers.values():
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait(timeout=60)


if __name__ == "__main__":
    main()
