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


def jit_inline(lib: Lib) -> tuple[Callable[[], Any], int] | None:
    """``jax.jit(f)(x, y)`` written inline: a fresh wrapper of one function every call (issue 20)."""
    if lib.jax is None:
        return None  # NumPy has no jit
    x, y = _inputs(lib)

    def f(a: Any, b: Any) -> Any:
        return a * b + 1.0

    jit = lib.jax.jit
    jit(f)(x, y).block_until_ready()  # trace and compile outside the timing
    return (lambda: jit(f)(x, y).block_until_ready()), 1


def jit_grad_inline(lib: Lib) -> tuple[Callable[[], Any], int] | None:
    """``jax.jit(jax.grad(loss))(p)`` written inline: a fresh ``grad(loss)`` every call,
    which JAX traces and compiles anew each time (so does minijax)."""
    if lib.jax is None:
        return None
    x, _ = _inputs(lib)
    jnp_sum = lib.jnp.sum

    def loss(p: Any) -> Any:
        return jnp_sum(p * p)

    jit, grad = lib.jax.jit, lib.jax.grad
    return (lambda: jit(grad(loss))(x).block_until_ready()), 1


def jit_matmul(lib: Lib) -> tuple[Callable[[], Any], int]:
    import numpy as np

    x = np.random.default_rng(0).standard_normal((1000, 1000), dtype=np.float32)
    if lib.jax is None:
        return (lambda: np.dot(x, x.T)), 1
    xd = lib.jax.device_put(x)
    jitted = lib.jax.jit(lambda a: lib.jnp.dot(a, a.T))
    jitted(xd).block_until_ready()
    return (lambda: jitted(xd).block_until_ready()), 1


# --- autodiff and vmap workloads (issues 3, 4, 5) ---------------------------------

MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 128


def _mlp_data() -> tuple[list[tuple[Any, Any]], Any, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((m, n), dtype=np.float32) * np.float32(m**-0.5), np.zeros(n, np.float32))
        for m, n in zip(MLP_SIZES[:-1], MLP_SIZES[1:])
    ]
    x = rng.standard_normal((MLP_BATCH, MLP_SIZES[0]), dtype=np.float32)
    y = rng.standard_normal((MLP_BATCH, MLP_SIZES[-1]), dtype=np.float32)
    return params, x, y


def mlp_loss(lib: Lib) -> Callable[..., Any]:
    jnp = lib.jnp

    def loss(params: Any, x: Any, y: Any) -> Any:
        for w, b in params[:-1]:
            x = jnp.tanh(jnp.dot(x, w) + b)
        w, b = params[-1]
        return jnp.mean((jnp.dot(x, w) + b - y) ** 2)

    return loss


def _numpy_mlp_grad(params: Any, x: Any, y: Any) -> Any:
    """Hand-written backpropagation: the NumPy baseline for the grad step."""
    import numpy as np

    acts, h = [x], x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
        acts.append(h)
    w, b = params[-1]
    out = h @ w + b
    d = 2.0 * (out - y) / out.size
    grads = [(acts[-1].T @ d, d.sum(0))]
    d = d @ w.T
    for i in range(len(params) - 2, -1, -1):
        d = d * (1.0 - acts[i + 1] ** 2)
        w, _ = params[i]
        grads.insert(0, (acts[i].T @ d, d.sum(0)))
        d = d @ w.T
    return grads


def mlp_grad_step(lib: Lib) -> tuple[Callable[[], Any], int]:
    params, x, y = _mlp_data()
    if lib.jax is None:
        return (lambda: _numpy_mlp_grad(params, x, y)), 1
    params, x, y = lib.jax.device_put((params, x, y))
    step = lib.jax.jit(lib.jax.grad(mlp_loss(lib)))
    lib.jax.block_until_ready(step(params, x, y))
    return (lambda: lib.jax.block_until_ready(step(params, x, y))), 1


def mlp_grad_compile(lib: Lib) -> tuple[Callable[[], Any], int] | None:
    if lib.jax is None:
        return None
    params, x, y = _mlp_data()
    loss = mlp_loss(lib)

    def trace_and_compile() -> Any:
        # A new function each time, so that no trace or executable cache can help.
        return lib.jax.jit(lib.jax.grad(lambda p, a, b: loss(p, a, b))).lower(params, x, y).compile()

    return trace_and_compile, 1


def mlp_grad_trace(lib: Lib) -> tuple[Callable[[], Any], int] | None:
    if lib.jax is None:
        return None
    params, x, y = _mlp_data()
    loss = mlp_loss(lib)
    return (lambda: lib.jax.make_jaxpr(lib.jax.grad(lambda p, a, b: loss(p, a, b)))(params, x, y)), 1


def _matvec_data() -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(1)
    return rng.standard_normal((150, 100), dtype=np.float32), rng.standard_normal((10, 100), dtype=np.float32)


