"""The packaging promises: the README's commands are the ones CI runs, every
package is shipped, and the installed metadata matches pyproject.toml."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import minijax

pytestmark = pytest.mark.single_backend  # packaging metadata; computes nothing

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = ROOT / ".ci" / "run"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def section_commands(heading: str) -> list[str]:
    """The command lines in the fenced blocks of the README section ``## heading``."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert match is not None, f"README.md has no '## {heading}' section"
    blocks = re.findall(r"^```sh\n(.*?)^```", match.group(1), re.M | re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_readme_has_one_command_per_section() -> None:
    for heading in ("Install", "Main command", "Test"):
        commands = section_commands(heading)
        assert len(commands) == 1, f"README section {heading!r} should hold exactly one command, has {commands}"
    assert section_commands("Install") == ["pip install -e '.[dev]'"]
    assert section_commands("Main command") == ["minijax tour"]


def test_ci_runs_the_readme_commands_verbatim() -> None:
    ci_lines = [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]
    for heading in ("Install", "Test"):
        (command,) = section_commands(heading)
        assert command in ci_lines, f".ci/run must run the README's {heading.lower()} command {command!r} verbatim"
    test_command = section_commands("Test")[0]
    # The tests run last, after the linters, so a lint failure is reported fast.
    assert ci_lines.index(test_command) > ci_lines.index("ruff check .")
    assert ci_lines.index(test_command) > ci_lines.index("mypy")


def test_ci_runs_a_rotating_deep_conformance_slice() -> None:
    # docs/conformance.md, "Deep runs": --examples 20 over the day's eighth of the primitives.
    text = CI.read_text(encoding="utf-8")
    assert 'minijax conformance --backend xla --examples 20 --slice "$deep_slice/8"' in text
    assert 'minijax conformance --backend numpy --reference numpy --jit --examples 20 --slice "$deep_slice/8"' in text
    (rotation,) = re.findall(r'^deep_slice="(.*)"$', text, re.M)
    env = {k: v for k, v in os.environ.items() if k != "MINIJAX_DEEP_SLICE"}
    picked = subprocess.run(["bash", "-c", f'echo "{rotation}"'], capture_output=True, text=True, env=env, check=True)
    assert 1 <= int(picked.stdout) <= 8
    chosen = subprocess.run(["bash", "-c", f'echo "{rotation}"'], capture_output=True, text=True,
                            env={**env, "MINIJAX_DEEP_SLICE": "5"}, check=True)  # fmt: skip
    assert chosen.stdout.strip() == "5"


def test_ci_script_is_strict_bash_and_executable() -> None:
    text = CI.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert "python3 -m venv" in text
    assert os.access(CI, os.X_OK), ".ci/run must be executable (chmod +x .ci/run)"


def test_every_package_is_shipped() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    package_dirs = PYPROJECT["tool"]["setuptools"].get("package-dir", {})
    found = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "minijax").rglob("__init__.py")
    }
    for name, directory in package_dirs.items():
        base = ROOT / directory
        found |= {".".join((name, *p.parent.relative_to(base).parts)) for p in base.rglob("__init__.py")}
    missing = found - listed
    assert not missing, f"packages missing from [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    stale = listed - found
    assert not stale, f"pyproject.toml lists packages that do not exist: {sorted(stale)}"


def test_typed_marker_files_exist() -> None:
    package_dirs = PYPROJECT["tool"]["setuptools"].get("package-dir", {})
    for package, files in PYPROJECT["tool"]["setuptools"]["package-data"].items():
        directory = ROOT / package_dirs.get(package, package.replace(".", "/"))
        for name in files:
            assert (directory / name).is_file(), f"package data {package}/{name} is missing"


def test_version_and_name() -> None:
    assert PYPROJECT["project"]["name"] == "minijax-ref"
    assert PYPROJECT["project"]["version"] == minijax.__version__
    assert PYPROJECT["project"]["scripts"] == {"minijax": "minijax.cli:main"}


def test_installed_metadata_matches_pyproject() -> None:
    # Fails when the editable install is stale: re-run the README's install command.
    dist = metadata.distribution("minijax-ref")
    assert dist.version == minijax.__version__
    entry_points = {(ep.group, ep.name): ep.value for ep in dist.entry_points}
    assert entry_points[("console_scripts", "minijax")] == "minijax.cli:main"
    for name, value in PYPROJECT["project"]["entry-points"]["minijax.backends"].items():
        assert entry_points[("minijax.backends", name)] == value


def test_a_checkout_without_entry_points_offers_the_same_backends() -> None:
    # The ecosystem environment (docs/ecosystem.md) runs this checkout from PYTHONPATH, with no
    # installed metadata: it must find the backends an install registers, XLA included (issue 24).
    code = (
        "from importlib import metadata\n"
        "metadata.entry_points = lambda **kw: []\n"
        "from minijax import backend\n"
        "print(' '.join(backend.backend_names()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'backends'}"})  # fmt: skip
    assert set(done.stdout.split()) == set(PYPROJECT["project"]["entry-points"]["minijax.backends"])
