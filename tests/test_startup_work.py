"""What the first operation costs to reach (issue 23): ``import minijax`` and a named bundled
backend's start leave out the modules only rarer calls need, and backends installed by other
distributions are still found through their entry points.

Each check runs in a fresh process, so that nothing another test imported can hide an import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.single_backend  # each check starts its own process and backend

ROOT = Path(__file__).resolve().parent.parent

# Imported at the first call that needs them, not at startup: scanning installed distributions
# (importlib.metadata), einsum's planner, multi-process start, the persistent compilation cache.
DEFERRED = ("importlib.metadata", "opt_einsum", "socket", "hashlib", "tempfile")


def run_fresh(code: str, **env: str) -> dict[str, object]:
    environment = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'backends'}", **env}
    environment.pop("JAX_PLATFORMS", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=ROOT, env=environment)  # fmt: skip
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_named_bundled_backend_starts_without_the_deferred_modules() -> None:
    code = (
        "import json, sys\n"
        "import minijax\n"
        "devices = minijax.devices()\n"
        "loaded = [m for m in " + repr(DEFERRED) + " if m in sys.modules]\n"
        "import minijax.numpy as jnp\n"
        "x = jnp.arange(6.0).reshape(2, 3)\n"
        "product = jnp.einsum('ij,kj->ik', x, x, optimize=False).tolist()\n"
        "print(json.dumps({'platform': devices[0].platform, 'loaded': loaded, 'product': product,\n"
        "                  'planner': 'opt_einsum' in sys.modules}))\n"
    )
    result = run_fresh(code, MINIJAX_BACKEND="xla")
    assert result["platform"] == "cpu"
    assert result["loaded"] == [], f"imported before the first operation: {result['loaded']}"
    # The planner arrives with the first einsum, and optimize=False still plans left to right.
    assert result["planner"] is True
    assert result["product"] == [[5.0, 14.0], [14.0, 50.0]]


def test_a_backend_of_another_distribution_is_found_by_name_after_a_bundled_one() -> None:
    # An entry point of another package, registering the NumPy backend's factory as "mine".
    code = (
        "import json\n"
        "from importlib import metadata\n"
        "real = metadata.entry_points\n"
        "extra = metadata.EntryPoint(name='mine', value='minijax_numpy:make_backend', group='minijax.backends')\n"
        "metadata.entry_points = lambda **kw: [*real(**kw), extra] if kw.get('group') == 'minijax.backends' "
        "else real(**kw)\n"
        "from minijax import backend\n"
        "first = backend.get_backend('xla').name\n"
        "mine = backend.get_backend('mine')\n"
        "print(json.dumps({'first': first, 'mine': type(mine).__name__, 'names': backend.backend_names()}))\n"
    )
    result = run_fresh(code)
    assert result["first"] == "xla"
    assert result["mine"] == "NumpyBackend"
    assert result["names"] == ["mine", "numpy", "xla"]


def test_an_unknown_backend_name_lists_the_discovered_ones() -> None:
    code = (
        "import json\n"
        "from minijax import backend\n"
        "try:\n"
        "    backend.get_backend('nonesuch')\n"
        "except RuntimeError as e:\n"
        "    print(json.dumps({'error': str(e)}))\n"
    )
    error = str(run_fresh(code)["error"])
    assert "Unknown backend 'nonesuch'" in error
    assert "numpy, xla" in error
