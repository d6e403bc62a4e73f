"""Helpers of the ecosystem suite: run programs and the libraries' tests on minijax in subprocesses."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Any

import pytest

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent


def require(*names: str) -> None:
    """Skip unless the libraries are installed (they are optional: the ecosystem environment has them)."""
    missing = [n for n in names if importlib.util.find_spec(n) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (the ecosystem environment: see docs/ecosystem.md)")


def run_under_minijax(args: list[str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``python -m minijax.run ARGS`` in a subprocess, with this checkout's minijax first on the path."""
    env = dict(os.environ)
    paths = [str(ROOT), str(ROOT / "backends")]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return subprocess.run([sys.executable, "-m", "minijax.run", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)  # fmt: skip


def run_program(name: str) -> dict[str, Any]:
    """Run tests/ecosystem/programs/NAME.py on minijax; its JSON output."""
    done = run_under_minijax([str(HERE / "programs" / f"{name}.py")])
    assert done.returncode == 0, f"{name} failed on minijax:\n{done.stderr[-4000:]}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def recorded(name: str) -> dict[str, Any]:
    """What the program printed under real JAX (tests/data/ecosystem/NAME.json, from record_jax.py)."""
    data: dict[str, Any] = json.loads((ROOT / "tests" / "data" / "ecosystem" / f"{name}.json").read_text())
    return data


def run_library_tests(test_files: list[pathlib.Path], junit: pathlib.Path, timeout: float = 900) -> dict[str, list[tuple[str, str]]]:
    """Run a library's own test files with pytest under minijax; outcome -> [(test id, message)]."""
    done = run_under_minijax(["-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                              "--rootdir", str(test_files[0].parent), *map(str, test_files)], timeout)  # fmt: skip
    assert junit.exists(), f"pytest did not run:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    outcomes: dict[str, list[tuple[str, str]]] = {"passed": [], "failed": [], "skipped": []}
    for case in ET.parse(junit).iter("testcase"):
        test_id = f"{case.get('classname')}.{case.get('name')}"
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            outcomes["failed"].append((test_id, (problem.get("message") or "") + "\n" + (problem.text or "")))
        elif case.find("skipped") is not None:
            outcomes["skipped"].append((test_id, case.find("skipped").get("message") or ""))  # type: ignore[union-attr]
        else:
            outcomes["passed"].append((test_id, ""))
    return outcomes


def library_dir(name: str) -> pathlib.Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    return pathlib.Path(spec.origin).parent