def vmap_matvec(lib: Lib) -> tuple[Callable[[], Any], int]:
    mat, xs = _matvec_data()
    if lib.jax is None:
        return (lambda: np_stack_matvec(mat, xs)), 1
    mat_d, xs_d = lib.jax.device_put((mat, xs))
    f = lib.jax.jit(lib.jax.vmap(lambda v: lib.jnp.dot(mat_d, v)))
    f(xs_d).block_until_ready()
    return (lambda: f(xs_d).block_until_ready()), 1


def np_stack_matvec(mat: Any, xs: Any) -> Any:
    import numpy as np

    return np.stack([mat @ v for v in xs])


def manual_matvec(lib: Lib) -> tuple[Callable[[], Any], int]:
    mat, xs = _matvec_data()
    if lib.jax is None:
        return (lambda: xs @ mat.T), 1
    mat_d, xs_d = lib.jax.device_put((mat, xs))
    f = lib.jax.jit(lambda b: lib.jnp.dot(b, mat_d.T))
    f(xs_d).block_until_ready()
    return (lambda: f(xs_d).block_until_ready()), 1


# --- control flow: scan and fori_loop (issue 6) ---------------------------------------

RNN_STEPS, RNN_HIDDEN, RNN_INPUT = 1000, 32, 16


def _rnn_data() -> tuple[Any, Any, Any, Any]:
    import numpy as np

    rng = np.random.default_rng(2)
    w = rng.standard_normal((RNN_HIDDEN, RNN_HIDDEN), dtype=np.float32) * np.float32(RNN_HIDDEN**-0.5)
    u = rng.standard_normal((RNN_HIDDEN, RNN_INPUT), dtype=np.float32) * np.float32(RNN_INPUT**-0.5)
    h0 = np.zeros(RNN_HIDDEN, np.float32)
    xs = rng.standard_normal((RNN_STEPS, RNN_INPUT), dtype=np.float32)
    return w, u, h0, xs


def rnn_scan(lib: Lib) -> Callable[..., Any]:
    """A small RNN over a sequence: h = tanh(W h + U x), all hidden states returned."""
    jnp, lax = lib.jnp, lib.jax.lax

    def run(w: Any, u: Any, h: Any, xs: Any) -> Any:
        def cell(h: Any, x: Any) -> Any:
            h = jnp.tanh(w @ h + u @ x)
            return h, h

        return lax.scan(cell, h, xs)

    return run


def _numpy_rnn(w: Any, u: Any, h: Any, xs: Any) -> Any:
    import numpy as np

    hs = []
    for x in xs:
        h = np.tanh(w @ h + u @ x)
        hs.append(h)
    return h, np.stack(hs)


def scan_rnn_run(lib: Lib) -> tuple[Callable[[], Any], int]:
    w, u, h0, xs = _rnn_data()
    if lib.jax is None:
        return (lambda: _numpy_rnn(w, u, h0, xs)), 1
    args = lib.jax.device_put((w, u, h0, xs))
    run = lib.jax.jit(rnn_scan(lib))
    lib.jax.block_until_ready(run(*args))
    return (lambda: lib.jax.block_until_ready(run(*args))), 1


def _numpy_rnn_grad(w: Any, u: Any, h0: Any, xs: Any) -> Any:
    """Backpropagation through time by hand, for the loss sum(hs ** 2) / 2."""
    import numpy as np

    _, hs = _numpy_rnn(w, u, h0, xs)
    prev = np.concatenate([h0[None], hs[:-1]])
    dw, du, dh = np.zeros_like(w), np.zeros_like(u), np.zeros_like(h0)
    for t in range(len(xs) - 1, -1, -1):
        dz = (dh + hs[t]) * (1.0 - hs[t] ** 2)
        dw += np.outer(dz, prev[t])
        du += np.outer(dz, xs[t])
        dh = w.T @ dz
    return dw, du


def _rnn_loss(lib: Lib) -> Callable[..., Any]:
    run = rnn_scan(lib)
    return lambda w, u, h, xs: 0.5 * (run(w, u, h, xs)[1] ** 2).sum()


def scan_rnn_grad_run(lib: Lib) -> tuple[Callable[[], Any], int]:
    w, u, h0, xs = _rnn_data()
    if lib.jax is None:
        return (lambda: _numpy_rnn_grad(w, u, h0, xs)), 1
    args = lib.jax.device_put((w, u, h0, xs))
    step = lib.jax.jit(lib.jax.grad(_rnn_loss(lib), argnums=(0, 1)))
    lib.jax.block_until_ready(step(*args))
    return (lambda: lib.jax.block_until_ready(step(*args))), 1


