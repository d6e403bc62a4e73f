"""Memory under many distinct shapes: 10,000 jit calls, each on a new shape.

    python benchmarks/memory.py [--calls 10000] [--backend xla|numpy]
                                [--trace-cache N] [--executable-cache N] [--json PATH]

Every call of the jitted function gets an argument of a shape it has not seen,
so each one traces and compiles a program. Without bounds on the caches the
process would keep every trace and every executable; with them (the
``minijax_trace_cache_size`` and ``minijax_executable_cache_size`` flags) the
resident memory levels off once the caches are full. The script prints the
resident set size (RSS) every tenth of the run, the peak RSS, the cache sizes
and, on xla, how many executables and buffers are alive at the end.

The arguments are host NumPy arrays, so that no eager operation (which has a
cache of its own) runs per shape: what grows is jit's.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def rss_mib() -> float:
    """The resident set size now, in MiB (Linux: /proc; elsewhere the peak)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        import os

        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return peak_rss_mib()


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes on macOS, KiB on Linux


def run(calls: int, backend_name: str, trace_cache: int | None, executable_cache: int | None) -> dict[str, Any]:
    import minijax as jax
    import minijax.numpy as jnp
    from minijax import dispatch
    from minijax.backend import get_backend

    jax.config.update("minijax_backend", backend_name)
    if trace_cache is not None:
        jax.config.update("minijax_trace_cache_size", trace_cache)
    if executable_cache is not None:
        jax.config.update("minijax_executable_cache_size", executable_cache)
    backend = get_backend(backend_name)

    @jax.jit
    def f(x: Any) -> Any:
        return jnp.tanh(x) * 2.0 + jnp.sum(x)

    f(np.ones(1, np.float32)).block_until_ready()  # imports, the first compile
    start_rss = rss_mib()
    samples: list[tuple[int, float]] = []
    start = time.perf_counter()
    step = max(1, calls // 10)
    for n in range(1, calls + 1):
        out = f(np.full((n,), 0.5, np.float32))
        if n == 1 or n % step == 0:
            out.block_until_ready()
            value = float(out[0])
            expected = np.tanh(0.5) * 2 + 0.5 * n
            assert abs(value - expected) <= 1e-3 * max(1.0, abs(expected)), (n, value, expected)
            samples.append((n, rss_mib()))
            print(f"  {n:>6} calls  RSS {samples[-1][1]:8.1f} MiB  ({time.perf_counter() - start:6.1f} s)", flush=True)
    seconds = time.perf_counter() - start
    del out
    gc.collect()
    result: dict[str, Any] = {
        "backend": backend_name,
        "calls": calls,
        "seconds": round(seconds, 1),
        "rss_start_mib": round(start_rss, 1),
        "rss_end_mib": round(rss_mib(), 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "samples": samples,
        "trace_cache_size": len(f._cache),
        "trace_cache_capacity": f._cache.capacity,
        "trace_cache_evictions": f._cache.evictions,
        "compiled_cache_size": len(dispatch._compiled),
        "eager_cache_size": len(dispatch._eager_cache),
        "executable_cache_capacity": dispatch._compiled.capacity,
    }
    counts: Any = backend  # the xla backend counts what is alive; the numpy backend does not
    if hasattr(counts, "live_executable_count"):
        result["live_executables"] = counts.live_executable_count()
        result["live_buffers"] = counts.live_buffer_count()
        result["xla_compiles"] = counts.stats["compiles"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--backend", default="xla", choices=["xla", "numpy"])
    parser.add_argument("--trace-cache", type=int, default=None, help="minijax_trace_cache_size (default: the flag's)")
    parser.add_argument("--executable-cache", type=int, default=None, help="minijax_executable_cache_size")
    parser.add_argument("--json", metavar="PATH", help="also write the result as JSON")
    args = parser.parse_args(argv)
    print(f"{args.calls} jit calls on distinct shapes, {args.backend} backend")
    result = run(args.calls, args.backend, args.trace_cache, args.executable_cache)
    print(
        f"peak RSS {result['peak_rss_mib']:.1f} MiB (at start {result['rss_start_mib']:.1f}, at end {result['rss_end_mib']:.1f}); "
        f"{result['seconds']:.0f} s\n"
        f"jit cache {result['trace_cache_size']}/{result['trace_cache_capacity']} entries "
        f"({result['trace_cache_evictions']} evicted); compiled-jaxpr cache {result['compiled_cache_size']}/"
        f"{result['executable_cache_capacity']}"
        + (f"; live executables {result['live_executables']}, live buffers {result['live_buffers']}, "
           f"{result['xla_compiles']} compiles" if "live_executables" in result else "")
    )  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
