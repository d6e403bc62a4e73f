"""Proof that conformance catches bugs: deliberately wrong backends fail it, by name, with a reproducer.

Each wrong backend is the NumPy reference with one fault: ``sin`` three ulps
off in float32 only (the policy allows two, so two pass and three fail),
``sqrt`` one ulp off in float32 only (an exact primitive), ``reduce_max``
ignoring NaN, ``scatter-add`` dropping duplicate indices (NumPy's
``flat[i] += u``), and ``cos`` 10% off in compiled programs only,
which the primitive section cannot see but the jvp law of ``sin`` can. The
runs go through the ``minijax conformance`` command; each failure must name
the primitive and dtype, write a reproducer, and ``minijax replay`` must
print the same verdict (and the reference must pass it).
"""

from __future__ import annotations

import functools
import json
import pathlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from minijax_numpy import NumpyBackend
from minijax_numpy.indexing import _scatter_with
from minijax_numpy.table import IMPLS

from minijax.backend import register_backend
from minijax.cli import main
from minijax.core import Primitive

pytestmark = pytest.mark.single_backend  # each test names the backends it compares

Impl = Callable[..., Any]
Fault = Callable[[Impl], Impl]


def nudged(ulps: int, dtype: type) -> Fault:
    """The implementation, with results of ``dtype`` moved ``ulps`` toward +inf."""

    def fault(impl: Impl) -> Impl:
        def wrong(*args: Any, **params: Any) -> Any:
            out = np.asarray(impl(*args, **params))
            if out.dtype == np.dtype(dtype):
                for _ in range(ulps):
                    out = np.nextafter(out, np.array(np.inf, out.dtype))
            return out

        return wrong

    return fault


def ignoring_nan(impl: Impl) -> Impl:
    def wrong(x: Any, **params: Any) -> Any:
        if x.dtype.kind == "f" or x.dtype.name == "bfloat16":
            x = np.where(np.isnan(x.astype(np.float64)), -np.inf, x).astype(x.dtype)
        return impl(x, **params)

    return wrong


def _drop_duplicates(flat: Any, targets: Any, values: Any) -> None:
    flat[targets] += values  # a target named twice gets one update: the classic NumPy mistake


class Faulty(NumpyBackend):
    """The reference with some primitives' implementations replaced (eager and compiled alike,
    unless ``compiled_only``)."""

    faults: dict[str, Fault] = {}
    compiled_only = False

    def __init__(self) -> None:
        super().__init__()
        self._compiling = False

    def _impl(self, prim: Primitive, params: dict[str, Any]) -> Impl:
        fault = self.faults.get(prim.name)
        if fault is None or (self.compiled_only and not self._compiling):
            return super()._impl(prim, params)
        wrong = fault(IMPLS[prim.name])
        return functools.partial(wrong, **params) if params else wrong

    def prepare(self, prim: Primitive, params: dict[str, Any], in_avals: Any, out_avals: Any) -> Any:
        if prim.name in self.faults:
            in_avals = []  # no specialised fast path: every call goes through _impl
        return super().prepare(prim, params, in_avals, out_avals)

    def compile_jaxpr(self, jaxpr: Any, consts: Any) -> Any:
        self._compiling = True
        try:
            return super().compile_jaxpr(jaxpr, consts)
        finally:
            self._compiling = False


def faulty_backend(name: str, faults: dict[str, Fault], compiled_only: bool = False) -> str:
    backend_class = type(name, (Faulty,), {"name": name, "priority": -100, "faults": faults, "compiled_only": compiled_only})
    register_backend(name, backend_class)
    return name


def conformance(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path, backend: str, only: str,
                *extra: str) -> tuple[int, str, dict[str, Any]]:  # fmt: skip
    report = tmp_path / "report.json"
    argv = ["conformance", "--backend", backend, "--only", only, "--quiet", "--reproducers",
            str(tmp_path / "repro"), "--report", str(report), *extra]  # fmt: skip
    status = main(argv)
    out = capsys.readouterr().out
    return status, out, json.loads(report.read_text())


def failing_rows(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(r["kind"], r["subject"], r["dtype"]) for r in report["results"] if r["status"] == "fail"]


def replay(capsys: pytest.CaptureFixture[str], directory: str, *extra: str) -> tuple[int, str]:
    status = main(["replay", directory, *extra])
    return status, capsys.readouterr().out.strip()


