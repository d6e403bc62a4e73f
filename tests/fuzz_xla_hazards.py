"""Fuzz cases that hit XLA's crash-prone edges; run in a subprocess by tests/test_fuzz.py.

    python tests/fuzz_xla_hazards.py N [--random]

Each case drives the xla backend where jaxlib itself checks nothing (notes
``xla-via-jaxlib.md``, gotchas 2, 4, 5 and section 5): a compiled program fed
arguments of the wrong dtype, shape or number, deleted buffers and host
values; donated arrays reused or passed twice; host callbacks returning
results of the wrong shape or dtype. minijax must answer each with a result
equal to the NumPy backend's or with its clear error -- never a crash, which
is why this runs in a process of its own. Before each case the child prints
its label, so that a crash shows which case caused it; at the end it prints
one JSON line: the counts and the failures.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax.backend import get_backend
from minijax.config import config_context
from minijax.testing import strategies as mst, tolerances
from minijax.testing.programs import random_jaxprs

XLA = get_backend("xla")
NUMPY = get_backend("numpy")
COUNTS: Counter[str] = Counter()
FAILURES: list[str] = []

# What a bad argument may become: a buffer of the right type, or one of these.
ARGUMENT_KINDS = ("right", "right", "right", "dtype", "shape", "deleted", "host", "none")


def _label(text: str) -> None:
    print(f"case {COUNTS['cases']}: {text}", flush=True)
    COUNTS["cases"] += 1


def _judge(label: str, run: Any, expected: Any, allowed: tuple[type[BaseException], ...], bad: bool) -> None:
    """``run()`` must return ``expected`` (when nothing was bad) or raise one of ``allowed``."""
    try:
        got = run()
    except allowed as e:
        COUNTS[f"error:{type(e).__name__}"] += 1
        if not bad:
            FAILURES.append(f"{label}: raised {type(e).__name__}: {e}")
        return
    except Exception as e:  # anything else is a failure of minijax's checks
        FAILURES.append(f"{label}: {type(e).__name__}: {e}")
        return
    if bad:
        FAILURES.append(f"{label}: returned a result for bad arguments")
        return
    agreement = tolerances.compare_program([np.asarray(g) for g in got], [np.asarray(e) for e in expected])
    if not agreement.ok:
        FAILURES.append(f"{label}: {agreement.detail}")
    else:
        COUNTS["ok"] += 1


@st.composite
def executable_cases(draw: st.DrawFn) -> tuple[str, Any, Any, bool]:
    """A compiled random program called with arguments some of which are wrong."""
    program = draw(random_jaxprs(max_eqns=3))
    args = program.args(draw(mst.seeds()))
    kinds = [draw(st.sampled_from(ARGUMENT_KINDS)) for _ in args]
    arity = draw(st.sampled_from([0, 0, 0, -1, 1]))
    # (Dropping the last argument of a program that takes none leaves a good call.)
    wrong_arity = arity > 0 or (arity < 0 and len(args) > 0)
    return str(program.closed), program, (args, kinds, arity), any(k != "right" for k in kinds) or wrong_arity


def run_executable_case(text: str, program: Any, spec: Any, bad: bool) -> None:
    args, kinds, arity = spec
    _label(f"executable {kinds} arity{arity:+d}\n{text}")
    expected = [NUMPY.get(b) for b in NUMPY.compile(program.closed)([NUMPY.put(a) for a in args])]
    run = XLA.compile(program.closed)
    bufs: list[Any] = []
    for a, kind in zip(args, kinds):
        if kind == "dtype":
            other = np.int32 if a.dtype != np.int32 else np.float32
            bufs.append(XLA.put(a.astype(other)))
        elif kind == "shape":
            bufs.append(XLA.put(np.zeros((*a.shape, 2), a.dtype)))
        elif kind == "deleted":
            buf = XLA.put(a)
            buf.delete()
            bufs.append(buf)
        elif kind == "host":
            bufs.append(a)
        elif kind == "none":
            bufs.append(None)
        else:
            bufs.append(XLA.put(a))
    if arity < 0:
        bufs = bufs[:-1]
    elif arity > 0:
        bufs.append(XLA.put(np.zeros(3, np.float32)))
    _judge(f"executable {kinds} arity{arity:+d} of\n{text}", lambda: [XLA.get(b) for b in run(bufs)], expected,
           (TypeError, RuntimeError), bad)  # fmt: skip


@st.composite
def donation_cases(draw: st.DrawFn) -> tuple[str, Any, Any, bool]:
    use = draw(st.sampled_from(["fresh", "twice_in_one_call", "reuse_after", "read_after"]))
    shape = draw(st.sampled_from([(3,), (2, 2), ()]))
    return use, shape, None, use != "fresh"


def run_donation_case(use: str, shape: Any, _: Any, bad: bool) -> None:
    _label(f"donation {use} {shape}")
    f = jax.jit(lambda a, b: (a * 2 + b,), donate_argnums=0)
    x = jnp.ones(shape)
    y = jnp.full(shape, 3.0)
    expected = [np.full(shape, 5.0, np.float32)]
    if use == "fresh":
        _judge("donation", lambda: f(x, y), expected, (RuntimeError,), bad)
    elif use == "twice_in_one_call":
        _judge("donation", lambda: f(x, x), expected, (RuntimeError,), bad)
    elif use == "reuse_after":
        f(x, y)
        _judge("donation", lambda: f(x, y), expected, (RuntimeError,), bad)
    else:
        f(x, y)
        _judge("donation", lambda: [np.asarray(x)], expected, (RuntimeError,), bad)


@st.composite
def callback_cases(draw: st.DrawFn) -> tuple[str, Any, Any, bool]:
    declared = draw(st.sampled_from([(3,), (2, 3), ()]))
    result_shape = draw(st.sampled_from([declared, declared, (4,), (3, 1), (0,)]))
    result_dtype = draw(st.sampled_from([np.float32, np.float32, np.int32, np.float64, np.uint8]))
    ordered_io = draw(st.booleans())
    # float64 results are canonicalized to float32 with x64 off, as in JAX: not bad.
    bad = result_shape != declared or np.dtype(result_dtype) not in (np.float32, np.float64)
    return f"{declared}->{result_shape}/{np.dtype(result_dtype).name}/io={ordered_io}", (declared, result_shape, result_dtype, ordered_io), None, bad


def run_callback_case(label: str, spec: Any, _: Any, bad: bool) -> None:
    declared, result_shape, result_dtype, ordered_io = spec
    _label(f"callback {label}")
    value = np.arange(int(np.prod(result_shape)), dtype=result_dtype).reshape(result_shape)
    sds = jax.ShapeDtypeStruct(declared, jnp.float32)

    def program(v: Any) -> Any:
        if ordered_io:
            from minijax.experimental import io_callback

            return (io_callback(lambda _: value, sds, v, ordered=True) + 1.0,)
        return (jax.pure_callback(lambda _: value, sds, v) + 1.0,)

    expected = [np.asarray(value, np.float32) + 1 if not bad else None]
    _judge("callback", lambda: jax.jit(program)(jnp.ones(3)), expected, (RuntimeError,), bad)


def _test(strategy: st.SearchStrategy[Any], runner: Any, examples: int, randomize: bool) -> Any:
    @settings(
        max_examples=examples, deadline=None, database=None, derandomize=not randomize,
        suppress_health_check=list(HealthCheck), phases=[Phase.generate],
    )  # fmt: skip
    @given(strategy)
    def each(case: tuple[str, Any, Any, bool]) -> None:
        runner(*case)

    return each


def main(n: int, randomize: bool) -> int:
    """Run about ``n`` cases (six in ten on executables); print the JSON summary."""
    runs = [(executable_cases(), run_executable_case, 0.6), (donation_cases(), run_donation_case, 0.2),
            (callback_cases(), run_callback_case, 0.2)]  # fmt: skip
    with config_context(minijax_backend="xla"):
        for strategy, runner, share in runs:
            _test(strategy, runner, max(1, int(n * share)), randomize)()
    print(json.dumps({"counts": dict(COUNTS), "failures": FAILURES[:20], "n_failures": len(FAILURES)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), "--random" in sys.argv[2:]))
