"""The conformance suite itself: reproducers round-trip, the report matches its schema, unsupported
primitives are reported as such, the case corpus is current and passes on both bundled backends, and the
suite runs as a pytest entry point."""

from __future__ import annotations

import io
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from minijax_numpy import NumpyBackend

from minijax import dtypes
from minijax.backend import register_backend
from minijax.config import enable_x64
from minijax.core import Primitive
from minijax.testing import checks, conformance, corpus, runner
from minijax.testing.checks import Check, Outcome, load_reproducer, write_reproducer
from minijax.testing.report import REPORT_SCHEMA, Progress, schema_fields, validate
from minijax.testing.runner import run_check
from minijax.testing.suite import Unit, UnitResult, one_equation

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES = corpus.load_corpus(ROOT / "spec" / "cases")


class SinAndAddOnly(NumpyBackend):
    """A backend of two primitives: everything else must be reported unsupported, not failed."""

    name = "sin-and-add"
    priority = -100

    def supports(self, prim: Primitive) -> bool:
        return prim.name in ("sin", "add")


register_backend("sin-and-add", SinAndAddOnly)


def run(options: conformance.Options) -> tuple[Any, str]:
    out = io.StringIO()
    report = conformance.run(options, out, io.StringIO())
    return report, out.getvalue()


# ---------------------------------------------------------------------------
# Reproducers


@pytest.mark.single_backend
def test_a_reproducer_round_trips_jaxpr_inputs_and_verdict(tmp_path: pathlib.Path) -> None:
    from minijax.core import ShapedArray, primitive_registry

    bf16 = np.dtype(dtypes.bfloat16)
    closed = one_equation(primitive_registry["add"], {}, [ShapedArray((3,), bf16), ShapedArray((3,), bf16)])
    args = [np.array([1.5, -np.inf, np.nan], bf16), np.array([2.0, 1.0, -0.0], bf16)]
    check = Check("primitive", "add", "bfloat16", closed, args)
    numpy = checks.backend_named("numpy")
    outcome = run_check(check, numpy, numpy)
    assert outcome.passed
    directory = write_reproducer(check, outcome, tmp_path / "r", "numpy", "numpy")
    assert sorted(p.name for p in directory.iterdir()) == sorted(checks.REPRODUCER_FILES)
    again, meta = load_reproducer(directory)
    assert str(again.jaxpr) == str(check.jaxpr)
    for a, b in zip(again.args, args):
        assert a.dtype == bf16 and a.view(np.uint16).tolist() == b.view(np.uint16).tolist()
    assert meta["verdict"] == runner.replay(directory)[1]
    assert runner.replay(directory)[1].startswith("PASS: primitive add bfloat16 on 'numpy' against 'numpy'")


@pytest.mark.single_backend
@pytest.mark.parametrize("kind, options", [
    ("vmap", {"in_axes": [1, None], "out_axes": -1, "axis_size": 2}),
    ("transpose", {"positions": [0]}),
    ("jvp", {"positions": [0, 1]}),
])  # fmt: skip
def test_law_reproducers_replay_in_float64(kind: str, options: dict[str, Any], tmp_path: pathlib.Path) -> None:
    from minijax.core import ShapedArray, primitive_registry

    f64 = np.dtype(np.float64)
    with enable_x64(True):
        closed = one_equation(primitive_registry["mul"], {}, [ShapedArray((3,), f64), ShapedArray((3,), f64)])
    shapes = [(3, 2), (3,)] if kind == "vmap" else [(3,), (3,)]  # vmap: operand 0 batched along axis 1
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s) for s in shapes]
    check = Check(kind, "mul", "float64", closed, args, True, options)
    numpy = checks.backend_named("numpy")
    outcome = run_check(check, numpy, numpy)
    assert outcome.passed, outcome.message
    directory = write_reproducer(check, outcome, tmp_path / kind, "numpy", "numpy")
    again, meta = load_reproducer(directory)
    assert again.x64 and again.options == json.loads(json.dumps(options))
    assert runner.replay(directory)[1] == meta["verdict"]