def assert_replays(capsys: pytest.CaptureFixture[str], report: dict[str, Any], kind: str, subject: str, dtype: str) -> None:
    """The row's reproducer replays to the verdict it recorded; on the reference it passes."""
    (row,) = [r for r in report["results"] if (r["kind"], r["subject"], r["dtype"]) == (kind, subject, dtype)]
    directory = row["reproducer"]
    readme = (pathlib.Path(directory) / "README.md").read_text()
    assert f"minijax replay {directory}" in readme
    recorded = json.loads((pathlib.Path(directory) / "check.json").read_text())["verdict"]
    status, line = replay(capsys, directory)
    assert status == 1
    assert line == recorded
    assert line.startswith(f"FAIL: {kind} {subject} {dtype} on ")
    assert row["failure"] in line
    status, line = replay(capsys, directory, "--backend", "numpy")
    assert status == 0 and line.startswith(f"PASS: {kind} {subject} {dtype} on 'numpy'")


def test_sin_three_ulps_off_in_float32_fails_and_names_sin_float32(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    backend = faulty_backend("sin-3ulps-f32", {"sin": nudged(3, np.float32)})
    status, out, report = conformance(capsys, tmp_path, backend, "sin", "--skip", "laws", "--skip", "corpus")
    assert status == 1
    assert failing_rows(report) == [("primitive", "sin", "float32")]
    assert "FAILED primitive sin float32: output 0" in out and "allowed 2 ulps" in out
    passing = {r["dtype"] for r in report["results"] if r["status"] == "pass"}
    assert passing == {"float16", "bfloat16", "float64"}
    assert_replays(capsys, report, "primitive", "sin", "float32")


def test_sin_off_by_the_allowed_two_ulps_passes(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    backend = faulty_backend("sin-2ulps-f32", {"sin": nudged(2, np.float32)})
    status, out, report = conformance(capsys, tmp_path, backend, "sin", "--skip", "laws", "--skip", "corpus")
    assert status == 0, out
    (f32_row,) = [r for r in report["results"] if r["dtype"] == "float32"]
    assert f32_row["worst_ulps"] == 2  # seen, and within the policy


def test_sqrt_one_ulp_off_in_float32_fails(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    backend = faulty_backend("sqrt-1ulp-f32", {"sqrt": nudged(1, np.float32)})
    status, out, report = conformance(capsys, tmp_path, backend, "sqrt", "--skip", "laws", "--skip", "corpus")
    assert status == 1
    assert failing_rows(report) == [("primitive", "sqrt", "float32")]
    assert "1 ulps apart, allowed exact" in out
    assert_replays(capsys, report, "primitive", "sqrt", "float32")


def test_reduce_max_ignoring_nan_fails_in_every_float_dtype(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    backend = faulty_backend("max-ignores-nan", {"reduce_max": ignoring_nan})
    status, out, report = conformance(capsys, tmp_path, backend, "reduce_max", "--skip", "laws", "--skip", "corpus")
    assert status == 1
    assert {row for row in failing_rows(report)} == {("primitive", "reduce_max", d) for d in ("float16", "bfloat16", "float32", "float64")}
    assert all(r["status"] == "pass" for r in report["results"] if r["dtype"].startswith(("int", "uint", "bool")))
    # The shrunk case is small: one NaN decides it.
    directory = pathlib.Path([r for r in report["results"] if r["dtype"] == "float32"][0]["reproducer"])
    assert "reduce_max" in (directory / "jaxpr.txt").read_text()
    assert_replays(capsys, report, "primitive", "reduce_max", "float32")


def test_scatter_add_dropping_duplicates_fails(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    backend = faulty_backend("scatter-drops-duplicates", {"scatter-add": lambda impl: _scatter_with(_drop_duplicates)})
    # The sampler draws many zero-size scatters; 20 examples per dtype reach colliding indices.
    status, out, report = conformance(capsys, tmp_path, backend, "scatter-add", "--skip", "laws", "--skip", "corpus",
                                      "--examples", "20")
    assert status == 1
    rows = failing_rows(report)
    assert rows and all(kind == "primitive" and subject == "scatter-add" for kind, subject, _ in rows)
    assert ("primitive", "scatter-add", "float32") in rows
    assert "FAILED primitive scatter-add float32" in out
    assert_replays(capsys, report, "primitive", "scatter-add", "float32")


def test_a_wrong_cos_in_compiled_programs_breaks_the_jvp_law_of_sin(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    def scaled(impl: Impl) -> Impl:
        return lambda *args, **params: np.asarray(impl(*args, **params)) * np.float32(1.1)

    backend = faulty_backend("cos-wrong-when-compiled", {"cos": scaled}, compiled_only=True)
    status, out, report = conformance(capsys, tmp_path, backend, "sin", "--skip", "corpus")
    assert status == 1
    rows = failing_rows(report)
    assert ("jvp", "sin", "float32") in rows and ("vjp", "sin", "float32") in rows
    assert not [r for r in rows if r[0] == "primitive"]  # eager sin and cos are right
    assert_replays(capsys, report, "jvp", "sin", "float32")
