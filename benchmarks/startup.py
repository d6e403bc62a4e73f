"""Import time and the memory of a small training run, minijax beside JAX (issue 23).

    python benchmarks/startup.py --jax-python /path/to/python [--rounds 7]

Each measurement runs in a fresh process, minijax's and JAX's in alternation
(``--rounds`` of each), and the medians are reported with their ratio:

* ``import``: the wall time of ``import minijax`` (``MINIJAX_BACKEND=xla``:
  the XLA backend is the one that will run) against ``import jax``
  (``JAX_PLATFORMS=cpu``), read in the process around the import statement;
* ``import_ready``: the same plus listing the devices, so the backend's
  runtime is up (what the first operation needs anyway);
* ``mlp_peak_rss``: the peak resident set size (``ru_maxrss``) of a process
  that imports the library and runs 20 steps of a cached
  ``jit(grad(MLP loss))`` (``workloads.mlp_grad_step``'s model, 784-512-512-10,
  batch 128).

The issue's targets: import at most 0.6x JAX's, peak RSS at most 0.7x.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, resource, sys, time
lib, what = sys.argv[1], sys.argv[2]
start = time.perf_counter()
mod = __import__(lib)
imported = time.perf_counter() - start
out = {"import": imported}
if what == "import_ready":
    mod.devices()
    out["import_ready"] = time.perf_counter() - start
if what == "mlp_peak_rss":
    sys.path.insert(0, sys.argv[3])
    import workloads
    run, _ = workloads.mlp_grad_step(workloads.load(lib))
    for _ in range(19):  # (the setup ran the first step)
        run()
    out["mlp_peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
print(json.dumps(out))
"""

MEASURES = ("import", "import_ready", "mlp_peak_rss")


# Both libraries import from compiled bytecode, as an installed package does: an environment that
# sets PYTHONDONTWRITEBYTECODE would otherwise have minijax compile every module from source on
# every import while JAX's site-packages hold their .pyc files. The caches go to one folder of their
# own (PYTHONPYCACHEPREFIX) and are warmed by a first, untimed run of each.
PYCACHE = Path(tempfile.gettempdir()) / "minijax-startup-pycache"


def child(python: str, lib: str, what: str) -> float:
    env = dict(os.environ, MINIJAX_BACKEND="xla", JAX_PLATFORMS="cpu", PYTHONPYCACHEPREFIX=str(PYCACHE))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([python, "-c", CHILD, lib, what, str(HERE)], env=env, capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout.strip().splitlines()[-1])[what])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", default=os.environ.get("MINIJAX_ORACLE_PYTHON"), required=False)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", nargs="*", default=list(MEASURES), choices=MEASURES)
    args = parser.parse_args(argv)
    if not args.jax_python:
        parser.error("needs --jax-python (a Python with jax) or $MINIJAX_ORACLE_PYTHON")
    print(f"{args.rounds} rounds, minijax and JAX in alternation, each in a fresh process; medians")
    print(f"{'measure':<14} {'minijax':>10} {'jax':>10} {'minijax/jax':>12}  (median of per-round ratios)")
    child(sys.executable, "minijax", "mlp_peak_rss")  # (warms the bytecode caches)
    child(args.jax_python, "jax", "mlp_peak_rss")
    for what in args.only:
        mine, theirs, ratios = [], [], []
        for _ in range(args.rounds):
            m = child(sys.executable, "minijax", what)
            j = child(args.jax_python, "jax", what)
            mine.append(m)
            theirs.append(j)
            ratios.append(m / j)
        unit = "MiB" if what == "mlp_peak_rss" else "s"
        print(f"{what:<14} {statistics.median(mine):>9.3f}{unit[0]} {statistics.median(theirs):>9.3f}{unit[0]} "
              f"{statistics.median(ratios):>11.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
