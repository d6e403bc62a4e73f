"""``minijax conformance``: a backend against the reference, primitive by primitive, law by law.

Four sections (``docs/conformance.md`` explains how to read the results):

* **primitives**: every primitive that has a sampler
  (``minijax.testing.samplers``), in every dtype it takes, ``examples``
  hypothesis draws each, run eagerly on the backend and on the reference
  and compared by the tolerance policy (``minijax.testing.tolerances``);
* **laws**: jvp and vjp against finite differences, the transposition law,
  and vmap against a loop, with the transformed programs compiled on the
  backend (``minijax.testing.laws``);
* **corpus**: every case of ``spec/cases/`` compiled on both backends;
* **programs**: random jaxprs and random nestings of jit/jvp/grad/vmap/cond
  (``minijax.testing.programs``).

A primitive the backend does not support (``Backend.supports``) is reported
unsupported, not failed; so is a check whose programs need one. Each
failing row keeps its smallest failing check (hypothesis shrinks it) and
writes it as a reproducer directory that ``minijax replay DIR`` re-runs.

The same suite runs under pytest, one test per row::

    pytest --pyargs minijax.testing.conformance --minijax-backend=NAME

(``-p ...`` is not needed once the plugin is registered as a ``pytest11``
entry point.)
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np
from hypothesis import strategies as st

import minijax
from minijax.backend import Backend
from minijax.core import primitive_registry
from minijax.interpreters import ad
from minijax.testing.checks import (
    Check,
    backend_named,
    clear_compiled,
    import_modules,
    load_reproducer,
    write_reproducer,
)
from minijax.testing.corpus import load_corpus
from minijax.testing.defaults import (
    DEFAULT_EXAMPLES,
    DEFAULT_MAX_BYTES,
    DEFAULT_PROGRAM_EXAMPLES,
    DEFAULT_SEED,
    SECTIONS,
)
from minijax.testing.programs import nested_programs, random_jaxprs, random_program_check
from minijax.testing.report import Progress, Report
from minijax.testing.samplers import SAMPLERS, sampled_primitive_names
from minijax.testing.strategies import seeds
from minijax.testing.suite import Unit, UnitResult, all_dtypes, law_dtypes, law_unit, primitive_unit, run_unit

if TYPE_CHECKING:
    import pytest

LAWS = ("jvp", "vjp", "transpose", "vmap")


@dataclasses.dataclass
class Options:
    """What to run: the command line's options."""

    backend: str
    reference: str = "numpy"
    only: list[str] | None = None  # primitive names
    slice: tuple[int, int] | None = None  # (k, n): the k-th (from 1) of n slices of the primitives
    examples: int = DEFAULT_EXAMPLES  # hypothesis examples per primitive and dtype
    law_examples: int | None = None  # per law, primitive and dtype (default: half of examples, at least 1)
    program_examples: int = DEFAULT_PROGRAM_EXAMPLES
    seed: int | None = DEFAULT_SEED
    sections: tuple[str, ...] = SECTIONS
    reproducers: pathlib.Path = pathlib.Path("minijax-reproducers")
    report: pathlib.Path | None = None
    cases: pathlib.Path | None = None  # the corpus directory (default: spec/cases)
    max_bytes: int = DEFAULT_MAX_BYTES  # refuse a case needing more (minijax.testing.loading)
    progress: bool = True
    jobs: int = 1  # worker processes running rows (1: all in this process)
    imports: tuple[str, ...] = ()  # modules each worker imports first (ones that register a backend)
    jit: bool = False  # the primitives section runs the backend's side compiled (check kind "jit")

    def __post_init__(self) -> None:
        unknown = sorted(set(self.sections) - set(SECTIONS))
        if unknown:
            raise ValueError(f"conformance: unknown sections {unknown}; the sections are {list(SECTIONS)}")
        if self.examples < 1 or self.program_examples < 0:
            raise ValueError("conformance: --examples must be at least 1")
        if self.jobs < 1:
            raise ValueError(f"conformance --jobs: {self.jobs} workers; it needs at least 1")
        if self.slice is not None:
            k, n = self.slice
            if not 1 <= k <= n:
                raise ValueError(f"conformance --slice: {k}/{n} names no slice; K/N needs 1 <= K <= N")
        if self.only:
            missing = [n for n in self.only if n not in primitive_registry]
            if missing:
                raise ValueError(f"conformance --only: no primitive called {', '.join(missing)}")
            unsampled = [n for n in self.only if n not in SAMPLERS]
            if unsampled:
                raise ValueError(f"conformance --only: no sampler for {', '.join(unsampled)}, so the suite cannot "
                                 "draw cases (minijax.testing.samplers.UNSAMPLED says why)")  # fmt: skip

    @property
    def laws_examples(self) -> int:
        return self.law_examples if self.law_examples is not None else max(1, self.examples // 2)

    def settings(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "law_examples": self.laws_examples,
            "seed": self.seed,
            "only": list(self.only) if self.only else None,
            "slice": f"{self.slice[0]}/{self.slice[1]}" if self.slice else None,
            "sections": list(self.sections),
            "jit": self.jit,
        }


# ---------------------------------------------------------------------------
# The plan: one unit per row


def parse_slice(text: str) -> tuple[int, int]:
    """``--slice K/N``: the K-th (from 1) of N slices."""
    k, sep, n = text.partition("/")
    try:
        value = (int(k), int(n)) if sep else None
    except ValueError:
        value = None
    if value is None or not 1 <= value[0] <= value[1]:
        raise ValueError(f"conformance --slice: {text!r} is not K/N with 1 <= K <= N, e.g. 3/8")
    return value


def slice_of(names: list[str], k: int, n: int) -> list[str]:
    """The k-th of n slices of ``names``: every n-th name from the k-th, so that each slice takes
    some of every family (the families' names cluster and their costs differ)."""
    return names[k - 1 :: n]


def _primitives(options: Options) -> list[str]:
    names = sampled_primitive_names()
    names = [n for n in names if n in options.only] if options.only else names
    return slice_of(names, *options.slice) if options.slice else names


def _law_applies(kind: str, name: str) -> bool:
    sampler = SAMPLERS[name]
    if kind == "vmap":
        return True
    if not sampler.accepts(np.float32) or name == "iota":
        return False
    if kind == "transpose":
        return sampler.linear
    return sampler.differentiable and sampler.prim not in ad.non_differentiable


def plan(options: Options, backend: Backend) -> list[Unit]:
    """The rows the run will have, in order."""
    units: list[Unit] = []
    names = _primitives(options)
    supported = {n: backend.supports(SAMPLERS[n].prim) for n in names}
    if "primitives" in options.sections:
        for name in names:
            sampler = SAMPLERS[name]
            if not supported[name]:
                units.append(Unit("primitives", "primitive", name, "*", 0, False, note=f"{backend.name!r} does not support it"))
                continue
            kind = "jit" if options.jit else "primitive"
            units.extend(primitive_unit(sampler, dt, options.examples, True, kind) for dt in all_dtypes(sampler))
    if "laws" in options.sections:
        for kind in LAWS:
            for name in names:
                if supported[name] and _law_applies(kind, name):
                    sampler = SAMPLERS[name]
                    units.extend(law_unit(kind, sampler, dt, options.laws_examples, True) for dt in law_dtypes(kind, sampler))
    if "corpus" in options.sections:
        for case in load_corpus(options.cases, names if options.only or options.slice else None, options.max_bytes):
            units.append(Unit("corpus", "program", case.name, "-", 1, case.x64, fixed=[case.check()], note=""))
    if "programs" in options.sections and options.program_examples and not (options.only or options.slice):
        units.extend(program_units(options.program_examples))
    return units


def program_units(examples: int) -> list[Unit]:
    """Random jaxprs in float32 and int32, and random nestings of transformations."""
    units = []
    for dtype in (np.dtype(np.float32), np.dtype(np.int32)):

        def draw(data: st.DataObject, dt: np.dtype[Any] = dtype) -> list[Check]:
            program = data.draw(random_jaxprs(dtype=dt), label="program")
            return [random_program_check(program, data.draw(seeds(), label="values"), dt.name, False)]

        units.append(Unit("programs", "program", f"random jaxprs ({dtype.name})", dtype.name, examples, False, draw))

    def draw_nested(data: st.DataObject) -> list[Check]:
        return [data.draw(nested_programs(), label="nested program").check()]

    units.append(Unit("programs", "nested", "nested transformations", "float64", max(1, examples // 2), True, draw_nested))
    return units


# ---------------------------------------------------------------------------
# Running


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


def reproducer_directory(root: pathlib.Path, result: UnitResult) -> pathlib.Path:
    u = result.unit
    return root / _slug(f"{u.kind}-{u.subject}-{u.dtype}")


def run(options: Options, out: TextIO | None = None, err: TextIO | None = None) -> Report:
    """Run the suite; print the table to ``out`` and the progress to ``err``; return the report."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    backend = backend_named(options.backend)
    reference = backend_named(options.reference)
    units = plan(options, backend)
    report = Report(backend.name, reference.name, options.settings())
    progress = Progress(len(units), err, enabled=options.progress)
    start = time.perf_counter()
    if options.jobs > 1 and len(units) > 1:
        report.results.extend(_run_in_workers(options, units, progress))
    else:
        for unit in units:
            result = run_unit(unit, backend, reference, options.seed)
            report.results.append(result)
            progress.advance(result)
    clear_compiled()
    report.seconds = time.perf_counter() - start
    for i, result in report.failures():
        if result.failure is not None:
            check, outcome = result.failure
            directory = reproducer_directory(options.reproducers, result)
            write_reproducer(check, outcome, directory, backend.name, reference.name)
            report.reproducers[i] = str(directory)
    print(report.table(), file=out)
    if options.report is not None:
        options.report.parent.mkdir(parents=True, exist_ok=True)
        options.report.write_text(json.dumps(report.to_json(minijax.__version__), indent=2) + "\n")
        print(f"report written to {options.report}", file=out)
    return report


# ---------------------------------------------------------------------------
# --jobs N: rows in worker processes
#
# Each worker plans the same rows from the same options (the plan is deterministic) and runs
# the rows it is handed by index; hypothesis draws a row's cases from the run's seed alone, so
# a row finds the same thing in any worker as in one process. A failing row's worker writes its
# reproducer, and this process reads the check back from it (a check's program holds primitives,
# which do not travel between processes; the reproducer is the check's portable form).
# Workers are spawned, not forked: a forked XLA client (its threads) is not safe to use.

_WORKER: dict[str, Any] = {}


class WorkerDied(RuntimeError):
    """A ``--jobs`` worker process died: the backend crashed it (a single process would have died too)."""


def _worker_start(options: Options) -> None:
    # As the command does: hypothesis's caches away from the directory the run started in.
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(pathlib.Path(tempfile.gettempdir()) / "minijax-hypothesis")
    import_modules(options.imports)
    backend = backend_named(options.backend)
    _WORKER.update(options=options, backend=backend, reference=backend_named(options.reference),
                   units=plan(options, backend))  # fmt: skip


def _worker_run(index: int) -> tuple[int, dict[str, Any]]:
    options: Options = _WORKER["options"]
    unit: Unit = _WORKER["units"][index]
    result = run_unit(unit, _WORKER["backend"], _WORKER["reference"], options.seed)
    directory = None
    outcome = None
    if result.failed and result.failure is not None:
        check, outcome = result.failure
        directory = str(reproducer_directory(options.reproducers, result))
        write_reproducer(check, outcome, pathlib.Path(directory), _WORKER["backend"].name, _WORKER["reference"].name)
    fields = {f: getattr(result, f) for f in ("passed", "failed", "unsupported", "executions", "worst_ulps", "note", "seconds")}
    return index, {**fields, "outcome": outcome, "reproducer": directory}


def _result_from_worker(unit: Unit, fields: dict[str, Any], max_bytes: int) -> UnitResult:
    outcome, directory = fields.pop("outcome"), fields.pop("reproducer")
    result = UnitResult(unit, **fields)
    if outcome is not None and directory is not None:
        try:
            check, _ = load_reproducer(pathlib.Path(directory), max_bytes)
            result.failure = (check, outcome)
        except (ValueError, OSError) as e:  # too large to read back: the row keeps the verdict as its note
            result.note = f"{outcome.message} (reproducer {directory}: {e})"
    return result


def _run_in_workers(options: Options, units: list[Unit], progress: Progress) -> list[UnitResult]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    results: list[UnitResult | None] = [None] * len(units)
    context = multiprocessing.get_context("spawn")
    workers = min(options.jobs, len(units))
    with ProcessPoolExecutor(workers, context, initializer=_worker_start, initargs=(options,)) as pool:
        pending = {pool.submit(_worker_run, i): i for i in range(len(units))}
        try:
            for future in as_completed(pending):
                index, fields = future.result()
                result = _result_from_worker(units[index], fields, options.max_bytes)
                results[index] = result
                progress.advance(result)
        except BrokenProcessPool:
            # A worker died (the backend crashed the process): one process would have died too,
            # but here the rows it was running are known, so say which.
            unfinished = [units[i] for i in sorted(pending.values()) if results[i] is None]
            names = ", ".join(f"{u.kind} {u.subject} {u.dtype}" for u in unfinished[: workers + 1])
            raise WorkerDied(f"--jobs: a worker process died (the backend crashed it?) with {len(unfinished)} rows "
                             f"unfinished, the first: {names}; run those without --jobs (--only) to see the crash"
                             ) from None  # fmt: skip
    return [r for r in results if r is not None]


# ---------------------------------------------------------------------------
# The pytest entry point: one test per row of the plan.
#
#   pytest --pyargs minijax.testing.conformance --minijax-backend=NAME


def _config_value(config: pytest.Config, name: str, env: str, default: Any = None) -> Any:
    value = config.getoption(name, default=None)
    if value is None:
        value = os.environ.get(env, default)
    return value


def pytest_options(config: pytest.Config) -> Options:
    """The conformance options of a pytest run (``minijax.testing.pytest_plugin``'s flags, or
    the environment variables MINIJAX_CONFORMANCE_BACKEND / _EXAMPLES / _ONLY / _SLICE)."""
    backend = _config_value(config, "minijax_backend", "MINIJAX_CONFORMANCE_BACKEND")
    if backend is None:
        raise ValueError(
            "minijax.testing.conformance: name the backend to test, e.g. "
            "pytest --pyargs minijax.testing.conformance --minijax-backend=xla "
            "(or set MINIJAX_CONFORMANCE_BACKEND)"
        )
    import_modules(str(_config_value(config, "minijax_import", "MINIJAX_CONFORMANCE_IMPORT", "")).split(","))
    only = _config_value(config, "minijax_only", "MINIJAX_CONFORMANCE_ONLY")
    examples = int(_config_value(config, "minijax_examples", "MINIJAX_CONFORMANCE_EXAMPLES", DEFAULT_EXAMPLES))
    part = _config_value(config, "minijax_slice", "MINIJAX_CONFORMANCE_SLICE")
    reproducers = _config_value(config, "minijax_reproducers", "MINIJAX_CONFORMANCE_REPRODUCERS", "minijax-reproducers")
    return Options(str(backend), examples=examples, only=only.split(",") if only else None,
                   slice=parse_slice(part) if part else None, reproducers=pathlib.Path(reproducers),
                   progress=False)  # fmt: skip


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_unit" not in metafunc.fixturenames:
        return
    options = pytest_options(metafunc.config)
    units = plan(options, backend_named(options.backend))
    ids = [_slug(f"{u.kind}-{u.subject}-{u.dtype}") for u in units]
    metafunc.parametrize("conformance_unit", units, ids=ids)


def test_conformance(conformance_unit: Unit, request: pytest.FixtureRequest) -> None:
    """One row of the conformance table: fails with the verdict and a reproducer's path."""
    import pytest

    options = pytest_options(request.config)
    backend, reference = backend_named(options.backend), backend_named(options.reference)
    result = run_unit(conformance_unit, backend, reference, options.seed)
    if result.status == "unsupported":
        pytest.skip(result.note or "unsupported by the backend")
    if result.failed and result.failure is not None:
        check, outcome = result.failure
        directory = reproducer_directory(options.reproducers, result)
        write_reproducer(check, outcome, directory, backend.name, reference.name)
        pytest.fail(f"{outcome.message}\nreproducer: {directory} (minijax replay {directory})", pytrace=False)


__all__ = ["DEFAULT_EXAMPLES", "LAWS", "SECTIONS", "Options", "WorkerDied", "import_modules", "parse_slice", "plan", "program_units",
           "reproducer_directory", "run", "slice_of"]  # fmt: skip