MULTI_RESULT = ["eigh", "lu", "qr", "svd", "sort", "top_k", "split", "threefry2x32"]


@pytest.mark.single_backend
@pytest.mark.parametrize("name", MULTI_RESULT)
def test_vmap_law_out_axes_fit_every_result(name: str, tmp_path: pathlib.Path) -> None:
    # `--examples 20` drew out_axes=2 for eigh and lu from the rank of their first result, out of
    # bounds for the eigenvalues and pivots (the check raised "axis 2 is out of bounds").
    from minijax.testing.samplers import SAMPLERS
    from minijax.testing.suite import law_dtypes, law_unit, run_unit

    sampler = SAMPLERS[name]
    numpy = checks.backend_named("numpy")
    dtype = law_dtypes("vmap", sampler)[0]
    result = run_unit(law_unit("vmap", sampler, dtype, 20, True), numpy, numpy, seed=0)
    assert result.failed == 0 and result.passed == 20, result.failure and result.failure[1].message
    # And what it draws is a valid reproducer: the loader bounds out_axes by the lowest rank too.
    draw = law_unit("vmap", sampler, dtype, 1, True).draw
    assert draw is not None
    drawn: list[Check] = []

    @settings(max_examples=30, database=None, derandomize=True, deadline=None)
    @given(st.data())
    def draw_some(data: st.DataObject) -> None:
        drawn.extend(draw(data))

    draw_some()
    for i, check in enumerate(drawn):
        load_reproducer(write_reproducer(check, Outcome("pass"), tmp_path / str(i), "numpy", "numpy"))


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_eigh_derivative_laws_hold_where_lapack_flips_a_vector_between_the_steps(kind: str, backend_name: str) -> None:
    # --examples 50 --law-examples 50 on the reference: the eigenvalues are ~1 apart, but LAPACK
    # picked an eigenvector's sign differently at x + eps t and x - eps t, and the finite
    # difference came out ~1/eps (-421 where the jvp rule's tangent is -0.27).
    from minijax.core import ShapedArray, primitive_registry

    bits = [0xBF7AAC1E, 0xBF37195B, 0xBEBE0440, 0xBF37195B, 0x3DC11113, 0x3CBB08CF, 0xBEBE0440, 0x3CBB08CF, 0xBF2AAD20]
    a = np.array(bits, np.uint32).view(np.float32).reshape(3, 3)
    params = {"algorithm": None, "lower": True, "sort_eigenvalues": True, "subset_by_index": None}
    closed = one_equation(primitive_registry["eigh"], params, [ShapedArray((3, 3), np.dtype(np.float32))])
    check = Check(kind, "eigh", "float32", closed, [a], False, {"positions": [0]})
    backend = checks.backend_named(backend_name)
    outcome = run_check(check, backend, checks.backend_named("numpy"))
    assert outcome.passed, outcome.message


@pytest.mark.single_backend
def test_replaying_a_directory_that_is_not_a_reproducer_says_so(tmp_path: pathlib.Path) -> None:
    with pytest.raises(FileNotFoundError, match="is not a reproducer: check.json, jaxpr.txt, inputs.npz missing"):
        runner.replay(tmp_path)


# ---------------------------------------------------------------------------
# Runs, the table and the report


