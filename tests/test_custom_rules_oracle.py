"""custom_gradient, linear_transpose, closure_convert, custom_batching and name scopes against real
JAX 0.10.2: the same code (tests/test_custom_rules.py's cases) gives JAX's values, dtypes and errors.

Run where JAX is installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_custom_rules_oracle.py
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

pytest.importorskip("jax.custom_batching")

from test_custom_rules import CASES, ERRORS, MINI, _error_of, _jvp_of_custom_vjp_log, _vjp_residual_types  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

JAX = SimpleNamespace(jax=jax, jnp=jax.numpy)


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_values_and_types_as_jax(case: str) -> None:
    run, _ = CASES[case]
    got, want = run(MINI), run(JAX)
    g_leaves, g_tree = jax.tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert len(g_leaves) == len(w_leaves) and g_tree.num_leaves == w_tree.num_leaves
    for g, w in zip(g_leaves, w_leaves):
        assert (type(g).__name__ == "Array") == isinstance(w, jax.Array), (case, type(g), type(w))
        assert (np.asarray(g).dtype, np.shape(g)) == (np.asarray(w).dtype, np.shape(w)), case
        assert getattr(g, "weak_type", None) == getattr(w, "weak_type", None), case
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_same_error_as_jax(case: str) -> None:
    assert _error_of(case, MINI) == _error_of(case, JAX)


def test_custom_vjp_bwd_types_as_jax() -> None:
    assert _vjp_residual_types(MINI) == _vjp_residual_types(JAX)


def test_jvp_of_custom_vjp_as_jax() -> None:
    assert _jvp_of_custom_vjp_log(MINI) == _jvp_of_custom_vjp_log(JAX)
