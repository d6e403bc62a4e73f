"""The second CI leg: the README's install and test commands again, on
Python 3.12 with the newest jaxlib the pin allows.

``.ci/run --find-python312`` prints the interpreter that leg would use; these
tests drive it with fake pyenv trees, so they do not depend on what this
machine has installed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_packaging import CI, section_commands

pytestmark = pytest.mark.single_backend  # nothing is computed here


def fake_python(path: Path, is_312: bool) -> Path:
    """An executable that answers .ci/run's version probe like a 3.12 (or not)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\nexit {0 if is_312 else 1}\n")
    path.chmod(0o755)
    return path


def find(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # PATH without any python3.12, so that only the fakes can be found.
    base = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
    return subprocess.run(
        ["bash", str(CI), "--find-python312"], env={**base, **env}, capture_output=True, text=True, timeout=60
    )


def test_the_newest_pyenv_312_is_found(tmp_path: Path) -> None:
    fake_python(tmp_path / "versions/3.12.1/bin/python3.12", True)
    newest = fake_python(tmp_path / "versions/3.12.10/bin/python3.12", True)
    fake_python(tmp_path / "versions/3.11.7/bin/python3.11", True)
    done = find({"PYENV_ROOT": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(newest)  # 3.12.10 sorts after 3.12.1 as a version


def test_a_candidate_that_is_not_312_is_skipped_and_the_override_wins(tmp_path: Path) -> None:
    fake_python(tmp_path / "versions/3.12.3/bin/python3.12", False)  # e.g. a broken install
    good = fake_python(tmp_path / "versions/3.12.2/bin/python3.12", True)
    assert find({"PYENV_ROOT": str(tmp_path)}).stdout.strip() == str(good)
    override = fake_python(tmp_path / "elsewhere/python", True)
    done = find({"PYENV_ROOT": str(tmp_path), "MINIJAX_PYTHON312": str(override)})
    assert done.stdout.strip() == str(override)


def test_no_312_fails_with_a_clear_message(tmp_path: Path) -> None:
    done = find({"PYENV_ROOT": str(tmp_path)})
    assert done.returncode != 0 and done.stdout == ""
    assert "error: no Python 3.12 found for the second CI leg" in done.stderr
    assert "pyenv install 3.12" in done.stderr and "MINIJAX_PYTHON312" in done.stderr


def test_the_312_leg_installs_and_runs_the_readme_test_command() -> None:
    lines = [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]
    (install,) = section_commands("Install")
    (test,) = section_commands("Test")
    make_venv = lines.index('"$python312" -m venv "$work/venv312"')
    activate = lines.index('source "$work/venv312/bin/activate"')
    # The 3.12 leg comes after the first leg's tests, and repeats its commands.
    assert lines.index(test) < make_venv < activate
    assert install in lines[activate:] and test in lines[activate:]
    assert lines[activate:].index(install) < lines[activate:].index(test)
    # The interpreter is looked for before the first leg, so a missing one fails fast.
    assert lines.index('python312="$(find_python312)"') < lines.index(install)


def test_the_312_leg_runs_unless_switched_off() -> None:
    text = CI.read_text(encoding="utf-8")
    assert 'if [ "${MINIJAX_CI_PY312:-1}" = "1" ]; then' in text  # on by default
    assert 'python -m pytest -q -n 2' in text.split("Python 3.12 with the newest jaxlib")[1]