def scan_rnn_compile(lib: Lib) -> tuple[Callable[[], Any], int] | None:
    if lib.jax is None:
        return None
    w, u, h0, xs = _rnn_data()
    run = rnn_scan(lib)

    def trace_and_compile() -> Any:
        # A new function each time, so that no trace or executable cache can help.
        return lib.jax.jit(lambda *a: run(*a)).lower(w, u, h0, xs).compile()

    return trace_and_compile, 1


def scan_rnn_grad_compile(lib: Lib) -> tuple[Callable[[], Any], int] | None:
    if lib.jax is None:
        return None
    w, u, h0, xs = _rnn_data()
    loss = _rnn_loss(lib)

    def trace_and_compile() -> Any:
        # A new function each time, so that no trace or executable cache can help.
        grad = lib.jax.grad(lambda *a: loss(*a), argnums=(0, 1))
        return lib.jax.jit(grad).lower(w, u, h0, xs).compile()

    return trace_and_compile, 1


def fori_1000_run(lib: Lib) -> tuple[Callable[[], Any], int]:
    import numpy as np

    x = np.linspace(0.1, 0.8, SMALL, dtype=np.float32)
    if lib.jax is None:

        def loop() -> Any:
            c = x
            for _ in range(1000):
                c = c * np.float32(0.999) + np.sin(c)
            return c

        return loop, 1
    jnp, lax = lib.jnp, lib.jax.lax
    xd = lib.jax.device_put(x)
    run = lib.jax.jit(lambda c: lax.fori_loop(0, 1000, lambda i, c: c * 0.999 + jnp.sin(c), c))
    run(xd).block_until_ready()
    return (lambda: run(xd).block_until_ready()), 1


def fori_1000_compile(lib: Lib) -> tuple[Callable[[], Any], int] | None:
    if lib.jax is None:
        return None
    import numpy as np

    jnp, lax = lib.jnp, lib.jax.lax
    x = np.linspace(0.1, 0.8, SMALL, dtype=np.float32)

    def trace_and_compile() -> Any:
        # A new function each time, so that no trace or executable cache can help.
        body = lambda i, c: c * 0.999 + jnp.sin(c)  # noqa: E731
        return lib.jax.jit(lambda c: lax.fori_loop(0, 1000, body, c)).lower(x).compile()

    return trace_and_compile, 1


# name -> (setup, description, unit). Units: "s" means time per call, "eqn"
# means the call processes that many equations (reported per second).
WORKLOADS: dict[str, tuple[Setup, str, str]] = {
    "eager_add": (eager_add, "eager x + y, f32[8], blocked", "s"),
    "eager_sin": (eager_sin, "eager jnp.sin(x), f32[8], blocked", "s"),
    "trace_lax": (trace_lax, "make_jaxpr: 1000 × lax.mul(lax.sin(x), x)", "eqn"),
    "trace_jnp": (trace_jnp, "make_jaxpr: 1000 × jnp.sin(x) * x", "eqn"),
    "jit_dispatch": (jit_dispatch, "cached jit(a * b + 1.0), f32[8], blocked", "s"),
    "jit_inline": (jit_inline, "jax.jit(f)(x, y) inline (fresh wrapper each call), a * b + 1.0, f32[8]", "s"),
    "jit_grad_inline": (jit_grad_inline, "jax.jit(jax.grad(loss))(p) inline: traced and compiled each call", "s"),
    "jit_matmul": (jit_matmul, "cached jit(jnp.dot(x, x.T)), f32[1000,1000], blocked", "s"),
    "mlp_grad_step": (mlp_grad_step, "cached jit(grad(MLP loss)) 784-512-512-10, batch 128 (NumPy: hand-written backprop)", "s"),
    "mlp_grad_compile": (mlp_grad_compile, "trace + compile of jit(grad(MLP loss))", "s"),
    "mlp_grad_trace": (mlp_grad_trace, "make_jaxpr(grad(MLP loss))", "s"),
    "vmap_matvec": (vmap_matvec, "jit(vmap(lambda v: mat @ v)), 10 × f32[100] (NumPy: a loop)", "s"),
    "manual_matvec": (manual_matvec, "jit(lambda b: b @ mat.T): the hand-batched version of vmap_matvec", "s"),
    "scan_rnn_run": (scan_rnn_run, "cached jit(lax.scan(RNN cell)): 1000 steps of h = tanh(W h + U x), 32 hidden (NumPy: a loop)", "s"),
    "scan_rnn_grad_run": (scan_rnn_grad_run, "cached jit(grad(RNN loss)) through the 1000-step scan (NumPy: hand-written BPTT)", "s"),
    "scan_rnn_compile": (scan_rnn_compile, "trace + compile of jit(lax.scan(RNN cell)), 1000 steps", "s"),
    "scan_rnn_grad_compile": (scan_rnn_grad_compile, "trace + compile of jit(grad(RNN loss)) through the 1000-step scan", "s"),
    "fori_1000_compile": (fori_1000_compile, "trace + compile of jit(fori_loop(0, 1000, ...))", "s"),
    "fori_1000_run": (fori_1000_run, "cached jit(fori_loop(0, 1000, c * 0.999 + sin(c))), f32[8] (NumPy: a loop)", "s"),
}


