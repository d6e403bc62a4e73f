"""minijax never imports ``jax``: with every import of jax made to fail (and
recorded), importing minijax and running eager ops, make_jaxpr and jit works.

Runs in a subprocess so that the finder is in place before minijax is first
imported, and so that nothing another test imported can hide an import.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROGRAM = r"""
import json
import sys

attempts = []


class NoJax:
    # A meta-path finder consulted before the real ones: jax and jax.* fail.
    def find_spec(self, name, path=None, target=None):
        if name == "jax" or name.startswith("jax."):
            attempts.append(name)
            raise ImportError(f"importing {name} is forbidden in this test")
        return None


sys.meta_path.insert(0, NoJax())

import minijax
import minijax.numpy as jnp


def f(x):
    return jnp.sin(x) * 2.0 + x


x = jnp.arange(3.0)
eager = f(x)
jaxpr = str(minijax.make_jaxpr(f)(x))
jitted = minijax.jit(f)(x)
# The XLA backend drives jaxlib directly; jaxlib must not pull jax in either.
from minijax.backend import get_backend
xla_device = get_backend("xla").devices()[0]
x_xla = minijax.device_put(x, xla_device)
on_xla = [float(v) for v in f(x_xla)] + [float(v) for v in minijax.jit(f, backend="xla")(x_xla)]
print(json.dumps({
    "eager": [float(v) for v in eager],
    "jitted": [float(v) for v in jitted],
    "on_xla": on_xla,
    "jaxpr": jaxpr,
    "attempts": attempts,
    "jax_in_modules": sorted(m for m in sys.modules if m == "jax" or m.startswith("jax.")),
}))
"""


def test_minijax_runs_without_importing_jax() -> None:
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["attempts"] == [], f"minijax tried to import {report['attempts']}"
    assert report["jax_in_modules"] == []
    # The program really ran: sin(1)*2+1 and sin(2)*2+2, eager and jitted alike.
    assert report["eager"][0] == 0.0
    assert abs(report["eager"][1] - 2.682942) < 1e-5
    assert abs(report["eager"][2] - 3.818595) < 1e-5
    assert report["jitted"] == report["eager"]
    for got, want in zip(report["on_xla"], report["eager"] * 2):
        assert abs(got - want) < 1e-5
    assert "b:f32[3] = sin a" in report["jaxpr"]


def test_the_finder_does_block_jax() -> None:
    # The guard itself must work, or the test above would prove nothing.
    program = PROGRAM.split("import minijax\n")[0] + (
        "try:\n"
        "    import jax.numpy\n"
        "except ImportError as e:\n"
        "    print(json.dumps({'error': str(e), 'attempts': attempts}))\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["attempts"] == ["jax"]
    assert "forbidden" in report["error"]
