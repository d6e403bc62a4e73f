"""The benchmark workloads, written once for minijax, real JAX and NumPy.

This file imports neither minijax nor jax at the top: ``measure(lib)`` imports
the library it is asked for, so the same file can run in the minijax process
and, for JAX, in a subprocess of a Python that has jax
(``python workloads.py --lib jax`` prints the timings as JSON).

Each workload builds, outside the timed region, a zero-argument callable that
does one unit of work, and says how much work one call is (1 operation, or
the number of equations traced). Results are blocked on with
``block_until_ready`` so that an asynchronous backend is timed honestly.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

CHAIN_LENGTH = 1000  # sin + mul per step: 2000 equations
SMALL = 8  # f32[8]: small enough that per-operation overhead is what is timed


@dataclass(frozen=True)
class Lib:
    """The library under test, under JAX's names (``jax`` is None for NumPy)."""

    name: str
    jax: Any
    jnp: Any


def load(name: str) -> Lib:
    import importlib

    if name == "numpy":
        return Lib("numpy", None, importlib.import_module("numpy"))
    if name not in ("minijax", "jax"):
        raise ValueError(f"unknown library {name!r}: expected minijax, jax or numpy")
    jax: ModuleType = importlib.import_module(name)
    return Lib(name, jax, importlib.import_module(f"{name}.numpy"))


Setup = Callable[[Lib], "tuple[Callable[[], Any], int] | None"]


def _inputs(lib: Lib) -> tuple[Any, Any]:
    import numpy as np

    x = np.linspace(0.1, 0.8, SMALL, dtype=np.float32)
    y = np.linspace(1.0, 2.0, SMALL, dtype=np.float32)
    if lib.jax is None:
        return x, y
    return lib.jax.device_put(x), lib.jax.device_put(y)


def eager_add(lib: Lib) -> tuple[Callable[[], Any], int]:
    x, y = _inputs(lib)
    if lib.jax is None:
        return (lambda: x + y), 1
    return (lambda: (x + y).block_until_ready()), 1


def eager_sin(lib: Lib) -> tuple[Callable[[], Any], int]:
    x, _ = _inputs(lib)
    sin = lib.jnp.sin
    if lib.jax is None:
        return (lambda: sin(x)), 1
    return (lambda: sin(x).block_until_ready()), 1


def _chain(lib: Lib, use_lax: bool) -> Callable[[Any], Any]:
    # A new function object per call: JAX caches traces keyed on the function,
    # and the point here is to time tracing itself.
    if use_lax:
        sin, mul = lib.jax.lax.sin, lib.jax.lax.mul

        def chain(x: Any) -> Any:
            for _ in range(CHAIN_LENGTH):
                x = mul(sin(x), x)
            return x

    else:
        jsin = lib.jnp.sin

        def chain(x: Any) -> Any:
            for _ in range(CHAIN_LENGTH):
                x = jsin(x) * x
            return x

    return chain


def _tracing(lib: Lib, use_lax: bool) -> tuple[Callable[[], Any], int] | None:
    if lib.jax is None:
        return None  # NumPy has no tracing
    x, _ = _inputs(lib)
    make_jaxpr = lib.jax.make_jaxpr
    n_eqns = len(make_jaxpr(_chain(lib, use_lax))(x).eqns)
    if n_eqns != 2 * CHAIN_LENGTH:
        raise RuntimeError(f"{lib.name}: the chain traced to {n_eqns} equations, expected {2 * CHAIN_LENGTH}")
    return (lambda: make_jaxpr(_chain(lib, use_lax))(x)), n_eqns


def trace_lax(lib: Lib) -> tuple[Callable[[], Any], int] | None:
    return _tracing(lib, use_lax=True)


def trace_jnp(lib: Lib) -> tuple[Callable[[], Any], int] | None:
    return _tracing(lib, use_lax=False)


def jit_dispatch(lib: Lib) -> tuple[Callable[[], Any], int]:
    x, y = _inputs(lib)

    def f(a: Any, b: Any) -> Any:
        return a * b + 1.0

    if lib.jax is None:
        return (lambda: f(x, y)), 1  # NumPy: the same computation, no compiler
    jitted = lib.jax.jit(f)
    jitted(x, y).block_until_ready()  # trace and compile outside the timing
    return (lambda: jitted(x, y).block_until_ready()), 1


def jit_matmul(lib: Lib) -> tuple[Callable[[], Any], int]:
    import numpy as np

    x = np.random.default_rng(0).standard_normal((1000, 1000), dtype=np.float32)
    if lib.jax is None:
        return (lambda: np.dot(x, x.T)), 1
    xd = lib.jax.device_put(x)
    jitted = lib.jax.jit(lambda a: lib.jnp.dot(a, a.T))
    jitted(xd).block_until_ready()
    return (lambda: jitted(xd).block_until_ready()), 1


# name -> (setup, description, unit). Units: "s" means time per call, "eqn"
# means the call processes that many equations (reported per second).
WORKLOADS: dict[str, tuple[Setup, str, str]] = {
    "eager_add": (eager_add, "eager x + y, f32[8], blocked", "s"),
    "eager_sin": (eager_sin, "eager jnp.sin(x), f32[8], blocked", "s"),
    "trace_lax": (trace_lax, "make_jaxpr: 1000 × lax.mul(lax.sin(x), x)", "eqn"),
    "trace_jnp": (trace_jnp, "make_jaxpr: 1000 × jnp.sin(x) * x", "eqn"),
    "jit_dispatch": (jit_dispatch, "cached jit(a * b + 1.0), f32[8], blocked", "s"),
    "jit_matmul": (jit_matmul, "cached jit(jnp.dot(x, x.T)), f32[1000,1000], blocked", "s"),
}


def time_call(fn: Callable[[], Any], repeat: int, min_time: float) -> float:
    """Median seconds per call over ``repeat`` runs of an autoranged loop."""
    timer = timeit.Timer(fn)
    number = 1
    # Like Timer.autorange, but with a configurable minimum loop time.
    while True:
        if timer.timeit(number) >= min_time:
            break
        number *= 2 if number < 8 else 4
    return statistics.median(t / number for t in timer.repeat(repeat, number))


def measure(lib_name: str, names: list[str], repeat: int = 7, min_time: float = 0.05) -> dict[str, dict[str, float]]:
    """Time each workload: {name: {"seconds": per call, "units": work per call}}."""
    lib = load(lib_name)
    results: dict[str, dict[str, float]] = {}
    for name in names:
        setup = WORKLOADS[name][0]
        built = setup(lib)
        if built is None:
            continue
        fn, units = built
        fn()  # warm up: first-call costs (imports, compilation) are not the subject
        results[name] = {"seconds": time_call(fn, repeat, min_time), "units": float(units)}
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time the benchmark workloads in one library; print JSON.")
    parser.add_argument("--lib", required=True, choices=["minijax", "jax", "numpy"])
    parser.add_argument("--only", nargs="*", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.05)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.lib, args.only, args.repeat, args.min_time)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