@pytest.mark.single_backend
def test_the_reference_conforms_to_itself_and_the_report_matches_its_schema(tmp_path: pathlib.Path) -> None:
    report_path = tmp_path / "report.json"
    options = conformance.Options("numpy", only=["sin", "reduce_sum", "dynamic_slice"], examples=2,
                                  report=report_path, progress=False)  # fmt: skip
    report, out = run(options)
    assert report.ok
    data = json.loads(report_path.read_text())
    assert validate(data, REPORT_SCHEMA) == []
    assert data["ok"] is True and data["totals"]["failed"] == 0 and data["totals"]["checks"] > 0
    kinds = {(r["kind"], r["subject"]) for r in data["results"]}
    assert {("primitive", "sin"), ("jvp", "sin"), ("vjp", "sin"), ("transpose", "reduce_sum"), ("vmap", "dynamic_slice")} <= kinds
    assert any(r["section"] == "corpus" and r["subject"] == "primitives/dynamic_slice_clamped" for r in data["results"])
    assert "sin                        float32" in out
    assert f"{data['totals']['checks']} checks on 'numpy' against 'numpy'" in out


@pytest.mark.single_backend
def test_the_schema_validator_finds_what_is_wrong() -> None:
    totals = {"checks": 0, "passed": 0, "failed": 0, "unsupported": 0, "executions": 0, "rows": 0}
    good = {"schema": "minijax-conformance-report/1", "minijax_version": "0", "backend": "b", "reference": "r",
            "settings": {"examples": 1, "law_examples": 1, "seed": None, "only": None, "sections": ["corpus"]},
            "seconds": 1.0, "ok": True, "results": [], "totals": totals}  # fmt: skip
    assert validate(good, REPORT_SCHEMA) == []
    bad = {**good, "ok": "yes", "extra": 1, "totals": {**totals, "checks": -1}}
    del bad["backend"]
    problems = validate(bad, REPORT_SCHEMA)
    assert "report: the field 'backend' is missing" in problems
    assert "report: unexpected field 'extra'" in problems
    assert "report.ok: expected boolean, got str 'yes'" in problems
    assert "report.totals.checks: -1 is below the minimum 0" in problems


@pytest.mark.single_backend
def test_every_report_field_is_documented() -> None:
    page = (ROOT / "docs" / "conformance.md").read_text()
    for field in schema_fields():
        assert f"`{field}`" in page, f"docs/conformance.md does not document the report field {field}"


@pytest.mark.single_backend
def test_primitives_a_backend_lacks_are_unsupported_not_failed(tmp_path: pathlib.Path) -> None:
    options = conformance.Options("sin-and-add", only=["sin", "cos", "add"], examples=2, progress=False,
                                  reproducers=tmp_path)  # fmt: skip
    report, out = run(options)
    assert report.ok
    rows = {(r.unit.kind, r.unit.subject, r.unit.dtype): r.status for r in report.results}
    assert rows[("primitive", "cos", "*")] == "unsupported"
    assert rows[("primitive", "sin", "float32")] == "pass"
    # jvp of sin needs cos and mul: unsupported, not failed.
    assert rows[("jvp", "sin", "float32")] == "unsupported"
    assert "cos                        *               0       0           -  unsupported" in out
    assert not list(tmp_path.iterdir())  # no reproducers


@pytest.mark.single_backend
def test_bad_options_are_rejected_by_name() -> None:
    with pytest.raises(ValueError, match="no primitive called nope"):
        conformance.Options("numpy", only=["nope"])
    with pytest.raises(ValueError, match="no sampler for cond"):
        conformance.Options("numpy", only=["cond"])
    with pytest.raises(ValueError, match="unknown sections"):
        conformance.Options("numpy", sections=("everything",))
    with pytest.raises(ValueError, match="unknown backend 'tpu9000'; installed backends: "):
        checks.backend_named("tpu9000")


@pytest.mark.single_backend
def test_slices_split_the_primitives_into_disjoint_near_equal_parts() -> None:
    from minijax.testing.samplers import sampled_primitive_names

    names = sampled_primitive_names()
    parts = [conformance.slice_of(names, k, 8) for k in range(1, 9)]
    assert sorted(n for part in parts for n in part) == sorted(names)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert parts[1] == names[1::8]  # every 8th name: each slice takes from all over the alphabet
    assert conformance.parse_slice("3/8") == (3, 8)
    for bad in ("0/8", "9/8", "3", "a/b", "3/8/1"):
        with pytest.raises(ValueError, match="is not K/N with 1 <= K <= N"):
            conformance.parse_slice(bad)


