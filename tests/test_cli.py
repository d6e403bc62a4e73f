"""The ``minijax`` command: ``info``, ``tour`` and ``python -m minijax``."""

from __future__ import annotations

import io
import pathlib
import subprocess
import sys

import pytest

import minijax
from minijax.cli import main, run_snippet


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_info_reports_version_backends_default_and_x64(capsys: pytest.CaptureFixture[str], backend_name: str) -> None:
    status, out, _ = run_main(["info"], capsys)
    assert status == 0
    assert f"minijax {minijax.__version__}" in out
    assert "  numpy: platform cpu, priority 0, devices [CpuDevice(id=0)]" in out
    assert f"default backend: {backend_name}" in out  # the one this test runs on (tests/conftest.py)
    assert "x64 enabled: False" in out


def test_info_survives_a_broken_backend(backend_name: str) -> None:
    program = (
        "from minijax.backend import register_backend\n"
        "def broken():\n"
        "    raise ImportError('no such library')\n"
        "register_backend('broken', broken)\n"
        "from minijax.cli import main\n"
        "raise SystemExit(main(['info']))\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "  broken: failed to load: ImportError: no such library" in result.stdout
    assert f"default backend: {backend_name}" in result.stdout  # MINIJAX_BACKEND, set by tests/conftest.py


def test_tour_shows_ops_jaxpr_and_the_jit_cache(capsys: pytest.CaptureFixture[str], backend_name: str) -> None:
    status, out, _ = run_main(["tour"], capsys)
    assert status == 0
    assert f"A tour of minijax on the {backend_name!r} backend." in out
    assert ">>> x = jnp.arange(4.0)\n>>> x\nArray([0., 1., 2., 3.], dtype=float32)\n" in out
    assert ">>> x * 2 + 1\nArray([1., 3., 5., 7.], dtype=float32)\n" in out
    assert ">>> jnp.sum(x)\nArray(6., dtype=float32)\n" in out
    assert "{ lambda ; a:f32[4]. let\n    b:f32[4] = sin a\n" in out
    # Two calls with f32[4], one trace; a new shape, a second trace.
    assert ">>> traces\n[(4,)]\n" in out
    assert ">>> traces\n[(4,), (3,)]\n" in out


@pytest.mark.single_backend
def test_tour_on_a_named_backend(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(["tour", "--backend", "numpy"], capsys)
    assert status == 0
    assert "on the 'numpy' backend" in out


@pytest.mark.single_backend
def test_tour_rejects_an_unknown_backend(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(["tour", "--backend", "tpu9000"], capsys)
    assert status == 2
    assert "unknown backend 'tpu9000'" in err
    assert "installed backends: " in err and "numpy" in err
    assert out == ""


@pytest.mark.single_backend
def test_a_command_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "usage: minijax" in capsys.readouterr().err


@pytest.mark.single_backend
def test_run_snippet_echoes_statements_and_values() -> None:
    out = io.StringIO()
    namespace: dict[str, object] = {}
    run_snippet(
        """
        def twice(f):
            return lambda v: f(f(v))
        @twice
        def inc(v):
            return v + 1
        inc(1)
        None
        """,
        namespace,
        out,
    )
    assert out.getvalue() == (
        ">>> def twice(f):\n"
        "...     return lambda v: f(f(v))\n"
        ">>> @twice\n"
        "... def inc(v):\n"
        "...     return v + 1\n"
        ">>> inc(1)\n"
        "3\n"
        ">>> None\n"
    )


@pytest.mark.single_backend
def test_python_dash_m_minijax() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "minijax", "info"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"minijax {minijax.__version__}")


# ---------------------------------------------------------------------------
# conformance and replay (their suites: tests/test_conformance*.py)


@pytest.mark.single_backend
def test_conformance_on_the_reference_passes_and_writes_its_report(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    report = tmp_path / "out" / "report.json"
    status, out, err = run_main(["conformance", "--backend", "numpy", "--only", "neg", "--examples", "2",
                                 "--report", str(report), "--reproducers", str(tmp_path / "r")], capsys)  # fmt: skip
    assert status == 0, out
    assert "neg                        float32" in out and "0 failed" in out
    assert f"report written to {report}" in out
    assert '"ok": true' in report.read_text()
    assert err.startswith("[") and "rows" in err and "checks" in err  # the progress bar
    assert not (tmp_path / "r").exists()


@pytest.mark.single_backend
def test_conformance_rejects_unknown_names(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(["conformance", "--backend", "tpu9000", "--quiet"], capsys)
    assert status == 2 and "minijax conformance: unknown backend 'tpu9000'; installed backends:" in err
    status, out, err = run_main(["conformance", "--backend", "numpy", "--only", "sine", "--quiet"], capsys)
    assert status == 2 and "no primitive called sine" in err
    status, out, err = run_main(["conformance", "--backend", "numpy", "--import", "no_such_module_here"], capsys)
    assert status == 2 and "no_such_module_here" in err
    with pytest.raises(SystemExit):
        main(["conformance"])  # --backend is required
    assert "--backend" in capsys.readouterr().err


@pytest.mark.single_backend
def test_replay_of_a_missing_reproducer_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    status, out, err = run_main(["replay", str(tmp_path)], capsys)
    assert status == 2 and "is not a reproducer" in err and out == ""


@pytest.mark.single_backend
def test_the_conformance_command_runs_in_a_subprocess(tmp_path: pathlib.Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "minijax", "conformance", "--backend", "numpy", "--only", "abs", "--examples", "1",
         "--skip", "laws", "--skip", "corpus", "--quiet"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checks on 'numpy' against 'numpy'" in result.stdout and result.stderr == ""
    assert list(tmp_path.iterdir()) == []  # no .hypothesis directory, no reproducers
