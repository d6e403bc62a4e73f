"""minijax's persistent-cache flags have real JAX's names and defaults."""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

from minijax.config import config  # noqa: E402  (after the importorskip)

pytestmark = pytest.mark.oracle

FLAGS = [
    "jax_compilation_cache_dir",
    "jax_enable_compilation_cache",
    "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_min_entry_size_bytes",
    "jax_raise_persistent_cache_errors",
    "jax_default_device",
    "jax_num_cpu_devices",
]


@pytest.mark.parametrize("name", FLAGS)
def test_default_matches_jax(name: str) -> None:
    assert config.flag(name).default == getattr(jax.config, name)
