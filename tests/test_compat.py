"""minijax.compat: ``import jax`` answered by minijax's public modules, and what it serves beside them.

The alias is installed in a subprocess (it changes the import system of the
process that installs it); the program below records what it sees and the
tests check the record. The libraries themselves are exercised by the
ecosystem suite (tests/ecosystem/, marker ``ecosystem``).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

pytestmark = pytest.mark.single_backend

ROOT = pathlib.Path(__file__).parent.parent

PROGRAM = r"""
import json, sys, warnings
import minijax, minijax.compat as compat
record = {}
compat.install()
compat.install()  # twice is harmless
import jax, jax.numpy as jnp, jax.lax as lax
from jax import random
from jax.experimental import checkify
from jax.interpreters import ad, batching, partial_eval as pe
import jax.core, jax.extend.core, jax.version, jax._src.traceback_util as tbu
record["version"] = [jax.__version__, list(jax.__version_info__), jax.version.__version__]
record["same_objects"] = [jax.jit is minijax.jit, lax.add is minijax.lax.add, jnp.sum is minijax.numpy.sum,
                          random.key is minijax.random.key, jax.Array is minijax.Array]
record["names"] = [jnp.__name__, jax.core.__name__, ad.__name__, jax.experimental.__name__]
record["core_tracer_is_minijax"] = jax.core.Tracer is minijax.core.Tracer
record["jvp_table_is_minijax"] = ad.primitive_jvps is minijax.interpreters.ad.primitive_jvps
record["batchers_table_is_minijax"] = batching.primitive_batchers is minijax.interpreters.batching.primitive_batchers
record["jit_runs"] = [float(v) for v in jax.jit(lambda x: jnp.sin(x) * 2.0)(jnp.arange(3.0))]
tbu.register_exclusion("/nowhere")
record["minijax_own_spec_kept"] = minijax.numpy.__spec__.name
def error_of(thunk):
    try:
        thunk()
    except BaseException as e:
        return [type(e).__name__, str(e)]
    return None
record["private_missing"] = error_of(lambda: __import__("jax._src.interpreters.pxla"))
record["public_missing"] = error_of(lambda: __import__("jax.no_such_module"))
record["attribute_missing"] = error_of(lambda: jax.no_such_name)
record["minijax_internal_not_reached"] = error_of(lambda: __import__("jax.api"))
record["pending_used"] = error_of(lambda: jax.lax.pshuffle(1, "i", [0]))
record["has_core_attr"] = hasattr(jax, "core") and jax.core is sys.modules["jax.core"]
compat.uninstall()
record["after_uninstall"] = [compat.installed(), sorted(m for m in sys.modules if m == "jax" or m.startswith("jax."))]
print(json.dumps(record))
"""


def _run(program: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "backends")])}
    return subprocess.run([sys.executable, *args, "-c", program] if not args else [sys.executable, *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)  # fmt: skip


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    done = _run(PROGRAM)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_one_jax_version_is_reported(record: dict[str, Any]) -> None:
    from minijax.compat import JAX_VERSION, JAX_VERSION_INFO

    assert record["version"] == [JAX_VERSION, list(JAX_VERSION_INFO), JAX_VERSION]
    assert JAX_VERSION.startswith("0.10.") and tuple(int(p) for p in JAX_VERSION.split(".")) == JAX_VERSION_INFO


def test_public_modules_are_minijaxs_own_objects(record: dict[str, Any]) -> None:
    assert record["same_objects"] == [True] * 5
    assert record["jit_runs"] == pytest.approx([0.0, 2 * 0.8414709848, 2 * 0.9092974268], rel=1e-6)
    # Packages carry JAX's names (so that `from jax.x import submodule` finds the alias's submodule).
    assert record["names"] == ["jax.numpy", "minijax.compat._served.core", "minijax.compat._served.interpreters_ad", "jax.experimental"]
    assert record["minijax_own_spec_kept"] == "minijax.numpy"
    assert record["has_core_attr"]


def test_extension_points_are_minijaxs_rule_tables(record: dict[str, Any]) -> None:
    assert record["core_tracer_is_minijax"] and record["jvp_table_is_minijax"] and record["batchers_table_is_minijax"]


def test_missing_names_fail_with_messages_naming_them(record: dict[str, Any]) -> None:
    kind, message = record["private_missing"]
    assert kind == "ModuleNotFoundError" and "jax._src.interpreters.pxla" in message and "private" in message
    kind, message = record["public_missing"]
    assert kind == "ModuleNotFoundError" and "jax.no_such_module" in message
    kind, message = record["attribute_missing"]
    assert kind == "AttributeError" and "no_such_name" in message
    # minijax's own modules that are not JAX's public ones are never reached through `jax`.
    kind, message = record["minijax_internal_not_reached"]
    assert kind == "ModuleNotFoundError" and "jax.api" in message
    kind, message = record["pending_used"]
    assert kind == "CompatUnsupportedError" and "lax.pshuffle" in message and "not implemented by this minijax yet" in message


def test_uninstall_removes_every_jax_module(record: dict[str, Any]) -> None:
    assert record["after_uninstall"] == [False, []]


REAL_JAX = r"""
import importlib.abc, importlib.machinery, sys
class FakeRealJax(importlib.abc.MetaPathFinder):
    # Stands for a real JAX installation (nothing is written to disk).
    def find_spec(self, name, path=None, target=None):
        if name == "jax":
            return importlib.machinery.ModuleSpec("jax", None, origin="/site-packages/jax/__init__.py")
        return None
sys.meta_path.append(FakeRealJax())
import minijax.compat as compat
try:
    compat.install()
except compat.RealJaxError as e:
    print("refused:", e)
print("installed:", compat.installed())
"""


def test_real_jax_in_the_environment_is_refused() -> None:
    done = _run(REAL_JAX)
    assert done.returncode == 0, done.stderr
    assert "refused: minijax.compat.install(): real JAX is importable in this environment (from /site-packages/jax/__init__.py)" in done.stdout
    assert "installed: False" in done.stdout


def test_minijax_run_runs_a_script_with_the_alias(tmp_path: pathlib.Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import sys, jax, jax.numpy as jnp\n"
        "loss = lambda w: jnp.sum((w * 2.0 - 1.0) ** 2)\n"
        "w = jnp.zeros(3)\n"
        "for _ in range(3):\n"
        "    w = w - 0.1 * jax.grad(loss)(w)\n"
        "print(jax.__version__, sys.argv[1:], [round(float(v), 4) for v in w])\n"
        "sys.exit(3)\n"
    )
    for command in (["-m", "minijax.run", str(script), "a", "b"], ["-m", "minijax", "run", str(script), "a", "b"]):
        done = _run("", *command)
        assert done.returncode == 3, done.stderr
        # w <- w - 0.1 * 4 (2w - 1): 0.4, 0.48, 0.496
        assert done.stdout.strip() == "0.10.2 ['a', 'b'] [0.496, 0.496, 0.496]"


def test_minijax_run_without_a_script_prints_its_usage() -> None:
    done = _run("", "-m", "minijax.run")
    assert done.returncode == 2 and "usage: minijax run" in done.stderr
