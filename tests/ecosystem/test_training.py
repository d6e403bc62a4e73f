"""Flax (linen and nnx), Equinox, einops and jaxtyping programs, unmodified, trained on minijax with Optax:
each step's loss equals real JAX's (recorded by record_jax.py into tests/data/ecosystem/) to float32 tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from ecosystem_support import recorded, require, run_program

# One run, not one per backend: the programs run in subprocesses on the default backend.
pytestmark = [pytest.mark.ecosystem, pytest.mark.single_backend]

# Same operations in the same order as JAX, in float32: agreement to a few ulps per step, compounded over 20 steps.
RTOL, ATOL = 2e-5, 1e-6


@pytest.mark.parametrize(
    ("program", "libraries"),
    [
        ("flax_linen_cnn", ("flax", "optax")),
        ("flax_nnx_mlp", ("flax", "optax")),
        ("equinox_mlp", ("equinox", "optax")),
    ],
)
def test_training_losses_equal_jaxs(program: str, libraries: tuple[str, ...]) -> None:
    require(*libraries)
    got, want = run_program(program), recorded(program)
    for key, value in want.items():
        if key.startswith("_"):
            continue
        if isinstance(value, list):
            assert len(got[key]) == len(value) == 20, key
            np.testing.assert_allclose(got[key], value, rtol=RTOL, atol=ATOL, err_msg=f"{program}: {key}")
            assert value[-1] < value[0]  # (it trains)
        elif isinstance(value, float):
            np.testing.assert_allclose(got[key], value, rtol=RTOL, atol=ATOL, err_msg=f"{program}: {key}")
        else:
            assert got[key] == value, f"{program}: {key}"


def test_einops_and_jaxtyping_under_jit() -> None:
    require("einops", "jaxtyping")
    got, want = run_program("einops_jaxtyping"), recorded("einops_jaxtyping")
    np.testing.assert_array_equal(got["repeated"], want["repeated"])
    assert got["gram_sum"] == want["gram_sum"]
    assert got["checks"] == want["checks"] == {"float_ok": True, "int_rejected": True, "rank_rejected": True}