@pytest.mark.single_backend
def test_a_slice_plans_its_primitives_their_corpus_cases_and_no_random_programs(tmp_path: pathlib.Path) -> None:
    from minijax.testing.samplers import sampled_primitive_names

    numpy = checks.backend_named("numpy")
    wanted = set(conformance.slice_of(sampled_primitive_names(), 2, 40))
    units = conformance.plan(conformance.Options("numpy", slice=(2, 40), examples=1, progress=False), numpy)
    assert {u.subject for u in units if u.section in ("primitives", "laws")} == wanted
    assert not [u for u in units if u.section == "programs"]
    corpus_cases = {u.subject for u in units if u.section == "corpus"}
    assert corpus_cases == {c.name for c in corpus.load_corpus(None, sorted(wanted))} and corpus_cases
    report_path = tmp_path / "r.json"
    report, _ = run(conformance.Options("numpy", slice=(2, 40), examples=1, program_examples=0, report=report_path,
                                        progress=False, sections=("primitives",)))  # fmt: skip
    data = json.loads(report_path.read_text())
    assert report.ok and data["settings"]["slice"] == "2/40" and validate(data, REPORT_SCHEMA) == []


@pytest.mark.single_backend
def test_progress_counts_rows_checks_and_failures() -> None:
    stream = io.StringIO()
    progress = Progress(2, stream)
    unit = Unit("primitives", "primitive", "sin", "float32", 1, False)
    progress.advance(UnitResult(unit, passed=3))
    progress.advance(UnitResult(unit, passed=1, failed=1))
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[###############---------------] 1/2 rows, 3 checks, 0 failed")
    assert lines[-1].startswith("[##############################] 2/2 rows, 5 checks, 1 failed")


@pytest.mark.single_backend
def test_progress_shows_the_rate_and_the_time_left() -> None:
    progress = Progress(4, io.StringIO(), enabled=False)
    unit = Unit("primitives", "primitive", "sin", "float32", 1, False)
    progress.advance(UnitResult(unit, passed=10))
    # One row of four in 30 s: 10 checks / 30 s, and three more rows at that pace.
    assert progress.rate(30.0) == "0.3 checks/s (0.03 rows/s)"
    assert progress.eta(30.0) == "1m30s"
    assert progress.eta(2.0) == "6s"
    assert "checks/s" in progress.line() and "ETA" in progress.line()
    assert Progress(3, io.StringIO()).eta(5.0) == "?"


@pytest.mark.single_backend
def test_jobs_run_the_same_rows_to_the_same_results(tmp_path: pathlib.Path) -> None:
    # --jobs N hands rows to N spawned workers; each draws a row's cases from the seed alone,
    # so the table is the one a single process prints. A failing row's check comes back
    # through its reproducer (the worker writes it), as the planted bug shows.
    def run(jobs: int, backend: str) -> conformance.Report:
        options = conformance.Options(backend, only=["neg", "cumsum"], examples=2, jobs=jobs, progress=False,
                                      sections=("primitives",), reproducers=tmp_path / f"r{jobs}",
                                      imports=("planted_neg_backend",))  # fmt: skip
        return conformance.run(options, out=io.StringIO())

    checks.import_modules(["planted_neg_backend"])  # registers it here too: the run plans on it
    one, two = run(1, "numpy"), run(2, "numpy")
    assert [(r.unit.kind, r.unit.subject, r.unit.dtype, r.passed, r.failed) for r in one.results] == [
        (r.unit.kind, r.unit.subject, r.unit.dtype, r.passed, r.failed) for r in two.results
    ]
    planted = run(2, "planted-neg")
    failed = [r for r in planted.results if r.failed]
    assert {r.unit.subject for r in failed} == {"neg"}
    check, outcome = failed[0].failure or (None, None)
    assert check is not None and outcome is not None and check.subject == "neg" and outcome.failed
    with pytest.raises(ValueError, match="--jobs"):
        conformance.Options("numpy", jobs=0)


@pytest.mark.single_backend
def test_a_worker_that_dies_ends_the_run_naming_the_unfinished_rows(tmp_path: pathlib.Path) -> None:
    # Without a timeout or a hang: the pool notices the dead process.
    checks.import_modules(["planted_neg_backend"])
    options = conformance.Options("crashing-neg", only=["neg"], examples=1, jobs=2, progress=False,
                                  sections=("primitives",), reproducers=tmp_path, imports=("planted_neg_backend",))  # fmt: skip
    with pytest.raises(conformance.WorkerDied, match="primitive neg"):
        conformance.run(options, out=io.StringIO())


@pytest.mark.single_backend
def test_an_error_inside_a_backend_is_a_failure_with_its_message() -> None:
    class Broken(NumpyBackend):
        name = "broken"

        def prepare(self, prim: Primitive, params: Any, in_avals: Any, out_avals: Any) -> Any:
            raise RuntimeError("kernel exploded")

    from minijax.core import ShapedArray, primitive_registry

    closed = one_equation(primitive_registry["neg"], {}, [ShapedArray((2,), np.dtype(np.float32))])
    check = Check("primitive", "neg", "float32", closed, [np.ones(2, np.float32)])
    outcome = run_check(check, Broken(), checks.backend_named("numpy"))
    assert outcome == Outcome("error", np.inf, "raised RuntimeError: kernel exploded")
    assert outcome.failed


# ---------------------------------------------------------------------------
# The case corpus


@pytest.mark.single_backend
def test_the_corpus_has_the_groups_the_spec_promises() -> None:
    names = [c.name for c in CASES]
    for expected in ("programs/mlp_sgd_step", "programs/rnn_scan_grad", "programs/softmax_cross_entropy",
                     "programs/mlp_per_example_grads", "control_flow/scan_cumulative", "primitives/pad_negative_interior"):
        assert expected in names  # fmt: skip
    assert {n.split("/")[0] for n in names} == {"primitives", "control_flow", "programs"}
    assert all(c.about for c in CASES)


@pytest.mark.single_backend
def test_the_corpus_files_are_what_the_generator_writes() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "spec" / "cases" / "generate.py"), "--check"],
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr


