"""The recorded public names of tests/data/jax_public_names.json are real JAX's (the oracle)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).parent.parent


def test_the_recorded_names_are_what_jax_has_now() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "record_jax_names.py")], capture_output=True, text=True, check=True)
    recorded = json.loads((ROOT / "tests" / "data" / "jax_public_names.json").read_text())
    assert json.loads(done.stdout) == recorded