def _extend_from_area_modules() -> None:
    """Add the workloads of ``workloads_<area>.py`` files beside this one.

    Each such module defines its own ``WORKLOADS`` dict in the same form. It
    must not import this module (this file also runs as ``__main__``): its
    setups take the ``Lib`` as ``Any`` and use ``lib.jax`` / ``lib.jnp``.
    """
    import importlib
    from pathlib import Path

    here = Path(__file__).resolve().parent
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    for path in sorted(here.glob("workloads_*.py")):
        module = importlib.import_module(path.stem)
        WORKLOADS.update(module.WORKLOADS)


_extend_from_area_modules()


def _count_eqns(jaxpr: Any) -> int:
    """Equations, counting those of nested jaxprs too."""
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", None)
            if inner is not None and hasattr(inner, "eqns"):
                total += _count_eqns(inner)
    return total


def jaxpr_sizes(lib_name: str) -> dict[str, int]:
    """Equation counts of the jaxprs the issues set targets on."""
    lib = load(lib_name)
    jax = lib.jax
    params, x, y = _mlp_data()
    mat, xs = _matvec_data()
    return {
        "grad(MLP loss)": _count_eqns(jax.make_jaxpr(jax.grad(mlp_loss(lib)))(params, x, y).jaxpr),
        "apply_matrix": _count_eqns(jax.make_jaxpr(lambda v: lib.jnp.dot(mat, v))(xs[0]).jaxpr),
        "vmap(apply_matrix)": _count_eqns(jax.make_jaxpr(jax.vmap(lambda v: lib.jnp.dot(mat, v)))(xs).jaxpr),
    }


STATS: dict[str, Callable[[Any], float]] = {"median": statistics.median, "min": min}


def time_call(fn: Callable[[], Any], repeat: int, min_time: float, stat: str = "median") -> float:
    """Seconds per call over ``repeat`` runs of an autoranged loop: their median, or
    (``stat="min"``) the fastest run, the one least disturbed by other processes."""
    timer = timeit.Timer(fn)
    number = 1
    # Like Timer.autorange, but with a configurable minimum loop time.
    while True:
        if timer.timeit(number) >= min_time:
            break
        number *= 2 if number < 8 else 4
    return STATS[stat]([t / number for t in timer.repeat(repeat, number)])


def measure(
    lib_name: str, names: list[str], repeat: int = 7, min_time: float = 0.05, stat: str = "median"
) -> dict[str, dict[str, float]]:
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
        results[name] = {"seconds": time_call(fn, repeat, min_time, stat), "units": float(units)}
    return results


class Timers:
    """Workloads set up once (warmed), then timed on request: for interleaving two
    libraries' measurements in rounds, so that both see the same machine."""

    def __init__(self, lib_name: str, names: list[str]) -> None:
        lib = load(lib_name)
        self.built: dict[str, tuple[Callable[[], Any], int]] = {}
        for name in names:
            built = WORKLOADS[name][0](lib)
            if built is not None:
                built[0]()  # warm up
                self.built[name] = built

    def time(self, name: str, repeat: int, min_time: float, stat: str = "median") -> dict[str, float] | None:
        if name not in self.built:
            return None
        fn, units = self.built[name]
        return {"seconds": time_call(fn, repeat, min_time, stat), "units": float(units)}


def serve(lib_name: str, names: list[str]) -> None:
    """Answer ``NAME REPEAT MIN_TIME STAT`` lines on stdin with one JSON line each (``null``
    for a workload this library does not run); "ready" once set up."""
    timers = Timers(lib_name, names)
    print("ready", flush=True)
    for line in sys.stdin:
        name, repeat, min_time, stat = line.split()
        print(json.dumps(timers.time(name, int(repeat), float(min_time), stat)), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time the benchmark workloads in one library; print JSON.")
    parser.add_argument("--lib", required=True, choices=["minijax", "jax", "numpy"])
    parser.add_argument("--only", nargs="*", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.05)
    parser.add_argument("--stat", choices=list(STATS), default="median")
    parser.add_argument("--sizes", action="store_true", help="print jaxpr equation counts instead of timings")
    parser.add_argument("--serve", action="store_true", help="set up, then time workloads named on stdin (run.py --rounds)")
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.lib, args.only)
        return 0
    if args.sizes:
        print(json.dumps(jaxpr_sizes(args.lib)))
        return 0
    print(json.dumps(measure(args.lib, args.only, args.repeat, args.min_time, args.stat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
