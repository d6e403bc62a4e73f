"""The expected outputs in ``tests/seeds/`` are what real JAX prints.

Each seed script, with ``minijax`` replaced by ``jax``, runs in a fresh
interpreter of the oracle environment; its stdout must equal the stored
expectation (up to trailing whitespace and object addresses), so the
expectations ``tests/test_seeds.py`` holds minijax to are JAX's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import test_seeds as seeds  # noqa: E402  (after the importorskip, on purpose)

pytestmark = pytest.mark.oracle

MINIJAX = re.compile(r"\bminijax\b")


@pytest.fixture(scope="module")
def jax_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[seeds.Runs]:
    # Made here, in one thread: tmp_path_factory is not thread-safe.
    workdirs = {script.stem: tmp_path_factory.mktemp(script.stem) for script in seeds.SCRIPTS}

    def run(script: Path) -> seeds.Result:
        workdir = workdirs[script.stem]
        as_jax = workdir / script.name
        as_jax.write_text(MINIJAX.sub("jax", script.read_text(encoding="utf-8")), encoding="utf-8")
        # One CPU device, as in the stored expectations, whatever this machine has.
        return seeds.run_script(as_jax, workdir, {"JAX_PLATFORMS": "cpu"})

    yield from seeds.start_runs(request, "test_jax_prints_the_stored_expectation", None, run)


@pytest.mark.parametrize("script", seeds.SCRIPTS, ids=[p.stem for p in seeds.SCRIPTS])
def test_jax_prints_the_stored_expectation(script: Path, jax_runs: seeds.Runs) -> None:
    result = jax_runs[script.stem].result()
    expected = seeds.expected_output(script)
    if result.returncode != 0 or seeds.normalise(result.stdout) != seeds.normalise(expected):
        pytest.fail(seeds.mismatch_report(script, expected, result), pytrace=False)