@pytest.mark.single_backend
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_jaxprs_print_back_to_their_text(case: corpus.CorpusCase) -> None:
    assert str(case.jaxpr().jaxpr) + "\n" == case.jaxpr_path.read_text()
    args = case.make_inputs()
    assert [(a.shape, a.dtype) for a in args] == [(v.aval.shape, v.aval.dtype) for v in case.jaxpr().jaxpr.invars]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_corpus_passes_on_every_bundled_backend(case: corpus.CorpusCase, backend_name: str) -> None:
    outcome = run_check(case.check(), checks.backend_named(backend_name), checks.backend_named("numpy"))
    assert outcome.passed, outcome.message


@pytest.mark.single_backend
def test_input_descriptions_make_the_values_they_describe() -> None:
    rng = np.random.default_rng(0)
    given = corpus.make_input({"shape": [3], "dtype": "float32", "values": "given", "data": ["nan", "-0.0", 2.5]}, rng)
    assert np.isnan(given[0]) and np.signbit(given[1]) and given[2] == 2.5
    ints = corpus.make_input({"shape": [100], "dtype": "int8", "values": "integers", "low": -2, "high": 2}, rng)
    assert ints.dtype == np.int8 and set(ints.tolist()) == {-2, -1, 0, 1, 2}
    assert corpus.describe_given(np.array([np.nan, -0.0, np.inf], np.float32))["data"] == ["nan", "-0.0", "inf"]
    with pytest.raises(ValueError, match="unknown kind of values 'random'"):
        corpus.make_input({"shape": [], "dtype": "float32", "values": "random"}, rng)


