"""What the XLA backend compiles: the persistent compilation cache and the
compiled stage's text and costs (``jit(f).lower(x).compile()``).

The cache is off unless ``jax_compilation_cache_dir`` (JAX_COMPILATION_CACHE_DIR)
names a directory; entries are serialized executables keyed by a hash of the
module, the compile options, jaxlib's version, the platform, the device kind
and the x64 flag. ``XlaBackend.stats`` counts compiles, cache hits and writes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.backend import get_backend
from minijax.config import config, config_context
from minijax.jaxpr import ClosedJaxpr

pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")

from minijax_xla.backend import XlaBackend, cache_directory, cache_key  # noqa: E402

# Each test names its backend (a fresh XlaBackend, or jit(backend=...)).
pytestmark = pytest.mark.single_backend


def program() -> ClosedJaxpr:
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    closed: ClosedJaxpr = jax.make_jaxpr(lambda a: jnp.tanh(a) @ a.T + 1.0)(x)
    return closed


def run(backend: XlaBackend, closed: ClosedJaxpr) -> list[float]:
    executable = backend.compile(closed)
    x = backend.put(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    (out,) = executable([x])
    result: list[float] = np.asarray(out).ravel().tolist()
    return result


def cache_flags(directory: Path, **more: Any) -> dict[str, Any]:
    return {"jax_compilation_cache_dir": str(directory), "jax_persistent_cache_min_compile_time_secs": 0, **more}


# --- flags -------------------------------------------------------------------------------


def test_flags_have_jaxs_defaults_and_the_cache_is_off() -> None:
    assert config.jax_compilation_cache_dir is None
    assert config.jax_enable_compilation_cache is True
    assert config.jax_persistent_cache_min_compile_time_secs == 1.0
    assert config.jax_persistent_cache_min_entry_size_bytes == 0
    assert config.jax_raise_persistent_cache_errors is False
    assert cache_directory() is None
    with config_context(jax_compilation_cache_dir="/tmp/somewhere"):
        assert cache_directory() == "/tmp/somewhere"
        with config_context(jax_enable_compilation_cache=False):
            assert cache_directory() is None
    with pytest.raises(ValueError, match="expected a number"):
        config.update("jax_persistent_cache_min_compile_time_secs", "soon")


# --- in one process -------------------------------------------------------------------------


def test_a_new_client_loads_what_another_wrote(tmp_path: Path) -> None:
    closed = program()
    first, second = XlaBackend(), XlaBackend()  # two clients, as two processes would have
    with config_context(**cache_flags(tmp_path)):
        want = run(first, closed)
        assert first.stats["compiles"] == 1 and first.stats["cache_writes"] == 1
        assert len(list(tmp_path.glob("minijax-*"))) == 1
        got = run(second, closed)
    assert second.stats["compiles"] == 0 and second.stats["cache_hits"] == 1
    assert got == want


def test_thresholds_keep_entries_out(tmp_path: Path) -> None:
    closed = program()
    slow_only = cache_flags(tmp_path, jax_persistent_cache_min_compile_time_secs=3600)
    big_only = cache_flags(tmp_path, jax_persistent_cache_min_entry_size_bytes=1 << 40)
    for flags in (slow_only, big_only):
        backend = XlaBackend()
        with config_context(**flags):
            run(backend, closed)
        assert backend.stats["compiles"] == 1 and backend.stats["cache_writes"] == 0
    assert list(tmp_path.iterdir()) == []


def test_a_corrupt_entry_warns_and_compiles(tmp_path: Path) -> None:
    closed = program()
    with config_context(**cache_flags(tmp_path)):
        want = run(XlaBackend(), closed)
        (entry,) = tmp_path.glob("minijax-*")
        entry.write_bytes(b"not an executable")
        backend = XlaBackend()
        with pytest.warns(UserWarning, match="persistent compilation cache: reading .* failed"):
            assert run(backend, closed) == want
        assert backend.stats["compiles"] == 1
        entry.write_bytes(b"not an executable")
        with config_context(jax_raise_persistent_cache_errors=True), pytest.raises(RuntimeError, match="reading"):
            run(XlaBackend(), closed)


def test_the_key_covers_module_options_and_x64() -> None:
    device = XlaBackend()._pjrt_device(None)
    key = cache_key(b"module text", device)
    assert key == cache_key(b"module text", device) and len(key) == 64
    assert key != cache_key(b"module text ", device)
    with config_context(jax_enable_x64=True):
        assert key != cache_key(b"module text", device)


def test_programs_with_host_callbacks_bypass_the_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import minijax.debug

    def f(a: Any) -> Any:
        minijax.debug.print("a = {}", a)
        return a + 1.0

    backend: Any = get_backend("xla")
    before = backend.stats["compiles"]
    with config_context(**cache_flags(tmp_path)):
        out = jax.jit(f, backend="xla")(np.float32(2.0))
    assert float(out) == 3.0 and capsys.readouterr().out == "a = 2.0\n"
    assert backend.stats["compiles"] == before + 1 and list(tmp_path.iterdir()) == []


# --- across processes: the second one compiles nothing ------------------------------------------

CHILD = """
import json, numpy as np
import minijax as jax, minijax.numpy as jnp
from minijax.backend import get_backend
x = jax.device_put(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
f = jax.jit(lambda a: jnp.tanh(a) @ a.T + 1.0)
y = f(x)
print(json.dumps({"result": np.asarray(y).tolist(), "stats": dict(get_backend("xla").stats)}))
"""


def test_a_second_process_loads_instead_of_compiling(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "MINIJAX_BACKEND": "xla",
        "JAX_COMPILATION_CACHE_DIR": str(tmp_path),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    }

    def child() -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    first = child()
    assert first["stats"]["compiles"] >= 1 and first["stats"]["cache_writes"] == first["stats"]["compiles"]
    assert len(list(tmp_path.glob("minijax-*"))) == first["stats"]["cache_writes"]
    second = child()
    assert second["stats"].get("compiles", 0) == 0
    assert second["stats"]["cache_hits"] == first["stats"]["cache_writes"]
    assert second["result"] == first["result"]


# --- the compiled stage --------------------------------------------------------------------------


def test_compiled_text_is_optimized_hlo_and_costs_come_from_xla() -> None:
    f = jax.jit(lambda a: jnp.sin(a) * 2.0 + a, backend="xla")
    x = np.ones(4, np.float32)
    lowered = f.lower(x)
    assert "stablehlo.sine" in lowered.as_text()
    compiled = lowered.compile()
    text = compiled.as_text()
    assert text.startswith("HloModule") and "sine(" in text and "stablehlo" not in text
    costs = compiled.cost_analysis()
    assert costs is not None and costs["flops"] > 0 and costs["transcendentals"] == 4.0
    assert np.allclose(np.asarray(compiled(x)), np.sin(x) * 2 + x)


def test_the_numpy_backend_has_no_compiled_text_or_costs() -> None:
    f = jax.jit(lambda a: a + 1.0, backend="numpy")
    compiled = f.lower(np.ones(2, np.float32)).compile()
    assert compiled.as_text() == f.lower(np.ones(2, np.float32)).as_text()
    assert "add" in compiled.as_text() and compiled.cost_analysis() is None
