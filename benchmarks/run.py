"""minijax side by side with NumPy and real JAX: one run, one table.

    python benchmarks/run.py [--jax-python PATH] [--repeat N] [--only NAME ...]

minijax and NumPy are timed in this process. JAX is never imported here: its
timings come from a subprocess running ``workloads.py --lib jax`` under a
Python that has jax (``--jax-python``, default ``$MINIJAX_ORACLE_PYTHON``);
without one, the JAX column is left empty and a note says why.

Ratios are "minijax relative to the other library": for latencies
minijax_time / other_time (below 1 means minijax is faster), for tracing
minijax_rate / other_rate (above 1 means minijax is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import WORKLOADS, measure  # noqa: E402

HERE = Path(__file__).resolve().parent
Results = dict[str, dict[str, float]]

# The project's targets, per workload: (kind, bound). "latency" targets bound
# minijax_time / jax_time from above; "rate" targets bound the throughput
# ratio minijax / JAX from below.
TARGETS: dict[str, tuple[str, float]] = {
    "eager_add": ("latency", 2.0),  # issue 3 (XLA eager); issue 2 asked 0.5× on the numpy backend
    "eager_sin": ("latency", 2.0),
    "trace_lax": ("rate", 2.0),
    "trace_jnp": ("rate", 2.0),
    "jit_dispatch": ("latency", 1.5),
    "jit_matmul": ("latency", 1.05),
    # issue 20 (jit's caches keyed by function)
    "jit_inline": ("latency", 1.5),
    "jit_grad_inline": ("latency", 1.5),
    "mlp_grad_step": ("latency", 1.05),
    "mlp_grad_compile": ("latency", 1.0),
    "mlp_grad_trace": ("latency", 1.0),
    "scan_rnn_run": ("latency", 1.1),
    "scan_rnn_grad_run": ("latency", 1.1),
    "scan_rnn_compile": ("latency", 1.0),
    "scan_rnn_grad_compile": ("latency", 1.0),
    "fori_1000_run": ("latency", 1.1),
    "fori_1000_compile": ("latency", 1.0),
    # issue 7 (breadth)
    "gather_1e5": ("latency", 1.1),
    "scatter_add_1e5": ("latency", 1.1),
    "sort_1e6": ("latency", 1.1),
    "norm_logpdf_1e6": ("latency", 1.1),  # issue 21 (jax.scipy.stats)
    "random_normal_1e6": ("latency", 1.1),
    # issue 18 (convolutions); conv2d_numpy_backend's target is on minijax/NumPy
    "conv2d_fwd": ("latency", 1.05),
    "conv2d_grad": ("latency", 1.05),
    "cnn_train_step": ("latency", 1.05),
    # issue 21 (jnpmath: order statistics)
    "median_1e6": ("latency", 1.1),
    "percentile_1e6": ("latency", 1.1),
    # issue 21 (jnpshape: jax.ops)
    "segment_sum_1e6": ("latency", 1.1),
    # issue 23 (speed): eager jnp calls and a jit call on pytree arguments, at most JAX's time on XLA
    "eager_dot": ("latency", 1.0),
    "eager_matmul": ("latency", 1.0),
    "eager_einsum": ("latency", 1.0),
    "eager_sum": ("latency", 1.0),
    "eager_index": ("latency", 1.0),
    "jit_pytree": ("latency", 1.0),
    # fft (issue 19): jnp.fft.fft of 2^20 complex64 under jit, <= 1.05x JAX
    "fft_2e20": ("latency", 1.05),
    "rfft_2e20": ("latency", 1.05),
}


def measure_jax(python: str, names: list[str], repeat: int, min_time: float, stat: str = "median") -> Results:
    command = [python, str(HERE / "workloads.py"), "--lib", "jax", "--repeat", str(repeat),
               "--min-time", str(min_time), "--stat", stat, "--only", *names]
    # JAX_PLATFORMS=cpu: compare against JAX's CPU backend, and skip probing for GPUs.
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"the JAX subprocess failed ({' '.join(command)}):\n{done.stderr}")
    results: Results = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def measure_interleaved(
    python: str, names: list[str], rounds: int, repeat: int, min_time: float, stat: str = "median",
    worker_lib: str = "jax",
) -> tuple[Results, Results, dict[str, float], dict[str, tuple[float, float]]]:
    """minijax (here) and JAX (a worker process, set up once) timed in alternation,
    ``rounds`` times per workload. Returns each library's median time and, per
    workload, the median of the per-round ratios (and their quartiles): on a machine
    whose speed drifts by the second, a ratio of two measurements taken side by side
    is what holds."""
    from workloads import Timers

    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    command = [python, str(HERE / "workloads.py"), "--lib", worker_lib, "--serve", "--only", *names]
    worker = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert worker.stdin is not None and worker.stdout is not None
    try:
        if worker.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the JAX worker did not start ({' '.join(command)})")
        mine_timers = Timers("minijax", names)
        mine: dict[str, list[float]] = {}
        theirs: dict[str, list[float]] = {}
        units: dict[str, float] = {}
        def time_jax(name: str) -> dict[str, float] | None:
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.write(f"{name} {repeat} {min_time} {stat}\n")
            worker.stdin.flush()
            result: dict[str, float] | None = json.loads(worker.stdout.readline())
            return result

        for name in names:
            for r in range(rounds):
                # Who goes first alternates, and each starts after a pause: the other
                # process's thread pool may still be spinning down on the second core.
                time.sleep(0.05)
                if r % 2:
                    j = time_jax(name)
                    time.sleep(0.05)
                    m = mine_timers.time(name, repeat, min_time, stat)
                else:
                    m = mine_timers.time(name, repeat, min_time, stat)
                    time.sleep(0.05)
                    j = time_jax(name)
                if m is None:
                    break
                units[name] = m["units"]
                mine.setdefault(name, []).append(m["seconds"])
                if j is not None:  # (a workload JAX has no column for is still timed in minijax)
                    theirs.setdefault(name, []).append(j["seconds"])
    finally:
        worker.stdin.close()
        worker.wait(timeout=60)
    median = statistics.median
    mini = {n: {"seconds": median(v), "units": units[n]} for n, v in mine.items()}
    jax = {n: {"seconds": median(v), "units": units[n]} for n, v in theirs.items()}
    per_round = {n: [a / b for a, b in zip(mine[n], theirs[n])] for n in theirs}
    ratios = {n: median(r) for n, r in per_round.items()}
    # The middle half of the per-round ratios: how far this machine moved them.
    spreads = {n: _quartiles(r) for n, r in per_round.items()}
    return mini, jax, ratios, spreads


def _quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def value(result: dict[str, float] | None, unit: str) -> float | None:
    """Microseconds per call, or equations per second."""
    if result is None:
        return None
    if unit == "eqn":
        return result["units"] / result["seconds"]
    return result["seconds"] * 1e6


def ratio(mine: float | None, other: float | None, unit: str) -> float | None:
    if mine is None or other is None:
        return None
    return mine / other  # us/us for latency, (eqn/s)/(eqn/s) for rates


def target_verdict(name: str, vs_jax: float | None) -> str:
    target = TARGETS.get(name)
    if target is None:
        return ""
    kind, bound = target
    if vs_jax is None:
        return f"{'≤' if kind == 'latency' else '≥'} {bound}× JAX: no JAX run"
    met = vs_jax <= bound if kind == "latency" else vs_jax >= bound
    return f"{'≤' if kind == 'latency' else '≥'} {bound}× JAX: {'met' if met else 'missed'}"


def fmt(x: float | None, unit: str = "") -> str:
    if x is None:
        return "—"
    if unit == "eqn":
        return f"{x:,.0f}"
    if unit == "ratio":
        return f"{x:.2f}×"
    return f"{x:.2f}"


def table(
    names: list[str], mini: Results, numpy: Results, jax: Results, paired: dict[str, float] | None = None,
    targets: bool = True, spreads: dict[str, tuple[float, float]] | None = None,
) -> str:
    header = ["workload", "unit", "minijax", "numpy", "jax", "minijax/jax", "minijax/numpy", "target"]
    rows = [header]
    for name in names:
        unit = WORKLOADS[name][2]
        m, n, j = (value(r.get(name), unit) for r in (mini, numpy, jax))
        vs_jax, vs_numpy = ratio(m, j, unit), ratio(m, n, unit)
        if paired and name in paired:  # the median of side-by-side ratios (--rounds)
            vs_jax = paired[name] if unit != "eqn" else 1 / paired[name]
        rows.append([
            name,
            "eqn/s" if unit == "eqn" else "µs/call",
            fmt(m, unit), fmt(n, unit), fmt(j, unit),
            fmt(vs_jax, "ratio") + _spread_text(spreads, name, unit), fmt(vs_numpy, "ratio"),
            target_verdict(name, vs_jax) if targets else "",
        ])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i in (0, 1, 7) else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def _spread_text(spreads: dict[str, tuple[float, float]] | None, name: str, unit: str) -> str:
    """" (q1–q3)" of the per-round ratios, when there are rounds."""
    if not spreads or name not in spreads:
        return ""
    low, high = spreads[name]
    if unit == "eqn":  # rates: the table shows the inverse ratio
        low, high = 1 / high, 1 / low
    return f" ({low:.2f}–{high:.2f})"


def sizes_table(jax_python: str | None) -> str:
    """Equation counts of grad(MLP) and vmap jaxprs, minijax beside JAX."""
    from workloads import jaxpr_sizes

    mine = jaxpr_sizes("minijax")
    theirs: dict[str, int] = {}
    if jax_python:
        out = subprocess.run([jax_python, str(HERE / "workloads.py"), "--lib", "jax", "--sizes"],
                             capture_output=True, text=True, check=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
        theirs = json.loads(out.stdout)
    lines = ["jaxpr equations       minijax   jax"]
    for name, count in mine.items():
        lines.append(f"{name:<20} {count:>8} {theirs.get(name, '—'):>5}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark minijax against NumPy and real JAX.")
    parser.add_argument("--jax-python", default=os.environ.get("MINIJAX_ORACLE_PYTHON"),
                        help="a Python with jax installed (default: $MINIJAX_ORACLE_PYTHON)")
    parser.add_argument("--only", nargs="*", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=7, help="timing repetitions; their median (--stat) is reported")
    parser.add_argument("--stat", choices=["median", "min"], default="median",
                        help="what a workload's repetitions report: their median, or the fastest (the least "
                             "disturbed by other processes on a shared machine)")
    parser.add_argument("--min-time", type=float, default=0.05, help="minimum seconds per repetition")
    parser.add_argument("--json", metavar="PATH", help="also write the raw results as JSON")
    parser.add_argument("--sizes", action="store_true", help="also compare jaxpr equation counts with JAX")
    parser.add_argument("--rounds", type=int, default=0,
                        help="time minijax and JAX in alternation, this many rounds per workload, and report the "
                             "median of the side-by-side ratios (for noisy machines; needs --jax-python)")
    parser.add_argument("--against-self", action="store_true",
                        help="with --rounds: time minijax against a second minijax process in place of JAX; "
                             "the ratios then show how far this machine's noise alone moves a ratio from 1")
    args = parser.parse_args(argv)
    names: list[str] = args.only
    if args.against_self:
        if not args.rounds:
            parser.error("--against-self needs --rounds")
        first, second, self_ratios, self_spreads = measure_interleaved(
            sys.executable, names, args.rounds, args.repeat, args.min_time, args.stat, worker_lib="minijax")
        print(f"{args.rounds} rounds of minijax timed in alternation with a second minijax process (in the jax "
              "column); minijax/jax is the median of the per-round ratios: its distance from 1.00 is noise")
        print()
        print(table(names, first, {}, second, self_ratios, targets=False, spreads=self_spreads))
        return 0

    jax: Results = {}
    paired: dict[str, float] | None = None
    spreads: dict[str, tuple[float, float]] | None = None
    note = ""
    if args.rounds and args.jax_python:
        print(f"timing minijax and jax ({args.jax_python}) in alternation ...", file=sys.stderr)
        mini, jax, paired, spreads = measure_interleaved(args.jax_python, names, args.rounds, args.repeat, args.min_time, args.stat)
    else:
        print("timing minijax ...", file=sys.stderr)
        mini = measure("minijax", names, args.repeat, args.min_time, args.stat)
    print("timing numpy ...", file=sys.stderr)
    numpy = measure("numpy", names, args.repeat, args.min_time, args.stat)
    if args.jax_python and paired is None:
        print(f"timing jax in {args.jax_python} ...", file=sys.stderr)
        jax = measure_jax(args.jax_python, names, args.repeat, args.min_time, args.stat)
    elif not args.jax_python:
        note = "JAX not timed: pass --jax-python /path/to/python (a Python with jax) or set MINIJAX_ORACLE_PYTHON."

    if paired is not None:
        print(f"{args.rounds} rounds of minijax and JAX timed in alternation, each the {args.stat} of {args.repeat} "
              "repetitions; minijax/jax is the median of the per-round ratios (in brackets their quartiles) "
              "(latency: lower is better for minijax; eqn/s: higher is better)")
    else:
        print(f"{args.stat} of {args.repeat} repetitions; ratios are minijax relative to the other library "
              "(latency: lower is better for minijax; eqn/s: higher is better)")
    for name in names:
        print(f"  {name}: {WORKLOADS[name][1]}")
    print()
    print(table(names, mini, numpy, jax, paired, spreads=spreads))
    if args.sizes:
        print()
        print(sizes_table(args.jax_python))
    if note:
        print("\n" + note)
    if args.json:
        raw = {"minijax": mini, "numpy": numpy, "jax": jax, "paired_ratios": paired}
        Path(args.json).write_text(json.dumps(raw, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