# ---------------------------------------------------------------------------
# The pytest entry point


@pytest.mark.single_backend
def test_the_suite_runs_under_pytest_with_pyargs(tmp_path: pathlib.Path) -> None:
    env = {**os.environ, "MINIJAX_CONFORMANCE_ONLY": "mul", "MINIJAX_CONFORMANCE_EXAMPLES": "1"}
    env.pop("MINIJAX_BACKEND", None)
    # The command: the pytest11 entry point (pyproject.toml) loads the plugin.
    command = [sys.executable, "-m", "pytest", "--pyargs",
               "minijax.testing.conformance", "--minijax-backend=numpy", "-v", "-p", "no:cacheprovider"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test_conformance[primitive-mul-float32] PASSED" in result.stdout
    assert "test_conformance[transpose-mul-float64] PASSED" in result.stdout
    assert " failed" not in result.stdout


# ---------------------------------------------------------------------------
# The values a drawn case is checked on


@pytest.mark.single_backend
def test_edge_values_go_into_data_operands_and_not_into_indices() -> None:
    from minijax.testing.cases import Operand, case, indices, moderate
    from minijax.testing.suite import with_edges

    rng = np.random.default_rng(0)
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    sliced = case("dynamic_slice", {"slice_sizes": (2,)}, [Operand((400,), f32, moderate()), Operand((), i32, indices(0, 3))])
    x, start = [np.asarray(a) for a in sliced.args(rng)]
    spiced = with_edges(sliced, [x, start], rng)
    assert np.isnan(spiced[0]).any() and np.isinf(spiced[0]).any() and (spiced[0] == x).mean() > 0.5
    assert spiced[1] == start  # an index keeps the sampler's value
    shifted = case("shift_left", {}, [Operand((400,), i32, moderate()), Operand((400,), i32, indices(0, 31))])
    a, b = with_edges(shifted, [np.asarray(v) for v in shifted.args(rng)], rng)
    assert np.iinfo(np.int32).min in a and 32 in b  # elementwise integer operands get edge values too
    chol = case("cholesky", {}, [Operand((20, 20), f32, moderate())])
    m = [np.eye(20, dtype=np.float32)]
    np.testing.assert_array_equal(with_edges(chol, m, rng)[0], m[0])  # a decomposition of NaN is unspecified


@pytest.mark.single_backend
def test_scatters_are_also_checked_with_every_index_the_same() -> None:
    from hypothesis import given, settings

    from minijax.testing.samplers import SAMPLERS
    from minijax.testing.strategies import seeds
    from minijax.testing.suite import with_repeated_indices

    seen = []

    @settings(max_examples=30, derandomize=True, database=None)
    @given(SAMPLERS["scatter-add"].cases(np.float32), seeds())
    def draw(c: Any, rng: np.random.Generator) -> None:
        args = [np.asarray(a) for a in c.args(rng)]
        repeated = with_repeated_indices(c, args)
        if c.params["unique_indices"]:
            assert repeated is None
        elif repeated is not None:
            assert len(set(repeated[1].reshape(-1).tolist())) == 1
            np.testing.assert_array_equal(repeated[0], args[0])
            seen.append(c)

    draw()
    assert seen
    add = case_of("add")
    assert with_repeated_indices(add, [np.ones(2, np.int32), np.arange(2, dtype=np.int32)]) is None


def case_of(name: str) -> Any:
    from minijax.testing.cases import Operand, case, moderate

    i32 = np.dtype(np.int32)
    return case(name, {}, [Operand((2,), i32, moderate()), Operand((2,), i32, moderate())])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_complex_results_with_nan_parts_agree_part_by_part(dtype: Any, backend_name: str, tmp_path: pathlib.Path) -> None:
    # The default run (slice 1/8) failed conj of a real NaN on XLA: "got nan+0j, expected nan+0j,
    # nan ulps apart, allowed exact" -- complex results were compared as integers (a == e), where
    # NaN never meets NaN. The reproducer, written and replayed:
    from minijax.core import ShapedArray, primitive_registry

    with enable_x64(dtype == np.float64):
        closed = one_equation(primitive_registry["conj"], {"input_dtype": np.dtype(dtype)},
                              [ShapedArray((), np.dtype(dtype))])  # fmt: skip
        check = Check("primitive", "conj", np.dtype(dtype).name, closed, [np.array(np.nan, dtype)], dtype == np.float64)
        directory = write_reproducer(check, Outcome("fail"), tmp_path / "conj", backend_name, "numpy")
        outcome, line = runner.replay(directory)
    assert outcome.passed, line


@pytest.mark.single_backend
def test_a_program_is_compiled_once_per_run_by_its_text() -> None:
    import minijax

    def f(x: Any) -> Any:
        return x * 2.0 + 1.0

    numpy = checks.backend_named("numpy")
    x = np.ones(3, np.float32)
    checks.clear_compiled()
    before = dict(checks.compile_counts)
    first = checks.Compiled(numpy, minijax.make_jaxpr(f)(x))
    again = checks.Compiled(numpy, minijax.make_jaxpr(f)(x))  # a new jaxpr object, the same text
    assert again.executable is first.executable
    assert checks.compile_counts["compiles"] - before["compiles"] == 1
    assert checks.compile_counts["reused"] - before["reused"] == 1
    np.testing.assert_array_equal(again(x)[0], f(x))
    # Another shape is another program; a program with a constant is compiled every time.
    assert checks.Compiled(numpy, minijax.make_jaxpr(f)(np.ones(4, np.float32))).executable is not first.executable
    with_const = minijax.make_jaxpr(lambda v: v + np.arange(3, dtype=np.float32))(x)
    assert with_const.consts and checks.program_key(with_const) is None
    checks.clear_compiled()
    assert checks.Compiled(numpy, minijax.make_jaxpr(f)(x)).executable is not first.executable


class JitPlantedNeg(NumpyBackend):
    """Eager neg is right; neg under jit adds one (a compiled path that disagrees with the eager one)."""

    name = "jit-planted-neg"

    def compile(self, closed: Any, donated_invars: Any = None, device: Any = None) -> Any:
        run = super().compile(closed, donated_invars, device)
        if not any(e.primitive.name == "neg" for e in closed.jaxpr.eqns):
            return run
        return lambda bufs: [self.put(np.asarray(self.get(b)) + np.ones((), np.asarray(self.get(b)).dtype)) for b in run(bufs)]


register_backend("jit-planted-neg", JitPlantedNeg)


@pytest.mark.single_backend
def test_jit_runs_the_primitives_compiled_on_the_backend_and_eagerly_on_the_reference(tmp_path: pathlib.Path) -> None:
    def run(jit: bool) -> Any:
        options = conformance.Options("jit-planted-neg", reference="jit-planted-neg", only=["neg", "sin"], examples=2,
                                      sections=("primitives",), progress=False, reproducers=tmp_path, jit=jit)  # fmt: skip
        return conformance.run(options, out=io.StringIO())

    assert run(False).ok  # eager against eager: the planted jit bug is out of sight
    report = run(True)
    failed = {(r.unit.kind, r.unit.subject) for r in report.results if r.failed}
    assert failed == {("jit", "neg")} and {r.unit.kind for r in report.results} == {"jit"}
    assert report.settings["jit"] is True
    directory = sorted(tmp_path.iterdir())[0]  # one per failing dtype of neg
    outcome, line = runner.replay(directory)
    assert outcome.failed and line.startswith("FAIL: jit neg"), line
    assert runner.replay(directory, backend="numpy", reference="numpy")[0].passed
