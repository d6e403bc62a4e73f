"""Real JAX prints ``PLACEMENT_EXPECTED`` for ``PLACEMENT_SCRIPT`` (tests/test_devices.py)
on two CPU devices, so the placement story minijax is held to is JAX's own."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

from test_devices import PLACEMENT_EXPECTED, PLACEMENT_SCRIPT, normalise  # noqa: E402  (after the importorskip)

pytestmark = pytest.mark.oracle


def test_jax_prints_the_placement_expectation() -> None:
    script = re.sub(r"\bminijax\b", "jax", PLACEMENT_SCRIPT)
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    assert normalise(done.stdout) == normalise(PLACEMENT_EXPECTED)
