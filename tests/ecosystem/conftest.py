"""The ecosystem suite: Optax, Chex, Flax, Equinox, einops and jaxtyping, unmodified, on minijax.

Every test here carries the marker ``ecosystem`` and is left out of a run unless
the run selects it (``-m ecosystem``): it needs the libraries, installed with
``--no-deps`` in an environment of their own (``.ci/run`` builds one; see
docs/ecosystem.md), and takes minutes. Without the libraries the tests skip.
Each test runs the library code in a subprocess under ``minijax run``, so the
``jax`` alias never enters the test process.
"""

from __future__ import annotations

import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    selected = "ecosystem" in (config.getoption("markexpr") or "")
    kept, dropped = [], []
    for item in items:
        if HERE in pathlib.Path(str(item.fspath)).parents:
            (kept if selected else dropped).append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
